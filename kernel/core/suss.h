/* SPDX-License-Identifier: GPL-2.0 */
/*
 * suss.h: SUSS's declarations, its state and its parameters (suss.c has the
 * model and the ops, suss_hooks.h the hooks the variants built on it share;
 * the versions, enum ss_suss_version, are in sscore.h, since the glue and
 * the registry's names choose one).  Included into sscore.h by the registry
 * (variants.h); hystart.h says what a parameter line is.
 *
 * Defaults: the authors' (3 accelerated rounds, G in {2, 4}, no
 * acceleration on paths of 10 ms or less) and their 2024 code, which
 * produced the paper's numbers.  suss_version is checked by the glue
 * (kind suss_version: a year of enum ss_suss_version, or 0 for ours).
 */
#ifndef SUSS_H
#define SUSS_H

#define SS_SUSS_PARAMS(P)						\
	P(suss_max, 3, uint, "SUSS: accelerated rounds allowed (round < suss_max + 2)") \
	P(suss_k_max, 1, uint, "SUSS: Appendix A k_max; G up to 2^(k_max+1); 1 keeps G in {2,4}") \
	P(suss_min_rtt_us, 10000, uint, "SUSS: no acceleration when minRTT is at most this (us)") \
	P(suss_lift_rwnd_rounds, 0, uint, "SUSS (ours only): not held by the peer's window in rounds <= this (0: off)") \
	P(suss_version, SUSS_YEAR_2024, suss_version, "SUSS: the version cubic_suss runs: 2024 (the authors' code behind the SIGCOMM'24 paper), 2025 (their rewrite), 0 (ours, from the paper's text)")

struct ss_suss {
	u32 blue_tail;		/* this round's blue part ends at this sequence */
	u32 blue_cnt;		/* blue packets acked this round */
	u32 prev_train_us;	/* previous round's estimated full ACK-train time */
	u32 limit;		/* cwnd target of the current pacing period */
	u32 cap;		/* HyStart's deferred exit point, packets */
	struct {		/* SUSS_VER_PAPER */
		u32 blue_expected;	/* packets in the blue part being acked */
		u32 cwnd_round_start;	/* cwnd when the round started */
	} paper;
	u16 iw;			/* initial window, packets */
	u16 prev_red;		/* code versions: red packets of the previous round */
	u8 state;		/* enum ss_suss_state */
	u8 jumps;		/* accelerated rounds so far */
	u8 growth_allowed;	/* cleared for good once G falls to 2 */
	u8 cap_set;
	u8 blue_open;		/* this round's blue ACKs are still arriving */
	u8 nwin_shift;		/* 2024: the peer window's shift, from the ACK before */
	u8 tail_ack;		/* this ACK is the blue tail that began a pacing period */
	u8 paced;		/* the sender's pacing of this period has begun */
};

/* SUSS's exit and events (SS_CORE_EXITS, sscore.h, says what a line is). */
#define SS_SUSS_EXITS(X)						\
	X(SUSS_CAP, 4, "SUSS: cwnd passed the cap HyStart set")

#define SS_SUSS_EVENTS(E)						\
	E(BLUE_TRAIN, "blue_train", "a = round, b = blue train us, c = full train us (est.)") \
	E(PACING, "pacing", "the pacing plan (its own fields)")		\
	E(CAP, "cap", "a = cap, b = cwnd, c = blue_cnt")		\
	E(DIV0, "div0", "a = SUSS_DIV0_* (their division by zero), b = round, c = value used")

/* Where the SUSS authors' arithmetic divides by zero (SS_EV_DIV0 a). */
#define SUSS_DIV0_BLUE_COUNT	1	/* no blue packet acked before the tail ACK: 1 used */
#define SUSS_DIV0_PREV_TRAIN	2	/* previous round's train measured 0 us: 1 us used */

#endif /* SUSS_H */
