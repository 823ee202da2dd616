/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rapidstart.h: Rapid Start's declarations, its state and its parameters
 * (rapidstart.c has the model and the ops).  Included into sscore.h by the
 * registry (variants.h); hystart.h says what a parameter line is.
 *
 * Defaults: the draft's K (11/18 in the revision we follow), its
 * RECOMMENDED threshold (min(min_rtt + 4 ms, min_rtt x 1.10)) and its
 * bound on the first window of a path it knows nothing of (2 x IW), paced
 * over the RTT.
 */
#ifndef RAPIDSTART_H
#define RAPIDSTART_H

#define SS_RAPID_PARAMS(P)						\
	P(rapid_k36, 22, uint, "Rapid Start: K of the convergence on the first loss, in 1/36 (22 = 11/18; 24 = 2/3)") \
	P(rapid_rtt_add_us, 4000, uint, "Rapid Start: queue_buildup_thresh = min(min_rtt + this (us), ...)") \
	P(rapid_rtt_pct, 110, uint, "Rapid Start: ... min_rtt x this / 100)") \
	P(rapid_iw_mult, 2, uint, "Rapid Start: first window = IW x this (<= 1: the stack's)") \
	P(rapid_pace_first, 1, flag, "Rapid Start: pace the first window over the handshake's RTT (1) or not (0)")

struct ss_rapid {
	u64 target;		/* first recovery: the window it ends with, 1/RAPID_SCALE packets */
	u64 floor;		/* ... never below this */
	u32 cwnd_before;	/* cwnd when the first congestion came */
	u32 flight_left;	/* of that flight, packets not yet counted acked or lost */
	u32 delivered_seen;	/* the connection's delivered and lost packets at the last ACK */
	u32 lost_seen;
	u32 round_floor_us;	/* rtt_floor: the round's minimum RTT so far */
	u32 iw;			/* the stack's initial window, packets */
	u32 first_cwnd;		/* the jump, packets (0: none) */
	u32 pace_rate;		/* the first window's rate, bytes/s (0: not paced) */
	u8 round_samples;	/* RTT samples in the round */
	u8 k36;			/* K x 36 */
	u8 phase;		/* enum ss_rapid_phase (rapidstart.c) */
};

/* The start's entry in the registry (variants.h says what a line is). */
#define SS_RAPID_REGISTRY						\
	SS_PARAMS(SS_RAPID_PARAMS)					\
	SS_STATE(rapid, ss_rapid)					\
	SS_VARIANT(RAPID, 10, ss_rapid_ops)				\
	SS_NAME(rapid, "cubic_rapid", RAPID, SS_VERSION_PARAM)

#endif /* RAPIDSTART_H */
