"""Two sets of results side by side: `make compare A=dir B=dir` (before and after a patch, two
kernels, ours and a researcher's start).

Each side is read as its tidy table (sslab.analysis.tidy: a row per flow per run; a report's
flows.csv, a results directory's latest report's, or a run's archive).  Flows are grouped by what
makes them the same flow on both sides: the scenario's settings (a matrix's axes, the case's
parameters), the control, and the flow's size; each group's metric is set B against A:

    A, B        mean ±half-width of its 95 % CI (Student t) and n
    B - A       the difference of the means with its 95 % CI (Welch: unequal variances)
    verdict     "B lower" / "B higher" when that CI excludes 0 (beyond the CIs), "same within the
                CIs" when it holds 0, "n = 1" when a side ran once (no CI: nothing is claimed)

Groups one side lacks are listed, not compared.  The report (report.md, its page, compare.csv
with every group's numbers and a plot of both sides' means) goes to results/compare/<stamp>/.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..records import stamped
from .stats import describe, welch_diff

#: The metrics compared, with their unit and the table's heading.
METRICS = {"fct_s": ("s", "FCT (client)"), "server_fct_s": ("s", "FCT (server)"),
           "exit_cwnd": ("packets", "slow-start exit cwnd")}


class CompareError(ValueError):
    """A comparison that cannot be made (named with why): refused before anything is written."""


def _number(v) -> float | None:
    if v is None or v == "":
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def candidate_columns(rows: list[dict]) -> list[str]:
    """The columns that can tell flows apart: every axis_ and param_ column, the control, the size
    and the pair's RTT."""
    keys = sorted({k for r in rows for k in r if k.startswith(("axis_", "param_"))})
    return keys + [k for k in ("cc", "size_bytes", "rtt_ms") if any(k in r for r in rows)]


def split_columns(a_rows: list[dict], b_rows: list[dict]) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """The columns flows are grouped by, and those that are what is compared: one value throughout A,
    another throughout B (two starts: `cc`; two RTTs: `rtt_ms`), with the two values.  A column with
    one value on both sides adds nothing."""
    group, differ = [], {}
    for k in candidate_columns(a_rows + b_rows):
        va, vb = ({str(r.get(k, "")) for r in rows} for rows in (a_rows, b_rows))
        if len(va) == 1 and len(vb) == 1 and va != vb:
            differ[k] = (va.pop(), vb.pop())
        elif len(va | vb) > 1:
            group.append(k)
    return group, differ  # no column: every flow of a side is one group


def group_of(row: dict, columns: list[str]) -> tuple[str, ...]:
    return tuple("" if row.get(k) in (None, "") else str(row[k]) for k in columns)


@dataclass
class GroupComparison:
    group: tuple[str, ...]
    metric: str
    a: dict
    b: dict
    diff: dict

    @property
    def verdict(self) -> str:
        if self.a["n"] == 0 or self.b["n"] == 0:
            return "not measured"
        ci = self.diff.get("ci95")
        if ci is None:
            return "n = 1 (no CI)"
        if ci[0] > 0:
            return "B higher, beyond the CIs"
        if ci[1] < 0:
            return "B lower, beyond the CIs"
        return "same within the CIs"


def compare_rows(a_rows: list[dict], b_rows: list[dict]) -> tuple[list[str], list[GroupComparison], dict]:
    """Group both sides' flows alike and set each group's metrics B against A; also which groups
    one side lacks ("a", "b") and what differs between the sides throughout ("differ")."""
    if not a_rows or not b_rows:
        raise CompareError(f"side {'A' if not a_rows else 'B'} has no flows")
    columns, differ = split_columns(a_rows, b_rows)
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for side, rows in (("a", a_rows), ("b", b_rows)):
        for r in rows:
            groups.setdefault(group_of(r, columns), {"a": [], "b": []})[side].append(r)
    out = []
    only: dict = {"a": [], "b": [], "differ": differ}
    for g in sorted(groups, key=lambda g: tuple((0, float(x)) if _number(x) is not None else (1, x) for x in g)):
        sides = groups[g]
        if not sides["a"] or not sides["b"]:
            only["a" if sides["a"] else "b"].append(g)
            continue
        for metric in METRICS:
            va = [v for r in sides["a"] if (v := _number(r.get(metric))) is not None]
            vb = [v for r in sides["b"] if (v := _number(r.get(metric))) is not None]
            if not va and not vb:
                continue
            out.append(GroupComparison(g, metric, describe(va), describe(vb), welch_diff(va, vb)))
    return columns, out, only


def _fmt(d: dict, digits: int) -> str:
    if not d["n"]:
        return "–"
    if d["ci95"]:
        return f"{d['mean']:.{digits}f} ±{(d['ci95'][1] - d['ci95'][0]) / 2:.{digits}f} (n={d['n']})"
    return f"{d['mean']:.{digits}f} (n={d['n']})"


def _fmt_diff(d: dict, digits: int) -> str:
    if d["diff"] is None:
        return "–"
    ci = d["ci95"]
    return f"{d['diff']:+.{digits}f}" + (f" [{ci[0]:+.{digits}f}, {ci[1]:+.{digits}f}]" if ci else "")


def report_lines(a: str, b: str, columns: list[str], found: list[GroupComparison], only: dict) -> list[str]:
    """The comparison as markdown: a table per metric, a group a row; the verdicts counted."""
    counts: dict[str, int] = {}
    for c in found:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    lines = [f"# Compare: A = {a}, B = {b}", "",
             "**" + "; ".join(f"{n} {v}" for v, n in sorted(counts.items())) + f"** of {len(found)} comparisons.", "",
             ("Flows are grouped by " + ", ".join(f"`{c}`" for c in columns) if columns else
              "Every flow of a side is one group") + "; each side's mean ±half-width of its "
             "95 % CI (Student t), B − A with its 95 % CI (Welch).  A difference is beyond the CIs when its CI "
             "excludes 0; a side that ran once has no CI, and nothing is claimed.", ""]
    if only["differ"]:
        lines += ["What differs between the sides throughout (not grouped by): " + "; ".join(
            f"`{k}` A {a_v}, B {b_v}" for k, (a_v, b_v) in only["differ"].items()) + ".", ""]
    for metric, (unit, heading) in METRICS.items():
        rows = [c for c in found if c.metric == metric]
        if not rows:
            continue
        digits = 0 if unit == "packets" else 3
        lines += [f"## {heading} ({unit})", "",
                  "| " + "".join(f"{k} | " for k in columns) + "A | B | B − A [95 % CI] | verdict |",
                  "|" + "---|" * (len(columns) + 4)]
        for c in rows:
            mark = "**" if "beyond" in c.verdict else ""
            lines.append("| " + "".join(f"{v} | " for v in c.group) + f"{_fmt(c.a, digits)} | {_fmt(c.b, digits)} | "
                         f"{mark}{_fmt_diff(c.diff, digits)}{mark} | {mark}{c.verdict}{mark} |")
        lines.append("")
    for side, name in (("a", "A"), ("b", "B")):
        if only[side]:
            lines += [f"Only in {name} (not compared): " + "; ".join(", ".join(g) for g in only[side]) + ".", ""]
    return lines


def csv_text(columns: list[str], found: list[GroupComparison]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*columns, "metric", "a_n", "a_mean", "a_ci_low", "a_ci_high", "b_n", "b_mean", "b_ci_low",
                "b_ci_high", "diff", "diff_ci_low", "diff_ci_high", "verdict"])
    for c in found:
        ci = lambda d: d.get("ci95") or [None, None]  # noqa: E731
        w.writerow([*c.group, c.metric, c.a["n"], c.a["mean"], *ci(c.a), c.b["n"], c.b["mean"], *ci(c.b),
                    c.diff["diff"], *ci(c.diff), c.verdict])
    return buf.getvalue()


def plot(columns: list[str], found: list[GroupComparison], dest: Path, metric: str = "fct_s") -> Path | None:
    """Both sides' means with their CIs, group by group, for @metric: A and B side by side."""
    rows = [c for c in found if c.metric == metric and c.a["n"] and c.b["n"]]
    if not rows:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(rows) + 2), 4))
    for k, (side, colour) in enumerate((("a", "C0"), ("b", "C3"))):
        xs = [i + (k - 0.5) * 0.3 for i in range(len(rows))]
        means = [getattr(c, side)["mean"] for c in rows]
        errs = [((d["ci95"][1] - d["ci95"][0]) / 2 if d["ci95"] else 0) for d in (getattr(c, side) for c in rows)]
        ax.bar(xs, means, width=0.3, yerr=errs, color=colour, alpha=0.8, capsize=2, label=side.upper())
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(["\n".join(c.group) or "all flows" for c in rows], fontsize=7)
    ax.set_ylabel(f"{METRICS[metric][1]} ({METRICS[metric][0]}), mean and 95 % CI")
    ax.set_title(f"A against B by {', '.join(columns) or 'side'}", fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = dest / f"compare-{metric}.png"
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return out


def write_compare(a_name: str, a_rows: list[dict], b_name: str, b_rows: list[dict], dest: Path) -> dict:
    """report.md, compare.csv, summary.json and the plot in @dest (which the caller fills whole)."""
    columns, found, only = compare_rows(a_rows, b_rows)
    lines = report_lines(a_name, b_name, columns, found, only)
    if (p := plot(columns, found, dest)) is not None:
        lines += [f"![{p.stem}]({p.name})", ""]
    (dest / "report.md").write_text("\n".join(lines))
    (dest / "compare.csv").write_text(csv_text(columns, found))
    summary = {"a": a_name, "b": b_name, "grouped_by": columns,
               "verdicts": {v: sum(1 for c in found if c.verdict == v) for v in {c.verdict for c in found}},
               "only_in_a": [list(g) for g in only["a"]], "only_in_b": [list(g) for g in only["b"]],
               "differ": {k: list(v) for k, v in only["differ"].items()}}
    (dest / "summary.json").write_text(json.dumps(stamped("sslab.summary", summary), indent=1, sort_keys=True))
    return summary
