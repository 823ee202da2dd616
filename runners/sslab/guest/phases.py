"""Phase marks on the console, so the host can time a job's parts in wall-clock time.

A line `SSLAB-PHASE <label> uptime=<guest seconds>` goes to /dev/console; the
host's copy of the console stamps each line with its own clock, so the log
shows where wall time went (topology, each run, trace read-out) against guest
time.  Writing a line costs nothing measurable; without a console (a native
host) the mark is skipped.
"""

from __future__ import annotations

import time


def mark(label: str) -> None:
    try:
        with open("/dev/console", "w") as console:
            console.write(f"SSLAB-PHASE {label} uptime={time.monotonic():.3f}\n")
    except OSError:
        pass
