// SPDX-License-Identifier: GPL-2.0
/*
 * sscore.c: what every connection has, whatever its start: rounds, RTT
 * samples, the window rules after slow start (CUBIC, and NewReno for the
 * Astart paper's family) and the entry points.  The starts themselves are
 * ops tables in their own files (ssvariant.h; registered in variants.h):
 * hystart.c (traditional, HyStart), hystartpp.c, suss.c, ratestart.c
 * (Astart, Hoe, the standard start, Blitzstart).  See sscore.h for the
 * model.
 *
 * Per ACK the kernel calls, in order:
 *   ss_on_ack()      RTT sample, round bookkeeping, exit tests, SUSS plans;
 *   ss_cong_avoid()  cwnd growth (not called in Recovery/CWR).
 * On loss: ss_ssthresh(); on RTO additionally ss_on_rto().
 */
#include "ssvariant.h"

const struct ss_params ss_default_params = SS_DEFAULT_PARAMS;


static void trace(const struct sscore_state *st, enum ss_event_type type,
		  u32 a, u32 b, u32 c, const struct ss_pacing_plan *plan)
{
	struct ss_event ev = { .type = type, .a = a, .b = b, .c = c, .plan = plan };

	ss_trace_event(st, &ev);
}

void ss_emit(const struct sscore_state *st, enum ss_event_type type, u32 a, u32 b, u32 c,
	     const struct ss_pacing_plan *plan)
{
	trace(st, type, a, b, c, plan);
}

/* ------------------------------------------------------------------------
 * CUBIC (RFC 9438)
 *
 * After a reduction the window follows W(t) = C (t - K)^3 + W_max: it rises
 * quickly back towards W_max, stays near it (the plateau) and then probes
 * beyond.  K is when the curve reaches W_max again.  In the "Reno-friendly"
 * region, where a Reno flow would be ahead (short RTTs, small windows), the
 * window follows the Reno estimate W_est instead.
 */

/* beta_cubic = 0.7: the share of the window kept after a loss. */
#define CUBIC_BETA_NUM 7ULL
#define CUBIC_BETA_DEN 10ULL
/* C = 0.4 packets/s^3, in packets/ms^3: 4 / 10^10. */
#define CUBIC_C_NUM 4ULL
#define CUBIC_C_DEN 10000000000ULL
/* alpha_cubic = 3 (1 - beta) / (1 + beta) = 9/17 of a packet per RTT. */
#define CUBIC_ALPHA_NUM 9ULL
#define CUBIC_ALPHA_DEN 17ULL
/* |t - K| is clamped here (17 minutes): the cube of it times C_NUM still fits in u64. */
#define CUBIC_MAX_DT_MS (1U << 20)
/* RTT samples this soon after an epoch starts are ignored (post-recovery ACKs are distorted). */
#define CUBIC_QUIET_MS 1000U

/* Largest r with r^3 <= x. */
u32 ss_cbrt64(u64 x)
{
	u32 lo = 0, hi = 2642246;	/* 2642246^3 > 2^64 - 1 >= 2642245^3 */

	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;
		u64 cube = (u64)mid * mid * mid;

		if (cube <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

u32 ss_cubic_window(const struct ss_cubic *c, u32 t_ms)
{
	s64 dt = (s64)t_ms - (s64)c->k_ms;
	u64 adt = dt < 0 ? (u64)-dt : (u64)dt;
	u64 delta;

	if (adt > CUBIC_MAX_DT_MS)
		adt = CUBIC_MAX_DT_MS;
	/* rounded to the nearest packet */
	delta = ss_div64(adt * adt * adt * CUBIC_C_NUM + CUBIC_C_DEN / 2, CUBIC_C_DEN);
	if (dt < 0)
		return delta >= c->origin ? 0 : c->origin - (u32)delta;
	return ss_sat32((u64)c->origin + delta);
}

static void cubic_start_epoch(struct ss_cubic *c, u32 cwnd, u32 now_ms)
{
	c->epoch_ms = now_ms ? now_ms : 1;	/* 0 means "no epoch" */
	c->ack_credit = 0;
	c->w_est = cwnd;
	c->w_est_acks = 0;
	if (c->w_max > cwnd) {
		/* K = cbrt((W_max - cwnd_epoch) / C), here in ms */
		c->k_ms = ss_cbrt64(ss_div64((u64)(c->w_max - cwnd) * CUBIC_C_DEN, CUBIC_C_NUM));
		c->origin = c->w_max;
	} else {
		c->k_ms = 0;
		c->origin = cwnd;
	}
}

/* W_est grows by alpha per RTT, i.e. by alpha * acked / cwnd per ACK (RFC 9438 4.3). */
static void cubic_update_w_est(struct ss_cubic *c, u32 acked, u32 cwnd)
{
	/* alpha becomes 1 once W_est has reached the window before the reduction. */
	u64 den = c->w_est >= c->w_max ? CUBIC_ALPHA_NUM : CUBIC_ALPHA_DEN;
	u64 step = (u64)ss_max(cwnd, 1) * den;	/* in ACKs x ALPHA_NUM */
	u64 acks = (u64)c->w_est_acks + (u64)acked * CUBIC_ALPHA_NUM;

	if (acks >= step) {
		u64 inc = ss_div64(acks, step);

		c->w_est = ss_sat32((u64)c->w_est + inc);
		acks -= inc * step;
	}
	c->w_est_acks = ss_sat32(acks);
}

static void cubic_avoid(struct sscore_state *st, u32 now_ms, u32 acked, struct ss_win *w)
{
	struct ss_cubic *c = &st->cubic;
	u32 rtt_ms = st->rnd.min_rtt_us == SS_RTT_UNKNOWN ? 0 : st->rnd.min_rtt_us / SS_USEC_PER_MSEC;
	u32 t_ms, now_w, target, cnt;
	u64 inc;

	if (!acked)
		return;
	if (!c->epoch_ms)
		cubic_start_epoch(c, w->cwnd, now_ms);
	t_ms = ss_elapsed(now_ms, c->epoch_ms);

	/* Aim for where the curve will be one RTT from now ... */
	target = ss_cubic_window(c, t_ms + rtt_ms);
	/* ... but never shrink, and grow at most 1.5x per RTT (RFC 9438 4.2). */
	target = ss_clamp(target, w->cwnd, w->cwnd + w->cwnd / 2);

	/* Reno-friendly region: W_est ahead of the cubic curve. */
	cubic_update_w_est(c, acked, w->cwnd);
	now_w = ss_cubic_window(c, t_ms);
	if (c->w_est > now_w && c->w_est > target)
		target = c->w_est;

	if (target <= w->cwnd)
		return;
	/* cwnd += (target - cwnd) / cwnd per acked packet: +1 every cnt ACKs. */
	cnt = ss_max(w->cwnd / (target - w->cwnd), 1);
	c->ack_credit = ss_sat32((u64)c->ack_credit + acked);
	if (c->ack_credit >= cnt) {
		inc = c->ack_credit / cnt;
		c->ack_credit -= (u32)inc * cnt;
		w->cwnd = ss_sat32((u64)w->cwnd + inc);
	}
}

/* ------------------------------------------------------------------------
 * NewReno (RFC 5681, RFC 6582): +1 packet per window of packets acked in
 * congestion avoidance; half the window after a loss (as Linux's reno, from
 * cwnd rather than FlightSize).  The credit reuses CUBIC's counter.
 */
static void reno_avoid(struct ss_cubic *c, u32 acked, struct ss_win *w)
{
	u32 cwnd = ss_max(w->cwnd, 1);

	c->ack_credit = ss_sat32((u64)c->ack_credit + acked);
	if (c->ack_credit >= cwnd) {
		u32 inc = c->ack_credit / cwnd;

		c->ack_credit -= inc * cwnd;
		w->cwnd = ss_sat32((u64)w->cwnd + inc);
	}
}

static u32 reno_reduce(u32 cwnd)
{
	return ss_max(cwnd / 2, 2);
}

static u32 cubic_reduce(struct ss_cubic *c, u32 cwnd)
{
	c->epoch_ms = 0;
	/* Fast convergence: a flow that lost before reaching its last W_max
	 * yields bandwidth by remembering a lower plateau, (1 + beta) / 2. */
	if (cwnd < c->w_max)
		c->w_max = ss_sat32(ss_div64((u64)cwnd * (CUBIC_BETA_DEN + CUBIC_BETA_NUM),
					     2 * CUBIC_BETA_DEN));
	else
		c->w_max = cwnd;
	return ss_max(ss_sat32(ss_div64((u64)cwnd * CUBIC_BETA_NUM, CUBIC_BETA_DEN)), 2);
}

static void cubic_avoid_acked(struct sscore_state *st, u32 now_ms, u32 acked, struct ss_win *w)
{
	cubic_avoid(st, now_ms, acked, w);
}

static u32 cubic_reduce_window(struct sscore_state *st, struct ss_win *w)
{
	return cubic_reduce(&st->cubic, w->cwnd);
}

const struct ss_growth_ops ss_cubic_growth = {
	.avoid = cubic_avoid_acked,
	.reduce = cubic_reduce_window,
};

static void reno_avoid_acked(struct sscore_state *st, u32 now_ms, u32 acked, struct ss_win *w)
{
	reno_avoid(&st->cubic, acked, w);
}

/* The start-up ends at the first loss (Astart: "switch to congestion
 * avoidance"); only a timeout re-arms it. */
static u32 reno_reduce_window(struct sscore_state *st, struct ss_win *w)
{
	st->rnd.found = 1;
	st->rnd.exit_cause = SS_EXIT_LOSS;
	st->cubic.ack_credit = 0;
	return reno_reduce(w->cwnd);
}

const struct ss_growth_ops ss_reno_growth = {
	.avoid = reno_avoid_acked,
	.reduce = reno_reduce_window,
};

/* ------------------------------------------------------------------------
 * Rounds and RTT samples
 */

static void take_rtt_sample(struct sscore_state *st, const struct ss_ack *ack)
{
	struct ss_round *r = &st->rnd;
	u32 rtt = ack->rtt_us ? ack->rtt_us : 1;

	if (r->min_rtt_us == SS_RTT_UNKNOWN || rtt < r->min_rtt_us) {
		r->min_rtt_us = rtt;
		r->min_rtt_round = r->round;
	}
}

static bool rtt_quiet(const struct sscore_state *st, const struct ss_ack *ack)
{
	return st->cubic.epoch_ms && ss_elapsed(ack->now_ms, st->cubic.epoch_ms) < CUBIC_QUIET_MS;
}

/* Slow start ends: ssthresh = cwnd.  @cwnd_then: the window that ended it,
 * before any cut to what is in flight (the event's b; c is ssthresh). */
void ss_exit_slow_start_from(struct sscore_state *st, struct ss_win *w, enum ss_exit_cause cause,
			     u32 cwnd_then)
{
	st->rnd.found = 1;
	st->rnd.exit_cause = cause;
	w->ssthresh = w->cwnd;
	trace(st, SS_EV_EXIT, cause, cwnd_then, w->ssthresh, 0);
}

/* ------------------------------------------------------------------------
 * The registry (variants.h) and the entry points
 */

const struct ss_start_ops *const ss_variant_ops[SS_NR_VARIANTS] = {
#define SS_VARIANT(id, ops) [SS_##id] = &ops,
#include "variants.h"
#undef SS_VARIANT
};

void ss_init(struct sscore_state *st, enum ss_variant v, unsigned int suss_version, u32 now_us,
	     u32 snd_nxt, u32 cwnd, u32 mss)
{
	const struct ss_start_ops *ops;

	*st = (struct sscore_state){ 0 };
	st->variant = v < SS_NR_VARIANTS ? v : SS_TRADITIONAL;
	st->rnd.end_seq = snd_nxt;
	st->rnd.start_us = now_us;
	st->rnd.last_ack_us = now_us;
	st->rnd.round = 1;
	st->rnd.min_rtt_us = SS_RTT_UNKNOWN;
	st->rnd.round_min_rtt_us = SS_RTT_UNKNOWN;
	ops = ss_ops(st);
	if (ops->init)
		ops->init(st, suss_version, now_us, snd_nxt, cwnd, mss);
}

void ss_init_window(struct sscore_state *st, const struct ss_params *p, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);

	if (!ops->first_window || !ops->first_window(st, p, w))
		return;
	trace(st, SS_EV_START, w->cwnd, w->ssthresh, 0, 0);
}

static void start_round(struct sscore_state *st, const struct ss_params *p,
			const struct ss_ack *ack, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);
	struct ss_round *r = &st->rnd;

	if (ops->round_end)
		ops->round_end(st, p, w);
	if (r->round < 0xffff)
		r->round++;
	r->end_seq = ack->snd_nxt;
	r->start_us = ack->now_us;
	if (!ops->own_hystart_round || !ops->own_hystart_round(st)) {
		/* HyStart's round is this one. */
		r->last_ack_us = ack->now_us;
		r->round_min_rtt_us = SS_RTT_UNKNOWN;
		r->samples = 0;
	}
	if (ops->round_begin)
		ops->round_begin(st, ack, w);
	trace(st, SS_EV_NEW_ROUND, r->round, r->end_seq, w->cwnd, 0);
}

void ss_on_ack(struct sscore_state *st, const struct ss_params *p,
	       const struct ss_ack *ack, struct ss_win *w,
	       struct ss_pacing_plan *plan)
{
	const struct ss_start_ops *ops = ss_ops(st);
	struct ss_round *r = &st->rnd;
	bool in_slow_start;

	plan->start = false;
	in_slow_start = !r->found && w->cwnd < w->ssthresh;

	/* The round check runs before any low-window test (the 2025 fix to
	 * Linux's HyStart: otherwise a round that starts below the low window
	 * is never closed, and the first detection uses a stale start).  It
	 * also runs before the RTT sample, which belongs to the new round. */
	if ((in_slow_start || ops->counts_rounds_in_ca) && ss_after(ack->snd_una, r->end_seq))
		start_round(st, p, ack, w);
	if (ss_rtt_valid(ack) && !rtt_quiet(st, ack))
		take_rtt_sample(st, ack);
	/* Astart also works at or above ssthresh (its mini linear phases). */
	if (ops->any_ack)
		ops->any_ack(st, p, ack, w);
	if (r->found || w->cwnd >= w->ssthresh)
		return;
	if (ops->slow_start_ack)
		ops->slow_start_ack(st, p, ack, w, plan);
}

u32 ss_slow_start(struct ss_win *w, u32 acked)
{
	u32 room = w->ssthresh > w->cwnd ? w->ssthresh - w->cwnd : 0;
	u32 inc = ss_min(acked, room);

	w->cwnd += inc;
	return acked - inc;
}

void ss_cong_avoid(struct sscore_state *st, const struct ss_params *p,
		   const struct ss_ack *ack, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);
	u32 left = ack->acked;

	if (w->cwnd < w->ssthresh) {
		left = ops->grow ? ops->grow(st, p, ack, w) : ss_slow_start(w, ack->acked);
		if (!left)
			return;
	}
	ops->growth->avoid(st, ack->now_ms, left, w);
}

u32 ss_ssthresh(struct sscore_state *st, u32 in_flight, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);
	u32 before = w->cwnd;

	if (ops->loss)
		ops->loss(st, in_flight, w);
	/* Slow start now ends because cwnd >= ssthresh, not because an exit
	 * test fired: if the kernel undoes a spurious reduction (restoring an
	 * infinite ssthresh), slow start resumes with its exit tests armed. */
	w->ssthresh = ops->growth->reduce(st, w);
	trace(st, SS_EV_LOSS, before, in_flight, w->ssthresh, 0);
	return w->ssthresh;
}

void ss_on_rto(struct sscore_state *st, u32 cwnd_before)
{
	const struct ss_start_ops *ops = ss_ops(st);

	st->cubic.epoch_ms = 0;
	if (ops->rto && !ops->rto(st, cwnd_before))
		return;
	/* HyStart re-arms for the slow start that follows a timeout. */
	st->rnd.found = 0;
	st->rnd.exit_cause = SS_EXIT_NONE;
}

void ss_on_idle_restart(struct sscore_state *st, u32 now_ms, u32 idle_ms)
{
	struct ss_cubic *c = &st->cubic;

	/* Idle time is not congestion-avoidance time (RFC 9438 5.8). */
	if (!c->epoch_ms)
		return;
	c->epoch_ms += idle_ms;
	if (ss_after(c->epoch_ms, now_ms))
		c->epoch_ms = now_ms ? now_ms : 1;
}

/* ------------------------------------------------------------------------
 * What the glue asks of a connection's start
 */

u32 ss_peer_window(const struct sscore_state *st, u32 snd_wnd, u32 mss)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->peer_window ? ops->peer_window(st, snd_wnd, mss) : snd_wnd;
}

bool ss_peer_window_each_ack(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->peer_window_each_ack && ops->peer_window_each_ack(st);
}

bool ss_ignore_peer_window(const struct sscore_state *st, const struct ss_params *p)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->ignore_peer_window && ops->ignore_peer_window(st, p);
}

bool ss_suss_pacing(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->pacing && ops->pacing(st);
}

u32 ss_first_window_pace_rate(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->first_window_pace_rate ? ops->first_window_pace_rate(st) : 0;
}

u8 ss_trace_state(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	if (ops->trace_state)
		return ops->trace_state(st);
	return st->rnd.found ? 1 : 0;
}

bool ss_paced_socket(const struct sscore_state *st)
{
	return ss_ops(st)->paced_socket;
}

bool ss_takes_hint(const struct sscore_state *st)
{
	return ss_ops(st)->takes_hint;
}
