// SPDX-License-Identifier: GPL-2.0
/*
 * cubic.c: CUBIC's window rules after slow start (struct ss_growth_ops).
 */
#include "ssvariant.h"

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
