// SPDX-License-Identifier: GPL-2.0
/*
 * sslab-nsexec: run a program in a named network namespace.
 *
 *   sslab-nsexec NS PROGRAM [ARGS...]
 *
 * What `ip netns exec NS PROGRAM` does for a network program, for less:
 * join the namespace that `ip netns add NS` pinned at /run/netns/NS, then
 * exec the program in place.  Nothing else: `ip netns exec` also gives the
 * program a mount namespace of its own with /sys remounted for NS and
 * /etc/netns/NS bound over /etc, which the run's programs (the transfer
 * tool, ping, tcpdump on a named device) do not read.
 *
 * Why: under User-Mode Linux every system call and page fault of a guest
 * process is a round trip through the host's ptrace.  Counted in an E7 cell
 * (`make bench BENCH=syscalls`), `ip netns exec` cost about 410 of them per
 * use (a dynamically linked ip, its mount work); this, linked statically, a
 * handful.  A run starts two programs per flow and one ping per pair.
 *
 * Exit status: the program's; 125 if the namespace cannot be joined, 127 if
 * the program cannot be run, 2 for a bad command line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NETNS_RUN_DIR "/run/netns"

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	int fd;

	if (argc < 3 || !argv[1][0] || strchr(argv[1], '/')) {
		fprintf(stderr, "usage: sslab-nsexec NS PROGRAM [ARGS...]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, argv[1]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "sslab-nsexec: cannot enter network namespace %s: %s\n", argv[1], strerror(errno));
		return 125;
	}
	close(fd);
	execvp(argv[2], &argv[2]);
	fprintf(stderr, "sslab-nsexec: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
