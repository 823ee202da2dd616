// SPDX-License-Identifier: GPL-2.0
/*
 * sscore.c: CUBIC congestion avoidance and four slow-start exits
 * (traditional, HyStart, HyStart++, SUSS); NewReno's window rules for the
 * Astart paper's family; rounds, RTT samples and the entry points.  The
 * rate-based starts (Astart, Hoe, Blitzstart) are in ratestart.c.  See
 * sscore.h for the model.
 *
 * Per ACK the kernel calls, in order:
 *   ss_on_ack()      RTT sample, round bookkeeping, exit tests, SUSS plans;
 *   ss_cong_avoid()  cwnd growth (not called in Recovery/CWR).
 * On loss: ss_ssthresh(); on RTO additionally ss_on_rto().
 */
#include "sscore.h"

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

/* ------------------------------------------------------------------------
 * Rounds and RTT samples
 */

static bool rtt_valid(const struct ss_ack *ack)
{
	return ack->rtt_us != SS_RTT_UNKNOWN;
}

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
static void exit_slow_start_from(struct sscore_state *st, struct ss_win *w, enum ss_exit_cause cause,
				 u32 cwnd_then)
{
	st->rnd.found = 1;
	st->rnd.exit_cause = cause;
	w->ssthresh = w->cwnd;
	trace(st, SS_EV_EXIT, cause, cwnd_then, w->ssthresh, 0);
}

static void exit_slow_start(struct sscore_state *st, struct ss_win *w, enum ss_exit_cause cause)
{
	exit_slow_start_from(st, w, cause, w->cwnd);
}

/* ------------------------------------------------------------------------
 * HyStart
 *
 * Two signs that the pipe is full, checked every round:
 *  - ACK train: ACKs arriving back to back (within hs_ack_delta) for longer
 *    than half the min RTT mean the bottleneck is already busy for half an
 *    RTT per round; doubling again would overflow its queue.
 *  - delay: the smallest RTT among the round's first samples exceeds the
 *    connection's minimum by minRTT/8 (clamped to 4..16 ms): a queue builds.
 */

/* Extra slack for ACK trains when the sender paces: ACKs may be held for
 * up to four maximal bursts at the pacing rate, at most 1 ms. */
static u32 hystart_ack_delay(const struct ss_ack *ack)
{
	u64 us;

	if (!ack->pacing_rate)
		return 0;
	us = ss_div64((u64)ack->gso_max_bytes * 4 * SS_USEC_PER_SEC, ack->pacing_rate);
	return ss_min(ss_sat32(us), SS_USEC_PER_MSEC);
}

/*
 * HyStart's round is the core's, except under SUSS 2024: Linux 5.19 reset it
 * inside the code that only ran for cwnd >= hs_low_window, with an end
 * sequence of its own, so it started late (5.8 ms after SUSS's in round 4
 * of the authors' log, 10.9 ms in round 5).  Linux fixed that in 2025 (the
 * Debian 6.1.192 kernel has the fix); their 2024 code did not have it.
 */
static bool hystart_late_rounds(const struct sscore_state *st)
{
	return st->variant == SS_SUSS && st->suss_version == SUSS_VER_2024;
}

static u32 hystart_round_start_us(const struct sscore_state *st)
{
	return hystart_late_rounds(st) ? st->suss.code.hs_start_us : st->rnd.start_us;
}

/* A new HyStart round, in the late-round model. */
static void hystart_late_round_reset(struct sscore_state *st, const struct ss_ack *ack)
{
	st->suss.code.hs_end_seq = ack->snd_nxt;
	st->suss.code.hs_start_us = ack->now_us;
	st->rnd.last_ack_us = ack->now_us;
	st->rnd.round_min_rtt_us = SS_RTT_UNKNOWN;
	st->rnd.samples = 0;
}

/* Length of the ACK train so far, scaled by 2^scale (SUSS: whole train from its blue part). */
static bool hystart_train_too_long(struct sscore_state *st, const struct ss_params *p,
				   const struct ss_ack *ack, u32 scale)
{
	struct ss_round *r = &st->rnd;
	u64 thresh, train;

	if ((s32)(ack->now_us - r->last_ack_us) > (s32)p->hs_ack_delta_us)
		return false;	/* not part of the train */
	r->last_ack_us = ack->now_us;
	thresh = (u64)r->min_rtt_us + hystart_ack_delay(ack);
	if (!ack->paced)
		thresh >>= 1;	/* a paced train is legitimately spread up to RTT/2 */
	train = (u64)ss_elapsed(ack->now_us, hystart_round_start_us(st)) << scale;
	return train > thresh;
}

/* The round's minimum RTT is over all its samples so far; the test starts
 * with the (hs_min_samples + 1)th sample (as Linux's HyStart). */
static bool hystart_delay_increased(struct sscore_state *st, const struct ss_params *p,
				    const struct ss_ack *ack)
{
	struct ss_round *r = &st->rnd;
	u32 thresh;

	if (!rtt_valid(ack))
		return false;
	r->round_min_rtt_us = ss_min(r->round_min_rtt_us, ack->rtt_us ? ack->rtt_us : 1);
	if (r->samples < p->hs_min_samples) {
		r->samples++;
		return false;
	}
	thresh = ss_clamp(r->min_rtt_us >> 3, p->hs_delay_min_us, p->hs_delay_max_us);
	return r->round_min_rtt_us > r->min_rtt_us + thresh;
}

static void hystart_update(struct sscore_state *st, const struct ss_params *p,
			   const struct ss_ack *ack, struct ss_win *w)
{
	if (w->cwnd < p->hs_low_window)
		return;
	if (hystart_late_rounds(st) && ss_after(ack->snd_una, st->suss.code.hs_end_seq))
		hystart_late_round_reset(st, ack);
	if (hystart_train_too_long(st, p, ack, 0))
		exit_slow_start(st, w, SS_EXIT_ACK_TRAIN);
	else if (hystart_delay_increased(st, p, ack))
		exit_slow_start(st, w, SS_EXIT_DELAY);
}

/* ------------------------------------------------------------------------
 * HyStart++ (RFC 9406)
 *
 * Compares each round's min RTT with the previous round's.  A rise of
 * RttThresh moves to Conservative Slow Start (growth / 4); if the min RTT
 * falls back below the CSS baseline, slow start resumes; after CSS_ROUNDS
 * rounds of CSS, slow start ends.  Growth per ACK is limited to L packets
 * (8) unless the sender paces.
 */

static void hspp_round_end(struct sscore_state *st, const struct ss_params *p, struct ss_win *w)
{
	struct ss_hspp *h = &st->hspp;

	h->last_round_min_rtt_us = st->rnd.round_min_rtt_us;
	if (h->in_css && ++h->css_rounds >= p->hspp_css_rounds)
		exit_slow_start(st, w, SS_EXIT_CSS_DONE);
}

static void hspp_update(struct sscore_state *st, const struct ss_params *p,
			const struct ss_ack *ack)
{
	struct ss_round *r = &st->rnd;
	struct ss_hspp *h = &st->hspp;
	u32 thresh;

	if (!rtt_valid(ack))
		return;
	r->round_min_rtt_us = ss_min(r->round_min_rtt_us, ack->rtt_us ? ack->rtt_us : 1);
	if (r->samples < 0xff)
		r->samples++;
	if (r->samples < p->hspp_n_rtt_sample)
		return;
	if (!h->in_css) {
		if (h->last_round_min_rtt_us == SS_RTT_UNKNOWN ||
		    r->round_min_rtt_us == SS_RTT_UNKNOWN)
			return;
		thresh = ss_clamp(h->last_round_min_rtt_us / p->hspp_min_rtt_divisor,
				  p->hspp_min_rtt_thresh_us, p->hspp_max_rtt_thresh_us);
		if ((u64)r->round_min_rtt_us >= (u64)h->last_round_min_rtt_us + thresh) {
			h->in_css = 1;
			h->css_rounds = 0;
			h->css_baseline_us = r->round_min_rtt_us;
			trace(st, SS_EV_CSS, 1, r->round, h->css_baseline_us, 0);
		}
	} else if (r->round_min_rtt_us < h->css_baseline_us) {
		/* The RTT rise was a spurious: back to slow start. */
		h->in_css = 0;
		h->css_baseline_us = SS_RTT_UNKNOWN;
		trace(st, SS_EV_CSS, 0, r->round, r->round_min_rtt_us, 0);
	}
}

static u32 hspp_grow(struct sscore_state *st, const struct ss_params *p,
		     const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_hspp *h = &st->hspp;
	u32 limit = ack->paced ? ack->acked : ss_min(ack->acked, p->hspp_l_unpaced);
	u32 room = w->ssthresh - w->cwnd;
	u32 inc, credit;

	if (h->in_css) {
		credit = h->css_credit + limit;
		inc = credit / p->hspp_css_growth_divisor;
		h->css_credit = credit % p->hspp_css_growth_divisor;
	} else {
		inc = limit;
	}
	if (inc >= room) {
		/* Reached ssthresh: the rest of the ACK feeds congestion avoidance. */
		w->cwnd = w->ssthresh;
		return ack->acked > room ? ack->acked - room : 0;
	}
	w->cwnd += inc;
	return 0;
}

/* ------------------------------------------------------------------------
 * SUSS
 *
 * Each round's data train has an ACK-clocked "blue" part, which doubles
 * every round (iw << (round - 1) packets) as in plain slow start, and, in
 * accelerated rounds, a paced "red" part.  When the ACKs of the previous
 * round's blue part are all in, the time they took (dtB) tells how long the
 * whole train takes to cross the bottleneck.  If that, and the RTT trend,
 * say that doubling could continue into the next round, this round's cwnd
 * is quadrupled instead: the extra packets are paced over the part of the
 * RTT that ACK clocking leaves empty, starting after a guard interval.
 *
 *   round r:  |-- blue (ACK-clocked) --|-guard-|== red (paced) ==|-guard-|
 *             ^ round start    blue tail ^                   next round ^
 *
 * State machine (suss.state):
 *
 *   CLOCKING --G = 4 at the blue tail--> PACING --next round--> CLOCKING
 *      |  \--G = 2 in round 2--> OFF (plain HyStart for good)
 *      |--cwnd > cap (HyStart's train test set the cap)--> EXIT_CAP
 *      |--HyStart's delay test--> EXIT_DELAY
 *      '--loss (Recovery/CWR) during either--> REDUCED
 *
 * The versions (sscore.h) share this machine and differ in the arithmetic
 * at the blue tail, in HyStart's rounds, and in what happens after the cap.
 */

static bool suss_code(const struct sscore_state *st)
{
	return st->suss_version != SUSS_VER_PAPER;
}

static void suss_new_round(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;

	if (suss_code(st) && s->cap_set)
		return;	/* theirs: no SUSS decisions after the cap */
	if (s->state == SUSS_PACING && suss_code(st)) {
		/* Theirs grows cwnd as red packets leave, so at this point it
		 * holds what was sent (all of the limit, unless pacing was cut
		 * short): we set the limit at once, and take back here what
		 * was not sent, so that it never leaves as a burst. */
		w->cwnd = ss_min(w->cwnd, ss_max(ss_sat_add(ack->in_flight, ack->acked), 2));
	}
	if (s->state == SUSS_PACING || s->state == SUSS_CLOCKING)
		s->state = SUSS_CLOCKING;
	s->blue_open = s->state == SUSS_CLOCKING;
	s->blue_cnt = 0;
	if (!suss_code(st))
		s->paper.cwnd_round_start = w->cwnd;
}

/* Condition 2 (Eq. 8 with r = rounds since minRTT last fell):
 * (r + 1) moRTT <= (r + 1) minRTT + r minRTT / 8. */
static bool suss_rtt_flat(const struct ss_round *r)
{
	u64 rounds = (u16)(r->round - r->min_rtt_round);

	if (r->round_min_rtt_us == SS_RTT_UNKNOWN)
		return false;
	return (rounds + 1) * r->round_min_rtt_us <=
	       (rounds + 1) * r->min_rtt_us + rounds * (r->min_rtt_us / 8);
}

/* Appendix A, line 3 of Algorithm 1, for looking k rounds ahead. */
static bool suss_ahead_ok(const struct ss_round *r, u32 train_us, u32 k)
{
	u64 rounds = (u16)(r->round - r->min_rtt_round);
	u64 mo = r->round_min_rtt_us, min = r->min_rtt_us;

	if (k >= 31 || (u64)train_us > (min >> (k + 1)))
		return false;
	if (!rounds)
		return true;
	if (mo == SS_RTT_UNKNOWN)
		return false;
	/* moRTT + k (moRTT - minRTT) / r <= 1.125 minRTT, multiplied by 8 r */
	return 8 * rounds * mo + 8 * k * (mo > min ? mo - min : 0) <= 9 * rounds * min;
}

/* The growth factor for this round: 2, or 4 (2^(k+1) with Appendix A in
 * ours; theirs never reads k_max).  @prev_us: the previous round's train. */
static u32 suss_growth(struct sscore_state *st, const struct ss_params *p,
		       u32 dtb_us, u32 train_us, u32 prev_us, u32 *why)
{
	struct ss_suss *s = &st->suss;
	struct ss_round *r = &st->rnd;
	u32 k = 1;

	*why = 0;
	if (!s->growth_allowed) {
		*why = SUSS_NO_DISALLOWED;
		return 2;
	}
	if (r->round >= p->suss_max + 2)
		*why |= SUSS_NO_ROUNDS;
	if (r->round == 2) {
		/* Eq. 6: the next round's train, twice this one, fits in
		 * minRTT/2.  Theirs compares with minRTT/4 rounded down. */
		if (r->min_rtt_us <= p->suss_min_rtt_us)
			*why |= SUSS_NO_SHORT_PATH;
		if (suss_code(st) ? dtb_us >= r->min_rtt_us / 4 : (u64)dtb_us * 4 >= r->min_rtt_us)
			*why |= SUSS_NO_TRAIN;
	} else {
		/* Project the next train from this round's and the previous
		 * round's: train^2 / previous must fit in minRTT. */
		if (!prev_us)
			*why |= SUSS_NO_SAMPLE;
		else if (ss_div64((u64)train_us * train_us, prev_us) > r->min_rtt_us)
			*why |= SUSS_NO_TRAIN;
		if (!suss_rtt_flat(r))
			*why |= SUSS_NO_DELAY;
	}
	if (*why) {
		s->growth_allowed = 0;
		if (r->round == 2)
			s->state = SUSS_OFF;	/* plain HyStart from here on */
		return 2;
	}
	while (!suss_code(st) && k < p->suss_k_max && suss_ahead_ok(r, train_us, k + 1))
		k++;
	return 2U << k;
}

/* Bytes per second that send @pkts of @mss in @duration_us. */
static u64 pacing_rate(u64 pkts, u32 mss, u64 duration_us)
{
	u64 bytes = pkts * mss;		/* < 2^32 * 2^16 */

	if (bytes <= ~0ULL / SS_USEC_PER_SEC)
		return ss_div64(bytes * SS_USEC_PER_SEC, duration_us);
	return ss_div64(bytes, duration_us) * SS_USEC_PER_SEC;
}

/* Ours: plan the red part of an accelerated round (Eq. 10-12), given the
 * @blue packets the ACK clock has sent in it. */
static bool suss_plan_pacing_paper(struct sscore_state *st, const struct ss_ack *ack,
				   u32 growth, u32 dtb_us, u64 blue, struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	u64 min_rtt = st->rnd.min_rtt_us;
	u64 limit = (u64)s->paper.cwnd_round_start * growth;
	u64 blue_share_us, red, duration;
	s64 guard;

	if (limit <= blue || limit > 0xffffffffULL)
		return false;
	red = limit - blue;
	/* The red share of the RTT (Eq. 11: the rate is then cwnd_i / minRTT). */
	duration = ss_div64(min_rtt * red, limit);
	blue_share_us = ss_div64(min_rtt * blue, limit);
	/* Eq. 12: split the idle time around the red part into two guards. */
	guard = ((s64)blue_share_us - (s64)dtb_us) / 2;
	if (guard <= 0 || !duration)
		return false;
	plan->start = true;
	plan->red_pkts = (u32)red;
	plan->duration_us = (u32)duration;
	plan->rate = pacing_rate(red, ack->mss, duration);
	plan->guard_us = (u32)guard;
	plan->limit = (u32)limit;
	plan->growth = growth;
	return true;
}

/*
 * Theirs: the plan of round r, by their arithmetic (suss-code-versions.md,
 * item 7), with blue = iw 2^(r-1) (the next round's blue part):
 *   red      = blue x 2^(r-1) - blue
 *   duration = minRTT - minRTT / 2^(r-1)        (the red share of minRTT)
 *   rate     = red bytes / duration
 *   guard    = (minRTT / 2^(r-1) - dtB) / 2      (no jump unless > 0)
 *   limit    = (cwnd + acked) + red - the red ACKs still to come (those
 *              of the previous round's red packets, which follow its blue)
 * e.g. their log's round 2: 20 red over 24993 us at 1158724 B/s, guard
 * 11288 us, limit 40; round 3: 120 red, 37490 us, limit 160.
 */
static bool suss_plan_pacing_code(struct sscore_state *st, const struct ss_ack *ack,
				  const struct ss_win *w, u32 growth, u32 dtb_us,
				  struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	u32 r = st->rnd.round;
	u64 min_rtt = st->rnd.min_rtt_us;
	u64 blue, red, duration, share, limit;
	s64 guard;

	if (r < 2 || r > 24)
		return false;
	blue = (u64)s->iw << (r - 1);
	red = (blue << (r - 1)) - blue;
	share = min_rtt >> (r - 1);
	duration = min_rtt - share;
	guard = ((s64)share - (s64)dtb_us) / 2;
	limit = (u64)w->cwnd + ack->acked + red;
	limit = limit > s->prev_red ? limit - s->prev_red : 0;
	if (guard <= 0 || !duration || limit > 0xffffffffULL || limit <= w->cwnd)
		return false;
	plan->start = true;
	plan->red_pkts = (u32)red;
	plan->duration_us = (u32)duration;
	plan->rate = pacing_rate(red, ack->mss, duration);
	plan->guard_us = (u32)guard;
	plan->limit = (u32)limit;
	plan->growth = growth;
	return true;
}

/* Start the red part of a round: cwnd to the limit (the glue paces it). */
static void suss_jump(struct sscore_state *st, u32 growth, struct ss_win *w,
		      const struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	u32 shift;

	/* G = 2^(k+1) multiplies the ratio of a train to its blue part by 2^k. */
	for (shift = 1; (2U << shift) < growth; shift++)
		;
	s->jumps += shift;
	s->limit = plan->limit;
	s->state = SUSS_PACING;
	w->cwnd = ss_max(w->cwnd, plan->limit);
	trace(st, SS_EV_PACING, plan->red_pkts, plan->duration_us, plan->guard_us, plan);
}

/* Ours: the ACK that completes the blue part of the round. */
static void suss_blue_done_paper(struct sscore_state *st, const struct ss_params *p,
				 const struct ss_ack *ack, struct ss_win *w,
				 struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	struct ss_round *r = &st->rnd;
	u32 expected = ss_max(s->paper.blue_expected, 1);
	u32 elapsed = ss_elapsed(ack->now_us, r->start_us);
	/* What the ACK clock has sent in this round so far (not counting what
	 * this ACK releases), and what it sends once this ACK is processed:
	 * two packets for each blue packet acked. */
	u32 sent_blue = ss_before(ack->snd_nxt, r->end_seq) ? 0 :
			(ack->snd_nxt - r->end_seq) / ss_max(ack->mss, 1);
	u32 clock_blue = ss_sat32(2ULL * expected);
	u32 dtb = 0, train = 0, growth, why = 0, prev = s->prev_train_us;
	bool measurable;

	/* The next round's blue part: what the ACK clock sends in this one. */
	s->blue_tail = r->end_seq + clock_blue * ack->mss;
	s->paper.blue_expected = clock_blue;
	if (s->state == SUSS_OFF || r->found)
		return;

	s->blue_cnt = ss_min(s->blue_cnt, expected);
	measurable = s->blue_cnt && elapsed;
	if (measurable) {
		/* Scale the time of the ACKs seen to the whole blue train. */
		dtb = ss_sat32(ss_div64((u64)elapsed * expected, s->blue_cnt));
		train = ss_sat32((u64)dtb << ss_min(s->jumps, 16));	/* Eq. 9 */
	}
	trace(st, SS_EV_BLUE_TRAIN, r->round, dtb, train, 0);
	if (!measurable) {
		/* One (stretch) ACK for the whole blue part, or ACKs all in the
		 * same microsecond: no spacing to measure, no acceleration. */
		growth = 2;
		why = SUSS_NO_SAMPLE;
	} else {
		growth = suss_growth(st, p, dtb, train, prev, &why);
	}
	s->prev_train_us = train;
	if (growth > 2 && !suss_plan_pacing_paper(st, ack, growth, dtb, sent_blue, plan)) {
		growth = 2;
		why |= SUSS_NO_GUARD;
	}
	trace(st, SS_EV_GROWTH, r->round, growth, why, 0);
	if (growth <= 2)
		return;

	/* Pacing starts with this ACK, so the packets it releases are paced
	 * (red) too: the next round's blue part is what was sent before it.
	 * (The authors' code sends them ACK-clocked first; a module has no
	 * hook between this ACK's transmissions and the guard.) */
	s->blue_tail = ack->snd_nxt;
	s->paper.blue_expected = sent_blue;
	suss_jump(st, growth, w, plan);
}

/*
 * Theirs: the ACK that completes the blue part of round r (its N = iw 2^(r-2)
 * packets).  dtB = (time from the round's first ACK to this one) x N / (blue
 * packets acked before this ACK): in their log's round 2, 2176 us x 10 / 9 =
 * 2417 us.  The next round's blue part is its first iw 2^(r-1) packets, or,
 * when a pacing period starts here and this ACK's own packets cannot leave
 * ACK-clocked first (a module), the packets the ACK clock sent before it.
 */
static void suss_blue_done_code(struct sscore_state *st, const struct ss_params *p,
				const struct ss_ack *ack, struct ss_win *w,
				struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	struct ss_round *r = &st->rnd;
	u32 shift = r->round >= 2 ? ss_min(r->round - 2, 24) : 0;
	u64 n = (u64)s->iw << shift;
	u32 before = s->blue_cnt;	/* the tail ACK is not counted (theirs) */
	u32 elapsed = ss_elapsed(ack->now_us, r->start_us);
	u32 dtb, train, growth, why = 0, prev = s->prev_train_us;

	s->blue_tail = r->end_seq + (u32)((u64)s->iw << (shift + 1)) * ack->mss;
	if (s->state == SUSS_OFF || r->found)
		return;
	if (!before) {
		/* Their divisor is 0 (a kernel divide error): one ACK acked
		 * the whole blue part.  Ours: the smallest count, 1. */
		before = 1;
		trace(st, SS_EV_DIV0, SUSS_DIV0_BLUE_COUNT, r->round, before, 0);
	}
	dtb = ss_sat32(ss_div64((u64)elapsed * n, before));
	train = ss_sat32((u64)dtb << ss_min(s->jumps, 16));
	trace(st, SS_EV_BLUE_TRAIN, r->round, dtb, train, 0);
	if (r->round >= 3 && !prev) {
		/* The previous train measured 0 us (its ACKs in one
		 * microsecond): theirs divides by it.  Ours: the clock's
		 * resolution, 1 us. */
		prev = 1;
		trace(st, SS_EV_DIV0, SUSS_DIV0_PREV_TRAIN, r->round, prev, 0);
	}
	growth = suss_growth(st, p, dtb, train, prev, &why);
	s->prev_train_us = train;
	if (growth > 2 && !suss_plan_pacing_code(st, ack, w, growth, dtb, plan)) {
		growth = 2;
		why |= SUSS_NO_GUARD;
	}
	trace(st, SS_EV_GROWTH, r->round, growth, why, 0);
	if (growth <= 2) {
		s->prev_red = 0;
		return;
	}
	s->prev_red = (u16)ss_min(plan->red_pkts, 0xffff);
	if (!ack->tail_clocked) {
		/* This ACK's own packets leave red, after the guard: the next
		 * round's blue part is what the ACK clock sent before it (dtB's
		 * N / k then scales those to the iw 2^(r-1) theirs measures). */
		s->blue_tail = ack->snd_nxt;
	}
	suss_jump(st, growth, w, plan);
}

/* Leave slow start, SUSS style: after several jumps cwnd may exceed what
 * was really sent, so it is cut to what is in flight. */
static void suss_exit(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w,
		      enum ss_suss_state why, enum ss_exit_cause cause)
{
	u32 cwnd_then = w->cwnd;

	st->suss.state = why;
	if (st->suss.jumps > 1)
		w->cwnd = ss_max(ss_min(w->cwnd, ack->in_flight), 2);
	exit_slow_start_from(st, w, cause, cwnd_then);
}

/* HyStart's train test has fired on a blue ACK: exit if SUSS never jumped,
 * else set the cap: cwnd may still grow by the red part to come. */
static void suss_train_fired(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;
	u64 red;

	if (!s->jumps) {
		exit_slow_start(st, w, SS_EXIT_ACK_TRAIN);
		return;
	}
	if (s->cap_set)
		return;
	red = (u64)s->blue_cnt * ((1ULL << ss_min(s->jumps, 16)) - 1);
	s->cap = ss_sat32((u64)w->cwnd + red);
	s->cap_set = 1;
	trace(st, SS_EV_CAP, s->cap, w->cwnd, s->blue_cnt, 0);
}

/* Ours: count this ACK as blue first, then HyStart on blue ACKs. */
static void suss_update_paper(struct sscore_state *st, const struct ss_params *p,
			      const struct ss_ack *ack, struct ss_win *w,
			      struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	bool blue = s->blue_open;

	if (blue)
		s->blue_cnt = ss_sat32((u64)s->blue_cnt + ack->acked);
	if (w->cwnd >= p->hs_low_window) {
		/* HyStart on blue ACKs only, the train scaled to its full length. */
		if (blue && hystart_train_too_long(st, p, ack, ss_min(s->jumps, 16)))
			suss_train_fired(st, ack, w);
		else if (hystart_delay_increased(st, p, ack))
			suss_exit(st, ack, w, SUSS_EXIT_DELAY, SS_EXIT_DELAY);
	}
	if (blue && !ss_before(ack->snd_una, s->blue_tail)) {
		s->blue_open = 0;
		if (!st->rnd.found)
			suss_blue_done_paper(st, p, ack, w, plan);
	}
}

/* Theirs: HyStart first (in 2024 on its own, late round), on blue ACKs
 * before they are counted; nothing of SUSS's after the cap. */
static void suss_update_code(struct sscore_state *st, const struct ss_params *p,
			     const struct ss_ack *ack, struct ss_win *w,
			     struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	bool blue = s->blue_open && !s->cap_set;

	/* Theirs tests the cap when an ACK comes in, against the cwnd the
	 * previous ACKs grew (their log: cwnd 609 > cap 608 at the ACK after
	 * the one that made it 609, then cut to the 599 in flight). */
	if (s->cap_set && w->cwnd > s->cap) {
		suss_exit(st, ack, w, SUSS_EXIT_CAP, SS_EXIT_SUSS_CAP);
		return;
	}
	if (w->cwnd >= p->hs_low_window) {
		if (hystart_late_rounds(st) && ss_after(ack->snd_una, s->code.hs_end_seq))
			hystart_late_round_reset(st, ack);
		if (blue && hystart_train_too_long(st, p, ack, ss_min(s->jumps, 16)))
			suss_train_fired(st, ack, w);
		else if (hystart_delay_increased(st, p, ack))
			suss_exit(st, ack, w, SUSS_EXIT_DELAY, SS_EXIT_DELAY);
	}
	if (!blue || s->cap_set || st->rnd.found)
		return;	/* a cap set by this very ACK ends SUSS's decisions too */
	if (!ss_before(ack->snd_una, s->blue_tail)) {
		s->blue_open = 0;
		suss_blue_done_code(st, p, ack, w, plan);
	}
	/* Counted after the tail test: dtB's divisor leaves the tail ACK out. */
	s->blue_cnt = ss_sat32((u64)s->blue_cnt + ack->acked);
}

static void suss_update(struct sscore_state *st, const struct ss_params *p,
			const struct ss_ack *ack, struct ss_win *w,
			struct ss_pacing_plan *plan)
{
	if (st->suss.state == SUSS_OFF || st->suss.state == SUSS_REDUCED) {
		/* No more acceleration: plain HyStart (in 2024, with its late rounds). */
		hystart_update(st, p, ack, w);
		return;
	}
	if (suss_code(st))
		suss_update_code(st, p, ack, w, plan);
	else
		suss_update_paper(st, p, ack, w, plan);
}

u32 ss_peer_window(const struct sscore_state *st, u32 snd_wnd, u32 mss)
{
	const struct ss_suss *s = &st->suss;
	u64 want = snd_wnd;

	if (st->variant != SS_SUSS || !suss_code(st))
		return snd_wnd;
	if (st->suss_version == SUSS_VER_2024) {
		if (s->jumps)
			want = ss_min(ss_sat32((u64)snd_wnd << ss_min(s->jumps, 16)), SUSS_2024_RWND_MAX);
	} else {
		u32 shift = ss_min(st->rnd.round + s->jumps - 1, 24);

		want = (u64)10 * mss;
		if (!st->rnd.found && s->growth_allowed && s->state != SUSS_OFF)
			want = ss_max(want, (u64)10 * mss << shift);
	}
	return want > snd_wnd ? ss_sat32(want) : snd_wnd;
}

/* ------------------------------------------------------------------------
 * Entry points
 */

void ss_init(struct sscore_state *st, enum ss_variant v, unsigned int suss_version, u32 now_us,
	     u32 snd_nxt, u32 cwnd, u32 mss)
{
	*st = (struct sscore_state){ 0 };
	st->variant = v;
	st->rnd.end_seq = snd_nxt;
	st->rnd.start_us = now_us;
	st->rnd.last_ack_us = now_us;
	st->rnd.round = 1;
	st->rnd.min_rtt_us = SS_RTT_UNKNOWN;
	st->rnd.round_min_rtt_us = SS_RTT_UNKNOWN;
	if (v == SS_HYSTARTPP) {
		st->hspp.last_round_min_rtt_us = SS_RTT_UNKNOWN;
		st->hspp.css_baseline_us = SS_RTT_UNKNOWN;
	} else if (v == SS_SUSS) {
		st->suss_version = suss_version < SUSS_NR_VERSIONS ? suss_version : SUSS_VER_2024;
		st->suss.iw = (u16)ss_clamp(cwnd, 1, 0xffff);
		st->suss.state = SUSS_CLOCKING;
		st->suss.growth_allowed = 1;
		/* Round 1's blue part is the whole initial window. */
		st->suss.blue_tail = snd_nxt + st->suss.iw * mss;
		if (suss_code(st)) {
			st->suss.code.hs_end_seq = snd_nxt;
			st->suss.code.hs_start_us = now_us;
		} else {
			st->suss.paper.cwnd_round_start = cwnd;
			st->suss.paper.blue_expected = st->suss.iw;
		}
	}
}

static void start_round(struct sscore_state *st, const struct ss_params *p,
			const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_round *r = &st->rnd;

	if (st->variant == SS_HYSTARTPP && !r->found)
		hspp_round_end(st, p, w);
	if (r->round < 0xffff)
		r->round++;
	r->end_seq = ack->snd_nxt;
	r->start_us = ack->now_us;
	if (!hystart_late_rounds(st)) {
		/* HyStart's round is this one. */
		r->last_ack_us = ack->now_us;
		r->round_min_rtt_us = SS_RTT_UNKNOWN;
		r->samples = 0;
	}
	if (st->variant == SS_SUSS)
		suss_new_round(st, ack, w);
	trace(st, SS_EV_NEW_ROUND, r->round, r->end_seq, w->cwnd, 0);
}

void ss_on_ack(struct sscore_state *st, const struct ss_params *p,
	       const struct ss_ack *ack, struct ss_win *w,
	       struct ss_pacing_plan *plan)
{
	struct ss_round *r = &st->rnd;
	bool in_slow_start;

	plan->start = false;
	in_slow_start = !r->found && w->cwnd < w->ssthresh;

	/* The round check runs before any low-window test (the 2025 fix to
	 * Linux's HyStart: otherwise a round that starts below the low window
	 * is never closed, and the first detection uses a stale start).  It
	 * also runs before the RTT sample, which belongs to the new round. */
	if ((in_slow_start || ss_counts_rounds_in_ca(st)) && ss_after(ack->snd_una, r->end_seq))
		start_round(st, p, ack, w);
	if (rtt_valid(ack) && !rtt_quiet(st, ack))
		take_rtt_sample(st, ack);
	/* Astart also works at or above ssthresh (its mini linear phases). */
	if (st->variant == SS_RENO_ASTART || st->variant == SS_RENO_HOE)
		ss_ratestart_on_ack(st, p, ack, w);
	if (r->found || w->cwnd >= w->ssthresh)
		return;

	switch (st->variant) {
	case SS_HYSTART:
	case SS_STD_START:	/* the standard start is HyStart's */
	case SS_BLITZ:		/* without a hint Blitzstart keeps the standard start */
		hystart_update(st, p, ack, w);
		break;
	case SS_HYSTARTPP:
		hspp_update(st, p, ack);
		break;
	case SS_SUSS:
		suss_update(st, p, ack, w, plan);
		break;
	default:
		break;
	}
}

static u32 slow_start(struct ss_win *w, u32 acked)
{
	u32 room = w->ssthresh > w->cwnd ? w->ssthresh - w->cwnd : 0;
	u32 inc = ss_min(acked, room);

	w->cwnd += inc;
	return acked - inc;
}

void ss_cong_avoid(struct sscore_state *st, const struct ss_params *p,
		   const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;
	u32 left = ack->acked;

	if (w->cwnd < w->ssthresh) {
		if (st->variant == SS_SUSS && s->state == SUSS_PACING && !s->cap_set)
			return;	/* red ACKs release one packet each: no growth */
		if (st->variant == SS_HYSTARTPP && !st->rnd.found)
			left = hspp_grow(st, p, ack, w);
		else
			left = slow_start(w, ack->acked);
		/* Ours tests the cap as soon as an ACK grows cwnd past it. */
		if (st->variant == SS_SUSS && st->suss_version == SUSS_VER_PAPER && s->cap_set &&
		    !st->rnd.found && w->cwnd > s->cap)
			suss_exit(st, ack, w, SUSS_EXIT_CAP, SS_EXIT_SUSS_CAP);
		if (!left)
			return;
	}
	if (ss_is_reno(st->variant))
		reno_avoid(&st->cubic, left, w);
	else
		cubic_avoid(st, ack->now_ms, left, w);
}

u32 ss_ssthresh(struct sscore_state *st, u32 in_flight, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;
	u32 before = w->cwnd;

	if (st->variant == SS_SUSS && !st->rnd.found &&
	    (s->state == SUSS_CLOCKING || s->state == SUSS_PACING)) {
		/* A jump may have raised cwnd above what was sent: reduce from
		 * what was really in flight. */
		w->cwnd = ss_max(ss_min(w->cwnd, in_flight), 2);
		s->state = SUSS_REDUCED;
	}
	/* Slow start now ends because cwnd >= ssthresh, not because an exit
	 * test fired: if the kernel undoes a spurious reduction (restoring an
	 * infinite ssthresh), slow start resumes with its exit tests armed. */
	if (ss_is_reno(st->variant)) {
		/* The start-up ends at the first loss (Astart: "switch to
		 * congestion avoidance"); only a timeout re-arms it. */
		st->rnd.found = 1;
		st->rnd.exit_cause = SS_EXIT_LOSS;
		st->cubic.ack_credit = 0;
		w->ssthresh = reno_reduce(w->cwnd);
	} else {
		w->ssthresh = cubic_reduce(&st->cubic, w->cwnd);
	}
	trace(st, SS_EV_LOSS, before, in_flight, w->ssthresh, 0);
	return w->ssthresh;
}

/* SUSS is not worth re-arming for a tiny window after a timeout. */
#define SUSS_RTO_MIN_CWND 40

void ss_on_rto(struct sscore_state *st, u32 cwnd_before)
{
	st->cubic.epoch_ms = 0;
	if (st->variant == SS_SUSS && cwnd_before < SUSS_RTO_MIN_CWND)
		st->suss.state = SUSS_OFF;
	if (st->variant == SS_HYSTARTPP) {
		/* RFC 9406 4.3: plain slow start after an RTO, for good (no
		 * HyStart++ with the state of before the timeout). */
		st->rnd.found = 1;
		st->rnd.exit_cause = SS_EXIT_LOSS;
		return;
	}
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
