// SPDX-License-Identifier: GPL-2.0
/*
 * bbr3: BBRv3 from draft-ietf-ccwg-bbr-06; the model and the states of the
 * start (bbr3.h teaches both).  Each function is one step of the draft,
 * named after it; where the draft leaves a choice to the implementation,
 * the comment says what we chose.
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

static u32 max_u32(u32 a, u32 b)
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
	return (u32)ss_div64((u64)value * gain, BBR3_UNIT);
}

/* RS.delivery_rate: packets over the sample's interval, in bandwidth units. */
u64 bbr3_delivery_rate(u32 delivered, u32 interval_us)
{
	if (!interval_us)
		return 0;
	return ss_div64((u64)delivered << BBR3_BW_SHIFT, interval_us);
}

/* ---- states --------------------------------------------------------------- */

static void enter_startup(struct bbr3 *b)
{
	b->state = BBR3_STARTUP;
	b->pacing_gain = BBR3_STARTUP_PACING_GAIN;
	b->cwnd_gain = BBR3_DEFAULT_CWND_GAIN;
}

static void enter_drain(struct bbr3 *b)
{
	b->state = BBR3_DRAIN;
	b->pacing_gain = BBR3_DRAIN_PACING_GAIN;
	b->cwnd_gain = BBR3_DEFAULT_CWND_GAIN;
	b->drain_start_round = b->round_count;
}

/*
 * EnterProbeBW: the cycle starts in ProbeBW_DOWN.  Only the state and its
 * gains for now: the cycle's timing (bw_probe_wait, cycle_stamp, ack_phase)
 * comes with the ProbeBW step.
 */
static void enter_probe_bw(struct bbr3 *b)
{
	b->state = BBR3_PROBE_BW_DOWN;
	b->pacing_gain = BBR3_PROBE_DOWN_PACING_GAIN;
	b->cwnd_gain = BBR3_DEFAULT_CWND_GAIN;
}

static bool is_probing_bw(const struct bbr3 *b)
{
	return b->state == BBR3_STARTUP || b->state == BBR3_PROBE_BW_REFILL ||
	       b->state == BBR3_PROBE_BW_UP;
}

/* ---- initialization ------------------------------------------------------- */

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

/* InitPacingRate: the initial window over the first RTT, at Startup's gain. */
static void init_pacing_rate(struct bbr3 *b, u32 srtt_us)
{
	u64 nominal = bbr3_delivery_rate(b->initial_cwnd,
					 srtt_us ? srtt_us : BBR3_NO_SRTT_US);

	b->pacing_rate = gain_bw(nominal, BBR3_STARTUP_PACING_GAIN);
}

void bbr3_init(struct bbr3 *b, u32 now_us, u32 srtt_us, u32 initial_cwnd,
	       u32 cwnd)
{
	*b = (struct bbr3){0};
	b->initial_cwnd = initial_cwnd;
	b->min_rtt_us = srtt_us ? srtt_us : BBR3_INF_US;
	b->min_rtt_stamp = now_us;
	/*
	 * The draft leaves probe_rtt_min_delay's start unsaid; starting it
	 * at min_rtt makes the first real RTT sample replace both.
	 */
	b->probe_rtt_min_delay_us = b->min_rtt_us;
	b->probe_rtt_min_stamp = now_us;
	b->inflight_longterm = BBR3_INF_PKTS;
	b->undo_state = BBR3_NO_STATE;
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
		b->next_round_delivered = a->delivered;
		b->round_count++;
		b->round_start = true;
	} else {
		b->round_start = false;
	}
}

/*
 * UpdateMaxBw with the windowed max filter of two cycles: the slot of the
 * current cycle keeps its maximum; AdvanceMaxBwFilter (ProbeBW) starts the
 * other slot afresh.  App-limited samples count only when they are higher.
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

/* UpdateLatestDeliverySignals: the round's delivery, and its loss round. */
static void update_latest_delivery_signals(struct bbr3 *b,
					   const struct bbr3_ack *a)
{
	b->loss_round_start = false;
	b->bw_latest = max_u64(b->bw_latest,
			       bbr3_delivery_rate(a->rs_delivered,
						  a->rs_interval_us));
	b->inflight_latest = max_u32(b->inflight_latest, a->rs_delivered);
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
static void adapt_lower_bounds_from_congestion(struct bbr3 *b, u32 cwnd)
{
	if (is_probing_bw(b) || !b->is_loss_in_round)
		return;
	if (b->bw_shortterm == BBR3_INF_BW)
		b->bw_shortterm = b->max_bw;
	if (b->inflight_shortterm == BBR3_INF_PKTS)
		b->inflight_shortterm = cwnd;
	b->bw_shortterm = max_u64(b->bw_latest,
				  gain_bw(b->bw_shortterm, BBR3_BETA));
	b->inflight_shortterm = max_u32(b->inflight_latest,
					gain_pkts(b->inflight_shortterm,
						  BBR3_BETA));
}

static void update_congestion_signals(struct bbr3 *b, const struct bbr3_ack *a)
{
	update_max_bw(b, a);
	if (!b->loss_round_start)
		return;
	/*
	 * InitLowerBounds takes C.cwnd; until cwnd is ours (the next step)
	 * the inflight after this ACK stands for it.
	 */
	adapt_lower_bounds_from_congestion(b, a->inflight);
	b->is_loss_in_round = false;
}

/*
 * BDPMultiple: gain * bw * min_rtt, or the initial window before an RTT.
 * The gain is applied before the scale is dropped, so 2 * 319.99 is 639.
 */
u32 bbr3_bdp_multiple(const struct bbr3 *b, u32 gain)
{
	u64 bdp_scaled;

	if (b->min_rtt_us == BBR3_INF_US)
		return b->initial_cwnd;
	bdp_scaled = b->bw * b->min_rtt_us;
	return (u32)(ss_div64(bdp_scaled * gain, BBR3_UNIT) >> BBR3_BW_SHIFT);
}

/*
 * Inflight(gain): the BDP multiple with the quantization budget.  The
 * offload budget is not modelled yet (0), so the budget is MinPipeCwnd,
 * plus two packets in ProbeBW_UP.
 */
u32 bbr3_inflight(const struct bbr3 *b, u32 gain)
{
	u32 cap = max_u32(bbr3_bdp_multiple(b, gain), BBR3_MIN_PIPE_CWND);

	if (b->state == BBR3_PROBE_BW_UP)
		cap += 2;
	return cap;
}

/* UpdateMinRTT: ProbeRTT's 5 s minimum feeds the 10 s min_rtt filter. */
static void update_min_rtt(struct bbr3 *b, const struct bbr3_ack *a)
{
	bool min_rtt_expired;

	b->probe_rtt_expired = (s32)(a->now_us - b->probe_rtt_min_stamp) >
			       (s32)BBR3_PROBE_RTT_INTERVAL_US;
	if (a->rs_rtt_us >= 0 &&
	    ((u32)a->rs_rtt_us < b->probe_rtt_min_delay_us ||
	     b->probe_rtt_expired)) {
		b->probe_rtt_min_delay_us = a->rs_rtt_us;
		b->probe_rtt_min_stamp = a->now_us;
	}
	min_rtt_expired = (s32)(a->now_us - b->min_rtt_stamp) >
			  (s32)BBR3_MIN_RTT_FILTER_US;
	if (b->probe_rtt_min_delay_us < b->min_rtt_us || min_rtt_expired) {
		b->min_rtt_us = b->probe_rtt_min_delay_us;
		b->min_rtt_stamp = b->probe_rtt_min_stamp;
	}
}

static void bound_bw_for_model(struct bbr3 *b)
{
	b->bw = min_u64(b->max_bw, b->bw_shortterm);
}

/* ---- Startup and Drain ---------------------------------------------------- */

/* CheckFullBWReached: three rounds in a row under +25 % is a plateau. */
static void check_full_bw_reached(struct bbr3 *b, const struct bbr3_ack *a)
{
	u64 rate = bbr3_delivery_rate(a->rs_delivered, a->rs_interval_us);

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
	       b->round_loss_ranges >= BBR3_STARTUP_FULL_LOSS_CNT;
}

static void check_startup_high_loss(struct bbr3 *b, const struct bbr3_ack *a)
{
	if (b->state == BBR3_STARTUP && startup_high_loss(b, a)) {
		b->undo_state = BBR3_STARTUP;
		b->full_bw_now = true;
		b->full_bw_reached = true;
		b->inflight_longterm = max_u32(bbr3_bdp_multiple(b, BBR3_UNIT),
					       b->inflight_latest);
		enter_drain(b);
	}
}

static void check_startup_done(struct bbr3 *b, const struct bbr3_ack *a)
{
	check_startup_high_loss(b, a);
	if (b->state == BBR3_STARTUP && b->full_bw_reached)
		enter_drain(b);
}

static void check_drain_done(struct bbr3 *b, const struct bbr3_ack *a)
{
	if (b->state == BBR3_DRAIN &&
	    (a->inflight <= bbr3_inflight(b, BBR3_UNIT) ||
	     b->round_count > b->drain_start_round + BBR3_DRAIN_MAX_ROUNDS))
		enter_probe_bw(b);
}

/* SetPacingRateWithGain: never lower before the pipe was first full. */
static void set_pacing_rate(struct bbr3 *b)
{
	u64 rate = gain_bw(b->bw, b->pacing_gain);

	rate = ss_div64(rate * (100 - BBR3_PACING_MARGIN_PERCENT), 100);
	if (b->full_bw_reached || rate > b->pacing_rate)
		b->pacing_rate = rate;
}

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

/* UpdateOnACK's model and state steps, in the draft's order. */
void bbr3_on_ack(struct bbr3 *b, const struct bbr3_ack *a)
{
	track_round_loss(b, a);
	update_latest_delivery_signals(b, a);
	update_congestion_signals(b, a);
	check_full_bw_reached(b, a);
	check_startup_done(b, a);
	check_drain_done(b, a);
	update_min_rtt(b, a);
	advance_latest_delivery_signals(b, a);
	bound_bw_for_model(b);
	start_round_loss_tally(b, a);
	set_pacing_rate(b);
}

/* ---- loss ----------------------------------------------------------------- */

/* IsInflightTooHigh: the loss since P was sent over what was in flight. */
bool bbr3_is_inflight_too_high(u32 lost, u32 tx_in_flight, bool has_sack)
{
	return (u64)lost * BBR3_UNIT > (u64)tx_in_flight * BBR3_LOSS_THRESH ||
	       (lost > 0 && !has_sack);
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

/* NoteLoss + HandleLostPacket.  Outside a bandwidth probe only the note. */
void bbr3_on_lost_packet(struct bbr3 *b, const struct bbr3_lost_packet *p)
{
	if (!b->is_loss_in_round)
		b->loss_round_delivered = p->delivered;
	b->is_loss_in_round = true;
	b->round_lost++;
	if (p->new_range || b->round_loss_ranges == 0)
		b->round_loss_ranges++;
	/*
	 * A loss during a bandwidth probe (ProbeBW's REFILL and UP) lowers
	 * inflight_longterm: that response comes with the ProbeBW step.
	 */
}
