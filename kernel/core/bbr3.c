// SPDX-License-Identifier: GPL-2.0
/*
 * bbr3: BBRv3 from draft-ietf-ccwg-bbr-06 (bbr3.h teaches the model and
 * draws the state machine).  Each function is one step of the draft, named
 * after it; where the draft leaves a choice to the implementation, the
 * comment says what we chose.
 */
#include "bbr3.h"

static u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

/* @value times @gain thousandths, saturating at the infinite value. */
static u64 gain_bw(u64 value, u32 gain)
{
	if (value == BBR3_INF_BW)
		return value;
	return ss_div64(value * gain, BBR3_UNIT);
}

static u32 gain_pkts(u32 value, u32 gain)
{
	if (value == BBR3_INF_PKTS)
		return value;
	return ss_sat32(ss_div64((u64)value * gain, BBR3_UNIT));
}

/* Now() > @stamp + @interval, by signed difference (wrap-safe). */
static bool is_past(u32 now, u32 stamp, u32 interval)
{
	return (s32)(now - stamp) > (s32)interval;
}

/* RS.delivery_rate: packets over the sample's interval, in bandwidth units. */
u64 bbr3_delivery_rate(u32 delivered, u32 interval_us)
{
	if (!interval_us)
		return 0;
	return ss_div64((u64)delivered << BBR3_BW_SHIFT, interval_us);
}

/* C.pacing_rate in bytes per second, for the stack's pacer. */
u64 bbr3_pacing_rate_bytes_per_sec(const struct bbr3 *b)
{
	return (b->pacing_rate * b->mss * SS_USEC_PER_SEC) >> BBR3_BW_SHIFT;
}

/* xorshift32: PickProbeWait's draws, from the seed the caller gave. */
static u32 next_random(struct bbr3 *b)
{
	u32 x = b->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	b->rng = x;
	return x;
}

/* ---- the model: BDP, inflight targets -------------------------------------- */

/* @gain x @bw x min_rtt in packets; the gain before the scale is dropped. */
static u32 bdp_multiple_of(const struct bbr3 *b, u64 bw, u32 gain)
{
	u64 bdp_scaled;

	if (b->min_rtt_us == BBR3_INF_US)
		return b->initial_cwnd;
	bdp_scaled = bw * b->min_rtt_us;
	return ss_sat32(ss_div64(bdp_scaled * gain, BBR3_UNIT) >> BBR3_BW_SHIFT);
}

/* BDPMultiple: gain * bw * min_rtt, or the initial window before an RTT. */
u32 bbr3_bdp_multiple(const struct bbr3 *b, u32 gain)
{
	return bdp_multiple_of(b, b->bw, gain);
}

/* QuantizationBudget: the offload budget, MinPipeCwnd, 2 more in UP. */
static u32 quantization_budget(const struct bbr3 *b, u32 inflight_cap)
{
	inflight_cap = ss_max(inflight_cap,
			      BBR3_OFFLOAD_QUANTA * b->send_quantum);
	inflight_cap = ss_max(inflight_cap, BBR3_MIN_PIPE_CWND);
	if (b->state == BBR3_PROBE_BW_UP)
		inflight_cap = ss_sat_add(inflight_cap, 2);
	return inflight_cap;
}

/* Inflight(gain) */
u32 bbr3_inflight(const struct bbr3 *b, u32 gain)
{
	return quantization_budget(b, bbr3_bdp_multiple(b, gain));
}

/* InflightWithHeadroom: inflight_longterm less 15 % (at least a packet). */
u32 bbr3_inflight_with_headroom(const struct bbr3 *b)
{
	u32 headroom;

	if (b->inflight_longterm == BBR3_INF_PKTS)
		return BBR3_INF_PKTS;
	headroom = ss_max(1, gain_pkts(b->inflight_longterm, BBR3_HEADROOM));
	return ss_max(b->inflight_longterm > headroom ?
		      b->inflight_longterm - headroom : 0,
		      BBR3_MIN_PIPE_CWND);
}

/* ProbeRTTCwnd: half a BDP, at least MinPipeCwnd. */
u32 bbr3_probe_rtt_cwnd(const struct bbr3 *b)
{
	return ss_max(bbr3_bdp_multiple(b, BBR3_PROBE_RTT_CWND_GAIN),
		      BBR3_MIN_PIPE_CWND);
}

/* TargetInflight: the BDP, unless congestion cut cwnd below it. */
static u32 target_inflight(const struct bbr3 *b)
{
	return ss_min(bbr3_bdp_multiple(b, BBR3_UNIT), b->cwnd);
}

/* ---- states --------------------------------------------------------------- */

static void set_gains(struct bbr3 *b, enum bbr3_state state, u32 pacing,
		      u32 cwnd)
{
	b->state = state;
	b->pacing_gain = pacing;
	b->cwnd_gain = cwnd;
}

static void start_round(struct bbr3 *b)
{
	b->next_round_delivered = b->delivered;
}

static void reset_full_bw(struct bbr3 *b)
{
	b->full_bw = 0;
	b->full_bw_count = 0;
	b->full_bw_now = false;
}

static void reset_congestion_signals(struct bbr3 *b)
{
	b->is_loss_in_round = false;
	b->bw_latest = 0;
	b->inflight_latest = 0;
}

static void reset_short_term_model(struct bbr3 *b)
{
	b->bw_shortterm = BBR3_INF_BW;
	b->inflight_shortterm = BBR3_INF_PKTS;
}

static void enter_startup(struct bbr3 *b)
{
	set_gains(b, BBR3_STARTUP, b->gains.startup_pacing,
		  b->gains.startup_cwnd);
}

/*
 * Inflight(@gain) of max_bw (not of bw, which a short-term bound may have
 * lowered): v2's Drain target and ssthresh, its Startup loss bound, DOWN's
 * end at the BDP and v2's exit from UP at 1.25 of it.
 */
static u32 inflight_of_max_bw(const struct bbr3 *b, u32 gain)
{
	return quantization_budget(b, bdp_multiple_of(b, b->max_bw, gain));
}

/*
 * Drain: pace under bw until the queue Startup built is gone.  Draft-06
 * lowers the cwnd gain to 2.0 here; v2 keeps Startup's window (only the
 * pacing drains), and tells the stack its slow start is over.
 */
static void enter_drain(struct bbr3 *b)
{
	set_gains(b, BBR3_DRAIN, b->gains.drain_pacing,
		  b->gains.drain_cwnd ? b->gains.drain_cwnd : b->gains.startup_cwnd);
	b->drain_start_round = b->round_count;
	if (b->version == BBR3_VERSION_V2)
		b->ssthresh = inflight_of_max_bw(b, BBR3_UNIT);
}

static bool is_in_probe_bw(const struct bbr3 *b)
{
	return b->state == BBR3_PROBE_BW_DOWN ||
	       b->state == BBR3_PROBE_BW_CRUISE ||
	       b->state == BBR3_PROBE_BW_REFILL ||
	       b->state == BBR3_PROBE_BW_UP;
}

static bool is_probing_bw(const struct bbr3 *b)
{
	return b->state == BBR3_STARTUP || b->state == BBR3_PROBE_BW_REFILL ||
	       b->state == BBR3_PROBE_BW_UP;
}

/*
 * PickProbeWait: 0 or 1 rounds, and 2 s plus up to 1 s of wall clock.  The
 * draws come from the seed the caller gave (the kernel's random numbers in
 * the module, so a seeded guest repeats them).
 */
static void pick_probe_wait(struct bbr3 *b)
{
	b->rounds_since_probe_up = next_random(b) & 1;
	b->bw_probe_wait_us = BBR3_PROBE_WAIT_BASE_US +
			      next_random(b) % BBR3_PROBE_WAIT_RAND_US;
}

/*
 * The draft's StartProbeBW_* steps set no gains; its table of control
 * behaviour ("Summary of Control Behavior") gives them per state, so each
 * step sets its own here.
 */
static void start_probe_bw_down(struct bbr3 *b, u32 now_us)
{
	reset_congestion_signals(b);
	b->probe_up_acked_per_inc = BBR3_INF_PKTS;
	pick_probe_wait(b);
	b->cycle_stamp = now_us;	/* the cycle's wall clock starts */
	b->ack_phase = BBR3_ACKS_PROBE_STOPPING;
	start_round(b);
	set_gains(b, BBR3_PROBE_BW_DOWN, b->gains.probe_down_pacing,
		  BBR3_DEFAULT_CWND_GAIN);
}

static void start_probe_bw_cruise(struct bbr3 *b)
{
	set_gains(b, BBR3_PROBE_BW_CRUISE, BBR3_UNIT, BBR3_DEFAULT_CWND_GAIN);
}

static void start_probe_bw_refill(struct bbr3 *b)
{
	reset_short_term_model(b);
	b->bw_probe_up_rounds = 0;
	b->bw_probe_up_acked = 0;
	b->prev_probe_precautionary = false;
	b->ack_phase = BBR3_ACKS_REFILLING;
	start_round(b);
	set_gains(b, BBR3_PROBE_BW_REFILL, BBR3_UNIT, BBR3_DEFAULT_CWND_GAIN);
}

/* RaiseInflightLongtermSlope: 1, 2, 4 ... packets more per round. */
static void raise_inflight_longterm_slope(struct bbr3 *b)
{
	u32 growth_this_round = 1U << b->bw_probe_up_rounds;

	b->bw_probe_up_rounds = ss_min(b->bw_probe_up_rounds + 1,
				       BBR3_PROBE_UP_ROUNDS_MAX);
	b->probe_up_acked_per_inc = ss_max(b->cwnd / growth_this_round, 1);
}

static void start_probe_bw_up(struct bbr3 *b, const struct bbr3_ack *a)
{
	b->ack_phase = BBR3_ACKS_PROBE_STARTING;
	start_round(b);
	if (b->version == BBR3_VERSION_V2)	/* UP's own min_rtt is timed */
		b->cycle_stamp = a->now_us;
	reset_full_bw(b);
	b->full_bw = bbr3_delivery_rate(a->rs_delivered, a->rs_interval_us);
	set_gains(b, BBR3_PROBE_BW_UP, BBR3_PROBE_UP_PACING_GAIN,
		  b->gains.probe_up_cwnd);
	raise_inflight_longterm_slope(b);
}

/* EnterProbeBW: the cycle starts in DOWN (whose step sets the cwnd gain). */
static void enter_probe_bw(struct bbr3 *b, u32 now_us)
{
	start_probe_bw_down(b, now_us);
}

/* ---- initialization ------------------------------------------------------- */

/* InitPacingRate: the initial window over the first RTT, at Startup's gain. */
static void init_pacing_rate(struct bbr3 *b, u32 srtt_us)
{
	u64 nominal = bbr3_delivery_rate(b->initial_cwnd,
					 srtt_us ? srtt_us : BBR3_NO_SRTT_US);

	b->pacing_rate = gain_bw(nominal, b->gains.startup_pacing);
}

/* The versions' constants (bbr3.h has them as a table, with the sources). */
static const struct bbr3_gains version_gains[] = {
	[BBR3_VERSION_V2] = {
		.startup_pacing = 2885,		/* 2 / ln 2: doubling per round */
		.startup_cwnd = 2885,		/* v2 kept v1's Startup window */
		.drain_pacing = 347,		/* 1 / 2.885: undo Startup's queue */
		.probe_down_pacing = 750,	/* v1's and v2's 0.75 */
		.probe_up_cwnd = BBR3_DEFAULT_CWND_GAIN,
		.startup_full_loss_cnt = 8,
		.drain_cwnd = 0,		/* Startup's: the window kept */
	},
	[BBR3_VERSION_V3] = {
		.startup_pacing = BBR3_STARTUP_PACING_GAIN,
		.startup_cwnd = BBR3_DEFAULT_CWND_GAIN,
		.drain_pacing = BBR3_DRAIN_PACING_GAIN,
		.probe_down_pacing = BBR3_PROBE_DOWN_PACING_GAIN,
		.probe_up_cwnd = BBR3_PROBE_UP_CWND_GAIN,
		.startup_full_loss_cnt = BBR3_STARTUP_FULL_LOSS_CNT,
		.drain_cwnd = BBR3_DEFAULT_CWND_GAIN,
	},
};

const struct bbr3_gains *bbr3_version_gains(u32 version)
{
	if (version != BBR3_VERSION_V2 && version != BBR3_VERSION_V3)
		return NULL;
	return &version_gains[version];
}

void bbr3_init(struct bbr3 *b, u32 now_us, u32 srtt_us,
	       const struct bbr3_params *p)
{
	*b = (struct bbr3){0};
	b->initial_cwnd = p->initial_cwnd;
	b->cwnd = p->initial_cwnd;
	b->mss = p->mss ? p->mss : 1448;
	/* An unknown version runs draft-06. */
	b->version = bbr3_version_gains(p->version) ? p->version : BBR3_VERSION_V3;
	b->gains = *bbr3_version_gains(b->version);
	if (p->startup_pacing_gain)
		b->gains.startup_pacing = p->startup_pacing_gain;
	if (p->startup_cwnd_gain)
		b->gains.startup_cwnd = p->startup_cwnd_gain;
	if (p->startup_full_loss_cnt)
		b->gains.startup_full_loss_cnt = p->startup_full_loss_cnt;
	if (p->drain_pacing_gain)
		b->gains.drain_pacing = p->drain_pacing_gain;
	if (p->probe_down_pacing_gain)
		b->gains.probe_down_pacing = p->probe_down_pacing_gain;
	b->rng = p->seed ? p->seed : 0x2545f491U;	/* xorshift needs != 0 */
	b->min_rtt_us = srtt_us ? srtt_us : BBR3_INF_US;
	b->min_rtt_stamp = now_us;
	/*
	 * The draft leaves probe_rtt_min_delay's start unsaid; starting it
	 * at min_rtt makes the first real RTT sample replace both.
	 */
	b->probe_rtt_min_delay_us = b->min_rtt_us;
	b->probe_rtt_min_stamp = now_us;
	b->extra_acked_interval_start = now_us;
	b->inflight_longterm = BBR3_INF_PKTS;
	b->probe_up_acked_per_inc = BBR3_INF_PKTS;
	b->undo_state = BBR3_NO_STATE;
	b->ack_phase = BBR3_ACKS_INIT;
	b->send_quantum = 2;
	reset_congestion_signals(b);
	reset_short_term_model(b);
	reset_full_bw(b);
	init_pacing_rate(b, srtt_us);
	enter_startup(b);
}

/* ---- the model ------------------------------------------------------------ */

/*
 * UpdateRound: a round ends when a packet sent after the previous round
 * started is delivered (its P.delivered reaches next_round_delivered).
 */
static void update_round(struct bbr3 *b, const struct bbr3_ack *a)
{
	if (a->rs_prior_delivered >= b->next_round_delivered) {
		start_round(b);
		b->round_count++;
		b->rounds_since_probe_up++;
		b->round_start = true;
	} else {
		b->round_start = false;
	}
}

/*
 * UpdateMaxBw with the windowed max filter of two cycles: the slot of the
 * current cycle keeps its maximum; AdvanceMaxBwFilter starts the other slot
 * afresh.  App-limited samples count only when they are higher.
 */
static void update_max_bw(struct bbr3 *b, const struct bbr3_ack *a)
{
	u64 rate = bbr3_delivery_rate(a->rs_delivered, a->rs_interval_us);
	u64 *slot = &b->max_bw_slot[b->cycle_count & 1];

	update_round(b, a);
	if (rate > 0 && (rate >= b->max_bw || !a->rs_is_app_limited)) {
		*slot = max_u64(*slot, rate);
		b->max_bw = max_u64(b->max_bw_slot[0], b->max_bw_slot[1]);
	}
}

/* AdvanceMaxBwFilter: a new cycle; the cycle before the last is forgotten. */
static void advance_max_bw_filter(struct bbr3 *b)
{
	b->cycle_count++;
	b->max_bw_slot[b->cycle_count & 1] = 0;
}

/* UpdateLatestDeliverySignals: the round's delivery, and its loss round. */
static void update_latest_delivery_signals(struct bbr3 *b,
					   const struct bbr3_ack *a)
{
	b->loss_round_start = false;
	b->bw_latest = max_u64(b->bw_latest,
			       bbr3_delivery_rate(a->rs_delivered,
						  a->rs_interval_us));
	b->inflight_latest = ss_max(b->inflight_latest, a->rs_delivered);
	if (a->rs_prior_delivered >= b->loss_round_delivered) {
		b->loss_round_delivered = a->delivered;
		b->loss_round_start = true;
	}
}

static void advance_latest_delivery_signals(struct bbr3 *b,
					    const struct bbr3_ack *a)
{
	if (b->loss_round_start) {
		b->bw_latest = bbr3_delivery_rate(a->rs_delivered,
						  a->rs_interval_us);
		b->inflight_latest = a->rs_delivered;
	}
}

/* InitLowerBounds + LossLowerBounds: once per round with loss, not probing. */
static void adapt_lower_bounds_from_congestion(struct bbr3 *b)
{
	if (is_probing_bw(b) || !b->is_loss_in_round)
		return;
	if (b->bw_shortterm == BBR3_INF_BW)
		b->bw_shortterm = b->max_bw;
	if (b->inflight_shortterm == BBR3_INF_PKTS)
		b->inflight_shortterm = b->cwnd;
	b->bw_shortterm = max_u64(b->bw_latest,
				  gain_bw(b->bw_shortterm, BBR3_BETA));
	b->inflight_shortterm = ss_max(b->inflight_latest,
				       gain_pkts(b->inflight_shortterm,
						 BBR3_BETA));
}

static void update_congestion_signals(struct bbr3 *b, const struct bbr3_ack *a)
{
	update_max_bw(b, a);
	if (!b->loss_round_start)
		return;
	adapt_lower_bounds_from_congestion(b);
	b->is_loss_in_round = false;
}

/*
 * The extra_acked filter: the largest sample of each of the last
 * BBR3_EXTRA_ACKED_FILTER_LEN rounds, one slot a round; the max over the
 * last @len of them (1 in Startup).
 */
static u32 extra_acked_filter(struct bbr3 *b, u32 value, u32 len)
{
	u32 n = BBR3_EXTRA_ACKED_FILTER_LEN, i, max = 0;

	for (i = 0; i < n && b->extra_acked_round != b->round_count; i++) {
		b->extra_acked_round++;
		b->extra_acked_slot[b->extra_acked_round % n] = 0;
	}
	b->extra_acked_round = b->round_count;
	if (value > b->extra_acked_slot[b->round_count % n])
		b->extra_acked_slot[b->round_count % n] = value;
	for (i = 0; i < len && i < n; i++)
		max = ss_max(max, b->extra_acked_slot[(b->round_count - i) % n]);
	return max;
}

/*
 * v2's window of extra_acked: two slots, the newer one restarted each time
 * it has been the newest for BBR2_EXTRA_ACKED_WIN_ROUNDS packet-timed
 * rounds (one round in Startup), so the max of the two covers the last
 * 5-10 rounds (1-2 in Startup).
 */
static void extra_acked_window_v2(struct bbr3 *b)
{
	u32 rounds = b->full_bw_reached ? BBR2_EXTRA_ACKED_WIN_ROUNDS : 1;

	if (!b->round_start)
		return;
	b->extra_acked_win_rounds = ss_min(b->extra_acked_win_rounds + 1, 31);
	if (b->extra_acked_win_rounds < rounds)
		return;
	b->extra_acked_win_rounds = 0;
	b->extra_acked_win_idx ^= 1;
	b->extra_acked_slot[b->extra_acked_win_idx] = 0;
}

/* v2's UpdateACKAggregation: on ACKs that ack data and carry a rate sample. */
static void update_ack_aggregation_v2(struct bbr3 *b, const struct bbr3_ack *a)
{
	u32 interval, expected, extra;
	u32 *slot;

	if (!a->newly_acked || !a->rs_interval_us)
		return;
	extra_acked_window_v2(b);
	interval = ss_elapsed(a->now_us, b->extra_acked_interval_start);
	expected = ss_sat32((b->bw * interval) >> BBR3_BW_SHIFT);
	if (b->extra_acked_delivered <= expected ||
	    b->extra_acked_delivered + a->newly_acked >= BBR2_ACK_EPOCH_RESET_PKTS) {
		b->extra_acked_delivered = 0;
		b->extra_acked_interval_start = a->now_us;
		expected = 0;
	}
	b->extra_acked_delivered = ss_min(b->extra_acked_delivered + a->newly_acked,
					  BBR2_ACK_EPOCH_RESET_PKTS - 1);
	extra = ss_min(b->extra_acked_delivered - expected, b->cwnd);
	slot = &b->extra_acked_slot[b->extra_acked_win_idx];
	*slot = ss_max(*slot, extra);
	b->extra_acked = ss_max(b->extra_acked_slot[0], b->extra_acked_slot[1]);
}

/* UpdateACKAggregation: data acked beyond what bw explains, a round's max. */
static void update_ack_aggregation(struct bbr3 *b, const struct bbr3_ack *a)
{
	u32 interval = ss_elapsed(a->now_us, b->extra_acked_interval_start);
	u32 expected = ss_sat32((b->bw * interval) >> BBR3_BW_SHIFT);
	u32 extra;

	if (b->version == BBR3_VERSION_V2) {
		update_ack_aggregation_v2(b, a);
		return;
	}
	if (b->extra_acked_delivered <= expected) {
		b->extra_acked_delivered = 0;
		b->extra_acked_interval_start = a->now_us;
		expected = 0;
	}
	b->extra_acked_delivered = ss_sat_add(b->extra_acked_delivered,
					      a->newly_acked);
	extra = ss_min(b->extra_acked_delivered - expected, b->cwnd);
	b->extra_acked = extra_acked_filter(b, extra,
			b->full_bw_reached ? BBR3_EXTRA_ACKED_FILTER_LEN : 1);
}

/*
 * Whether @sample renews a minimum now at @min: a lower one (draft-06), or
 * a lower or equal one (v2alpha).
 */
static bool renews_min(const struct bbr3 *b, u32 sample, u32 min)
{
	return b->version == BBR3_VERSION_V2 ? sample <= min : sample < min;
}

/* UpdateMinRTT: ProbeRTT's 5 s minimum feeds the 10 s min_rtt filter. */
static void update_min_rtt(struct bbr3 *b, const struct bbr3_ack *a)
{
	b->probe_rtt_expired = is_past(a->now_us, b->probe_rtt_min_stamp,
				       BBR3_PROBE_RTT_INTERVAL_US);
	/* v2alpha: an expired minimum is not replaced by a delayed ACK's sample. */
	if (a->rs_rtt_us >= 0 &&
	    (renews_min(b, a->rs_rtt_us, b->probe_rtt_min_delay_us) ||
	     (b->probe_rtt_expired &&
	      !(b->version == BBR3_VERSION_V2 && a->rs_is_ack_delayed)))) {
		b->probe_rtt_min_delay_us = a->rs_rtt_us;
		b->probe_rtt_min_stamp = a->now_us;
	}
	if (renews_min(b, b->probe_rtt_min_delay_us, b->min_rtt_us) ||
	    is_past(a->now_us, b->min_rtt_stamp, BBR3_MIN_RTT_FILTER_US)) {
		b->min_rtt_us = b->probe_rtt_min_delay_us;
		b->min_rtt_stamp = b->probe_rtt_min_stamp;
	}
}

static void bound_bw_for_model(struct bbr3 *b)
{
	b->bw = min_u64(b->max_bw, b->bw_shortterm);
}

/* ---- Startup and Drain ---------------------------------------------------- */

/*
 * CheckFullBWReached: three rounds in a row under +25 % is a plateau.
 * Draft-06 compares the rate sample of the ACK that ends each round;
 * v2alpha compares max_bw, so a round whose best sample grew counts as
 * growth whatever its last one.
 */
static void check_full_bw_reached(struct bbr3 *b, const struct bbr3_ack *a)
{
	u64 rate = b->version == BBR3_VERSION_V2 ? b->max_bw :
		   bbr3_delivery_rate(a->rs_delivered, a->rs_interval_us);

	if (b->full_bw_now || !b->round_start || a->rs_is_app_limited)
		return;
	if (rate >= gain_bw(b->full_bw, BBR3_FULL_BW_GROWTH)) {
		reset_full_bw(b);
		b->full_bw = rate;
		return;
	}
	b->full_bw_count++;
	b->full_bw_now = b->full_bw_count >= BBR3_FULL_BW_ROUNDS;
	if (b->full_bw_now)
		b->full_bw_reached = true;
}

/*
 * CheckStartupHighLoss.  The draft states the criteria in prose; we read
 * them per packet-timed round, judged when the round ends:
 *   - the whole round was spent in fast recovery (recovery began in an
 *     earlier round);
 *   - lost / (delivered + lost) over the round exceeds LossThresh;
 *   - at least StartupFullLossCnt discontiguous ranges were lost in it.
 * Without SACK, any loss in recovery ends Startup.
 */
static bool startup_high_loss(struct bbr3 *b, const struct bbr3_ack *a)
{
	u32 delivered, lost;

	if (!a->has_selective_acks)
		return b->in_recovery && b->round_lost > 0;
	if (!b->round_start)
		return false;
	delivered = a->delivered - b->round_start_delivered;
	lost = b->round_lost;
	return b->in_recovery &&
	       b->round_count >= b->recovery_start_round + 2 &&
	       (u64)lost * BBR3_UNIT >
			(u64)(delivered + lost) * BBR3_LOSS_THRESH &&
	       b->round_loss_ranges >= b->gains.startup_full_loss_cnt;
}

/*
 * v2alpha's Startup loss exit (BBRv2), as Google's v2 judged it: when a
 * loss round ends in fast recovery, if at least StartupFullLossCnt (8) of
 * the ACKs in that round marked packets lost, and this ACK's own rate
 * sample lost too much (IsInflightTooHigh on RS.lost and RS.tx_in_flight,
 * not the round's tally).  Counting ACKs that marked losses, not lost
 * ranges, and reading one sample, are v2's; the bound it leaves is the
 * BDP of max_bw alone (v3 takes at least what the round delivered).
 */
static bool startup_high_loss_v2(const struct bbr3 *b, const struct bbr3_ack *a)
{
	return b->loss_round_start && a->in_recovery &&
	       b->loss_events_in_round >= b->gains.startup_full_loss_cnt &&
	       bbr3_is_inflight_too_high(a->rs_lost, a->rs_tx_in_flight,
					 a->has_selective_acks);
}

static void check_startup_high_loss(struct bbr3 *b, const struct bbr3_ack *a)
{
	bool high;

	if (b->state != BBR3_STARTUP)
		return;
	high = b->version == BBR3_VERSION_V2 ? startup_high_loss_v2(b, a) :
					       startup_high_loss(b, a);
	if (!high) {
		if (b->loss_round_start)
			b->loss_events_in_round = 0;
		return;
	}
	b->undo_state = BBR3_STARTUP;
	b->full_bw_now = true;
	b->full_bw_reached = true;
	if (b->version == BBR3_VERSION_V2)	/* of max_bw, this ACK's too */
		b->inflight_longterm = inflight_of_max_bw(b, BBR3_UNIT);
	else
		b->inflight_longterm = ss_max(bbr3_bdp_multiple(b, BBR3_UNIT),
					      b->inflight_latest);
	enter_drain(b);
}

static void check_startup_done(struct bbr3 *b, const struct bbr3_ack *a)
{
	check_startup_high_loss(b, a);
	if (b->state == BBR3_STARTUP && b->full_bw_reached)
		enter_drain(b);
}

/*
 * v2 judges inflight by what will still be in the network when the next
 * packet may leave: @inflight less what bw delivers until then (pacing may
 * hold the next packet back), plus that packet's burst when the gain is
 * raising inflight (over 1).
 */
static u32 in_network_at_next_departure(const struct bbr3 *b, u32 inflight,
					u32 edt_wait_us)
{
	u64 until_then = (b->bw * edt_wait_us) >> BBR3_BW_SHIFT;

	if (b->pacing_gain > BBR3_UNIT)
		inflight = ss_sat_add(inflight, b->send_quantum);
	return until_then >= inflight ? 0 : inflight - (u32)until_then;
}

/*
 * What ProbeBW's phases compare with their targets: C.inflight after this
 * ACK (draft-06), or, in v2, what was in flight before it, as it will be
 * in the network at the next departure.
 */
static u32 probe_bw_inflight(const struct bbr3 *b, const struct bbr3_ack *a)
{
	if (b->version != BBR3_VERSION_V2)
		return a->inflight;
	return in_network_at_next_departure(b, a->rs_prior_in_flight,
					    a->edt_wait_us);
}

static void check_drain_done(struct bbr3 *b, const struct bbr3_ack *a)
{
	bool drained;

	if (b->state != BBR3_DRAIN)
		return;
	if (b->version == BBR3_VERSION_V2)	/* no round cap */
		/* the inflight after this ACK (Drain adds no burst: gain < 1) */
		drained = in_network_at_next_departure(b, a->inflight, a->edt_wait_us) <=
			  inflight_of_max_bw(b, BBR3_UNIT);
	else
		drained = a->inflight <= bbr3_inflight(b, BBR3_UNIT) ||
			  b->round_count > b->drain_start_round + BBR3_DRAIN_MAX_ROUNDS;
	if (drained)
		enter_probe_bw(b, a->now_us);
}

/* ---- ProbeBW -------------------------------------------------------------- */

/* IsInflightTooHigh: the loss since P was sent over what was in flight. */
bool bbr3_is_inflight_too_high(u32 lost, u32 tx_in_flight, bool has_sack)
{
	return (u64)lost * BBR3_UNIT > (u64)tx_in_flight * BBR3_LOSS_THRESH ||
	       (lost > 0 && !has_sack);
}

/* IsRenoCoexistenceProbeTime: as many rounds as Reno needs, at most 63. */
static bool is_reno_coexistence_probe_time(const struct bbr3 *b)
{
	u32 rounds = ss_min(target_inflight(b), BBR3_RENO_ROUNDS_MAX);

	return b->rounds_since_probe_up >= rounds;
}

/* IsTimeToProbeBW: from DOWN or CRUISE to REFILL. */
static bool is_time_to_probe_bw(struct bbr3 *b, u32 now_us)
{
	if (is_past(now_us, b->cycle_stamp, b->bw_probe_wait_us) ||
	    is_reno_coexistence_probe_time(b)) {
		start_probe_bw_refill(b);
		return true;
	}
	return false;
}

/* IsTimeToCruise: headroom left and no queue (inflight at most the BDP). */
static bool is_time_to_cruise(const struct bbr3 *b, u32 inflight)
{
	if (inflight > bbr3_inflight_with_headroom(b))
		return false;
	return inflight <= inflight_of_max_bw(b, BBR3_UNIT);
}

/*
 * v2alpha's exit from UP: once a min_rtt has passed in UP, when inflight
 * reaches Inflight(1.25) of max_bw: the probe has put a quarter of a BDP
 * more in flight, which is a queue unless bw grew (v1's test; draft-06
 * waits for bw to stop growing instead).
 */
static bool is_probe_up_queuing_v2(const struct bbr3 *b, u32 now_us,
				   u32 inflight)
{
	return is_past(now_us, b->cycle_stamp, b->min_rtt_us) &&
	       inflight >= inflight_of_max_bw(b, BBR2_PROBE_UP_INFLIGHT_GAIN);
}

/* IsTimeToGoDown: from UP to DOWN. */
static bool is_time_to_go_down(struct bbr3 *b, const struct bbr3_ack *a,
			       u32 inflight)
{
	if (b->prev_probe_too_high && inflight >= b->inflight_longterm) {
		b->prev_probe_precautionary = true;
		return true;
	}
	if (b->version == BBR3_VERSION_V2)
		return is_probe_up_queuing_v2(b, a->now_us, inflight);
	if (a->is_cwnd_limited && b->cwnd >= b->inflight_longterm) {
		reset_full_bw(b);	/* bw is limited by inflight_longterm */
		b->full_bw = bbr3_delivery_rate(a->rs_delivered,
						a->rs_interval_us);
	} else if (b->full_bw_now) {
		return true;
	}
	return false;
}

/* ProbeInflightLongtermUpward: grow it while the window is full. */
static void probe_inflight_longterm_upward(struct bbr3 *b,
					   const struct bbr3_ack *a)
{
	u32 delta;

	if (!a->is_cwnd_limited || b->cwnd < b->inflight_longterm) {
		/* v2 drops the credit a round not using the bound earned. */
		if (b->version == BBR3_VERSION_V2)
			b->bw_probe_up_acked = 0;
		return;
	}
	b->bw_probe_up_acked = ss_sat_add(b->bw_probe_up_acked, a->newly_acked);
	if (b->bw_probe_up_acked >= b->probe_up_acked_per_inc) {
		delta = b->bw_probe_up_acked / b->probe_up_acked_per_inc;
		b->bw_probe_up_acked -= delta * b->probe_up_acked_per_inc;
		b->inflight_longterm = ss_sat_add(b->inflight_longterm, delta);
	}
	if (b->round_start)
		raise_inflight_longterm_slope(b);
}

/*
 * AdaptLongTermModel: the ack phases of a probe, the max_bw filter's
 * cycles, and inflight_longterm raised where the loss rate is safe.
 * True when it decided a state transition.
 */
static bool adapt_long_term_model(struct bbr3 *b, const struct bbr3_ack *a)
{
	if (b->ack_phase == BBR3_ACKS_PROBE_STARTING && b->round_start)
		b->ack_phase = BBR3_ACKS_PROBE_FEEDBACK;
	if (b->ack_phase == BBR3_ACKS_PROBE_STOPPING && b->round_start) {
		b->is_bw_probe_sample = false;
		b->ack_phase = BBR3_ACKS_INIT;
		if (is_in_probe_bw(b) && !a->rs_is_app_limited)
			advance_max_bw_filter(b);
		if (is_in_probe_bw(b) && b->prev_probe_precautionary &&
		    !b->prev_probe_too_high) {
			start_probe_bw_refill(b);
			return true;
		}
	}
	if (!bbr3_is_inflight_too_high(a->rs_lost, a->rs_tx_in_flight,
				       a->has_selective_acks)) {
		if (b->inflight_longterm == BBR3_INF_PKTS)
			return false;
		if (a->rs_tx_in_flight > b->inflight_longterm)
			b->inflight_longterm = a->rs_tx_in_flight;
		if (b->state == BBR3_PROBE_BW_UP)
			probe_inflight_longterm_upward(b, a);
	}
	return false;
}

/* UpdateProbeBWCyclePhase: DOWN -> CRUISE -> REFILL -> UP -> DOWN. */
static void update_probe_bw_cycle_phase(struct bbr3 *b,
					const struct bbr3_ack *a)
{
	u32 inflight;

	if (!b->full_bw_reached)
		return;
	if (adapt_long_term_model(b, a))
		return;
	if (!is_in_probe_bw(b))
		return;
	inflight = probe_bw_inflight(b, a);
	switch (b->state) {
	case BBR3_PROBE_BW_DOWN:
		if (is_time_to_probe_bw(b, a->now_us))
			return;
		if (is_time_to_cruise(b, inflight))
			start_probe_bw_cruise(b);
		break;
	case BBR3_PROBE_BW_CRUISE:
		is_time_to_probe_bw(b, a->now_us);
		break;
	case BBR3_PROBE_BW_REFILL:
		if (b->round_start) {
			b->is_bw_probe_sample = true;
			start_probe_bw_up(b, a);
		}
		break;
	case BBR3_PROBE_BW_UP:
		if (is_time_to_go_down(b, a, inflight)) {
			b->prev_probe_too_high = false;
			start_probe_bw_down(b, a->now_us);
		}
		break;
	default:
		break;
	}
}

/* ---- ProbeRTT ------------------------------------------------------------- */

/* SaveCwnd: the last cwnd not cut by recovery or ProbeRTT. */
static void save_cwnd(struct bbr3 *b)
{
	if (!b->in_recovery && b->state != BBR3_PROBE_RTT)
		b->prior_cwnd = b->cwnd;
	else
		b->prior_cwnd = ss_max(b->prior_cwnd, b->cwnd);
}

static void restore_cwnd(struct bbr3 *b)
{
	b->cwnd = ss_max(b->cwnd, b->prior_cwnd);
}

/* ExitProbeRTT: back to CRUISE (the pipe is drained) or to Startup. */
static void exit_probe_rtt(struct bbr3 *b, u32 now_us)
{
	reset_short_term_model(b);
	if (b->full_bw_reached) {
		start_probe_bw_down(b, now_us);
		start_probe_bw_cruise(b);
	} else {
		enter_startup(b);
	}
}

static void check_probe_rtt_done(struct bbr3 *b, u32 now_us)
{
	if (b->probe_rtt_done_stamp &&
	    (s32)(now_us - b->probe_rtt_done_stamp) > 0) {
		b->probe_rtt_min_stamp = now_us;	/* the next in 5 s */
		restore_cwnd(b);
		exit_probe_rtt(b, now_us);
	}
}

/*
 * HandleProbeRTT: once inflight is down to ProbeRTT's cwnd, hold it there
 * for 200 ms and at least a round.  probe_rtt_done_stamp 0 means "not yet
 * there", so a stamp that lands on 0 is moved to 1 us.
 */
static void handle_probe_rtt(struct bbr3 *b, const struct bbr3_ack *a)
{
	b->mark_app_limited = true;
	if (!b->probe_rtt_done_stamp &&
	    b->inflight <= bbr3_probe_rtt_cwnd(b)) {
		b->probe_rtt_done_stamp = (a->now_us +
					   BBR3_PROBE_RTT_DURATION_US) ?: 1;
		b->probe_rtt_round_done = false;
		start_round(b);
	} else if (b->probe_rtt_done_stamp) {
		if (b->round_start)
			b->probe_rtt_round_done = true;
		if (b->probe_rtt_round_done)
			check_probe_rtt_done(b, a->now_us);
	}
}

/* CheckProbeRTT: 5 s without a lower RTT sample and not just idle. */
static void check_probe_rtt(struct bbr3 *b, const struct bbr3_ack *a)
{
	if (b->state != BBR3_PROBE_RTT && b->probe_rtt_expired &&
	    !b->idle_restart) {
		set_gains(b, BBR3_PROBE_RTT, BBR3_UNIT,
			  BBR3_PROBE_RTT_CWND_GAIN);
		save_cwnd(b);
		b->probe_rtt_done_stamp = 0;
		b->ack_phase = BBR3_ACKS_PROBE_STOPPING;
		start_round(b);
	}
	if (b->state == BBR3_PROBE_RTT)
		handle_probe_rtt(b, a);
	if (a->rs_delivered > 0)
		b->idle_restart = false;
}

/* ---- control parameters --------------------------------------------------- */

/* SetPacingRateWithGain: never lower before the pipe was first full. */
static void set_pacing_rate_with_gain(struct bbr3 *b, u32 gain)
{
	u64 rate = gain_bw(b->bw, gain);

	rate = ss_div64(rate * (100 - BBR3_PACING_MARGIN_PERCENT), 100);
	if (b->full_bw_reached || rate > b->pacing_rate)
		b->pacing_rate = rate;
}

/* SetSendQuantum: 1 ms at the pacing rate, between 2 packets and 64 KB. */
/*
 * v2alpha's burst size (its TSO goal), which the quantization budget counts
 * three of: the bytes the pacing rate sends in 2^-10 s (the socket's pacing
 * shift), plus 64 KB halved for every 512 us of min_rtt (nothing past 16 ms),
 * at most 64 KB, in whole packets; at least 2, or 1 under 1.2 Mbit/s.
 */
static u32 send_quantum_v2(const struct bbr3 *b)
{
	u64 rate = bbr3_pacing_rate_bytes_per_sec(b);
	u64 bytes = rate >> BBR2_PACING_SHIFT;
	u32 halvings = b->min_rtt_us >> BBR2_TSO_RTT_SHIFT;

	if (b->min_rtt_us != BBR3_INF_US && halvings < 32)
		bytes += BBR3_SEND_QUANTUM_MAX_BYTES >> halvings;
	bytes = min_u64(bytes, BBR3_SEND_QUANTUM_MAX_BYTES);
	return ss_max((u32)bytes / b->mss,
		      rate < BBR2_MIN_TSO_RATE_BYTES ? 1 : 2);
}

static void set_send_quantum(struct bbr3 *b)
{
	u32 quantum;

	if (b->version == BBR3_VERSION_V2) {
		b->send_quantum = send_quantum_v2(b);
		return;
	}
	quantum = ss_sat32((b->pacing_rate * BBR3_SEND_QUANTUM_US) >>
			   BBR3_BW_SHIFT);
	quantum = ss_min(quantum, BBR3_SEND_QUANTUM_MAX_BYTES / b->mss);
	b->send_quantum = ss_max(quantum, 2);
}

/*
 * The window extra_acked adds: all of it (draft-06), or at most
 * BBR2_EXTRA_ACKED_MAX_US at bw (v2).
 */
static u32 aggregation_cwnd(const struct bbr3 *b)
{
	if (b->version != BBR3_VERSION_V2)
		return b->extra_acked;
	return ss_min(b->extra_acked,
		      ss_sat32((b->bw * BBR2_EXTRA_ACKED_MAX_US) >> BBR3_BW_SHIFT));
}

/* UpdateMaxInflight: cwnd_gain x bdp + extra_acked, with the budget. */
static void update_max_inflight(struct bbr3 *b)
{
	u32 cap = ss_sat_add(bbr3_bdp_multiple(b, b->cwnd_gain),
			     aggregation_cwnd(b));

	b->max_inflight = quantization_budget(b, cap);
}

/* BoundCwndForModel: the volume caps of the state (bbr3.h's table). */
static void bound_cwnd_for_model(struct bbr3 *b)
{
	u32 cap = BBR3_INF_PKTS;

	if (is_in_probe_bw(b) && b->state != BBR3_PROBE_BW_CRUISE)
		cap = b->inflight_longterm;
	else if (b->state == BBR3_PROBE_RTT ||
		 b->state == BBR3_PROBE_BW_CRUISE)
		cap = bbr3_inflight_with_headroom(b);
	cap = ss_min(cap, b->inflight_shortterm);
	cap = ss_max(cap, BBR3_MIN_PIPE_CWND);
	b->cwnd = ss_min(b->cwnd, cap);
}

/*
 * Before the pipe is full, cwnd also grows below a floor: until an initial
 * window has been delivered (draft-06), or while under twice the initial
 * window (v2alpha), whatever the model's target.
 */
static bool startup_cwnd_floor(const struct bbr3 *b, const struct bbr3_ack *a)
{
	if (b->version == BBR3_VERSION_V2)
		return b->cwnd < 2 * b->initial_cwnd;
	return a->delivered < b->initial_cwnd;
}

/* SetCwnd: grow by what was acked up to max_inflight; cut to the bounds. */
static void set_cwnd(struct bbr3 *b, const struct bbr3_ack *a)
{
	update_max_inflight(b);
	if (b->full_bw_reached)
		b->cwnd = ss_min(ss_sat_add(b->cwnd, a->newly_acked),
				 b->max_inflight);
	else if (b->cwnd < b->max_inflight || startup_cwnd_floor(b, a))
		b->cwnd = ss_sat_add(b->cwnd, a->newly_acked);
	b->cwnd = ss_max(b->cwnd, BBR3_MIN_PIPE_CWND);
	if (b->state == BBR3_PROBE_RTT)
		b->cwnd = ss_min(b->cwnd, bbr3_probe_rtt_cwnd(b));
	bound_cwnd_for_model(b);
}

/* ---- the events ----------------------------------------------------------- */

/* The round's tally for CheckStartupHighLoss, kept by packet-timed round. */
static void track_round_loss(struct bbr3 *b, const struct bbr3_ack *a)
{
	if (a->in_recovery && !b->in_recovery)
		b->recovery_start_round = b->round_count;
	b->in_recovery = a->in_recovery;
}

static void start_round_loss_tally(struct bbr3 *b, const struct bbr3_ack *a)
{
	if (b->round_start) {
		b->round_lost = 0;
		b->round_loss_ranges = 0;
		b->round_start_delivered = a->delivered;
	}
}

/* UpdateOnACK: UpdateModelAndState, then UpdateControlParameters. */
void bbr3_on_ack(struct bbr3 *b, const struct bbr3_ack *a)
{
	b->cwnd = a->cwnd;
	b->has_selective_acks = a->has_selective_acks;
	b->delivered = a->delivered;
	b->inflight = a->inflight;
	b->mark_app_limited = false;
	track_round_loss(b, a);
	if (b->lost_since_ack) {	/* this ACK marked packets lost */
		b->loss_events_in_round = ss_min(b->loss_events_in_round + 1,
						 BBR2_LOSS_EVENTS_MAX);
		b->lost_since_ack = false;
	}

	update_latest_delivery_signals(b, a);
	update_congestion_signals(b, a);
	update_ack_aggregation(b, a);
	check_full_bw_reached(b, a);
	check_startup_done(b, a);
	check_drain_done(b, a);
	update_probe_bw_cycle_phase(b, a);
	update_min_rtt(b, a);
	check_probe_rtt(b, a);
	advance_latest_delivery_signals(b, a);
	bound_bw_for_model(b);
	start_round_loss_tally(b, a);

	set_pacing_rate_with_gain(b, b->pacing_gain);
	set_send_quantum(b);
	set_cwnd(b, a);
}

/*
 * InflightAtLoss: where, within P (@size packets), the loss rate crossed
 * LossThresh:  lost_prefix = (thresh * inflight_prev - lost_prev) /
 * (1 - thresh), in thousandths: (20 * inflight_prev - 1000 * lost_prev) /
 * 980.  A negative prefix (the threshold was crossed before P) counts 0.
 */
u32 bbr3_inflight_at_loss(u32 tx_in_flight, u32 lost, u32 size)
{
	s64 inflight_prev = (s64)tx_in_flight - size;
	s64 lost_prev = (s64)lost - size;
	s64 num = BBR3_LOSS_THRESH * inflight_prev - (s64)BBR3_UNIT * lost_prev;
	s64 prefix = num > 0 ?
		(s64)ss_div64((u64)num, BBR3_UNIT - BBR3_LOSS_THRESH) : 0;

	return (u32)(inflight_prev + prefix);
}

/* SaveStateUponLoss: what an undo of this recovery would restore. */
static void save_state_upon_loss(struct bbr3 *b)
{
	save_cwnd(b);
	b->undo_state = BBR3_NO_STATE;
	b->undo_bw_shortterm = b->bw_shortterm;
	b->undo_inflight_shortterm = b->inflight_shortterm;
	b->undo_inflight_longterm = b->inflight_longterm;
}

/* HandleInflightTooHigh: a probe went too far; cut inflight_longterm. */
static void handle_inflight_too_high(struct bbr3 *b, u32 tx_in_flight,
				     bool app_limited, u32 now_us)
{
	b->prev_probe_too_high = true;
	b->is_bw_probe_sample = false;	/* react once per probe */
	if (!app_limited)
		b->inflight_longterm = ss_max(tx_in_flight,
					      gain_pkts(target_inflight(b),
							BBR3_BETA));
	if (b->state == BBR3_PROBE_BW_UP) {
		b->undo_state = BBR3_PROBE_BW_UP;
		start_probe_bw_down(b, now_us);
	}
}

/* NoteLoss + HandleLostPacket. */
void bbr3_on_lost_packet(struct bbr3 *b, const struct bbr3_lost_packet *p)
{
	u32 size = p->size ? p->size : 1;
	u32 lost, tx_in_flight;

	b->delivered = p->delivered;
	if (!b->is_loss_in_round) {
		b->loss_round_delivered = p->delivered;
		save_state_upon_loss(b);
	}
	b->is_loss_in_round = true;
	b->lost_since_ack = true;
	b->round_lost = ss_sat_add(b->round_lost, size);
	if (p->new_range || b->round_loss_ranges == 0)
		b->round_loss_ranges++;
	if (!b->is_bw_probe_sample)
		return;
	lost = p->lost - p->tx_lost;
	tx_in_flight = p->tx_in_flight;
	if (bbr3_is_inflight_too_high(lost, tx_in_flight,
				      b->has_selective_acks)) {
		tx_in_flight = bbr3_inflight_at_loss(tx_in_flight, lost, size);
		handle_inflight_too_high(b, tx_in_flight, p->is_app_limited,
					 p->now_us);
	}
}

/* HandleRestartFromIdle, before a transmission. */
void bbr3_on_transmit(struct bbr3 *b, u32 now_us, u32 inflight,
		      bool app_limited)
{
	if (inflight != 0 || !app_limited)
		return;
	b->idle_restart = true;
	b->extra_acked_interval_start = now_us;
	if (is_in_probe_bw(b))
		set_pacing_rate_with_gain(b, BBR3_UNIT);
	else if (b->state == BBR3_PROBE_RTT)
		check_probe_rtt_done(b, now_us);
}

/* OnEnterFastRecovery */
void bbr3_on_enter_fast_recovery(struct bbr3 *b)
{
	save_state_upon_loss(b);
}

/* OnEnterRTO: one packet more than is in flight. */
void bbr3_on_enter_rto(struct bbr3 *b, u32 inflight)
{
	save_state_upon_loss(b);
	b->cwnd = ss_sat_add(inflight, 1);
}

/*
 * A retransmission timeout marked everything lost; the stack has set
 * @cwnd (what is in flight + 1).  v2alpha forgets its pipe-full sample and,
 * unless probing, bounds inflight_shortterm by the cwnd saved before the
 * timeout, so that the next loss round cuts from there.
 */
void bbr3_on_timeout(struct bbr3 *b, u32 cwnd)
{
	b->cwnd = cwnd;
	if (b->version != BBR3_VERSION_V2)
		return;
	b->full_bw = 0;
	if (!is_probing_bw(b) && b->inflight_shortterm == BBR3_INF_PKTS)
		b->inflight_shortterm = b->prior_cwnd;
}

/*
 * Recovery over (all repaired or undone): the cwnd from before it.  v2alpha
 * restores it only after a timeout: fast recovery never cut its cwnd (the
 * stack's PRR does not run under a congestion control's own cwnd).
 */
void bbr3_on_exit_recovery(struct bbr3 *b, bool after_timeout)
{
	if (b->version == BBR3_VERSION_V2 && !after_timeout)
		return;
	restore_cwnd(b);
}

/*
 * HandleSpuriousLossDetection: back to what the loss made us leave.  v2alpha
 * restores the bounds and the cwnd saved when recovery began (that cwnd
 * exactly) and leaves the state as it is.
 */
void bbr3_on_spurious_loss(struct bbr3 *b)
{
	if (b->version == BBR3_VERSION_V2)
		b->cwnd = b->prior_cwnd;
	else
		restore_cwnd(b);
	b->is_loss_in_round = false;
	reset_full_bw(b);
	b->bw_shortterm = max_u64(b->bw_shortterm, b->undo_bw_shortterm);
	b->inflight_shortterm = ss_max(b->inflight_shortterm,
				       b->undo_inflight_shortterm);
	b->inflight_longterm = ss_max(b->inflight_longterm,
				      b->undo_inflight_longterm);
	if (b->version == BBR3_VERSION_V2) {
		b->undo_state = BBR3_NO_STATE;
		return;
	}
	if (b->undo_state == BBR3_STARTUP && b->state != BBR3_STARTUP) {
		b->full_bw_reached = false;
		if (b->state != BBR3_PROBE_RTT)
			enter_startup(b);
	} else if (b->undo_state == BBR3_PROBE_BW_UP &&
		   b->state != BBR3_PROBE_BW_UP) {
		if (b->state != BBR3_PROBE_RTT)
			start_probe_bw_refill(b);
	}
	b->undo_state = BBR3_NO_STATE;
}
