"""Two Table 1 archives side by side: what changing one thing did, setting by setting.

`sslab matrix compare BASE OTHER` (issue 59's causes: the calibrated default against the same grid
with one thing changed, such as SENDER_QDISC=fq).  For every setting (large CCA, buffer, minRTT) both
archives ran, each quantity's mean in each and the difference OTHER - BASE with its 95 % confidence
interval (Welch, over the repetitions), and whether that interval excludes zero.  The quantities are
the ones the paper's remaining differences are in: the small flows' mean FCT with SUSS off and on,
the improvement, the large flow's change with SUSS, and the drops SUSS adds.  Each archive is read
with its own plan's FCT timing.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Callable

from ...analysis.archive import ArchiveError, current_cells, latest_plan
from ...analysis.stats import welch_diff
from .table1 import FIELD_VALUES, cells_by_setting, large_change_pct

#: (name, unit, digits, the value of one repetition): what is compared.
QUANTITIES: list[tuple[str, str, int, Callable[[dict], float]]] = [
    ("small flows, SUSS off", "s", 2, FIELD_VALUES["off_small"]),
    ("small flows, SUSS on", "s", 2, FIELD_VALUES["on_small"]),
    ("improvement", "pts", 1, FIELD_VALUES["improvement_pct"]),
    ("large flow, SUSS off", "s", 1, FIELD_VALUES["off_large"]),
    ("large flow's change with SUSS", "pts", 1, large_change_pct),
    ("drops SUSS adds", "pkts", 0, lambda r: r["on"]["drops"] - r["off"]["drops"]),
]


def repetitions(matrix_dir: Path) -> dict[tuple[str, str, str], list[dict]]:
    """Every done repetition with both arms of a Table 1 archive, by (large_cc, buffer, large_rtt)."""
    _, plan = latest_plan(matrix_dir)
    if plan.report != "table1":
        raise ArchiveError(f"{matrix_dir}: a {plan.report} matrix, not Table 1's")
    every = cells_by_setting(plan, current_cells(matrix_dir, plan))
    both = {key: [r for r in reps if "off" in r and "on" in r] for key, reps in every.items()}
    return {key: reps for key, reps in both.items() if reps}


def compare(base_dir: Path, other_dir: Path) -> tuple[str, list[dict]]:
    """The comparison's markdown table and its rows."""
    base, other = repetitions(base_dir), repetitions(other_dir)
    shared = [k for k in base if k in other]
    if not shared:
        raise ArchiveError(f"{base_dir} and {other_dir} have no setting in common with both arms done")
    lines = [f"Base: `{base_dir}`; other: `{other_dir}`.  Difference: other - base, with its 95 % CI (Welch).", "",
             "| setting | n base / other | quantity | base | other | difference [95 % CI] | CI excludes 0 |",
             "|---|---|---|---|---|---|---|"]
    rows = []
    for key in shared:
        a, b = base[key], other[key]
        for name, unit, digits, value in QUANTITIES:
            va, vb = [value(r) for r in a], [value(r) for r in b]
            d = welch_diff(va, vb)
            ci = d["ci95"]
            sig = None if ci is None else (ci[0] > 0 or ci[1] < 0)
            rows.append({"setting": list(key), "quantity": name, "unit": unit, "base": statistics.fmean(va),
                         "other": statistics.fmean(vb), "n": [len(va), len(vb)], **d, "excludes_zero": sig})
            f = f"{{:.{digits}f}}"
            ci_text = f"[{f.format(ci[0])}, {f.format(ci[1])}]" if ci else "(n < 2)"
            lines.append(f"| {' '.join(key)} | {len(va)} / {len(vb)} | {name} ({unit}) | {f.format(statistics.fmean(va))} | "
                         f"{f.format(statistics.fmean(vb))} | {d['diff']:+.{digits}f} {ci_text} | "
                         f"{'–' if sig is None else 'yes' if sig else 'no'} |")
    return "\n".join(lines), rows
