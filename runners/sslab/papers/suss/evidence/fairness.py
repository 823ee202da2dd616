"""E6's (fairness) evidence: how much sooner the flows recover their fair share with SUSS."""

from __future__ import annotations

import statistics
from pathlib import Path

from ....analysis.evidence.base import LedgerError, Measured, NotThisArchive, cell_dirs, measured


def fairness_recovery_gain(archive: Path, buffer: str, incumbents: str = "cubic") -> Measured:
    """How much sooner fairness returns with SUSS (E6): the time to F >= 0.95 after the fifth flow's
    start, SUSS off less SUSS on, in seconds, the mean over the buffer's minRTTs; its CI over the
    repetitions.  A run never back within its observation counts as back at its end, which understates
    that arm's time (so a gain, when SUSS on never recovers, is overstated: said in the verdict's source)."""
    from ....analysis.archive import latest_plan
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


def fairness_gain_trend(archive: Path, along: str, incumbents: str = "cubic") -> Measured:
    """Whether the sooner return grows along an axis of E6 (§6.4: the effect "more pronounced" with
    longer minRTTs and larger buffers): per repetition, how much sooner F returns with SUSS (off less on,
    in seconds) at the axis's last value less at its first (@along "buffer": 2 BDP less 1 BDP; "rtt":
    the longest minRTT less the shortest), each the mean over the other axis's values; its CI over the
    repetitions.  Runs never back within the observation count as back at its end, as for the gain."""
    from ....analysis.archive import latest_plan
    from ..fairness import recoveries

    if along not in ("buffer", "rtt"):
        raise ValueError(f"along: buffer or rtt, not {along!r}")
    across = "rtt" if along == "buffer" else "buffer"
    _, plan = latest_plan(archive)
    axes = plan.axis_values or {}
    ends, others = axes.get(along, []), axes.get(across, [])
    runs, _ = recoveries(archive, plan)
    by: dict[tuple[str, str, int], dict] = {}
    censored = 0
    for r in runs:
        if r["incumbents"] != incumbents:
            continue
        t = r["recovery_s"]
        if t is None:
            t, censored = r["observed_s"], censored + 1
        by.setdefault((r[along], r[across], r["rep"]), {})[r["side"]] = t
    needed = [(end, other) for end in (ends[:1] + ends[-1:]) for other in others] if len(ends) > 1 else []
    done = {(a, b) for (a, b, _), sides in by.items() if len(sides) == 2}
    if not needed or not set(needed) <= done:
        # An archive of other settings (a selection without one of the ends) is not this claim's; one
        # with both ends but not every setting at them is an archive that has not finished.
        both_ends = len(ends) > 1 and {ends[0], ends[-1]} <= {a for a, _ in done}
        raise (LedgerError if both_ends else NotThisArchive)(
            f"{archive}: {len(set(needed) & done)} of the {len(needed)} settings at the {along} axis's ends have "
            f"both arms done; the claim is over all of them (`make fairness`)")
    reps = sorted({rep for (_, _, rep), sides in by.items() if len(sides) == 2})

    def gain(end: str, rep: int) -> float | None:
        sides = [by.get((end, other, rep), {}) for other in others]
        if any(len(s) < 2 for s in sides):
            return None
        return statistics.fmean(s["off"] - s["on"] for s in sides)

    vals = [hi - lo for rep in reps
            if (lo := gain(ends[0], rep)) is not None and (hi := gain(ends[-1], rep)) is not None]
    note = f"; {censored} run(s) never back within the observation, counted as back at its end" if censored else ""
    return measured(vals, f"{archive}: {incumbents} incumbents, the gain at {along} {ends[-1]} less at {ends[0]}, "
                          f"each over {len(others)} {across} values{note}", *cell_dirs(archive))
