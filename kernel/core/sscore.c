// SPDX-License-Identifier: GPL-2.0
/*
 * sscore.c: what every connection has, whatever its start: rounds, RTT
 * samples and the entry points.  The window rules after slow start are
 * cubic.c (CUBIC) and reno.c (NewReno, for the Astart paper's family); the
 * starts are ops tables in their own files (ssvariant.h), each registered
 * by its header's entry (variants.h): hystart.c (traditional, HyStart),
 * hystartpp.c, suss.c, suss_g2.c, ratestart.c (Astart, Hoe, the standard
 * start, Blitzstart), rapidstart.c (Rapid Start), search.c (SEARCH).  See
 * sscore.h for the model.
 *
 * Per ACK the kernel calls, in order:
 *   ss_on_ack()      RTT sample, round bookkeeping, exit tests, SUSS plans;
 *   ss_cong_avoid()  cwnd growth (not called in Recovery/CWR).
 * On loss: ss_ssthresh(); on RTO additionally ss_on_rto().
 */
#include "ssvariant.h"

const struct ss_params ss_default_params = {
#define SS_PARAMS(list) list(SS_PARAM_DEFAULT)
#include "variants.h"
#undef SS_PARAMS
};

static void trace(const struct sscore_state *st, enum ss_event_type type,
		  u32 a, u32 b, u32 c, const struct ss_pacing_plan *plan)
{
	struct ss_event ev = { .type = type, .a = a, .b = b, .c = c, .plan = plan };

	ss_trace_event(st, &ev);
}

void ss_emit(const struct sscore_state *st, enum ss_event_type type, u32 a, u32 b, u32 c,
	     const struct ss_pacing_plan *plan)
{
	trace(st, type, a, b, c, plan);
}

/* ------------------------------------------------------------------------
 * Rounds and RTT samples
 */

static void take_rtt_sample(struct sscore_state *st, const struct ss_ack *ack)
{
	struct ss_round *r = &st->rnd;
	u32 rtt = ack->rtt_us ? ack->rtt_us : 1;

	if (r->min_rtt_us == SS_RTT_UNKNOWN || rtt < r->min_rtt_us) {
		r->min_rtt_us = rtt;
		r->min_rtt_round = r->round;
	}
}

bool ss_rtt_sample_taken(const struct sscore_state *st, const struct ss_ack *ack)
{
	const struct ss_growth_ops *g = ss_ops(st)->growth;

	return ss_rtt_valid(ack) && !(g->rtt_quiet && g->rtt_quiet(st, ack));
}

/* Slow start ends: ssthresh = cwnd.  @cwnd_then: the window that ended it,
 * before any cut to what is in flight (the event's b; c is ssthresh). */
void ss_exit_slow_start_from(struct sscore_state *st, struct ss_win *w, enum ss_exit_cause cause,
			     u32 cwnd_then)
{
	st->rnd.found = 1;
	st->rnd.exit_cause = cause;
	w->ssthresh = w->cwnd;
	trace(st, SS_EV_EXIT, cause, cwnd_then, w->ssthresh, 0);
}

/* ------------------------------------------------------------------------
 * The registry (variants.h) and the entry points
 */

/* A number no variant has is NULL here, and ss_init runs it as traditional. */
const struct ss_start_ops *const ss_variant_ops[SS_NR_VARIANTS] = {
#define SS_VARIANT(id, number, ops) [SS_##id] = &ops,
#include "variants.h"
#undef SS_VARIANT
};

/* The trace and the connection's state keep a variant's number in a u8. */
_Static_assert(SS_NR_VARIANTS <= 256, "a variant's number fits in a u8");

/* A variant's number is in every trace line: two variants of one number
 * would read alike, so two alike are two equal case labels here, which the
 * compiler refuses. */
static inline void ss_variant_numbers_unique(unsigned int variant)
{
	switch (variant) {
#define SS_VARIANT(id, number, ops) case (number): break;
#include "variants.h"
#undef SS_VARIANT
	}
}

/* The names the trace prints, the core's events' and each start's (sscore.h). */
static const char *const ss_event_names[SS_NR_EVENTS] = {
#define SS_EVENT(id, name, fields) [SS_EV_##id] = name,
#define SS_EVENTS(list) list(SS_EVENT)
	SS_EVENTS(SS_CORE_EVENTS)
#include "variants.h"
#undef SS_EVENTS
#undef SS_EVENT
};

const char *ss_event_name(unsigned int type)
{
	return type < SS_NR_EVENTS && ss_event_names[type] ? ss_event_names[type] : "?";
}

/* An exit cause's number is in every trace: two causes of one number would
 * read alike, so two alike are two equal case labels here, which the
 * compiler refuses. */
static inline void ss_exit_numbers_unique(unsigned int cause)
{
	switch (cause) {
#define SS_EXIT(id, number, what) case (number): break;
#define SS_EXITS(list) list(SS_EXIT)
	SS_EXITS(SS_CORE_EXITS)
#include "variants.h"
#undef SS_EXITS
#undef SS_EXIT
	}
}

void ss_init(struct sscore_state *st, const struct ss_params *p, enum ss_variant v,
	     unsigned int version, u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	const struct ss_start_ops *ops;

	*st = (struct sscore_state){ 0 };
	st->variant = v < SS_NR_VARIANTS && ss_variant_ops[v] ? v : SS_TRADITIONAL;
	st->rnd.end_seq = snd_nxt;
	st->rnd.start_us = now_us;
	st->rnd.round = 1;
	st->rnd.min_rtt_us = SS_RTT_UNKNOWN;
	ss_hystart_start_round(st, &(struct ss_ack){ .now_us = now_us, .snd_nxt = snd_nxt });
	ops = ss_ops(st);
	if (ops->init)
		ops->init(st, p, version, now_us, snd_nxt, cwnd, mss);
}

void ss_init_window(struct sscore_state *st, const struct ss_params *p, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);

	if (!ops->first_window || !ops->first_window(st, p, w))
		return;
	trace(st, SS_EV_START, w->cwnd, w->ssthresh, 0, 0);
}

static void start_round(struct sscore_state *st, const struct ss_params *p,
			const struct ss_ack *ack, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);
	struct ss_round *r = &st->rnd;

	if (ops->round_end)
		ops->round_end(st, p, w);
	if (r->round < 0xffff)
		r->round++;
	r->end_seq = ack->snd_nxt;
	r->start_us = ack->now_us;
	if (st->hs.rounds == SS_HS_ROUNDS_CORE)
		ss_hystart_start_round(st, ack);
	if (ops->round_begin)
		ops->round_begin(st, ack, w);
	trace(st, SS_EV_NEW_ROUND, r->round, r->end_seq, w->cwnd, 0);
}

void ss_on_ack(struct sscore_state *st, const struct ss_params *p,
	       const struct ss_ack *ack, struct ss_win *w,
	       struct ss_pacing_plan *plan)
{
	const struct ss_start_ops *ops = ss_ops(st);
	struct ss_round *r = &st->rnd;
	bool sample_first = ops->sample_before_round && ops->sample_before_round(st);
	bool in_slow_start;

	plan->start = false;
	in_slow_start = !r->found && w->cwnd < w->ssthresh;

	/* The round check runs before any low-window test (the 2025 fix to
	 * Linux's HyStart: otherwise a round that starts below the low window
	 * is never closed, and the first detection uses a stale start).  It
	 * runs before the RTT sample, which belongs to the new round, unless
	 * the start takes it first (the SUSS code versions).  (HyStart's own
	 * round, when it is not this one, is HyStart's: hystart.c.) */

	if (sample_first && ss_rtt_sample_taken(st, ack))
		take_rtt_sample(st, ack);
	if ((in_slow_start || ops->counts_rounds_in_ca) && ss_after(ack->snd_una, r->end_seq))
		start_round(st, p, ack, w);
	if (!sample_first && ss_rtt_sample_taken(st, ack))
		take_rtt_sample(st, ack);
	/* Astart also works at or above ssthresh (its mini linear phases). */
	if (ops->any_ack)
		ops->any_ack(st, p, ack, w);
	if (r->found || w->cwnd >= w->ssthresh)
		return;
	if (ops->slow_start_ack)
		ops->slow_start_ack(st, p, ack, w, plan);
}

u32 ss_slow_start(struct ss_win *w, u32 acked)
{
	u32 room = w->ssthresh > w->cwnd ? w->ssthresh - w->cwnd : 0;
	u32 inc = ss_min(acked, room);

	w->cwnd += inc;
	return acked - inc;
}

void ss_cong_avoid(struct sscore_state *st, const struct ss_params *p,
		   const struct ss_ack *ack, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);
	u32 left = ack->acked;

	if (w->cwnd < w->ssthresh) {
		left = ops->grow ? ops->grow(st, p, ack, w) : ss_slow_start(w, ack->acked);
		if (!left)
			return;
	}
	ops->growth->avoid(st, ack, left, w);
}

u32 ss_ssthresh(struct sscore_state *st, u32 in_flight, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);
	u32 before = w->cwnd;

	if (ops->loss)
		ops->loss(st, in_flight, w);
	/* Slow start now ends because cwnd >= ssthresh, not because an exit
	 * test fired: if the kernel undoes a spurious reduction (restoring an
	 * infinite ssthresh), slow start resumes with its exit tests armed. */
	w->ssthresh = ops->growth->reduce(st, w);
	if (ops->reduce)
		w->ssthresh = ops->reduce(st, w, before, w->ssthresh);
	trace(st, SS_EV_LOSS, before, in_flight, w->ssthresh, 0);
	return w->ssthresh;
}

void ss_handshake(struct sscore_state *st, const struct ss_params *p, u32 rtt_us, u32 mss)
{
	const struct ss_start_ops *ops = ss_ops(st);

	if (ops->handshake)
		ops->handshake(st, p, rtt_us, mss);
}

void ss_on_rto(struct sscore_state *st, u32 cwnd_before, u32 now_us, u32 snd_nxt)
{
	const struct ss_start_ops *ops = ss_ops(st);

	if (ops->growth->rto)
		ops->growth->rto(st);
	/* HyStart's round starts again (Linux's CUBIC restarts it on every RTO). */
	ss_hystart_start_round(st, &(struct ss_ack){ .now_us = now_us, .snd_nxt = snd_nxt });
	if (ops->rto && !ops->rto(st, cwnd_before))
		return;
	/* HyStart re-arms for the slow start that follows a timeout. */
	st->rnd.found = 0;
	st->rnd.exit_cause = SS_EXIT_NONE;
}

void ss_on_idle_restart(struct sscore_state *st, u32 now_ticks, u32 idle_ticks)
{
	const struct ss_growth_ops *g = ss_ops(st)->growth;

	if (g->idle)
		g->idle(st, now_ticks, idle_ticks);
}

bool ss_acks_in_loss(const struct sscore_state *st)
{
	return ss_ops(st)->growth->acks_in_loss;
}

/* ------------------------------------------------------------------------
 * What the glue asks of a connection's start
 */

u32 ss_peer_window(const struct sscore_state *st, u32 snd_wnd, u32 mss)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->peer_window ? ops->peer_window(st, snd_wnd, mss) : snd_wnd;
}

enum ss_window_rule ss_window_rule(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->window_rule ? ops->window_rule(st) : SS_WINDOW_NONE;
}

u32 ss_window_on_arrival(struct sscore_state *st, u32 snd_wnd, u32 mss)
{
	struct ss_peer_wnd *pw = &st->peer;

	/* What the kernel holds is the peer's own window unless it is what we
	 * set last (then the ACK carried no new one to apply the rule to). */
	if (snd_wnd != pw->set || !pw->set)
		pw->raw = snd_wnd;
	pw->set = ss_peer_window(st, pw->raw, mss);
	return pw->set;
}

bool ss_ignore_peer_window(const struct sscore_state *st, const struct ss_params *p)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->ignore_peer_window && ops->ignore_peer_window(st, p);
}

bool ss_suss_pacing(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->pacing && ops->pacing(st);
}

bool ss_sent_window_full(struct sscore_state *st, struct ss_win *w)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->sent_window_full && ops->sent_window_full(st, w);
}

u32 ss_first_window_pace_rate(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	return ops->first_window_pace_rate ? ops->first_window_pace_rate(st) : 0;
}

u8 ss_trace_state(const struct sscore_state *st)
{
	const struct ss_start_ops *ops = ss_ops(st);

	if (ops->trace_state)
		return ops->trace_state(st);
	return st->rnd.found ? 1 : 0;
}

bool ss_paced_socket(const struct sscore_state *st)
{
	return ss_ops(st)->paced_socket;
}

bool ss_takes_hint(const struct sscore_state *st)
{
	return ss_ops(st)->takes_hint;
}
