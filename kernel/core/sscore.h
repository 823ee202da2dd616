/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sscore: the algorithm core of slowstart-lab's congestion controls.
 *
 * One congestion-avoidance algorithm, CUBIC as Linux computes it (cubic.c),
 * behind five ways of leaving slow start:
 *
 *   SS_TRADITIONAL  double cwnd every round until loss;
 *   SS_HYSTART      HyStart: leave when an ACK train gets long (the
 *                   bottleneck is spreading the train out) or when the RTT
 *                   of a round rises above the connection's minimum;
 *   SS_HYSTARTPP    HyStart++ (RFC 9406): on an RTT rise, first slow down
 *                   (Conservative Slow Start, CSS) and leave only if the
 *                   rise persists for CSS_ROUNDS rounds;
 *   SS_SUSS         SUSS (SIGCOMM'24) on top of HyStart: when a round's ACK
 *                   train shows the pipe is far from full, grow cwnd four-
 *                   fold instead of two-fold in that round, sending the
 *                   extra ("red") packets paced over the idle part of the
 *                   RTT while the ACK-clocked ("blue") packets keep
 *                   measuring the path for HyStart.  Three versions (suss.h,
 *                   SS_SUSS_VERSIONS): the authors' 2024 code, which
 *                   produced the paper's numbers, their 2025 rewrite, and
 *                   ours from the paper's text;
 *   SS_SUSS_G2      SUSS with its growth factor held at 2: its measuring
 *                   (blue trains, HyStart on blue ACKs, its events) without
 *                   its jumps, to tell the two apart;
 *
 * and, for the starts of two other papers, two more families:
 *
 *   SS_RENO_FIXED   NewReno (RFC 6582's window rules) with a fixed initial
 *                   ssthresh (the Astart paper's baseline: 32 packets);
 *   SS_RENO_HOE     NewReno with Hoe's initial ssthresh: a bandwidth
 *                   estimate from the first three ACKs (least squares over
 *                   the packet-pair spacing) times the first RTT;
 *   SS_RENO_ASTART  NewReno with Adaptive Start (Astart, INFOCOM'04): on
 *                   every ACK of the start-up, ssthresh is raised to
 *                   Westwood's eligible rate estimate (ERE) times minRTT,
 *                   so cwnd grows by mini exponential phases (cwnd below
 *                   ssthresh) and mini linear ones (at or above it);
 *   SS_STD_START    CUBIC + HyStart with the start Blitzstart is compared
 *                   with: an initial window of 32 and a paced socket;
 *   SS_BLITZ        Blitzstart: no slow start; the first window is a
 *                   hinted bandwidth times the handshake's RTT, paced over
 *                   75% of that RTT, then CUBIC's congestion avoidance;
 *
 * and one the IETF's congestion control working group discusses now:
 *
 *   SS_RAPID        Rapid Start (draft-kazuho-ccwg-rapid-start): a first
 *                   window of 2 IW paced over the RTT, 3x a round while
 *                   the round's floor RTT shows no queue, 2x after; on the
 *                   first loss the window converges from what the recovery
 *                   delivers and loses, then CUBIC.
 *
 * Each start is an ops table in a file of its own (ssvariant.h has the
 * hooks, variants.h the registry); the entry points below call its hooks.
 *
 * A "round" is one RTT's worth of data: it starts when the cumulative ACK
 * passes the first sequence sent after the previous round started.
 *
 * The core is plain C without kernel headers, floating point or hidden
 * state: the kernel glue (../sslab_tcp.c) and the user-space tests
 * (../tests/) call the same functions with the same numbers.
 *
 *   time      u32 microseconds of a monotonic clock; only differences are
 *             used, through signed 32-bit subtraction, so wraparound is safe
 *             for intervals up to 35 minutes;
 *   windows   u32 packets;
 *   sequence  u32 TCP sequence numbers, compared with ss_before/ss_after.
 *
 * Products of packets and microseconds are done in u64.
 */
#ifndef SSCORE_H
#define SSCORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/math64.h>
#define ss_div64(a, b) div64_u64((a), (b))
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#define ss_div64(a, b) ((u64)(a) / (u64)(b))
#endif

static inline bool ss_before(u32 seq1, u32 seq2)
{
	return (s32)(seq1 - seq2) < 0;
}

static inline bool ss_after(u32 seq1, u32 seq2)
{
	return ss_before(seq2, seq1);
}

static inline u32 ss_min(u32 a, u32 b) { return a < b ? a : b; }
static inline u32 ss_max(u32 a, u32 b) { return a > b ? a : b; }
static inline u32 ss_clamp(u32 v, u32 lo, u32 hi) { return ss_max(lo, ss_min(v, hi)); }
static inline u32 ss_sat32(u64 v) { return v > 0xffffffffULL ? 0xffffffffU : (u32)v; }

/* u32 counters saturate rather than wrap. */
static inline u32 ss_sat_add(u32 a, u64 b)
{
	return ss_sat32((u64)a + b);
}

/* Time from @then to @now in microseconds; 0 if @then is in the future. */
static inline u32 ss_elapsed(u32 now, u32 then)
{
	s32 d = (s32)(now - then);

	return d > 0 ? (u32)d : 0;
}

#define SS_USEC_PER_MSEC 1000U
#define SS_USEC_PER_SEC 1000000U
#define SS_RTT_UNKNOWN 0xffffffffU

/* A name of the registry (variants.h) that pins no version: its start runs
 * the version of its own parameter (SUSS: suss_version; SEARCH:
 * search_version), which the start's init reads. */
#define SS_VERSION_PARAM 0xffU

/*
 * A start with versions declares them in its header, SS_<START>_VERSIONS,
 * a line each:
 *
 *   V(ID, pin, value, "name", "what it is")
 *
 * ID is the constant a registry name pins (SS_NAME's last field; ss_init
 * carries its value, @pin, to the start's init); @value is what the
 * start's own version parameter takes for it; "name" is what a run record
 * calls it.  The start makes its constants with SS_VERSION_ENUM and counts
 * them with SS_VERSION_COUNT; its entry in the registry names the list
 * (SS_VERSIONS, variants.h) so that the harness reads the same lines
 * (runners/sslab/ccas.py).  No pin may be SS_VERSION_PARAM.
 */
#define SS_VERSION_ENUM(id, pin, value, name, what) id = (pin),
#define SS_VERSION_COUNT(id, pin, value, name, what) + 1

/*
 * When HyStart's round starts.  HyStart measures its ACK train and its round
 * minimum RTT from the start of a round of its own:
 *
 *   SS_HS_ROUNDS_CORE       at the core's round start (SUSS 2025 and ours,
 *                           HyStart++);
 *   SS_HS_ROUNDS_LINUX      as Linux 6.1.192's HyStart: on an ACK it tests
 *                           (an RTT sample taken, in slow start), once
 *                           snd_una has passed the end of its round, before
 *                           the low-window test (the 2025 fix);
 *   SS_HS_ROUNDS_LINUX_519  as Linux 5.19's, the paper's kernel: the same,
 *                           but only on ACKs with cwnd >= hs_low_window, so
 *                           a round that began below it starts late.
 */
enum ss_hystart_rounds {
	SS_HS_ROUNDS_CORE,
	SS_HS_ROUNDS_LINUX,
	SS_HS_ROUNDS_LINUX_519,
};

/*
 * Why slow start ended, and what the core and the starts tell the trace.
 *
 * An exit cause is X(ID, number, "what it means"): the constant SS_EXIT_<ID>
 * of enum ss_exit_cause, whose number every trace carries (SS_EV_EXIT's a),
 * so a cause keeps its number for good and a new one takes one no other
 * has (the compiler refuses two alike: ss_exit_numbers_unique, sscore.c).
 * An event is E(ID, "name", "what a, b and c are"): the constant SS_EV_<ID>
 * of enum ss_event_type and the name the trace prints (ss_event_name).  The
 * core declares its own here; a start declares its own in its header
 * (SS_<START>_EXITS, SS_<START>_EVENTS) and names them in its entry in
 * the registry (SS_EXITS, SS_EVENTS: variants.h).
 */
#define SS_CORE_EXITS(X)						\
	X(NONE, 0, "slow start has not ended")				\
	X(LOSS, 5, "loss or ECN (Recovery, CWR or an RTO)")

#define SS_CORE_EVENTS(E)						\
	E(NEW_ROUND, "new_round", "a = round, b = end_seq, c = cwnd")	\
	E(GROWTH, "growth", "a = round, b = the growth factor G, c = the start's reason bits") \
	E(EXIT, "exit", "a = cause, b = cwnd that ended slow start, c = ssthresh (= cwnd kept)") \
	E(LOSS, "loss", "a = cwnd before, b = in flight, c = ssthresh")	\
	E(ESTIMATE, "estimate", "a = rate (bytes/s), b = RTT used (us), c = window set") \
	E(START, "start", "a = cwnd, b = ssthresh, c = hint (bytes/s, Blitzstart)")

/*
 * Each start's own declarations (its state, its parameters), from its
 * header, in the registry's order (variants.h).
 */
#define SS_DECLARATIONS
#include "variants.h"
#undef SS_DECLARATIONS

/* The variants, the SS_VARIANT lines of the registry (variants.h), each
 * with the number every trace line carries. */
enum ss_variant {
#define SS_VARIANT(id, number, ops) SS_##id = (number),
#include "variants.h"
#undef SS_VARIANT
};

/* One more than the largest variant number: a member of @number + 1 bytes
 * per variant, so the union's size is the largest of them. */
union ss_variant_numbers {
#define SS_VARIANT(id, number, ops) char id[(number) + 1];
#include "variants.h"
#undef SS_VARIANT
};
#define SS_NR_VARIANTS sizeof(union ss_variant_numbers)

/* Why slow start ended (trace and tests): the core's and each start's. */
enum ss_exit_cause {
#define SS_EXIT(id, number, what) SS_EXIT_##id = (number),
#define SS_EXITS(list) list(SS_EXIT)
	SS_EXITS(SS_CORE_EXITS)
#include "variants.h"
#undef SS_EXITS
#undef SS_EXIT
};

/*
 * Tunables: every start's parameters (SS_PARAM lines of the start headers,
 * listed by the registry's SS_PARAMS lines), one u32 field each.  The glue
 * makes each a module parameter; ss_default_params holds the defaults.
 */
struct ss_params {
#define SS_PARAM(name, value, kind, description) u32 name;
#define SS_PARAMS(list) list(SS_PARAM)
#include "variants.h"
#undef SS_PARAMS
#undef SS_PARAM
};

/* An initializer of struct ss_params with every default (sscore.c, the glue). */
#define SS_PARAM_DEFAULT(name, value, kind, description) .name = (value),

extern const struct ss_params ss_default_params;

/*
 * Per-connection state.  The glue allocates it when a connection starts (it
 * is larger than the 104 bytes of the kernel's icsk_ca_priv area, which
 * keeps a pointer to it).
 */
/* CUBIC, as Linux computes it (cubic.c).  Ticks: the kernel's clock (jiffies). */
struct ss_cubic {
	u32 cnt;		/* packets acked per +1 of cwnd, as last computed */
	u32 w_max;		/* cwnd before the last reduction; 0 = none yet */
	u32 last_cwnd;		/* cwnd when cnt was last computed ... */
	u32 last_tick;		/* ... and the tick */
	u32 origin;		/* the curve's plateau, packets */
	u32 k;			/* from the epoch's start to the plateau, 1/1024 s */
	u32 epoch;		/* the tick the epoch began; 0 = none */
	u32 acks;		/* packets acked in the epoch, for the Reno estimate */
	u32 w_est;		/* the Reno estimate, packets */
};

struct ss_round {
	u32 end_seq;		/* round ends when snd_una passes this */
	u32 start_us;		/* when the round started */
	u32 min_rtt_us;		/* min RTT of the connection (minRTT) */
	u16 round;		/* 1 = the initial window's round */
	u16 min_rtt_round;	/* round in which min_rtt last decreased */
	u8 found;		/* slow start exit decided */
	u8 exit_cause;		/* enum ss_exit_cause */
};

/* HyStart's round (enum ss_hystart_rounds says when it starts). */
struct ss_hystart {
	u32 end_seq;		/* it ends when snd_una passes this (Linux's rounds) */
	u32 start_us;		/* when it started */
	u32 last_ack_us;	/* the last ACK of the current ACK train */
	u32 round_min_rtt_us;	/* moRTT: the round's minimum RTT so far */
	u8 samples;		/* RTT samples taken in the round */
	u8 rounds;		/* enum ss_hystart_rounds, chosen when the connection starts */
	u8 no_train;		/* the ACK-train exit is off (Google QUIC's: cubic_std, cubic_blitz) */
};

/* The peer's window as ss_window_on_arrival last saw it and what it set. */
struct ss_peer_wnd {
	u32 raw;		/* the peer's own (advertised, scaled) */
	u32 set;		/* what the rule made of it */
};

struct sscore_state {
	struct ss_cubic cubic;
	struct ss_round rnd;
	struct ss_hystart hs;
	struct ss_peer_wnd peer;
	union {			/* the start's own (the registry's SS_STATE lines) */
#define SS_STATE(member, type) struct type member;
#include "variants.h"
#undef SS_STATE
	};
	u8 variant;		/* enum ss_variant */
	u8 version;		/* the start's version, as its trace events report it (SUSS:
				 * enum ss_suss_version, suss.h; 0 for the others) */
	u8 glue_flags;		/* the kernel glue's own bits */
	u8 cubic_connections;	/* CUBIC emulates this many connections; 0 or 1: one, Linux's */
};

/* What the connection looks like at an ACK (filled by the glue). */
struct ss_ack {
	u32 now_us;
	u32 now_ticks;		/* the kernel's clock (jiffies): CUBIC's epochs */
	u32 hz;			/* ticks per second */
	u32 snd_una;		/* after this ACK */
	u32 snd_nxt;
	u32 acked;		/* packets newly acked by this ACK */
	u32 rtt_us;		/* RTT sample; SS_RTT_UNKNOWN if none */
	u32 in_flight;		/* packets in flight after this ACK */
	u32 mss;		/* bytes */
	u32 srtt_us;		/* smoothed RTT (0 = none yet) */
	u64 pacing_rate;	/* current pacing rate, bytes/s (0 = none) */
	u32 gso_max_bytes;	/* largest burst the stack may send at once */
	bool paced;		/* the socket paces on its own (not SUSS's pacing) */
	/* The stack sends what this ACK releases before a SUSS pacing period it
	 * starts, ACK-clocked (the authors' kernel, so the replay of its log, and
	 * our kernel with patch 0004); a module without it cannot: those packets
	 * then leave paced, after the guard. */
	bool tail_clocked;
	/* The sender grows cwnd towards a pacing period's limit as its packets
	 * leave (ss_sent_window_full, from the stack's hook in our patch 0004):
	 * the core does not raise cwnd to the limit at once.  The replay leaves
	 * it off: its cwnd stands for what their kernel's would be by the next
	 * round. */
	bool sender_grows;
	/* The connection's packets delivered (cumulatively acked or SACKed) and
	 * declared lost so far (the socket's counters), and whether it is in
	 * a window reduction (Recovery or CWR) at this ACK: Rapid Start's
	 * convergence reads them. */
	u32 delivered;
	u32 lost;
	bool recovering;
};

/* The connection's windows, updated in place by the core. */
struct ss_win {
	u32 cwnd;
	u32 ssthresh;
	u32 cwnd_cnt;		/* the socket's snd_cwnd_cnt: packets acked towards
				 * the next +1 in congestion avoidance */
};

/* A pacing period planned by SUSS, for the glue to carry out. */
struct ss_pacing_plan {
	bool start;		/* start pacing now */
	u32 red_pkts;		/* packets to pace */
	u32 duration_us;	/* over this long */
	u64 rate;		/* bytes per second */
	u32 guard_us;		/* delay before the first paced packet */
	u32 limit;		/* cwnd at the end of the period */
	u32 growth;		/* G */
};

/* Events, for tracing: the core's and each start's (above).  The glue (or a
 * test) provides ss_trace_event(). */
enum ss_event_type {
#define SS_EVENT(id, name, fields) SS_EV_##id,
#define SS_EVENTS(list) list(SS_EVENT)
	SS_EVENTS(SS_CORE_EVENTS)
#include "variants.h"
#undef SS_EVENTS
#undef SS_EVENT
	SS_NR_EVENTS,
};

/* The name the trace prints for event @type ("?" for none). */
const char *ss_event_name(unsigned int type);

struct ss_event {
	enum ss_event_type type;
	u32 a, b, c;
	const struct ss_pacing_plan *plan;
};

void ss_trace_event(const struct sscore_state *st, const struct ss_event *ev);

/* API, in the order the kernel calls it.  @version: the version the
 * connection's name pins, in its start's own numbering (the registry's
 * SS_NAME lines), or SS_VERSION_PARAM: its start's parameter's; of @p, what
 * is read when a connection starts (hs_round_fix). */
void ss_init(struct sscore_state *st, const struct ss_params *p, enum ss_variant v,
	     unsigned int version, u32 now_us, u32 snd_nxt, u32 cwnd, u32 mss);

/* Every ACK that acks new data: RTT samples, rounds, exit tests, SUSS. */
void ss_on_ack(struct sscore_state *st, const struct ss_params *p,
	       const struct ss_ack *ack, struct ss_win *w,
	       struct ss_pacing_plan *plan);

/* cwnd growth for an ACK outside Recovery/CWR (slow start or CUBIC). */
void ss_cong_avoid(struct sscore_state *st, const struct ss_params *p,
		   const struct ss_ack *ack, struct ss_win *w);

/* Loss or ECN: returns the new ssthresh; may cut w->cwnd first (SUSS). */
u32 ss_ssthresh(struct sscore_state *st, u32 in_flight, struct ss_win *w);

/*
 * The connection's first window and ssthresh, for the variants that choose
 * them (NewReno family: ssthresh; standard start: cwnd).  Called once after
 * ss_init with the window the stack chose.
 */
void ss_init_window(struct sscore_state *st, const struct ss_params *p, struct ss_win *w);

/*
 * Blitzstart: start with cwnd = @hint (bytes/s) x @rtt_us, in congestion
 * avoidance.  Fills @plan with the rate that sends that window over
 * blitz_pace_pct of the RTT.  Without a hint or an RTT, the standard start
 * (std_iw, slow start) is used and @plan->start stays false.
 */
void ss_blitz_start(struct sscore_state *st, const struct ss_params *p, u64 hint, u32 rtt_us,
		    u32 mss, struct ss_win *w, struct ss_pacing_plan *plan);

/* The handshake's RTT, once the connection is established (after
 * ss_init_window): Rapid Start paces its first window over it. */
void ss_handshake(struct sscore_state *st, const struct ss_params *p, u32 rtt_us, u32 mss);

/* Rapid Start's queue_buildup_thresh for @min_rtt_us (exposed for tests). */
u32 ss_rapid_threshold(const struct ss_params *p, u32 min_rtt_us);

/* RTO (the kernel's Loss state); @cwnd_before: cwnd before the timeout;
 * @now_us and @snd_nxt: where HyStart's round starts again. */
void ss_on_rto(struct sscore_state *st, u32 cwnd_before, u32 now_us, u32 snd_nxt);

/* Sending restarts after @idle_ticks idle. */
void ss_on_idle_restart(struct sscore_state *st, u32 now_ticks, u32 idle_ticks);

/* Does the connection take ACKs while the kernel is in its Loss state (after
 * an RTO)?  Linux's CUBIC does; the NewReno family does not. */
bool ss_acks_in_loss(const struct sscore_state *st);

/* Is SUSS pacing right now (the glue must keep its rate)? */
bool ss_suss_pacing(const struct sscore_state *st);

/*
 * The stack has sent a packet that filled the window (our kernel patch
 * 0004's sent_window_full).  In a SUSS code version's pacing period cwnd
 * grows by 2 while below the period's limit, as their sender grows it.
 * Returns true the first time in a period: the glue then starts pacing (the
 * packets the period's tail ACK released have left ACK-clocked).
 */
bool ss_sent_window_full(struct sscore_state *st, struct ss_win *w);

/*
 * Should the sender not be held by the peer's advertised window right now?
 *
 * Linux caps a receiver's first advertised window at 64 KB and grows it by
 * about two segments per segment received (x3 a round): enough for slow
 * start's x2, not for SUSS's x4.  Ours (SUSS_VER_PAPER), as an option: a
 * SUSS flow, in slow start, in a round no later than suss_lift_rwnd_rounds
 * (0, the default: never) is not held by it.  Blitzstart's first rounds are
 * not either.  The SUSS code versions have their authors' own rules
 * (ss_peer_window).
 */
bool ss_ignore_peer_window(const struct sscore_state *st, const struct ss_params *p);

/*
 * The send window (bytes) the SUSS authors' code lets a connection use, and
 * when (enum ss_window_rule):
 *
 *   2024, SS_WINDOW_ON_ARRIVAL: the peer's window as it arrives (the
 *         kernel's slow-path window update; a fast-path ACK leaves it), while
 *         SUSS clocks or paces: shifted left by the jumps (while round <
 *         suss_max + jumps), at most 3 MB (which can also lower it);
 *   2025, SS_WINDOW_EACH_CONG_AVOID: on every cong_avoid, at least 10 MSS x
 *         2^(round + jumps - 1) while SUSS clocks or paces and round <
 *         suss_max + jumps, else at least 10 MSS.
 *
 * ss_window_on_arrival() applies the 2024 rule to the window the kernel
 * holds after an ACK's slow-path update: once, to the peer's own window (what
 * it wrote last), never to what the rule wrote (struct ss_peer_wnd).  Other
 * variants and versions: SS_WINDOW_NONE, @snd_wnd.
 */
enum ss_window_rule {
	SS_WINDOW_NONE,
	SS_WINDOW_ON_ARRIVAL,
	SS_WINDOW_EACH_CONG_AVOID,
};
u32 ss_peer_window(const struct sscore_state *st, u32 snd_wnd, u32 mss);
enum ss_window_rule ss_window_rule(const struct sscore_state *st);
u32 ss_window_on_arrival(struct sscore_state *st, u32 snd_wnd, u32 mss);

/* The glue's questions about a connection's start: the rate its first
 * window is paced at right now (Blitzstart's round 1; 0: none); the state
 * number it traces per ACK; does its socket pace from the start (the
 * Blitzstart comparison's transport paces); does it take a hinted rate when
 * the connection starts (ss_blitz_start). */
u32 ss_first_window_pace_rate(const struct sscore_state *st);
u8 ss_trace_state(const struct sscore_state *st);
bool ss_paced_socket(const struct sscore_state *st);
bool ss_takes_hint(const struct sscore_state *st);

/* The rate estimators' arithmetic (ratestart.c), exposed for tests. */
u32 ss_ere_sample_interval(const struct ss_ere *e, u32 cwnd, u32 mss, u32 min_rtt_us, u32 srtt_us);
u32 ss_ere_filter(u32 prev_ere, u32 prev_sample, u32 sample, u32 dt_us, u32 tau_us);
u64 ss_hoe_rate(const u32 t_us[3], const u32 una[3]);

/* The kernel's approximate cube root, from which CUBIC's K comes, and its
 * additive increase (tcp_cong_avoid_ai: +1 packet per @per packets acked,
 * counted in w->cwnd_cnt, the socket's snd_cwnd_cnt); exposed for tests. */
u32 ss_cubic_root(u64 a);
void ss_additive_increase(struct ss_win *w, u32 per, u32 acked);

/* CUBIC of N connections (Google QUIC's emulation, cubic.c): beta in 1/1024
 * and the Reno estimate's scale (packets per +1 = cwnd x scale / 8); N is
 * clamped to 1..SS_CUBIC_MAX_CONNECTIONS, 1 being Linux's (717, 15).  Eight
 * is ample for QUIC's 2 and keeps the scale at least 1 (at 8: beta 985, 2). */
#define SS_CUBIC_MAX_CONNECTIONS 8U
u32 ss_cubic_beta(u32 connections);
u32 ss_cubic_reno_scale(u32 connections);

#endif /* SSCORE_H */
