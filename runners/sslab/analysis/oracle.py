"""The kernel as the oracle: a run of our congestion controls beside the same run with the kernel's.

The testbed kernel has Linux's own CUBIC built in, and under UML's virtual
time one seed gives one byte stream.  So a scenario run twice, in two boots
whose plans differ only in the congestion control each flow's socket asks
for (cubic_hs in one, the kernel's `cubic` in the other), is an exact test
of ours against Linux's: every ACK should find the same cwnd, and every
packet leave at the same microsecond.  (Two runs in one boot would not do:
each starts at another phase of the kernel's tick, which CUBIC counts in.)

This module compares two such runs, flow by flow (sslab.experiment.oracle
makes them):

  ACK by ACK        every tcp:tcp_probe record of the flow's sender, which the
                    stack writes for any congestion control: cwnd, ssthresh,
                    snd_una and snd_nxt (relative to where the flow began, so
                    the packets in flight too), the peer's window, srtt, the
                    receive window, the segment's length and the trace clock;
  packet by packet  every packet of the flow at the capture point: time (us),
                    direction, sequence and ACK numbers relative to the ISNs,
                    flags, payload length.

A difference is reported at the first record that differs, with the fields
that differ.  Where a difference is inherent to a module (kernel state it
cannot see), it would be named in EXCEPTIONS with its bound; there is none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..records import read_record, read_runs_index
from .pcap import flow_packets
from .traces import flow_records, read_trace

#: What an ACK's tcp_probe record is compared on (with its time and the sequence numbers).
PROBE_FIELDS = ("data_len", "snd_cwnd", "ssthresh", "snd_wnd", "srtt", "rcv_wnd")
#: A packet's fields, as sslab.analysis.pcap.flow_packets gives them.
PACKET_FIELDS = ("time_us", "direction", "seq", "ack", "flags", "bytes")
#: Differences inherent to a module, by name: (what the module cannot see, the bound on what it
#: moves).  None is known: every flow compared so far is the kernel's, ACK for ACK.
EXCEPTIONS: dict[str, tuple[str, str]] = {}


def probe_rows(records: list) -> list[tuple]:
    """A flow's tcp_probe records as comparable rows: (trace time, snd_una and snd_nxt relative to
    the first record's snd_una, then PROBE_FIELDS)."""
    probes = [r for r in records if r.event == "tcp_probe"]
    if not probes:
        return []
    base = probes[0].int("snd_una")
    return [(round(r.ts, 6), (r.int("snd_una") - base) & 0xFFFFFFFF, (r.int("snd_nxt") - base) & 0xFFFFFFFF,
             *(r.int(k) for k in PROBE_FIELDS)) for r in probes]


PROBE_ROW = ("trace_s", "snd_una", "snd_nxt", *PROBE_FIELDS)


def first_difference(ours: list[tuple], kernel: list[tuple], names: tuple[str, ...]) -> dict | None:
    """Where two sequences of rows first differ: the index, and each differing field's two values
    (a sequence that ends first differs at its end); None if they are the same."""
    for i, (a, b) in enumerate(zip(ours, kernel)):
        if a != b:
            return {"index": i, "fields": {n: {"ours": x, "kernel": y}
                                           for n, x, y in zip(names, a, b) if x != y}}
    if len(ours) != len(kernel):
        n = min(len(ours), len(kernel))
        return {"index": n, "fields": {"records": {"ours": len(ours), "kernel": len(kernel)}}}
    return None


@dataclass
class FlowComparison:
    """One flow of one run, ours beside the kernel's."""

    run: str
    port: int
    cc_ours: str
    cc_kernel: str
    acks: int
    packets: int
    ack_difference: dict | None
    packet_difference: dict | None
    exit_cwnd: tuple[int | None, int | None]
    lost: tuple[int, int]
    fct_s: tuple[float | None, float | None]
    exception: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return self.ack_difference is None and self.packet_difference is None

    @property
    def passes(self) -> bool:
        return self.identical or self.exception is not None

    def as_dict(self) -> dict:
        return {**asdict(self), "identical": self.identical}


def _tags(run_dir: Path) -> list[str]:
    return [e["tag"] for e in read_runs_index(Path(run_dir) / "job" / "out" / "runs.json")]


def _run(run_dir: Path, tag: str) -> tuple[Path, dict]:
    d = Path(run_dir) / "job" / "out" / "runs" / tag
    return d, read_record(d / "run.json", "sslab.run")


class UnpairedRuns(ValueError):
    """The second of two run directories lacks runs of the first (compare_runs pairs them by tag)."""

    def __init__(self, first: Path, second: Path, missing: list[str], of: int):
        self.first, self.second, self.missing, self.of = first, second, missing, of
        super().__init__(f"{second} has no run {missing[0]} (nor {len(missing) - 1} more) of {first}'s {of}")


def compare_runs(ours_dir: Path, kernel_dir: Path) -> list[FlowComparison]:
    """Every flow of every run of two run directories (ours, the kernel's: the same scenario), in
    order; the runs are paired by their tags, which the two plans share (UnpairedRuns, before any
    trace is read, when the second lacks some of the first's)."""
    tags, theirs = _tags(ours_dir), set(_tags(kernel_dir))
    if missing := [tag for tag in tags if tag not in theirs]:
        raise UnpairedRuns(ours_dir, kernel_dir, missing, len(tags))
    out = []
    for tag in tags:
        (odir, orun), (kdir, krun) = _run(ours_dir, tag), _run(kernel_dir, tag)
        otrace, ktrace = (read_trace(d / r["trace"]) if r.get("trace") else [] for d, r in ((odir, orun), (kdir, krun)))
        for of, kf in zip(orun["flows"], krun["flows"]):
            port = of["port"]
            oacks, kacks = probe_rows(flow_records(otrace, port)), probe_rows(flow_records(ktrace, port))
            opk = flow_packets(odir / orun["pcap"], port) if orun.get("pcap") else []
            kpk = flow_packets(kdir / krun["pcap"], port) if krun.get("pcap") else []
            out.append(FlowComparison(
                run=tag, port=port, cc_ours=of["cc"], cc_kernel=kf["cc"], acks=min(len(oacks), len(kacks)),
                packets=min(len(opk), len(kpk)),
                ack_difference=_with_times(first_difference(oacks, kacks, PROBE_ROW), oacks, kacks),
                packet_difference=_with_times(first_difference(opk, kpk, PACKET_FIELDS), opk, kpk),
                exit_cwnd=tuple((f.get("slow_start") or {}).get("exit_cwnd") for f in (of, kf)),
                lost=(orun["bottleneck"]["drops"], krun["bottleneck"]["drops"]),
                fct_s=(of.get("fct_s"), kf.get("fct_s"))))
    return out


def _with_times(diff: dict | None, ours: list[tuple], kernel: list[tuple]) -> dict | None:
    """@diff with the differing record of each side (its time first), for the report."""
    if diff is None:
        return None
    i = diff["index"]
    return {**diff, "ours": list(ours[i]) if i < len(ours) else None,
            "kernel": list(kernel[i]) if i < len(kernel) else None}


def difference_text(c: FlowComparison, other: str = "kernel") -> str:
    """The first difference in words (ACK first, else packet), or "none"; @other names the second side."""
    if c.identical:
        return "none"
    parts = []
    for what, diff in (("ACK", c.ack_difference), ("packet", c.packet_difference)):
        if diff:
            fields = ", ".join(f"{k} {v['ours']} ({other} {v['kernel']})" for k, v in diff["fields"].items())
            at = diff["ours"][0] if diff.get("ours") else (diff["kernel"] or ["?"])[0]
            parts.append(f"{what} {diff['index'] + 1} (at {at}): {fields}")
    return "; ".join(parts) + (f" [{c.exception}]" if c.exception else "")


def _pair(values: tuple, fmt: str = "{}") -> str:
    a, b = values
    if a == b:
        return "–" if a is None else fmt.format(a)
    return f"{'–' if a is None else fmt.format(a)} / {'–' if b is None else fmt.format(b)}"


def oracle_table(rows: list[tuple[str, FlowComparison]], sides: tuple[str, str] = ("ours", "kernel")) -> str:
    """The table of the kernel's documentation: scenario x run x flow, ours against the kernel's
    (a value shown once is the same on both sides; "ours / kernel" where they differ).  @sides names
    the two (sslab same-bytes: before and after)."""
    lines = [f"| scenario | run | flow (port) | {sides[0]} | {sides[1]} | ACKs compared | packets compared | "
             "first difference | exit cwnd | drops (the run's, at the bottleneck) | FCT, s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for scenario, c in rows:
        lines.append(f"| {scenario} | {c.run} | {c.port} | {c.cc_ours} | {c.cc_kernel} | {c.acks} | {c.packets} | "
                     f"{difference_text(c, sides[1])} | {_pair(c.exit_cwnd)} | {_pair(c.lost)} | {_pair(c.fct_s, '{:.6f}')} |")
    return "\n".join(lines)
