/*
 * tracecols: a run's ftrace text cut into columns, for the host's read-out.
 *
 * A Table 1 run's trace is 18-31 MB of text, about 60k tcp_probe lines
 * among 75-140k.  The Python reader (sslab.analysis.traces.trace_facts)
 * spent most of its 0.2-0.4 s a run turning each tcp_probe's hex and
 * decimal fields into integers, one Python call each.  This reads every
 * line once and hands back:
 *
 *   for each tcp_probe line: its time, its sender's port (the port of src=)
 *   and the six values the facts read (tc_keys, in that order);
 *   for each other line the Python reader would parse: where it lies, so
 *   that reader parses it (the module's events are a few hundred a run).
 *
 * It reads only what it can read exactly as the Python reader does: a
 * trace in ASCII whose lines end in '\n', a tcp_probe's time as digits, a
 * point and digits, its values as 0x-hex or plain decimal, every key
 * present once.  Anything else and the whole call returns
 * TC_NOT_CANONICAL: the caller reads the trace in Python instead, so the
 * two readers agree or this one stands aside.  Which lines are skipped
 * follows the Python reader: empty lines, '#' comments, and any line
 * holding ": sslab_ack: " (the facts never read that event).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TC_NOT_CANONICAL (-1)
#define TC_NO_ROOM (-2)
#define TC_VALUES 6

/* The facts' values, in the order the caller's columns hold them. */
#define TC_KEY(name) { name, sizeof(name) - 1 }
static const struct {
	const char *name;
	size_t len;
} tc_keys[TC_VALUES] = {
	TC_KEY("snd_nxt"), TC_KEY("snd_una"), TC_KEY("snd_cwnd"),
	TC_KEY("ssthresh"), TC_KEY("snd_wnd"), TC_KEY("srtt"),
};

static const char sslab_ack[] = ": sslab_ack: ";
static const char probe_event[] = "tcp_probe";

/* Bytes the Python reader would split lines or words at, besides '\n',
 * ' ' and '\t', or would decode differently: none may appear. */
static int canonical_text(const char *t, long len)
{
	unsigned int bad = 0;
	long i;

	/* No early exit: a loop the compiler can run many bytes at a time. */
	for (i = 0; i < len; i++) {
		unsigned char c = t[i];

		bad |= (c < 0x20 && c != '\n' && c != '\t') | (c >= 0x7f);
	}
	return !bad;
}

/* The first ": " in [s, e), or NULL. */
static const char *colon_space(const char *s, const char *e)
{
	const char *p = s;

	while ((p = memchr(p, ':', e - p)) && p + 1 < e) {
		if (p[1] == ' ')
			return p;
		p++;
	}
	return NULL;
}

/* A decimal as Python's int(v, 0) reads a canonical one: "0", or no leading zero. */
static int read_decimal(const char *s, const char *e, int64_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (s == e || e - s > 18 || (s[0] == '0' && e - s > 1))
		return 0;
	for (p = s; p < e; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		v = v * 10 + (*p - '0');
	}
	*out = (int64_t)v;
	return 1;
}

/* An unsigned integer as Python's int(v, 0) reads a canonical one:
 * "0x" and lower-case hex digits (the kernel's %#x), or a decimal. */
static int read_value(const char *s, const char *e, int64_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (!(e - s > 2 && s[0] == '0' && s[1] == 'x'))
		return read_decimal(s, e, out);
	if (e - s > 2 + 15)
		return 0;
	for (p = s + 2; p < e; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			return 0;
		v = v * 16 + d;
	}
	*out = (int64_t)v;
	return 1;
}

/* The port after src='s last ':' (-1: not a canonical port, never one asked for). */
static int32_t read_port(const char *s, const char *e)
{
	const char *p = e;
	int64_t v;

	while (p > s && p[-1] != ':')
		p--;
	if (p == s)
		return -1;	/* no ':': the Python reader's port is then the whole word */
	if (!read_decimal(p, e, &v) || v < 1 || v > 65535)
		return -1;
	return (int32_t)v;
}

/* The time: the head's last word, digits '.' digits. */
static int read_time(const char *s, const char *e, double *out)
{
	char buf[48];
	const char *w, *p;
	int point = 0;

	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	w = e;
	while (w > s && w[-1] != ' ' && w[-1] != '\t')
		w--;
	if (w == e || e - w >= (long)sizeof(buf) || *w == '.' || e[-1] == '.')
		return 0;
	for (p = w; p < e; p++) {
		if (*p == '.')
			point++;
		else if (*p < '0' || *p > '9')
			return 0;
	}
	if (point != 1)
		return 0;
	memcpy(buf, w, e - w);
	buf[e - w] = '\0';
	*out = strtod(buf, NULL);
	return 1;
}

/* Whether the words between ": " at @p1 and ": " at @p2 are @name (@p2 NULL: no event). */
static int is_event(const char *p1, const char *p2, const char *name, size_t n)
{
	return p2 && (size_t)(p2 - (p1 + 2)) == n && !memcmp(p1 + 2, name, n);
}

/* One tcp_probe body: the port of src= and the tc_keys values (0: not canonical). */
static int read_probe(const char *s, const char *e, int32_t *port, int64_t *values)
{
	unsigned int seen = 0;
	int have_src = 0;
	const char *w = s;

	while (w < e) {
		const char *end = memchr(w, ' ', e - w);
		const char *eq;
		size_t klen;
		int k;

		if (!end)
			end = e;
		if (end == w || end[-1] == ':')
			return 0;	/* two spaces, one at the end, or a word ending in ':' */
		eq = memchr(w, '=', end - w);
		if (!eq)
			return 0;	/* every word of a tcp_probe is key=value */
		klen = eq - w;
		if (klen == 3 && !memcmp(w, "src", 3)) {
			if (have_src)
				return 0;
			have_src = 1;
			*port = read_port(eq + 1, end);
		}
		for (k = 0; k < TC_VALUES; k++) {
			if (tc_keys[k].len != klen || memcmp(w, tc_keys[k].name, klen))
				continue;
			if (seen & (1u << k) || !read_value(eq + 1, end, &values[k]))
				return 0;
			seen |= 1u << k;
		}
		w = end + 1;
	}
	return have_src && seen == (1u << TC_VALUES) - 1;
}

/*
 * Read @len bytes of trace @text.  Room for @cap rows in each of @ts,
 * @port and @values (TC_VALUES a row), and for @cap other lines in
 * @other (start and end offsets, the end at the line's '\n').  Returns
 * the number of tcp_probe rows, the other lines' count in *@n_other; or
 * TC_NOT_CANONICAL, or TC_NO_ROOM.
 */
long tc_read(const char *text, long len, long cap, double *ts, int32_t *port,
	     int64_t *values, int64_t *other, long *n_other)
{
	const char *t = text, *end = text + len;
	long rows = 0, others = 0;

	if (!canonical_text(text, len))
		return TC_NOT_CANONICAL;
	while (t < end) {
		const char *e = memchr(t, '\n', end - t);
		const char *p1, *p2;

		if (!e)
			e = end;
		if (e == t || *t == '#')
			goto next;
		p1 = colon_space(t, e);
		p2 = p1 ? colon_space(p1 + 2, e) : NULL;
		if (p2 && is_event(p1, p2, probe_event, sizeof(probe_event) - 1)) {
			/* No ": sslab_ack: " can be in it: the head holds no ": ", the event is
			 * tcp_probe, and read_probe takes no word ending in ':'. */
			if (rows >= cap)
				return TC_NO_ROOM;
			if (!read_time(t, p1, &ts[rows]) ||
			    !read_probe(p2 + 2, e, &port[rows], &values[rows * TC_VALUES]))
				return TC_NOT_CANONICAL;
			rows++;
		} else {
			if (is_event(p1, p2, sslab_ack + 2, sizeof(sslab_ack) - 5) ||
			    memmem(t, e - t, sslab_ack, sizeof(sslab_ack) - 1))
				goto next;
			if (others >= cap)
				return TC_NO_ROOM;
			other[2 * others] = t - text;
			other[2 * others + 1] = e - text;
			others++;
		}
next:
		t = e + 1;
	}
	*n_other = others;
	return rows;
}
