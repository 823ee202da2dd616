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
 * Each ProbeBW cycle (draft, "ProbeBW"):
 *
 *   DOWN    pacing 0.9x: drain what the last probe queued; leave for CRUISE
 *           once inflight is at most the BDP and leaves 15 % headroom under
 *           inflight_longterm, or for REFILL when it is time to probe
 *   CRUISE  pacing 1.0x: hold; loss lowers the short-term bounds; leave for
 *           REFILL when it is time to probe: 2-3 s after DOWN began (a
 *           seeded draw) or after as many rounds as a Reno flow of this
 *           window would need to grow by one window (at most 63)
 *   REFILL  pacing 1.0x for one round, short-term bounds forgotten: fill
 *           the pipe before probing, so the loss a probe may cause is
 *           measured on a full pipe
 *   UP      pacing 1.25x, cwnd gain 2.25, inflight_longterm raised by 1, 2,
 *           4 ... packets a round while the window is full; leave for DOWN
 *           on a plateau (three rounds under +25 %), on loss over 2 % of
 *           what was in flight (inflight_longterm then cut), or at once
 *           after a probe that lost too much ("precautionary" probing)
 *
 * The loss response, two time scales: in REFILL and UP a round that loses
 * over 2 % cuts inflight_longterm (to what was in flight where the loss
 * rate crossed 2 %, at least 0.7 x the target); elsewhere each round with
 * loss moves bw_shortterm and inflight_shortterm to what the last round
 * delivered, at least 0.7 x their last values.  cwnd grows by what each
 * ACK acks up to max_inflight (cwnd_gain x bdp + the ACK aggregation seen
 * + a quantization budget) and is cut at once to the bounds of the state.
 *
 * What a stock Linux 6.1 rate sample lacks (RS.tx_in_flight, RS.lost, a
 * callback per lost packet) comes in through struct bbr3_ack and struct
 * bbr3_lost_packet; our kernel patch supplies it (images/uml/patches/bbr3/0005)
 * and ../sslab_bbr3.c registers "bbr3" where it is there.  ECN is left
 * out, as the draft leaves it unspecified.
 *
 * Where the draft's pseudocode is silent we chose, and say so at the step:
 * the StartProbeBW_* steps set their state's gains from the draft's table;
 * CheckStartupHighLoss is judged per packet-timed round.
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
#define BBR3_DRAIN_PACING_GAIN		500	/* draft-06; a parameter (Google's differs) */
#define BBR3_PROBE_DOWN_PACING_GAIN	900	/* draft-06; a parameter (Google's differs) */
#define BBR3_PROBE_UP_PACING_GAIN	1250	/* probe 25 % above bw */
#define BBR3_PROBE_UP_CWND_GAIN		2250	/* ... with the window to do it */
#define BBR3_PROBE_RTT_CWND_GAIN	500	/* ProbeRTT: half a BDP in flight */
#define BBR3_LOSS_THRESH		20	/* 2 % loss per round is too much */
#define BBR3_BETA			700	/* the most a round's loss cuts */
#define BBR3_HEADROOM			150	/* leave 15 % of inflight_longterm free */
#define BBR3_PACING_MARGIN_PERCENT	1	/* pace 1 % under bw */
#define BBR3_MIN_PIPE_CWND		4	/* delayed ACKs need 4 in flight */
#define BBR3_FULL_BW_GROWTH		1250	/* under +25 % a round: a plateau */
#define BBR3_FULL_BW_ROUNDS		3	/* ... for three rounds */
#define BBR3_STARTUP_FULL_LOSS_CNT	6	/* lost ranges in a round to exit */
#define BBR3_DRAIN_MAX_ROUNDS		3	/* leave Drain after this anyway */
#define BBR3_MIN_RTT_FILTER_US		10000000U	/* 10 s */
#define BBR3_PROBE_RTT_INTERVAL_US	5000000U	/* 5 s */
#define BBR3_PROBE_RTT_DURATION_US	200000U		/* 200 ms */
#define BBR3_NO_SRTT_US			1000U	/* InitPacingRate's 1 ms */
#define BBR3_EXTRA_ACKED_FILTER_LEN	10	/* rounds, after Startup */
#define BBR3_PROBE_WAIT_BASE_US		2000000U	/* PickProbeWait: 2 s ... */
#define BBR3_PROBE_WAIT_RAND_US		1000000U	/* ... + up to 1 s */
#define BBR3_RENO_ROUNDS_MAX		63	/* IsRenoCoexistenceProbeTime's cap */
#define BBR3_PROBE_UP_ROUNDS_MAX	30	/* growth 2^30 a round at most */
#define BBR3_SEND_QUANTUM_US		1000U	/* SetSendQuantum: 1 ms of pacing */
#define BBR3_SEND_QUANTUM_MAX_BYTES	65536U	/* ... at most 64 KB */
#define BBR3_OFFLOAD_QUANTA		3	/* TCP: qdisc, TSO engine, receiver */
/* v2alpha's own (BBRv2): its burst sizing and its Startup loss tally. */
#define BBR2_PACING_SHIFT		10	/* a burst: 2^-10 s at the pacing rate */
#define BBR2_TSO_RTT_SHIFT		9	/* 64 KB more, halved per 512 us of min_rtt */
#define BBR2_MIN_TSO_RATE_BYTES		150000U	/* 1.2 Mbit/s: under it, 1-packet bursts */
#define BBR2_LOSS_EVENTS_MAX		15	/* its tally of loss ACKs saturates (4 bits) */
/* v2alpha's extra_acked: two slots, each the max of this many rounds (1 in Startup)... */
#define BBR2_EXTRA_ACKED_WIN_ROUNDS	5
/* ... the window's increment at most this much time at bw ... */
#define BBR2_EXTRA_ACKED_MAX_US		100000U
/* ... and its sampling epoch restarted past this many packets acked. */
#define BBR2_ACK_EPOCH_RESET_PKTS	(1U << 20)
/* v2alpha leaves ProbeBW_UP, a min_rtt in, once inflight is 1.25 BDP (v1's probe). */
#define BBR2_PROBE_UP_INFLIGHT_GAIN	1250

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

/* BBR.ack_phase: what the ACKs now coming in say about a bandwidth probe. */
enum bbr3_ack_phase {
	BBR3_ACKS_INIT,			/* not probing, no probe feedback */
	BBR3_ACKS_REFILLING,		/* sending at bw to fill the pipe */
	BBR3_ACKS_PROBE_STARTING,	/* inflight rising to probe */
	BBR3_ACKS_PROBE_FEEDBACK,	/* ACKs of the probe's packets */
	BBR3_ACKS_PROBE_STOPPING,	/* probe over, its ACKs still coming */
};

/*
 * The versions.  One core runs BBRv3 as draft-06 gives it and BBRv2 as
 * Google's v2alpha set it; what sets them apart here is a row of constants
 * each (bbr3_version_gains(); kernel/README.md, "bbr3 and BBRv2"):
 *
 *                          draft-06 (v3)   v2alpha (v2)
 *   Startup pacing gain    2.77            2.885 (2 / ln 2)
 *   Startup cwnd gain      2.0             2.885
 *   Drain pacing gain      0.5             0.347 (1 / 2.885)
 *   Drain cwnd gain        2.0             Startup's (2.885): keep the window
 *   ProbeBW_DOWN pacing    0.9             0.75
 *   ProbeBW_UP cwnd gain   2.25            2.0 (no extra while probing)
 *   Startup loss exit      6 lost ranges   8 lost ranges
 *
 * and three behaviours v3 changed, each where the version is tested:
 *
 *   Startup's loss exit    the round's loss    8 ACKs of the loss round
 *                          rate, lost ranges;  marked losses and this ACK's
 *                          bound max(bdp,      sample lost over 2 %; bound
 *                          round's delivery)   Inflight(1.0) of max_bw
 *   inflight_hi's credit   kept while the      dropped on every ACK not at
 *   in ProbeBW_UP          bound is not used   the bound (cwnd-limited)
 *   send quantum           1 ms at the pacing  2^-10 s at the pacing rate +
 *                          rate, >= 2          64 KB >> (min_rtt / 512 us),
 *                                              >= 2, 1 under 1.2 Mbit/s
 *
 * and v2alpha's Drain and extra_acked, which draft-06 rewrote:
 *
 *   Drain's exit           inflight <= Inflight  inflight that will still be
 *                          (1.0), or 3 rounds    in the network at the next
 *                                                departure <= Inflight(1.0)
 *                                                of max_bw; no round cap
 *   entering Drain         -                     ssthresh = Inflight(1.0) of
 *                                                max_bw (the stack's slow
 *                                                start ends there)
 *   extra_acked            a round's max, over   two slots of 5 rounds (1 in
 *                          10 rounds (1 in       Startup): the max of the last
 *                          Startup), every ACK   5-10; ACKs with a rate sample;
 *                                                the cwnd it adds at most
 *                                                100 ms at bw
 *
 * and its ProbeBW_UP and recovery, which v3 changed:
 *
 *   UP's exit              bw stopped growing    a min_rtt in, inflight at
 *                          (3 rounds, +25 %)     Inflight(1.25) of max_bw
 *   inflight ProbeBW reads C.inflight after      before the ACK, in the network
 *                          the ACK               at the next departure (+ its
 *                                                burst when the gain is > 1)
 *   fast recovery's end    cwnd restored         cwnd kept (never cut)
 *   a timeout              cwnd = inflight + 1   and inflight_shortterm = the
 *                                                saved cwnd (outside probes)
 *   an undo                back to Startup or    the state kept, the saved
 *                          REFILL                cwnd exactly
 *   Startup's cwnd floor   until an initial      under 2 initial windows
 *                          window delivered
 *   Startup's plateau      the round's last      max_bw
 *                          sample
 *   min_rtt's filters      a lower sample        a lower or equal one; not a
 *                          renews them           delayed ACK's once expired
 */
#define BBR3_VERSION_V2		2	/* Google's v2alpha */
#define BBR3_VERSION_V3		3	/* draft-ietf-ccwg-bbr-06 */

struct bbr3_gains {
	u32 startup_pacing;	/* thousandths, as every gain */
	u32 startup_cwnd;
	u32 drain_pacing;
	u32 probe_down_pacing;
	u32 probe_up_cwnd;
	u32 startup_full_loss_cnt;	/* lost ranges (v3) or loss ACKs (v2) a round */
	u32 drain_cwnd;		/* 0: Startup's cwnd gain (v2 keeps its window) */
};

/* What the draft leaves to the implementation or Google's Linux sets apart. */
struct bbr3_params {
	u32 initial_cwnd;	/* C.InitialCwnd, packets */
	u32 mss;		/* C.SMSS, bytes: only for the 64 KB send quantum */
	u32 version;		/* BBR3_VERSION_V2 or _V3; 0: V3 */
	/* The version's constants overridden (module parameters); 0: the version's. */
	u32 startup_pacing_gain;	/* thousandths */
	u32 startup_cwnd_gain;		/* thousandths */
	u32 startup_full_loss_cnt;	/* lost ranges (v3) or loss ACKs (v2) */
	u32 drain_pacing_gain;	/* thousandths; 0: the version's */
	u32 probe_down_pacing_gain; /* thousandths; 0: the version's */
	u32 seed;		/* PickProbeWait's draws (the kernel's random) */
};

/* One ACK: its rate sample (RS) and the connection's counters (C). */
struct bbr3_ack {
	u32 now_us;
	u32 delivered;		/* C.delivered: packets delivered so far */
	u32 inflight;		/* C.inflight after this ACK */
	u32 cwnd;		/* C.cwnd as the stack has it before this ACK */
	bool is_cwnd_limited;	/* C.is_cwnd_limited */
	u32 newly_acked;	/* RS.newly_acked: packets this ACK acks */
	u32 rs_delivered;	/* RS.delivered: packets over the sample */
	u32 rs_interval_us;	/* RS.interval; 0: no rate sample */
	u32 rs_prior_delivered;	/* RS.prior_delivered: P.delivered of the
				 * newest packet this ACK delivers */
	u32 rs_tx_in_flight;	/* RS.tx_in_flight: C.inflight when that
				 * packet was sent (our kernel patch) */
	u32 rs_lost;		/* RS.lost: packets lost since it was sent
				 * (our kernel patch) */
	s32 rs_rtt_us;		/* RS.rtt; negative: no sample */
	bool rs_is_app_limited;
	bool in_recovery;	/* in fast recovery after this ACK */
	bool has_selective_acks; /* C.has_selective_acks */
	u32 edt_wait_us;	/* until the next packet may leave (its earliest
				 * departure time less now; v2's Drain exit) */
	u32 rs_prior_in_flight;	/* C.inflight before this ACK (v2's ProbeBW
				 * phases read it) */
	bool rs_is_ack_delayed;	/* the sample's ACK may have been delayed (v2
				 * keeps it from renewing an expired min_rtt) */
};

/* A packet newly marked lost (HandleLostPacket's P, and C at that moment). */
struct bbr3_lost_packet {
	u32 now_us;
	u32 delivered;		/* C.delivered now */
	u32 lost;		/* C.lost now, this packet counted */
	u32 tx_in_flight;	/* P.tx_in_flight: C.inflight when P was sent */
	u32 tx_lost;		/* P.lost: C.lost when P was sent */
	u32 size;		/* P.size, packets (a GSO skb: several); 0: 1 */
	bool is_app_limited;	/* P.is_app_limited */
	bool new_range;		/* not contiguous with the previous lost one */
};

struct bbr3 {
	enum bbr3_state state;
	u32 version;		/* BBR3_VERSION_V2 or _V3 */
	struct bbr3_gains gains; /* the version's, with the parameters' */
	u32 pacing_gain;	/* thousandths */
	u32 cwnd_gain;
	u32 initial_cwnd;	/* C.InitialCwnd */
	u32 mss;
	u32 rng;		/* xorshift32 state for PickProbeWait */

	/* The control parameters: BBR's output. */
	u64 pacing_rate;	/* C.pacing_rate, bandwidth units */
	u32 cwnd;		/* C.cwnd, packets */
	u32 send_quantum;	/* C.send_quantum, packets */
	u32 max_inflight;	/* BBR.max_inflight */
	bool mark_app_limited;	/* ProbeRTT: the stack is to mark the
				 * connection app-limited (its samples low) */

	/* C as of the latest ACK or loss. */
	u32 delivered;
	u32 inflight;
	bool has_selective_acks;

	/* Packet-timed rounds (section "BBR.round_count"). */
	u32 next_round_delivered;
	u32 round_count;
	bool round_start;

	/* The max_bw filter: one slot per ProbeBW cycle, two cycles kept. */
	u64 max_bw_slot[2];
	u32 cycle_count;
	u64 max_bw;
	u64 bw;			/* min(max_bw, bw_shortterm) */

	/* extra_acked: a max over the last 1 (Startup) or 10 rounds (v2: its
	 * two slots, slot[win_idx] the newest, win_rounds old). */
	u32 extra_acked_interval_start;
	u32 extra_acked_delivered;
	u32 extra_acked_slot[BBR3_EXTRA_ACKED_FILTER_LEN];
	u32 extra_acked_round;	/* the round of the newest slot */
	u32 extra_acked;
	u32 extra_acked_win_rounds;
	u32 extra_acked_win_idx;

	/* min_rtt and ProbeRTT's schedule (section "ProbeRTT Logic"). */
	u32 min_rtt_us;
	u32 min_rtt_stamp;
	u32 probe_rtt_min_delay_us;
	u32 probe_rtt_min_stamp;
	bool probe_rtt_expired;
	u32 probe_rtt_done_stamp;	/* 0: not yet at ProbeRTT's cwnd */
	bool probe_rtt_round_done;
	bool idle_restart;

	/* Full pipe (Startup, ProbeBW_UP). */
	u64 full_bw;
	u32 full_bw_count;
	bool full_bw_now;
	bool full_bw_reached;

	/* The ProbeBW cycle. */
	enum bbr3_ack_phase ack_phase;
	u32 cycle_stamp;
	u32 bw_probe_wait_us;
	u32 rounds_since_probe_up;
	u32 bw_probe_up_rounds;
	u32 bw_probe_up_acked;
	u32 probe_up_acked_per_inc;
	bool prev_probe_too_high;
	bool prev_probe_precautionary;

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
	/* v2's tally: ACKs of the loss round that marked losses (saturating). */
	u32 loss_events_in_round;
	bool lost_since_ack;	/* packets marked lost since the last ACK */

	u32 drain_start_round;
	/* v2: the ssthresh the stack is to take, set on entering Drain
	 * (Inflight(1.0) of max_bw); the glue takes it and zeroes it. */
	u32 ssthresh;

	/* Loss recovery and its undo. */
	u32 prior_cwnd;
	enum bbr3_state undo_state;
	u64 undo_bw_shortterm;
	u32 undo_inflight_shortterm;
	u32 undo_inflight_longterm;
};

/* The draft's events: a connection starts, an ACK, a lost packet, ... */
void bbr3_init(struct bbr3 *b, u32 now_us, u32 srtt_us,
	       const struct bbr3_params *p);
void bbr3_on_ack(struct bbr3 *b, const struct bbr3_ack *a);
void bbr3_on_lost_packet(struct bbr3 *b, const struct bbr3_lost_packet *p);
/* ... a transmission (HandleRestartFromIdle), recovery and its undo. */
void bbr3_on_transmit(struct bbr3 *b, u32 now_us, u32 inflight,
		      bool app_limited);
void bbr3_on_enter_fast_recovery(struct bbr3 *b);
void bbr3_on_enter_rto(struct bbr3 *b, u32 inflight);
void bbr3_on_timeout(struct bbr3 *b, u32 cwnd);
void bbr3_on_exit_recovery(struct bbr3 *b, bool after_timeout);
void bbr3_on_spurious_loss(struct bbr3 *b);

/* The constants of @version (BBR3_VERSION_*), NULL for an unknown one. */
const struct bbr3_gains *bbr3_version_gains(u32 version);

/* Model queries. */
u64 bbr3_delivery_rate(u32 delivered, u32 interval_us);
u64 bbr3_pacing_rate_bytes_per_sec(const struct bbr3 *b);
u32 bbr3_bdp_multiple(const struct bbr3 *b, u32 gain);
u32 bbr3_inflight(const struct bbr3 *b, u32 gain);
u32 bbr3_inflight_with_headroom(const struct bbr3 *b);
u32 bbr3_probe_rtt_cwnd(const struct bbr3 *b);
bool bbr3_is_inflight_too_high(u32 lost, u32 tx_in_flight, bool has_sack);
u32 bbr3_inflight_at_loss(u32 tx_in_flight, u32 lost, u32 size);

#endif /* BBR3_H */
