/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hystartpp.h: HyStart++'s declarations, its state and its parameters
 * (hystartpp.c has the model and the ops).  Included into sscore.h by the
 * registry (variants.h); hystart.h says what a parameter line is.
 *
 * Defaults: RFC 9406 section 4.3 (RttThresh minRTT/8 clamped to 4-16 ms,
 * 8 samples a round, growth / 4 in CSS for 5 rounds, L = 8 unpaced).
 */
#ifndef HYSTARTPP_H
#define HYSTARTPP_H

#define SS_HYSTARTPP_PARAMS(P)						\
	P(hspp_min_rtt_thresh_us, 4000, uint, "HyStart++ MIN_RTT_THRESH (us)") \
	P(hspp_max_rtt_thresh_us, 16000, uint, "HyStart++ MAX_RTT_THRESH (us)") \
	P(hspp_min_rtt_divisor, 8, uint, "HyStart++ MIN_RTT_DIVISOR")	\
	P(hspp_n_rtt_sample, 8, uint, "HyStart++ N_RTT_SAMPLE")	\
	P(hspp_css_growth_divisor, 4, uint, "HyStart++ CSS_GROWTH_DIVISOR") \
	P(hspp_css_rounds, 5, uint, "HyStart++ CSS_ROUNDS")		\
	P(hspp_l_unpaced, 8, uint, "HyStart++ L when not paced (packets)")

struct ss_hspp {
	u32 last_round_min_rtt_us;
	u32 css_baseline_us;
	u8 in_css;
	u8 css_rounds;
	u8 css_credit;		/* growth credit, divided by css_growth_divisor */
	u8 pad;
};

/* HyStart++'s exit and event (SS_CORE_EXITS, sscore.h, says what a line is). */
#define SS_HYSTARTPP_EXITS(X)						\
	X(CSS_DONE, 3, "HyStart++: CSS lasted CSS_ROUNDS rounds")

#define SS_HYSTARTPP_EVENTS(E)						\
	E(CSS, "css", "a = 1 enter / 0 leave, b = round, c = baseline us")

/* The start's entry in the registry (variants.h says what a line is). */
#define SS_HYSTARTPP_REGISTRY						\
	SS_PARAMS(SS_HYSTARTPP_PARAMS)					\
	SS_EXITS(SS_HYSTARTPP_EXITS)					\
	SS_EVENTS(SS_HYSTARTPP_EVENTS)					\
	SS_STATE(hspp, ss_hspp)						\
	SS_VARIANT(HYSTARTPP, 2, ss_hystartpp_ops)			\
	SS_NAME(hspp, "cubic_hspp", HYSTARTPP, SS_VERSION_PARAM)

#endif /* HYSTARTPP_H */
