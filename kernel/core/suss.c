// SPDX-License-Identifier: GPL-2.0
/*
 * suss.c: SUSS (SIGCOMM'24) on top of HyStart, in three versions.
 *
 * Each round's data train has an ACK-clocked "blue" part, which doubles
 * every round (iw << (round - 1) packets) as in plain slow start, and, in
 * accelerated rounds, a paced "red" part.  When the ACKs of the previous
 * round's blue part are all in, the time they took (dtB) tells how long the
 * whole train takes to cross the bottleneck.  If that, and the RTT trend,
 * say that doubling could continue into the next round, this round's cwnd
 * is quadrupled instead: the extra packets are paced over the part of the
 * RTT that ACK clocking leaves empty, starting after a guard interval.
 *
 *   round r:  |-- blue (ACK-clocked) --|-guard-|== red (paced) ==|-guard-|
 *             ^ round start    blue tail ^                   next round ^
 *
 * State machine (suss.state), each arrow named by the function that takes it:
 *
 *             suss_jump (G = 4 at the blue tail)
 *   CLOCKING ------------------------------------> PACING
 *      ^                                             |
 *      '---------------------------------------------'
 *             ss_suss_new_round (the next round)
 *
 *   CLOCKING --suss_growth (G = 2 in round 2)--> OFF: plain HyStart for good
 *              (ss_suss_rto turns SUSS off too, below 40 packets)
 *
 *   CLOCKING or PACING
 *      --suss_exit (cwnd > the cap suss_train_fired set)--> EXIT_CAP
 *      --suss_exit (HyStart's delay test)-----------------> EXIT_DELAY
 *      --ss_suss_loss (Recovery/CWR)----------------------> REDUCED
 *
 * The versions (sscore.h) share this machine and differ in the arithmetic
 * at the blue tail, in HyStart's rounds, and in what happens after the cap.
 */

#include "suss_hooks.h"

static bool suss_code(const struct sscore_state *st)
{
	return st->version != SUSS_VER_PAPER;
}

void ss_suss_new_round(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;

	if (suss_code(st) && s->cap_set)
		return;	/* theirs: no SUSS decisions after the cap */
	if (s->state == SUSS_PACING && suss_code(st) && !ack->sender_grows) {
		/* Theirs grows cwnd as red packets leave, so at this point it
		 * holds what was sent (all of the limit, unless pacing was cut
		 * short): without a sender that does (patch 0004) we set the
		 * limit at once, and take back here what was not sent, so that
		 * it never leaves as a burst. */
		w->cwnd = ss_min(w->cwnd, ss_max(ss_sat_add(ack->in_flight, ack->acked), 2));
	}
	if (s->state == SUSS_PACING || s->state == SUSS_CLOCKING)
		s->state = SUSS_CLOCKING;
	s->blue_open = s->state == SUSS_CLOCKING;
	s->blue_cnt = 0;
	if (!suss_code(st))
		s->paper.cwnd_round_start = w->cwnd;
}

/* Condition 2 (Eq. 8 with r = rounds since minRTT last fell):
 * (r + 1) moRTT <= (r + 1) minRTT + r minRTT / 8, moRTT HyStart's round
 * minimum RTT. */
static bool suss_rtt_flat(const struct sscore_state *st)
{
	const struct ss_round *r = &st->rnd;
	u64 rounds = (u16)(r->round - r->min_rtt_round);
	u32 mo = st->hs.round_min_rtt_us;

	if (mo == SS_RTT_UNKNOWN)
		return false;
	return (rounds + 1) * mo <= (rounds + 1) * r->min_rtt_us + rounds * (r->min_rtt_us / 8);
}

/* Appendix A, line 3 of Algorithm 1, for looking k rounds ahead. */
static bool suss_ahead_ok(const struct sscore_state *st, u32 train_us, u32 k)
{
	const struct ss_round *r = &st->rnd;
	u64 rounds = (u16)(r->round - r->min_rtt_round);
	u64 mo = st->hs.round_min_rtt_us, min = r->min_rtt_us;

	if (k >= 31 || (u64)train_us > (min >> (k + 1)))
		return false;
	if (!rounds)
		return true;
	if (mo == SS_RTT_UNKNOWN)
		return false;
	/* moRTT + k (moRTT - minRTT) / r <= 1.125 minRTT, multiplied by 8 r */
	return 8 * rounds * mo + 8 * k * (mo > min ? mo - min : 0) <= 9 * rounds * min;
}

/* The growth factor for this round: 2, or 4 (2^(k+1) with Appendix A in
 * ours; theirs never reads k_max).  @prev_us: the previous round's train. */
static u32 suss_growth(struct sscore_state *st, const struct ss_params *p,
		       u32 dtb_us, u32 train_us, u32 prev_us, u32 *why)
{
	struct ss_suss *s = &st->suss;
	struct ss_round *r = &st->rnd;
	u32 k = 1;

	*why = 0;
	if (!s->growth_allowed) {
		*why = SUSS_NO_DISALLOWED;
		return 2;
	}
	if (r->round >= p->suss_max + 2)
		*why |= SUSS_NO_ROUNDS;
	if (r->round == 2) {
		/* Eq. 6: the next round's train, twice this one, fits in
		 * minRTT/2.  Theirs compares with minRTT/4 rounded down. */
		if (r->min_rtt_us <= p->suss_min_rtt_us)
			*why |= SUSS_NO_SHORT_PATH;
		if (suss_code(st) ? dtb_us >= r->min_rtt_us / 4 : (u64)dtb_us * 4 >= r->min_rtt_us)
			*why |= SUSS_NO_TRAIN;
	} else {
		/* Project the next train from this round's and the previous
		 * round's: train^2 / previous must fit in minRTT. */
		if (!prev_us)
			*why |= SUSS_NO_SAMPLE;
		else if (ss_div64((u64)train_us * train_us, prev_us) > r->min_rtt_us)
			*why |= SUSS_NO_TRAIN;
		if (!suss_rtt_flat(st))
			*why |= SUSS_NO_DELAY;
	}
	if (*why) {
		s->growth_allowed = 0;
		if (r->round == 2)
			s->state = SUSS_OFF;	/* plain HyStart from here on */
		return 2;
	}
	while (!suss_code(st) && k < p->suss_k_max && suss_ahead_ok(st, train_us, k + 1))
		k++;
	return 2U << k;
}

/* Bytes per second that send @pkts of @mss in @duration_us. */
static u64 pacing_rate(u64 pkts, u32 mss, u64 duration_us)
{
	u64 bytes = pkts * mss;		/* < 2^32 * 2^16 */

	if (bytes <= ~0ULL / SS_USEC_PER_SEC)
		return ss_div64(bytes * SS_USEC_PER_SEC, duration_us);
	return ss_div64(bytes, duration_us) * SS_USEC_PER_SEC;
}

/* Ours: plan the red part of an accelerated round (Eq. 10-12), given the
 * @blue packets the ACK clock has sent in it. */
static bool suss_plan_pacing_paper(struct sscore_state *st, const struct ss_ack *ack,
				   u32 growth, u32 dtb_us, u64 blue, struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	u64 min_rtt = st->rnd.min_rtt_us;
	u64 limit = (u64)s->paper.cwnd_round_start * growth;
	u64 blue_share_us, red, duration;
	s64 guard;

	if (limit <= blue || limit > 0xffffffffULL)
		return false;
	red = limit - blue;
	/* The red share of the RTT (Eq. 11: the rate is then cwnd_i / minRTT). */
	duration = ss_div64(min_rtt * red, limit);
	blue_share_us = ss_div64(min_rtt * blue, limit);
	/* Eq. 12: split the idle time around the red part into two guards. */
	guard = ((s64)blue_share_us - (s64)dtb_us) / 2;
	if (guard <= 0 || !duration)
		return false;
	plan->start = true;
	plan->red_pkts = (u32)red;
	plan->duration_us = (u32)duration;
	plan->rate = pacing_rate(red, ack->mss, duration);
	plan->guard_us = (u32)guard;
	plan->limit = (u32)limit;
	plan->growth = growth;
	return true;
}

/*
 * Theirs: the plan of round r, by their arithmetic (suss-code-versions.md,
 * item 7), with blue = iw 2^(r-1) (the next round's blue part):
 *   red      = blue x 2^(r-1) - blue
 *   duration = minRTT - minRTT / 2^(r-1)        (the red share of minRTT)
 *   rate     = red bytes / duration
 *   guard    = (minRTT / 2^(r-1) - dtB) / 2      (no jump unless > 0)
 *   limit    = (cwnd + acked) + red - the red ACKs still to come (those
 *              of the previous round's red packets, which follow its blue)
 * e.g. their log's round 2: 20 red over 24993 us at 1158724 B/s, guard
 * 11288 us, limit 40; round 3: 120 red, 37490 us, limit 160.
 */
static bool suss_plan_pacing_code(struct sscore_state *st, const struct ss_ack *ack,
				  const struct ss_win *w, u32 growth, u32 dtb_us,
				  struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	u32 r = st->rnd.round;
	u64 min_rtt = st->rnd.min_rtt_us;
	u64 blue, red, duration, share, limit;
	s64 guard;

	if (r < 2 || r > 24)
		return false;
	blue = (u64)s->iw << (r - 1);
	red = (blue << (r - 1)) - blue;
	share = min_rtt >> (r - 1);
	duration = min_rtt - share;
	guard = ((s64)share - (s64)dtb_us) / 2;
	limit = (u64)w->cwnd + ack->acked + red;
	limit = limit > s->prev_red ? limit - s->prev_red : 0;
	if (guard <= 0 || !duration || limit > 0xffffffffULL || limit <= w->cwnd)
		return false;
	plan->start = true;
	plan->red_pkts = (u32)red;
	plan->duration_us = (u32)duration;
	plan->rate = pacing_rate(red, ack->mss, duration);
	plan->guard_us = (u32)guard;
	plan->limit = (u32)limit;
	plan->growth = growth;
	return true;
}

/* Start the red part of a round: cwnd to the limit (the glue paces it), or,
 * where the sender grows cwnd as the red packets leave, the period planned. */
static void suss_jump(struct sscore_state *st, const struct ss_ack *ack, u32 growth, struct ss_win *w,
		      const struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	u32 shift;

	/* G = 2^(k+1) multiplies the ratio of a train to its blue part by 2^k. */
	for (shift = 1; (2U << shift) < growth; shift++)
		;
	s->jumps += shift;
	s->limit = plan->limit;
	s->state = SUSS_PACING;
	s->tail_ack = 1;
	s->paced = 0;
	if (!ack->sender_grows)
		w->cwnd = ss_max(w->cwnd, plan->limit);
	ss_emit(st, SS_EV_PACING, plan->red_pkts, plan->duration_us, plan->guard_us, plan);
}

/*
 * Their sender in a pacing period: every packet after which the window is
 * full raises cwnd by 2 while cwnd is below the period's limit; the first
 * such packet is the one that switches the socket to pacing (the tail ACK's
 * own packets have left ACK-clocked before it).  Loss or the end of slow
 * start ends the period (state no longer PACING).
 */
bool ss_suss_sent_window_full(struct sscore_state *st, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;
	bool first = !s->paced;

	if (!suss_code(st) || s->state != SUSS_PACING)
		return false;
	if (w->cwnd < s->limit)
		w->cwnd += 2;
	s->paced = 1;
	return first;
}

/* Ours: the ACK that completes the blue part of the round. */
static void suss_blue_done_paper(struct sscore_state *st, const struct ss_params *p,
				 const struct ss_ack *ack, struct ss_win *w,
				 struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	struct ss_round *r = &st->rnd;
	u32 expected = ss_max(s->paper.blue_expected, 1);
	u32 elapsed = ss_elapsed(ack->now_us, r->start_us);
	/* What the ACK clock has sent in this round so far (not counting what
	 * this ACK releases), and what it sends once this ACK is processed:
	 * two packets for each blue packet acked. */
	u32 sent_blue = ss_before(ack->snd_nxt, r->end_seq) ? 0 :
			(ack->snd_nxt - r->end_seq) / ss_max(ack->mss, 1);
	u32 clock_blue = ss_sat32(2ULL * expected);
	u32 dtb = 0, train = 0, growth, why = 0, prev = s->prev_train_us;
	bool measurable;

	/* The next round's blue part: what the ACK clock sends in this one. */
	s->blue_tail = r->end_seq + clock_blue * ack->mss;
	s->paper.blue_expected = clock_blue;
	if (s->state == SUSS_OFF || r->found)
		return;

	s->blue_cnt = ss_min(s->blue_cnt, expected);
	measurable = s->blue_cnt && elapsed;
	if (measurable) {
		/* Scale the time of the ACKs seen to the whole blue train. */
		dtb = ss_sat32(ss_div64((u64)elapsed * expected, s->blue_cnt));
		train = ss_sat32((u64)dtb << ss_min(s->jumps, 16));	/* Eq. 9 */
	}
	ss_emit(st, SS_EV_BLUE_TRAIN, r->round, dtb, train, 0);
	if (!measurable) {
		/* One (stretch) ACK for the whole blue part, or ACKs all in the
		 * same microsecond: no spacing to measure, no acceleration. */
		growth = 2;
		why = SUSS_NO_SAMPLE;
	} else {
		growth = suss_growth(st, p, dtb, train, prev, &why);
	}
	s->prev_train_us = train;
	if (growth > 2 && !suss_plan_pacing_paper(st, ack, growth, dtb, sent_blue, plan)) {
		growth = 2;
		why |= SUSS_NO_GUARD;
	}
	ss_emit(st, SS_EV_GROWTH, r->round, growth, why, 0);
	if (growth <= 2)
		return;

	/* Pacing starts with this ACK, so the packets it releases are paced
	 * (red) too: the next round's blue part is what was sent before it.
	 * (The authors' code sends them ACK-clocked first; a module has no
	 * hook between this ACK's transmissions and the guard.) */
	s->blue_tail = ack->snd_nxt;
	s->paper.blue_expected = sent_blue;
	suss_jump(st, ack, growth, w, plan);
}

/*
 * Theirs: the ACK that completes the blue part of round r (its N = iw 2^(r-2)
 * packets).  dtB = (time from the round's first ACK to this one) x N / (blue
 * packets acked before this ACK): in their log's round 2, 2176 us x 10 / 9 =
 * 2417 us.  The next round's blue part is its first iw 2^(r-1) packets, or,
 * when a pacing period starts here and this ACK's own packets cannot leave
 * ACK-clocked first (a module), the packets the ACK clock sent before it.
 */
static void suss_blue_done_code(struct sscore_state *st, const struct ss_params *p,
				const struct ss_ack *ack, struct ss_win *w,
				struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	struct ss_round *r = &st->rnd;
	u32 shift = r->round >= 2 ? ss_min(r->round - 2, 24) : 0;
	u64 n = (u64)s->iw << shift;
	u32 before = s->blue_cnt;	/* the tail ACK is not counted (theirs) */
	u32 elapsed = ss_elapsed(ack->now_us, r->start_us);
	u32 dtb, train, growth, why = 0, prev = s->prev_train_us;

	s->blue_tail = r->end_seq + (u32)((u64)s->iw << (shift + 1)) * ack->mss;
	if (s->state == SUSS_OFF || r->found)
		return;
	if (!before) {
		/* Their divisor is 0 (a kernel divide error): one ACK acked
		 * the whole blue part.  Ours: the smallest count, 1. */
		before = 1;
		ss_emit(st, SS_EV_DIV0, SUSS_DIV0_BLUE_COUNT, r->round, before, 0);
	}
	dtb = ss_sat32(ss_div64((u64)elapsed * n, before));
	train = ss_sat32((u64)dtb << ss_min(s->jumps, 16));
	ss_emit(st, SS_EV_BLUE_TRAIN, r->round, dtb, train, 0);
	if (r->round >= 3 && !prev) {
		/* The previous train measured 0 us (its ACKs in one
		 * microsecond): theirs divides by it.  Ours: the clock's
		 * resolution, 1 us. */
		prev = 1;
		ss_emit(st, SS_EV_DIV0, SUSS_DIV0_PREV_TRAIN, r->round, prev, 0);
	}
	growth = suss_growth(st, p, dtb, train, prev, &why);
	s->prev_train_us = train;
	if (growth > 2 && !suss_plan_pacing_code(st, ack, w, growth, dtb, plan)) {
		growth = 2;
		why |= SUSS_NO_GUARD;
	}
	ss_emit(st, SS_EV_GROWTH, r->round, growth, why, 0);
	if (growth <= 2) {
		s->prev_red = 0;
		return;
	}
	s->prev_red = (u16)ss_min(plan->red_pkts, 0xffff);
	if (!ack->tail_clocked) {
		/* This ACK's own packets leave red, after the guard: the next
		 * round's blue part is what the ACK clock sent before it (dtB's
		 * N / k then scales those to the iw 2^(r-1) theirs measures). */
		s->blue_tail = ack->snd_nxt;
	}
	suss_jump(st, ack, growth, w, plan);
}

/* Leave slow start, SUSS style: after several jumps cwnd may exceed what
 * was really sent, so it is cut to what is in flight. */
static void suss_exit(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w,
		      enum ss_suss_state why, enum ss_exit_cause cause)
{
	u32 cwnd_then = w->cwnd;

	st->suss.state = why;
	if (st->suss.jumps > 1)
		w->cwnd = ss_max(ss_min(w->cwnd, ack->in_flight), 2);
	ss_exit_slow_start_from(st, w, cause, cwnd_then);
}

/* HyStart's train test has fired on a blue ACK: exit if SUSS never jumped,
 * else set the cap: cwnd may still grow by the red part to come. */
static void suss_train_fired(struct sscore_state *st, const struct ss_ack *ack, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;
	u64 red;

	if (!s->jumps) {
		ss_exit_slow_start(st, w, SS_EXIT_ACK_TRAIN);
		return;
	}
	if (s->cap_set)
		return;
	red = (u64)s->blue_cnt * ((1ULL << ss_min(s->jumps, 16)) - 1);
	s->cap = ss_sat32((u64)w->cwnd + red);
	s->cap_set = 1;
	ss_emit(st, SS_EV_CAP, s->cap, w->cwnd, s->blue_cnt, 0);
}

/* Ours: count this ACK as blue first, then HyStart on blue ACKs. */
static void suss_update_paper(struct sscore_state *st, const struct ss_params *p,
			      const struct ss_ack *ack, struct ss_win *w,
			      struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	bool blue = s->blue_open;

	if (blue)
		s->blue_cnt = ss_sat32((u64)s->blue_cnt + ack->acked);
	if (w->cwnd >= p->hs_low_window) {
		/* HyStart on blue ACKs only, the train scaled to its full length. */
		if (blue && ss_hystart_train_too_long(st, p, ack, ss_min(s->jumps, 16)))
			suss_train_fired(st, ack, w);
		else if (ss_hystart_delay_increased(st, p, ack))
			suss_exit(st, ack, w, SUSS_EXIT_DELAY, SS_EXIT_DELAY);
	}
	if (blue && !ss_before(ack->snd_una, s->blue_tail)) {
		s->blue_open = 0;
		if (!st->rnd.found)
			suss_blue_done_paper(st, p, ack, w, plan);
	}
}

/* Theirs: HyStart first (in 2024 on its own, late round), on blue ACKs
 * before they are counted; nothing of SUSS's after the cap. */
static void suss_update_code(struct sscore_state *st, const struct ss_params *p,
			     const struct ss_ack *ack, struct ss_win *w,
			     struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;
	bool blue = s->blue_open && !s->cap_set;

	/* Theirs tests the cap when an ACK comes in, against the cwnd the
	 * previous ACKs grew (their log: cwnd 609 > cap 608 at the ACK after
	 * the one that made it 609, then cut to the 599 in flight). */
	if (s->cap_set && w->cwnd > s->cap) {
		suss_exit(st, ack, w, SUSS_EXIT_CAP, SS_EXIT_SUSS_CAP);
		return;
	}
	/* HyStart (Linux 5.19's, which their code sits in): on ACKs with an RTT
	 * sample CUBIC takes and cwnd >= the low window; 2024's round starts
	 * only there (late), 2025's with SUSS's. */
	if (w->cwnd >= p->hs_low_window && ss_rtt_sample_taken(st, ack)) {
		if (st->hs.rounds == SS_HS_ROUNDS_LINUX_519)
			ss_hystart_round_check(st, ack);
		if (blue && ss_hystart_train_too_long(st, p, ack, ss_min(s->jumps, 16)))
			suss_train_fired(st, ack, w);
		else if (ss_hystart_delay_increased(st, p, ack))
			suss_exit(st, ack, w, SUSS_EXIT_DELAY, SS_EXIT_DELAY);
	}
	if (!blue || s->cap_set || st->rnd.found)
		return;	/* a cap set by this very ACK ends SUSS's decisions too */
	if (!ss_before(ack->snd_una, s->blue_tail)) {
		s->blue_open = 0;
		suss_blue_done_code(st, p, ack, w, plan);
	}
	/* Counted after the tail test: dtB's divisor leaves the tail ACK out. */
	s->blue_cnt = ss_sat32((u64)s->blue_cnt + ack->acked);
}

/* Their window rules hold while SUSS clocks or paces and may still jump
 * (round < suss_max + jumps). */
static bool suss_window_growing(const struct sscore_state *st, const struct ss_params *p)
{
	const struct ss_suss *s = &st->suss;

	return (s->state == SUSS_CLOCKING || s->state == SUSS_PACING) && st->rnd.round < p->suss_max + s->jumps;
}

void ss_suss_update(struct sscore_state *st, const struct ss_params *p,
		    const struct ss_ack *ack, struct ss_win *w,
		    struct ss_pacing_plan *plan)
{
	struct ss_suss *s = &st->suss;

	s->tail_ack = 0;	/* the ACK after a period's tail is red */

	/* The window rules' shift, as it stands before this ACK's decisions
	 * (theirs computed it at the top of cong_avoid): 2024 the jumps, 2025
	 * round + jumps - 1. */
	if (!suss_window_growing(st, p))
		s->nwin_shift = 0;
	else if (st->version == SUSS_VER_2024)
		s->nwin_shift = s->jumps;
	else
		s->nwin_shift = (u8)ss_min(st->rnd.round + s->jumps - 1, 24);
	if (st->suss.state == SUSS_OFF || st->suss.state == SUSS_REDUCED) {
		/* No more acceleration: plain HyStart (in 2024, with its late rounds). */
		ss_hystart_update(st, p, ack, w, plan);
		return;
	}
	if (suss_code(st))
		suss_update_code(st, p, ack, w, plan);
	else
		suss_update_paper(st, p, ack, w, plan);
}

u32 ss_suss_peer_window(const struct sscore_state *st, u32 snd_wnd, u32 mss)
{
	const struct ss_suss *s = &st->suss;
	u64 want;

	if (st->version == SUSS_VER_2024) {
		if (s->state != SUSS_CLOCKING && s->state != SUSS_PACING)
			return snd_wnd;
		return ss_min(ss_sat32((u64)snd_wnd << ss_min(s->nwin_shift, 16)), SUSS_2024_RWND_MAX);
	}
	if (st->version != SUSS_VER_2025)
		return snd_wnd;
	want = (u64)10 * mss;
	if (s->state == SUSS_CLOCKING || s->state == SUSS_PACING)
		want <<= ss_min(s->nwin_shift, 24);
	return want > snd_wnd ? ss_sat32(want) : snd_wnd;
}

void ss_suss_init(struct sscore_state *st, const struct ss_params *p, unsigned int version,
		  u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss)
{
	/* Not pinned by the name (cubic_suss): the parameter's, read now. */
	if (version == SS_VERSION_PARAM)
		version = ss_suss_version_of_year(p->suss_version);
	st->version = version < SUSS_NR_VERSIONS ? version : SUSS_VER_2024;
	st->suss.iw = (u16)ss_clamp(cwnd, 1, 0xffff);
	st->suss.state = SUSS_CLOCKING;
	st->suss.growth_allowed = 1;
	/* Round 1's blue part is the whole initial window. */
	st->suss.blue_tail = snd_nxt + st->suss.iw * mss;
	/* HyStart's round: under 2024 as Linux 5.19 started it (late: the
	 * low-window check sat before the round reset, 5.8 ms after SUSS's round
	 * in round 4 of the authors' log, 10.9 ms in round 5); under 2025 and
	 * ours with SUSS's round. */
	if (st->version == SUSS_VER_2024)
		st->hs.rounds = SS_HS_ROUNDS_LINUX_519;
	if (!suss_code(st)) {
		st->suss.paper.cwnd_round_start = cwnd;
		st->suss.paper.blue_expected = st->suss.iw;
	}
}

/* Growth below ssthresh: none while red ACKs come in (each releases one
 * packet); else slow start's, and ours tests the cap as soon as an ACK
 * grows cwnd past it. */
u32 ss_suss_grow(struct sscore_state *st, const struct ss_params *p, const struct ss_ack *ack,
		 struct ss_win *w)
{
	struct ss_suss *s = &st->suss;
	u32 left;

	/* Red ACKs release what they ack and no more.  The tail ACK that began
	 * the period is blue: where the sender grows cwnd to the limit, it grows
	 * by what it acks first (theirs; the limit counts it). */
	if (s->state == SUSS_PACING && !s->cap_set && !(ack->sender_grows && s->tail_ack))
		return 0;
	left = ss_slow_start(w, ack->acked);
	if (st->version == SUSS_VER_PAPER && s->cap_set && !st->rnd.found && w->cwnd > s->cap)
		suss_exit(st, ack, w, SUSS_EXIT_CAP, SS_EXIT_SUSS_CAP);
	return left;
}

/* A jump may have raised cwnd above what was sent: a loss during SUSS
 * reduces from what was really in flight. */
void ss_suss_loss(struct sscore_state *st, u32 in_flight, struct ss_win *w)
{
	struct ss_suss *s = &st->suss;

	if (st->rnd.found || (s->state != SUSS_CLOCKING && s->state != SUSS_PACING))
		return;
	w->cwnd = ss_max(ss_min(w->cwnd, in_flight), 2);
	s->state = SUSS_REDUCED;
}

/* SUSS is not worth re-arming for a tiny window after a timeout. */
#define SUSS_RTO_MIN_CWND 40

bool ss_suss_rto(struct sscore_state *st, u32 cwnd_before)
{
	if (cwnd_before < SUSS_RTO_MIN_CWND)
		st->suss.state = SUSS_OFF;
	return true;
}

/*
 * Ours, as an option: a SUSS flow, in slow start, in a round no later than
 * suss_lift_rwnd_rounds (0, the default: never) is not held by the peer's
 * window.  The code versions have their authors' own rules (suss_peer_window).
 */
bool ss_suss_ignore_peer_window(const struct sscore_state *st, const struct ss_params *p)
{
	return st->version == SUSS_VER_PAPER && p->suss_lift_rwnd_rounds &&
	       !st->rnd.found && st->rnd.round <= p->suss_lift_rwnd_rounds;
}

bool ss_suss_pacing_now(const struct sscore_state *st)
{
	return st->suss.state == SUSS_PACING;
}

u8 ss_suss_trace_state(const struct sscore_state *st)
{
	return st->suss.state;
}

/* The code versions take an ACK's RTT sample before its round check: their
 * minimum RTT, and the round it fell in (condition 2's k counts from it), is
 * updated in pkts_acked, their round counter in cong_avoid.  A minimum that
 * falls on a round's first ACK is the previous round's: k = 1, not 0. */
bool ss_suss_sample_before_round(const struct sscore_state *st)
{
	return suss_code(st);
}

/* 2024 applied its rule as the peer's window arrived (tcp_ack_update_window),
 * 2025 on every cong_avoid; ours has none (suss_lift_rwnd_rounds aside). */
enum ss_window_rule ss_suss_window_rule(const struct sscore_state *st)
{
	if (st->version == SUSS_VER_2024)
		return SS_WINDOW_ON_ARRIVAL;
	return st->version == SUSS_VER_2025 ? SS_WINDOW_EACH_CONG_AVOID : SS_WINDOW_NONE;
}

/* cubic_suss (and the names pinned to one version) */
const struct ss_start_ops ss_suss_ops = {
	.init = ss_suss_init,
	SS_SUSS_HOOKS
};
