"""What a run takes: the generous guesses a job's timeout is made from, and what this host measured,
from which the expected times a command prints come.

After each scenario run (a series' part, a one-scenario experiment, a matrix cell's boot) the
host's wall time from the boot to the finished report is set against the guest seconds the scenario
was estimated to take (guest_seconds below: its flows and checks), and the ratio is kept per
substrate in the cache (timing/<substrate>.json, with the date and what ran).  An expected time is
that ratio times a scenario's estimate, and says so; with nothing measured yet it is the
substrate's generous guess (estimate_seconds below), and says that.  The ratio is this host's alone:
the cache is per machine, and machines of this project's kind differ by about 2x.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import paths
from ..records import Flow, Plan
from ..substrate.kinds import kind_of

#: Reading the per-ACK trace out of a TCG guest cost about this much per MB a
#: run moves (an E7 run, 174 MB, spent ~44 s past its last byte).
TRACE_S_PER_MB = 0.25
#: Wall time per guest second under UML with blocking traffic tools, capture
#: and traces (an upper end of what `make bench` measured), and the per-boot cost.
UML_WALL_PER_GUEST = 0.35
UML_BOOT_S = 3.0


def _longest(flows: list[Flow], rate_bps: float) -> float:
    """The seconds a run's flows take at most: a sized flow at the rate, with 30 % to spare."""
    return max((f.start + (f.duration or f.size * 8 / rate_bps * 1.3)) for f in flows)


def guest_seconds(plan: Plan) -> float:
    """A generous guess of the guest time a scenario's plan (scenario.to_plan) takes: its runs and the
    fidelity checks."""
    rate_bps = plan.bottleneck.rate_mbit * 1e6
    total = 30.0  # topology, RTT and rate checks
    for run in plan.runs:
        total += _longest(run.flows, rate_bps) + 3.0
    return total


def estimate_seconds(plan: Plan, substrate: str = "vm") -> float:
    """A generous guess of the wall time a scenario's plan takes on @substrate (for ETAs)."""
    if kind_of(substrate).virtual_time:
        return UML_BOOT_S + UML_WALL_PER_GUEST * guest_seconds(plan)
    rate_bps = plan.bottleneck.rate_mbit * 1e6
    per_run = 0.0
    for run in plan.runs:
        flows = run.flows
        moved_mb = sum((f.size or f.duration * rate_bps / 8 / len(flows)) for f in flows) / 1e6
        per_run += _longest(flows, rate_bps) + 9.0  # servers, captures under TCG
        if plan.capture.traces:
            per_run += TRACE_S_PER_MB * moved_mb
    return 60.0 + per_run


#: The newest runs a ratio is the mean of: enough to smooth a run that shared the cores with
#: another, few enough to follow the host as it is now.
KEEP = 8


def _path(substrate: str) -> Path:
    return paths.cache_dir() / "timing" / f"{substrate}.json"


def record(substrate: str, plans: list[Plan], wall_s: float) -> None:
    """One boot's measurement: @wall_s seconds for the scenarios of @plans (run in that boot) on @substrate."""
    estimated = sum(guest_seconds(p) for p in plans)
    if estimated <= 0 or wall_s <= 0:
        return
    path = _path(substrate)
    try:
        runs = json.loads(path.read_text())["runs"]
    except (OSError, ValueError, KeyError):
        runs = []
    runs = (runs + [{"wall_per_estimated_guest_s": round(wall_s / estimated, 4), "wall_s": round(wall_s, 1),
                     "scenario": plans[0].name, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]
            )[-KEEP:]
    # Two boots ending together (JOBS=2) each write a whole file; one of their two entries may be lost.
    paths.write_json_atomic(path, {"runs": runs})


def measured_ratio(substrate: str) -> tuple[float, str] | None:
    """This host's wall seconds per estimated guest second on @substrate (mean of its last runs), and
    the newest run's date; None when nothing was measured here."""
    try:
        runs = json.loads(_path(substrate).read_text())["runs"]
    except (OSError, ValueError, KeyError):
        return None
    ratios = [r["wall_per_estimated_guest_s"] for r in runs if r.get("wall_per_estimated_guest_s", 0) > 0]
    if not ratios:
        return None
    return sum(ratios) / len(ratios), runs[-1]["date"][:10]


def expected_seconds(plan: Plan, substrate: str) -> tuple[float, str]:
    """The wall time a scenario's @plan is expected to take on @substrate here, and where that number
    comes from."""
    measured = measured_ratio(substrate)
    if measured is None:
        return estimate_seconds(plan, substrate), "a generous guess: nothing measured on this host yet"
    ratio, date = measured
    return ratio * guest_seconds(plan), f"from this host's last runs, {date}"
