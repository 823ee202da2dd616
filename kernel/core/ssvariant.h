/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ssvariant.h: what a slow-start variant is to the core (internal to core/).
 *
 * The core (sscore.c) keeps what every connection has: rounds, RTT samples,
 * the window rules after slow start (CUBIC or NewReno: struct
 * ss_growth_ops) and the entry points the kernel calls.  Each variant is an
 * ops table, struct ss_start_ops, in its own file, registered once in
 * variants.h; the entry points call its hooks at fixed moments and never
 * ask which variant a connection runs.  A hook left NULL means "nothing
 * beyond the common behaviour" (given at each hook below).
 *
 * Per ACK (ss_on_ack, then ss_cong_avoid):
 *
 *   snd_una passes the round's end ->  round_end()   round++   round_begin()
 *   RTT sample                       ->  any_ack()
 *   cwnd < ssthresh, no exit yet     ->  slow_start_ack()   (the exit tests)
 *   cwnd growth                      ->  grow() below ssthresh, else growth->avoid()
 *
 * On loss: loss(), then growth->reduce(); on RTO: rto().
 */
#ifndef SSVARIANT_H
#define SSVARIANT_H

#include "sscore.h"

/* The window rules after slow start. */
struct ss_growth_ops {
	/* Grow w->cwnd for @acked packets of @ack in congestion avoidance. */
	void (*avoid)(struct sscore_state *st, const struct ss_ack *ack, u32 acked, struct ss_win *w);
	/* Loss or ECN: the new ssthresh from w->cwnd (the family's own state updated). */
	u32 (*reduce)(struct sscore_state *st, struct ss_win *w);
	/* RTO: what the family forgets.  NULL: nothing. */
	void (*rto)(struct sscore_state *st);
	/* Sending resumes after @idle_ticks idle.  NULL: nothing. */
	void (*idle)(struct sscore_state *st, u32 now_ticks, u32 idle_ticks);
	/* RTT samples not to take now (and no HyStart test on them).  NULL: all taken. */
	bool (*rtt_quiet)(const struct sscore_state *st, const struct ss_ack *ack);
	/* ACKs in the kernel's Loss state (after an RTO) are processed as any
	 * other (Linux's CUBIC does); false: ignored until it ends. */
	bool acks_in_loss;
};

extern const struct ss_growth_ops ss_cubic_growth;	/* Linux's CUBIC (cubic.c) */
extern const struct ss_growth_ops ss_reno_growth;	/* RFC 5681/6582; the start-up ends at the first loss */

struct ss_start_ops {
	const struct ss_growth_ops *growth;

	/* ss_init, after the common part: the variant's own state, and when
	 * HyStart's round starts (st->hs.rounds).  NULL: all zero (HyStart's
	 * round is the core's). */
	/* @version: what the name pins, in the start's numbering, or SS_VERSION_PARAM. */
	void (*init)(struct sscore_state *st, const struct ss_params *p, unsigned int version,
		     u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss);
	/* ss_init_window: set the first window and/or ssthresh and return true,
	 * or false to keep the stack's.  NULL: the stack's. */
	bool (*first_window)(struct sscore_state *st, const struct ss_params *p, struct ss_win *w);

	/* The connection is established: the handshake's RTT (ss_handshake).
	 * NULL: nothing. */
	void (*handshake)(struct sscore_state *st, const struct ss_params *p, u32 rtt_us, u32 mss);

	/* A round ends: before the round counter moves. */
	void (*round_end)(struct sscore_state *st, const struct ss_params *p, struct ss_win *w);
	/* A new round has begun (counter, end and start already set). */
	void (*round_begin)(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w);

	/* Every ACK of new data, in slow start or not, after the RTT sample. */
	void (*any_ack)(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
			struct ss_win *w);
	/* An ACK in slow start with no exit decided: the exit tests (and plans).
	 * NULL: none (traditional slow start, ended by loss). */
	void (*slow_start_ack)(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
			       struct ss_win *w, struct ss_pacing_plan *plan);
	/* Growth below ssthresh for @ack: returns the acked packets left over
	 * for congestion avoidance.  NULL: ss_slow_start() (one per packet). */
	u32 (*grow)(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		    struct ss_win *w);

	/* Loss, before growth->reduce() (SUSS cuts cwnd to what is in flight). */
	void (*loss)(struct sscore_state *st, u32 in_flight, struct ss_win *w);
	/* Loss, after growth->reduce(): the ssthresh to use, given the window
	 * before the loss and the growth's answer.  NULL: the growth's. */
	u32 (*reduce)(struct sscore_state *st, struct ss_win *w, u32 cwnd_before, u32 ssthresh);
	/* RTO: return whether the slow start that follows has its exit tests
	 * armed again.  NULL: it has. */
	bool (*rto)(struct sscore_state *st, u32 cwnd_before);

	/* The peer's window: the send window the variant lets itself use
	 * (NULL: the peer's), whether that rule holds on every ACK, and whether
	 * the peer's window holds the sender back at all right now. */
	u32 (*peer_window)(const struct sscore_state *st, u32 snd_wnd, u32 mss);
	enum ss_window_rule (*window_rule)(const struct sscore_state *st);
	bool (*ignore_peer_window)(const struct sscore_state *st, const struct ss_params *p);

	/* The variant paces a period itself right now (SUSS's red packets). */
	bool (*pacing)(const struct sscore_state *st);
	/* The stack sent a packet that filled the window (ss_sent_window_full).
	 * NULL: nothing to do. */
	bool (*sent_window_full)(struct sscore_state *st, struct ss_win *w);
	/* The rate (bytes/s) the glue paces the first window at right now (Blitzstart's
	 * round 1); 0: none.  NULL: never. */
	u32 (*first_window_pace_rate)(const struct sscore_state *st);
	/* The state number the glue traces per ACK.  NULL: 1 once slow start has ended, else 0. */
	u8 (*trace_state)(const struct sscore_state *st);

	/* The ACK's RTT sample is taken before its round check (the SUSS authors'
	 * code: delay_min, and the round it fell in, in pkts_acked; the round in
	 * cong_avoid), so a minimum that falls on a round's first ACK is the
	 * previous round's.  NULL: after (the sample belongs to the new round). */
	bool (*sample_before_round)(const struct sscore_state *st);
	/* Rounds are counted in congestion avoidance too. */
	bool counts_rounds_in_ca;
	/* The socket paces from the start (the Blitzstart paper's transport, QUIC, paces). */
	bool paced_socket;
	/* The glue hands the start a hinted rate (ss_blitz_start) when the connection starts. */
	bool takes_hint;
};

#define SS_VARIANT(id, number, ops) extern const struct ss_start_ops ops;
#include "variants.h"
#undef SS_VARIANT

extern const struct ss_start_ops *const ss_variant_ops[SS_NR_VARIANTS];

static inline const struct ss_start_ops *ss_ops(const struct sscore_state *st)
{
	return ss_variant_ops[st->variant];
}

/* Shared steps, for the variants' files. */
void ss_emit(const struct sscore_state *st, enum ss_event_type type, u32 a, u32 b, u32 c,
	     const struct ss_pacing_plan *plan);
static inline bool ss_rtt_valid(const struct ss_ack *ack)
{
	return ack->rtt_us != SS_RTT_UNKNOWN;
}
/* Slow start ends: ssthresh = cwnd.  @cwnd_then: the window that ended it. */
void ss_exit_slow_start_from(struct sscore_state *st, struct ss_win *w, enum ss_exit_cause cause,
			     u32 cwnd_then);
static inline void ss_exit_slow_start(struct sscore_state *st, struct ss_win *w, enum ss_exit_cause cause)
{
	ss_exit_slow_start_from(st, w, cause, w->cwnd);
}
/* One packet of cwnd per packet acked, up to ssthresh; returns what is left. */
u32 ss_slow_start(struct ss_win *w, u32 acked);
/* Is @ack's RTT sample one the connection takes (valid, and not in the
 * window rules' quiet time)?  HyStart's tests run only on those. */
bool ss_rtt_sample_taken(const struct sscore_state *st, const struct ss_ack *ack);

/* HyStart's two tests (hystart.c), shared by the variants built on it. */
bool ss_hystart_train_too_long(struct sscore_state *st, const struct ss_params *p,
			       const struct ss_ack *ack, u32 scale);
bool ss_hystart_delay_increased(struct sscore_state *st, const struct ss_params *p,
				const struct ss_ack *ack);
/* HyStart's round starts (its fields reset) at @ack. */
void ss_hystart_start_round(struct sscore_state *st, const struct ss_ack *ack);
/* HyStart's round check as Linux's HyStart makes it (SS_HS_ROUNDS_LINUX*):
 * a new round when snd_una has passed the end of its round. */
void ss_hystart_round_check(struct sscore_state *st, const struct ss_ack *ack);
/* HyStart's exits on one ACK (the hook of SS_HYSTART and of the starts built on it). */
void ss_hystart_update(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		       struct ss_win *w, struct ss_pacing_plan *plan);

#endif /* SSVARIANT_H */
