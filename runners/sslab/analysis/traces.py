"""Kernel traces of a run, read on the host: records, per-flow facts, per-ACK time series.

The guest copies the ring buffer's pages out as they are (`<tag>.trace.rb`,
sslab.analysis.ringbuf reads them); archives made before 7 Dec 2026 hold the
text ftrace formats (`<tag>.trace`, one line per event), and both are read
here into the same records.  Parsing, the per-flow facts and compression
happen here, after the job, so the guest spends no time on them (under
virtual time guest CPU is free, but every second of it is wall time).

Three events are recorded, filtered at the source to the experiment's
server ports:
  tcp:tcp_probe       the stack's per-ACK view, for any congestion control;
  sslab:sslab_ack     our module's per-ACK view (round, min RTTs, state),
                      with its own microsecond timestamp (tcp_mstamp);
  sslab:sslab_event   our module's algorithm events,
  sslab:sslab_bbr3    bbr3's state at each round and each change of state.
The trace clock's own timestamp is coarse under UML (1 ms: it has no
sched_clock); sslab_ack carries the module's microsecond time_us.  The
per-ACK series of a flow (trace_series) are tcp_probe's, for ours and the
kernel's controls alike: one measurement for every congestion control.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from isal import igzip

from . import ringbuf, tracecols

TRACE_MSS = 1448  # payload of a full frame with TCP timestamps
INFINITE_SSTHRESH = 0x7FFFFFFF

LINE = re.compile(r"^\s*(?P<task>.+?)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>[0-9.]+):\s+(?P<event>\w+):\s+(?P<body>.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


@dataclass
class Record:
    ts: float
    event: str
    fields: dict[str, str]

    def int(self, key: str) -> int:
        v = self.fields[key]
        return int(v, 16) if v.startswith("0x") else int(v)


def parse(text: str) -> list[Record]:
    """Records from ftrace's text: `<task>-<pid> [cpu] flags <ts>: <event>: k=v k=v ...`.

    Split on ': ' rather than matched with a regular expression (a busy
    run's trace has hundreds of thousands of lines); a line that does not
    split that way falls back to the full pattern."""
    out = []
    for line in text.splitlines():
        if line and line[0] != "#" and (split := _split_line(line)):
            out.append(Record(split[0], split[1], _fields(split[2])))
    return out


def _split_line(line: str) -> tuple[float, str, str] | None:
    """(timestamp, event, body) of one trace line, or None if it is not an event's."""
    try:
        head, event, body = line.split(": ", 2)
        return float(head.rsplit(None, 1)[1]), event, body
    except (ValueError, IndexError):
        m = LINE.match(line)
        return (float(m["ts"]), m["event"], m["body"]) if m else None


def _fields(body: str) -> dict[str, str]:
    """The k=v items of an event's body."""
    fields = {}
    for item in body.split():
        k, eq, v = item.partition("=")
        if eq:
            fields[k] = v
    return fields


def read_trace(path: Path) -> list[Record]:
    """A run's trace file, as the guest left it (.trace.rb, or an older archive's text, .trace) or
    compressed (.gz): every event's record, in the order the kernel prints them."""
    path = Path(path)
    if ringbuf.is_ringbuf(path):
        return ringbuf_records(ringbuf.read(path))
    opener = igzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return parse(f.read())


def ringbuf_records(rb: ringbuf.RingBuffer, names: tuple[str, ...] | None = None) -> list[Record]:
    """The records of a ring-buffer trace's events (of those @names, or all), in order: each the
    record parse() makes of the line the kernel would have printed."""
    rows_of = {f.name: rb.rows(f.name) for f in rb.formats.values() if names is None or f.name in names}
    rows_of = {name: rows for name, rows in rows_of.items() if rows.size}
    every = np.sort(np.concatenate(list(rows_of.values()))) if rows_of else np.empty(0, dtype=np.int64)
    records: dict[int, Record] = {}
    for name, rows in rows_of.items():
        for row, ts, body in zip(rows.tolist(), rb.seconds(rows).tolist(), rb.texts(name, rows)):
            records[row] = Record(ts, name, _fields(body))
    return [records[row] for row in every.tolist()]


class ProbeFacts:
    """What a run record keeps of one flow's tcp_probe records, gathered a record at a time (add):
    the end of the initial slow start and the receiver-limited ACKs, without keeping the records.

    Slow start: exit_cwnd is the largest cwnd seen while ssthresh was infinite, over the whole
    flow: a reduction the kernel later undoes (a spurious loss, with ssthresh restored to
    infinity) does not end slow start.  ssthresh is that of the record right after the last
    infinite one (and its time, from the flow's first record, is exit_time_s); undone_reductions
    counts returns from a finite ssthresh to an infinite one.

    The server's FCT (server_fct_s), as a log kept by the sender's kernel would time it: from the
    flow's first segment to the ACK that last advanced snd_una.  The first tcp_probe record is the
    first ACK after the handshake (the tracepoint is in the established state's receive path), and
    the srtt it prints is the handshake's RTT sample, so the first segment left that long before it.

    Receiver-limited: an ACK at which the peer's window, not cwnd, bounded what could be sent
    (less than a segment of the window left, and cwnd beyond it)."""

    __slots__ = ("records", "first_ts", "first_srtt_us", "una", "una_ts", "peak", "undone", "finite", "after",
                 "receiver_limited", "mss")

    def __init__(self, mss: int = TRACE_MSS):
        self.records = 0
        self.first_ts: float | None = None
        self.first_srtt_us = 0
        self.una = 0                         # the highest snd_una seen, and when it got there
        self.una_ts: float | None = None
        self.peak: int | None = None         # largest cwnd under an infinite ssthresh
        self.undone = 0
        self.finite = False                  # the last record's ssthresh was finite
        self.after: tuple[float, int] | None = None   # (ts, ssthresh) right after the last infinite one
        self.receiver_limited = 0
        self.mss = mss

    def add(self, ts: float, snd_nxt: int, snd_una: int, cwnd: int, ssthresh: int, snd_wnd: int,
            srtt_us: int = 0) -> None:
        self.records += 1
        if self.first_ts is None:
            self.first_ts, self.first_srtt_us = ts, srtt_us
            self.una, self.una_ts = snd_una, ts
        elif 0 < (snd_una - self.una) & 0xFFFFFFFF < 1 << 31:   # after, in sequence space
            self.una, self.una_ts = snd_una, ts
        if ssthresh >= INFINITE_SSTHRESH:
            self.peak = cwnd if self.peak is None or cwnd > self.peak else self.peak
            self.undone += self.finite
            self.finite = False
            self.after = None
        else:
            if not self.finite and self.peak is not None:
                self.after = (ts, ssthresh)
            self.finite = True
        in_flight = (snd_nxt - snd_una) & 0xFFFFFFFF
        if snd_wnd - in_flight < self.mss and cwnd * self.mss > snd_wnd:
            self.receiver_limited += 1

    @classmethod
    def of_columns(cls, ts: np.ndarray, values: np.ndarray, mss: int = TRACE_MSS) -> ProbeFacts:
        """The facts of one flow's records given as columns (@ts; @values, a row a record, its columns
        PROBE_FACT_FIELDS), in numpy: the same attributes as add() over the rows, one at a time.

        snd_una's "after, in sequence space" is read on the sequence numbers unwrapped (each step
        from the one before taken modulo 2^32 as the shorter way, up to 2^31, as TCP's own
        comparisons take it), so an advance is a new running maximum.  The slow start's end is the
        record right after the last one with an infinite ssthresh; a reduction undone is a record with
        an infinite ssthresh right after one with a finite one."""
        facts = cls(mss)
        n = len(ts)
        facts.records = n
        if n == 0:
            return facts
        nxt, una, cwnd, ssthresh, wnd, srtt = (values[:, k] for k in range(6))
        facts.first_ts, facts.first_srtt_us = float(ts[0]), int(srtt[0])
        steps = (np.diff(una) + (1 << 31)) % (1 << 32) - (1 << 31)
        seq = np.concatenate(([0], np.cumsum(steps)))
        ahead = np.flatnonzero(seq[1:] > np.maximum.accumulate(seq)[:-1]) + 1
        last = int(ahead[-1]) if ahead.size else 0
        facts.una, facts.una_ts = int(una[last]), float(ts[last])
        infinite = ssthresh >= INFINITE_SSTHRESH
        if infinite.any():
            facts.peak = int(cwnd[infinite].max())
            end = int(np.flatnonzero(infinite)[-1])
            facts.after = (float(ts[end + 1]), int(ssthresh[end + 1])) if end + 1 < n else None
        facts.undone = int(np.count_nonzero(infinite[1:] & ~infinite[:-1]))
        facts.finite = not bool(infinite[-1])
        in_flight = (nxt - una) % (1 << 32)
        facts.receiver_limited = int(np.count_nonzero((wnd - in_flight < mss) & (cwnd * mss > wnd)))
        return facts

    def add_record(self, r: Record) -> None:
        self.add(r.ts, r.int("snd_nxt"), r.int("snd_una"), r.int("snd_cwnd"), r.int("ssthresh"), r.int("snd_wnd"),
                 r.int("srtt") if "srtt" in r.fields else 0)

    def server_fct_s(self) -> float | None:
        """The flow's first segment to its last advancing ACK, seconds (None: no record)."""
        if self.first_ts is None:
            return None
        return round(self.una_ts - self.first_ts + self.first_srtt_us / 1e6, 6)

    def slow_start(self) -> dict | None:
        """The end of the initial slow start; None if ssthresh was never infinite or still is."""
        if self.peak is None or self.after is None:
            return None
        ts, ssthresh = self.after
        return {"exit_cwnd": self.peak, "ssthresh": ssthresh, "exit_time_s": round(ts - self.first_ts, 4),
                "undone_reductions": self.undone}


def probe_facts(probes: list[Record], mss: int = TRACE_MSS) -> ProbeFacts:
    facts = ProbeFacts(mss)
    for r in probes:
        facts.add_record(r)
    return facts


def slow_start_exit(probes: list[Record]) -> dict | None:
    """The end of the initial slow start, from tcp_probe records (ProbeFacts says how it is read)."""
    return probe_facts(probes).slow_start()


def receiver_limited_samples(probes: list[Record], mss: int = TRACE_MSS) -> int:
    """ACKs at which the peer's window, not cwnd, bounded what could be sent."""
    return probe_facts(probes, mss).receiver_limited


def flow_records(records: list[Record], port: int) -> list[Record]:
    """The records of the flow whose server (sender) port is @port."""
    sport = str(port)
    return [r for r in records if r.fields.get("sport") == sport or r.fields.get("src", "").endswith(f":{port}")]


def records_by_port(records: list[Record], ports: list[int]) -> dict[int, list[Record]]:
    """flow_records of each of @ports, in one pass over @records (a run's trace holds about
    90k records and a Table 1 run 13 flows: one scan per flow was half of reading the trace)."""
    wanted = {str(p): p for p in ports}
    out: dict[int, list[Record]] = {p: [] for p in ports}
    for r in records:
        sport = r.fields.get("sport")
        src = r.fields.get("src", "")
        src_port = src.rsplit(":", 1)[1] if ":" in src else None
        if sport in wanted:
            out[wanted[sport]].append(r)
        if src_port in wanted and src_port != sport:
            out[wanted[src_port]].append(r)
    return out


#: What the facts read of a tcp_probe record (ProbeFacts.add's arguments after the time), in that
#: order; the kernel prints `family src dest mark data_len snd_nxt snd_una snd_cwnd ssthresh
#: snd_wnd ...`.
PROBE_FACT_FIELDS = tracecols.VALUES
#: The event the facts never read: its lines are passed over unparsed (a Table 1 run's trace holds
#: about 17k sslab_ack lines of its 140k).
NOT_A_FACT = ": sslab_ack: "


class ProbeLayout:
    """Where a trace's tcp_probe body holds src and PROBE_FACT_FIELDS (an event's format is the same
    throughout a trace): read off its first record, then each record is split as far as the last of
    them and its values cut out by position, with no dictionary of fields."""

    def __init__(self, body: str):
        keys = [item.partition("=")[0] for item in body.split()]
        missing = [k for k in ("src", *PROBE_FACT_FIELDS) if k not in keys]
        if missing:
            raise ValueError(f"tcp_probe records without {', '.join(missing)}: {body[:200]!r}")
        self.src = keys.index("src")
        self.at = [(keys.index(k), len(k) + 1) for k in PROBE_FACT_FIELDS]
        self.items = max(self.src, *(i for i, _ in self.at)) + 1

    def read(self, body: str) -> tuple[str, list[int]]:
        """(src's port, the PROBE_FACT_FIELDS values) of one record's body."""
        items = body.split(" ", self.items)
        return (items[self.src].rpartition(":")[2],
                [int(items[i][cut:], 0) for i, cut in self.at])


def trace_facts(text: str | bytes, ports: list[int]) -> dict[int, dict]:
    """flow_facts of each of @ports' flows, from a run's trace text in one pass: what the host adds
    to a run's record.  tcp_probe records go straight into each flow's ProbeFacts (a Table 1 run's
    trace holds about 120k of them: a Record each was most of the read-out's time), sslab_ack lines
    are skipped, the module's other events kept whole.  The lines are cut into columns by the
    compiled reader (sslab.analysis.tracecols) where it can read them exactly as _trace_facts_read
    does, else read here in Python: the same facts either way."""
    data = text if isinstance(text, bytes) else text.encode()
    if data.startswith(ringbuf.MAGIC):
        return ringbuf_facts(ringbuf.parse(data), ports)
    columns = tracecols.read(data)
    facts = _trace_facts_of_columns(columns, data, ports) if columns is not None else None
    if facts is None:
        facts = _trace_facts_read(text if isinstance(text, str) else text.decode(), ports)
    return facts


#: The events trace_facts keeps whole (the per-ACK ones, tcp_probe and sslab_ack, it does not).
OTHER_EVENTS = ("sslab_event", "sslab_bbr3")


def ringbuf_facts(rb: ringbuf.RingBuffer, ports: list[int]) -> dict[int, dict]:
    """trace_facts of a ring-buffer trace (read already: the caller may want its lost events too): tcp_probe's fields as columns (the sender's port is its
    sport field, the port its src prints), the module's events and bbr3's as records."""
    if rb.format("tcp_probe") is None:
        return _facts_by_port({p: ProbeFacts() for p in ports}, ringbuf_records(rb, OTHER_EVENTS), ports)
    rows = rb.rows("tcp_probe")
    columns = tracecols.TraceColumns(rb.seconds(rows), rb.column("tcp_probe", "sport", rows).astype(np.int32),
                                     np.stack([rb.column("tcp_probe", k, rows) for k in PROBE_FACT_FIELDS], axis=1),
                                     np.empty((0, 2), dtype=np.int64))
    return _facts_of_probe_columns(columns, ringbuf_records(rb, OTHER_EVENTS), ports)


def _trace_facts_of_columns(columns: tracecols.TraceColumns, data: bytes, ports: list[int]) -> dict[int, dict] | None:
    """trace_facts from the compiled reader's columns (None: a line only the Python reader's pattern
    can read is a tcp_probe's, so the whole trace is left to that reader, to keep one order)."""
    others: list[Record] = []
    for start, end in columns.other.tolist():
        split = _split_line(data[start:end].decode())
        if split is None:
            continue
        ts, event, body = split
        if event == "tcp_probe":
            return None
        others.append(Record(ts, event, _fields(body)))
    return _facts_of_probe_columns(columns, others, ports)


def _facts_of_probe_columns(columns: tracecols.TraceColumns, others: list[Record], ports: list[int]) -> dict[int, dict]:
    """trace_facts from tcp_probe's columns and the trace's other records."""
    probes = {}
    for port in ports:
        mine = np.flatnonzero(columns.port == port)
        probes[port] = ProbeFacts.of_columns(columns.ts[mine], columns.values[mine])
    return _facts_by_port(probes, others, ports)


def _trace_facts_read(text: str, ports: list[int]) -> dict[int, dict]:
    """trace_facts read line by line in Python (the reader the compiled one must agree with)."""
    wanted = {str(p): p for p in ports}
    probes = {p: ProbeFacts() for p in ports}
    others: list[Record] = []
    layout: ProbeLayout | None = None
    for line in text.splitlines():
        if not line or line[0] == "#" or NOT_A_FACT in line or (split := _split_line(line)) is None:
            continue
        ts, event, body = split
        if event == "tcp_probe":
            layout = layout or ProbeLayout(body)
            port, values = layout.read(body)
            if port in wanted:
                probes[wanted[port]].add(ts, *values)
        else:
            others.append(Record(ts, event, _fields(body)))
    return _facts_by_port(probes, others, ports)


def _facts_by_port(probes: dict[int, ProbeFacts], others: list[Record], ports: list[int]) -> dict[int, dict]:
    """Each port's facts from its tcp_probe facts and the trace's other records (both readers' last step)."""
    mine = records_by_port(others, ports)
    return {p: facts_of(probes[p], mine[p]) for p in ports}


def flow_facts(mine: list[Record]) -> dict:
    """What a run record keeps per flow from the trace: slow start's end, the receiver-limited
    ACKs and the module's events (with their microsecond times).  @mine: the flow's records
    (records_by_port or flow_records pick them out)."""
    return facts_of(probe_facts([r for r in mine if r.event == "tcp_probe"]), mine)


def facts_of(probes: ProbeFacts, mine: list[Record]) -> dict:
    """flow_facts' record from a flow's tcp_probe facts and its other records (@mine)."""
    return {"slow_start": probes.slow_start(), "probe_records": probes.records,
            "server_fct_s": probes.server_fct_s(),
            "receiver_limited_acks": probes.receiver_limited,
            "events": [{"ts": r.ts, **r.fields} for r in mine if r.event == "sslab_event"],
            # bbr3's state at each round and each change of state (sslab_bbr3)
            "bbr3": [{"ts": r.ts, **r.fields} for r in mine if r.event == "sslab_bbr3"]}


@functools.lru_cache(maxsize=64)
def trace_series(path: Path, port: int) -> dict:
    """Per-ACK time series of one flow from tcp:tcp_probe, which the stack writes for every
    congestion control (ours and the kernel's alike, so a plot of several measures each the same
    way): cwnd, the packets outstanding (snd_nxt - snd_una in full-sized segments: in recovery it
    still counts the SACKed and the lost), the data acknowledged in order (snd_una's advance) and the
    smoothed RTT, against the trace clock (under UML it ticks in ms).  Read once per trace and flow
    however many plots and tables of a report ask (kept: callers only read it)."""
    if ringbuf.is_ringbuf(path):
        rb = ringbuf.read(path)
        rows = rb.rows("tcp_probe")
        rows = rows[rb.column("tcp_probe", "sport", rows) == port]
        ts = rb.seconds(rows).tolist()
        cwnd, una, nxt, srtt = (rb.column("tcp_probe", k, rows).tolist()
                                for k in ("snd_cwnd", "snd_una", "snd_nxt", "srtt"))
    else:
        probes = [r for r in flow_records(read_trace(path), port) if r.event == "tcp_probe"]
        ts = [r.ts for r in probes]
        cwnd, una, nxt = ([r.int(k) for r in probes] for k in ("snd_cwnd", "snd_una", "snd_nxt"))
        # The stack's smoothed RTT (us in tcp_probe); None where a trace lacks it.
        srtt = [r.int("srtt") if "srtt" in r.fields else None for r in probes]
    out = {"t": [], "cwnd": [], "outstanding": [], "acked_mb": [], "srtt_ms": [], "source": "tcp_probe",
           "clock": "trace clock"}
    if not ts:
        return out
    t0, una0 = ts[0], una[0]
    out["t"] = [t - t0 for t in ts]
    out["cwnd"] = cwnd
    out["acked_mb"] = [((u - una0) & 0xFFFFFFFF) / 1e6 for u in una]
    out["outstanding"] = [((n - u) & 0xFFFFFFFF) / TRACE_MSS for n, u in zip(nxt, una)]
    out["srtt_ms"] = [None if v is None else v / 1000 for v in srtt]
    return out
