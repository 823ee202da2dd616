/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of tcp_sslab (see kernel/README.md for the fields).
 *   sslab:sslab_ack    one per ACK: the connection's congestion state
 *   sslab:sslab_event  one per algorithm event (rounds, SUSS decisions, exits)
 *   sslab:sslab_bbr3   bbr3: its state at each round and each change of state
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sslab

#if !defined(_SSLAB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SSLAB_TRACE_H

#include <linux/tracepoint.h>
#include <net/tcp.h>
#include "core/sscore.h"
#include "core/bbr3.h"

TRACE_EVENT(sslab_ack,
	TP_PROTO(const struct sock *sk, const struct sscore_state *st, u8 state),
	TP_ARGS(sk, st, state),
	TP_STRUCT__entry(
		__field(u64, time_us)
		__field(u32, cwnd)
		__field(u32, ssthresh)
		__field(u32, in_flight)
		__field(u32, srtt_us)
		__field(u32, round_min_rtt_us)
		__field(u32, min_rtt_us)
		__field(u32, delivered)
		__field(u32, snd_wnd)
		__field(u16, sport)
		__field(u16, dport)
		__field(u16, round)
		__field(u8, variant)
		__field(u8, state)
	),
	TP_fast_assign(
		const struct tcp_sock *tp = tcp_sk(sk);

		__entry->time_us = tp->tcp_mstamp;
		__entry->cwnd = tcp_snd_cwnd(tp);
		__entry->ssthresh = tp->snd_ssthresh;
		__entry->in_flight = tcp_packets_in_flight(tp);
		__entry->srtt_us = tp->srtt_us >> 3;
		__entry->round_min_rtt_us = st->hs.round_min_rtt_us;
		__entry->min_rtt_us = st->rnd.min_rtt_us;
		__entry->delivered = tp->delivered;
		__entry->snd_wnd = tp->snd_wnd;
		__entry->sport = ntohs(inet_sk(sk)->inet_sport);
		__entry->dport = ntohs(inet_sk(sk)->inet_dport);
		__entry->round = st->rnd.round;
		__entry->variant = st->variant;
		__entry->state = state;
	),
	TP_printk("sport=%u dport=%u variant=%u time_us=%llu cwnd=%u ssthresh=%u in_flight=%u srtt_us=%u round_min_rtt_us=%u min_rtt_us=%u delivered=%u snd_wnd=%u round=%u state=%u",
		  __entry->sport, __entry->dport, __entry->variant,
		  __entry->time_us, __entry->cwnd, __entry->ssthresh,
		  __entry->in_flight, __entry->srtt_us, __entry->round_min_rtt_us,
		  __entry->min_rtt_us, __entry->delivered, __entry->snd_wnd,
		  __entry->round, __entry->state)
);

TRACE_EVENT(sslab_event,
	TP_PROTO(const struct sock *sk, const struct sscore_state *st,
		 const struct ss_event *ev),
	TP_ARGS(sk, st, ev),
	TP_STRUCT__entry(
		__field(u64, time_us)
		__field(u64, rate)
		__field(u32, a)
		__field(u32, b)
		__field(u32, c)
		__field(u32, pkts)
		__field(u32, duration_us)
		__field(u32, guard_us)
		__field(u32, limit)
		__field(u32, growth)
		__field(u16, sport)
		__field(u16, dport)
		__field(u8, variant)
		__field(u8, version)
		__field(u8, type)
	),
	TP_fast_assign(
		const struct ss_pacing_plan *p = ev->plan;

		__entry->time_us = tcp_sk(sk)->tcp_mstamp;
		__entry->rate = p ? p->rate : 0;
		__entry->a = ev->a;
		__entry->b = ev->b;
		__entry->c = ev->c;
		__entry->pkts = p ? p->red_pkts : 0;
		__entry->duration_us = p ? p->duration_us : 0;
		__entry->guard_us = p ? p->guard_us : 0;
		__entry->limit = p ? p->limit : 0;
		__entry->growth = p ? p->growth : 0;
		__entry->sport = ntohs(inet_sk(sk)->inet_sport);
		__entry->dport = ntohs(inet_sk(sk)->inet_dport);
		__entry->variant = st->variant;
		__entry->version = st->version;
		__entry->type = ev->type;
	),
	TP_printk("sport=%u dport=%u variant=%u version=%u time_us=%llu type=%s a=%u b=%u c=%u pkts=%u duration_us=%u rate=%llu guard_us=%u limit=%u growth=%u",
		  __entry->sport, __entry->dport, __entry->variant, __entry->version, __entry->time_us,
		  ss_event_name(__entry->type),
		  __entry->a, __entry->b, __entry->c, __entry->pkts,
		  __entry->duration_us, __entry->rate, __entry->guard_us,
		  __entry->limit, __entry->growth)
);

TRACE_EVENT(sslab_bbr3,
	TP_PROTO(const struct sock *sk, const struct bbr3 *b, u8 why),
	TP_ARGS(sk, b, why),
	TP_STRUCT__entry(
		__field(u64, time_us)
		__field(u64, bw)
		__field(u64, pacing_rate)
		__field(u32, cwnd)
		__field(u32, in_flight)
		__field(u32, min_rtt_us)
		__field(u32, inflight_longterm)
		__field(u32, inflight_shortterm)
		__field(u32, round)
		__field(u32, lost)
		__field(u16, sport)
		__field(u16, dport)
		__field(u16, pacing_gain)
		__field(u16, cwnd_gain)
		__field(u8, state)
		__field(u8, why)
		__field(u8, full_bw_reached)
	),
	TP_fast_assign(
		const struct tcp_sock *tp = tcp_sk(sk);

		__entry->time_us = tp->tcp_mstamp;
		__entry->bw = (b->bw * b->mss * USEC_PER_SEC) >> BBR3_BW_SHIFT;
		__entry->pacing_rate = bbr3_pacing_rate_bytes_per_sec(b);
		__entry->cwnd = b->cwnd;
		__entry->in_flight = tcp_packets_in_flight(tp);
		__entry->min_rtt_us = b->min_rtt_us;
		__entry->inflight_longterm = b->inflight_longterm;
		__entry->inflight_shortterm = b->inflight_shortterm;
		__entry->round = b->round_count;
		__entry->lost = tp->lost;
		__entry->sport = ntohs(inet_sk(sk)->inet_sport);
		__entry->dport = ntohs(inet_sk(sk)->inet_dport);
		__entry->pacing_gain = b->pacing_gain;
		__entry->cwnd_gain = b->cwnd_gain;
		__entry->state = b->state;
		__entry->why = why;
		__entry->full_bw_reached = b->full_bw_reached;
	),
	TP_printk("sport=%u dport=%u time_us=%llu why=%s state=%s pacing_gain=%u cwnd_gain=%u bw=%llu pacing_rate=%llu cwnd=%u in_flight=%u min_rtt_us=%u inflight_longterm=%u inflight_shortterm=%u round=%u lost=%u full_bw_reached=%u",
		  __entry->sport, __entry->dport, __entry->time_us,
		  __print_symbolic(__entry->why, { 0, "round" }, { 1, "ack" },
				   { 2, "loss" }, { 3, "undo" }),
		  __print_symbolic(__entry->state,
				   { 0, "startup" }, { 1, "drain" },
				   { 2, "probe_bw_down" }, { 3, "probe_bw_cruise" },
				   { 4, "probe_bw_refill" }, { 5, "probe_bw_up" },
				   { 6, "probe_rtt" }),
		  __entry->pacing_gain, __entry->cwnd_gain, __entry->bw,
		  __entry->pacing_rate, __entry->cwnd, __entry->in_flight,
		  __entry->min_rtt_us, __entry->inflight_longterm,
		  __entry->inflight_shortterm, __entry->round, __entry->lost,
		  __entry->full_bw_reached)
);

#endif /* _SSLAB_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sslab_trace
#include <trace/define_trace.h>
