"""Table 1's (E7) evidence: the average improvement, the large flow's slowdown over a column and its
worst setting, from a Table 1 matrix archive."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Callable

from ....analysis.stats import describe
from ....analysis.evidence.base import LedgerError, Measured, NotThisArchive, Point, cell_dirs, extreme, measured


def _table1_columns(archive: Path, large_cc: str) -> list[list[dict]]:
    """The column @large_cc of a Table 1 archive, its settings on the paper's grid: each setting's
    repetitions with both arms."""
    return [reps for _, reps in _table1_settings(archive, large_cc)]


def _table1_settings(archive: Path, large_cc: str) -> list[tuple[tuple[str, str, str], list[dict]]]:
    """_table1_columns with each setting's (large_cc, buffer, large_rtt)."""
    from ....analysis.archive import latest_plan
    from ....analysis.settings_table import on_grid
    from ..table1_compare import repetitions

    _, plan = latest_plan(archive)
    reps = repetitions(archive)
    column = [((cca, buf, rtt), r) for (cca, buf, rtt), r in sorted(reps.items())
              if cca == large_cc and on_grid(plan.axis_values, {"large_cc": cca, "buffer": buf, "large_rtt": rtt})]
    grid = plan.axis_values or {}
    need = len(grid.get("buffer", [])) * len(grid.get("large_rtt", []))
    if not column or len(column) < need:
        # The paper's Average is over every buffer and minRTT of its table: so is ours.
        raise (LedgerError if column else NotThisArchive)(
            f"{archive}: {len(column)} of the {need} settings of {large_cc} on the paper's grid have both arms "
            f"done; the claim is over all of them")
    return column


def _per_repetition(column: list[list[dict]], value: Callable[[list[dict]], float]) -> list[float]:
    """@value of the column's k-th repetitions, one number per k up to the fewest any setting has."""
    k = min(len(reps) for reps in column)
    return [value([reps[i] for reps in column]) for i in range(k)]


def table1_average_improvement(archive: Path, large_cc: str) -> Measured:
    """The small flows' improvement over the column's settings, as the paper's Average row takes it:
    1 - (mean small FCT with SUSS) / (mean without), over the settings; its CI over repetitions."""
    column = _table1_columns(archive, large_cc)

    def improvement(row: list[dict]) -> float:
        on = statistics.fmean(r["on"]["small_mean_fct_s"] for r in row)
        off = statistics.fmean(r["off"]["small_mean_fct_s"] for r in row)
        return (1 - on / off) * 100

    vals = _per_repetition(column, improvement)
    return measured(vals, f"{archive}: {large_cc}, {len(column)} settings, improvement of the means per repetition",
                    *cell_dirs(archive, large_cc=large_cc))


def table1_large_slowdown(archive: Path, large_cc: str) -> Measured:
    """The large flow's FCT change with SUSS in percent (positive: slower), the mean over the
    column's settings; its CI over repetitions."""
    column = _table1_columns(archive, large_cc)
    from ..table1 import large_change_pct
    vals = _per_repetition(column, lambda row: statistics.fmean(large_change_pct(r) for r in row))
    return measured(vals, f"{archive}: {large_cc}, {len(column)} settings, the large flow's mean change per repetition",
                    *cell_dirs(archive, large_cc=large_cc))


def table1_large_worst_setting(archive: Path, large_cc: str) -> Measured:
    """The large flow's FCT change with SUSS in percent (positive: slower) in the setting where it is
    largest, over every setting of the columns @large_cc names (comma-separated), each setting's mean
    and 95 % CI over its repetitions.  The CI runs from the largest lower end to the largest upper end
    (least_improvement's mirror), so that `at_most` calls it reproduced only when every setting's CI
    lies at or below the bound, and not reproduced when any one lies wholly above it: a claim that
    holds of each setting ("without compromising"), which one slow setting in a fine mean fails."""
    from ..table1 import large_change_pct

    ccs = [x for x in large_cc.split(",") if x]
    points = [Point(" ".join(key), d["mean"], d["ci95"] and tuple(d["ci95"]), d["n"])
              for cc in ccs for key, d in ((k, describe([large_change_pct(r) for r in reps]))
                                           for k, reps in _table1_settings(archive, cc))]
    worst, ci = extreme(points, largest=True)
    slower = sum(1 for p in points if p.ci95 and p.ci95[0] > 0)
    cells, options = [], ""
    for cc in ccs:
        c, options = cell_dirs(archive, large_cc=cc)
        cells += c
    return Measured(worst.value, min(p.n for p in points), ci,
                    f"{archive}: {large_cc}, {len(points)} settings; the slowest, {worst.where}, {worst.value:+.2f} %; "
                    f"{slower} of them slower with SUSS beyond their CI", tuple(cells), options, tuple(points))
