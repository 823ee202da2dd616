// SPDX-License-Identifier: GPL-2.0
/*
 * reno.c: NewReno's window rules after slow start (struct ss_growth_ops),
 * for the Astart paper's family.
 *
 * RFC 5681 and RFC 6582 as Linux's reno applies them: +1 packet per cwnd
 * packets acked in congestion avoidance (the kernel's additive increase,
 * counted in the socket's snd_cwnd_cnt), half of cwnd after a loss (of cwnd,
 * not FlightSize, as Linux's reno).
 */
#include "ssvariant.h"

static void reno_avoid(struct sscore_state *st, const struct ss_ack *ack, u32 acked, struct ss_win *w)
{
	ss_additive_increase(w, ss_max(w->cwnd, 1), acked);
}

/* The start-up ends at the first loss (Astart: "switch to congestion
 * avoidance"); only a timeout re-arms it. */
static u32 reno_reduce(struct sscore_state *st, struct ss_win *w)
{
	st->rnd.found = 1;
	st->rnd.exit_cause = SS_EXIT_LOSS;
	return ss_max(w->cwnd / 2, 2);
}

const struct ss_growth_ops ss_reno_growth = {
	.avoid = reno_avoid,
	.reduce = reno_reduce,
};
