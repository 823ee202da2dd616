// SPDX-License-Identifier: GPL-2.0
/*
 * rapidstart.c: cubic_rapid, Rapid Start (draft-kazuho-ccwg-rapid-start,
 * the revision in the project's papers: K = 11/18), then Linux's CUBIC.
 *
 * Written from the draft's text; docs/starts.md says which revision and
 * every choice the draft leaves open.  The model:
 *
 *   The first flight.  The sender jumps to a first window of 2 x IW (the
 *   draft's bound on jump_cwnd for a path it knows nothing of) and paces it
 *   over the handshake's RTT, so the first round is no burstier than
 *   classic paced slow start.
 *
 *   Growth.  While the path shows no queue, cwnd grows by 2 packets per
 *   packet acked (3x a round); once it shows one, by 1 (2x a round), for the
 *   rest of the start.  "No queue": rtt_floor, the current round's minimum
 *   RTT (HyStart++'s currentRoundMinRTT, tested once the round has
 *   N_RTT_SAMPLE samples, RFC 9406's rule), is at most
 *
 *       queue_buildup_thresh = min(min_rtt + 4 ms, min_rtt x 1.10).
 *
 *   The first congestion (loss or ECN).  Instead of CUBIC's cwnd x beta,
 *   the window the recovery ends with is built from what the recovery sees:
 *
 *       at entry       target = cwnd x silence_factor
 *       per ACK        target -= ack_factor x newly delivered
 *                                + loss_factor x newly lost
 *                      (of the flight out at entry, cwnd packets)
 *       never below    cwnd_before x beta / 3, IW x beta, 2 packets
 *
 *   with K the draft's constant, beta CUBIC's (Linux's 717/1024):
 *
 *       silence_factor = loss_factor = beta + K (1 - beta)
 *       ack_factor     = K (1 - beta)
 *
 *   If the losses are tail drops of a full queue, the recovery ends near
 *   beta x (BDP + queue): where a loss in congestion avoidance would leave
 *   CUBIC.  The kernel's recovery (PRR, RFC 6937) carries the window down
 *   to ssthresh; the target is ssthresh, updated on every ACK of the
 *   recovery.  When the recovery ends, Rapid Start ends and CUBIC's
 *   congestion avoidance follows, its W_max the target / beta (the full BDP
 *   the target stands for).
 *
 *     3x --rtt_floor > thresh--> 2x
 *     3x, 2x --first loss/ECN--> converging --recovery ends--> CUBIC
 *     any --RTO--> CUBIC (plain slow start up to ssthresh)
 *
 * Units: windows in packets; the convergence's arithmetic in 1/RAPID_SCALE
 * of a packet (K in 1/36, beta in 1/1024), so no fraction is lost per ACK.
 */
#include "ssvariant.h"

/* beta of the CUBIC the start hands over to (cubic.c: Linux's 717/1024). */
#define RAPID_BETA 717U
#define RAPID_BETA_SCALE 1024U
/* K is a parameter in 1/36 (11/18 = 22/36; the draft's -02 has 2/3 = 24/36). */
#define RAPID_K_SCALE 36U
#define RAPID_SCALE ((u64)RAPID_K_SCALE * RAPID_BETA_SCALE)

enum ss_rapid_phase {
	RAPID_3X,		/* no queue seen: +2 per packet acked */
	RAPID_2X,		/* a queue seen: +1 per packet acked */
	RAPID_CONVERGING,	/* the first recovery: the target comes down */
	RAPID_DONE,		/* CUBIC's rules from here */
};

/* The convergence's factors for @k36 (K x 36), in 1/RAPID_SCALE. */
static u32 rapid_ack_factor(u32 k36)
{
	return k36 * (RAPID_BETA_SCALE - RAPID_BETA);
}

static u32 rapid_silence_factor(u32 k36)
{
	return RAPID_BETA * RAPID_K_SCALE + rapid_ack_factor(k36);
}

/* queue_buildup_thresh for @min_rtt_us. */
u32 ss_rapid_threshold(const struct ss_params *p, u32 min_rtt_us)
{
	u64 scaled = (u64)min_rtt_us * p->rapid_rtt_pct / 100;

	return ss_min(ss_sat_add(min_rtt_us, p->rapid_rtt_add_us), ss_sat32(scaled));
}

static void rapid_init(struct sscore_state *st, const struct ss_params *p, unsigned int version,
		       u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	struct ss_rapid *r = &st->rapid;

	r->iw = cwnd;
	r->k36 = ss_min(p->rapid_k36, RAPID_K_SCALE);
	r->round_floor_us = SS_RTT_UNKNOWN;
	r->phase = RAPID_3X;
}

/* The jump: 2 x IW (rapid_iw_mult), sent paced once the RTT is known. */
static bool rapid_first_window(struct sscore_state *st, const struct ss_params *p, struct ss_win *w)
{
	struct ss_rapid *r = &st->rapid;

	if (p->rapid_iw_mult <= 1)
		return false;
	r->first_cwnd = ss_sat32((u64)r->iw * p->rapid_iw_mult);
	w->cwnd = r->first_cwnd;
	return true;
}

/* The handshake's RTT: the first window leaves over it (rate in bytes/s). */
static void rapid_handshake(struct sscore_state *st, const struct ss_params *p, u32 rtt_us, u32 mss)
{
	struct ss_rapid *r = &st->rapid;
	u32 window = r->first_cwnd ? r->first_cwnd : r->iw;

	if (!p->rapid_pace_first || !rtt_us || rtt_us == SS_RTT_UNKNOWN || !mss)
		return;
	r->pace_rate = ss_sat32(ss_div64((u64)window * mss * SS_USEC_PER_SEC, rtt_us));
	ss_emit(st, SS_EV_ESTIMATE, r->pace_rate, rtt_us, window, 0);
}

static u32 rapid_first_window_pace_rate(const struct sscore_state *st)
{
	return st->rnd.round == 1 ? st->rapid.pace_rate : 0;
}

/* The glue paces (temporarily) while the first window's rate applies. */
static bool rapid_pacing(const struct sscore_state *st)
{
	return rapid_first_window_pace_rate(st) != 0;
}

static void rapid_round_begin(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	st->rapid.round_floor_us = SS_RTT_UNKNOWN;
	st->rapid.round_samples = 0;
}

/* The queue test: once per ACK with an RTT sample, in 3x. */
static void rapid_slow_start_ack(struct sscore_state *st, const struct ss_params *p,
				 const struct ss_ack *ack, struct ss_win *w, struct ss_pacing_plan *plan)
{
	struct ss_rapid *r = &st->rapid;
	u32 thresh;

	if (!ss_rtt_sample_taken(st, ack))
		return;
	r->round_floor_us = ss_min(r->round_floor_us, ack->rtt_us ? ack->rtt_us : 1);
	if (r->round_samples < 0xff)
		r->round_samples++;
	if (r->phase != RAPID_3X || r->round_samples < p->hspp_n_rtt_sample ||
	    st->rnd.min_rtt_us == SS_RTT_UNKNOWN)
		return;
	thresh = ss_rapid_threshold(p, st->rnd.min_rtt_us);
	if (r->round_floor_us > thresh) {
		r->phase = RAPID_2X;
		ss_emit(st, SS_EV_GROWTH, st->rnd.round, 2, r->round_floor_us, 0);
	}
}

/* Below ssthresh: +2 per packet in 3x, +1 otherwise; what passes ssthresh
 * feeds congestion avoidance. */
static u32 rapid_grow(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		      struct ss_win *w)
{
	u32 per = st->rapid.phase == RAPID_3X ? 2 : 1;
	u32 room = w->ssthresh > w->cwnd ? w->ssthresh - w->cwnd : 0;
	u64 inc = (u64)ack->acked * per;
	u32 used;

	if (inc < room) {
		w->cwnd += (u32)inc;
		return 0;
	}
	w->cwnd = w->ssthresh;
	used = (room + per - 1) / per;
	return ack->acked > used ? ack->acked - used : 0;
}

/* The target, as ssthresh (whole packets, at least 2). */
static u32 rapid_target_window(const struct ss_rapid *r)
{
	return ss_max(ss_sat32(r->target / RAPID_SCALE), 2);
}

/*
 * The first congestion of the start: the target begins at cwnd x
 * silence_factor.  Later ones (and those after the start) are CUBIC's.
 * CUBIC's own reduction has run (its epoch and W_max, @ssthresh its answer).
 */
static u32 rapid_reduce(struct sscore_state *st, struct ss_win *w, u32 cwnd_before, u32 ssthresh)
{
	struct ss_rapid *r = &st->rapid;
	u64 floor_beta3, floor_iw;

	if (r->phase != RAPID_3X && r->phase != RAPID_2X)
		return ssthresh;
	r->target = (u64)cwnd_before * rapid_silence_factor(r->k36);
	/* SHOULD NOT below cwnd_before x beta / 3 (the draft's bound, which is
	 * silence - ack/3 - 2 loss/3 of cwnd_before); MAY stop at IW x beta. */
	floor_beta3 = (u64)cwnd_before * RAPID_BETA * RAPID_K_SCALE / 3;
	floor_iw = (u64)r->iw * RAPID_BETA * RAPID_K_SCALE;
	r->floor = floor_beta3 > floor_iw ? floor_beta3 : floor_iw;
	if (r->floor < 2 * RAPID_SCALE)
		r->floor = 2 * RAPID_SCALE;
	if (r->target < r->floor)
		r->target = r->floor;
	r->cwnd_before = cwnd_before;
	r->flight_left = cwnd_before;
	r->phase = RAPID_CONVERGING;
	st->rnd.found = 1;
	st->rnd.exit_cause = SS_EXIT_LOSS;
	st->cubic.w_max = ss_sat32(ss_div64((u64)rapid_target_window(r) * RAPID_BETA_SCALE, RAPID_BETA));
	return rapid_target_window(r);
}

/*
 * Every ACK: in the first recovery the target comes down by what this ACK
 * delivered and what was declared lost since the last one.  The draft counts
 * what becomes of the flight that was out when the recovery began (its
 * derivation: cwnd before = acked + lost), as QUIC's recovery period, about
 * an RTT, sees it.  A TCP recovery lasts until every lost packet is repaired
 * and its deliveries include the repairs and new data: we count losses, then
 * deliveries, until they add up to that flight (cwnd before), and no more.
 */
static void rapid_any_ack(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
			  struct ss_win *w)
{
	struct ss_rapid *r = &st->rapid;
	u32 delivered = ack->delivered - r->delivered_seen;
	u32 lost = ack->lost - r->lost_seen;
	u64 down;

	r->delivered_seen = ack->delivered;
	r->lost_seen = ack->lost;
	if (r->phase != RAPID_CONVERGING)
		return;
	if (!ack->recovering) {
		r->phase = RAPID_DONE;
		ss_emit(st, SS_EV_EXIT, SS_EXIT_LOSS, r->cwnd_before, w->ssthresh, 0);
		return;
	}
	lost = ss_min(lost, r->flight_left);
	r->flight_left -= lost;
	delivered = ss_min(delivered, r->flight_left);
	r->flight_left -= delivered;
	down = (u64)delivered * rapid_ack_factor(r->k36) + (u64)lost * rapid_silence_factor(r->k36);
	r->target = r->target > r->floor + down ? r->target - down : r->floor;
	w->ssthresh = rapid_target_window(r);
	st->cubic.w_max = ss_sat32(ss_div64((u64)w->ssthresh * RAPID_BETA_SCALE, RAPID_BETA));
}

/* An RTO ends the start; slow start up to ssthresh grows 2x. */
static bool rapid_rto(struct sscore_state *st, u32 cwnd_before)
{
	st->rapid.phase = RAPID_DONE;
	st->rnd.found = 1;
	st->rnd.exit_cause = SS_EXIT_LOSS;
	return false;
}

/* Traced state: 0 growing 3x, 2 growing 2x, 3 converging, 1 after. */
static u8 rapid_trace_state(const struct sscore_state *st)
{
	static const u8 state[] = { [RAPID_3X] = 0, [RAPID_2X] = 2, [RAPID_CONVERGING] = 3, [RAPID_DONE] = 1 };

	return state[st->rapid.phase];
}

/* cubic_rapid */
const struct ss_start_ops ss_rapid_ops = {
	.growth = &ss_cubic_growth,
	.init = rapid_init,
	.first_window = rapid_first_window,
	.handshake = rapid_handshake,
	.round_begin = rapid_round_begin,
	.any_ack = rapid_any_ack,
	.slow_start_ack = rapid_slow_start_ack,
	.grow = rapid_grow,
	.reduce = rapid_reduce,
	.rto = rapid_rto,
	.pacing = rapid_pacing,
	.first_window_pace_rate = rapid_first_window_pace_rate,
	.trace_state = rapid_trace_state,
};
