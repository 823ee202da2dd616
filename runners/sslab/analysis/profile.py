"""Where a cell's wall time goes: its job's phases, read from the console, and the host's share.

A job marks its phases on the console (guest/phases.py: `SSLAB-PHASE <label>
uptime=<guest s>`, and init's `SSLAB:<event>` lines), and the host stamps
every console line with its own clock (`console.log.times`: wall seconds
since the substrate started, then the line).  A cell's `cell.json` has its
wall time and its job's (`substrate_s`), and `meta.json` the host's trace
read-out (`host_trace_seconds`).  Between two marks the time belongs to the
phase the first one opened:

    start ──> userspace ──> topology ──> fidelity ──> run <tag> ──> flow traffic
    │  boot       init        topology    fidelity     run set-up    traffic
    │                                                   ▲                │
    │                                                   └── run end <────┘ flow traffic-done
    └──> ... teardown ──> poweroff                           (capture drain, run.json)

The fidelity check's own saturating flow (`saturate traffic` ...) counts
to fidelity.  What is left of the cell's wall time after its job and the
trace read-out is the host's other work: the matrix runner, the report,
the manifest (a shared boot's, found for the boot and shared out).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

#: The phases, in the order a table lists them.
JOB_PHASES = ("boot", "init", "topology", "fidelity", "run set-up", "traffic", "run end", "teardown")
HOST_PHASES = ("host: trace read-out", "host: runner, report, manifest")

_LINE = re.compile(r"^\s*(?P<wall>\d+(?:\.\d+)?) (?P<text>.*)$")
_UPTIME = re.compile(r"uptime=(?P<up>\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Mark:
    wall_s: float
    label: str
    #: Guest seconds (the guest's monotonic clock) when the mark was written.
    guest_s: float | None


def parse_console_times(text: str) -> list[Mark]:
    """The phase marks of a `console.log.times`, in order; other console lines are skipped."""
    marks = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        body = m["text"]
        if body.startswith("SSLAB-PHASE "):
            label = body[len("SSLAB-PHASE "):]
        elif body.startswith("SSLAB:"):
            label = body[len("SSLAB:"):]
        else:
            continue
        up = _UPTIME.search(label)
        label = _UPTIME.sub("", label).strip()
        marks.append(Mark(float(m["wall"]), label, float(up["up"]) if up else None))
    return marks


def phase_of(label: str, current: str) -> str:
    """The phase a mark with @label opens, @current being the phase open before it."""
    word = label.split()[0]
    if word == "userspace":
        return "init"
    if word in ("shares-mounted", "agent-exit", "poweroff", "no-job"):
        return current  # init goes on; the end of teardown
    if word in ("topology", "fidelity", "teardown"):
        return word
    if word == "saturate":
        return "fidelity"
    if word in ("run", "cell"):  # "cell NN": the next repetition of a shared boot begins
        return "run set-up"
    if label == "flow traffic":
        return "traffic"
    if label in ("flow traffic-done", "flow captured"):
        return "run end"
    raise ValueError(f"unknown phase mark {label!r}")


def job_phases(marks: list[Mark], end_wall_s: float | None = None) -> dict[str, dict[str, float]]:
    """Wall and guest seconds per phase of one job.  Time before the first mark is the boot; the
    last phase ends at @end_wall_s (the job's wall time) or, without it, at the last mark."""
    out = {p: {"wall_s": 0.0, "guest_s": 0.0} for p in JOB_PHASES}
    if not marks:
        return out
    out["boot"]["wall_s"] = marks[0].wall_s
    current = "boot"
    for this, nxt in zip(marks, marks[1:] + [None]):
        current = phase_of(this.label, current)
        until = nxt.wall_s if nxt else (end_wall_s if end_wall_s is not None else this.wall_s)
        out[current]["wall_s"] += max(until - this.wall_s, 0.0)
        if nxt and this.guest_s is not None and nxt.guest_s is not None:
            out[current]["guest_s"] += nxt.guest_s - this.guest_s
    return out


def cell_profile(cell_dir: Path) -> dict[str, dict[str, float]]:
    """One matrix cell's wall time by phase (job phases and the host's), from its records."""
    cell = json.loads((cell_dir / "cell.json").read_text())
    meta = json.loads((cell_dir / "meta.json").read_text())
    times = next((cell_dir / "job").glob("*/console.log.times"), None)
    if times is None:
        raise FileNotFoundError(f"{cell_dir}: no console.log.times (a cell from before phase marks?)")
    boot = cell.get("boot") or {}
    if boot.get("cells"):
        # A shared boot's phases, shared out evenly among its cells (as its wall_s is).
        n = len(boot["cells"])
        phases = {k: {f: v / n for f, v in p.items()}
                  for k, p in job_phases(parse_console_times(times.read_text()), boot.get("substrate_s")).items()}
    else:
        phases = job_phases(parse_console_times(times.read_text()), cell.get("substrate_s"))
    trace = meta.get("host_trace_seconds") or 0.0
    phases["host: trace read-out"] = {"wall_s": trace, "guest_s": 0.0}
    phases["host: runner, report, manifest"] = {"wall_s": _host_other_s(cell_dir, cell, trace), "guest_s": 0.0}
    return phases


def _host_other_s(cell_dir: Path, cell: dict, trace_s: float) -> float:
    """The host's other work a cell accounts for: its wall time less its job's and its trace read-out.

    A shared boot's wall and job times are shared out evenly among its cells, but each cell's
    read-out is its own (a cell whose captures tshark checks takes ten times the others'), so the
    boot's other work is found for the boot as a whole, from every cell's read-out, then shared
    out.  (Cell by cell, a checked cell's read-out exceeded its share of the boot and a floor at 0
    hid the excess: Table 1 at ITER=10 showed 1.1 s a cell where the boots spent 0.27 s.)  When a
    cell of the boot is not beside this one, this cell's own figures are all there is."""
    boot = cell.get("boot") or {}
    keys = boot.get("cells") or []
    metas = [cell_dir.parent / k / "meta.json" for k in keys]
    if keys and boot.get("wall_s") is not None and boot.get("substrate_s") is not None \
            and all(m.is_file() for m in metas):
        traces = sum(json.loads(m.read_text()).get("host_trace_seconds") or 0.0 for m in metas)
        return max(boot["wall_s"] - boot["substrate_s"] - traces, 0.0) / len(keys)
    return max(cell["wall_s"] - (cell.get("substrate_s") or 0.0) - trace_s, 0.0)


def mean_profile(profiles: list[dict[str, dict[str, float]]], what: str = "wall_s") -> dict[str, float]:
    """Each phase's mean @what ("wall_s" or "guest_s") per cell over @profiles (cell_profile's)."""
    return {phase: sum(p[phase][what] for p in profiles) / len(profiles) for phase in JOB_PHASES + HOST_PHASES}


def profile_table(profiles: list[dict[str, dict[str, float]]]) -> str:
    """Markdown: mean wall seconds per cell by phase, its share, guest seconds and wall per guest."""
    n = len(profiles)
    if n == 0:
        return "(no cells)"
    rows = []
    walls, guests = mean_profile(profiles), mean_profile(profiles, "guest_s")
    total = sum(walls.values())
    lines = [f"Mean over {n} cell(s): {total:.1f} s of wall time per cell.", "",
             "| phase | wall s / cell | share | guest s / cell | wall / guest |", "|---|---|---|---|---|"]
    for phase in JOB_PHASES + HOST_PHASES:
        wall, guest = walls[phase], guests[phase]
        ratio = f"{wall / guest:.3f}" if guest > 0.05 else "–"
        rows.append(f"| {phase} | {wall:.2f} | {wall / total:.0%} | {guest:.2f} | {ratio} |")
    return "\n".join(lines + rows)
