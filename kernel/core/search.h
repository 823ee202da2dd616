/* SPDX-License-Identifier: GPL-2.0 */
/*
 * search.h: SEARCH's declarations, its state and its parameters (search.c
 * has the model and the ops).  Included into sscore.h by the registry
 * (variants.h); hystart.h says what a parameter line is.
 *
 * Defaults: the June 2024 draft's constants (SEARCH 3.0): a window of 3.5
 * initial RTTs (the RTT cycles it measured on GEO, LEO and LTE links last
 * about 3.3, 3.3 and 2.8 minimum RTTs), W = 10 bins a window (5 to 40
 * bins performed alike; 10 exited early least), EXTRA_BINS = 15 (the look
 * back one RTT may reach 15 bins, 5.25 initial RTTs), THRESH 0.35 for 3.0
 * (the exit about 2 RTTs after the chokepoint) and 0.26 for 4.0 (its later
 * drafts); the version's own exit; the fraction of a bin interpolated (the
 * authors' module's default).  Every parameter is read when a connection
 * starts.
 */
#ifndef SEARCH_H
#define SEARCH_H

/* The bins each ring keeps: W + EXTRA_BINS + 1 of them are used, so that
 * the window one RTT back, EXTRA_BINS bins behind at most, keeps its first
 * bin (search.c).  The parameters' ranges hold W to 31, EXTRA_BINS to 32. */
#define SEARCH_RING 64U
#define SEARCH_MAX_W 31U
#define SEARCH_MAX_EXTRA 32U

/* SEARCH's versions (sscore.h says what a line is): cubic_search3 and
 * cubic_search4 pin one whatever search_version says; any other pin, the
 * parameter's.  Their pins lie apart from SUSS's (0-2), which the same
 * field carries. */
#define SS_SEARCH_VERSIONS(V)						\
	V(SEARCH_VER_3, 0x30, 3, "3.0", "SEARCH 3.0 (the authors' June 2024 draft)") \
	V(SEARCH_VER_4, 0x40, 4, "4.0", "SEARCH 4.0 (drafts -09 and -10: delivered against sent)")

enum ss_search_version {
	SS_SEARCH_VERSIONS(SS_VERSION_ENUM)
};

#define SS_SEARCH_PARAMS(P)						\
	P(search_version, 3, range(3, 4), "SEARCH: cubic_search's version, 3 (the June 2024 draft) or 4 (drafts -09, -10); read when a connection starts") \
	P(search_window_x10, 35, range(1, 100), "SEARCH: the window, in tenths of the initial RTT (35: 3.5 RTTs)") \
	P(search_bins, 10, range(1, SEARCH_MAX_W), "SEARCH: W, the bins of a window") \
	P(search_extra_bins, 15, range(0, SEARCH_MAX_EXTRA), "SEARCH: EXTRA_BINS, how far back (bins) the window one RTT ago may lie") \
	P(search_thresh_pct, 0, range(0, 99), "SEARCH: THRESH, percent (0: the version's, 35 for 3.0, 26 for 4.0)") \
	P(search_exit_only, 0, flag, "SEARCH: on exit ssthresh = cwnd and nothing more (1), or the version's exit (0: 3.0 rolls cwnd back, 4.0 drains)") \
	P(search_interpolate, 1, flag, "SEARCH: weigh the end bins of the window one RTT ago by the RTT's fraction of a bin (1) or not (0)")

struct ss_search {
	u32 acked[SEARCH_RING];	/* bytes cumulatively acked in each bin (a ring) */
	u32 sent[SEARCH_RING];	/* 4.0: bytes sent in each bin (a ring) */
	u32 initial_rtt_us;	/* INITIAL_RTT (0: not known yet) */
	u32 bin_us;		/* BIN_DURATION */
	u32 bin_end_us;		/* the delivered bin's end (before the bins: the start) */
	u32 rtt_us;		/* the latest RTT sample (SS_RTT_UNKNOWN: none) */
	u32 una_mark;		/* snd_una and snd_nxt when the last bin closed */
	u32 nxt_mark;
	s32 curr_idx;		/* the draft's curr_idx: -1 until the first bin closes */
	u32 iw;			/* the initial window, packets: the roll-back's floor */
	u32 target;		/* 4.0's drain: the window it drains to, packets */
	u32 exit_cwnd;		/* cwnd when the exit was decided */
	u16 window_x10;		/* WINDOW_SIZE, tenths of INITIAL_RTT */
	u8 drain_credit;	/* packets acked in the drain not yet taken off cwnd */
	u8 version;		/* 3 or 4 */
	u8 w;			/* W */
	u8 extra;		/* EXTRA_BINS */
	u8 thresh_pct;		/* THRESH x 100 */
	u8 exit_only;
	u8 interpolate;
	u8 phase;		/* enum ss_search_phase (search.c) */
};

/* A SEARCH check's verdict (search.c; exposed for the tests): is
 * (@expected - @delivered) / @expected >= @thresh_pct / 100?  No when
 * @expected is 0 (no decision). */
bool ss_search_exceeds(u64 expected, u64 delivered, u32 thresh_pct);

/* SEARCH's exit and event (SS_CORE_EXITS, sscore.h, says what a line is). */
#define SS_SEARCH_EXITS(X)						\
	X(SEARCH, 7, "SEARCH: delivered fell short of the expected by THRESH")

#define SS_SEARCH_EVENTS(E)						\
	E(SEARCH, "search", "a = bin, b = bytes acked in the window, c = bytes expected")

/* The start's entry in the registry (variants.h says what a line is). */
#define SS_SEARCH_REGISTRY						\
	SS_PARAMS(SS_SEARCH_PARAMS)					\
	SS_EXITS(SS_SEARCH_EXITS)					\
	SS_EVENTS(SS_SEARCH_EVENTS)					\
	SS_VERSIONS(SEARCH, SS_SEARCH_VERSIONS)				\
	SS_STATE(search, ss_search)					\
	SS_VARIANT(SEARCH, 11, ss_search_ops)				\
	SS_NAME(search, "cubic_search", SEARCH, SS_VERSION_PARAM)	\
	SS_NAME(search3, "cubic_search3", SEARCH, SEARCH_VER_3)		\
	SS_NAME(search4, "cubic_search4", SEARCH, SEARCH_VER_4)

#endif /* SEARCH_H */
