// SPDX-License-Identifier: GPL-2.0
/*
 * hystart.c: HyStart, and traditional slow start (no exit test at all).
 *
 * HyStart looks for two signs that the pipe is full, every round:
 *  - ACK train: ACKs arriving back to back (within hs_ack_delta) for longer
 *    than half the min RTT mean the bottleneck is already busy for half an
 *    RTT per round; doubling again would overflow its queue.
 *  - delay: the smallest RTT among the round's first samples exceeds the
 *    connection's minimum by minRTT/8 (clamped to 4..16 ms): a queue builds.
 *
 * The two tests are shared: SUSS runs them on its blue ACKs, the standard
 * start of the Blitzstart comparison runs HyStart as it is.
 *
 *   slow start --train longer than the threshold--> exit (ACK_TRAIN)
 *        '------round min RTT above minRTT + thresh--> exit (DELAY)
 */
#include "ssvariant.h"

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

/* When HyStart's round started: the core's round, or the variant's own. */
static u32 hystart_round_start_us(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->hystart_round_start_us ? ops->hystart_round_start_us(st) : st->rnd.start_us;
}

/* Length of the ACK train so far, scaled by 2^scale (SUSS: whole train from its blue part). */
bool ss_hystart_train_too_long(struct sscore_state *st, const struct ss_params *p,
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
bool ss_hystart_delay_increased(struct sscore_state *st, const struct ss_params *p,
				const struct ss_ack *ack)
{
	struct ss_round *r = &st->rnd;
	u32 thresh;

	if (!ss_rtt_valid(ack))
		return false;
	r->round_min_rtt_us = ss_min(r->round_min_rtt_us, ack->rtt_us ? ack->rtt_us : 1);
	if (r->samples < p->hs_min_samples) {
		r->samples++;
		return false;
	}
	thresh = ss_clamp(r->min_rtt_us >> 3, p->hs_delay_min_us, p->hs_delay_max_us);
	return r->round_min_rtt_us > r->min_rtt_us + thresh;
}

void ss_hystart_update(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		       struct ss_win *w, struct ss_pacing_plan *plan)
{
	const struct ss_start_ops *ops = ss_ops(st);

	if (w->cwnd < p->hs_low_window)
		return;
	if (ops->hystart_round_check)
		ops->hystart_round_check(st, ack);
	if (ss_hystart_train_too_long(st, p, ack, 0))
		ss_exit_slow_start(st, w, SS_EXIT_ACK_TRAIN);
	else if (ss_hystart_delay_increased(st, p, ack))
		ss_exit_slow_start(st, w, SS_EXIT_DELAY);
}

/* cubic_ss: doubling until the first loss. */
const struct ss_start_ops ss_traditional_ops = {
	.growth = &ss_cubic_growth,
};

/* cubic_hs: HyStart's exits, then CUBIC (meant to match the kernel's cubic). */
const struct ss_start_ops ss_hystart_ops = {
	.growth = &ss_cubic_growth,
	.slow_start_ack = ss_hystart_update,
};
