// SPDX-License-Identifier: GPL-2.0
/*
 * User-space tests of the BBRv3 core (core/bbr3.c) with hand-worked numbers
 * from draft-ietf-ccwg-bbr-06.  The ACKs are written by hand: each says how
 * much was delivered so far (C.delivered), what its rate sample delivered
 * over which interval, and the P.delivered of the packet it acks
 * (rs_prior_delivered), which decides where packet-timed rounds end.
 *
 * Bandwidth units are packets per microsecond times 2^24: a sample of R
 * packets over 100 ms is floor(R * 2^24 / 100000) = floor(R * 167.77216).
 */
#include <stdio.h>
#include "../core/bbr3.h"

static int passed, failed;

#define CHECK(cond) check((cond), #cond, __LINE__)
#define CHECK_EQ(a, b) check_eq((long long)(a), (long long)(b), #a, #b, __LINE__)

static void check(int ok, const char *what, int line)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL test_bbr3.c:%d: %s\n", line, what);
	}
}

static void check_eq(long long a, long long b, const char *sa, const char *sb, int line)
{
	if (a == b) {
		passed++;
	} else {
		failed++;
		printf("FAIL test_bbr3.c:%d: %s == %s (%lld != %lld)\n", line, sa, sb, a, b);
	}
}

#define RTT 100000		/* 100 ms */
#define HUGE_INFLIGHT 1000000	/* keeps Drain from ending by inflight */

/*
 * An ACK that ends a round: it acks a packet sent when @prior had been
 * delivered, @delivered are delivered now; its sample is @rs packets over
 * one RTT.
 */
static struct bbr3_ack round_ack(u32 now, u32 prior, u32 delivered, u32 rs, u32 inflight)
{
	return (struct bbr3_ack){
		.now_us = now, .delivered = delivered, .inflight = inflight,
		.newly_acked = rs, .rs_delivered = rs, .rs_interval_us = RTT,
		.rs_prior_delivered = prior,
		.rs_rtt_us = RTT, .has_selective_acks = true,
	};
}

/* Every test's connection; test_version_2 switches its version for a while. */
static struct bbr3_params params10 = {.initial_cwnd = 10, .mss = 1448, .seed = 1};

static void init10(struct bbr3 *b, u32 now, u32 srtt)
{
	bbr3_init(b, now, srtt, &params10);
}

/* init10 at 0 with a 100 ms handshake, the connection in @version. */
static void init10_in(u32 version, struct bbr3 *b)
{
	params10.version = version;
	init10(b, 0, RTT);
	params10.version = 0;
}

/* One ACK to the core, with C.cwnd as the core left it unless @a says. */
static void feed(struct bbr3 *b, struct bbr3_ack *a)
{
	if (!a->cwnd)
		a->cwnd = b->cwnd;
	bbr3_on_ack(b, a);
}

static void test_units(void)
{
	/* 10 packets in 1 ms: 0.01 packet/us = 167772.16 -> 167772. */
	CHECK_EQ(bbr3_delivery_rate(10, 1000), 167772);
	CHECK_EQ(bbr3_delivery_rate(320, RTT), 53687);	/* 320 * 167.77216 */
	CHECK_EQ(bbr3_delivery_rate(5, 0), 0);
}

static void test_init_and_pacing_rate(void)
{
	struct bbr3 b;

	/* No RTT yet: 10 packets over InitPacingRate's 1 ms, times 2.77. */
	init10(&b, 0, 0);
	CHECK_EQ(b.state, BBR3_STARTUP);
	CHECK_EQ(b.pacing_gain, 2770);
	CHECK_EQ(b.cwnd_gain, 2000);
	CHECK_EQ(b.pacing_rate, 464728);	/* 167772 * 2770 / 1000 = 464728.44 */
	CHECK_EQ(b.min_rtt_us, BBR3_INF_US);
	CHECK_EQ(bbr3_bdp_multiple(&b, BBR3_UNIT), 10);	/* no RTT: the initial window */
	/* With srtt 100 ms: 10 packets / 100 ms = 1677 units, times 2.77 = 4645. */
	init10(&b, 0, RTT);
	CHECK_EQ(b.pacing_rate, 4645);
	CHECK_EQ(b.min_rtt_us, RTT);
}

static void test_round_counting(void)
{
	struct bbr3 b;
	struct bbr3_ack a;

	init10(&b, 0, RTT);
	/* The first ACK starts round 1 (P.delivered 0 >= next_round_delivered 0). */
	a = round_ack(RTT, 0, 1, 1, 9);
	feed(&b, &a);
	CHECK_EQ(b.round_count, 1);
	CHECK(b.round_start);
	CHECK_EQ(b.next_round_delivered, 1);
	/* Packets sent before that ACK (P.delivered 0) do not end round 1. */
	a = round_ack(RTT + 10, 0, 2, 2, 8);
	feed(&b, &a);
	CHECK_EQ(b.round_count, 1);
	CHECK(!b.round_start);
	/* One sent after it (P.delivered 1) does. */
	a = round_ack(2 * RTT, 1, 12, 11, 20);
	feed(&b, &a);
	CHECK_EQ(b.round_count, 2);
	CHECK(b.round_start);
}

/*
 * Draft, "Exiting STARTUP on Bandwidth Plateau": one ACK per round with
 * samples of 100, 200, 240, 290, 300, 310, 320 packets per RTT.
 *   100: baseline full_bw = 100        (growth from 0)
 *   200: >= 125: new baseline 200
 *   240: <  250: full_bw_count 1
 *   290: >= 250: new baseline 290, count 0
 *   300, 310, 320: < 362.5: count 1, 2, 3 -> full pipe, Drain
 * A mid-round ACK (not a round start) never counts.
 */
static void test_startup_exits_on_a_plateau(void)
{
	static const u32 rs[] = {100, 200, 240, 290, 300, 310, 320};
	static const u32 count[] = {0, 0, 1, 0, 1, 2, 3};
	struct bbr3 b;
	struct bbr3_ack a;
	u32 i, delivered = 0;

	init10(&b, 0, RTT);
	for (i = 0; i < 7; i++) {
		u32 prior = delivered;

		delivered += rs[i];
		a = round_ack((i + 1) * RTT, prior, delivered, rs[i], HUGE_INFLIGHT);
		feed(&b, &a);
		CHECK_EQ(b.full_bw_count, count[i]);
		CHECK_EQ(b.state, i < 6 ? BBR3_STARTUP : BBR3_DRAIN);
		if (i == 2) {
			/* Mid-round, a sample of 200 again: not a round start, no count. */
			a = round_ack((i + 1) * RTT + 50, prior, delivered + 1, 200, HUGE_INFLIGHT);
			feed(&b, &a);
			delivered++;
			CHECK_EQ(b.full_bw_count, 1);
		}
	}
	CHECK(b.full_bw_now && b.full_bw_reached);
	CHECK_EQ(b.max_bw, bbr3_delivery_rate(320, RTT));
	CHECK_EQ(b.full_bw, bbr3_delivery_rate(290, RTT));
	CHECK_EQ(b.pacing_gain, 500);	/* Drain's, draft-06 */
	CHECK_EQ(b.drain_start_round, 7);
	/*
	 * Pacing now follows bw down (the pipe is full): 53687 * 0.5 = 26843,
	 * 1 % under: 26843 * 99 / 100 = 26574.57 -> 26574.
	 */
	CHECK_EQ(b.pacing_rate, 26574);
}

/* Round @r's ACK at @r RTTs: @rs packets delivered over the RTT, the round's sample. */
static void one_round(struct bbr3 *b, u32 *delivered, u32 r, u32 rs, u32 inflight)
{
	struct bbr3_ack a;
	u32 prior = *delivered;

	*delivered += rs;
	a = round_ack(r * RTT, prior, *delivered, rs, inflight);
	feed(b, &a);
}

static void run_plateau(struct bbr3 *b, u32 *delivered)
{
	static const u32 rs[] = {100, 200, 240, 290, 300, 310, 320};
	u32 i;

	init10(b, 0, RTT);
	*delivered = 0;
	for (i = 0; i < 7; i++)
		one_round(b, delivered, i + 1, rs[i], HUGE_INFLIGHT);
}

/*
 * Draft, "Exiting DRAIN Based on Inflight": bw 53687 units (320 packets per
 * 100 ms), min_rtt 100 ms: bdp = 53687 * 100000 / 2^24 = 319.99 -> 319, so
 * Inflight(1.0) = 319.  Inflight 320 stays in Drain; 319 leaves it for
 * ProbeBW_DOWN, and the same ACK (UpdateProbeBWCyclePhase runs after
 * CheckDrainDone) finds DOWN's own exit met: 319 is at most the BDP and no
 * inflight_longterm asks for headroom, so it cruises at once (pacing 1.0).
 */
static void test_drain_exits_at_the_bdp(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered;

	run_plateau(&b, &delivered);
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK_EQ(bbr3_inflight(&b, BBR3_UNIT), 319);
	CHECK_EQ(bbr3_inflight(&b, 2 * BBR3_UNIT), 639);	/* 639.98 */
	a = round_ack(8 * RTT - 10, delivered - 320, delivered + 1, 320, 320);
	feed(&b, &a);
	CHECK_EQ(b.state, BBR3_DRAIN);
	a = round_ack(8 * RTT - 5, delivered - 320, delivered + 2, 320, 319);
	feed(&b, &a);
	CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	CHECK_EQ(b.pacing_gain, 1000);
	CHECK_EQ(b.cwnd_gain, 2000);
}

/*
 * Draft, "Exiting DRAIN Based on Time": Drain began in round 7; inflight
 * stays above the BDP; rounds 8, 9 and 10 stay in Drain, round 11
 * (> 7 + 3) leaves it.
 */
static void test_drain_exits_after_three_rounds(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, r;

	run_plateau(&b, &delivered);
	for (r = 8; r <= 11; r++) {
		u32 prior = delivered;

		delivered += 288;	/* 10 % less than 320 */
		a = round_ack(r * RTT, prior, delivered, 288, HUGE_INFLIGHT);
		feed(&b, &a);
		CHECK_EQ(b.round_count, r);
		CHECK_EQ(b.state, r < 11 ? BBR3_DRAIN : BBR3_PROBE_BW_DOWN);
	}
	CHECK_EQ(b.pacing_gain, 900);	/* DOWN's, draft-06 */
	CHECK_EQ(b.cwnd_gain, 2000);
}

/*
 * Draft, "Never Exiting ... STARTUP When Application-Limited With No
 * Loss": 20 rounds of app-limited samples at a flat rate stay in Startup;
 * app-limited samples enter max_bw only when higher.
 */
static void test_app_limited_startup_stays(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 r, delivered = 0;

	init10(&b, 0, RTT);
	for (r = 1; r <= 20; r++) {
		u32 prior = delivered;

		delivered += 50;
		a = round_ack(r * RTT, prior, delivered, 50, 50);
		a.rs_is_app_limited = true;
		feed(&b, &a);
	}
	CHECK_EQ(b.state, BBR3_STARTUP);
	CHECK_EQ(b.full_bw_count, 0);
	CHECK_EQ(b.max_bw, bbr3_delivery_rate(50, RTT));
	/* A lower app-limited sample does not lower it (nor would it anyway), a higher one raises it. */
	a = round_ack(21 * RTT, delivered, delivered + 80, 80, 80);
	a.rs_is_app_limited = true;
	feed(&b, &a);
	CHECK_EQ(b.max_bw, bbr3_delivery_rate(80, RTT));
	CHECK_EQ(b.state, BBR3_STARTUP);
}

/*
 * Draft, "Exiting STARTUP on Loss".  Rounds deliver 200, 300, 400, 600
 * packets (each at least +25 %: no plateau).  Recovery begins with the ACK
 * that starts round 2, so round 2 is the first spent wholly in recovery; it
 * is judged when round 3 starts.  Round 2 loses @lost packets in @ranges
 * ranges and delivers 400:
 *   6 lost in 6 ranges: 6 / 406 = 1.48 %, not over 2 %: stay;
 *   9 lost in 5 ranges: 9 / 409 = 2.2 %, but 5 ranges: stay;
 *   9 lost in 6 ranges: Drain, with inflight_longterm = max(bdp,
 *   inflight_latest) = max(299, 400) = 400 (bw is round 2's, 300 per RTT:
 *   50331 units, 50331 * 100000 / 2^24 = 299.99; inflight_latest is the
 *   largest RS.delivered of the loss round, 400).
 * Losses before recovery began (round 1's, 20 of them) are not judged.
 */
static u32 startup_loss(u32 lost, u32 ranges, bool sack)
{
	static const u32 rs[] = {200, 300, 400, 600};
	struct bbr3 b;
	struct bbr3_ack a;
	struct bbr3_lost_packet p = {0};
	u32 r, i, delivered = 0;

	init10(&b, 0, RTT);
	for (r = 1; r <= 4; r++) {
		u32 prior = delivered;

		for (i = 0; r == 2 && i < 20; i++) {	/* round 1's losses */
			p.delivered = delivered;
			p.new_range = true;
			bbr3_on_lost_packet(&b, &p);
		}
		for (i = 0; r == 3 && i < lost; i++) {	/* round 2's losses */
			p.delivered = delivered;
			p.new_range = i < ranges;
			bbr3_on_lost_packet(&b, &p);
		}
		delivered += rs[r - 1];
		a = round_ack(r * RTT, prior, delivered, rs[r - 1], 500);
		a.in_recovery = r >= 2;
		a.has_selective_acks = sack;
		feed(&b, &a);
		if (b.state != BBR3_STARTUP)
			break;
	}
	if (b.state == BBR3_STARTUP)
		return 0;
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK(b.full_bw_reached && b.full_bw_now);
	CHECK_EQ(b.undo_state, BBR3_STARTUP);
	return b.inflight_longterm;
}

static void test_startup_exits_on_high_loss(void)
{
	CHECK_EQ(startup_loss(6, 6, true), 0);
	CHECK_EQ(startup_loss(9, 5, true), 0);
	CHECK_EQ(startup_loss(9, 6, true), 400);
	/*
	 * Without SACK one loss in recovery is enough: round 1's losses, seen
	 * by the ACK that enters recovery.  bw then is round 1's (200 per RTT,
	 * bdp 199), inflight_latest 300 (that ACK's sample).
	 */
	CHECK_EQ(startup_loss(0, 0, false), 300);
}

/* ProbeRTT's 5 s minimum and the 10 s min_rtt filter (section "ProbeRTT Logic"). */
static void test_min_rtt_filter(void)
{
	struct bbr3 b;
	struct bbr3_ack a = round_ack(0, 0, 1, 1, 1);

	init10(&b, 0, RTT);
	a.now_us = 1000000;			/* 1 s: 90 ms is lower */
	a.rs_rtt_us = 90000;
	feed(&b, &a);
	CHECK_EQ(b.min_rtt_us, 90000);
	CHECK_EQ(b.min_rtt_stamp, 1000000);
	a.now_us = 5500000;			/* 5.5 s: 4.5 s since 90 ms, not expired */
	a.rs_rtt_us = 120000;
	feed(&b, &a);
	CHECK(!b.probe_rtt_expired);
	CHECK_EQ(b.probe_rtt_min_delay_us, 90000);
	a.now_us = 6500000;			/* 6.5 s: 5.5 s, expired: 120 ms taken */
	feed(&b, &a);
	CHECK(b.probe_rtt_expired);
	CHECK_EQ(b.probe_rtt_min_delay_us, 120000);
	CHECK_EQ(b.min_rtt_us, 90000);		/* still within its 10 s */
	a.now_us = 11500000;			/* 11.5 s: min_rtt 10.5 s old */
	a.rs_rtt_us = 130000;
	feed(&b, &a);
	CHECK(!b.probe_rtt_expired);		/* 5.0 s is not more than 5 s */
	CHECK_EQ(b.min_rtt_us, 120000);
	CHECK_EQ(b.min_rtt_stamp, 6500000);
}

/* IsInflightTooHigh and InflightAtLoss (section "Probing for Bandwidth In ProbeBW"). */
static void test_loss_thresholds(void)
{
	CHECK(bbr3_is_inflight_too_high(3, 100, true));	/* 3 % */
	CHECK(!bbr3_is_inflight_too_high(2, 100, true));	/* 2 % is not over 2 % */
	CHECK(bbr3_is_inflight_too_high(1, 100, false));	/* no SACK: any loss */
	/*
	 * 1000 in flight when P (1 packet) left, 10 lost since: before P 999
	 * in flight, 9 lost; lost_prefix = (0.02 * 999 - 9) / 0.98 = 11.2 -> 11;
	 * 999 + 11 = 1010 (check: (9 + 11) / 1010 = 1.98 %, one more 2.08 %).
	 */
	CHECK_EQ(bbr3_inflight_at_loss(1000, 10, 1), 1010);
	/* 100 in flight, 5 lost: already over 2 % before P: prefix 0, 99. */
	CHECK_EQ(bbr3_inflight_at_loss(100, 5, 1), 99);
}

/*
 * Short-term bounds outside a probe (section "When not Probing for
 * Bandwidth"): in Drain, at the end of a loss round with loss,
 * bw_shortterm = max(bw_latest, 0.7 * max_bw) and inflight_shortterm =
 * max(inflight_latest, 0.7 * cwnd); then bw = min(max_bw, bw_shortterm).
 * After the plateau max_bw = 53687 (320 per RTT).  Round 8 (Drain) delivers
 * 100 per RTT and starts a loss round: bw_latest = 16777, inflight_latest =
 * 100.  A loss is noted; round 9's ACK (100 per RTT) ends that loss round:
 * bw_shortterm = max(16777, 53687 * 0.7 = 37580.9 -> 37580) = 37580;
 * inflight_shortterm starts at C.cwnd (the stack's 1000) and becomes
 * max(100, 700) = 700.
 */
static void test_short_term_bounds_in_drain(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	struct bbr3_lost_packet p = {0};
	u32 delivered;

	run_plateau(&b, &delivered);
	a = round_ack(8 * RTT, delivered, delivered + 100, 100, 1000);
	feed(&b, &a);
	delivered += 100;
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK_EQ(b.bw_latest, 16777);
	CHECK_EQ(b.inflight_latest, 100);
	CHECK_EQ(b.bw_shortterm, BBR3_INF_BW);	/* no loss yet */
	p.delivered = delivered;
	bbr3_on_lost_packet(&b, &p);
	CHECK(b.is_loss_in_round);
	a = round_ack(9 * RTT, delivered, delivered + 100, 100, 1000);
	a.cwnd = 1000;
	feed(&b, &a);
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK(!b.is_loss_in_round);
	CHECK_EQ(b.bw_shortterm, 37580);
	CHECK_EQ(b.inflight_shortterm, 700);
	CHECK_EQ(b.bw, 37580);
	CHECK_EQ(b.max_bw, 53687);
}

/*
 * Seed 1's draws (xorshift32: x ^= x << 13, x >>= 17, x <<= 5 in turn):
 * 270369, 67634689, 2647435461, 307599695, 2398689233, 745495504.
 * PickProbeWait takes two: rounds = draw & 1, wait = 2 s + draw % 1 s.
 * The first: 1 round, 2 s + 634689 us; the second: 1, 2 s + 599695 us.
 */
#define WAIT1 2634689
#define WAIT2 2599695

/* One round's ACK of 320 packets (the path's 320 per 100 ms), at @r RTTs. */
static void cruise_round(struct bbr3 *b, u32 *delivered, u32 r, u32 inflight)
{
	one_round(b, delivered, r, 320, inflight);
}

/* The plateau, then Drain left at the BDP: ProbeBW, cruising, at 0.8 s. */
static void run_to_cruise(struct bbr3 *b, u32 *delivered)
{
	struct bbr3_ack a;

	run_plateau(b, delivered);
	a = round_ack(8 * RTT - 5, *delivered - 320, *delivered + 2, 320, 319);
	*delivered += 2;
	feed(b, &a);
}

/*
 * Draft, "ProbeBW" (the cycle) with "Exiting PROBE_UP on Bandwidth Plateau"
 * and "Entering and Exiting PROBE_RTT".  A path of 320 packets per 100 ms
 * and RTT samples of exactly 100 ms throughout.
 *   0.799995 s  Drain -> DOWN -> CRUISE; cycle_stamp 799995, wait WAIT1
 *   3.5 s       (round 35) the first ACK past 799995 + 2634689 = 3434684:
 *               REFILL, short-term model forgotten
 *   3.6 s       (36) one round of REFILL: UP (1.25 x, cwnd gain 2.25), a
 *               probe sample, full_bw = this sample
 *   3.7-3.9 s   (37-39) 320 is under +25 % for three rounds: DOWN at 3.9 s
 *               (cycle_stamp 3.9 s, wait WAIT2), the probe's ACKs stopping
 *               (the first DOWN's round, ended at 0.8 s, began cycle 1)
 *   4.0 s       (40) their last round ends: the max_bw filter's cycle 2;
 *               inflight 319 is the BDP: CRUISE
 *   5.1 s       (51) 5 s with no RTT sample under 100 ms (a sample equal
 *               to the minimum does not renew it): ProbeRTT, cwnd gain 0.5
 *               (cwnd at most max(bdp / 2, 4) = 159)
 *   5.100010 s  inflight 150 <= 159: hold until 5.300010 s and a round
 *   5.2, 5.3 s  a round has passed, but not 200 ms
 *   5.4 s       both: back to CRUISE (the pipe was full), the next
 *               ProbeRTT 5 s after this
 */
static void test_probe_bw_cycle_and_probe_rtt(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, r;

	run_to_cruise(&b, &delivered);
	CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	CHECK_EQ(b.cycle_stamp, 8 * RTT - 5);
	CHECK_EQ(b.bw_probe_wait_us, WAIT1);
	CHECK_EQ(b.rounds_since_probe_up, 1);
	for (r = 8; r <= 34; r++) {
		cruise_round(&b, &delivered, r, 319);
		CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	}
	CHECK_EQ(b.rounds_since_probe_up, 1 + 34 - 7);	/* 28: Reno's 63 not reached */
	cruise_round(&b, &delivered, 35, 319);
	CHECK_EQ(b.state, BBR3_PROBE_BW_REFILL);
	CHECK_EQ(b.pacing_gain, 1000);
	CHECK_EQ(b.ack_phase, BBR3_ACKS_REFILLING);
	CHECK_EQ(b.bw_shortterm, BBR3_INF_BW);
	cruise_round(&b, &delivered, 36, 319);
	CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
	CHECK_EQ(b.pacing_gain, 1250);
	CHECK_EQ(b.cwnd_gain, 2250);
	CHECK(b.is_bw_probe_sample);
	CHECK_EQ(b.ack_phase, BBR3_ACKS_PROBE_STARTING);
	CHECK_EQ(b.full_bw, 53687);
	CHECK_EQ(b.full_bw_count, 0);
	CHECK_EQ(bbr3_inflight(&b, BBR3_UNIT), 321);	/* UP's 2 more */
	cruise_round(&b, &delivered, 37, 319);
	CHECK_EQ(b.ack_phase, BBR3_ACKS_PROBE_FEEDBACK);
	CHECK_EQ(b.full_bw_count, 1);
	cruise_round(&b, &delivered, 38, 319);
	CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
	CHECK_EQ(b.full_bw_count, 2);
	cruise_round(&b, &delivered, 39, 319);
	CHECK_EQ(b.state, BBR3_PROBE_BW_DOWN);
	CHECK_EQ(b.pacing_gain, 900);
	CHECK_EQ(b.cwnd_gain, 2000);
	CHECK_EQ(b.cycle_stamp, 39 * RTT);
	CHECK_EQ(b.bw_probe_wait_us, WAIT2);
	CHECK_EQ(b.ack_phase, BBR3_ACKS_PROBE_STOPPING);
	CHECK_EQ(b.cycle_count, 1);	/* the first DOWN's round ended at 0.8 s */
	cruise_round(&b, &delivered, 40, 319);
	CHECK_EQ(b.ack_phase, BBR3_ACKS_INIT);
	CHECK(!b.is_bw_probe_sample);
	CHECK_EQ(b.cycle_count, 2);
	CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	for (r = 41; r <= 50; r++) {
		cruise_round(&b, &delivered, r, 319);
		CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	}
	CHECK_EQ(b.max_bw, 53687);	/* the new cycle's slot holds it again */
	cruise_round(&b, &delivered, 51, 319);
	CHECK_EQ(b.state, BBR3_PROBE_RTT);
	CHECK_EQ(b.cwnd_gain, 500);
	CHECK_EQ(b.pacing_gain, 1000);
	CHECK(b.mark_app_limited);
	CHECK_EQ(bbr3_probe_rtt_cwnd(&b), 159);
	CHECK_EQ(b.cwnd, 159);
	CHECK_EQ(b.probe_rtt_done_stamp, 0);	/* 319 in flight: not there yet */
	a = round_ack(51 * RTT + 10, delivered - 320, delivered + 1, 320, 150);
	delivered += 1;
	feed(&b, &a);
	CHECK_EQ(b.probe_rtt_done_stamp, 51 * RTT + 10 + 200000);
	CHECK(!b.probe_rtt_round_done);
	cruise_round(&b, &delivered, 52, 150);
	CHECK(b.probe_rtt_round_done);
	CHECK_EQ(b.state, BBR3_PROBE_RTT);
	cruise_round(&b, &delivered, 53, 150);
	CHECK_EQ(b.state, BBR3_PROBE_RTT);	/* 5.3 s is not past 5.300010 s */
	cruise_round(&b, &delivered, 54, 150);
	CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	CHECK_EQ(b.probe_rtt_min_stamp, 54 * RTT);
	CHECK_EQ(b.cwnd_gain, 2000);
	CHECK(b.cwnd > 159);	/* the cwnd from before ProbeRTT, restored */
}

/*
 * Draft, "Exiting PROBE_DOWN on Inflight": with inflight_longterm 300 the
 * headroom is max(1, 0.15 * 300 = 45) = 45, so DOWN waits for inflight
 * 255 (and the BDP, 319).  Drain is left by time (round 11) so DOWN starts
 * with a queue.
 */
static void run_to_down_by_time(struct bbr3 *b, u32 *delivered)
{
	u32 r;

	run_plateau(b, delivered);
	for (r = 8; r <= 11; r++)
		one_round(b, delivered, r, 288, HUGE_INFLIGHT);	/* 10 % less than 320 */
}

static void test_probe_down_exits_with_headroom(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered;

	run_to_down_by_time(&b, &delivered);
	CHECK_EQ(b.state, BBR3_PROBE_BW_DOWN);
	b.inflight_longterm = 300;
	CHECK_EQ(bbr3_inflight_with_headroom(&b), 255);
	a = round_ack(11 * RTT + 10, delivered - 288, delivered + 1, 288, 256);
	feed(&b, &a);
	CHECK_EQ(b.state, BBR3_PROBE_BW_DOWN);
	a = round_ack(11 * RTT + 20, delivered - 288, delivered + 2, 288, 255);
	feed(&b, &a);
	CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	/* CRUISE's volume cap is the headroom's (bbr3.h's table): 255. */
	CHECK_EQ(b.cwnd, 255);
}

/*
 * Draft, "Exiting PROBE_DOWN After Max Time": DOWN began at 1.1 s (round
 * 11) with wait WAIT1; inflight never falls to the BDP; the first ACK past
 * 1.1 s + 2.634689 s = 3.734689 s (round 38) goes to REFILL, not CRUISE.
 */
static void test_probe_down_exits_after_max_time(void)
{
	struct bbr3 b;
	u32 delivered, r;

	run_to_down_by_time(&b, &delivered);
	CHECK_EQ(b.cycle_stamp, 11 * RTT);
	CHECK_EQ(b.bw_probe_wait_us, WAIT1);
	for (r = 12; r <= 37; r++) {
		cruise_round(&b, &delivered, r, HUGE_INFLIGHT);
		CHECK_EQ(b.state, BBR3_PROBE_BW_DOWN);
	}
	cruise_round(&b, &delivered, 38, HUGE_INFLIGHT);
	CHECK_EQ(b.state, BBR3_PROBE_BW_REFILL);
}

/*
 * IsRenoCoexistenceProbeTime: with cwnd 5 the target is min(bdp 319,
 * cwnd 5) = 5 rounds: rounds_since_probe_up (1 at DOWN) reaches 5 at
 * round 12, long before the 2.6 s.
 */
static void test_reno_coexistence_probe_time(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, r;

	run_to_cruise(&b, &delivered);
	for (r = 8; r <= 12; r++) {
		u32 prior = delivered;

		delivered += 320;
		a = round_ack(r * RTT, prior, delivered, 320, 5);
		a.cwnd = 5;
		feed(&b, &a);
		CHECK_EQ(b.rounds_since_probe_up, r - 6);
		CHECK_EQ(b.state, r < 11 ? BBR3_PROBE_BW_CRUISE : BBR3_PROBE_BW_REFILL);
		if (b.state == BBR3_PROBE_BW_REFILL)
			break;
	}
	CHECK_EQ(r, 11);	/* 11 - 6 = 5 rounds */
}

/* Up to ProbeBW_UP, as in the cycle test (round 36, 3.6 s). */
static void run_to_up(struct bbr3 *b, u32 *delivered)
{
	u32 r;

	run_to_cruise(b, delivered);
	for (r = 8; r <= 36; r++)
		cruise_round(b, delivered, r, 319);
}

/*
 * Draft, "Exiting PROBE_UP on Loss" (section "Probing for Bandwidth In
 * ProbeBW").  A packet of the probe is lost: 400 were in flight when it
 * left and 10 have been lost since (2.5 % > 2 %).  InflightAtLoss: before
 * it 399 in flight, 9 lost: (0.02 * 399 - 9) / 0.98 < 0: prefix 0, 399.
 * inflight_longterm = max(399, 0.7 * min(bdp 319, cwnd)) = 399, and UP
 * goes DOWN with undo_state UP.  With an app-limited packet the bound is
 * left as it was (the pseudocode's "if (!RS.is_app_limited)"; the test
 * case's "regardless of the application-limited state" we read as: the
 * exit to DOWN happens regardless).  A second loss in the same probe is
 * not a new signal (is_bw_probe_sample is cleared).
 */
static void probe_up_loss(bool app_limited, u32 *longterm, enum bbr3_state *state)
{
	struct bbr3 b;
	struct bbr3_lost_packet p = {0};
	u32 delivered;

	run_to_up(&b, &delivered);
	CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
	p.now_us = 36 * RTT + 50;
	p.delivered = delivered;
	p.tx_in_flight = 400;
	p.tx_lost = 0;
	p.lost = 10;
	p.is_app_limited = app_limited;
	p.new_range = true;
	bbr3_on_lost_packet(&b, &p);
	CHECK(b.prev_probe_too_high);
	CHECK(!b.is_bw_probe_sample);
	CHECK_EQ(b.undo_state, BBR3_PROBE_BW_UP);
	*longterm = b.inflight_longterm;
	*state = b.state;
	p.tx_in_flight = 300;
	p.lost = 20;
	bbr3_on_lost_packet(&b, &p);
	CHECK_EQ(b.inflight_longterm, *longterm);
}

static void test_probe_up_exits_on_loss(void)
{
	u32 longterm;
	enum bbr3_state state;

	probe_up_loss(false, &longterm, &state);
	CHECK_EQ(longterm, 399);
	CHECK_EQ(state, BBR3_PROBE_BW_DOWN);
	probe_up_loss(true, &longterm, &state);
	CHECK_EQ(longterm, BBR3_INF_PKTS);
	CHECK_EQ(state, BBR3_PROBE_BW_DOWN);
	/* 2 % exactly is not too high; 8 of 400 stays in UP. */
	{
		struct bbr3 b;
		struct bbr3_lost_packet p = {.tx_in_flight = 400, .lost = 8};
		u32 delivered;

		run_to_up(&b, &delivered);
		p.delivered = delivered;
		bbr3_on_lost_packet(&b, &p);
		CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
		CHECK(b.is_bw_probe_sample);
	}
}

/*
 * Draft, "Never Exiting PROBE_UP ... When Application-Limited With No
 * Loss": app-limited samples never count toward a plateau, so UP holds
 * for 20 rounds.
 */
static void test_probe_up_stays_when_app_limited(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, r;

	run_to_up(&b, &delivered);
	for (r = 37; r <= 56; r++) {
		u32 prior = delivered;

		delivered += 320;
		a = round_ack(r * RTT, prior, delivered, 320, 319);
		a.rs_is_app_limited = true;
		a.rs_rtt_us = 90000 + r;	/* lower each time: no ProbeRTT */
		feed(&b, &a);
		CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
	}
	CHECK_EQ(b.full_bw_count, 0);
}

/*
 * ProbeInflightLongtermUpward: in UP, while cwnd-limited at
 * inflight_longterm, it grows by 1, 2, 4 ... packets a round.  cwnd 300 =
 * inflight_longterm 300; each ACK acks 100.  UP's start (round 36) set the
 * slope: growth 1, 300 acked per packet.  Round 36's rest: 3 ACKs of 100:
 * +1 (301).  Round 37's first ACK adds its 100 at that slope (100 of 300),
 * then the slope doubles: 301 / 2 = 150 per packet; its 2 more ACKs: 300
 * acked -> +2 (303).  Round 38's first ACK: 100 more, then 303 / 4 = 75;
 * 2 more ACKs: 300 -> +4 (307).
 */
static void test_inflight_longterm_grows_in_up(void)
{
	static const u32 expected[] = {301, 303, 307};
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, r, i;

	run_to_up(&b, &delivered);
	b.inflight_longterm = 300;
	b.probe_up_acked_per_inc = 300;
	for (r = 36; r <= 38; r++) {
		for (i = 0; i < 3; i++) {
			u32 prior = delivered;

			if (r == 36 || i > 0)
				prior = delivered - 1000;	/* mid-round */
			delivered += 100;
			a = round_ack(r * RTT + i, prior, delivered, 100, 300);
			a.cwnd = b.inflight_longterm;
			a.is_cwnd_limited = true;
			a.rs_rtt_us = 90000 - r * 10 - i;	/* no ProbeRTT */
			feed(&b, &a);
			CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
		}
		CHECK_EQ(b.inflight_longterm, expected[r - 36]);
	}
}

/*
 * SetCwnd in Startup: cwnd grows by what each ACK acks while under
 * max_inflight (2 x bdp + extra_acked); after the pipe is full, never past
 * max_inflight.  Startup, 100 ms RTT, one ACK of 20 packets over 100 ms:
 * bw = 20 per RTT (335544 units), bdp 19 (19.99), cwnd gain 2: 39;
 * extra_acked: the interval starts at this ACK (nothing expected yet), 20
 * acked, min(20, cwnd 10) = 10; the budget: pacing 2.77 x 19.8 per RTT
 * is 0.55 a ms, quantum 2, offload 6: max_inflight = 39 + 10 = 49.
 * cwnd 10 + 20 = 30.  The next ACK of 20 goes to 50 (30 < 49 then).
 */
static void test_cwnd_in_startup(void)
{
	struct bbr3 b;
	struct bbr3_ack a;

	init10(&b, 0, RTT);
	a = round_ack(RTT, 0, 20, 20, 20);
	feed(&b, &a);
	CHECK_EQ(bbr3_bdp_multiple(&b, BBR3_UNIT), 19);
	CHECK_EQ(b.extra_acked, 10);
	CHECK_EQ(b.send_quantum, 2);
	CHECK_EQ(b.max_inflight, 49);
	CHECK_EQ(b.cwnd, 30);
	a = round_ack(RTT + 10, 0, 40, 20, 40);
	feed(&b, &a);
	CHECK_EQ(b.cwnd, 50);
}

/*
 * SetSendQuantum: 1 ms at the pacing rate.  Cruising at 320 per 100 ms,
 * pacing 0.99 x 53687 = 53150 units: 53150 * 1000 / 2^24 = 3.17 -> 3
 * packets; at 100 000 packets a second the 64 KB cap (45 packets of 1448
 * bytes) holds.
 */
static void test_send_quantum(void)
{
	struct bbr3 b;
	u32 delivered;

	run_to_cruise(&b, &delivered);
	CHECK_EQ(b.pacing_rate, 53150);
	CHECK_EQ(b.send_quantum, 3);
	CHECK_EQ(bbr3_pacing_rate_bytes_per_sec(&b), 4587244);	/* 53150 * 1448 * 1e6 / 2^24 = 4587244.1 */
	b.pacing_rate = bbr3_delivery_rate(100, 1000);
	{
		struct bbr3_ack a = round_ack(9 * RTT, delivered, delivered + 320, 320, 319);

		b.full_bw_reached = false;	/* keep the rate for this check */
		b.bw = 0;
		b.max_bw = 0;
		b.max_bw_slot[0] = b.max_bw_slot[1] = 0;
		a.rs_interval_us = 0;
		feed(&b, &a);
	}
	CHECK_EQ(b.send_quantum, 45);
}

/*
 * Draft, "Skipping PROBE_RTT Due to Application-Limited Sending": idle in
 * ProbeBW (nothing in flight, app-limited) across the 5 s: the restart
 * marks idle_restart, so the expired probe_rtt_min_delay does not send the
 * connection to ProbeRTT; the first ACK that delivers clears the mark.
 */
static void test_idle_restart_skips_probe_rtt(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered;

	run_to_cruise(&b, &delivered);
	bbr3_on_transmit(&b, 6000000, 0, true);
	CHECK(b.idle_restart);
	CHECK_EQ(b.extra_acked_interval_start, 6000000);
	a = round_ack(6100000, delivered, delivered + 10, 10, 10);
	feed(&b, &a);
	CHECK(b.probe_rtt_expired);
	/* Not ProbeRTT; CRUISE's wait (0.8 + 2.63 s) has passed: REFILL. */
	CHECK_EQ(b.state, BBR3_PROBE_BW_REFILL);
	CHECK(!b.idle_restart);
	/* Not idle (something in flight): no mark. */
	bbr3_on_transmit(&b, 6200000, 5, true);
	CHECK(!b.idle_restart);
}

/*
 * HandleSpuriousLossDetection after Startup was left on loss: back to
 * Startup, the pipe not full, the bounds from before the loss, and cwnd
 * restored to the largest it was since recovery began: recovery entered at
 * 600, round 2's ACK grew it by 300 to 900, and the first loss of round 3
 * saved again (SaveCwnd in recovery keeps the larger): 900.
 */
static void test_spurious_loss_undoes_startup_exit(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	struct bbr3_lost_packet p = {0};
	u32 r, i, delivered = 0;
	static const u32 rs[] = {200, 300, 400};

	init10(&b, 0, RTT);
	for (r = 1; r <= 3; r++) {
		u32 prior = delivered;

		if (r == 2) {
			a.cwnd = 600;
			b.cwnd = 600;
			bbr3_on_enter_fast_recovery(&b);
			CHECK_EQ(b.prior_cwnd, 600);
		}
		for (i = 0; r == 3 && i < 9; i++) {
			p.delivered = delivered;
			p.new_range = i < 6;
			bbr3_on_lost_packet(&b, &p);
		}
		delivered += rs[r - 1];
		a = round_ack(r * RTT, prior, delivered, rs[r - 1], 500);
		a.in_recovery = r >= 2;
		a.cwnd = 600;
		feed(&b, &a);
	}
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK_EQ(b.undo_state, BBR3_STARTUP);
	CHECK_EQ(b.inflight_longterm, 400);
	b.cwnd = 100;
	bbr3_on_spurious_loss(&b);
	CHECK_EQ(b.state, BBR3_STARTUP);
	CHECK(!b.full_bw_reached);
	CHECK_EQ(b.cwnd, 900);
	CHECK_EQ(b.inflight_longterm, BBR3_INF_PKTS);	/* max(400, the saved infinity) */
	CHECK_EQ(b.undo_state, BBR3_NO_STATE);
	CHECK_EQ(b.pacing_gain, 2770);
}

/* OnEnterRTO: cwnd = inflight + 1; recovery's end restores the cwnd before. */
static void test_rto_and_recovery_cwnd(void)
{
	struct bbr3 b;

	init10(&b, 0, RTT);
	b.cwnd = 80;
	bbr3_on_enter_rto(&b, 30);
	CHECK_EQ(b.cwnd, 31);
	CHECK_EQ(b.prior_cwnd, 80);
	bbr3_on_exit_recovery(&b, false);
	CHECK_EQ(b.cwnd, 80);
}

/*
 * The extra_acked filter: the largest excess of the last round in Startup,
 * of the last 10 after it.  Without rate samples bw stays 0, so nothing is
 * "expected" and the excess is all acked since the interval began, capped
 * by C.cwnd: the ACKs' cwnd sets each sample.  One ACK a round:
 *   round 1 (Startup): min(30 acked, cwnd 10) = 10      -> 10
 *   round 2 (Startup): min(35, cwnd 4) = 4, window 1    -> 4
 *   pipe full (window 10); rounds 3-13 with cwnd 3, then 2:
 *   round 3: 3, but round 1's 10 is in the window       -> 10
 *   round 11: rounds 2-11                               -> 4
 *   round 12: rounds 3-12                               -> 3
 *   round 13: rounds 4-13 (2 from round 4 on)           -> 2
 */
/*
 * Thirteen rounds of one ACK each: 30 packets, then 5 a round, each round's
 * extra capped by its cwnd (10, 4, 3, then 2); full bw from round 3.  With
 * @sampled the ACKs carry a rate sample (v2 reads only those).  The
 * extra_acked after each round against @expected[1..13].
 */
static void extra_acked_rounds(struct bbr3 *b, const u32 *expected, bool sampled)
{
	struct bbr3_ack a;
	u32 r, delivered = 0;

	for (r = 1; r <= 13; r++) {
		u32 prior = delivered;

		delivered += r == 1 ? 30 : 5;
		a = round_ack(r * RTT, prior, delivered, r == 1 ? 30 : 5, 1);
		if (!sampled)
			a.rs_interval_us = 0;
		a.cwnd = r == 1 ? 10 : r == 2 ? 4 : r == 3 ? 3 : 2;
		if (r == 3)
			b->full_bw_reached = true;
		feed(b, &a);
		CHECK_EQ(b->round_count, r);
		CHECK_EQ(b->extra_acked, expected[r]);
	}
}

static void test_extra_acked_window(void)
{
	static const u32 expected[14] = {0, 10, 4, 10, 10, 10, 10, 10, 10, 10, 10, 4, 3, 2};
	struct bbr3 b;

	init10(&b, 0, RTT);
	extra_acked_rounds(&b, expected, false);
}

/*
 * BBRv2, v2alpha's constants (bbr3.h's table), on the paths of the tests
 * above; the states change where they did, only the gains differ.
 *   Startup: 2.885 and 2.885.  No RTT: 167772 * 2885 / 1000 = 484022.22.
 *   Drain (run_plateau): 0.347; pacing 53687 * 347 / 1000 = 18629.39, 1 %
 *     under: 18629 * 99 / 100 = 18442.71; the cwnd gain stays Startup's.
 *   ProbeBW (the cycle of test_probe_bw_cycle_and_probe_rtt): UP paces at
 *     1.25 with the cwnd gain 2.0 (v3: 2.25), DOWN paces at 0.75 (v3: 0.9).
 * An unknown version runs v3's.  v2's own behaviours: the tests after it.
 */
/*
 * An ACK in the middle of a round of ProbeBW_UP (no round ends, no RTT
 * sample lowers min_rtt) with @prior_in_flight in flight before it; the
 * state it leaves.
 */
static enum bbr3_state probe_up_ack(struct bbr3 *b, u32 *delivered, u32 now,
				    u32 prior_in_flight)
{
	struct bbr3_ack a;

	*delivered += 1;
	a = round_ack(now, *delivered - 1000, *delivered, 1, prior_in_flight);
	a.rs_prior_in_flight = prior_in_flight;
	feed(b, &a);
	return b->state;
}

/* @run (run_plateau, run_to_cruise, run_to_up) with the connection in @version (read as it starts). */
static void run_in(u32 version, void (*run)(struct bbr3 *, u32 *), struct bbr3 *b, u32 *delivered)
{
	params10.version = version;
	run(b, delivered);
	params10.version = 0;
}

static void test_version_2(void)
{
	struct bbr3 b;
	u32 delivered, r;

	params10.version = BBR3_VERSION_V2;
	init10(&b, 0, 0);
	CHECK_EQ(b.version, BBR3_VERSION_V2);
	CHECK_EQ(b.pacing_gain, 2885);
	CHECK_EQ(b.cwnd_gain, 2885);
	CHECK_EQ(b.pacing_rate, 484022);
	run_plateau(&b, &delivered);
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK_EQ(b.pacing_gain, 347);
	CHECK_EQ(b.cwnd_gain, 2885);	/* Startup's window kept (v3: 2.0) */
	CHECK_EQ(b.pacing_rate, 18442);
	run_to_cruise(&b, &delivered);
	for (r = 8; r <= 35; r++)
		cruise_round(&b, &delivered, r, 319);
	CHECK_EQ(b.state, BBR3_PROBE_BW_REFILL);
	cruise_round(&b, &delivered, 36, 319);
	CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
	CHECK_EQ(b.pacing_gain, 1250);
	CHECK_EQ(b.cwnd_gain, 2000);
	for (r = 37; r <= 39; r++)
		cruise_round(&b, &delivered, r, 319);
	CHECK_EQ(b.state, BBR3_PROBE_BW_UP);	/* no plateau exit (v3 left) */
	CHECK_EQ(probe_up_ack(&b, &delivered, 39 * RTT + 1, 400), BBR3_PROBE_BW_DOWN);
	CHECK_EQ(b.pacing_gain, 750);
	params10.version = 7;
	init10(&b, 0, 0);
	CHECK_EQ(b.version, BBR3_VERSION_V3);
	CHECK_EQ(b.pacing_gain, 2770);
	CHECK(!bbr3_version_gains(7) && !bbr3_version_gains(0));
	params10.version = 0;
	CHECK_EQ(startup_loss(9, 6, true), 400);	/* v3 again */
}

/*
 * v2alpha's exit from ProbeBW_UP (test_version_2's path: max_bw 53687 units,
 * 320 packets per 100 ms, min_rtt 100 ms; UP began at 3.6 s, its clock
 * with it).  Inflight(1.25) of max_bw: 53687 x 100000 x 1.25 / 2^24 =
 * 399.99 -> 399, UP's 2 more: 401.  What is compared with it is what was
 * in flight before the ACK plus the next burst (the gain is over 1): 3
 * packets at UP's rate (1.25 x 0.99 x 320 per 100 ms x 1448 B = 5.73 MB/s,
 * 2^-10 of it 5599 B).  Before a min_rtt has passed in UP (3.65 s) 500 in
 * flight stays; after it (3.700001 s) 397 + 3 = 400 stays, 398 + 3 = 401
 * leaves for DOWN.  With the next packet 1 ms away, bw (53687 x 1000 / 2^24
 * = 3.2 -> 3 packets) delivers 3 by then: 400 + 3 - 3 = 400 stays (with no
 * wait, 403 would leave).  v3 on the same ACKs stays in UP (it waits for bw
 * to stop growing), its burst 3 too (1 ms at that rate, 3.96).
 */
static void test_v2_probe_up_exit(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, version;

	for (version = BBR3_VERSION_V2; version <= BBR3_VERSION_V3; version++) {
		run_in(version, run_to_up, &b, &delivered);
		CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
		if (version == BBR3_VERSION_V2)
			CHECK_EQ(b.cycle_stamp, 36 * RTT);
		CHECK_EQ(b.send_quantum, 3);
		CHECK_EQ(probe_up_ack(&b, &delivered, 36 * RTT + RTT / 2, 500),
			 BBR3_PROBE_BW_UP);
		CHECK_EQ(probe_up_ack(&b, &delivered, 37 * RTT + 1, 397),
			 BBR3_PROBE_BW_UP);
		delivered += 1;
		a = round_ack(37 * RTT + 2, delivered - 1000, delivered, 1, 400);
		a.rs_prior_in_flight = 400;
		a.edt_wait_us = 1000;
		feed(&b, &a);
		CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
		CHECK_EQ(probe_up_ack(&b, &delivered, 37 * RTT + 3, 398),
			 version == BBR3_VERSION_V2 ? BBR3_PROBE_BW_DOWN :
						     BBR3_PROBE_BW_UP);
	}
}

/*
 * v2alpha's DOWN -> CRUISE reads what was in flight before the ACK: after
 * the exit above, inflight_longterm unset, CRUISE once that is at most
 * Inflight(1.0) of max_bw, 319 (DOWN's gain is under 1: no burst added).
 * An ACK leaving 300 in flight after it, with 320 before, stays in DOWN;
 * one with 319 before goes.
 */
static void test_v2_probe_down_reads_prior_inflight(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered;

	run_in(BBR3_VERSION_V2, run_to_up, &b, &delivered);
	CHECK_EQ(probe_up_ack(&b, &delivered, 37 * RTT + 3, 400), BBR3_PROBE_BW_DOWN);
	delivered += 1;
	a = round_ack(37 * RTT + 4, delivered - 1000, delivered, 1, 300);
	a.rs_prior_in_flight = 320;
	feed(&b, &a);
	CHECK_EQ(b.state, BBR3_PROBE_BW_DOWN);
	CHECK_EQ(probe_up_ack(&b, &delivered, 37 * RTT + 5, 319), BBR3_PROBE_BW_CRUISE);
}

/*
 * v2alpha's recovery: the end of fast recovery leaves cwnd as it is (only
 * the end of a timeout's restores it); a timeout outside a probe bounds
 * inflight_shortterm by the cwnd saved before it; an undo restores that
 * saved cwnd exactly and stays in its state (v3 goes back to Startup, as
 * test_spurious_loss_undoes_startup_exit shows).
 */
static void test_v2_recovery_and_undo(void)
{
	struct bbr3 b;
	u32 delivered;

	run_in(BBR3_VERSION_V2, run_to_cruise, &b, &delivered);
	CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	b.cwnd = 300;
	bbr3_on_enter_fast_recovery(&b);
	CHECK_EQ(b.prior_cwnd, 300);
	b.cwnd = 200;
	bbr3_on_exit_recovery(&b, false);
	CHECK_EQ(b.cwnd, 200);
	CHECK_EQ(b.inflight_shortterm, BBR3_INF_PKTS);
	bbr3_on_timeout(&b, 41);
	CHECK_EQ(b.cwnd, 41);
	CHECK_EQ(b.inflight_shortterm, 300);
	CHECK_EQ(b.full_bw, 0);
	bbr3_on_exit_recovery(&b, true);
	CHECK_EQ(b.cwnd, 300);
	b.cwnd = 500;
	b.undo_state = BBR3_STARTUP;
	bbr3_on_spurious_loss(&b);
	CHECK_EQ(b.cwnd, 300);
	CHECK_EQ(b.state, BBR3_PROBE_BW_CRUISE);
	CHECK_EQ(b.undo_state, BBR3_NO_STATE);
	/* v3: a timeout sets cwnd alone; recovery's end restores it. */
	run_to_cruise(&b, &delivered);
	b.cwnd = 300;
	bbr3_on_enter_fast_recovery(&b);
	bbr3_on_timeout(&b, 41);
	CHECK_EQ(b.inflight_shortterm, BBR3_INF_PKTS);
	bbr3_on_exit_recovery(&b, false);
	CHECK_EQ(b.cwnd, 300);
}

/*
 * v2alpha's min_rtt filters: an RTT sample equal to the minimum renews its
 * stamp (v3: only a lower one), and once the 5 s window has expired a
 * delayed ACK's sample does not replace it.  100 ms from the handshake
 * (stamp 0), the same at 0.1 s and at 1 s: v2's stamp 1 s, v3's still 0.  At 6.5 s (expired for both) a delayed
 * ACK's 120 ms: v2 keeps 100 ms, v3 takes 120 ms; a prompt one: both take it.
 */
static void min_rtt_samples(u32 version, u32 *stamp_1s, u32 *after_delayed,
			    u32 *after_prompt)
{
	struct bbr3 b;
	struct bbr3_ack a;

	init10_in(version, &b);
	a = round_ack(RTT, 0, 10, 10, 10);
	feed(&b, &a);
	a = round_ack(10 * RTT, 0, 11, 1, 10);
	a.rs_interval_us = 0;
	feed(&b, &a);
	*stamp_1s = b.probe_rtt_min_stamp;
	a = round_ack(65 * RTT, 0, 12, 1, 10);
	a.rs_interval_us = 0;
	a.rs_rtt_us = 120000;
	a.rs_is_ack_delayed = true;
	feed(&b, &a);
	*after_delayed = b.probe_rtt_min_delay_us;
	a.now_us += 1;
	a.rs_is_ack_delayed = false;
	feed(&b, &a);
	*after_prompt = b.probe_rtt_min_delay_us;
}

static void test_v2_min_rtt_filters(void)
{
	u32 stamp, delayed, prompt;

	min_rtt_samples(BBR3_VERSION_V2, &stamp, &delayed, &prompt);
	CHECK_EQ(stamp, 10 * RTT);
	CHECK_EQ(delayed, RTT);
	CHECK_EQ(prompt, 120000);
	min_rtt_samples(BBR3_VERSION_V3, &stamp, &delayed, &prompt);
	CHECK_EQ(stamp, 0);
	CHECK_EQ(delayed, 120000);
	CHECK_EQ(prompt, 120000);
}

/*
 * v2alpha's Startup plateau reads max_bw; draft-06 the sample of the ACK
 * that ends the round.  Each round: an ACK mid-round sampling 100, 200,
 * 300, 400, 500 packets per RTT, then one sampling 150 that ends the round
 * (from round 2; round 1's count is ended by its first ACK, 100).  v3
 * sees 100, 150 (+50 %), then 150 three times: Drain after round 5.  v2 sees max_bw 100, 200, 300, 400, 500: each at
 * least +25 %, so Startup goes on.
 */
static enum bbr3_state startup_with_high_mid_round_samples(u32 version)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 r, delivered = 0;

	init10_in(version, &b);
	for (r = 1; r <= 5; r++) {
		u32 prior = delivered;

		delivered += 10;
		/* mid-round: it acks a packet sent before the round began (in
		 * round 1, the first ACK begins the count: it ends round 1) */
		a = round_ack(r * RTT - 10, r == 1 ? 0 : b.next_round_delivered - 1,
			      delivered, 100 * r, 100000);
		feed(&b, &a);
		delivered += 10;
		a = round_ack(r * RTT, prior, delivered, r == 1 ? 100 : 150, 100000);
		feed(&b, &a);
	}
	return b.state;
}

static void test_v2_startup_plateau_reads_max_bw(void)
{
	CHECK_EQ(startup_with_high_mid_round_samples(BBR3_VERSION_V3), BBR3_DRAIN);
	CHECK_EQ(startup_with_high_mid_round_samples(BBR3_VERSION_V2), BBR3_STARTUP);
}

/*
 * Startup's window floor.  One ACK of 2 packets over 100 ms (12 delivered,
 * the initial window 10): the target (2 x a BDP of 1, the ACK's extra, the
 * burst budget) is under 10, so draft-06 keeps cwnd at 10 (an initial
 * window has been delivered); v2alpha grows it while under twice the
 * initial window: 12, then 14 ... 20, and no further.
 */
static u32 startup_cwnd_after_small_acks(u32 version, u32 acks)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 i, delivered = 10;

	init10_in(version, &b);
	for (i = 0; i < acks; i++) {
		delivered += 2;
		/* only the first ends a round (round 1's count starts there) */
		a = round_ack(RTT + i, i ? 1 : 0, delivered, 2, 10);
		feed(&b, &a);
		CHECK(b.max_inflight < 10);
		CHECK_EQ(b.state, BBR3_STARTUP);
	}
	return b.cwnd;
}

static void test_v2_startup_cwnd_floor(void)
{
	CHECK_EQ(startup_cwnd_after_small_acks(BBR3_VERSION_V3, 1), 10);
	CHECK_EQ(startup_cwnd_after_small_acks(BBR3_VERSION_V2, 1), 12);
	CHECK_EQ(startup_cwnd_after_small_acks(BBR3_VERSION_V2, 5), 20);
	CHECK_EQ(startup_cwnd_after_small_acks(BBR3_VERSION_V2, 8), 20);
}

/*
 * v2alpha's Startup loss exit.  Round 1 delivers 200 (one ACK).  In round
 * 2, in recovery, @loss_acks ACKs each follow a newly lost packet (10
 * delivered each, no rate sample); then the ACK that ends the loss round
 * (it acks a packet sent at 200 delivered, the loss round's end) samples
 * 300 over the RTT with @rs_lost of its 500 in flight at send lost since:
 *   7 loss ACKs, 11 lost: 7 < 8: stay;
 *   8 loss ACKs, 10 lost: 10 / 500 = 2 %, not over it: stay;
 *   8 loss ACKs, 11 lost: 2.2 %: Drain, the bound Inflight(1.0) of max_bw:
 *   300 per RTT = 50331 units, bdp 50331 * 100000 / 2^24 = 299.99 -> 299;
 *   its budget: 3 bursts of 5 packets (Startup's rate, 2.885 x 200 per
 *   100 ms x 1448 B = 8.35 MB/s, 2^-10 of it 8155 B) = 15 < 299: 299.
 * v3 on the same ACKs stays (one lost range a packet: 8 ranges, but its
 * tally is per packet-timed round judged after a whole round in recovery).
 */
static u32 startup_loss_v2(u32 loss_acks, u32 rs_lost, u32 version)
{
	struct bbr3 b;
	struct bbr3_ack a;
	struct bbr3_lost_packet p = {0};
	u32 i, delivered = 200;

	init10_in(version, &b);
	a = round_ack(RTT, 0, delivered, 200, 500);
	feed(&b, &a);
	for (i = 0; i < loss_acks; i++) {
		p.delivered = delivered;
		p.new_range = true;
		bbr3_on_lost_packet(&b, &p);
		delivered += 10;
		a = round_ack(RTT + 1 + i, 100, delivered, 10, 500);
		a.rs_interval_us = 0;
		a.in_recovery = true;
		feed(&b, &a);
		CHECK_EQ(b.state, BBR3_STARTUP);
	}
	CHECK_EQ(b.loss_events_in_round, loss_acks);
	delivered += 300;
	a = round_ack(2 * RTT, 200, delivered, 300, 500);
	a.in_recovery = true;
	a.rs_lost = rs_lost;
	a.rs_tx_in_flight = 500;
	feed(&b, &a);
	if (b.state == BBR3_STARTUP)
		return 0;
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK(b.full_bw_reached);
	CHECK_EQ(b.undo_state, BBR3_STARTUP);
	return b.inflight_longterm;
}

static void test_v2_startup_loss_exit(void)
{
	CHECK_EQ(startup_loss_v2(7, 11, BBR3_VERSION_V2), 0);
	CHECK_EQ(startup_loss_v2(8, 10, BBR3_VERSION_V2), 0);
	CHECK_EQ(startup_loss_v2(8, 11, BBR3_VERSION_V2), 299);
	CHECK_EQ(startup_loss_v2(8, 11, BBR3_VERSION_V3), 0);
}

/*
 * v2 drops inflight_hi's unused credit.  In UP (as
 * test_inflight_longterm_grows_in_up: bound 300, 300 acked per packet),
 * four ACKs of 100 mid-round; the second is not cwnd-limited.  v3 keeps
 * the first's 100 over it: 100 + 100 + 100 = 300: +1 (301).  v2 drops
 * it: 100 + 100 after, 200 < 300: the bound stays 300.
 */
static u32 probe_up_credit(u32 version)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, i;

	params10.version = version;
	run_to_up(&b, &delivered);
	params10.version = 0;
	CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
	b.inflight_longterm = 300;
	b.probe_up_acked_per_inc = 300;
	for (i = 0; i < 4; i++) {
		delivered += 100;
		a = round_ack(36 * RTT + 1 + i, delivered - 1000, delivered, 100, 300);
		a.cwnd = b.inflight_longterm;
		a.is_cwnd_limited = i != 1;
		a.rs_rtt_us = 90000 - i;	/* no ProbeRTT */
		feed(&b, &a);
		CHECK_EQ(b.state, BBR3_PROBE_BW_UP);
	}
	return b.inflight_longterm;
}

static void test_v2_probe_up_drops_unused_credit(void)
{
	CHECK_EQ(probe_up_credit(BBR3_VERSION_V3), 301);
	CHECK_EQ(probe_up_credit(BBR3_VERSION_V2), 300);
}

/*
 * v2alpha's burst (send quantum).  Cruising at 320 per 100 ms, pacing
 * 53150 units = 4587244 B/s: 4587244 >> 10 = 4479 B = 3 packets (3.09),
 * as v3's 1 ms gives.  With min_rtt 1 ms: 1000 >> 9 = 1 halving, 64 KB ->
 * 32768 B more: 37247 B = 25 packets (25.7).  At 100 packets a second
 * (144800 B/s, under 1.2 Mbit/s) and min_rtt 100 ms: 141 B, 0 packets:
 * v2's floor, 1 (v3's: 2).
 */
static u32 held_rate_quantum(struct bbr3 *b, u32 delivered, u64 rate, u32 min_rtt)
{
	struct bbr3_ack a = round_ack(9 * RTT, delivered, delivered + 320, 320, 319);

	b->pacing_rate = rate;
	b->min_rtt_us = min_rtt;
	b->full_bw_reached = false;	/* keep the rate for this check */
	b->bw = 0;
	b->max_bw = 0;
	b->max_bw_slot[0] = b->max_bw_slot[1] = 0;
	a.rs_interval_us = 0;
	feed(b, &a);
	return b->send_quantum;
}

static void test_v2_send_quantum(void)
{
	struct bbr3 b;
	u32 delivered;

	run_in(BBR3_VERSION_V2, run_to_cruise, &b, &delivered);
	CHECK_EQ(b.pacing_rate, 53150);
	CHECK_EQ(b.send_quantum, 3);
	CHECK_EQ(held_rate_quantum(&b, delivered, 53150, 1000), 25);
	CHECK_EQ(held_rate_quantum(&b, delivered, bbr3_delivery_rate(1, 10000), RTT), 1);
	run_to_cruise(&b, &delivered);
	CHECK_EQ(held_rate_quantum(&b, delivered, bbr3_delivery_rate(1, 10000), RTT), 2);
}

/*
 * The version's constants overridden by parameters (bbr2's module
 * parameters): Startup paces at 3.0 and keeps a 2.5 window when asked,
 * and a 0 leaves the version's value.
 */
/*
 * v2alpha's Drain (run_plateau in version 2): max_bw 53687 units (320 per
 * 100 ms), min_rtt 100 ms: Inflight(1.0) of max_bw = 319 (the burst budget,
 * 3 x 8 packets at Startup's rate, is less), the stack's ssthresh from Drain
 * on.  No round cap: rounds 8-15 with inflight far above it stay in Drain
 * (v3 left in round 11).  What counts is inflight at the next departure:
 * 330 in flight with the next packet 4 ms away, bw delivering
 * 53687 * 4000 / 2^24 = 12.8 -> 12 by then, leaves 318 <= 319: ProbeBW
 * (DOWN, then CRUISE on the same ACK, as in v3's test); 330 with no wait
 * stays.
 */
static void test_v2_drain(void)
{
	struct bbr3 b;
	struct bbr3_ack a;
	u32 delivered, r;

	run_in(BBR3_VERSION_V2, run_plateau, &b, &delivered);
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK_EQ(b.ssthresh, 319);
	for (r = 8; r <= 15; r++) {
		u32 prior = delivered;

		delivered += 288;
		a = round_ack(r * RTT, prior, delivered, 288, HUGE_INFLIGHT);
		feed(&b, &a);
		CHECK_EQ(b.state, BBR3_DRAIN);
	}
	a = round_ack(16 * RTT - 10, delivered - 288, delivered + 1, 288, 330);
	feed(&b, &a);
	CHECK_EQ(b.state, BBR3_DRAIN);
	a = round_ack(16 * RTT - 5, delivered - 288, delivered + 2, 288, 330);
	a.edt_wait_us = 4000;
	feed(&b, &a);
	CHECK(b.state == BBR3_PROBE_BW_DOWN || b.state == BBR3_PROBE_BW_CRUISE);
	CHECK_EQ(b.cwnd_gain, 2000);
	/* v3 on the same plateau sets no ssthresh. */
	run_plateau(&b, &delivered);
	CHECK_EQ(b.ssthresh, 0);
}

/*
 * v2alpha's extra_acked window on test_extra_acked_window's ACKs, each with
 * a rate sample (v2 samples only those; extra_acked_rounds): the rounds'
 * extra are 10, 4, 3, then 2 (each capped by that round's cwnd).  In Startup a slot lasts a
 * round (the max of the last 1-2: 10, 10); from round 3 (full bw) five:
 * slot 0 holds rounds 2-6 (max 4) while slot 1 keeps round 1's 10 until
 * round 7 restarts it; round 12 restarts slot 0: 4 four times, then 2.
 */
static void test_v2_extra_acked_window(void)
{
	static const u32 expected[14] = {0, 10, 10, 10, 10, 10, 10, 4, 4, 4, 4, 4, 2, 2};
	struct bbr3 b;
	struct bbr3_ack a;

	params10.version = BBR3_VERSION_V2;
	init10(&b, 0, RTT);
	params10.version = 0;
	extra_acked_rounds(&b, expected, true);
	/* An ACK without a rate sample leaves it. */
	a = round_ack(14 * RTT, 90, 120, 30, 1);	/* 30 + 12 x 5 delivered so far */
	a.rs_interval_us = 0;
	a.cwnd = 40;
	feed(&b, &a);
	CHECK_EQ(b.extra_acked, 2);
}

/*
 * v2alpha adds extra_acked to the window's target only up to 100 ms at bw.
 * One round delivers 3 packets in 100 ms (bw 503 units): the clamp is
 * 503 * 100000 / 2^24 = 2.998 -> 2, extra_acked is 3.  Startup's target
 * 2.885 x bdp = 503 * 100000 * 2885 / 1000 / 2^24 = 8.65 -> 8: v2 8 + 2 =
 * 10 (its budget, 3 one-packet bursts under 1.2 Mbit/s, is less); v3,
 * unclamped, Startup's 2.0 x bdp = 5.998 -> 5, and 5 + 3 = 8 (a clamp of
 * 2 would give 7).
 */
static void test_v2_extra_acked_clamp(void)
{
	struct bbr3 b;
	struct bbr3_ack a;

	params10.version = BBR3_VERSION_V2;
	init10(&b, 0, RTT);
	a = round_ack(RTT, 0, 3, 3, 3);
	feed(&b, &a);
	CHECK_EQ(b.extra_acked, 3);
	CHECK_EQ(b.max_inflight, 10);
	params10.version = 0;
	init10(&b, 0, RTT);
	a = round_ack(RTT, 0, 3, 3, 3);
	feed(&b, &a);
	CHECK_EQ(b.extra_acked, 3);
	CHECK_EQ(b.max_inflight, 8);
}

static void test_version_overrides(void)
{
	struct bbr3 b;

	params10.version = BBR3_VERSION_V2;
	params10.startup_pacing_gain = 3000;
	params10.startup_cwnd_gain = 2500;
	init10(&b, 0, 0);
	CHECK_EQ(b.pacing_gain, 3000);
	CHECK_EQ(b.cwnd_gain, 2500);
	CHECK_EQ(b.pacing_rate, 503316);	/* 167772 * 3 */
	CHECK_EQ(b.gains.drain_pacing, 347);
	CHECK_EQ(b.gains.startup_full_loss_cnt, 8);
	params10.startup_full_loss_cnt = 4;
	init10(&b, 0, 0);
	CHECK_EQ(b.gains.startup_full_loss_cnt, 4);
	params10 = (struct bbr3_params){.initial_cwnd = 10, .mss = 1448, .seed = 1};
}

int main(void)
{
	test_units();
	test_init_and_pacing_rate();
	test_round_counting();
	test_startup_exits_on_a_plateau();
	test_drain_exits_at_the_bdp();
	test_drain_exits_after_three_rounds();
	test_app_limited_startup_stays();
	test_startup_exits_on_high_loss();
	test_min_rtt_filter();
	test_loss_thresholds();
	test_short_term_bounds_in_drain();
	test_probe_bw_cycle_and_probe_rtt();
	test_probe_down_exits_with_headroom();
	test_probe_down_exits_after_max_time();
	test_reno_coexistence_probe_time();
	test_probe_up_exits_on_loss();
	test_probe_up_stays_when_app_limited();
	test_inflight_longterm_grows_in_up();
	test_cwnd_in_startup();
	test_send_quantum();
	test_idle_restart_skips_probe_rtt();
	test_spurious_loss_undoes_startup_exit();
	test_rto_and_recovery_cwnd();
	test_extra_acked_window();
	test_version_2();
	test_v2_startup_loss_exit();
	test_v2_probe_up_drops_unused_credit();
	test_v2_send_quantum();
	test_v2_drain();
	test_v2_probe_up_exit();
	test_v2_probe_down_reads_prior_inflight();
	test_v2_recovery_and_undo();
	test_v2_min_rtt_filters();
	test_v2_startup_plateau_reads_max_bw();
	test_v2_startup_cwnd_floor();
	test_v2_extra_acked_window();
	test_v2_extra_acked_clamp();
	test_version_overrides();
	printf("bbr3 core: %d checks passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
