/* SPDX-License-Identifier: GPL-2.0 */
/*
 * suss.h: SUSS's declarations, its versions, its state and its parameters
 * (suss.c has the model and the ops, suss_hooks.h the hooks the variants
 * built on it share).  Included into sscore.h by the registry (variants.h);
 * hystart.h says what a parameter line is.
 *
 * Defaults: the authors' (3 accelerated rounds, G in {2, 4}, no
 * acceleration on paths of 10 ms or less) and their 2024 code, which
 * produced the paper's numbers.  suss_version is checked by the glue
 * (kind suss_version: a value of SS_SUSS_VERSIONS, a year or 0 for ours).
 */
#ifndef SUSS_H
#define SUSS_H

/*
 * SUSS's versions (docs/suss.md has the facts about the authors' code; the
 * module parameter suss_version and the pinned names choose one per socket;
 * sscore.h says what a line is):
 *
 *   SUSS_VER_2024   the authors' Linux 5.19 code behind the SIGCOMM'24
 *                   paper's numbers.  HyStart keeps its own round, which
 *                   it resets only on ACKs it looks at (cwnd >= 16), so
 *                   its round starts late and its ACK-train test skips a
 *                   round's first ACKs; dtB = blue time x N / the blue
 *                   packets acked before the tail ACK; their pacing plan
 *                   (red = blue x 2^(r-1) - blue, blue = iw 2^(r-1)) and
 *                   limit ((cwnd + acked) + red - red ACKs to come); no
 *                   SUSS decision after the cap; the peer's window times
 *                   2^jumps (at most 3 MB).
 *   SUSS_VER_2025   their 6.8 rewrite (2025-01-23): the same but HyStart's
 *                   round is SUSS's (aligned), and the peer's window is
 *                   raised to 10 MSS x 2^(round + jumps - 1) while SUSS
 *                   grows and to 10 MSS always.
 *   SUSS_VER_PAPER  ours, written from the paper's text before their code
 *                   was read: aligned rounds, dtB scaled over all blue
 *                   ACKs, the pacing plan from what the ACK clock sent,
 *                   cwnd set to the limit at once, decisions after the cap.
 *
 * Where their code divides by zero (one ACK for the whole blue part; a
 * previous round whose train measured 0 us) we use the smallest count and
 * time a measurement can carry, 1 packet and 1 us, and emit SS_EV_DIV0:
 * a documented deviation of ours (kernel/README.md).
 */
#define SS_SUSS_VERSIONS(V)						\
	V(SUSS_VER_2024, 1, 2024, "2024", "SUSS 2024 (the authors' code behind the paper)") \
	V(SUSS_VER_2025, 2, 2025, "2025", "SUSS 2025 (the authors' rewrite)") \
	V(SUSS_VER_PAPER, 0, 0, "ours", "SUSS, ours from the paper's text")

/* The pins are 0 to SUSS_NR_VERSIONS - 1: a connection's version indexes. */
enum ss_suss_version {
	SS_SUSS_VERSIONS(SS_VERSION_ENUM)
	SUSS_NR_VERSIONS = 0 SS_SUSS_VERSIONS(SS_VERSION_COUNT),
};

/* The version for a suss_version value; SUSS_NR_VERSIONS if it names none. */
#define SUSS_VERSION_OF_VALUE(id, pin, value, name, what) case (value): return id;
static inline unsigned int ss_suss_version_of_year(u32 year)
{
	switch (year) {
	SS_SUSS_VERSIONS(SUSS_VERSION_OF_VALUE)
	default: return SUSS_NR_VERSIONS;
	}
}
#undef SUSS_VERSION_OF_VALUE

#define SS_SUSS_PARAMS(P)						\
	P(suss_max, 3, uint, "SUSS: accelerated rounds allowed (round < suss_max + 2)") \
	P(suss_k_max, 1, uint, "SUSS: Appendix A k_max; G up to 2^(k_max+1); 1 keeps G in {2,4}") \
	P(suss_min_rtt_us, 10000, uint, "SUSS: no acceleration when minRTT is at most this (us)") \
	P(suss_lift_rwnd_rounds, 0, uint, "SUSS (ours only): not held by the peer's window in rounds <= this (0: off)") \
	P(suss_version, 2024, suss_version, "SUSS: the version cubic_suss runs: 2024 (the authors' code behind the SIGCOMM'24 paper), 2025 (their rewrite), 0 (ours, from the paper's text)")

/* SUSS state, numbered as in the authors' traces so plots can be compared. */
enum ss_suss_state {
	SUSS_CLOCKING = 1,	/* ACK-clocked part of a round (or no jump) */
	SUSS_PACING = 2,	/* red packets of an accelerated round */
	SUSS_EXIT_CAP = 3,	/* left slow start at the cap set by HyStart */
	SUSS_EXIT_DELAY = 4,	/* left slow start on HyStart's delay test */
	SUSS_REDUCED = 9,	/* entered Recovery/CWR during SUSS */
	SUSS_OFF = 10,		/* not accelerating: plain HyStart */
};

/* Reasons a SUSS round was not accelerated (SS_EV_GROWTH c bits). */
#define SUSS_NO_SHORT_PATH	0x01	/* minRTT <= suss_min_rtt */
#define SUSS_NO_TRAIN		0x02	/* ACK train too long (condition 1) */
#define SUSS_NO_DELAY		0x04	/* RTT rising (condition 2) */
#define SUSS_NO_ROUNDS		0x08	/* suss_max rounds used */
#define SUSS_NO_GUARD		0x10	/* guard interval not positive */
#define SUSS_NO_SAMPLE		0x20	/* blue train not measurable */
#define SUSS_NO_DISALLOWED	0x40	/* growth already fell to 2 */

/* The 2024 code's cap on the peer's window it raises (sscore.h, ss_window_rule). */
#define SUSS_2024_RWND_MAX (3U << 20)

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

/* The start's entry in the registry (variants.h says what a line is). */
#define SS_SUSS_REGISTRY						\
	SS_PARAMS(SS_SUSS_PARAMS)					\
	SS_EXITS(SS_SUSS_EXITS)						\
	SS_EVENTS(SS_SUSS_EVENTS)					\
	SS_VERSIONS(SUSS, SS_SUSS_VERSIONS)				\
	SS_STATE(suss, ss_suss)						\
	SS_VARIANT(SUSS, 3, ss_suss_ops)				\
	SS_NAME(suss, "cubic_suss", SUSS, SS_VERSION_PARAM)		\
	SS_NAME(suss24, "cubic_suss24", SUSS, SUSS_VER_2024)		\
	SS_NAME(suss25, "cubic_suss25", SUSS, SUSS_VER_2025)		\
	SS_NAME(susspaper, "cubic_susspaper", SUSS, SUSS_VER_PAPER)

#endif /* SUSS_H */
