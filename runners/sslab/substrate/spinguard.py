"""The UML kernel's spin guard, as the host sees it (images/uml/patches/0006-*; images/uml/README.md,
"The spin guard").

Under `time-travel=inf-cpu` a guest task that spins in user mode stops the guest's clock for good.
Our UML kernel charges such a task one tick of guest time for every 200 ms of host CPU it runs in user
mode without entering the kernel, and logs each charge on the console:

    spin guard: charged 4000000 ns to dockerd[812] at 1767225617201271000 (3)

(the tick, the task, the guest's wall clock in ns, the count since boot).  It leaves no other trace:
a run with no charge is the one its seed gives on any host; a run with charges depends on the host's
speed.  Here: whether an image's kernel has the guard, and the charges a console log records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: The patch that brings the guard (an image's manifest lists its kernel's patches).
PATCH = "0006-um-time-travel-a-task-spinning-in-user-mode-is-charged-time.patch"
#: The guard's interval: host CPU time in user mode (the kernel's default; the testbed's command
#: line leaves it, since Linux mixes its command line into the guest's random pool).
INTERVAL_MS = 200
_LINE = re.compile(r"spin guard: charged (\d+) ns to (.*)\[(\d+)\] at (\d+) \((\d+)\)")


@dataclass(frozen=True)
class Charge:
    tick_ns: int
    task: str
    pid: int
    at_ns: int        # the guest's wall clock
    count: int        # charges since boot, this one included


def guarded(image_facts: dict | None) -> bool:
    """Whether the UML kernel of an image (its manifest's facts, as meta.json's "image") has the guard."""
    return PATCH in (((image_facts or {}).get("uml") or {}).get("patches") or {})


def ran_guarded(meta: dict) -> bool:
    """Whether a job ran under the guard (@meta: its meta.json): on UML, with a kernel that has it."""
    return meta.get("substrate") == "uml" and guarded(meta.get("image"))


def charges(console: str) -> list[Charge]:
    """Every charge a console log records, in order."""
    return [Charge(int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5])) for m in _LINE.finditer(console)]


def console_charges(job_dir: Path) -> list[Charge]:
    """The charges of the UML boot that ran @job_dir (its uml/console.log; none without one)."""
    log = job_dir / "uml" / "console.log"
    return charges(log.read_text(errors="replace")) if log.exists() else []


def during(found: list[Charge], start_s: float, end_s: float) -> int:
    """How many of @found came between @start_s and @end_s (the guest's wall clock, s), ends included."""
    return sum(1 for c in found if start_s <= c.at_ns / 1e9 <= end_s)
