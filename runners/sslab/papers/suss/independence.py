"""Whether a Table 1 setting's repetitions vary independently enough for a 95 % CI over them to mean
what it says.

A verdict holds our 95 % CI against the paper's band; the CI assumes repetitions that vary
independently.  Under virtual time a repetition is its seed's timeline, but repetitions that share a
boot (BOOT_SHARE=) run one after another in one guest, and a change of code that moves no byte of
the model can still move every timeline (the guest's clock reads and random draws fall elsewhere):
either could make repetitions move together, and their CI narrower than the spread between
timelines.

The check: one setting run many times (ITER=80), its repetitions in groups of @group in the order
they ran (a shared boot's ten, or any ten), and for each quantity:

    coverage   how many groups' 95 % CIs hold the mean of all the other repetitions.  With
               independent repetitions about 94 % of them for 8 groups of 10 (the others' mean
               is uncertain too: the CI's half-width against the spread of a difference of
               means, t(9) / sqrt(1 + 1/7) = 2.116 of its standard deviations); far fewer, and
               a group's CI says less than it claims.
    F          the spread of the group means against what the spread within the groups
               predicts: group * var(group means) / mean(var within a group), with its p-value
               (F with K - 1 and K (group - 1) degrees of freedom).  About 1 for independent
               repetitions; well above 1 when a group's repetitions move together.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from ...analysis.archive import current_cells, latest_plan
from ...analysis.stats import describe
from .table1 import FIELD_VALUES, large_change_pct, table1_cell

#: What is checked, by name: a value of one repetition (both arms).
QUANTITIES = {
    "small flows' FCT, SUSS off (s)": FIELD_VALUES["off_small"],
    "small flows' FCT, SUSS on (s)": FIELD_VALUES["on_small"],
    "improvement (%)": FIELD_VALUES["improvement_pct"],
    "large flow's FCT, SUSS off (s)": FIELD_VALUES["off_large"],
    "large flow's change with SUSS (%)": large_change_pct,
}


@dataclass(frozen=True)
class Check:
    """One quantity of one setting, its repetitions in groups."""
    quantity: str
    groups: int
    per_group: int
    covered: int           # groups whose CI holds the other repetitions' mean
    f: float | None        # None: no spread within the groups
    p: float | None

    def line(self) -> str:
        f = "–" if self.f is None else f"{self.f:.2f} (p = {self.p:.3g})"
        return (f"| {self.quantity} | {self.groups} x {self.per_group} | {self.covered} of {self.groups} | {f} |")


def check(values: list[float], group: int, quantity: str = "") -> Check:
    """@values (one a repetition, in the order they ran) in consecutive groups of @group (a last,
    shorter group left out): the coverage and F of the module docstring."""
    if group < 2:
        raise ValueError(f"groups of at least 2 repetitions, got {group}")
    k = len(values) // group
    if k < 2:
        raise ValueError(f"{len(values)} repetitions make {k} group(s) of {group}: at least 2 are needed")
    groups = [values[i * group:(i + 1) * group] for i in range(k)]
    covered = 0
    for i, g in enumerate(groups):
        rest = [v for j, h in enumerate(groups) if j != i for v in h]
        lo, hi = describe(g)["ci95"]
        covered += lo <= statistics.fmean(rest) <= hi
    means = [statistics.fmean(g) for g in groups]
    within = statistics.fmean(statistics.variance(g) for g in groups)
    if within == 0:
        return Check(quantity, k, group, covered, None, None)
    f = group * statistics.variance(means) / within
    from scipy.stats import f as f_dist
    return Check(quantity, k, group, covered, f, float(f_dist.sf(f, k - 1, k * (group - 1))))


def archive_checks(matrix_dir: Path, group: int) -> dict[tuple[str, str, str], list[Check]]:
    """Every setting of a Table 1 archive with at least two groups of @group repetitions (both arms
    done), its repetitions in the order they ran (their repetition numbers)."""
    _, plan = latest_plan(matrix_dir)
    by: dict[tuple[str, str, str], list[tuple[int, dict]]] = {}
    for cell, cdir in current_cells(matrix_dir, plan):
        s = cell.setting
        rep = table1_cell(plan, cdir)
        if "off" in rep and "on" in rep:
            by.setdefault((s["large_cc"], s["buffer"], s["large_rtt"]), []).append((cell.rep, rep))
    out = {}
    for key, reps in by.items():
        ordered = [r for _, r in sorted(reps, key=lambda x: x[0])]
        if len(ordered) >= 2 * group:
            out[key] = [check([value(r) for r in ordered], group, name) for name, value in QUANTITIES.items()]
    return out


def report_md(matrix_dir: Path, group: int) -> str:
    checks = archive_checks(matrix_dir, group)
    if not checks:
        return f"No setting of {matrix_dir} has two groups of {group} repetitions with both arms done."
    lines = [f"Repetitions of {matrix_dir} in groups of {group}, in the order they ran.  Coverage: the groups whose "
             f"95 % CI holds the mean of all the other repetitions (independent repetitions: about 94 % for 8 "
             f"groups of 10).  F: {group} x the variance of the group means over the mean variance within a group "
             f"(about 1 for independent repetitions), its p-value.", ""]
    for key, rows in checks.items():
        lines += [f"**{' '.join(key)}**", "", "| quantity | groups | coverage | F |", "|---|---|---|---|",
                  *[c.line() for c in rows], ""]
    return "\n".join(lines)
