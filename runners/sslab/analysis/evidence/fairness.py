"""E6's (fairness) evidence: how much sooner the flows recover their fair share with SUSS."""

from __future__ import annotations

import statistics
from pathlib import Path

from .base import LedgerError, Measured, NotThisArchive, cell_dirs, measured


def fairness_recovery_gain(archive: Path, buffer: str, incumbents: str = "cubic") -> Measured:
    """How much sooner fairness returns with SUSS (E6): the time to F >= 0.95 after the fifth flow's
    start, SUSS off less SUSS on, in seconds, the mean over the buffer's minRTTs; its CI over the
    repetitions.  A run never back within its observation counts as back at its end, which understates
    that arm's time (so a gain, when SUSS on never recovers, is overstated: said in the verdict's source)."""
    from ..archive import latest_plan
    from ..fairness import recoveries

    _, plan = latest_plan(archive)
    runs, _ = recoveries(archive, plan)
    mine = [r for r in runs if r["buffer"] == buffer and r["incumbents"] == incumbents]
    rtts = (plan.axis_values or {}).get("rtt", [])
    by: dict[tuple[str, int], dict] = {}
    censored = 0
    for r in mine:
        t = r["recovery_s"]
        if t is None:
            t, censored = r["observed_s"], censored + 1
        by.setdefault((r["rtt"], r["rep"]), {})[r["side"]] = t
    done = {rtt for (rtt, _), sides in by.items() if len(sides) == 2}
    if not rtts or not set(rtts) <= done:
        raise (LedgerError if done else NotThisArchive)(
            f"{archive}: {len(done)} of the {len(rtts)} minRTTs at {buffer} have both arms done; the claim is "
            f"over all of them (`make fairness BUF={buffer}`)")
    column = [[sides["off"] - sides["on"] for (rtt2, _), sides in sorted(by.items()) if rtt2 == rtt and len(sides) == 2]
              for rtt in rtts]
    k = min(len(c) for c in column)
    vals = [statistics.fmean(c[i] for c in column) for i in range(k)]
    note = f"; {censored} run(s) never back within the observation, counted as back at its end" if censored else ""
    return measured(vals, f"{archive}: {incumbents} incumbents at {buffer}, {len(rtts)} minRTTs{note}",
                    *cell_dirs(archive, buffer=buffer))
