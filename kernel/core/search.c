// SPDX-License-Identifier: GPL-2.0
/*
 * search.c: cubic_search, SEARCH (Slow start Exit At Right CHokepoint;
 * Chung, Kachooei, Li and Claypool), then Linux's CUBIC.  Two versions:
 * 3.0, the authors' June 2024 draft, and 4.0, its drafts -09 and -10 as far
 * as their changes are known.  Written from those texts; docs/starts.md
 * says which fact came from where and every choice they leave open.
 *
 * The model.  In slow start the bytes delivered each RTT double, until the
 * chokepoint, where they stop growing.  SEARCH compares what was delivered
 * over a recent stretch of time (the window, 3.5 initial RTTs, long enough
 * to ride out the RTT cycles of satellite and cellular links) with what the
 * same stretch one RTT earlier promised: twice what it delivered (3.0), or
 * what it sent (4.0).  When the current falls short of that by THRESH, the
 * path is at capacity and slow start ends.
 *
 *   Bins.  Time from the start is cut into bins of BIN = WINDOW / W.  An
 *   ACK after the current bin's end closes it (and any it skipped, with 0
 *   bytes) and records in the bin it lands in the bytes acked (snd_una's
 *   advance) and sent (snd_nxt's) since the last closing.  A window is W
 *   bins.
 *
 *   One RTT ago.  The latest RTT sample is k bins and a fraction f of a bin
 *   (the latest, not the minimum: what one RTT ago is now).  The window one
 *   RTT ago ends k + f bins back: whole bins between its ends, and of its
 *   end bins the share that lies inside it:
 *
 *       bin:    [i-W]   [i-W+1 ... i-1]   [i]    ...   [curr]
 *       share:    f          all          1 - f        (i = curr - k)
 *
 *   No decision until i >= W (a whole window lies behind it), nor when k >
 *   EXTRA_BINS (the RTT has grown past what the bins keep).
 *
 *   The check, once per closed bin while in slow start:
 *
 *       current  = acked in the last W bins
 *       expected = 2 x acked in the window one RTT ago      (3.0)
 *                  sent in the window one RTT ago           (4.0)
 *       exit when (expected - current) / expected >= THRESH
 *
 *   The exit: ssthresh = cwnd, and CUBIC's congestion avoidance.  Before
 *   it, 3.0 rolls cwnd back by the bytes acked in the last two initial RTTs
 *   of bins (its test fires about two RTTs past the chokepoint; what was
 *   sent meanwhile is queue), not below the initial window.  4.0 drains:
 *   cwnd falls by one packet for every two acked until it is down to the
 *   bytes acked over the last initial RTT (past the chokepoint, its rate
 *   times the empty path's RTT: the BDP without a queue), and then slow
 *   start ends there.  search_exit_only: the exit alone.
 *
 *     searching --THRESH passed--> (3.0: cwnd rolled back) CUBIC
 *     searching --THRESH passed--> draining (4.0) --cwnd at target--> CUBIC
 *     searching --loss--> CUBIC's reduction; no check while ssthresh is
 *                         finite (SEARCH resumes if the stack undoes it)
 *     draining --loss--> CUBIC's reduction
 *     any --RTO--> plain slow start, SEARCH off for good
 *
 * Units: bytes in the bins (a bin holds far less than 4 GB); a window one
 * RTT ago in 1/1024 bytes (f in 1/1024 of a bin); windows in packets.
 */
#include "ssvariant.h"

#define SEARCH_FRAC_SHIFT 10
#define SEARCH_FRAC_ONE (1U << SEARCH_FRAC_SHIFT)
/* The draft's THRESH for each version, percent. */
#define SEARCH3_THRESH_PCT 35U
#define SEARCH4_THRESH_PCT 26U
/* The kernel's TCP_INFINITE_SSTHRESH: ssthresh until the first reduction
 * (and again if the stack undoes it). */
#define SEARCH_NO_SSTHRESH 0x7fffffffU
/* Bins a connection may count before SEARCH stops (the index stays far
 * from overflowing; 2^30 bins of even 35 us are 10 hours of slow start). */
#define SEARCH_MAX_IDX (1 << 30)

enum ss_search_phase {
	SEARCH_SEARCHING,	/* bins kept, the check on each closed bin */
	SEARCH_DRAINING,	/* 4.0: the exit decided, cwnd coming down */
	SEARCH_DONE,		/* CUBIC's rules from here */
};

bool ss_search_exceeds(u64 expected, u64 delivered, u32 thresh_pct)
{
	if (!expected || delivered >= expected)
		return false;
	return (expected - delivered) * 100 >= expected * thresh_pct;
}

static u32 search_bin(const u32 *ring, s32 idx)
{
	return ring[(u32)idx & (SEARCH_RING - 1)];
}

/* Bytes in bins @from..@to of @ring, each whole. */
static u64 search_sum(const u32 *ring, s32 from, s32 to)
{
	u64 sum = 0;
	s32 i;

	for (i = from; i <= to; i++)
		sum += search_bin(ring, i);
	return sum;
}

/* The draft's sum_bins(@first, @last, @frac): the bins between, whole; of
 * bin @first the share @frac, of bin @last the rest.  1/1024 bytes. */
static u64 search_window(const u32 *ring, s32 first, s32 last, u32 frac)
{
	return (search_sum(ring, first + 1, last - 1) << SEARCH_FRAC_SHIFT) +
	       (u64)search_bin(ring, first) * frac +
	       (u64)search_bin(ring, last) * (SEARCH_FRAC_ONE - frac);
}

/* The share of a bin left over when @us is cut into whole bins, 1/1024. */
static u32 search_fraction(const struct ss_search *s, u32 us)
{
	return (u32)ss_div64((u64)(us % s->bin_us) << SEARCH_FRAC_SHIFT, s->bin_us);
}

/* INITIAL_RTT known: the bins, from @start_us. */
static void search_lay_bins(struct ss_search *s, u32 rtt_us, u32 start_us)
{
	u64 bin = ss_div64((u64)rtt_us * s->window_x10, 10U * s->w);

	s->initial_rtt_us = rtt_us ? rtt_us : 1;
	s->bin_us = bin ? ss_sat32(bin) : 1;
	s->bin_end_us = start_us + s->bin_us;
}

/* The draft's update_bins(): close the current bin and any skipped (no
 * ACK came in them: 0 bytes); what was acked and sent since the last
 * closing goes into the bin @ack lands in. */
static void search_close_bins(struct ss_search *s, const struct ss_ack *ack)
{
	u32 passed = (ack->now_us - s->bin_end_us) / s->bin_us + 1;
	u32 skipped = ss_min(passed - 1, SEARCH_RING), k;
	u32 at;

	for (k = 1; k <= skipped; k++) {
		at = (u32)(s->curr_idx + (s32)k) & (SEARCH_RING - 1);
		s->acked[at] = 0;
		s->sent[at] = 0;
	}
	s->bin_end_us += (u32)((u64)passed * s->bin_us);
	s->curr_idx += (s32)ss_min(passed, SEARCH_MAX_IDX);
	at = (u32)s->curr_idx & (SEARCH_RING - 1);
	s->acked[at] = ack->snd_una - s->una_mark;
	s->sent[at] = ack->snd_nxt - s->nxt_mark;
	s->una_mark = ack->snd_una;
	s->nxt_mark = ack->snd_nxt;
}

/* 4.0's drain target: packets acked over the last initial RTT, n whole bins
 * and of the bin before them the leftover fraction; not below the initial
 * window. */
static u32 search_drain_target(const struct ss_search *s, u32 mss)
{
	s32 n = (s32)ss_min(s->initial_rtt_us / s->bin_us, (u32)s->curr_idx);
	u64 bytes = (search_sum(s->acked, s->curr_idx - n + 1, s->curr_idx) << SEARCH_FRAC_SHIFT) +
		    (u64)search_bin(s->acked, s->curr_idx - n) * search_fraction(s, s->initial_rtt_us);

	return ss_max(ss_sat32(ss_div64(bytes >> SEARCH_FRAC_SHIFT, mss)), s->iw);
}

/* The exit decided on @ack: the version's exit, or the exit alone. */
static void search_exit(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_search *s = &st->search;
	u32 cwnd = w->cwnd, back, pkts;

	s->exit_cwnd = cwnd;
	if (s->exit_only) {
		s->phase = SEARCH_DONE;
		ss_exit_slow_start(st, w, SS_EXIT_SEARCH);
		return;
	}
	if (s->version == 3) {
		/* cong_idx = curr_idx - 2 x INITIAL_RTT / BIN: the bins after it. */
		back = ss_min(2 * s->initial_rtt_us / s->bin_us, (u32)s->curr_idx + 1);
		pkts = ss_sat32(ss_div64(search_sum(s->acked, s->curr_idx - (s32)back + 1, s->curr_idx),
					 ack->mss));
		w->cwnd = cwnd > s->iw + pkts ? cwnd - pkts : ss_min(cwnd, s->iw);
		s->phase = SEARCH_DONE;
		ss_exit_slow_start_from(st, w, SS_EXIT_SEARCH, cwnd);
		return;
	}
	s->target = search_drain_target(s, ack->mss);
	if (s->target >= cwnd) {
		s->phase = SEARCH_DONE;
		ss_exit_slow_start(st, w, SS_EXIT_SEARCH);
		return;
	}
	/* No more exit tests; ssthresh stays infinite until the drain ends. */
	s->phase = SEARCH_DRAINING;
	st->rnd.found = 1;
	st->rnd.exit_cause = SS_EXIT_SEARCH;
	ss_emit(st, SS_EV_ESTIMATE,
		ss_sat32(ss_div64((u64)s->target * ack->mss * SS_USEC_PER_SEC, s->initial_rtt_us)),
		s->initial_rtt_us, s->target, NULL);
}

/* The check on a closed bin (the draft's lines 12-21). */
static void search_check(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_search *s = &st->search;
	u32 k, frac;
	u64 delivered, expected;

	if (s->rtt_us == SS_RTT_UNKNOWN)
		return;
	k = s->rtt_us / s->bin_us;
	if (k > s->extra || s->curr_idx - (s32)k < (s32)s->w)
		return;
	frac = s->interpolate ? search_fraction(s, s->rtt_us) : 0;
	delivered = search_window(s->acked, s->curr_idx - s->w, s->curr_idx, 0);
	expected = search_window(s->version == 4 ? s->sent : s->acked,
				 s->curr_idx - (s32)k - s->w, s->curr_idx - (s32)k, frac);
	if (s->version == 3)
		expected *= 2;
	ss_emit(st, SS_EV_SEARCH, (u32)s->curr_idx, ss_sat32(delivered >> SEARCH_FRAC_SHIFT),
		ss_sat32(expected >> SEARCH_FRAC_SHIFT), NULL);
	if (ss_search_exceeds(expected, delivered, s->thresh_pct))
		search_exit(st, ack, w);
}

static void search_init(struct sscore_state *st, const struct ss_params *p, unsigned int pin,
			u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	struct ss_search *s = &st->search;

	if (pin == SEARCH_VER_3 || pin == SEARCH_VER_4)
		s->version = pin == SEARCH_VER_4 ? 4 : 3;
	else
		s->version = p->search_version == 4 ? 4 : 3;
	s->w = ss_clamp(p->search_bins, 1, SEARCH_MAX_W);
	s->extra = ss_min(p->search_extra_bins, SEARCH_MAX_EXTRA);
	s->window_x10 = ss_clamp(p->search_window_x10, 1, 0xffff);
	if (p->search_thresh_pct)
		s->thresh_pct = ss_min(p->search_thresh_pct, 99);
	else
		s->thresh_pct = s->version == 4 ? SEARCH4_THRESH_PCT : SEARCH3_THRESH_PCT;
	s->exit_only = !!p->search_exit_only;
	s->interpolate = !!p->search_interpolate;
	s->curr_idx = -1;
	s->rtt_us = SS_RTT_UNKNOWN;
	s->bin_end_us = now_us;		/* the bins start here once INITIAL_RTT is known */
	s->una_mark = snd_nxt;
	s->nxt_mark = snd_nxt;
	s->iw = cwnd;
}

/* The handshake's RTT is the connection's first: INITIAL_RTT, and the bins
 * from the connection's start. */
static void search_handshake(struct sscore_state *st, const struct ss_params *p, u32 rtt_us, u32 mss)
{
	struct ss_search *s = &st->search;

	if (rtt_us != SS_RTT_UNKNOWN && rtt_us && !s->initial_rtt_us)
		search_lay_bins(s, rtt_us, s->bin_end_us);
}

static void search_any_ack(struct sscore_state *st, const struct ss_params *p,
			   const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_search *s = &st->search;

	if (s->phase != SEARCH_SEARCHING)
		return;
	if (ss_rtt_valid(ack)) {
		s->rtt_us = ack->rtt_us;
		/* No RTT from the handshake: the first ACK's, bins from here. */
		if (!s->initial_rtt_us)
			search_lay_bins(s, ack->rtt_us, ack->now_us);
	}
	if (!s->initial_rtt_us || (s32)(ack->now_us - s->bin_end_us) <= 0)
		return;
	search_close_bins(s, ack);
	if (s->curr_idx >= SEARCH_MAX_IDX) {
		s->phase = SEARCH_DONE;
		return;
	}
	/* Slow start as the draft means it: no loss yet.  In a recovery the
	 * stack's cwnd falls below the new ssthresh, which is no slow start. */
	if (!st->rnd.found && w->ssthresh >= SEARCH_NO_SSTHRESH && w->cwnd < w->ssthresh)
		search_check(st, ack, w);
}

/* Below ssthresh: slow start's growth, or 4.0's drain. */
static u32 search_grow(struct sscore_state *st, const struct ss_params *p,
		       const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_search *s = &st->search;
	u32 credit, down;

	if (s->phase != SEARCH_DRAINING)
		return ss_slow_start(w, ack->acked);
	credit = s->drain_credit + ack->acked;
	down = credit / 2;
	s->drain_credit = credit % 2;
	w->cwnd = w->cwnd > s->target + down ? w->cwnd - down : s->target;
	if (w->cwnd <= s->target) {
		s->phase = SEARCH_DONE;
		ss_exit_slow_start_from(st, w, SS_EXIT_SEARCH, s->exit_cwnd);
	}
	return 0;
}

/* A loss in the drain ends it: CUBIC's reduction takes over. */
static void search_loss(struct sscore_state *st, u32 in_flight, struct ss_win *w)
{
	if (st->search.phase == SEARCH_DRAINING)
		st->search.phase = SEARCH_DONE;
}

/* After an RTO, plain slow start, and SEARCH does not run again. */
static bool search_rto(struct sscore_state *st, u32 cwnd_before)
{
	st->search.phase = SEARCH_DONE;
	st->rnd.found = 1;
	if (st->rnd.exit_cause == SS_EXIT_NONE)
		st->rnd.exit_cause = SS_EXIT_LOSS;
	return false;
}

/* Traced state: 2 while draining. */
static u8 search_trace_state(const struct sscore_state *st)
{
	if (st->search.phase == SEARCH_DRAINING)
		return 2;
	return st->rnd.found ? 1 : 0;
}

/* cubic_search, cubic_search3, cubic_search4 */
const struct ss_start_ops ss_search_ops = {
	.growth = &ss_cubic_growth,
	.init = search_init,
	.handshake = search_handshake,
	.any_ack = search_any_ack,
	.grow = search_grow,
	.loss = search_loss,
	.rto = search_rto,
	.trace_state = search_trace_state,
};
