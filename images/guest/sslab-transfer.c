// SPDX-License-Identifier: GPL-2.0
/*
 * sslab-transfer: an FCT-accurate transfer.  The server sends N bytes (or for
 * a duration), the client times them.  Blocking sockets, no polling.
 *
 *   sslab-transfer serve --port P
 *   sslab-transfer fetch --port P
 *
 * Each prints one JSON object on stdout per flow (the run record's per-flow
 * fields), and each is kept for a boot, a flow per line of its standard
 * input; it ends at the end of its input.  The server listens once and
 * serves "CC BYTES DURATION HINT" (BYTES 0 for a timed flow, DURATION 0 for
 * a sized one, HINT 0 for none), answering "ready" once the listener carries
 * the flow's congestion control and hint, and the flow's JSON object once it
 * is done.  The client fetches "HOST BYTES" (BYTES 0: until the server
 * closes) from the port as soon as it reads the line.  A run then starts no
 * process of its own for a flow.
 *
 * Why C: under User-Mode Linux every process start is host work (a Python
 * interpreter costs ~200 ms of wall time to start there, this ~5 ms), and
 * a flow's two processes were started for each flow until they were kept
 * for the boot.  Why these calls:
 *
 *  - The congestion control is set on the listening socket before any client
 *    connects, so the accepted connection starts with it: its init runs once,
 *    at connection establishment (iperf3 sets it after connect, so the
 *    namespace default's init runs first).  The server sets it again for
 *    each flow, before it says ready.
 *  - The client reads with MSG_WAITALL in RECV_CHUNK pieces: the call returns
 *    once that much has arrived, so the process wakes once per chunk, not per
 *    packet, while the kernel still takes every segment off the queue as it
 *    arrives (ACKs and the window do not change; SO_RCVLOWAT would change
 *    ACKing, so it is not used).
 *  - The client's FCT runs from just before connect() to the arrival of the
 *    last byte; it then closes, and the server, which never half-closes a
 *    sized flow, sees the close and reports the flow.  (A FIN queued behind unsent data
 *    would move the socket out of ESTABLISHED long before the last byte
 *    leaves, and the stack's per-ACK tracepoint only fires in ESTABLISHED.)
 *  - The client records [CLOCK_MONOTONIC seconds, bytes so far] at most every
 *    RX_SAMPLE_S: goodput over time without a packet capture.
 *  - The handshake's losses, as the kernel counts them: a socket's
 *    tcpi_total_retrans right after connect() is its SYN's retransmissions,
 *    and right after accept() the SYN-ACK's (the request's count, which the
 *    accepted socket inherits).  A lost SYN-ACK costs a second or more.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SEND_CHUNK (1 << 20)
#define RECV_CHUNK (1 << 17)
#define RX_SAMPLE_S 0.05
#define MAX_SAMPLES (1 << 20)

static void die(const char *what)
{
	fprintf(stderr, "sslab-transfer: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The kernel's count of a socket's retransmissions so far (tcpi_total_retrans). */
static unsigned int retransmissions(int s)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		die("TCP_INFO");
	return ti.tcpi_total_retrans;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct args {
	const char *cmd;
	int port;
};

static void usage(void)
{
	fprintf(stderr, "usage: sslab-transfer serve --port P   (a flow per line of input: CC BYTES DURATION HINT)\n"
			"       sslab-transfer fetch --port P   (a flow per line of input: HOST BYTES)\n");
	exit(2);
}

static struct args parse(int argc, char **argv)
{
	struct args a = { 0 };
	int i;

	if (argc < 2)
		usage();
	a.cmd = argv[1];
	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port"))
			a.port = atoi(argv[i + 1]);
		else
			usage();
	}
	if (i != argc || a.port <= 0)
		usage();
	return a;
}

/* The listener of @port, carrying no congestion control of ours yet. */
static int listener(int port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	int ls, one = 1;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die("bind");
	if (listen(ls, 1) < 0)
		die("listen");
	return ls;
}

/*
 * What the next accepted connection starts with: @cc, and Blitzstart's hint
 * (kernel/README.md), the listener's SO_MAX_PACING_RATE, inherited by the
 * accepted socket, which the module reads and lifts.  No hint: the kernel's
 * own "no limit" (~0), so a kept listener does not carry a flow's hint to
 * the next.  Nonzero: @cc is not available.
 */
static int arm(int ls, const char *cc, unsigned long long hint, int had_hint)
{
	unsigned long long unlimited = ~0ULL;

	if (setsockopt(ls, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)) < 0) {
		fprintf(stderr, "sslab-transfer: congestion control '%s' is not available here: %s\n", cc,
			strerror(errno));
		return 1;
	}
	if (hint && setsockopt(ls, SOL_SOCKET, SO_MAX_PACING_RATE, &hint, sizeof(hint)) < 0)
		die("SO_MAX_PACING_RATE");
	if (!hint && had_hint && setsockopt(ls, SOL_SOCKET, SO_MAX_PACING_RATE, &unlimited, sizeof(unlimited)) < 0)
		die("SO_MAX_PACING_RATE");
	return 0;
}

/* Accept one connection on @ls and send it @bytes (or for @duration s); print its JSON object. */
static void one_flow(int ls, unsigned long long bytes, double duration, unsigned long long hint)
{
	static char payload[SEND_CHUNK];
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	char used[32] = "";
	socklen_t ulen = sizeof(used) - 1;
	unsigned long long sent = 0;
	unsigned int synack_retrans;
	double t0;
	int c;
	char byte;

	c = accept(ls, (struct sockaddr *)&peer, &plen);
	if (c < 0)
		die("accept");
	synack_retrans = retransmissions(c);
	getsockopt(c, IPPROTO_TCP, TCP_CONGESTION, used, &ulen);
	t0 = now();
	if (duration > 0) {
		while (now() - t0 < duration) {
			ssize_t n = send(c, payload, sizeof(payload), 0);

			if (n < 0)
				die("send");
			sent += n;
		}
		/* A timed flow ends when the server says so: the FIN tells the client. */
		shutdown(c, SHUT_WR);
	}
	while (sent < bytes) {
		size_t want = bytes - sent < sizeof(payload) ? bytes - sent : sizeof(payload);
		ssize_t n = send(c, payload, want, 0);

		if (n < 0)
			die("send");
		sent += n;
	}
	/* Wait for the client's close (it knows the size). */
	while (recv(c, &byte, 1, 0) > 0)
		;
	close(c);
	printf("{\"role\": \"server\", \"cc\": \"%s\", \"bytes\": %llu, \"peer\": \"%s\", \"send_seconds\": %.6f, "
	       "\"hint_bytes_per_s\": %llu, \"synack_retransmits\": %u}\n", used, sent, inet_ntoa(peer.sin_addr),
	       now() - t0, hint, synack_retrans);
	fflush(stdout);
}

/* The server of a boot: a flow per order on standard input (the header says the line). */
static int serve(const struct args *a)
{
	char line[256], cc[64];
	unsigned long long bytes, hint;
	double duration;
	int ls = listener(a->port), had_hint = 0;

	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%63s %llu %lf %llu", cc, &bytes, &duration, &hint) != 4 ||
		    (!bytes && duration <= 0)) {
			fprintf(stderr, "sslab-transfer: an order is \"CC BYTES DURATION HINT\", not: %s", line);
			return 2;
		}
		if (arm(ls, cc, hint, had_hint))
			return 1;
		had_hint = hint != 0;
		printf("ready\n");
		fflush(stdout);
		one_flow(ls, bytes, duration, hint);
	}
	close(ls);
	return 0;
}

/*
 * Fetch one flow from @host's @port: @bytes (0: until the server closes);
 * print its JSON object.  Nonzero: the flow fell short.
 */
static int one_fetch(const char *host, int port, unsigned long long bytes, double *rx_t,
		     unsigned long long *rx_b)
{
	static char buf[RECV_CHUNK];
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned long long got = 0;
	double t0, t_conn, t_last, next_sample;
	size_t k, samples = 0;
	unsigned int syn_retrans;
	int s;

	if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
		fprintf(stderr, "sslab-transfer: not an IPv4 address: %s\n", host);
		return 2;
	}
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		die("socket");
	t0 = now();
	if (connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die("connect");
	t_conn = now();
	syn_retrans = retransmissions(s);
	rx_t[samples] = t_conn;
	rx_b[samples++] = 0;
	next_sample = t_conn + RX_SAMPLE_S;
	while (!bytes || got < bytes) {
		size_t want = sizeof(buf);
		ssize_t n;
		double t;

		if (bytes && bytes - got < want)
			want = bytes - got;
		n = recv(s, buf, want, MSG_WAITALL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv");
		if (n == 0)
			break;
		got += n;
		t = now();
		if (t >= next_sample && samples < MAX_SAMPLES - 1) {
			rx_t[samples] = t;
			rx_b[samples++] = got;
			next_sample = t + RX_SAMPLE_S;
		}
	}
	t_last = now();
	rx_t[samples] = t_last;
	rx_b[samples++] = got;
	close(s);
	if (bytes && got != bytes) {
		fprintf(stderr, "sslab-transfer: received %llu of %llu bytes\n", got, bytes);
		return 1;
	}
	printf("{\"role\": \"client\", \"bytes\": %llu, \"fct_s\": %.9f, \"connect_s\": %.9f, \"local_port\": null, "
	       "\"syn_retransmits\": %u, \"rx\": [", got, t_last - t0, t_conn - t0, syn_retrans);
	for (k = 0; k < samples; k++)
		printf("%s[%.4f, %llu]", k ? ", " : "", rx_t[k], rx_b[k]);
	printf("]}\n");
	fflush(stdout);
	return 0;
}

/* The client of a boot: a flow per order on standard input (the header says the line). */
static int fetch(const struct args *a)
{
	double *rx_t = malloc(sizeof(double) * MAX_SAMPLES);
	unsigned long long *rx_b = malloc(sizeof(*rx_b) * MAX_SAMPLES);
	char line[256], host[64];
	unsigned long long bytes;
	int err;

	if (!rx_t || !rx_b)
		die("malloc");
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%63s %llu", host, &bytes) != 2) {
			fprintf(stderr, "sslab-transfer: an order is \"HOST BYTES\", not: %s", line);
			return 2;
		}
		err = one_fetch(host, a->port, bytes, rx_t, rx_b);
		if (err)
			return err;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = parse(argc, argv);

	if (!strcmp(a.cmd, "serve"))
		return serve(&a);
	if (!strcmp(a.cmd, "fetch"))
		return fetch(&a);
	usage();
	return 2;
}
