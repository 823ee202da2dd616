// SPDX-License-Identifier: GPL-2.0
/*
 * hystart.c: HyStart, and traditional slow start (no exit test at all).
 *
 * HyStart looks for two signs that the pipe is full, every round:
 *  - ACK train: ACKs arriving back to back (within hs_ack_delta) for longer
 *    than half the min RTT mean the bottleneck is already busy for half an
 *    RTT per round; doubling again would overflow its queue.
 *  - delay: the smallest RTT of the round so far, once it has 8 samples,
 *    exceeds the connection's minimum by minRTT/8 (clamped to 4..16 ms): a
 *    queue builds.
 *
 * cubic_hs is Linux's HyStart, decision for decision (the testbed checks it
 * against the kernel's `cubic`): the tests run only on ACKs that carry an
 * RTT sample CUBIC takes, in slow start, with cwnd >= hs_low_window, and
 * HyStart's round is its own (struct ss_hystart), started when such an ACK
 * finds snd_una past the round's end.  Where that check sits is the one
 * thing that changed between the paper's kernel and today's
 * (enum ss_hystart_rounds, module parameter hs_round_fix):
 *
 *   Linux 5.19 (the paper's):   sample -> cwnd >= low window? -> round check -> tests
 *   Linux 6.1.192 (2025 fix):   sample -> round check -> cwnd >= low window? -> tests
 *
 * In 5.19 a round that began below the low window is noticed only at the
 * first ACK at or above it, so its start, and the train measured from it,
 * come late.
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

void ss_hystart_start_round(struct sscore_state *st, const struct ss_ack *ack)
{
	struct ss_hystart *h = &st->hs;

	h->end_seq = ack->snd_nxt;
	h->start_us = ack->now_us;
	h->last_ack_us = ack->now_us;
	h->round_min_rtt_us = SS_RTT_UNKNOWN;
	h->samples = 0;
}

void ss_hystart_round_check(struct sscore_state *st, const struct ss_ack *ack)
{
	if (ss_after(ack->snd_una, st->hs.end_seq))
		ss_hystart_start_round(st, ack);
}

/* Length of the ACK train so far, scaled by 2^scale (SUSS: whole train from its blue part). */
bool ss_hystart_train_too_long(struct sscore_state *st, const struct ss_params *p,
			       const struct ss_ack *ack, u32 scale)
{
	struct ss_hystart *h = &st->hs;
	u64 thresh, train;

	if ((s32)(ack->now_us - h->last_ack_us) > (s32)p->hs_ack_delta_us)
		return false;	/* not part of the train */
	h->last_ack_us = ack->now_us;
	thresh = (u64)st->rnd.min_rtt_us + hystart_ack_delay(ack);
	if (!ack->paced)
		thresh >>= 1;	/* a paced train is legitimately spread up to RTT/2 */
	train = (u64)ss_elapsed(ack->now_us, h->start_us) << scale;
	return train > thresh;
}

/* The round's minimum RTT is over all its samples so far; the test starts
 * with the (hs_min_samples + 1)th sample (as Linux's HyStart). */
bool ss_hystart_delay_increased(struct sscore_state *st, const struct ss_params *p,
				const struct ss_ack *ack)
{
	struct ss_hystart *h = &st->hs;
	u32 min_rtt = st->rnd.min_rtt_us;
	u32 thresh;

	if (!ss_rtt_valid(ack))
		return false;
	h->round_min_rtt_us = ss_min(h->round_min_rtt_us, ack->rtt_us ? ack->rtt_us : 1);
	if (h->samples < p->hs_min_samples) {
		h->samples++;
		return false;
	}
	thresh = ss_clamp(min_rtt >> 3, p->hs_delay_min_us, p->hs_delay_max_us);
	return h->round_min_rtt_us > min_rtt + thresh;
}

void ss_hystart_update(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		       struct ss_win *w, struct ss_pacing_plan *plan)
{
	u8 rounds = st->hs.rounds;

	/* Linux's HyStart sees only the ACKs whose RTT sample CUBIC takes. */
	if (!ss_rtt_sample_taken(st, ack))
		return;
	if (rounds == SS_HS_ROUNDS_LINUX)
		ss_hystart_round_check(st, ack);
	if (w->cwnd < p->hs_low_window)
		return;
	if (rounds == SS_HS_ROUNDS_LINUX_519)
		ss_hystart_round_check(st, ack);
	if (!st->hs.no_train && ss_hystart_train_too_long(st, p, ack, 0))
		ss_exit_slow_start(st, w, SS_EXIT_ACK_TRAIN);
	else if (ss_hystart_delay_increased(st, p, ack))
		ss_exit_slow_start(st, w, SS_EXIT_DELAY);
}

/* cubic_hs's rounds: Linux 6.1.192's, or 5.19's (hs_round_fix = 0). */
static void hystart_init(struct sscore_state *st, const struct ss_params *p, unsigned int version,
			 u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	st->hs.rounds = p->hs_round_fix ? SS_HS_ROUNDS_LINUX : SS_HS_ROUNDS_LINUX_519;
}

/* cubic_ss: doubling until the first loss. */
const struct ss_start_ops ss_traditional_ops = {
	.growth = &ss_cubic_growth,
};

/* cubic_hs: HyStart's exits, then CUBIC: Linux's `cubic`, in its 6.1.192 or its 5.19 rounds. */
const struct ss_start_ops ss_hystart_ops = {
	.growth = &ss_cubic_growth,
	.init = hystart_init,
	.slow_start_ack = ss_hystart_update,
};
