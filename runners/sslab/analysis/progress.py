"""What a report says while it works: a line a stage, and how far a long reading is.

A report over a large archive takes minutes (Table 1's at 320 cells: its cells' records, its first
repetitions' captures, its figures and pages), and it is written after the last cell, where a user
waits for it.  Each stage that took long enough to notice says so when it ends, and a reading of many
things says how far it is and about how long is left, every tenth of the way.  What is quick says
nothing: a report rebuilt from what this process has already read prints no line.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

#: A stage or a reading that has taken this long says so: a first reading of a cell's records or a
#: capture takes seconds; a second reading, from what the process holds, well under one.
PROGRESS_AFTER_S = 2.0


class Reading:
    """A reading of @total things (@what: "cells", "captures"): step() after each one prints
    "report: read 32 of 320 cells (4 s, about 36 s left)" every tenth of them once PROGRESS_AFTER_S has
    passed; a reading of fewer than @at_least says nothing."""

    def __init__(self, total: int, what: str, at_least: int = 20) -> None:
        self.total, self.what, self.at_least = total, what, at_least
        self.done, self.t0 = 0, time.monotonic()
        self.every = max(1, total // 10)

    def step(self) -> None:
        self.done += 1
        took = time.monotonic() - self.t0
        if self.total < self.at_least or took < PROGRESS_AFTER_S:
            return
        if self.done % self.every and self.done != self.total:
            return
        left = took / self.done * (self.total - self.done)
        tail = f", about {left:.0f} s left" if self.done < self.total else ""
        print(f"report: read {self.done} of {self.total} {self.what} ({took:.0f} s{tail})", flush=True)


@contextmanager
def stage(what: str) -> Iterator[None]:
    """A stage of a report (@what: "the tables and their claims"): "report: <what> (12 s)" when it ends,
    if it took PROGRESS_AFTER_S or more."""
    t0 = time.monotonic()
    yield
    took = time.monotonic() - t0
    if took >= PROGRESS_AFTER_S:
        print(f"report: {what} ({took:.0f} s)", flush=True)
