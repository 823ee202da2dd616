"""Record kernel tracepoints with ftrace, and read the records back.

Two sources are recorded per flow:
  tcp:tcp_probe       the stack's per-ACK view, for any congestion control
                      (including the kernel's own cubic and bbr);
  sslab:sslab_ack     our module's per-ACK view (round, min RTTs, state);
  sslab:sslab_event   our module's algorithm events.
Records are filtered to the flow's server port at the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
#: Per-CPU ring buffer (KiB).  A 20 MB flow makes ~30k records of ~250 B.
BUFFER_KB = 32768
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
    out = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = LINE.match(line)
        if m:
            out.append(Record(float(m["ts"]), m["event"], dict(FIELD.findall(m["body"]))))
    return out


class Ftrace:
    """Tracepoint recording for a job: set up once, then start/stop per run.

    Enabling or disabling a trace event patches kernel text (static calls),
    which waits for every CPU to acknowledge an IPI.  Under multi-threaded
    TCG that wait sometimes never ends: the guest locks up (we saw it in E1
    runs).  So events are enabled once per job, for a range of ports, never
    disabled, and a run only flips `tracing_on` and clears the buffer, which
    patch nothing.  (See VMConfig.cpus for the whole story.)
    """

    def __init__(self, root: Path = TRACEFS):
        self.root = root
        self.enabled: list[Path] = []

    def _w(self, rel: str, value: str) -> None:
        (self.root / rel).write_text(value)

    def setup(self, port: int, last_port: int | None = None,
              systems: tuple[str, ...] = ("tcp/tcp_probe", "sslab")) -> None:
        """Enable @systems for connections whose local port is in [port, last_port]."""
        if self.enabled:
            return
        filt = f"sport == {port}" if last_port is None else f"sport >= {port} && sport <= {last_port}"
        self._w("tracing_on", "0")
        self._w("buffer_size_kb", str(BUFFER_KB))
        for sysname in systems:
            d = self.root / "events" / sysname
            if not d.is_dir():
                continue
            events = [d] if (d / "enable").is_file() and (d / "filter").is_file() else \
                [e for e in d.iterdir() if (e / "filter").is_file()]
            for ev in events:
                (ev / "filter").write_text(filt)
                (ev / "enable").write_text("1")
                self.enabled.append(ev)

    def start(self, port: int | None = None, last_port: int | None = None) -> None:
        """Start recording a run (setting up on first use, for the given ports)."""
        if not self.enabled:
            self.setup(port if port is not None else 5201, last_port)
        self._w("trace", "")
        self._w("tracing_on", "1")

    def stop(self) -> str:
        self._w("tracing_on", "0")
        text = (self.root / "trace").read_text()
        self._w("trace", "")
        return text

    def close(self) -> None:
        """Stop recording at the end of a job.

        The events stay enabled: disabling patches kernel text too, and the
        VM powers off after the job anyway (on a native host the events stay
        on, filtered to the experiment ports, until tracing is reset).
        """
        self._w("tracing_on", "0")


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


def receiver_limited_samples(probes: list[Record], mss: int = 1448) -> int:
    """ACKs at which the peer's window, not cwnd, bounded what could be sent."""
    n = 0
    for r in probes:
        in_flight = (r.int("snd_nxt") - r.int("snd_una")) & 0xFFFFFFFF
        if r.int("snd_wnd") - in_flight < mss and r.int("snd_cwnd") * mss > r.int("snd_wnd"):
            n += 1
    return n
