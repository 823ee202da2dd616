// SPDX-License-Identifier: GPL-2.0
/*
 * cubic.c: CUBIC's window rules after slow start, as Linux computes them.
 *
 * The SUSS paper's flows ran Linux's CUBIC, and the testbed kernel has it
 * built in (`cubic`), so ours takes the kernel's decisions: every rule,
 * constant and rounding below is a fact of Linux's CUBIC (6.1; 5.19's is the
 * same here), written in our own code, and the testbed checks the result
 * against the kernel ACK by ACK (kernel/README.md, "The kernel as the
 * oracle").  Where Linux departs from RFC 9438 it is followed, and said so.
 *
 * The model.  After a reduction from W_max, each ACK in congestion
 * avoidance aims cwnd at the curve one min RTT ahead:
 *
 *     target = origin + C (t + minRTT - K)^3          (below K: minus |...|^3)
 *     K      = cbrt((W_max - cwnd_epoch) / C)
 *
 * with t counted from the epoch's first ACK.  The kernel measures t in ticks
 * of its clock (jiffies) and converts t + minRTT (the min RTT rounded up to
 * whole ticks) to units of 1/1024 s; K is in the same units and comes from
 * an approximate cube root (ss_cubic_root).  C is 410/1024 packets/s^3.
 *
 *     cwnd grows by one every `cnt` packets acked:
 *       cnt = cwnd / (target - cwnd)        target above cwnd
 *           = 100 cwnd                      otherwise (almost flat)
 *       cnt <= 20 before the first reduction (W_max = 0): at least 5 % a
 *                 round, which RFC 9438 does not have: our earlier RFC
 *                 CUBIC grew 17 packets in 2.5 s where Linux grew 170;
 *       cnt <= cwnd / (W_est - cwnd) while the Reno estimate W_est is ahead;
 *       cnt >= 2 (at most 1.5x a round).
 *
 *   epoch:  starts at the first ACK in congestion avoidance after a
 *           reduction (or after slow start); K and origin fixed then
 *           (cwnd >= W_max: K = 0, origin = cwnd, the curve's rising half).
 *   cnt:    computed at most once per tick, and kept while cwnd is the same
 *           for up to 1/32 s; the Reno estimate is brought up to date on
 *           every ACK nonetheless.
 *   W_est:  +1 for every 15/8 cwnd packets acked in the epoch (alpha =
 *           8/15 of a packet a round: Linux's 3 (1 - beta) / (1 + beta)).
 *   growth: the kernel's additive increase with the socket's own counter
 *           (snd_cwnd_cnt, ss_win.cwnd_cnt): ss_additive_increase.
 *   loss:   beta = 717/1024; fast convergence: a flow reduced below its last
 *           W_max remembers (1 + beta)/2 of its cwnd as W_max.
 *   RTO:    everything above is forgotten, W_max, the min RTT and HyStart's
 *           round included (ss_cubic_rto).
 *   idle:   the epoch moves by the ticks the connection was idle.
 *
 * N connections.  Google QUIC's CUBIC, which the Blitzstart report's flows
 * ran, behaves as N Linux flows would together (N = 2 by default there):
 * a loss takes 1/N of the reduction one flow would make, and the Reno
 * estimate grows N^2 times as fast, as N flows' windows summed would:
 *
 *     beta_N  = (N - 1 + beta) / N                  (N = 2: 0.85)
 *     alpha_N = 3 N^2 (1 - beta_N) / (1 + beta_N)   (N = 2: 0.97 a round)
 *
 * in the kernel's integers: beta_N = (1024 (N - 1) + 717) / N, and the Reno
 * estimate's packets per +1, (8 (1024 + beta_N) / 3 N^2 / (1024 - beta_N))
 * cwnd / 8, which for N = 1 is Linux's 15 cwnd / 8.  Fast convergence keeps
 * (1 + beta_N) / 2 of cwnd as W_max: QUIC's N-connection 0.85 (0.925 at
 * N = 2).  Everything else is Linux's; the starts that run this are
 * cubic_std and cubic_blitz (ratestart.h), every other CUBIC has N = 1.
 */
#include "ssvariant.h"

/* beta: the share of cwnd kept after a loss, in 1/1024 (Linux's 717, ~0.7). */
#define CUBIC_BETA 717U
#define CUBIC_BETA_SCALE 1024U
/* K and t are in 1/2^10 s. */
#define CUBIC_TIME_SHIFT 10U
/* C = 410/1024 packets/s^3 (Linux's bic_scale 41, times 10). */
#define CUBIC_C_SCALED 410ULL
/* delta = C (t - K)^3, with t - K in 1/1024 s and C in 1/1024: shift out 2^10 x 2^30. */
#define CUBIC_DELTA_SHIFT (10U + 3U * CUBIC_TIME_SHIFT)
/* K^3 = (W_max - cwnd) / C in (1/1024 s)^3: multiply by 2^40 / 410. */
#define CUBIC_K_FACTOR ((1ULL << CUBIC_DELTA_SHIFT) / CUBIC_C_SCALED)
/* Before the first reduction, at least 1/20 of cwnd a round (5 %). */
#define CUBIC_FIRST_MAX_CNT 20U
/* cnt when the target is not above cwnd: 1 packet per 100 rounds. */
#define CUBIC_FLAT_CNT 100U
/* cnt is recomputed when cwnd changed or this share of a second has passed. */
#define CUBIC_RECALC_DIV 32U

/* beta of N connections, in 1/1024: Linux's 717 for one. */
u32 ss_cubic_beta(u32 connections)
{
	u32 n = ss_clamp(connections, 1, SS_CUBIC_MAX_CONNECTIONS);

	return (CUBIC_BETA_SCALE * (n - 1) + CUBIC_BETA) / n;
}

/* The Reno estimate: +1 per (cwnd x scale) / 8 packets acked, scale = 8 /
 * alpha_N (Linux's beta_scale, 8 (1024 + 717) / 3 / (1024 - 717) = 15 for
 * one connection; 8 for two), in Linux's integer steps. */
u32 ss_cubic_reno_scale(u32 connections)
{
	u32 n = ss_clamp(connections, 1, SS_CUBIC_MAX_CONNECTIONS);
	u32 beta = ss_cubic_beta(n);

	return ss_max(8 * (CUBIC_BETA_SCALE + beta) / (3 * n * n) / (CUBIC_BETA_SCALE - beta), 1);
}

/* Position of the highest set bit, 1-based; 0 for 0. */
static u32 highest_bit(u64 x)
{
	u32 n = 0;

	while (x) {
		n++;
		x >>= 1;
	}
	return n;
}

/*
 * The kernel's cube root, from which it takes K.  Not the exact root: an
 * estimate of cbrt(a) from the cube root of a's six leading bits, read off a
 * 64-entry table (entry i: 64 cbrt(i) - 10, roughly, refined by hand), then
 * one Newton-Raphson step x' = (2x + a / x^2) / 3, done in integers as the
 * kernel does it (x (x - 1) for x^2, and / 3 as x 341 / 1024).  Its error
 * is about 0.2 %: K differs from the exact root by milliseconds, which moves
 * which ACK cwnd grows on, so the kernel's steps and table are kept (the
 * table is Linux's constants).
 */
static const u8 cubic_root_table[64] = {
	0,   54,  54,  54,  118, 118, 118, 118,
	123, 129, 134, 138, 143, 147, 151, 156,
	157, 161, 164, 168, 170, 173, 176, 179,
	181, 185, 187, 190, 192, 194, 197, 199,
	200, 202, 204, 206, 209, 211, 213, 215,
	217, 219, 221, 222, 224, 225, 227, 229,
	231, 232, 234, 236, 237, 239, 240, 242,
	244, 245, 246, 248, 250, 251, 252, 254,
};

u32 ss_cubic_root(u64 a)
{
	u32 bits = highest_bit(a);
	u32 shift, x;

	if (bits < 7)	/* a < 64: straight from the table */
		return ((u32)cubic_root_table[a] + 35) >> 6;
	/* a = m 2^(3 shift) with m below 64: cbrt(a) ~ cbrt(m) 2^shift
	 * (bits x 84 / 256 is about bits / 3). */
	shift = ((bits * 84) >> 8) - 1;
	x = ((u32)((u32)cubic_root_table[a >> (3 * shift)] + 10) << shift) >> 6;
	/* One Newton-Raphson step. */
	x = 2 * x + (u32)ss_div64(a, (u64)x * (u64)(x - 1));
	return (x * 341) >> 10;
}

/* The kernel's usecs_to_jiffies: whole ticks, rounded up. */
static u32 us_to_ticks(u32 us, u32 hz)
{
	return (u32)ss_div64((u64)us * hz + SS_USEC_PER_SEC - 1, SS_USEC_PER_SEC);
}

/* The epoch starts: where the curve is anchored. */
static void cubic_start_epoch(struct ss_cubic *c, u32 now, u32 cwnd, u32 acked)
{
	c->epoch = now;
	c->acks = acked;
	c->w_est = cwnd;
	if (c->w_max <= cwnd) {
		c->k = 0;
		c->origin = cwnd;
	} else {
		c->k = ss_cubic_root(CUBIC_K_FACTOR * (c->w_max - cwnd));
		c->origin = c->w_max;
	}
}

/* The curve's target one min RTT ahead, and cnt from it.  u32 arithmetic
 * wraps where the kernel's does (a target below 0 far left of K). */
static u32 cubic_cnt_from_curve(const struct ss_cubic *c, const struct ss_ack *ack,
				u32 min_rtt_us, u32 cwnd)
{
	u64 t, offs;
	u32 delta, target;

	/* Ticks since the epoch began plus the min RTT, in 1/1024 s. */
	t = (u64)(s64)(s32)(ack->now_ticks - c->epoch);
	t += us_to_ticks(min_rtt_us, ack->hz);
	t = ss_div64(t << CUBIC_TIME_SHIFT, ack->hz);
	offs = t < c->k ? c->k - t : t - c->k;
	delta = (u32)((CUBIC_C_SCALED * offs * offs * offs) >> CUBIC_DELTA_SHIFT);
	target = t < c->k ? c->origin - delta : c->origin + delta;
	return target > cwnd ? cwnd / (target - cwnd) : CUBIC_FLAT_CNT * cwnd;
}

/* The Reno estimate catches up with the packets acked, and holds cnt down
 * while it is ahead of cwnd. */
static u32 cubic_reno_bound(struct ss_cubic *c, u32 cwnd, u32 cnt, u32 reno_scale)
{
	u32 per = (cwnd * reno_scale) >> 3;
	u32 steps;

	if (per && c->acks > per) {
		/* Linux steps one at a time while acks > per: (acks - 1) / per steps. */
		steps = (c->acks - 1) / per;
		c->acks -= steps * per;
		c->w_est += steps;
	}
	if (c->w_est > cwnd)
		cnt = ss_min(cnt, cwnd / (c->w_est - cwnd));
	return cnt;
}

/* cnt for this ACK (Linux's bictcp_update). */
static void cubic_update(struct sscore_state *st, const struct ss_ack *ack, u32 cwnd, u32 acked)
{
	struct ss_cubic *c = &st->cubic;
	u32 min_rtt = st->rnd.min_rtt_us == SS_RTT_UNKNOWN ? 0 : st->rnd.min_rtt_us;
	u32 now = ack->now_ticks;

	c->acks += acked;
	if (c->last_cwnd == cwnd && (s32)(now - c->last_tick) <= (s32)(ack->hz / CUBIC_RECALC_DIV))
		return;
	if (!c->epoch || now != c->last_tick) {
		c->last_cwnd = cwnd;
		c->last_tick = now;
		if (!c->epoch)
			cubic_start_epoch(c, now, cwnd, acked);
		c->cnt = cubic_cnt_from_curve(c, ack, min_rtt, cwnd);
		if (!c->w_max && c->cnt > CUBIC_FIRST_MAX_CNT)
			c->cnt = CUBIC_FIRST_MAX_CNT;
	}
	c->cnt = ss_max(cubic_reno_bound(c, cwnd, c->cnt, ss_cubic_reno_scale(st->cubic_connections)), 2);
}

void ss_additive_increase(struct ss_win *w, u32 per, u32 acked)
{
	/* Credit gathered while @per was larger is spent first, one packet. */
	if (w->cwnd_cnt >= per) {
		w->cwnd_cnt = 0;
		w->cwnd++;
	}
	w->cwnd_cnt += acked;
	if (w->cwnd_cnt >= per) {
		u32 inc = w->cwnd_cnt / per;

		w->cwnd_cnt -= inc * per;
		w->cwnd += inc;
	}
}

static void cubic_avoid(struct sscore_state *st, const struct ss_ack *ack, u32 acked, struct ss_win *w)
{
	cubic_update(st, ack, w->cwnd, acked);
	ss_additive_increase(w, st->cubic.cnt, acked);
}

static u32 cubic_reduce(struct sscore_state *st, struct ss_win *w)
{
	struct ss_cubic *c = &st->cubic;
	u32 beta = ss_cubic_beta(st->cubic_connections);

	c->epoch = 0;
	/* Fast convergence: a flow reduced before reaching its last W_max
	 * yields bandwidth by remembering a lower plateau. */
	if (w->cwnd < c->w_max)
		c->w_max = (w->cwnd * (CUBIC_BETA_SCALE + beta)) / (2 * CUBIC_BETA_SCALE);
	else
		c->w_max = w->cwnd;
	return ss_max((w->cwnd * beta) / CUBIC_BETA_SCALE, 2);
}

/* RTO: Linux's CUBIC forgets its curve and its min RTT (the core then
 * restarts HyStart's round). */
static void cubic_rto(struct sscore_state *st)
{
	st->cubic = (struct ss_cubic){ 0 };
	st->rnd.min_rtt_us = SS_RTT_UNKNOWN;
}

/* Idle time is not congestion-avoidance time: the epoch moves with it. */
static void cubic_idle(struct sscore_state *st, u32 now_ticks, u32 idle_ticks)
{
	struct ss_cubic *c = &st->cubic;

	if (!c->epoch)
		return;
	c->epoch += idle_ticks;
	if (ss_after(c->epoch, now_ticks))
		c->epoch = now_ticks;
}

/* RTT samples within a second (hz ticks) of an epoch's start are not
 * taken: the ACKs right after a recovery are distorted. */
static bool cubic_rtt_quiet(const struct sscore_state *st, const struct ss_ack *ack)
{
	return st->cubic.epoch && (s32)(ack->now_ticks - st->cubic.epoch) < (s32)ack->hz;
}

const struct ss_growth_ops ss_cubic_growth = {
	.avoid = cubic_avoid,
	.reduce = cubic_reduce,
	.rto = cubic_rto,
	.idle = cubic_idle,
	.rtt_quiet = cubic_rtt_quiet,
	.acks_in_loss = true,
};
