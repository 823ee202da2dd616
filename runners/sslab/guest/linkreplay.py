"""Replay a rate trace onto the bottleneck, and record what the link did against it.

The plan's link (sslab.scenario.load.link_plan) carries the trace as one
rate per bin.  At every bin boundary this thread changes the bottleneck's HTB
class to the bin's rate and reads the bottleneck's counters, through one
long-lived `tc -batch` (a process per change would cost 15-40 ms of wall time
each under UML).  Under virtual time the thread wakes at each boundary
exactly; on a real clock it may wake late, and each row records when it
actually changed the rate.

The record, one row per boundary: [seconds since the run's t0, the rate set
(Mbit/s), bytes the bottleneck has sent, frames queued, frames dropped]
(counters cumulative).  The host compares the bytes sent in each bin with
what the trace allowed (sslab.analysis.link).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time

from ..records import Trace
from .netns import end_batch


class TraceReplay(threading.Thread):
    def __init__(self, ns: str, dev: str, trace: Trace, offset_s: float, t0: float, burst_bytes: int):
        """@burst_bytes: the HTB burst, as the wired shaper's (Dumbbell.burst_bytes)."""
        super().__init__(daemon=True)
        self.ns, self.dev, self.trace, self.t0 = ns, dev, trace, t0
        self.burst_bytes = burst_bytes
        self.offset_s = offset_s
        self.rows: list[list[float]] = []
        self.halt = threading.Event()
        self.error: str | None = None
        self.proc = subprocess.Popen(["stdbuf", "-oL", "tc", "-n", ns, "-s", "-j", "-batch", "-"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)

    def _bins(self):
        """(bin index, its length in s) from the offset on, forever (the trace repeats)."""
        rates, bin_ms, period = self.trace.rates_mbit, self.trace.bin_ms, self.trace.period_ms
        k = int(round(self.offset_s * 1e3) % period // bin_ms)
        while True:
            yield k, min(bin_ms, period - k * bin_ms) / 1e3
            k = (k + 1) % len(rates)

    def _set_and_read(self, rate_mbit: float) -> dict:
        r = f"{rate_mbit:.6f}mbit"
        self.proc.stdin.write(f"class change dev {self.dev} parent 1: classid 1:1 htb rate {r} ceil {r} "
                              f"burst {self.burst_bytes} cburst {self.burst_bytes}\n"
                              f"qdisc show dev {self.dev}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"tc -batch ended: {self.proc.stderr.read()[-300:]}")
        qdiscs = json.loads(line)
        htb = next(q for q in qdiscs if q.get("kind") == "htb")
        fifo = next(q for q in qdiscs if q.get("kind") == "pfifo")
        return {"bytes": htb.get("bytes", 0), "qlen": fifo.get("qlen", 0), "drops": fifo.get("drops", 0)}

    def prime(self) -> None:
        """Set the first bin's rate before any traffic (call before t0)."""
        k, _ = next(self._bins())
        self._set_and_read(self.trace.rates_mbit[k])

    def run(self) -> None:
        rates = self.trace.rates_mbit
        due = self.t0
        try:
            for k, length in self._bins():
                wait = due - time.monotonic()
                if wait > 0 and self.halt.wait(wait):
                    break
                if self.halt.is_set():
                    break
                c = self._set_and_read(rates[k])
                self.rows.append([round(time.monotonic() - self.t0, 6), rates[k], c["bytes"], c["qlen"], c["drops"]])
                due += length
        except Exception as e:  # noqa: BLE001 - recorded; the host flags the run
            self.error = repr(e)

    def stop(self) -> dict:
        self.halt.set()
        self.join(timeout=10)
        end_batch(self.proc)
        return {"offset_s": self.offset_s, "bin_ms": self.trace.bin_ms,
                "columns": ["t_s", "rate_mbit", "sent_bytes", "queued_pkts", "drops"],
                "rows": self.rows, "error": self.error}


class DelayReplay(threading.Thread):
    """The link model's delay variation, replayed onto every client's line during a run: at each bin
    boundary from the run's t0, each pair's line towards its client is changed to its base delay plus
    the bin's extra (sslab.scenario.model.DelayVariation), through one long-lived `tc -batch` in the
    namespace of those lines; the base delay again when the run ends.  Rows: [seconds since t0, the
    extra set (ms)]."""

    def __init__(self, db, extra_ms: list[float], bin_ms: int, t0: float):
        super().__init__(daemon=True)
        self.db, self.extra_ms, self.bin_s, self.t0 = db, extra_ms, bin_ms / 1e3, t0
        self.rows: list[list[float]] = []
        self.halt = threading.Event()
        self.error: str | None = None
        ns = {db.toward_client(i)[0] for i in range(1, len(db.plan.pairs) + 1)}
        if len(ns) != 1:
            raise ValueError(f"the clients' lines are in several namespaces: {sorted(map(str, ns))}")
        (self.ns,) = ns
        self.proc = subprocess.Popen(["tc", *(["-n", self.ns] if self.ns else []), "-batch", "-"],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)

    def _set(self, extra: float) -> None:
        lines = [f"qdisc change dev {self.db.toward_client(i)[1]} root handle 1: "
                 f"{self.db._delay_line(i, 'client', extra)}\n" for i in range(1, len(self.db.plan.pairs) + 1)]
        self.proc.stdin.write("".join(lines))
        self.proc.stdin.flush()

    def run(self) -> None:
        due = self.t0
        try:
            k = 0
            while True:
                wait = due - time.monotonic()
                if wait > 0 and self.halt.wait(wait):
                    break
                if self.halt.is_set():
                    break
                extra = self.extra_ms[k % len(self.extra_ms)]
                self._set(extra)
                self.rows.append([round(time.monotonic() - self.t0, 6), extra])
                k += 1
                due += self.bin_s
        except Exception as e:  # noqa: BLE001 - recorded; the host flags the run
            self.error = repr(e)

    def stop(self) -> dict:
        self.halt.set()
        self.join(timeout=10)
        try:
            self._set(0.0)  # the base delay again, for the next run's pings
        except Exception as e:  # noqa: BLE001
            self.error = self.error or repr(e)
        end_batch(self.proc)
        return {"bin_ms": round(self.bin_s * 1e3), "columns": ["t_s", "extra_ms"], "rows": self.rows,
                "error": self.error}

