"""Kernel traces of a run, read on the host: records, per-flow facts, per-ACK time series.

The guest records the trace text as ftrace formats it (one line per event)
and nothing more; parsing, the per-flow facts and compression happen here,
after the job, so the guest spends no time on them (under virtual time
guest CPU is free, but every second of it is wall time).

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

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

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


def _fields(body: str, items: int = -1) -> dict[str, str]:
    """The k=v items of an event's body (its first @items only, if given)."""
    fields = {}
    for item in body.split(" ", items)[:items] if items > 0 else body.split():
        k, eq, v = item.partition("=")
        if eq:
            fields[k] = v
    return fields


def read_trace(path: Path) -> list[Record]:
    """A run's trace file, raw (.trace, as the guest left it) or compressed (.trace.gz)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return parse(f.read())


def slow_start_exit(probes: list[Record]) -> dict | None:
    """The end of the initial slow start, from tcp_probe records.

    exit_cwnd is the largest cwnd seen while ssthresh was infinite, over the
    whole flow: a reduction the kernel later undoes (a spurious loss, with
    ssthresh restored to infinity) does not end slow start.  ssthresh is
    the first finite value after the last infinite one; undone_reductions
    counts returns from a finite ssthresh to an infinite one.
    """
    peak = last_inf = None
    undone = 0
    prev_finite = False
    for i, r in enumerate(probes):
        if r.int("ssthresh") >= INFINITE_SSTHRESH:
            cwnd = r.int("snd_cwnd")
            peak = cwnd if peak is None else max(peak, cwnd)
            last_inf = i
            undone += prev_finite
            prev_finite = False
        else:
            prev_finite = True
    if peak is None or last_inf is None or last_inf + 1 >= len(probes):
        return None
    after = probes[last_inf + 1]
    return {"exit_cwnd": peak, "ssthresh": after.int("ssthresh"),
            "exit_time_s": round(after.ts - probes[0].ts, 4), "undone_reductions": undone}


def receiver_limited_samples(probes: list[Record], mss: int = TRACE_MSS) -> int:
    """ACKs at which the peer's window, not cwnd, bounded what could be sent."""
    n = 0
    for r in probes:
        in_flight = (r.int("snd_nxt") - r.int("snd_una")) & 0xFFFFFFFF
        if r.int("snd_wnd") - in_flight < mss and r.int("snd_cwnd") * mss > r.int("snd_wnd"):
            n += 1
    return n


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


#: What flow_facts reads of a tcp_probe record, and how many of its body's items hold them (the
#: kernel prints `family src dest mark data_len snd_nxt snd_una snd_cwnd ssthresh snd_wnd` first).
PROBE_FACT_FIELDS = ("snd_nxt", "snd_una", "snd_cwnd", "ssthresh", "snd_wnd")
PROBE_FACT_ITEMS = 10
#: The event flow_facts never reads: its lines are passed over unparsed (a Table 1 run's trace
#: holds about 17k sslab_ack lines of its 87k).
NOT_A_FACT = ": sslab_ack: "


def records_for_facts(text: str, ports: list[int]) -> dict[int, list[Record]]:
    """records_by_port(parse(@text), @ports) as far as flow_facts reads it, for less: sslab_ack
    lines are skipped, and a tcp_probe record holds only its first PROBE_FACT_ITEMS items (all
    of them, if the trace's first tcp_probe does not have PROBE_FACT_FIELDS among those: an
    event's format is the same throughout a trace)."""
    records = []
    probe_items = None
    for line in text.splitlines():
        if not line or line[0] == "#" or NOT_A_FACT in line or (split := _split_line(line)) is None:
            continue
        ts, event, body = split
        if event == "tcp_probe":
            if probe_items is None:
                head = _fields(body, PROBE_FACT_ITEMS)
                probe_items = PROBE_FACT_ITEMS if all(k in head for k in PROBE_FACT_FIELDS) else -1
            records.append(Record(ts, event, _fields(body, probe_items)))
        else:
            records.append(Record(ts, event, _fields(body)))
    return records_by_port(records, ports)


def flow_facts(mine: list[Record]) -> dict:
    """What a run record keeps per flow from the trace: slow start's end, the receiver-limited
    ACKs and the module's events (with their microsecond times).  @mine: the flow's records
    (records_for_facts, records_by_port or flow_records pick them out)."""
    probes = [r for r in mine if r.event == "tcp_probe"]
    return {"slow_start": slow_start_exit(probes), "probe_records": len(probes),
            "receiver_limited_acks": receiver_limited_samples(probes),
            "events": [{"ts": r.ts, **r.fields} for r in mine if r.event == "sslab_event"],
            # bbr3's state at each round and each change of state (sslab_bbr3)
            "bbr3": [{"ts": r.ts, **r.fields} for r in mine if r.event == "sslab_bbr3"]}


def trace_series(path: Path, port: int) -> dict:
    """Per-ACK time series of one flow from tcp:tcp_probe, which the stack writes for every
    congestion control (ours and the kernel's alike, so a plot of several measures each the same
    way): cwnd, the packets outstanding (snd_nxt - snd_una in full-sized segments: in recovery it
    still counts the SACKed and the lost), the data acknowledged in order (snd_una's advance) and the
    smoothed RTT, against the trace clock (under UML it ticks in ms)."""
    probes = [r for r in flow_records(read_trace(path), port) if r.event == "tcp_probe"]
    out = {"t": [], "cwnd": [], "outstanding": [], "acked_mb": [], "srtt_ms": [], "source": "tcp_probe",
           "clock": "trace clock"}
    if not probes:
        return out
    t0, una0 = probes[0].ts, probes[0].int("snd_una")
    for r in probes:
        out["t"].append(r.ts - t0)
        out["cwnd"].append(r.int("snd_cwnd"))
        out["acked_mb"].append(((r.int("snd_una") - una0) & 0xFFFFFFFF) / 1e6)
        out["outstanding"].append(((r.int("snd_nxt") - r.int("snd_una")) & 0xFFFFFFFF) / TRACE_MSS)
        # The stack's smoothed RTT (us in tcp_probe); None where a trace lacks it.
        out["srtt_ms"].append(r.int("srtt") / 1000 if "srtt" in r.fields else None)
    return out
