// SPDX-License-Identifier: GPL-2.0
/*
 * suss_g2.c: cubic_suss_g2, SUSS with its growth factor held at 2.
 *
 * Everything of SUSS's runs (its rounds, blue trains, dtB, HyStart on the
 * blue ACKs, the version of suss_version, its trace events) except the
 * jump: every round's decision is G = 2 (SS_EV_GROWTH c = SUSS_NO_DISALLOWED),
 * so no red packets are ever paced and cwnd doubles as in plain slow start.
 * It separates what SUSS's acceleration does from what its measuring does,
 * on the same path and the same ACKs.
 */
#include "suss_hooks.h"

static void suss_g2_init(struct sscore_state *st, const struct ss_params *p, unsigned int version,
			 u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	ss_suss_init(st, p, version, now_us, snd_nxt, cwnd, mss);
	/* suss_growth returns 2 from the first round on (and SUSS stays on). */
	st->suss.growth_allowed = 0;
}

const struct ss_start_ops ss_suss_g2_ops = {
	.init = suss_g2_init,
	SS_SUSS_HOOKS
};
