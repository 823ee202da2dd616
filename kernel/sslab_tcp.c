// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_sslab: slowstart-lab's congestion controls.
 *
 * One module, one congestion-control name per SS_NAME line of the starts' entries (core/variants.h; seventeen), so that every socket picks its
 * start by name (setsockopt TCP_CONGESTION, or a namespace's
 * net.ipv4.tcp_congestion_control) and one experiment can mix them:
 *
 *   cubic_ss     CUBIC, traditional slow start (no HyStart)
 *   cubic_hs     CUBIC + HyStart (meant to behave like the built-in "cubic")
 *   cubic_hspp   CUBIC + HyStart++ (RFC 9406)
 *   cubic_suss   CUBIC + HyStart + SUSS, the version of suss_version (2024 by default)
 *   cubic_suss24, cubic_suss25, cubic_susspaper
 *                the same, pinned to one version (for one flow in a mixed run)
 *   reno_fixed   NewReno, initial ssthresh 32 packets (the Astart paper's NewReno)
 *   reno_hoe     NewReno, initial ssthresh from Hoe's packet-pair estimate
 *   reno_astart  NewReno + Astart (ssthresh from Westwood's eligible rate)
 *   cubic_std    CUBIC + HyStart, initial window 32, paced (Blitzstart's baseline)
 *   cubic_blitz  Blitzstart: first window = hint x handshake RTT, paced, then CUBIC
 *   cubic_suss_g2  SUSS with its growth factor held at 2 (its measuring, no jumps)
 *   cubic_rapid  Rapid Start (draft-kazuho-ccwg-rapid-start), then CUBIC
 *   cubic_search SEARCH, the version of search_version (3.0 by default), then CUBIC
 *   cubic_search3, cubic_search4
 *                the same, pinned to SEARCH 3.0 or 4.0
 *
 * Blitzstart's hint is the socket's SO_MAX_PACING_RATE (bytes per second),
 * set before the handshake on the sending socket or on the listening socket
 * it is accepted from.  The module takes it as the hint when the connection
 * is established and lifts the cap, so it limits nothing afterwards: any
 * program can hint with one setsockopt, and a BPF sock_ops program can do
 * it for programs that cannot be changed.
 *
 * The algorithms live in core/sscore.c, shared with the user-space tests;
 * this file only moves numbers between struct tcp_sock and the core, and
 * carries out SUSS's pacing periods with TCP's internal pacing:
 *
 *  - a period starts when the core plans one: the socket's pacing rate and
 *    its cap (sk_max_pacing_rate) are set to the planned rate, internal
 *    pacing is switched on if nothing paced the socket before, and the
 *    next departure time (tcp_wstamp_ns) is pushed out by the guard;
 *  - while it lasts, the stack's per-ACK pacing update cannot exceed the
 *    cap, so it cannot overwrite the SUSS rate with a faster one;
 *  - it ends at the next round, an exit or a loss: the socket's own cap and
 *    pacing status are restored, and the stack paces (or not) as it would.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "core/sscore.h"
#include "sslab_bbr3.h"

#define CREATE_TRACE_POINTS
#include "sslab_trace.h"

static struct ss_params sslab_params = {
#define SS_PARAMS(list) list(SS_PARAM_DEFAULT)
#include "core/variants.h"
#undef SS_PARAMS
};

/* suss_version: the SUSS code version cubic_suss runs (read when a connection starts). */
static int suss_version_set(const char *val, const struct kernel_param *kp)
{
	unsigned int year;
	int err = kstrtouint(val, 10, &year);

	if (err)
		return err;
	if (ss_suss_version_of_year(year) == SUSS_NR_VERSIONS)
		return -EINVAL;
	*(unsigned int *)kp->arg = year;
	return 0;
}

static const struct kernel_param_ops suss_version_ops = {
	.set = suss_version_set,
	.get = param_get_uint,
};

/*
 * Every start's parameters (the P lines of core/'s start headers) as module
 * parameters, writable, read on every ACK (those marked so: when a
 * connection starts).  A parameter's kind says which values it takes:
 * uint, any unsigned integer; flag, 0 or 1 (the harness refuses others
 * before a run; a write by hand is taken as the core reads it, non-zero as
 * 1); suss_version, a year the core knows, checked here; range(lo, hi),
 * the range its header gives (runners/sslab/ccas.py reads it and refuses
 * others; the core clamps a value written by hand).
 */
#define SSLAB_PARAM_uint(name)	module_param_named(name, sslab_params.name, uint, 0644)
#define SSLAB_PARAM_flag(name)	SSLAB_PARAM_uint(name)
#define SSLAB_PARAM_suss_version(name) \
	module_param_cb(name, &suss_version_ops, &sslab_params.name, 0644)
/* A kind range(lo, hi) pastes to SSLAB_PARAM_range(lo, hi), which leaves
 * SSLAB_PARAM_uint to take the (name) that follows. */
#define SSLAB_PARAM_range(lo, hi) SSLAB_PARAM_uint
#define SSLAB_PARAM(name, value, kind, description)			\
	SSLAB_PARAM_##kind(name);					\
	MODULE_PARM_DESC(name, description);
#define SS_PARAMS(list) list(SSLAB_PARAM)
#include "core/variants.h"
#undef SS_PARAMS

static unsigned int alloc_failures;
module_param(alloc_failures, uint, 0444);
MODULE_PARM_DESC(alloc_failures, "connections that ran as the kernel's reno (no memory for their state)");

/*
 * A connection's state: the core's and what the glue restores.  It is larger
 * than the 104 bytes a congestion control keeps in the socket
 * (icsk_ca_priv), so the socket keeps a pointer to it, allocated when the
 * connection starts; a connection whose allocation failed runs as the
 * kernel's reno and is counted in alloc_failures.
 */
struct sslab_conn {
	struct sscore_state st;
	struct sock *sk;	/* the connection's socket (for the tracepoints) */
	u32 saved_max_rate;	/* socket's own cap, bytes/s; ~0U = none */
	/* A SUSS pacing period planned and not yet begun (our kernel's sender
	 * hooks begin it when the tail ACK's packets have left): */
	u64 pace_rate;		/* bytes/s */
	u64 pace_start_ns;	/* the first red packet's departure (tail ACK + guard) */
	bool pacing_on;		/* the period's pacing has begun */
};

/* Our kernel's patch 0004: the stack tells a congestion control when a packet
 * has filled the window and lets it keep its pacing rate. */
#ifdef TCP_CA_SSLAB_SEND_HOOKS
#define SSLAB_SEND_HOOKS true
#else
#define SSLAB_SEND_HOOKS false
#endif

/* What the socket keeps: the pointer. */
struct sslab_sock {
	struct sslab_conn *conn;
};

#define SSLAB_WE_PACE 0x1	/* st.glue_flags: we switched internal pacing on */

static struct sslab_conn *sslab_of(const struct sock *sk)
{
	return ((struct sslab_sock *)inet_csk_ca(sk))->conn;
}

static struct sock *sk_of(const struct sscore_state *st)
{
	return container_of(st, struct sslab_conn, st)->sk;
}

static u64 now_us(const struct tcp_sock *tp)
{
	return tp->tcp_mstamp;
}

void ss_trace_event(const struct sscore_state *st, const struct ss_event *ev)
{
	trace_sslab_event(sk_of(st), st, ev);
}

static void trace_ack(struct sock *sk)
{
	const struct sscore_state *st = &sslab_of(sk)->st;

	trace_sslab_ack(sk, st, ss_trace_state(st));
}

/* ---- SUSS pacing periods ------------------------------------------------ */

/* Pace at @rate from @start_ns on (the guard: the next departure held until then). */
static void suss_start_pacing(struct sock *sk, u64 rate, u64 start_ns)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	unsigned long own = READ_ONCE(sk->sk_max_pacing_rate);

	ss->saved_max_rate = own >= U32_MAX ? U32_MAX : (u32)own;
	WRITE_ONCE(sk->sk_max_pacing_rate, (unsigned long)rate);
	WRITE_ONCE(sk->sk_pacing_rate, (unsigned long)rate);
	if (cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED) == SK_PACING_NONE)
		ss->st.glue_flags |= SSLAB_WE_PACE;
	tp->tcp_wstamp_ns = max(tp->tcp_wstamp_ns, start_ns);
	ss->pacing_on = true;
}

/*
 * A SUSS pacing period is planned at its round's blue-tail ACK.  With our
 * kernel's sender hooks it begins as theirs did: the tail ACK's own packets
 * leave ACK-clocked, and the first packet after which the window is full
 * switches the socket to pacing, its next departure held until the tail
 * ACK's time + the guard (sslab_sent_window_full).  Without them (a stock
 * kernel) it begins at once: the tail ACK's packets wait for the guard too.
 */
static void suss_plan_pacing(struct sock *sk, const struct ss_pacing_plan *plan)
{
	struct sslab_conn *ss = sslab_of(sk);
	u64 start_ns = tcp_sk(sk)->tcp_clock_cache + (u64)plan->guard_us * NSEC_PER_USEC;

	if (SSLAB_SEND_HOOKS) {
		ss->pace_rate = plan->rate;
		ss->pace_start_ns = start_ns;
		ss->pacing_on = false;
		return;
	}
	suss_start_pacing(sk, plan->rate, start_ns);
}

/* Undo what suss_start_pacing did (nothing if the period never began). */
static void suss_stop_pacing(struct sock *sk)
{
	struct sslab_conn *ss = sslab_of(sk);
	unsigned long own = ss->saved_max_rate == U32_MAX ? ~0UL : ss->saved_max_rate;

	if (!ss->pacing_on)
		return;
	ss->pacing_on = false;

	WRITE_ONCE(sk->sk_max_pacing_rate, own);
	if (ss->st.glue_flags & SSLAB_WE_PACE) {
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NEEDED, SK_PACING_NONE);
		ss->st.glue_flags &= ~SSLAB_WE_PACE;
	}
}

/* ---- numbers in and out of the core ------------------------------------- */

static void fill_ack(struct sock *sk, struct ss_ack *a, u32 acked, s32 rtt_us)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct sscore_state *st = &sslab_of(sk)->st;
	u64 us = now_us(tp);

	/* Every field the glue does not set is zero: tail_clocked is false (a
	 * module has no hook between an ACK's transmissions and a pacing period). */
	*a = (struct ss_ack){ 0 };
	a->now_us = (u32)us;
	a->now_ticks = tcp_jiffies32;
	a->hz = HZ;
	a->snd_una = tp->snd_una;
	a->snd_nxt = tp->snd_nxt;
	a->acked = acked;
	a->rtt_us = rtt_us > 0 ? (u32)rtt_us : (rtt_us == 0 ? 1 : SS_RTT_UNKNOWN);
	a->in_flight = tcp_packets_in_flight(tp);
	a->mss = tp->mss_cache;
	/* Our kernel's sender hooks send a SUSS period as theirs did. */
	a->tail_clocked = SSLAB_SEND_HOOKS;
	a->sender_grows = SSLAB_SEND_HOOKS;
	a->srtt_us = tp->srtt_us >> 3;
	a->pacing_rate = READ_ONCE(sk->sk_pacing_rate);
	a->gso_max_bytes = sk->sk_gso_max_size;
	/* Pacing that SUSS switched on itself does not count as the socket's. */
	a->paced = READ_ONCE(sk->sk_pacing_status) != SK_PACING_NONE &&
		   !(st->glue_flags & SSLAB_WE_PACE);
	a->delivered = tp->delivered;
	a->lost = tp->lost;
	a->recovering = inet_csk(sk)->icsk_ca_state == TCP_CA_Recovery ||
			inet_csk(sk)->icsk_ca_state == TCP_CA_CWR;
}

static void read_win(const struct tcp_sock *tp, struct ss_win *w)
{
	w->cwnd = tcp_snd_cwnd(tp);
	w->ssthresh = tp->snd_ssthresh;
	w->cwnd_cnt = tp->snd_cwnd_cnt;
}

static void write_win(struct tcp_sock *tp, const struct ss_win *w)
{
	tcp_snd_cwnd_set(tp, max(min(w->cwnd, tp->snd_cwnd_clamp), 1U));
	tp->snd_ssthresh = w->ssthresh;
	tp->snd_cwnd_cnt = w->cwnd_cnt;
}

/*
 * After an ACK's cong_avoid: ours, when asked for (suss_lift_rwnd_rounds),
 * and Blitzstart's first rounds (blitz_lift_rwnd_rounds) let the send
 * window be at least cwnd, for this ACK's transmissions (and the pacing
 * timer's until the next ACK); SUSS 2025 applies its authors' rule
 * (ss_peer_window, where theirs sat).  SUSS 2024's rule applies as the
 * peer's window arrives (sslab_in_ack_event).
 */
static void lift_peer_window(struct sock *sk)
{
	const struct sscore_state *st = &sslab_of(sk)->st;
	struct tcp_sock *tp = tcp_sk(sk);
	u64 want = (u64)tcp_snd_cwnd(tp) * tp->mss_cache;

	if (ss_ignore_peer_window(st, &sslab_params) && tp->snd_wnd < want)
		tp->snd_wnd = (u32)min_t(u64, want, U32_MAX >> 1);
	if (ss_window_rule(st) == SS_WINDOW_EACH_CONG_AVOID)
		tp->snd_wnd = min(ss_peer_window(st, tp->snd_wnd, tp->mss_cache), U32_MAX >> 1);
}

/*
 * An ACK's window update has run (tcp_ack).  SUSS 2024's authors changed
 * the slow-path update itself: the peer's window, as it arrives, is shifted
 * by the jumps (at most 3 MB).  A fast-path ACK leaves the window as it was.
 */
static void sslab_in_ack_event(struct sock *sk, u32 flags)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (!ss || !(flags & CA_ACK_SLOWPATH) || ss_window_rule(&ss->st) != SS_WINDOW_ON_ARRIVAL)
		return;
	tp->snd_wnd = min(ss_window_on_arrival(&ss->st, tp->snd_wnd, tp->mss_cache), U32_MAX >> 1);
}

/* Stop pacing when the core has left its pacing state. */
static void sync_pacing(struct sock *sk, bool was_pacing)
{
	if (was_pacing && !ss_suss_pacing(&sslab_of(sk)->st))
		suss_stop_pacing(sk);
}

/* ---- Blitzstart ---------------------------------------------------------- */

/*
 * At establishment: take the hint (SO_MAX_PACING_RATE; ~0 means none) and
 * the handshake's RTT, let the core choose the first window, and pace it at
 * the core's rate.  The stack may recompute the pacing rate before the first
 * packet leaves; CA_EVENT_TX_START sets it again (sslab_cwnd_event).
 */
static void blitz_start(struct sock *sk)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	unsigned long hint = READ_ONCE(sk->sk_max_pacing_rate);
	struct ss_pacing_plan plan;
	struct ss_win w;

	if (hint == ~0UL)
		hint = 0;
	else
		WRITE_ONCE(sk->sk_max_pacing_rate, ~0UL);
	read_win(tp, &w);
	ss_blitz_start(&ss->st, &sslab_params, hint, tp->srtt_us >> 3, tp->mss_cache, &w, &plan);
	write_win(tp, &w);
	if (plan.start)
		WRITE_ONCE(sk->sk_pacing_rate, (unsigned long)plan.rate);
	/* The first window leaves before any ACK: the peer's window from
	 * the handshake (at most 64 KB) must not hold it back (an active
	 * opener's snd_wnd is final here; a passive one's is set after init
	 * and lifted again at CA_EVENT_TX_START). */
	lift_peer_window(sk);
}

/* ---- tcp_congestion_ops ------------------------------------------------- */

/* A connection of variant @v starts, with the version its name pins (or
 * SS_VERSION_PARAM: its start reads its own parameter). */
static void sslab_init_version(struct sock *sk, enum ss_variant v, unsigned int version)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct sslab_sock *s = inet_csk_ca(sk);
	struct sslab_conn *ss;
	struct ss_win w;

	BUILD_BUG_ON(sizeof(struct sslab_sock) > ICSK_CA_PRIV_SIZE);
	ss = s->conn = kzalloc(sizeof(*s->conn), GFP_ATOMIC);
	if (!ss) {
		alloc_failures++;
		return;
	}
	ss->sk = sk;
	ss_init(&ss->st, &sslab_params, v, version, (u32)now_us(tp), tp->snd_nxt, tcp_snd_cwnd(tp),
		tp->mss_cache);
	ss->saved_max_rate = U32_MAX;
	read_win(tp, &w);
	ss_init_window(&ss->st, &sslab_params, &w);
	write_win(tp, &w);
	/* init runs once the handshake is done: its RTT is the first sample. */
	ss_handshake(&ss->st, &sslab_params, tp->srtt_us ? tp->srtt_us >> 3 : SS_RTT_UNKNOWN, tp->mss_cache);
	/* The Blitzstart paper's transport (QUIC) paces every connection:
	 * so do its start and the standard start it is compared with. */
	if (ss_paced_socket(&ss->st))
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
	if (ss_takes_hint(&ss->st))
		blitz_start(sk);
}

/* One init function per name of the registry (core/variants.h). */
#define SS_NAME(ident, cc_name, id, version) \
static void sslab_init_##ident(struct sock *sk) { sslab_init_version(sk, SS_##id, version); }
#include "core/variants.h"
#undef SS_NAME

static void sslab_release(struct sock *sk)
{
	struct sslab_sock *s = inet_csk_ca(sk);

	if (s->conn && ss_suss_pacing(&s->conn->st))
		suss_stop_pacing(sk);
	kfree(s->conn);
	s->conn = NULL;
}

static void sslab_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct ss_pacing_plan plan;
	struct sscore_state *st;
	struct ss_win w;
	struct ss_ack a;
	bool was_pacing;

	if (!ss)
		return;
	st = &ss->st;
	was_pacing = ss_suss_pacing(st);
	/* After a timeout Linux's CUBIC takes ACKs as any other; the NewReno
	 * family waits until the Loss state ends. */
	if (icsk->icsk_ca_state == TCP_CA_Loss && !ss_acks_in_loss(st))
		return;
	fill_ack(sk, &a, sample->pkts_acked, sample->rtt_us);
	read_win(tp, &w);
	ss_on_ack(st, &sslab_params, &a, &w, &plan);
	write_win(tp, &w);
	sync_pacing(sk, was_pacing);
	if (plan.start)
		suss_plan_pacing(sk, &plan);
	/* cong_avoid, which traces the other ACKs, is skipped in Recovery/CWR. */
	if (icsk->icsk_ca_state >= TCP_CA_CWR)
		trace_ack(sk);
}

static void sslab_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct sscore_state *st;
	struct ss_win w;
	struct ss_ack a;
	bool was_pacing;

	if (!ss) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	st = &ss->st;
	was_pacing = ss_suss_pacing(st);
	if (tcp_is_cwnd_limited(sk)) {
		fill_ack(sk, &a, acked, -1);
		read_win(tp, &w);
		ss_cong_avoid(st, &sslab_params, &a, &w);
		write_win(tp, &w);
		sync_pacing(sk, was_pacing);
	}
	lift_peer_window(sk);
	trace_ack(sk);
}

static u32 sslab_ssthresh(struct sock *sk)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct sscore_state *st;
	struct ss_win w;
	bool was_pacing;
	u32 ssthresh;

	if (!ss)
		return tcp_reno_ssthresh(sk);
	st = &ss->st;
	was_pacing = ss_suss_pacing(st);
	read_win(tp, &w);
	ssthresh = ss_ssthresh(st, tcp_packets_in_flight(tp), &w);
	/* SUSS may cut cwnd to what is in flight before the reduction. */
	tcp_snd_cwnd_set(tp, max(w.cwnd, 1U));
	sync_pacing(sk, was_pacing);
	return ssthresh;
}

static void sslab_set_state(struct sock *sk, u8 new_state)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct sscore_state *st;

	if (!ss || new_state != TCP_CA_Loss)
		return;
	st = &ss->st;
	if (ss_suss_pacing(st))
		suss_stop_pacing(sk);
	/* tcp_enter_loss has already set cwnd to what is in flight + 1; the
	 * window before the timeout is prior_cwnd. */
	ss_on_rto(st, tcp_sk(sk)->prior_cwnd, (u32)now_us(tcp_sk(sk)), tcp_sk(sk)->snd_nxt);
}

static void sslab_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct sscore_state *st;

	if (!ss)
		return;
	st = &ss->st;
	if (event == CA_EVENT_TX_START) {
		s32 idle = (s32)(tcp_jiffies32 - tp->lsndtime);

		/* The first data leaves: the passive side's snd_wnd was set
		 * from the handshake's last ACK after init, so lift it here. */
		u32 first_rate = ss_first_window_pace_rate(st);

		/* A socket that paces anyway (Blitzstart's) takes the rate; one
		 * that does not (Rapid Start's) paces until its first round
		 * ends, as a SUSS period (sync_pacing ends it). */
		if (first_rate && READ_ONCE(sk->sk_pacing_status) == SK_PACING_NONE) {
			suss_start_pacing(sk, first_rate, tp->tcp_clock_cache);
		} else if (first_rate) {
			WRITE_ONCE(sk->sk_pacing_rate, (unsigned long)first_rate);
			lift_peer_window(sk);
		}

		if (idle > 0)
			ss_on_idle_restart(st, tcp_jiffies32, (u32)idle);
	}
}

#ifdef TCP_CA_SSLAB_SEND_HOOKS
/* The stack has sent a packet that filled the window: a SUSS pacing period
 * grows cwnd as its packets leave, and the first such packet begins it. */
static void sslab_sent_window_full(struct sock *sk)
{
	struct sslab_conn *ss = sslab_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct ss_win w;

	if (!ss || !ss_suss_pacing(&ss->st))
		return;
	read_win(tp, &w);
	if (ss_sent_window_full(&ss->st, &w) && !ss->pacing_on)
		suss_start_pacing(sk, ss->pace_rate, ss->pace_start_ns);
	write_win(tp, &w);
}

/* While a SUSS pacing period runs, the stack's per-ACK rate update is left out. */
static bool sslab_keep_pacing_rate(struct sock *sk)
{
	struct sslab_conn *ss = sslab_of(sk);

	return ss && ss->pacing_on && ss_suss_pacing(&ss->st);
}
#define SSLAB_SEND_OPS .sent_window_full = sslab_sent_window_full, .keep_pacing_rate = sslab_keep_pacing_rate,
#else
#define SSLAB_SEND_OPS
#endif

#define SSLAB_OPS(ident, cc_name, init_fn)			\
static struct tcp_congestion_ops ident __read_mostly = {	\
	.init		= init_fn,				\
	.release	= sslab_release,			\
	.ssthresh	= sslab_ssthresh,			\
	.cong_avoid	= sslab_cong_avoid,			\
	.set_state	= sslab_set_state,			\
	.undo_cwnd	= tcp_reno_undo_cwnd,			\
	.cwnd_event	= sslab_cwnd_event,			\
	.in_ack_event	= sslab_in_ack_event,			\
	.pkts_acked	= sslab_pkts_acked,			\
	SSLAB_SEND_OPS						\
	.flags		= TCP_CONG_NON_RESTRICTED,		\
	.owner		= THIS_MODULE,				\
	.name		= cc_name,				\
}

/* One tcp_congestion_ops per name of the registry, registered in its order. */
#define SS_NAME(ident, cc_name, id, version) SSLAB_OPS(sslab_##ident##_ops, cc_name, sslab_init_##ident);
#include "core/variants.h"
#undef SS_NAME

static struct tcp_congestion_ops *sslab_all[] = {
#define SS_NAME(ident, cc_name, id, version) &sslab_##ident##_ops,
#include "core/variants.h"
#undef SS_NAME
};

static void sslab_unregister_first(int n)
{
	while (--n >= 0)
		tcp_unregister_congestion_control(sslab_all[n]);
}

/* The registry's names, then bbr3 and bbr2_sslab (sslab_bbr3.c: only where the kernel has our hooks). */
static int __init sslab_register(void)
{
	int i, err;

	for (i = 0; i < ARRAY_SIZE(sslab_all); i++) {
		err = tcp_register_congestion_control(sslab_all[i]);
		if (err) {
			sslab_unregister_first(i);
			return err;
		}
	}
	err = sslab_bbr3_register();
	if (err)
		sslab_unregister_first(ARRAY_SIZE(sslab_all));
	return err;
}

static void __exit sslab_unregister(void)
{
	sslab_bbr3_unregister();
	sslab_unregister_first(ARRAY_SIZE(sslab_all));
}

module_init(sslab_register);
module_exit(sslab_unregister);

MODULE_AUTHOR("slowstart-lab");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("CUBIC with traditional slow start, HyStart, HyStart++, SUSS; NewReno with Astart and Hoe; Blitzstart; BBRv3 (draft-06)");
