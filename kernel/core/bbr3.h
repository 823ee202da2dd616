/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bbr3: BBRv3 as specified by draft-ietf-ccwg-bbr-06 (6 July 2026), written
 * from the draft's text and pseudocode.  The draft's names are kept (BBR.x
 * becomes b->x) so each step can be read against its section.
 *
 * The model.  BBR does not read loss as "the window is too large"; it keeps
 * a model of the path and sends to match it:
 *
 *   max_bw     the largest delivery rate seen over the last two ProbeBW
 *              cycles (a max filter with two slots, one per cycle);
 *   min_rtt    the smallest RTT seen over the last 10 s;
 *   bdp        bw * min_rtt: what the path holds when it is full and has
 *              no queue;
 *   bounds     when loss says the model is too high: a long-term bound on
 *              inflight (inflight_longterm, from the last probe that lost
 *              too much) and short-term bounds on rate and inflight
 *              (bw_shortterm, inflight_shortterm, from the last round's
 *              delivery), which bw = min(max_bw, bw_shortterm) obeys.
 *
 * Control follows the model: pacing_rate = pacing_gain * bw (1% under),
 * cwnd about cwnd_gain * bdp.  The state machine runs experiments on the
 * model by moving the gains:
 *
 *          |
 *          V
 *   +--> Startup ---------------+   pacing 2.77x: double the rate each
 *   |       | full pipe         |   round; leave when the delivery rate
 *   |       | or high loss      |   stops growing (three rounds under
 *   |       V                   |   +25 %) or a round loses too much
 *   |     Drain ----------------+   pacing 0.5x until inflight <= bdp
 *   |       | inflight <= bdp   |   (or 3 rounds)
 *   |       | or 3 rounds       |
 *   |       V                   |
 *   +--> ProbeBW: DOWN -> CRUISE -> REFILL -> UP -> DOWN ...
 *   |                           |   (the steady state: probe for more
 *   |                           |    bandwidth now and then, yield)
 *   +---- ProbeRTT <------------+   every 5 s without a new min_rtt:
 *                                   inflight to bdp/2 for 200 ms
 *
 * What this file does today: the model (round counting, the max_bw and
 * min_rtt filters, the loss signals of each round and the short-term
 * bounds), Startup with both of its exits, Drain with both of its exits,
 * the pacing rate, and the inflight targets (Inflight(gain)).  The ProbeBW
 * cycle, ProbeRTT, the ACK-aggregation (extra_acked) and offload budgets,
 * cwnd and the kernel glue are the next steps; until they exist no
 * congestion control is registered from this file.
 *
 * Units, as in the rest of the core: data in packets (u32), time in u32
 * microseconds compared by signed difference, bandwidth in packets per
 * microsecond scaled by 2^BBR3_BW_SHIFT (u64), gains in thousandths
 * (BBR3_UNIT): the draft's constants are decimals (2.77, 0.5, 0.02, 0.7),
 * which thousandths hold exactly.
 */
#ifndef BBR3_H
#define BBR3_H

#include "sscore.h"

/*
 * Bandwidth scale: 2^24 per packet per microsecond.  One packet per 16 s is
 * the smallest step; 2^40 packets per microsecond fits in u64.
 */
#define BBR3_BW_SHIFT		24
#define BBR3_UNIT		1000U		/* a gain of 1.0 */
#define BBR3_INF_BW		(~0ULL)
#define BBR3_INF_PKTS		(~0U)
#define BBR3_INF_US		(~0U)

/* The draft's constants (section 2), in thousandths where they are gains. */
#define BBR3_STARTUP_PACING_GAIN	2770	/* 4 ln 2: rate doubles per round */
#define BBR3_DEFAULT_CWND_GAIN		2000	/* room for the ACK clock's slack */
#define BBR3_DRAIN_PACING_GAIN		500	/* draft-06; Google's Linux: 350 */
#define BBR3_PROBE_DOWN_PACING_GAIN	900
#define BBR3_LOSS_THRESH		20	/* 2 % loss per round is too much */
#define BBR3_BETA			700	/* the most a round's loss cuts */
#define BBR3_PACING_MARGIN_PERCENT	1	/* pace 1 % under bw */
#define BBR3_MIN_PIPE_CWND		4	/* delayed ACKs need 4 in flight */
#define BBR3_FULL_BW_GROWTH		1250	/* under +25 % a round: a plateau */
#define BBR3_FULL_BW_ROUNDS		3	/* ... for three rounds */
#define BBR3_STARTUP_FULL_LOSS_CNT	6	/* lost ranges in a round to exit */
#define BBR3_DRAIN_MAX_ROUNDS		3	/* leave Drain after this anyway */
#define BBR3_MIN_RTT_FILTER_US		10000000U	/* 10 s */
#define BBR3_PROBE_RTT_INTERVAL_US	5000000U	/* 5 s */
#define BBR3_NO_SRTT_US			1000U	/* InitPacingRate's 1 ms */

enum bbr3_state {
	BBR3_STARTUP,
	BBR3_DRAIN,
	BBR3_PROBE_BW_DOWN,
	BBR3_PROBE_BW_CRUISE,
	BBR3_PROBE_BW_REFILL,
	BBR3_PROBE_BW_UP,
	BBR3_PROBE_RTT,
	BBR3_NO_STATE,		/* BBR.undo_state's "None" */
};

/* One ACK: its rate sample (RS) and the connection's counters after it (C). */
struct bbr3_ack {
	u32 now_us;
	u32 delivered;		/* C.delivered: packets delivered so far */
	u32 inflight;		/* C.inflight after this ACK */
	u32 rs_delivered;	/* RS.delivered: packets over the sample */
	u32 rs_interval_us;	/* RS.interval; 0: no rate sample */
	u32 rs_prior_delivered;	/* RS.prior_delivered: P.delivered of the
				 * newest packet this ACK delivers */
	s32 rs_rtt_us;		/* RS.rtt; negative: no sample */
	bool rs_is_app_limited;
	bool in_recovery;	/* in fast recovery after this ACK */
	bool has_selective_acks; /* C.has_selective_acks */
};

/* A packet newly marked lost (HandleLostPacket's P, and C at that moment). */
struct bbr3_lost_packet {
	u32 delivered;		/* C.delivered now */
	u32 lost;		/* C.lost now, this packet counted */
	u32 tx_in_flight;	/* P.tx_in_flight: C.inflight when P was sent */
	u32 tx_lost;		/* P.lost: C.lost when P was sent */
	bool is_app_limited;	/* P.is_app_limited */
	bool new_range;		/* not contiguous with the previous lost one */
};

struct bbr3 {
	enum bbr3_state state;
	u32 pacing_gain;	/* thousandths */
	u32 cwnd_gain;
	u32 initial_cwnd;	/* C.InitialCwnd */
	u64 pacing_rate;	/* C.pacing_rate, bandwidth units */

	/* Packet-timed rounds (section "BBR.round_count"). */
	u32 next_round_delivered;
	u32 round_count;
	bool round_start;

	/* The max_bw filter: one slot per ProbeBW cycle, two cycles kept. */
	u64 max_bw_slot[2];
	u32 cycle_count;
	u64 max_bw;
	u64 bw;			/* min(max_bw, bw_shortterm) */

	/* min_rtt and ProbeRTT's schedule (section "ProbeRTT Logic"). */
	u32 min_rtt_us;
	u32 min_rtt_stamp;
	u32 probe_rtt_min_delay_us;
	u32 probe_rtt_min_stamp;
	bool probe_rtt_expired;

	/* Full pipe (Startup, ProbeBW_UP). */
	u64 full_bw;
	u32 full_bw_count;
	bool full_bw_now;
	bool full_bw_reached;

	/* Loss signals of the current round and the bounds they move. */
	bool is_loss_in_round;
	bool loss_round_start;
	u32 loss_round_delivered;
	u64 bw_latest;
	u32 inflight_latest;
	u64 bw_shortterm;
	u32 inflight_shortterm;
	u32 inflight_longterm;
	bool is_bw_probe_sample;

	/* CheckStartupHighLoss's tally of the packet-timed round (ours). */
	u32 round_lost;
	u32 round_loss_ranges;
	u32 round_start_delivered;
	bool in_recovery;
	u32 recovery_start_round;

	u32 drain_start_round;
	enum bbr3_state undo_state;
};

void bbr3_init(struct bbr3 *b, u32 now_us, u32 srtt_us, u32 initial_cwnd,
	       u32 cwnd);
void bbr3_on_ack(struct bbr3 *b, const struct bbr3_ack *a);
void bbr3_on_lost_packet(struct bbr3 *b, const struct bbr3_lost_packet *p);

/* Model queries. */
u64 bbr3_delivery_rate(u32 delivered, u32 interval_us);
u32 bbr3_bdp_multiple(const struct bbr3 *b, u32 gain);
u32 bbr3_inflight(const struct bbr3 *b, u32 gain);
bool bbr3_is_inflight_too_high(u32 lost, u32 tx_in_flight, bool has_sack);
u32 bbr3_inflight_at_loss(u32 tx_in_flight, u32 lost, u32 size);

#endif /* BBR3_H */
