// SPDX-License-Identifier: GPL-2.0
/*
 * hystartpp.c: HyStart++ (RFC 9406).
 *
 * Compares each round's min RTT with the previous round's.  A rise of
 * RttThresh moves to Conservative Slow Start (growth / 4); if the min RTT
 * falls back below the CSS baseline, slow start resumes; after CSS_ROUNDS
 * rounds of CSS, slow start ends.  Growth per ACK is limited to L packets
 * (8) unless the sender paces.
 *
 *   slow start --round min RTT >= last round's + RttThresh--> CSS
 *   CSS --round min RTT < the CSS baseline--> slow start
 *   CSS --CSS_ROUNDS rounds--> exit (CSS_DONE)
 *   any --RTO--> plain slow start for good (RFC 9406 4.3)
 */
#include "ssvariant.h"

static void hspp_round_end(struct sscore_state *st, const struct ss_params *p, struct ss_win *w)
{
	struct ss_hspp *h = &st->hspp;

	if (st->rnd.found)
		return;
	h->last_round_min_rtt_us = st->hs.round_min_rtt_us;
	if (h->in_css && ++h->css_rounds >= p->hspp_css_rounds)
		ss_exit_slow_start(st, w, SS_EXIT_CSS_DONE);
}

static void hspp_update(struct sscore_state *st, const struct ss_params *p,
			const struct ss_ack *ack, struct ss_win *w, struct ss_pacing_plan *plan)
{
	struct ss_hystart *r = &st->hs;
	struct ss_hspp *h = &st->hspp;
	u16 round = st->rnd.round;
	u32 thresh;

	if (!ss_rtt_valid(ack))
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
			ss_emit(st, SS_EV_CSS, 1, round, h->css_baseline_us, 0);
		}
	} else if (r->round_min_rtt_us < h->css_baseline_us) {
		/* The RTT rise was a spurious: back to slow start. */
		h->in_css = 0;
		h->css_baseline_us = SS_RTT_UNKNOWN;
		ss_emit(st, SS_EV_CSS, 0, round, r->round_min_rtt_us, 0);
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

/* Below ssthresh: HyStart++'s limited growth until it has decided, then slow start's. */
static u32 hspp_slow_start_growth(struct sscore_state *st, const struct ss_params *p,
				  const struct ss_ack *ack, struct ss_win *w)
{
	return st->rnd.found ? ss_slow_start(w, ack->acked) : hspp_grow(st, p, ack, w);
}

static void hspp_init(struct sscore_state *st, const struct ss_params *p, unsigned int version,
		      u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	st->hspp.last_round_min_rtt_us = SS_RTT_UNKNOWN;
	st->hspp.css_baseline_us = SS_RTT_UNKNOWN;
}

/* RFC 9406 4.3: plain slow start after an RTO, for good (no HyStart++ with
 * the state of before the timeout). */
static bool hspp_rto(struct sscore_state *st, u32 cwnd_before)
{
	st->rnd.found = 1;
	st->rnd.exit_cause = SS_EXIT_LOSS;
	return false;
}

/* Traced state: 2 in CSS. */
static u8 hspp_trace_state(const struct sscore_state *st)
{
	if (st->hspp.in_css)
		return 2;
	return st->rnd.found ? 1 : 0;
}

/* cubic_hspp */
const struct ss_start_ops ss_hystartpp_ops = {
	.growth = &ss_cubic_growth,
	.init = hspp_init,
	.round_end = hspp_round_end,
	.slow_start_ack = hspp_update,
	.grow = hspp_slow_start_growth,
	.rto = hspp_rto,
	.trace_state = hspp_trace_state,
};
