/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ratestart.h: the declarations of the starts that take their window from a
 * rate (ratestart.c has the model and the ops): the NewReno family of the
 * Astart paper (a fixed initial ssthresh, Hoe's, Astart) and Blitzstart
 * with its standard start.  Their state and their parameters; included
 * into sscore.h by the registry (variants.h); hystart.h says what a
 * parameter line is.
 *
 * Defaults: the Astart paper's initial ssthresh (32 packets); the
 * Blitzstart paper's standard start (32 packets) and pacing (75% of the
 * RTT, as Google QUIC).  The ERE filter's time constant is not in the
 * Astart paper: minRTT is our choice (the filter then averages about one
 * round, the time in which slow start doubles the rate).  Blitzstart's
 * paper ran over QUIC, whose flow-control window did not hold the first
 * window back; Linux's receiver starts at 64 KB, so the Blitzstart sender
 * is not held by it for its first 3 rounds (see sslab_tcp.c).
 *
 * The standard start and Blitzstart stand for the report's sender, Google
 * QUIC, whose CUBIC is not Linux's in two decisions, both facts of its code:
 * it emulates two connections (kDefaultNumConnections = 2: after a loss it
 * keeps 0.85 of its window, not 0.7, and its Reno estimate grows by
 * 3 N^2 (1 - beta) / (1 + beta) a round, cubic.c), and its hybrid slow start
 * exits on the delay increase alone (the ACK-train test is Linux's).
 * std_connections = 1 and std_ack_train = 1 give Linux's CUBIC and HyStart.
 */
#ifndef RATESTART_H
#define RATESTART_H

#define SS_RATESTART_PARAMS(P)						\
	P(reno_init_ssthresh, 32, uint, "NewReno family: initial ssthresh (packets)") \
	P(reno_iw, 0, uint, "NewReno family: initial window (packets; 0: the stack's)") \
	P(astart_tau_us, 0, uint, "Astart: ERE filter time constant (us; 0: the connection's min RTT)") \
	P(std_iw, 32, uint, "cubic_std and cubic_blitz without a hint: initial window (packets)") \
	P(blitz_pace_pct, 75, uint, "Blitzstart: the first window leaves over this % of the RTT") \
	P(blitz_lift_rwnd_rounds, 3, uint, "Blitzstart: not held by the peer's window in rounds <= this") \
	P(std_connections, 2, range(1, SS_CUBIC_MAX_CONNECTIONS), "cubic_std and cubic_blitz: CUBIC emulates this many connections (Google QUIC's 2; 1: Linux's CUBIC)") \
	P(std_ack_train, 0, flag, "cubic_std and cubic_blitz: HyStart's ACK-train exit (0: Google QUIC's, delay only; 1: Linux's)")

/*
 * Astart: Westwood's eligible rate estimate (ERE).  A sample is the data
 * acked over an interval T_k that adapts to congestion:
 *
 *   T_k = RTT x (cwnd/minRTT - RE) / (cwnd/minRTT)
 *
 * where RE is the rate achieved over the last RTT, averaged.  With no queue
 * RE is close to cwnd/minRTT, T_k is short and the sample is a packet pair
 * (the bottleneck's capacity); under congestion T_k grows towards an RTT and
 * the sample is a packet train (the flow's share).  Samples are smoothed by
 * a first-order low-pass filter discretised with Tustin's method.  Rates are
 * bytes per second.
 */
struct ss_ere {
	u32 sample_start_us;	/* the current sample interval began */
	u32 sample_bytes;	/* bytes acked since */
	u32 last_sample;	/* the previous sample (Tustin uses two) */
	u32 ere;		/* the filtered estimate; 0 = none yet */
	u32 re_start_us;	/* the current RE interval began */
	u32 re_bytes;		/* bytes acked since */
	u32 re;			/* achieved rate, averaged; 0 = none yet */
	u32 tk_us;		/* the current sample interval T_k */
	u8 started;		/* the first ACK opened both intervals */
};

/* Hoe: the first three ACKs (times and cumulative acks) and the first RTT. */
struct ss_hoe {
	u32 t_us[3];
	u32 una[3];
	u32 first_rtt_us;
	u8 n;			/* ACKs kept so far */
	u8 done;		/* ssthresh set (or given up) */
};

/* Blitzstart: what the start used, for the trace and the glue. */
struct ss_blitz {
	u32 hint;		/* bytes per second; 0 = no hint (standard start) */
	u32 rtt_us;		/* the handshake's RTT */
	u32 first_cwnd;		/* packets */
	u32 pace_rate;		/* bytes per second of the first window */
};

/* Blitzstart's exit (SS_CORE_EXITS, sscore.h, says what a line is). */
#define SS_RATESTART_EXITS(X)						\
	X(BLITZ, 6, "Blitzstart: never in slow start")

/* The start's entry in the registry (variants.h says what a line is). */
#define SS_RATESTART_REGISTRY						\
	SS_PARAMS(SS_RATESTART_PARAMS)					\
	SS_EXITS(SS_RATESTART_EXITS)					\
	SS_STATE(ere, ss_ere)						\
	SS_STATE(hoe, ss_hoe)						\
	SS_STATE(blitz, ss_blitz)					\
	SS_VARIANT(RENO_FIXED, 4, ss_reno_fixed_ops)			\
	SS_VARIANT(RENO_HOE, 5, ss_reno_hoe_ops)			\
	SS_VARIANT(RENO_ASTART, 6, ss_reno_astart_ops)			\
	SS_VARIANT(STD_START, 7, ss_std_start_ops)			\
	SS_VARIANT(BLITZ, 8, ss_blitz_ops)				\
	SS_NAME(reno_fixed, "reno_fixed", RENO_FIXED, SS_VERSION_PARAM)	\
	SS_NAME(reno_hoe, "reno_hoe", RENO_HOE, SS_VERSION_PARAM)	\
	SS_NAME(reno_astart, "reno_astart", RENO_ASTART, SS_VERSION_PARAM) \
	SS_NAME(std, "cubic_std", STD_START, SS_VERSION_PARAM)		\
	SS_NAME(blitz, "cubic_blitz", BLITZ, SS_VERSION_PARAM)

#endif /* RATESTART_H */
