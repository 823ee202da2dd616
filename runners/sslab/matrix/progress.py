"""The controller's view of a running matrix: the whole matrix's count and ETA, and per host its
state (preparing, running a batch, idle, lost and why, done), its cells home and the cell it is
running.

The states come from the dealer (matrix.dealer.Dealer); the cell running comes from a host's
progress/<host>.json (matrix.cells.Progress) where that file can be read from here (a host on this
machine).  A block is printed whenever something changed, and otherwise every LOG_EVERY_S, so a
log (CI, a file, a pipe) stays short and still shows the run is alive; a terminal gets the same.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from .dealer import Dealer

#: Print a block at least this often (s) even when nothing changed.
LOG_EVERY_S = 120.0


def mmss(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


@dataclass
class HostState:
    host: str
    state: str
    done: int
    failed: int
    batches: int
    #: The batch out on the host: its number, its cells, since when (s).
    batch: int | None = None
    batch_cells: int = 0
    batch_for: float = 0.0
    #: The cell its runner says it is running (hosts on this machine only).
    running: str | None = None
    why_lost: str | None = None

    def line(self) -> str:
        text = f"  {self.host:<12} {self.state:<9} {self.done} cell(s) home"
        if self.failed:
            text += f", {self.failed} failed"
        if self.state == "running":
            text += f", batch {self.batch} ({self.batch_cells} cell(s), {mmss(self.batch_for)})"
            if self.running:
                text += f": {self.running}"
        if self.state == "lost":
            text += f": {self.why_lost}"
        return text


class ProgressBoard:
    """The matrix and its hosts, from the dealer and the progress files readable here."""

    def __init__(self, dealer: Dealer, files: dict[str, Path | None], total: int, est_cell_s: float,
                 preparing: set[str], console: Console | None = None):
        """@files: per host its progress file, None for a host elsewhere.  @total: cells to run in this
        invocation.  @preparing: hosts still being prepared (the caller empties it as they finish)."""
        self.dealer, self.files, self.total, self.est = dealer, files, total, est_cell_s
        self.preparing = preparing
        self.console = console or Console()
        self.t0 = time.time()
        self.last: list[tuple] = []
        self.last_print = 0.0

    def _running(self, host: str, since: float) -> str | None:
        f = self.files.get(host)
        if not f or not f.exists():
            return None
        try:
            st = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        return st.get("running") if st.get("updated", 0) >= since else None  # not an earlier batch's file

    def states(self, now: float | None = None) -> list[HostState]:
        now = time.time() if now is None else now
        out = []
        for name, rec in self.dealer.hosts.items():
            state = "preparing" if name in self.preparing and rec.state != "lost" else rec.state
            if state == "idle" and self.dealer.finished():
                state = "done"
            hs = HostState(name, state, rec.done, rec.failed, rec.batches, why_lost=rec.why_lost)
            if rec.batch is not None:
                hs.batch, hs.batch_cells = rec.batch.number, len(rec.batch.keys)
                hs.batch_for = now - rec.batch.started
                hs.running = self._running(name, rec.batch.started)
            out.append(hs)
        return out

    def eta_s(self, now: float | None = None) -> float:
        """Cells not home yet at this invocation's own pace (its wall time over the cells it brought
        home) once it has brought home as many as there are live slots, the first whole round; before
        that at the estimated time per cell (this host's last runs) spread over the slots."""
        now = time.time() if now is None else now
        ended = len(self.dealer.done) + len(self.dealer.failed)
        left = self.total - ended
        slots = sum(r.slots for r in self.dealer.hosts.values() if r.state != "lost")
        if not slots:
            return float("inf")
        if ended >= slots and now > self.t0:
            return left * (now - self.t0) / ended
        return left * self.est / slots

    def lines(self, now: float | None = None) -> list[str]:
        now = time.time() if now is None else now
        states = self.states(now)
        lost = sum(s.state == "lost" for s in states)
        home = len(self.dealer.done)
        head = f"matrix: {home}/{self.total} cells home"
        if self.dealer.failed:
            head += f", {len(self.dealer.failed)} failed"
        eta = self.eta_s(now)
        head += f", elapsed {mmss(now - self.t0)}, " + ("no live host" if eta == float("inf") else f"ETA {mmss(eta)}")
        head += f" ({len(states)} host(s)" + (f", {lost} lost)" if lost else ")")
        return [head] + [s.line() for s in states]

    def draw(self, force: bool = False) -> None:
        now = time.time()
        states = self.states(now)
        key = [(s.host, s.state, s.done, s.failed, s.batch, s.running) for s in states]
        if force or key != self.last or now - self.last_print > LOG_EVERY_S:
            self.console.print("\n".join(self.lines(now)), highlight=False, markup=False, soft_wrap=True)
            self.last, self.last_print = key, now
