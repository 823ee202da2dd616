// SPDX-License-Identifier: GPL-2.0
/*
 * sslab-syscount: what each process of a job costs a ptrace-based UML.
 *
 *   sslab-syscount --out FILE -- COMMAND [ARGS...]
 *
 * Under User-Mode Linux in ptrace mode every system call, page fault and
 * signal of a guest process is a round trip through the host's ptrace: the
 * guest's user space, not its network, is what a run costs in wall time.
 * This runs COMMAND and everything it starts under ptrace, inside the guest,
 * and writes per program image (a process from its start or exec to its next
 * exec or its exit):
 *
 *   syscalls   entries by system call number (the host names them)
 *   signals    signals delivered to it, by number
 *   minflt, majflt, nvcsw, nivcsw
 *              its page faults and context switches, from /proc at the
 *              image's end (the difference since its start, for an exec)
 *
 * It is an observer: the job runs as it would, but with a tracer beside it,
 * whose own stops move the guest's timeline (under virtual time a little:
 * it reads no clock).  Runs counted with it are a benchmark's, never
 * results.  It is not in the image; `make bench BENCH=syscalls` builds it
 * on the host, statically, and the job carries it (JobSpec.tools).
 *
 * How a stop is read.  PTRACE_O_TRACESYSGOOD marks syscall stops (SIGTRAP |
 * 0x80); PTRACE_GETEVENTMSG says entry (1) or exit (2), so a new child's
 * first stop needs no guessing; the number is ORIG_RAX.  Children and
 * threads are followed by PTRACE_O_TRACEFORK/VFORK/CLONE and start with a
 * SIGSTOP, which is swallowed; an exec stop closes the image before it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/reg.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SYSCALL 512
#define MAX_SIGNAL 65
#define MAX_TASKS 4096
#define MAX_IMAGES 8192
#define ARGV_BYTES 160

#define EVENTMSG_SYSCALL_ENTRY 1

struct image {
	pid_t tgid;
	pid_t parent;			/* the tgid that started it (0: the command) */
	char comm[20];
	char argv[ARGV_BYTES];		/* its command line, NULs as spaces, cut short */
	unsigned long syscalls[MAX_SYSCALL];
	unsigned long signals[MAX_SIGNAL];
	/* /proc counters at the image's start, then its own share at its end */
	unsigned long minflt, majflt, nvcsw, nivcsw;
	int threads;
	int done;
};

struct task {
	pid_t tid;
	struct image *img;		/* its thread group's current image */
	int seen;			/* its first stop (a SIGSTOP) has come */
};

static struct image images[MAX_IMAGES];
static int n_images;
static struct task tasks[MAX_TASKS];

static struct task *task_of(pid_t tid, int create)
{
	struct task *free_slot = NULL;
	int i;

	for (i = 0; i < MAX_TASKS; i++) {
		if (tasks[i].tid == tid)
			return &tasks[i];
		if (!tasks[i].tid && !free_slot)
			free_slot = &tasks[i];
	}
	if (!create || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->tid = tid;
	return free_slot;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

static pid_t tgid_of(pid_t tid)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return tid;
	p = strstr(buf, "\nTgid:");
	return p ? (pid_t)atoi(p + 6) : tid;
}

/* A whole process's faults (/proc/PID/stat) and context switches (/proc/PID/status). */
static void counters(pid_t tgid, unsigned long out[4])
{
	char path[64], buf[4096], *p;
	int field;

	memset(out, 0, 4 * sizeof(out[0]));
	snprintf(path, sizeof(path), "/proc/%d/stat", tgid);
	if (read_file(path, buf, sizeof(buf)) > 0 && (p = strrchr(buf, ')'))) {
		/* after "(comm)": state is field 3; minflt 10, majflt 12 */
		for (field = 2; *p && field < 12; p++) {
			if (*p != ' ')
				continue;
			field++;
			if (field == 10)
				out[0] = strtoul(p + 1, NULL, 10);
			else if (field == 12)
				out[1] = strtoul(p + 1, NULL, 10);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/status", tgid);
	if (read_file(path, buf, sizeof(buf)) > 0) {
		p = strstr(buf, "voluntary_ctxt_switches:");
		if (p && p > buf && p[-1] == '\n')
			out[2] = strtoul(p + 24, NULL, 10);
		p = strstr(buf, "nonvoluntary_ctxt_switches:");
		if (p)
			out[3] = strtoul(p + 27, NULL, 10);
	}
}

static struct image *open_image(pid_t tgid, pid_t parent)
{
	struct image *img;
	unsigned long c[4];
	char path[64];
	int i, n;

	if (n_images == MAX_IMAGES) {
		fprintf(stderr, "sslab-syscount: more than %d program images\n", MAX_IMAGES);
		exit(125);
	}
	img = &images[n_images++];
	img->tgid = tgid;
	img->parent = parent;
	snprintf(path, sizeof(path), "/proc/%d/comm", tgid);
	if (read_file(path, img->comm, sizeof(img->comm)) > 0)
		img->comm[strcspn(img->comm, "\n")] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", tgid);
	n = read_file(path, img->argv, sizeof(img->argv));
	for (i = 0; i < n - 1; i++)
		if (!img->argv[i])
			img->argv[i] = ' ';
	counters(tgid, c);
	img->minflt = c[0];
	img->majflt = c[1];
	img->nvcsw = c[2];
	img->nivcsw = c[3];
	return img;
}

static void close_image(struct image *img)
{
	unsigned long c[4];

	if (img->done)
		return;
	counters(img->tgid, c);
	img->minflt = c[0] - img->minflt;
	img->majflt = c[1] - img->majflt;
	img->nvcsw = c[2] - img->nvcsw;
	img->nivcsw = c[3] - img->nivcsw;
	img->done = 1;
}

/* The tgid's current image: the last one opened for it and not closed. */
static struct image *current_image(pid_t tgid)
{
	int i;

	for (i = n_images - 1; i >= 0; i--)
		if (images[i].tgid == tgid && !images[i].done)
			return &images[i];
	return NULL;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_counts(FILE *f, const unsigned long *counts, int n)
{
	int i, first = 1;

	fputc('{', f);
	for (i = 0; i < n; i++) {
		if (!counts[i])
			continue;
		fprintf(f, "%s\"%d\": %lu", first ? "" : ", ", i, counts[i]);
		first = 0;
	}
	fputc('}', f);
}

static int write_out(const char *path)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		return -1;
	fprintf(f, "{\"format\": \"sslab.syscount/1\", \"images\": [");
	for (i = 0; i < n_images; i++) {
		struct image *img = &images[i];

		close_image(img);
		fprintf(f, "%s\n {\"tgid\": %d, \"parent\": %d, \"threads\": %d, \"comm\": ", i ? "," : "",
			img->tgid, img->parent, img->threads);
		json_string(f, img->comm);
		fprintf(f, ", \"argv\": ");
		json_string(f, img->argv);
		fprintf(f, ", \"minflt\": %lu, \"majflt\": %lu, \"nvcsw\": %lu, \"nivcsw\": %lu, \"syscalls\": ",
			img->minflt, img->majflt, img->nvcsw, img->nivcsw);
		json_counts(f, img->syscalls, MAX_SYSCALL);
		fprintf(f, ", \"signals\": ");
		json_counts(f, img->signals, MAX_SIGNAL);
		fputc('}', f);
	}
	fprintf(f, "\n]}\n");
	return fclose(f);
}

/* A stop of a task not seen before: a new child or thread (or the command). */
static struct task *adopt(pid_t tid)
{
	struct task *t = task_of(tid, 1);
	pid_t tgid;

	if (!t) {
		fprintf(stderr, "sslab-syscount: more than %d tasks at once\n", MAX_TASKS);
		exit(125);
	}
	tgid = tgid_of(tid);
	t->img = current_image(tgid);
	if (!t->img) {
		char path[64], buf[512], *p;
		pid_t parent = 0;

		snprintf(path, sizeof(path), "/proc/%d/status", tid);
		if (read_file(path, buf, sizeof(buf)) > 0 && (p = strstr(buf, "\nPPid:")))
			parent = (pid_t)atoi(p + 6);
		t->img = open_image(tgid, parent);
	}
	t->img->threads++;
	return t;
}

static void usage(void)
{
	fprintf(stderr, "usage: sslab-syscount --out FILE -- COMMAND [ARGS...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *out;
	int status, code = 125, sig;
	pid_t child, tid;

	if (argc < 5 || strcmp(argv[1], "--out") || strcmp(argv[3], "--"))
		usage();
	out = argv[2];
	child = fork();
	if (child < 0) {
		perror("sslab-syscount: fork");
		return 125;
	}
	if (!child) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		execvp(argv[4], &argv[4]);
		fprintf(stderr, "sslab-syscount: %s: %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	if (waitpid(child, &status, 0) < 0 || !WIFSTOPPED(status)) {
		fprintf(stderr, "sslab-syscount: the command did not stop for the tracer\n");
		return 125;
	}
	ptrace(PTRACE_SETOPTIONS, child, NULL,
	       (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			      PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
			      PTRACE_O_EXITKILL));
	task_of(child, 1)->seen = 1;
	task_of(child, 0)->img = open_image(child, 0);
	task_of(child, 0)->img->threads = 1;
	ptrace(PTRACE_SYSCALL, child, NULL, NULL);

	while ((tid = waitpid(-1, &status, __WALL)) > 0) {
		struct task *t = task_of(tid, 0);
		int event = status >> 16;

		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == child)
				code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			if (t)
				t->tid = 0;
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (!t)
			t = adopt(tid);
		sig = WSTOPSIG(status);
		if (!t->seen) {
			t->seen = 1;
			if (sig == SIGSTOP) {	/* a new child's or thread's first stop */
				ptrace(PTRACE_SYSCALL, tid, NULL, NULL);
				continue;
			}
		}
		if (sig == (SIGTRAP | 0x80)) {
			unsigned long msg = 0;

			ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg);
			if (msg == EVENTMSG_SYSCALL_ENTRY) {
				long nr = ptrace(PTRACE_PEEKUSER, tid, (void *)(ORIG_RAX * sizeof(long)), NULL);

				if (nr >= 0 && nr < MAX_SYSCALL)
					t->img->syscalls[nr]++;
			}
			sig = 0;
		} else if (sig == SIGTRAP && event) {
			if (event == PTRACE_EVENT_EXEC) {
				/* The image before the exec ends; the thread group now has one task. */
				struct image *before = t->img;
				pid_t tgid = before->tgid;

				close_image(before);
				t->img = open_image(tgid, before->parent);
				t->img->threads = 1;
			} else if (event == PTRACE_EVENT_EXIT && t->img->tgid == tid) {
				close_image(t->img);
			}
			sig = 0;
		} else if (event == PTRACE_EVENT_STOP) {
			sig = 0;
		} else {
			if (sig > 0 && sig < MAX_SIGNAL)
				t->img->signals[sig]++;
		}
		ptrace(PTRACE_SYSCALL, tid, NULL, (void *)(long)sig);
	}
	if (write_out(out) < 0) {
		fprintf(stderr, "sslab-syscount: %s: %s\n", out, strerror(errno));
		return 125;
	}
	return code;
}
