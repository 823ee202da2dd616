// SPDX-License-Identifier: GPL-2.0
/*
 * reno.c: NewReno's window rules after slow start (struct ss_growth_ops),
 * for the Astart paper's family.
 */
#include "ssvariant.h"

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
