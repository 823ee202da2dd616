/* SPDX-License-Identifier: GPL-2.0 */
/*
 * suss_hooks.h: SUSS's hooks (suss.c), for the variants built on SUSS.
 *
 * A variant that is SUSS with one thing changed (suss_g2.c: G never above 2)
 * is an ops table of its own made of SS_SUSS_HOOKS and its own init, which
 * calls ss_suss_init() and then changes what it changes.
 */
#ifndef SUSS_HOOKS_H
#define SUSS_HOOKS_H

#include "ssvariant.h"

void ss_suss_init(struct sscore_state *st, const struct ss_params *p, unsigned int version,
		  u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss);
void ss_suss_new_round(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w);
void ss_suss_update(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		    struct ss_win *w, struct ss_pacing_plan *plan);
u32 ss_suss_grow(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		 struct ss_win *w);
void ss_suss_loss(struct sscore_state *st, u32 in_flight, struct ss_win *w);
bool ss_suss_rto(struct sscore_state *st, u32 cwnd_before);
u32 ss_suss_peer_window(const struct sscore_state *st, u32 snd_wnd, u32 mss);
enum ss_window_rule ss_suss_window_rule(const struct sscore_state *st);
bool ss_suss_sample_before_round(const struct sscore_state *st);
bool ss_suss_ignore_peer_window(const struct sscore_state *st, const struct ss_params *p);
bool ss_suss_pacing_now(const struct sscore_state *st);
bool ss_suss_sent_window_full(struct sscore_state *st, struct ss_win *w);
u8 ss_suss_trace_state(const struct sscore_state *st);

/* Every hook of SUSS's but .init. */
#define SS_SUSS_HOOKS							\
	.growth = &ss_cubic_growth,					\
	.round_begin = ss_suss_new_round,				\
	.sample_before_round = ss_suss_sample_before_round,		\
	.slow_start_ack = ss_suss_update,				\
	.grow = ss_suss_grow,						\
	.loss = ss_suss_loss,						\
	.rto = ss_suss_rto,						\
	.peer_window = ss_suss_peer_window,				\
	.window_rule = ss_suss_window_rule,				\
	.ignore_peer_window = ss_suss_ignore_peer_window,		\
	.pacing = ss_suss_pacing_now,					\
	.sent_window_full = ss_suss_sent_window_full,			\
	.trace_state = ss_suss_trace_state,

#endif /* SUSS_HOOKS_H */
