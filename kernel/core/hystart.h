/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hystart.h: HyStart's declarations: its parameters (hystart.c has the
 * model and the ops; HyStart's round, struct ss_hystart, is the core's,
 * since SUSS and the standard start run HyStart's tests too).
 *
 * The registry (variants.h) includes this file into sscore.h, after the
 * base types; nothing else includes it.  A parameter, P(name,
 * default, kind, description), is a field of struct ss_params, a module
 * parameter (/sys/module/tcp_sslab/parameters/<name>) and a name the
 * harness accepts (runners/sslab/ccas.py reads these lists).  Its kind says
 * which values it takes: uint, any unsigned 32-bit integer; flag, 0 or 1;
 * range(lo, hi), lo to hi (numbers or the header's defines: the core clamps
 * to them, the harness refuses others); suss_version, a year of enum
 * ss_suss_version (the module checks it, see sslab_tcp.c).  The harness
 * refuses any other value before a run starts.
 *
 * Defaults: HyStart as in the HyStart paper and Linux's CUBIC (a low window
 * of 16, trains of ACKs 2 ms apart, the delay threshold minRTT/8 clamped to
 * 4-16 ms, 8 samples a round); cubic_hs's rounds as today's Linux (6.1.192,
 * the 2025 fix; the harness sets 0, 5.19's, under SUSS 2024).
 */
#ifndef HYSTART_H
#define HYSTART_H

#define SS_HYSTART_PARAMS(P)						\
	P(hs_low_window, 16, uint, "HyStart: no exit test below this cwnd (packets)") \
	P(hs_ack_delta_us, 2000, uint, "HyStart: ACKs closer than this (us) form a train") \
	P(hs_delay_min_us, 4000, uint, "HyStart: lower clamp of the delay threshold (us)") \
	P(hs_delay_max_us, 16000, uint, "HyStart: upper clamp of the delay threshold (us)") \
	P(hs_min_samples, 8, uint, "HyStart: RTT samples per round before the delay test") \
	P(hs_round_fix, 1, flag, "cubic_hs: HyStart's rounds as Linux 6.1.192 (1, the 2025 fix) or 5.19 (0, the paper's kernel); read when a connection starts")

/* HyStart's exits (SS_CORE_EXITS, sscore.h, says what a line is). */
#define SS_HYSTART_EXITS(X)						\
	X(ACK_TRAIN, 1, "HyStart: the round's ACK train longer than the threshold") \
	X(DELAY, 2, "HyStart: the round's minimum RTT above the threshold")

/* The start's entry in the registry (variants.h says what a line is). */
#define SS_HYSTART_REGISTRY						\
	SS_PARAMS(SS_HYSTART_PARAMS)					\
	SS_EXITS(SS_HYSTART_EXITS)					\
	SS_VARIANT(TRADITIONAL, 0, ss_traditional_ops)			\
	SS_VARIANT(HYSTART, 1, ss_hystart_ops)				\
	SS_NAME(ss, "cubic_ss", TRADITIONAL, SS_VERSION_PARAM)		\
	SS_NAME(hs, "cubic_hs", HYSTART, SS_VERSION_PARAM)

#endif /* HYSTART_H */
