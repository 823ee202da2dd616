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
		.rs_delivered = rs, .rs_interval_us = RTT, .rs_prior_delivered = prior,
		.rs_rtt_us = RTT, .has_selective_acks = true,
	};
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
	bbr3_init(&b, 0, 0, 10, 10);
	CHECK_EQ(b.state, BBR3_STARTUP);
	CHECK_EQ(b.pacing_gain, 2770);
	CHECK_EQ(b.cwnd_gain, 2000);
	CHECK_EQ(b.pacing_rate, 464728);	/* 167772 * 2770 / 1000 = 464728.44 */
	CHECK_EQ(b.min_rtt_us, BBR3_INF_US);
	CHECK_EQ(bbr3_bdp_multiple(&b, BBR3_UNIT), 10);	/* no RTT: the initial window */
	/* With srtt 100 ms: 10 packets / 100 ms = 1677 units, times 2.77 = 4645. */
	bbr3_init(&b, 0, RTT, 10, 10);
	CHECK_EQ(b.pacing_rate, 4645);
	CHECK_EQ(b.min_rtt_us, RTT);
}

static void test_round_counting(void)
{
	struct bbr3 b;
	struct bbr3_ack a;

	bbr3_init(&b, 0, RTT, 10, 10);
	/* The first ACK starts round 1 (P.delivered 0 >= next_round_delivered 0). */
	a = round_ack(RTT, 0, 1, 1, 9);
	bbr3_on_ack(&b, &a);
	CHECK_EQ(b.round_count, 1);
	CHECK(b.round_start);
	CHECK_EQ(b.next_round_delivered, 1);
	/* Packets sent before that ACK (P.delivered 0) do not end round 1. */
	a = round_ack(RTT + 10, 0, 2, 2, 8);
	bbr3_on_ack(&b, &a);
	CHECK_EQ(b.round_count, 1);
	CHECK(!b.round_start);
	/* One sent after it (P.delivered 1) does. */
	a = round_ack(2 * RTT, 1, 12, 11, 20);
	bbr3_on_ack(&b, &a);
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

	bbr3_init(&b, 0, RTT, 10, 10);
	for (i = 0; i < 7; i++) {
		u32 prior = delivered;

		delivered += rs[i];
		a = round_ack((i + 1) * RTT, prior, delivered, rs[i], HUGE_INFLIGHT);
		bbr3_on_ack(&b, &a);
		CHECK_EQ(b.full_bw_count, count[i]);
		CHECK_EQ(b.state, i < 6 ? BBR3_STARTUP : BBR3_DRAIN);
		if (i == 2) {
			/* Mid-round, a sample of 200 again: not a round start, no count. */
			a = round_ack((i + 1) * RTT + 50, prior, delivered + 1, 200, HUGE_INFLIGHT);
			bbr3_on_ack(&b, &a);
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

static void run_plateau(struct bbr3 *b, u32 *delivered)
{
	static const u32 rs[] = {100, 200, 240, 290, 300, 310, 320};
	struct bbr3_ack a;
	u32 i;

	bbr3_init(b, 0, RTT, 10, 10);
	*delivered = 0;
	for (i = 0; i < 7; i++) {
		u32 prior = *delivered;

		*delivered += rs[i];
		a = round_ack((i + 1) * RTT, prior, *delivered, rs[i], HUGE_INFLIGHT);
		bbr3_on_ack(b, &a);
	}
}

/*
 * Draft, "Exiting DRAIN Based on Inflight": bw 53687 units (320 packets per
 * 100 ms), min_rtt 100 ms: bdp = 53687 * 100000 / 2^24 = 319.99 -> 319, so
 * Inflight(1.0) = 319.  Inflight 320 stays in Drain; 319 leaves it for
 * ProbeBW_DOWN (pacing gain 0.90).
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
	bbr3_on_ack(&b, &a);
	CHECK_EQ(b.state, BBR3_DRAIN);
	a = round_ack(8 * RTT - 5, delivered - 320, delivered + 2, 320, 319);
	bbr3_on_ack(&b, &a);
	CHECK_EQ(b.state, BBR3_PROBE_BW_DOWN);
	CHECK_EQ(b.pacing_gain, 900);
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
		bbr3_on_ack(&b, &a);
		CHECK_EQ(b.round_count, r);
		CHECK_EQ(b.state, r < 11 ? BBR3_DRAIN : BBR3_PROBE_BW_DOWN);
	}
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

	bbr3_init(&b, 0, RTT, 10, 10);
	for (r = 1; r <= 20; r++) {
		u32 prior = delivered;

		delivered += 50;
		a = round_ack(r * RTT, prior, delivered, 50, 50);
		a.rs_is_app_limited = true;
		bbr3_on_ack(&b, &a);
	}
	CHECK_EQ(b.state, BBR3_STARTUP);
	CHECK_EQ(b.full_bw_count, 0);
	CHECK_EQ(b.max_bw, bbr3_delivery_rate(50, RTT));
	/* A lower app-limited sample does not lower it (nor would it anyway), a higher one raises it. */
	a = round_ack(21 * RTT, delivered, delivered + 80, 80, 80);
	a.rs_is_app_limited = true;
	bbr3_on_ack(&b, &a);
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

	bbr3_init(&b, 0, RTT, 10, 10);
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
		bbr3_on_ack(&b, &a);
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

	bbr3_init(&b, 0, RTT, 10, 10);
	a.now_us = 1000000;			/* 1 s: 90 ms is lower */
	a.rs_rtt_us = 90000;
	bbr3_on_ack(&b, &a);
	CHECK_EQ(b.min_rtt_us, 90000);
	CHECK_EQ(b.min_rtt_stamp, 1000000);
	a.now_us = 5500000;			/* 5.5 s: 4.5 s since 90 ms, not expired */
	a.rs_rtt_us = 120000;
	bbr3_on_ack(&b, &a);
	CHECK(!b.probe_rtt_expired);
	CHECK_EQ(b.probe_rtt_min_delay_us, 90000);
	a.now_us = 6500000;			/* 6.5 s: 5.5 s, expired: 120 ms taken */
	bbr3_on_ack(&b, &a);
	CHECK(b.probe_rtt_expired);
	CHECK_EQ(b.probe_rtt_min_delay_us, 120000);
	CHECK_EQ(b.min_rtt_us, 90000);		/* still within its 10 s */
	a.now_us = 11500000;			/* 11.5 s: min_rtt 10.5 s old */
	a.rs_rtt_us = 130000;
	bbr3_on_ack(&b, &a);
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
 * inflight_shortterm starts at cwnd (the inflight here, 1000) and becomes
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
	bbr3_on_ack(&b, &a);
	delivered += 100;
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK_EQ(b.bw_latest, 16777);
	CHECK_EQ(b.inflight_latest, 100);
	CHECK_EQ(b.bw_shortterm, BBR3_INF_BW);	/* no loss yet */
	p.delivered = delivered;
	bbr3_on_lost_packet(&b, &p);
	CHECK(b.is_loss_in_round);
	a = round_ack(9 * RTT, delivered, delivered + 100, 100, 1000);
	bbr3_on_ack(&b, &a);
	CHECK_EQ(b.state, BBR3_DRAIN);
	CHECK(!b.is_loss_in_round);
	CHECK_EQ(b.bw_shortterm, 37580);
	CHECK_EQ(b.inflight_shortterm, 700);
	CHECK_EQ(b.bw, 37580);
	CHECK_EQ(b.max_bw, 53687);
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
	printf("bbr3 core: %d checks passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
