"""The controller's view of a running matrix: per host, cells finished of those dealt,
the cell running, and an ETA.

Each host's runner writes progress/<host>.json (matrix.cells.Progress); the
board only reads those files.  On a terminal it is a rich.progress display,
one task per host plus the whole matrix; in a log (CI, a file, a pipe) it
prints a plain block whenever a host's count changes, and otherwise every
two minutes, so a log stays short and still shows the run is alive.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

#: In a log, print a block at least this often (s) even when nothing finished.
LOG_EVERY_S = 120.0


def mmss(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


@dataclass
class HostState:
    host: str
    total: int
    finished: int = 0
    failed: int = 0
    #: The cell being run, and for how long (s).
    running: str | None = None
    running_for: float = 0.0
    eta_s: float | None = None
    #: No progress file can be read from here (a remote host): results arrive when it finishes.
    remote: bool = False
    started: bool = False
    done: bool = False

    def status(self) -> str:
        if self.remote:
            return "remote: results arrive when it finishes"
        parts = [] if self.started else ["preparing"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.running:
            parts.append(f"running {self.running} ({mmss(self.running_for)})")
        if not self.done and self.eta_s is not None:
            parts.append(f"ETA {mmss(self.eta_s)}")
        return ", ".join(parts)


class ProgressBoard:
    """Per-host progress with ETA, from the hosts' progress files (None: a remote host)."""

    WIDTH = 24

    def __init__(self, files: dict[str, Path | None], dealt: dict[str, list[str]], est_cell_s: float,
                 console: Console | None = None):
        self.files, self.dealt, self.est = files, dealt, est_cell_s
        self.console = console or Console()
        self.tty = self.console.is_terminal
        self.t0 = time.time()
        self.last_counts: list[tuple] = []
        self.last_print = 0.0
        self.live: Progress | None = None
        self.tasks: dict[str, int] = {}

    def _read(self, host: str) -> dict | None:
        f = self.files.get(host)
        if not f or not f.exists():
            return None
        try:
            st = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        return st if st.get("updated", 0) >= self.t0 - 5 else None  # not a previous invocation's file

    def states(self, now: float | None = None) -> list[HostState]:
        now = time.time() if now is None else now
        out = []
        for host, keys in self.dealt.items():
            hs = HostState(host, len(keys), remote=self.files.get(host) is None)
            st = None if hs.remote else self._read(host)
            if st is None:
                if not hs.remote:
                    hs.eta_s = hs.total * self.est
                out.append(hs)
                continue
            hs.started, hs.done = True, bool(st.get("finished"))
            hs.finished = st["done"] + st["skipped"] + st["failed"]
            hs.failed = st["failed"]
            per = statistics.fmean(st["cell_seconds"]) if st["cell_seconds"] else self.est
            if st.get("running"):
                hs.running = st["running"]
                hs.running_for = now - (st.get("running_since") or now)
            hs.eta_s = 0.0 if hs.done else max(0.0, (hs.total - hs.finished) * per - hs.running_for)
            out.append(hs)
        return out

    def summary(self, states: list[HostState], now: float) -> str:
        done = sum(s.finished for s in states)
        total = sum(s.total for s in states)
        eta = max((s.eta_s for s in states if s.eta_s is not None), default=0.0)
        return f"matrix: {done}/{total} cells, elapsed {mmss(now - self.t0)}, ETA {mmss(eta)}"

    def lines(self, now: float | None = None) -> list[str]:
        """The board as plain text (a log's view)."""
        now = time.time() if now is None else now
        states = self.states(now)
        out = [self.summary(states, now)]
        for s in states:
            if s.remote:
                out.append(f"  {s.host:<12} {s.total} cells ({s.status()})")
                continue
            fill = int(self.WIDTH * s.finished / s.total) if s.total else self.WIDTH
            status = s.status()
            out.append(f"  {s.host:<12} [{'#' * fill}{'.' * (self.WIDTH - fill)}] {s.finished}/{s.total}"
                       f"{', ' + status if status else ''}")
        return out

    # -- drawing --------------------------------------------------------

    def start(self) -> None:
        if not self.tty:
            return
        self.live = Progress(TextColumn("{task.description:<14}"), BarColumn(bar_width=self.WIDTH),
                             MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                             console=self.console, auto_refresh=False)
        self.tasks["*"] = self.live.add_task("matrix", total=sum(len(k) for k in self.dealt.values()), status="")
        for host, keys in self.dealt.items():
            self.tasks[host] = self.live.add_task(f"  {host}", total=len(keys), status="")
        self.live.start()

    def draw(self, force: bool = False) -> None:
        now = time.time()
        states = self.states(now)
        if self.live is not None:
            for s in states:
                self.live.update(self.tasks[s.host], completed=s.finished, status=s.status())
            self.live.update(self.tasks["*"], completed=sum(s.finished for s in states),
                             status=self.summary(states, now).split(", ", 1)[1])
            self.live.refresh()
            return
        counts = [(s.host, s.finished, s.failed, s.running) for s in states]
        if force or counts != self.last_counts or now - self.last_print > LOG_EVERY_S:
            self.console.print("\n".join(self.lines(now)), highlight=False, markup=False, soft_wrap=True)
            self.last_counts, self.last_print = counts, now

    def stop(self) -> None:
        """The final state: drawn once more (a log gets it whatever changed), then the display ends."""
        self.draw(force=True)
        if self.live is not None:
            self.live.stop()
            self.live = None
