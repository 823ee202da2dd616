// SPDX-License-Identifier: GPL-2.0
/*
 * ratestart.c: starts that take their window from a rate rather than from
 * doubling until a signal (see sscore.h for the model):
 *
 *   Astart      raises ssthresh on every ACK of the start-up to Westwood's
 *               eligible rate estimate (ERE) times minRTT;
 *   Hoe         sets ssthresh once, from the rate of the first three ACKs
 *               (least squares) times the first RTT;
 *   Blitzstart  sets cwnd from a hinted rate times the handshake's RTT and
 *               starts in congestion avoidance, the first window paced.
 *
 * Written from the papers' text (Wang et al., INFOCOM'04; Hoe, SIGCOMM'96
 * as the Astart paper describes it; the Blitzstart report); rates are bytes
 * per second, times microseconds.
 */
#include "ssvariant.h"

/* A rate estimate is at most this (4 GB/s, 34 Gbit/s): it fits u32. */
#define RATE_MAX 0xffffffffULL


/* @bytes over @us, in bytes per second (@us > 0). */
static u32 rate_of(u64 bytes, u32 us)
{
	u64 r = ss_div64(bytes * SS_USEC_PER_SEC, us);

	return r > RATE_MAX ? (u32)RATE_MAX : (u32)r;
}

/* Packets that @rate keeps in flight over @rtt_us; at least 2. */
static u32 window_of(u64 rate, u32 rtt_us, u32 mss)
{
	u64 w = ss_div64(rate * rtt_us, (u64)SS_USEC_PER_SEC * mss);

	return w < 2 ? 2 : (w > 0x7fffffffULL ? 0x7fffffffU : (u32)w);
}

/* ------------------------------------------------------------------------
 * Westwood's eligible rate estimate
 */

/*
 * T_k = RTT x (expected - RE) / expected, expected = cwnd / minRTT.  No RE
 * yet, or RE at the expected rate (no queue): 0, a packet-pair sample from
 * the next ACK.  RTT is the smoothed RTT (minRTT until there is one).
 */
u32 ss_ere_sample_interval(const struct ss_ere *e, u32 cwnd, u32 mss, u32 min_rtt_us, u32 srtt_us)
{
	u32 rtt = srtt_us ? srtt_us : min_rtt_us;
	u64 expected;

	if (!e->re || !min_rtt_us || min_rtt_us == SS_RTT_UNKNOWN)
		return 0;
	expected = ss_div64((u64)cwnd * mss * SS_USEC_PER_SEC, min_rtt_us);
	if (!expected || e->re >= expected)
		return 0;
	return (u32)ss_div64((u64)rtt * (expected - e->re), expected);
}

/*
 * First-order low-pass filter, cut-off 1/tau, discretised with Tustin's
 * (bilinear) method for samples @dt_us apart:
 *
 *   y_k = a y_(k-1) + (1 - a) (x_k + x_(k-1)) / 2,  a = (2 tau - dt) / (2 tau + dt)
 *
 * The filter starts at rest (y and x zero before the first sample), so the
 * estimate rises over about tau rather than jumping to the first sample.
 * A gap of 2 tau or more forgets the past (a would turn negative).
 */
u32 ss_ere_filter(u32 prev_ere, u32 prev_sample, u32 sample, u32 dt_us, u32 tau_us)
{
	u64 two_tau = 2ULL * tau_us;

	if (dt_us >= two_tau)
		return (u32)(((u64)prev_sample + sample) / 2);
	return (u32)ss_div64((two_tau - dt_us) * prev_ere + (u64)dt_us * ((u64)prev_sample + sample),
			     two_tau + dt_us);
}

/* RE: bytes acked over the last RTT, averaged with gain 1/4 (the paper
 * gives none; 1/4 follows slow start's doubling within two rounds). */
static void ere_achieved_rate(struct ss_ere *e, const struct ss_ack *ack, u32 bytes, u32 rtt_us)
{
	u32 el, sample;

	e->re_bytes = ss_sat_add(e->re_bytes, bytes);
	el = ss_elapsed(ack->now_us, e->re_start_us);
	if (!el || el < rtt_us)
		return;
	sample = rate_of(e->re_bytes, el);
	e->re = e->re ? (u32)(((u64)e->re * 3 + sample) / 4) : sample;
	e->re_start_us = ack->now_us;
	e->re_bytes = 0;
}

static void ere_update(struct sscore_state *st, const struct ss_params *p,
		       const struct ss_ack *ack, const struct ss_win *w)
{
	struct ss_ere *e = &st->ere;
	u32 min_rtt = st->rnd.min_rtt_us;
	u32 bytes = ss_sat32((u64)ack->acked * ack->mss);
	u32 el, x;

	if (min_rtt == SS_RTT_UNKNOWN)
		return;
	if (!e->started) {
		/* Both intervals open at the first ACK: the RTT before it
		 * carried no ACKs and says nothing about the rate. */
		e->started = 1;
		e->sample_start_us = ack->now_us;
		e->re_start_us = ack->now_us;
		return;
	}
	ere_achieved_rate(e, ack, bytes, ack->srtt_us ? ack->srtt_us : min_rtt);
	e->tk_us = ss_ere_sample_interval(e, w->cwnd, ack->mss, min_rtt, ack->srtt_us);
	e->sample_bytes = ss_sat_add(e->sample_bytes, bytes);
	el = ss_elapsed(ack->now_us, e->sample_start_us);
	/* ACKs in the same microsecond (a stretch of GRO'd ACKs) are one sample. */
	if (!el || el < e->tk_us)
		return;
	x = rate_of(e->sample_bytes, el);
	e->ere = ss_ere_filter(e->ere, e->last_sample, x, el,
			       p->astart_tau_us ? p->astart_tau_us : min_rtt);
	e->last_sample = x;
	e->sample_start_us = ack->now_us;
	e->sample_bytes = 0;
}

/*
 * Astart: in the start-up (from the connection's start or a timeout to the
 * first fast retransmit), ssthresh never stays below ERE x minRTT.  cwnd then
 * grows by one per ACK below ssthresh and by 1/cwnd at or above it (the
 * NewReno rules in ss_cong_avoid).
 */
static void astart_update(struct sscore_state *st, const struct ss_params *p,
			  const struct ss_ack *ack, struct ss_win *w)
{
	u32 target;

	ere_update(st, p, ack, w);
	if (st->rnd.found || !st->ere.ere)
		return;
	target = window_of(st->ere.ere, st->rnd.min_rtt_us, ack->mss);
	if (w->ssthresh < target) {
		w->ssthresh = target;
		ss_emit(st, SS_EV_ESTIMATE, st->ere.ere, st->rnd.min_rtt_us, target, 0);
	}
}

/* ------------------------------------------------------------------------
 * Hoe's initial ssthresh
 */

/*
 * The least-squares slope of acked bytes against time over three ACKs, in
 * bytes per second; 0 if it is not measurable (all at one instant, or not
 * rising).  With T_i = 3 t_i - sum(t) and S_i = 3 s_i - sum(s) the slope is
 * sum(T_i S_i) / sum(T_i^2) (the factors of 3 cancel), in exact integers.
 */
u64 ss_hoe_rate(const u32 t_us[3], const u32 una[3])
{
	s64 t[3], s[3], st = 0, ss = 0, num = 0;
	u64 unum, den = 0;

	for (int i = 0; i < 3; i++) {
		t[i] = (s32)(t_us[i] - t_us[0]);
		s[i] = (s32)(una[i] - una[0]);
		st += t[i];
		ss += s[i];
	}
	for (int i = 0; i < 3; i++) {
		s64 ti = 3 * t[i] - st, si = 3 * s[i] - ss;

		num += ti * si;
		den += (u64)(ti * ti);
	}
	if (num <= 0 || !den)
		return 0;
	unum = (u64)num;
	/* Keep num x 10^6 within u64 (only for ACKs seconds apart). */
	while (unum > ~0ULL / SS_USEC_PER_SEC) {
		unum >>= 1;
		den >>= 1;
	}
	return den ? ss_div64(unum * SS_USEC_PER_SEC, den) : 0;
}

/* Hoe gives up if three ACKs of new data have not come by round 3. */
#define HOE_LAST_ROUND 2

static void hoe_update(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_hoe *h = &st->hoe;
	u64 rate;

	if (h->done || st->rnd.found)
		return;
	if (!h->first_rtt_us && ack->rtt_us != SS_RTT_UNKNOWN)
		h->first_rtt_us = ack->rtt_us ? ack->rtt_us : 1;
	if (st->rnd.round > HOE_LAST_ROUND) {
		h->done = 1;
		return;
	}
	if (!ack->acked || !h->first_rtt_us)
		return;
	h->t_us[h->n] = ack->now_us;
	h->una[h->n] = ack->snd_una;
	if (++h->n < 3)
		return;
	rate = ss_hoe_rate(h->t_us, h->una);
	if (!rate) {
		/* Not measurable: slide the three-ACK window on by one. */
		h->t_us[0] = h->t_us[1], h->una[0] = h->una[1];
		h->t_us[1] = h->t_us[2], h->una[1] = h->una[2];
		h->n = 2;
		return;
	}
	w->ssthresh = window_of(rate, h->first_rtt_us, ack->mss);
	h->done = 1;
	ss_emit(st, SS_EV_ESTIMATE, rate > RATE_MAX ? (u32)RATE_MAX : (u32)rate, h->first_rtt_us,
		w->ssthresh, 0);
}

static void hoe_any_ack(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
			struct ss_win *w)
{
	hoe_update(st, ack, w);
}

/* ------------------------------------------------------------------------
 * First windows
 */

/* The NewReno family: the Astart paper's initial ssthresh (and window). */
static bool reno_first_window(struct sscore_state *st, const struct ss_params *p, struct ss_win *w)
{
	w->ssthresh = ss_max(p->reno_init_ssthresh, 2);
	if (p->reno_iw)
		w->cwnd = p->reno_iw;
	return true;
}

/* The standard start of the Blitzstart comparison: 32 packets. */
static bool std_first_window(struct sscore_state *st, const struct ss_params *p, struct ss_win *w)
{
	w->cwnd = ss_max(p->std_iw, 1);
	return true;
}

void ss_blitz_start(struct sscore_state *st, const struct ss_params *p, u64 hint, u32 rtt_us,
		    u32 mss, struct ss_win *w, struct ss_pacing_plan *plan)
{
	struct ss_blitz *b = &st->blitz;
	u32 pct = p->blitz_pace_pct ? ss_min(p->blitz_pace_pct, 100) : 100;
	u32 cwnd, duration;

	*plan = (struct ss_pacing_plan){ 0 };
	if (!hint || !rtt_us || rtt_us == SS_RTT_UNKNOWN || !mss)
		return;	/* the standard start ss_init_window chose stays */
	if (hint > RATE_MAX)
		hint = RATE_MAX;
	cwnd = window_of(hint, rtt_us, mss);
	duration = (u32)ss_max((u32)((u64)rtt_us * pct / 100), 1);
	b->hint = (u32)hint;
	b->rtt_us = rtt_us;
	b->first_cwnd = cwnd;
	b->pace_rate = rate_of((u64)cwnd * mss, duration);
	/* No slow start: congestion avoidance from the first window on. */
	w->cwnd = cwnd;
	w->ssthresh = cwnd;
	st->rnd.found = 1;
	st->rnd.exit_cause = SS_EXIT_BLITZ;
	*plan = (struct ss_pacing_plan){
		.start = true,
		.red_pkts = cwnd,
		.duration_us = duration,
		.rate = b->pace_rate,
		.limit = cwnd,
		.growth = 1,
	};
	ss_emit(st, SS_EV_START, cwnd, w->ssthresh, b->hint, plan);
}

/* Blitzstart's first rounds are not held by the peer's window (a hinted start only). */
static bool blitz_ignore_peer_window(const struct sscore_state *st, const struct ss_params *p)
{
	return st->blitz.hint && st->rnd.round <= p->blitz_lift_rwnd_rounds;
}

static u32 blitz_first_window_pace_rate(const struct sscore_state *st)
{
	return st->rnd.round == 1 ? st->blitz.pace_rate : 0;
}

/* The standard start's HyStart runs in the kernel's own rounds (6.1.192's);
 * its CUBIC and its exits are Google QUIC's unless the parameters ask for
 * Linux's (ratestart.h). */
static void std_init(struct sscore_state *st, const struct ss_params *p, unsigned int version,
		     u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	st->hs.rounds = SS_HS_ROUNDS_LINUX;
	st->hs.no_train = !p->std_ack_train;
	st->cubic_connections = (u8)ss_clamp(p->std_connections, 1, SS_CUBIC_MAX_CONNECTIONS);
}

/* ------------------------------------------------------------------------
 * The variants
 */

/* reno_fixed: NewReno, initial ssthresh 32 (the Astart paper's baseline). */
const struct ss_start_ops ss_reno_fixed_ops = {
	.growth = &ss_reno_growth,
	.first_window = reno_first_window,
};

/* reno_hoe: NewReno with Hoe's initial ssthresh. */
const struct ss_start_ops ss_reno_hoe_ops = {
	.growth = &ss_reno_growth,
	.first_window = reno_first_window,
	.any_ack = hoe_any_ack,
};

/* reno_astart: NewReno with Adaptive Start, ssthresh raised on every ACK. */
const struct ss_start_ops ss_reno_astart_ops = {
	.growth = &ss_reno_growth,
	.first_window = reno_first_window,
	.any_ack = astart_update,
};

/* cubic_std: HyStart from an initial window of 32, the socket paced. */
const struct ss_start_ops ss_std_start_ops = {
	.growth = &ss_cubic_growth,
	.init = std_init,
	.first_window = std_first_window,
	.slow_start_ack = ss_hystart_update,
	.paced_socket = true,
};

/* cubic_blitz: Blitzstart (ss_blitz_start); without a hint, the standard start. */
const struct ss_start_ops ss_blitz_ops = {
	.growth = &ss_cubic_growth,
	.init = std_init,
	.first_window = std_first_window,
	.slow_start_ack = ss_hystart_update,
	.ignore_peer_window = blitz_ignore_peer_window,
	.first_window_pace_rate = blitz_first_window_pace_rate,
	.counts_rounds_in_ca = true,
	.paced_socket = true,
	.takes_hint = true,
};
