// SPDX-License-Identifier: GPL-2.0
/*
 * The golden replay: the SUSS authors' published per-ACK log, fed to our core.
 *
 *   replay_suss LOGDIR
 *
 * LOGDIR holds suss-on/ and suss-off/, each an acks.csv (one row per ACK
 * their Linux 5.19 kernel processed: time, windows, RTTs, HyStart's round,
 * SUSS's state) and an events.csv (their decision lines); see
 * tests/data/suss-authors-log/README.md.
 *
 * Open loop: the ACKs arrive at their logged times whatever the core
 * decides, so what is compared is the decisions on the same inputs, not
 * what would have followed.  Each row becomes one ACK:
 *
 *   now      the logged microsecond (tcp_mstamp)
 *   snd_una  the bytes delivered so far (sequence 0 = the first data byte)
 *   snd_nxt  snd_una + packets in flight x 1448: the row is printed after
 *            the ACK's processing and before what it releases, as the
 *            congestion control sees it
 *   acked    as logged
 *   RTT      the sample: exact where a logged minimum takes it (the
 *            connection's minRTT, HyStart's round minimum), else solved
 *            from the logged smoothed RTT (8 new - 7 old, within +-14 us
 *            of the truth; it never undercuts a logged minimum)
 *
 * and the core's own cwnd is kept (not the log's): the log's cwnd also
 * grows as red packets leave, between ACKs.
 *
 * Tolerance: none.  Every compared quantity is an integer function of
 * logged integers (microsecond times, packet counts, minRTT) by integer
 * arithmetic, which both sides do alike; the smoothed RTT's rounding
 * reaches only samples that are no round's minimum, which no decision
 * reads.  A difference is a difference in the algorithm.
 *
 * Exit status: 0 when SUSS 2024 matches every logged decision of the SUSS
 * run, and on the SUSS-off run both the HyStart that SUSS 2024 runs when
 * SUSS is off and cubic_hs in Linux 5.19's rounds (hs_round_fix = 0: the
 * HyStart of their kernel) stop where theirs did; 1 otherwise.  cubic_hs in
 * Linux 6.1.192's rounds (the 2025 fix) and SUSS 2025 and ours are replayed
 * and printed beside, not held to their log.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/sscore.h"

#define MSS 1448U
#define MAX_ROWS 8192
#define MAX_EVENTS 8192

struct row {
	u64 t_us;
	u32 cwnd, in_flight, acked, srtt_us, round_min_rtt_us, min_rtt_us;
	u64 delivered;
	u32 hs_start_us, state, blue, round;
	u32 rtt_sample;		/* reconstructed */
};

struct logged_event {
	int row;		/* the ACK row it was printed for */
	char name[160];
	char text[160];		/* numbers_in_text */
	long long col[20];	/* by column, -1 when empty */
};

static struct row rows[MAX_ROWS];
static int n_rows;
static struct logged_event logged[64];
static int n_logged;
static char columns[20][32];
static int n_columns;

/* ---- reading the CSV files ------------------------------------------- */

static int split(char *line, char **fields, int max)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = 0;
	fields[n++] = line;
	for (char *c = line; *c && n < max; c++) {
		if (*c == ',') {
			*c = 0;
			fields[n++] = c + 1;
		}
	}
	return n;
}

static void read_acks(const char *path)
{
	char line[1024], *f[16];
	FILE *in = fopen(path, "r");

	if (!in) {
		perror(path);
		exit(2);
	}
	n_rows = 0;
	if (!fgets(line, sizeof(line), in))
		exit(2);
	while (fgets(line, sizeof(line), in) && n_rows < MAX_ROWS) {
		struct row *r = &rows[n_rows++];

		if (split(line, f, 16) != 13) {
			fprintf(stderr, "%s: row %d has not 13 columns\n", path, n_rows);
			exit(2);
		}
		r->t_us = strtoull(f[0], NULL, 10);
		r->cwnd = strtoul(f[1], NULL, 10);
		r->in_flight = strtoul(f[2], NULL, 10);
		r->acked = strtoul(f[3], NULL, 10);
		r->srtt_us = strtoul(f[4], NULL, 10);
		r->round_min_rtt_us = strtoul(f[5], NULL, 10);
		r->min_rtt_us = strtoul(f[6], NULL, 10);
		r->delivered = strtoull(f[7], NULL, 10);
		r->hs_start_us = strtoul(f[9], NULL, 10);
		r->state = strtoul(f[10], NULL, 10);
		r->blue = strtoul(f[11], NULL, 10);
		r->round = strtoul(f[12], NULL, 10);
	}
	fclose(in);
}

static void read_events(const char *path)
{
	char line[1024], *f[24];
	FILE *in = fopen(path, "r");
	int n;

	if (!in) {
		perror(path);
		exit(2);
	}
	n_logged = 0;
	if (!fgets(line, sizeof(line), in))
		exit(2);
	n_columns = split(line, f, 24);
	for (int i = 0; i < n_columns && i < 20; i++)
		snprintf(columns[i], sizeof(columns[i]), "%s", f[i]);
	while (fgets(line, sizeof(line), in) && n_logged < 64) {
		struct logged_event *e = &logged[n_logged++];

		n = split(line, f, 24);
		e->row = atoi(f[0]);
		snprintf(e->name, sizeof(e->name), "%s", f[1]);
		snprintf(e->text, sizeof(e->text), "%s", n > 2 ? f[2] : "");
		for (int i = 0; i < 20; i++)
			e->col[i] = i < n && f[i][0] ? strtoll(f[i], NULL, 10) : -1;
	}
	fclose(in);
}

static long long logged_col(const struct logged_event *e, const char *name)
{
	for (int i = 0; i < n_columns; i++)
		if (!strcmp(columns[i], name))
			return e->col[i];
	return -1;
}

static const struct logged_event *find_logged(const char *prefix, int nth)
{
	for (int i = 0; i < n_logged; i++)
		if (!strncmp(logged[i].name, prefix, strlen(prefix)) && nth-- == 0)
			return &logged[i];
	return NULL;
}

/* The RTT sample of each row (see the header). */
static void reconstruct_samples(void)
{
	for (int i = 0; i < n_rows; i++) {
		struct row *r = &rows[i];
		const struct row *p = i ? &rows[i - 1] : NULL;
		s64 est = p ? 8LL * r->srtt_us - 7LL * p->srtt_us : r->srtt_us;
		u32 floor = r->min_rtt_us;

		if (!p || r->min_rtt_us < p->min_rtt_us) {
			r->rtt_sample = r->min_rtt_us;	/* the connection's new minimum */
			continue;
		}
		if (r->round_min_rtt_us != SS_RTT_UNKNOWN &&
		    (p->round_min_rtt_us == SS_RTT_UNKNOWN || r->round_min_rtt_us != p->round_min_rtt_us)) {
			r->rtt_sample = r->round_min_rtt_us;	/* the round's new minimum */
			continue;
		}
		if (r->round_min_rtt_us != SS_RTT_UNKNOWN)
			floor = ss_max(floor, r->round_min_rtt_us);
		r->rtt_sample = est <= floor ? floor + 1 : (u32)est;
	}
}

/* ---- the core, event by event ------------------------------------------ */

struct ours_event {
	int row;
	struct ss_event ev;
	struct ss_pacing_plan plan;
};

static struct ours_event ours[MAX_EVENTS];
static int n_ours, current_row;

void ss_trace_event(const struct sscore_state *st, const struct ss_event *ev)
{
	(void)st;
	if (n_ours >= MAX_EVENTS)
		return;
	ours[n_ours].row = current_row;
	ours[n_ours].ev = *ev;
	if (ev->plan)
		ours[n_ours].plan = *ev->plan;
	n_ours++;
}

static const struct ours_event *find_ours(enum ss_event_type type, int nth)
{
	for (int i = 0; i < n_ours; i++)
		if (ours[i].ev.type == type && nth-- == 0)
			return &ours[i];
	return NULL;
}

/* What the replay of one variant and version produced, beside the log. */
struct run {
	struct sscore_state st;
	struct ss_win w;
	int exit_row;
	u32 hs_matches, hs_rows;	/* late-round starts equal to the log's */
	u32 cwnd_max_diff_clocking;	/* |ours - theirs| on clocking ACKs before the exit */
};

static void replay(enum ss_variant v, unsigned int version, u32 suss_max, u32 hs_round_fix,
		   struct run *out)
{
	struct ss_params p = ss_default_params;
	struct ss_pacing_plan plan;

	p.suss_max = suss_max;
	p.hs_round_fix = hs_round_fix;
	memset(out, 0, sizeof(*out));
	n_ours = 0;
	out->exit_row = -1;
	out->w.cwnd = 10;
	out->w.ssthresh = 0x7fffffff;
	/* The connection started when HyStart's first round did. */
	ss_init(&out->st, &p, v, version, rows[0].hs_start_us, 0, 10, MSS);
	for (int i = 0; i < n_rows; i++) {
		const struct row *r = &rows[i];
		u32 una = (u32)r->delivered;
		struct ss_ack a = {
			.now_us = (u32)r->t_us,
			/* Their kernel's clock in ticks (HZ 250, as Ubuntu's and Debian's). */
			.now_ticks = (u32)(r->t_us / 4000),
			.hz = 250,
			.snd_una = una,
			.snd_nxt = una + r->in_flight * MSS,
			.acked = r->acked,
			.rtt_us = r->rtt_sample,
			.in_flight = r->in_flight,
			.mss = MSS,
			.srtt_us = r->srtt_us,
			/* The stack's slow-start pacing rate, 2 cwnd / srtt: HyStart's ACK-delay allowance. */
			.pacing_rate = r->srtt_us ? 2ULL * r->cwnd * MSS * 1000000ULL / r->srtt_us : 0,
			.gso_max_bytes = 65536,
			.paced = false,
			.tail_clocked = true,	/* their kernel sent those packets first */
		};
		bool found = out->st.rnd.found;

		u32 d = out->w.cwnd > r->cwnd ? out->w.cwnd - r->cwnd : r->cwnd - out->w.cwnd;
		bool clocking = v == SS_SUSS && out->st.suss.state == SUSS_CLOCKING;

		current_row = i;
		ss_on_ack(&out->st, &p, &a, &out->w, &plan);
		ss_cong_avoid(&out->st, &p, &a, &out->w);
		/* The log prints cwnd before this ACK's growth (and after an exit's cut). */
		if (!out->st.rnd.found && clocking)
			out->cwnd_max_diff_clocking = ss_max(out->cwnd_max_diff_clocking, d);
		if (!found && out->st.rnd.found)
			out->exit_row = i;
		if (v == SS_SUSS && version == SUSS_VER_2024 && !found && r->cwnd >= p.hs_low_window) {
			out->hs_rows++;
			out->hs_matches += out->st.hs.start_us == r->hs_start_us;
		}
		if (out->st.rnd.found && i > out->exit_row + 5)
			break;
	}
}

/* ---- comparing ------------------------------------------------------ */

static int mismatches;

static void line(const char *what, long long theirs, long long ours_v, bool held)
{
	long long d = ours_v - theirs;

	printf("| %-44s | %12lld | %12lld | %6lld |%s\n", what, theirs, ours_v, d,
	       d && held ? " MISMATCH" : "");
	if (d && held)
		mismatches++;
}

static void header(const char *title)
{
	printf("\n%s\n\n| %-44s | %12s | %12s | %6s |\n|%s|%s|%s|%s|\n", title, "decision", "theirs",
	       "ours", "diff", "----------------------------------------------", "--------------",
	       "--------------", "--------");
}

static const char *cause_name(u32 cause)
{
	static const char *names[] = { "none", "ACK train", "delay", "CSS done", "SUSS cap", "loss", "blitz" };

	return cause < 7 ? names[cause] : "?";
}

/* Their "type" of a stop: the SUSS state it entered (3 cap, 4 delay) or, with
 * SUSS off, Linux's HyStart flag (1 ACK train, 2 delay). */
static long long their_cause(long long type, bool suss)
{
	if (suss)
		return type == 3 ? SS_EXIT_SUSS_CAP : type == 4 ? SS_EXIT_DELAY : -1;
	return type == 1 ? SS_EXIT_ACK_TRAIN : type == 2 ? SS_EXIT_DELAY : -1;
}

/* How many of their decision lines of kind @name there are. */
static int count_logged(const char *name)
{
	int n = 0;

	while (find_logged(name, n))
		n++;
	return n;
}

static int count_ours(enum ss_event_type type)
{
	int n = 0;

	for (int i = 0; i < n_ours; i++)
		n += ours[i].ev.type == type;
	return n;
}

/* Decisions the log does not have are differences too: as many blue trains,
 * growth factors (theirs print G from round 3; round 2's is in its plan),
 * pacing plans, caps and stops as theirs, up to the stop (the replay stops a
 * few ACKs after it). */
static void compare_decision_counts(bool held)
{
	int theirs_g = count_logged("Growth factor") + (find_logged("Total amount", 0) &&
						       find_logged("Blue ACK train", 0) ? 1 : 0);

	line("decisions: blue trains", count_logged("Blue ACK train"), count_ours(SS_EV_BLUE_TRAIN), held);
	line("decisions: growth factors", theirs_g, count_ours(SS_EV_GROWTH), held);
	line("decisions: pacing plans", count_logged("Total amount"), count_ours(SS_EV_PACING), held);
	line("decisions: caps", count_logged("Cap is set"), count_ours(SS_EV_CAP), held);
	line("decisions: stops", count_logged("Stop exponential growth"), count_ours(SS_EV_EXIT), held);
}

static void compare_suss(const char *label, unsigned int version, bool held)
{
	struct run run;
	char what[96];

	replay(SS_SUSS, version, ss_default_params.suss_max, ss_default_params.hs_round_fix, &run);
	header(label);
	compare_decision_counts(held);
	for (int k = 0; ; k++) {
		const struct logged_event *bt = find_logged("Blue ACK train", k);
		const struct ours_event *ob = find_ours(SS_EV_BLUE_TRAIN, k);
		long long round;

		if (!bt)
			break;
		round = strtoll(bt->text, NULL, 10);
		snprintf(what, sizeof(what), "round %lld: blue train at ACK row", round);
		line(what, bt->row, ob ? ob->row : -1, held);
		snprintf(what, sizeof(what), "round %lld: dtB (us)", round);
		line(what, logged_col(bt, "dtB"), ob ? (long long)ob->ev.b : -1LL, held);
	}
	for (int k = 0; k < 8; k++) {
		const struct ours_event *g = find_ours(SS_EV_GROWTH, k);
		const struct logged_event *bt = find_logged("Blue ACK train", k);
		long long round, theirs_g = 2;

		if (!bt)
			break;
		round = strtoll(bt->text, NULL, 10);
		/* Round 2's G is not printed: a plan for round 2 means G = 4. */
		for (int j = 0; j < n_logged; j++) {
			if (logged[j].row != bt->row)
				continue;
			if (!strncmp(logged[j].name, "Growth factor", 13))
				theirs_g = logged_col(&logged[j], "G");
			if (!strncmp(logged[j].name, "Total amount", 12))
				theirs_g = 4;
		}
		snprintf(what, sizeof(what), "round %lld: growth factor G", round);
		line(what, theirs_g, g ? (long long)g->ev.b : -1LL, held);
	}
	for (int k = 0; ; k++) {
		const struct logged_event *pl = find_logged("Total amount", k);
		const struct ours_event *op = find_ours(SS_EV_PACING, k);
		long long red, dur, rate;

		if (!pl)
			break;
		if (sscanf(pl->text, "%lld %lld %lld", &red, &dur, &rate) != 3)
			exit(2);
		snprintf(what, sizeof(what), "pacing %d: red packets", k + 1);
		line(what, red, op ? (long long)op->plan.red_pkts : -1LL, held);
		snprintf(what, sizeof(what), "pacing %d: duration (us)", k + 1);
		line(what, dur, op ? (long long)op->plan.duration_us : -1LL, held);
		snprintf(what, sizeof(what), "pacing %d: rate (B/s)", k + 1);
		line(what, rate, op ? (long long)op->plan.rate : -1LL, held);
		snprintf(what, sizeof(what), "pacing %d: guard (us)", k + 1);
		line(what, logged_col(pl, "gap") / 1000, op ? (long long)op->plan.guard_us : -1LL, held);
		snprintf(what, sizeof(what), "pacing %d: limit (packets)", k + 1);
		line(what, logged_col(pl, "limit"), op ? (long long)op->plan.limit : -1LL, held);
	}
	{
		const struct logged_event *cap = find_logged("Cap is set", 0);
		const struct ours_event *oc = find_ours(SS_EV_CAP, 0);

		if (cap) {
			line("cap: set at ACK row", cap->row, oc ? oc->row : -1, held);
			line("cap: set in round", rows[cap->row].round, oc ? (long long)rows[oc->row].round : -1LL, held);
			line("cap: cwnd then", logged_col(cap, "c"), oc ? (long long)oc->ev.b : -1LL, held);
			line("cap: value", logged_col(cap, "cap"), oc ? (long long)oc->ev.a : -1LL, held);
		}
	}
	{
		const struct logged_event *stop = find_logged("Stop exponential growth", 0);
		const struct ours_event *ox = find_ours(SS_EV_EXIT, 0);

		line("stop: at ACK row", stop->row, ox ? ox->row : -1, held);
		line("stop: cwnd", logged_col(stop, "c"), ox ? (long long)ox->ev.b : -1LL, held);
		line("stop: cause (4 = SUSS cap, 2 = delay, 1 = ACK train)",
		     their_cause(logged_col(stop, "type"), true), ox ? (long long)ox->ev.a : -1LL, held);
		int div0 = 0;

		for (int i = 0; i < n_ours; i++)
			div0 += ours[i].ev.type == SS_EV_DIV0;
		printf("\n(ours stopped on: %s; SS_EV_DIV0 events: %d)\n", ox ? cause_name(ox->ev.a) : "no stop",
		       div0);
	}
	if (version == SUSS_VER_2024) {
		printf("HyStart's round start equal to the log's on %u of %u ACKs with cwnd >= 16 before the stop\n",
		       run.hs_matches, run.hs_rows);
		if (run.hs_matches != run.hs_rows && held)
			mismatches++;
	}
	printf("cwnd on clocking ACKs before the stop: at most %u packets from the log's\n",
	       run.cwnd_max_diff_clocking);
}

static void compare_hystart(const char *label, enum ss_variant v, unsigned int version, u32 suss_max,
			    u32 hs_round_fix, bool held)
{
	const struct logged_event *stop = find_logged("Stop exponential growth", 0);
	struct run run;
	const struct ours_event *ox;

	replay(v, version, suss_max, hs_round_fix, &run);
	ox = find_ours(SS_EV_EXIT, 0);
	header(label);
	line("stop: at ACK row", stop->row, ox ? ox->row : -1, held);
	line("stop: cwnd", logged_col(stop, "c"), ox ? (long long)ox->ev.b : -1LL, held);
	line("stop: cause (2 = delay, 1 = ACK train)", their_cause(logged_col(stop, "type"), false),
	     ox ? (long long)ox->ev.a : -1LL, held);
}

int main(int argc, char **argv)
{
	char path[512];

	if (argc != 2) {
		fprintf(stderr, "usage: %s LOGDIR (holding suss-on/ and suss-off/)\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/suss-on/acks.csv", argv[1]);
	read_acks(path);
	snprintf(path, sizeof(path), "%s/suss-on/events.csv", argv[1]);
	read_events(path);
	reconstruct_samples();
	printf("# The SUSS authors' log (SUSS on: %d ACKs), replayed\n", n_rows);
	compare_suss("## SUSS 2024 (the code behind the paper): held to the log", SUSS_VER_2024, true);
	compare_suss("## SUSS 2025 (their rewrite): beside", SUSS_VER_2025, false);
	compare_suss("## SUSS, ours from the paper's text: beside", SUSS_VER_PAPER, false);

	snprintf(path, sizeof(path), "%s/suss-off/acks.csv", argv[1]);
	read_acks(path);
	snprintf(path, sizeof(path), "%s/suss-off/events.csv", argv[1]);
	read_events(path);
	reconstruct_samples();
	printf("\n# The SUSS authors' log (SUSS off, HyStart alone: %d ACKs), replayed\n", n_rows);
	/* Their SUSS off is their CUBIC with SUSS switched off: 5.19's HyStart.
	 * SUSS 2024 allowed no accelerated round (suss_max 0) is the same. */
	compare_hystart("## SUSS 2024 with no round allowed (suss_max = 0), i.e. their HyStart: held to the log",
			SS_SUSS, SUSS_VER_2024, 0, 1, true);
	/* cubic_hs in Linux 5.19's rounds (hs_round_fix = 0) is the HyStart their
	 * SUSS-off flow ran: held to the log too. */
	compare_hystart("## cubic_hs with hs_round_fix = 0 (Linux 5.19's HyStart, the paper's kernel): held to the log",
			SS_HYSTART, SUSS_VER_PAPER, 0, 0, true);
	compare_hystart("## cubic_hs (Linux 6.1.192's HyStart, rounds fixed in 2025): beside", SS_HYSTART,
			SUSS_VER_PAPER, 0, 1, false);
	printf("\n%d mismatch(es) with the log\n", mismatches);
	return mismatches ? 1 : 0;
}
