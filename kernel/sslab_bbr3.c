// SPDX-License-Identifier: GPL-2.0
/*
 * bbr3 and bbr2_sslab: BBRv3 from draft-ietf-ccwg-bbr-06, and BBRv2 as
 * Google's v2alpha set it, as congestion controls of tcp_sslab.  Both are
 * core/bbr3.c (its header teaches the model and tabulates what sets the
 * two versions apart); this file moves numbers between the stack and the
 * core:
 *
 *   cong_control    every ACK: the rate sample, the connection's counters and
 *                   the wait until the next departure in, cwnd and the pacing
 *                   rate out (the stack does no cwnd reduction of its own for
 *                   a cong_control module); bbr2_sslab's ssthresh when it
 *                   enters Drain
 *   skb_marked_lost every newly lost packet (our kernel patch's callback)
 *   ssthresh        recovery or a timeout begins: the state an undo restores
 *                   is saved before the stack cuts cwnd
 *   set_state       recovery ends (back to Open): cwnd from before it
 *   undo_cwnd       the recovery was spurious
 *   cwnd_event      TX_START after idle: the restart from idle
 *   min_tso_segs    (bbr2_sslab) v2alpha's smallest burst: 1 segment under
 *                   1.2 Mbit/s, else 2 (the stack sizes the rest from the
 *                   pacing rate and min_rtt as v2alpha did)
 *
 * BBRv2 is registered as "bbr2_sslab", not "bbr2": a kernel carrying
 * Google's own v2alpha (a researcher's KERNEL_PATCHES=) registers "bbr2",
 * and the two run side by side, each under its own name.
 *
 * They need what a stock 6.1 rate sample lacks (RS.tx_in_flight, RS.lost)
 * and a per-lost-packet callback: our kernel patch 0005 adds them and
 * defines TCP_CA_SSLAB_LOSS_HOOKS.  Built against a kernel without them
 * (Debian's stock kernel, the other kernel sources) neither is registered.
 *
 * The core's state (about 330 bytes) is larger than the 104 bytes a
 * congestion control keeps in the socket, so the socket keeps a pointer to
 * an allocation; a connection whose allocation failed keeps the stack's
 * cwnd and pacing and counts in the module parameter bbr3_alloc_failures.
 */
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "sslab_bbr3.h"

#ifdef TCP_CA_SSLAB_LOSS_HOOKS

#include "core/bbr3.h"
#include "sslab_trace.h"

static unsigned int bbr3_drain_gain = BBR3_DRAIN_PACING_GAIN;
module_param(bbr3_drain_gain, uint, 0644);
MODULE_PARM_DESC(bbr3_drain_gain, "bbr3: Drain's pacing gain, thousandths (draft-06: 500)");
static unsigned int bbr3_probe_down_gain = BBR3_PROBE_DOWN_PACING_GAIN;
module_param(bbr3_probe_down_gain, uint, 0644);
MODULE_PARM_DESC(bbr3_probe_down_gain, "bbr3: ProbeBW_DOWN's pacing gain, thousandths (draft-06: 900)");
/*
 * bbr2_sslab's parameters: v2alpha's names (high_gain, startup_cwnd_gain,
 * drain_gain, full_loss_cnt) with bbr2_ before them, in thousandths (v2alpha
 * counts gains in 256ths); each is read when a connection starts.
 */
static unsigned int bbr2_high_gain = 2885;
module_param(bbr2_high_gain, uint, 0644);
MODULE_PARM_DESC(bbr2_high_gain, "bbr2_sslab: Startup's pacing gain, thousandths (v2alpha: 2885)");
static unsigned int bbr2_startup_cwnd_gain = 2885;
module_param(bbr2_startup_cwnd_gain, uint, 0644);
MODULE_PARM_DESC(bbr2_startup_cwnd_gain, "bbr2_sslab: Startup's cwnd gain, thousandths (v2alpha: 2885)");
static unsigned int bbr2_drain_gain = 347;
module_param(bbr2_drain_gain, uint, 0644);
MODULE_PARM_DESC(bbr2_drain_gain, "bbr2_sslab: Drain's pacing gain, thousandths (v2alpha: 347)");
static unsigned int bbr2_full_loss_cnt = 8;
module_param(bbr2_full_loss_cnt, uint, 0644);
MODULE_PARM_DESC(bbr2_full_loss_cnt, "bbr2_sslab: ACKs with losses in a loss round that end Startup (v2alpha: 8)");
static unsigned int bbr3_alloc_failures;
module_param(bbr3_alloc_failures, uint, 0444);
MODULE_PARM_DESC(bbr3_alloc_failures, "bbr3, bbr2_sslab: connections that ran without BBR (no memory for its state)");

/* The socket's share: a pointer to the state, and where the stack was. */
struct bbr3_sock {
	struct bbr3_conn *conn;
};

struct bbr3_conn {
	struct bbr3 core;
	u32 last_lost_end_seq;	/* a lost packet starting here is contiguous */
	u8 prev_ca_state;
};

static struct bbr3_conn *conn_of(const struct sock *sk)
{
	return ((struct bbr3_sock *)inet_csk_ca(sk))->conn;
}

static void trace_state(struct sock *sk, const struct bbr3 *b, u8 why)
{
	trace_sslab_bbr3(sk, b, why);
}

/* The pacing rate the core asks for, within the socket's cap. */
static void set_pacing_rate(struct sock *sk, const struct bbr3 *b)
{
	u64 rate = bbr3_pacing_rate_bytes_per_sec(b);

	rate = min_t(u64, rate, READ_ONCE(sk->sk_max_pacing_rate));
	WRITE_ONCE(sk->sk_pacing_rate, (unsigned long)rate);
}

/*
 * How long until the next packet may leave: its earliest departure time
 * (pacing's, the stack's own or fq's) less now; 0 when it may leave now.
 */
static u32 edt_wait_us(const struct tcp_sock *tp)
{
	u64 now = tp->tcp_clock_cache;

	return tp->tcp_wstamp_ns > now ?
	       (u32)min_t(u64, div_u64(tp->tcp_wstamp_ns - now, NSEC_PER_USEC), U32_MAX) : 0;
}

/* A connection starts: the core's state, in the version @p asks for. */
static void init_conn(struct sock *sk, struct bbr3_params *p)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_sock *s = inet_csk_ca(sk);

	BUILD_BUG_ON(sizeof(struct bbr3_sock) > ICSK_CA_PRIV_SIZE);
	p->initial_cwnd = tcp_snd_cwnd(tp);
	p->mss = tp->mss_cache;
	p->seed = get_random_u32();
	s->conn = kzalloc(sizeof(*s->conn), GFP_ATOMIC);
	if (!s->conn) {
		bbr3_alloc_failures++;
		return;
	}
	bbr3_init(&s->conn->core, (u32)tp->tcp_mstamp, tp->srtt_us >> 3, p);
	s->conn->prev_ca_state = TCP_CA_Open;
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
	set_pacing_rate(sk, &s->conn->core);
	trace_state(sk, &s->conn->core, 0);
}

static void bbr3_init_sock(struct sock *sk)
{
	struct bbr3_params p = {
		.version = BBR3_VERSION_V3,
		.drain_pacing_gain = READ_ONCE(bbr3_drain_gain),
		.probe_down_pacing_gain = READ_ONCE(bbr3_probe_down_gain),
	};

	init_conn(sk, &p);
}

static void bbr2_init_sock(struct sock *sk)
{
	struct bbr3_params p = {
		.version = BBR3_VERSION_V2,
		.startup_pacing_gain = READ_ONCE(bbr2_high_gain),
		.startup_cwnd_gain = READ_ONCE(bbr2_startup_cwnd_gain),
		.drain_pacing_gain = READ_ONCE(bbr2_drain_gain),
		.startup_full_loss_cnt = READ_ONCE(bbr2_full_loss_cnt),
	};

	init_conn(sk, &p);
}

static void bbr3_release(struct sock *sk)
{
	struct bbr3_sock *s = inet_csk_ca(sk);

	kfree(s->conn);
	s->conn = NULL;
}

static void bbr3_cong_control(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr3_conn *c = conn_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	enum bbr3_state before;
	u32 round_before;
	struct bbr3_ack a;

	if (!c)
		return;
	a = (struct bbr3_ack){
		.now_us = (u32)tp->tcp_mstamp,
		.delivered = tp->delivered,
		.inflight = tcp_packets_in_flight(tp),
		.cwnd = tcp_snd_cwnd(tp),
		.is_cwnd_limited = tcp_is_cwnd_limited(sk),
		.newly_acked = rs->acked_sacked,
		.rs_delivered = rs->delivered > 0 ? rs->delivered : 0,
		.rs_interval_us = rs->interval_us > 0 && rs->delivered > 0 ?
				  (u32)rs->interval_us : 0,
		.rs_prior_delivered = rs->prior_delivered,
		.rs_tx_in_flight = rs->tx_in_flight,
		.rs_lost = rs->lost_since_tx,
		.rs_rtt_us = rs->rtt_us >= 0 ? (s32)min_t(long, rs->rtt_us, S32_MAX) : -1,
		.rs_is_app_limited = rs->is_app_limited,
		.in_recovery = inet_csk(sk)->icsk_ca_state >= TCP_CA_Recovery,
		.has_selective_acks = tcp_is_sack(tp),
		.edt_wait_us = edt_wait_us(tp),
		.rs_prior_in_flight = rs->prior_in_flight,
		.rs_is_ack_delayed = rs->is_ack_delayed,
	};
	before = c->core.state;
	round_before = c->core.round_count;
	bbr3_on_ack(&c->core, &a);
	if (c->core.ssthresh) {		/* v2 entered Drain: slow start is over */
		tp->snd_ssthresh = c->core.ssthresh;
		c->core.ssthresh = 0;
	}
	tcp_snd_cwnd_set(tp, max(c->core.cwnd, 1U));
	set_pacing_rate(sk, &c->core);
	/* MarkConnectionAppLimited (ProbeRTT), as the stack marks it itself. */
	if (c->core.mark_app_limited)
		tp->app_limited = (tp->delivered + tcp_packets_in_flight(tp)) ? : 1;
	if (c->core.state != before)
		trace_state(sk, &c->core, 1);
	else if (c->core.round_count != round_before)
		trace_state(sk, &c->core, 0);
}

static void bbr3_skb_marked_lost(struct sock *sk, const struct sk_buff *skb)
{
	struct bbr3_conn *c = conn_of(sk);
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);
	struct tcp_sock *tp = tcp_sk(sk);
	enum bbr3_state before;
	struct bbr3_lost_packet p;

	if (!c)
		return;
	p = (struct bbr3_lost_packet){
		.now_us = (u32)tp->tcp_mstamp,
		.delivered = tp->delivered,
		.lost = tp->lost,
		.size = tcp_skb_pcount(skb),
		.tx_in_flight = scb->tx_in_flight,
		.tx_lost = scb->tx_lost,
		.is_app_limited = scb->tx.is_app_limited,
		.new_range = scb->seq != c->last_lost_end_seq,
	};
	c->last_lost_end_seq = scb->end_seq;
	before = c->core.state;
	bbr3_on_lost_packet(&c->core, &p);
	if (c->core.state != before)
		trace_state(sk, &c->core, 2);
}

/* Recovery or a timeout begins: save what an undo would restore. */
static u32 bbr3_ssthresh(struct sock *sk)
{
	struct bbr3_conn *c = conn_of(sk);

	if (c) {
		c->core.cwnd = tcp_snd_cwnd(tcp_sk(sk));
		bbr3_on_enter_fast_recovery(&c->core);
	}
	return tcp_sk(sk)->snd_ssthresh;
}

static void bbr3_set_state(struct sock *sk, u8 new_state)
{
	struct bbr3_conn *c = conn_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (!c)
		return;
	if (new_state == TCP_CA_Loss) {
		/* tcp_enter_loss has set cwnd to what is in flight + 1. */
		bbr3_on_timeout(&c->core, tcp_snd_cwnd(tp));
	} else if (new_state == TCP_CA_Open &&
		   c->prev_ca_state >= TCP_CA_Recovery) {
		c->core.cwnd = tcp_snd_cwnd(tp);
		bbr3_on_exit_recovery(&c->core,
				      c->prev_ca_state == TCP_CA_Loss);
		tcp_snd_cwnd_set(tp, max(c->core.cwnd, 1U));
	}
	c->prev_ca_state = new_state;
}

static u32 bbr3_undo_cwnd(struct sock *sk)
{
	struct bbr3_conn *c = conn_of(sk);

	if (!c)
		return tcp_snd_cwnd(tcp_sk(sk));
	c->core.cwnd = tcp_snd_cwnd(tcp_sk(sk));
	bbr3_on_spurious_loss(&c->core);
	trace_state(sk, &c->core, 3);
	return c->core.cwnd;
}

static void bbr3_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct bbr3_conn *c = conn_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (c && event == CA_EVENT_TX_START) {
		bbr3_on_transmit(&c->core, (u32)tp->tcp_mstamp,
				 tcp_packets_in_flight(tp), tp->app_limited);
		set_pacing_rate(sk, &c->core);
	}
}

/* v2alpha's smallest burst: one segment under 1.2 Mbit/s, else two. */
static u32 bbr2_min_tso_segs(struct sock *sk)
{
	return READ_ONCE(sk->sk_pacing_rate) < BBR2_MIN_TSO_RATE_BYTES ? 1 : 2;
}

static struct tcp_congestion_ops sslab_bbr3_ops __read_mostly = {
	.init		= bbr3_init_sock,
	.release	= bbr3_release,
	.ssthresh	= bbr3_ssthresh,
	.cong_control	= bbr3_cong_control,
	.set_state	= bbr3_set_state,
	.undo_cwnd	= bbr3_undo_cwnd,
	.cwnd_event	= bbr3_cwnd_event,
	.skb_marked_lost = bbr3_skb_marked_lost,
	.flags		= TCP_CONG_NON_RESTRICTED,
	.owner		= THIS_MODULE,
	.name		= "bbr3",
};

static struct tcp_congestion_ops sslab_bbr2_ops __read_mostly = {
	.init		= bbr2_init_sock,
	.release	= bbr3_release,
	.ssthresh	= bbr3_ssthresh,
	.cong_control	= bbr3_cong_control,
	.set_state	= bbr3_set_state,
	.undo_cwnd	= bbr3_undo_cwnd,
	.cwnd_event	= bbr3_cwnd_event,
	.skb_marked_lost = bbr3_skb_marked_lost,
	.min_tso_segs	= bbr2_min_tso_segs,
	.flags		= TCP_CONG_NON_RESTRICTED,
	.owner		= THIS_MODULE,
	.name		= "bbr2_sslab",
};

int sslab_bbr3_register(void)
{
	int err = tcp_register_congestion_control(&sslab_bbr3_ops);

	if (err)
		return err;
	err = tcp_register_congestion_control(&sslab_bbr2_ops);
	if (err)
		tcp_unregister_congestion_control(&sslab_bbr3_ops);
	return err;
}

void sslab_bbr3_unregister(void)
{
	tcp_unregister_congestion_control(&sslab_bbr2_ops);
	tcp_unregister_congestion_control(&sslab_bbr3_ops);
}

#else /* a kernel without our hooks: neither bbr3 nor bbr2_sslab */

int sslab_bbr3_register(void)
{
	return 0;
}

void sslab_bbr3_unregister(void)
{
}

#endif
