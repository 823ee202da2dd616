"""Matrix reports, from a matrix directory's archive alone.

    table1    E7: per setting, the large flow's FCT and the mean FCT of the
              small flows, SUSS off and on, the improvement, 95% CIs over
              repetitions, claim checks, and the paper's values beside ours
              (results/reference/table1.yaml).
    fairness  E6: Jain's index F of goodput over time, SUSS off and on; the
              time F takes to return to 0.95 after the fifth flow starts.

Inputs are the cells' run.json files and compressed pcaps; outputs go to a
new reports/<stamp>/ directory.  The tables are a pure function of the
archive (no clock, no host facts), so `sslab matrix report DIR` rebuilds
them byte for byte.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from ..records import stamped
from .. import paths
from ..ccas import SUSS_VERSIONS
from ..plan_record import MatrixPlan, PlannedCell
from .archive import ArchiveError, current_cells, latest_plan, runs_of, side_of
from .claims import report_claims_md
from .html import index_for, write_html
from .plots import plot_flows_over_time
from .conditions import conditions_of
from .stats import cis_overlap, fmt_mean_ci
from .fairness import JAIN_FAIR, JAIN_HOLD_WINDOWS, JAIN_WINDOW_S, fairness, jain, jain_series, recovery
from .table1 import compared_name, table1, table1_cell
from .calibration import calibration, candidate_axes

__all__ = ["ArchiveError", "JAIN_FAIR", "JAIN_HOLD_WINDOWS", "JAIN_WINDOW_S", "fairness", "jain", "jain_series",
           "recovery", "table1", "table1_cell", "write_matrix_report"]


def write_matrix_report(matrix_dir: Path) -> Path:
    """Tables and plots of the matrix's current cells, into a new reports/<stamp>/, which appears whole
    or not at all (paths.filled_whole: a full disk mid-report leaves no half of one); then `latest`
    and results/index.html point at it."""
    matrix_dir = Path(matrix_dir)
    plan_path, plan = latest_plan(matrix_dir)
    dest = matrix_dir / "reports" / paths.stamp()
    with paths.filled_whole(dest) as part:
        _write_matrix_report(matrix_dir, plan_path, plan, part)
    index_for(dest)
    paths.point_latest(dest)
    return dest


def _write_matrix_report(matrix_dir: Path, plan_path: Path, plan: MatrixPlan, dest: Path) -> None:
    """write_matrix_report's tables, plots and page, into @dest."""
    calibrated: list[str] = []
    if plan.report == "table1" and candidate_axes(plan):
        # A calibration matrix: each candidate's distance, then one candidate's Table 1 (the chosen one,
        # or the nearest so far): never the candidates' cells pooled.
        calibrated, shown, fits = calibration(matrix_dir, plan)
        report_plan = shown or plan
    else:
        report_plan, fits = plan, None
    if plan.report == "table1":
        table, extra = table1(matrix_dir, report_plan)
        if fits is not None:
            extra["calibration"] = fits
        on = plan.compare["on"]
        if compared_name(plan) == "SUSS":
            versions = "; ".join(SUSS_VERSIONS[v] for v in extra["suss_versions"]) or \
                "not recorded: cells from before SUSS versions, which ran ours from the paper's text"
            sides = f"SUSS off = cubic_hs (CUBIC's default HyStart), on = {on}, which ran {versions}"
        else:
            sides = (f"off = cubic_hs (CUBIC's default HyStart), on = {on} in SUSS's place (docs/starts.md says "
                     f"which draft it follows)")
        timing = {"client": "FCT from the client (connect() to last byte)",
                  "server": "FCT from the server's per-ACK trace (its first segment to the last ACK that "
                            "advanced snd_una)"}[report_plan.fct_timing]
        intro = (f"Mean ±95% CI half-width (Student t) over repetitions; {sides}; {timing}. Improvement = 1 − "
                 "mean small FCT on / off. *Small flows faster*: the paired difference off − on, with its CI. "
                 "*Large flow within its CI*: the on mean inside the off 95% CI. *Paper values reproduced*: of the "
                 "paper's five values of a setting, how many ours reproduce in magnitude (the rule is the report's "
                 "first line; every value is in the last table).")
    else:
        table, extra = fairness(matrix_dir, plan, dest)
        intro = (f"Jain's index F over {JAIN_WINDOW_S:g} s windows of goodput (the bytes each client received, "
                 f"from its own byte counts) among "
                 f"the flows receiving throughout the window. Time to F ≥ {JAIN_FAIR}: from the fifth flow's "
                 f"start to the end of the first of {JAIN_HOLD_WINDOWS} consecutive windows with F ≥ {JAIN_FAIR}. "
                 f"Mean ±95% CI half-width over repetitions. The fifth flow: off = {plan.compare['off']}, "
                 f"on = {plan.compare['on']}.")
    cells = current_cells(matrix_dir, plan)
    done = len(cells)
    lines = [f"# {plan.title}", "", *extra.get("verdict", []), *([""] if extra.get("verdict") else []),
             f"Matrix {plan.matrix} ({plan.matrix_file}), selection "
             f"{json.dumps(plan.selection, sort_keys=True)}, {plan.iterations} iteration(s): "
             f"{done} of {len(plan.cells)} cells done. Image {plan.image_hash[:12]}, traffic code "
             f"{plan.code_version[:12]}; plan {plan_path.name}.", "",
             f"Ran under: {conditions_of([d for _, d in cells]) if cells else 'nothing run yet'}.", "",
             "Parameters the paper leaves unstated, as chosen here:", ""]
    lines += [f"- {k}: {v}" for k, v in plan.defaults.items()]
    if extra.get("bounds"):
        lines += ["", "What the paper's own numbers allow of them (lower bounds on each FCT from the transfer "
                  "at the bottleneck rate and slow start's round trips; docs/experiments.md, E7):", "",
                  *extra["bounds"]]
    lines += ["", *calibrated, intro, "", table, ""]
    if extra.get("notes"):
        lines += extra["notes"] + [""]
    if extra.get("plot"):
        lines += [f"![Jain's index]({extra['plot']})", ""]
    lines += flows_over_time(plan, cells, dest)
    if plan.report == "table1":
        lines += suss_versions_side_by_side(matrix_dir, extra)
    if extra.get("comparisons_md"):
        lines += ["## Every paper value beside ours", "", extra["comparisons_md"], ""]
    if not calibrated:  # a calibration's candidates pooled are no evidence for a claim
        lines += [report_claims_md(paths.RESULTS_DIR, matrix_dir), ""]
    if extra.get("overhead_md"):
        lines += ["## Wall time per cell against its traffic time", "", extra["overhead_md"], ""]
    (dest / "table.md").write_text("\n".join(lines))
    write_html(dest / "table.md", [d for _, d in cells])
    (dest / "summary.json").write_text(json.dumps(stamped("sslab.summary", {"plan": plan_path.name, **extra}),
                                                  indent=1, sort_keys=True,
                                                  default=str))


#: What the flows-over-time plots stand for in each report: the paper's figure, which flow is drawn
#: thick (its index in a run's flows) and what the two kinds of flow are called.
FLOW_PLOTS = {"table1": ("Fig. 16", 0, ("the large flow", "the small flows")),
              "fairness": ("Fig. 2", -1, ("the new flow", "the running flows"))}


def flows_over_time(plan: MatrixPlan, cells: list[tuple[PlannedCell, Path]], dest: Path) -> list[str]:
    """Every flow's goodput against time, off above on, for the first finished repetition of each
    setting (flows-<values>.png in @dest): the paper's Fig. 16 for Table 1, its Fig. 2 for E6; the
    report's lines that show them."""
    figure, highlight, names = FLOW_PLOTS[plan.report]
    lines, seen = [], set()
    for cell, cell_dir in cells:
        axes = list(plan.axes or cell.setting)
        values = tuple(cell.setting[a] for a in axes)
        if values in seen:
            continue
        seen.add(values)
        sides = sorted(((side_of(plan, run), run) for run, _ in runs_of(cell_dir)), key=lambda s: s[0] != "off")
        labelled = [(f"SUSS {side} ({plan.compare[side]})", run) for side, run in sides]
        what = cell.name  # the setting's scenario name: its values in the matrix's axis order
        name = "flows-" + re.sub(r"[^A-Za-z0-9.-]+", "_", what) + ".png"
        if plot_flows_over_time(labelled, dest, name, f"{what}, repetition {cell.rep}", highlight, names):
            lines.append(f"![{what}]({name})")
    if not lines:
        return []
    return [f"## The flows over time (the paper's {figure})", "",
            f"Each flow's goodput in 0.5 s bins from its client's received bytes, off above on, "
            f"in the first finished repetition of each setting; {names[0]} drawn thick.", "", *lines, ""]


_SUSS_SUFFIX = re.compile(r"_suss-(\d+)")


def _average_improvement(rows: list[dict]) -> float | None:
    """The paper's average: 1 - mean of the on means / mean of the off means, over its grid."""
    rs = [r for r in rows if r["on_paper_grid"]]
    if not rs:
        return None
    return (1 - statistics.fmean(r["on_small"]["mean"] for r in rs)
            / statistics.fmean(r["off_small"]["mean"] for r in rs)) * 100


def suss_versions_side_by_side(matrix_dir: Path, extra: dict) -> list[str]:
    """Table 1's small-flow improvement per setting for every SUSS version run on this selection
    (the sibling directories that differ only by `_suss-N`), beside the paper's: the paper's numbers
    came from one version, and a later fix may move them.  Empty when one version was run."""
    base = _SUSS_SUFFIX.sub("", matrix_dir.name)
    runs: list[tuple[str, dict]] = []
    for sib in sorted(matrix_dir.parent.iterdir()):
        if not sib.is_dir() or _SUSS_SUFFIX.sub("", sib.name) != base or not (sib / "plans").is_dir():
            continue
        if sib == matrix_dir:
            sib_extra = extra
        else:
            try:
                _, sib_plan = latest_plan(sib)
                _, sib_extra = table1(sib, sib_plan)
            except (ArchiveError, KeyError, ValueError):
                continue
        if not sib_extra["rows"]:
            continue
        versions = sib_extra["suss_versions"]
        name = " + ".join(SUSS_VERSIONS[v].split(" (")[0] for v in versions) if versions else \
            "ours (not recorded)"
        runs.append((f"{name} ({sib.name})", sib_extra))
    if len(runs) < 2:
        return []
    keys = list(dict.fromkeys((r["large_cc"], r["buffer"], r["large_rtt"]) for _, e in runs for r in e["rows"]))
    by = [{(r["large_cc"], r["buffer"], r["large_rtt"]): r for r in e["rows"]} for _, e in runs]
    paper = {k: r["paper"] for b in by for k, r in b.items() if r.get("paper")}
    out = ["## SUSS versions side by side", "",
           "Small-flow improvement (1 − mean small FCT on / off) per setting, for each SUSS version run on this "
           "selection (directory in brackets), beside the paper's; n = repetitions.", "",
           "| large CCA | buffer | minRTT | paper | " + " | ".join(name for name, _ in runs) + " |",
           "|---|---|---|---|" + "---|" * len(runs)]
    for key in keys:
        cells = [f"{b[key]['improvement_pct']:.0f}% (n={b[key]['n']})" if key in b else "–" for b in by]
        p = paper.get(key)
        paper_text = f"{p['improvement_pct']:.0f}%" if p else "–"
        out.append(f"| {' | '.join(key)} | {paper_text} | " + " | ".join(cells) + " |")
    ccas = list(dict.fromkeys(k[0] for k in keys))
    for cca in ccas:
        avgs = [_average_improvement([r for r in e["rows"] if r["large_cc"] == cca]) for _, e in runs]
        p = extra.get("paper_averages", {}).get(cca)
        out.append(f"| {cca} | average | paper's grid | {f'{p:.0f}%' if p is not None else '–'} | "
                   + " | ".join(f"{a:.0f}%" if a is not None else "–" for a in avgs) + " |")
    return out + [""]


def write_kernels_report(runs: list[tuple[str, Path]], base: Path) -> Path:
    """The same matrix on several kernels, side by side, into a new @base/reports/<stamp>/: for Table 1
    one row per setting and kernel (large and small FCTs off and on, the improvement, the bottleneck's
    drops); for any matrix each kernel's own table after it.  @runs: (kernel, its matrix directory),
    in the order asked; a pure function of those archives, like write_matrix_report."""
    dest = base / "reports" / paths.stamp()
    lines = ["# The same matrix on several kernels", ""]
    lines += [f"- {name}: {d}" for name, d in runs]
    per_kernel: list[tuple[str, Path, MatrixPlan, str, dict]] = []
    every_cell: list[Path] = []   # the page links their captures and traces
    for name, d in runs:
        try:
            plan_path, plan = latest_plan(d)
        except ArchiveError:
            lines.append(f"- {name}: no plan in {d} (nothing run)")
            continue
        cells = current_cells(d, plan)
        every_cell += [c for _, c in cells]
        ran = conditions_of([c for _, c in cells]) if cells else "nothing run yet"
        extra = table1(d, plan)[1] if plan.report == "table1" else {}
        per_kernel.append((name, d, plan, ran, extra))
    lines.append("")
    if per_kernel and all(p.report == "table1" for _, _, p, _, _ in per_kernel):
        lines += ["Mean ±95% CI over repetitions (n) of each setting; FCT in seconds, large / mean small "
                  "flow; improvement = 1 − mean small FCT on / off; drops = the bottleneck's, per run.  "
                  f"\"CIs overlap {per_kernel[0][0]}\": whether each of the four FCTs' 95% CIs shares a point "
                  "with the first kernel's (large off, small off, large on, small on; – with n < 2).", "",
                  "| large CCA | buffer | minRTT | kernel | n | off: large / small | on: large / small | "
                  f"small-flow improvement | drops off / on | CIs overlap {per_kernel[0][0]} |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        keys = list(dict.fromkeys((r["large_cc"], r["buffer"], r["large_rtt"])
                                  for _, _, _, _, e in per_kernel for r in e["rows"]))
        fcts = ("off_large", "off_small", "on_large", "on_small")
        agree: dict[str, list[int]] = {}
        for key in keys:
            first = None
            for name, _, _, _, extra in per_kernel:
                r = next((r for r in extra["rows"] if (r["large_cc"], r["buffer"], r["large_rtt"]) == key), None)
                if r is None:
                    lines.append(f"| {' | '.join(key)} | {name} | 0 | not run | | | | |")
                    continue
                first = first or r
                overlap = "(the first)" if r is first else " ".join(
                    {True: "yes", False: "NO", None: "–"}[cis_overlap(first[f], r[f])] for f in fcts)
                if r is not first:
                    tally = agree.setdefault(name, [0, 0])
                    small = [cis_overlap(first[f], r[f]) for f in ("off_small", "on_small")]
                    if None not in small:  # n >= 2 on both sides
                        tally[0] += all(small)
                        tally[1] += 1
                lines.append(f"| {' | '.join(key)} | {name} | {r['n']} | {fmt_mean_ci(r['off_large'], 1)} / "
                             f"{fmt_mean_ci(r['off_small'], 2)} | {fmt_mean_ci(r['on_large'], 1)} / "
                             f"{fmt_mean_ci(r['on_small'], 2)} | {r['improvement_pct']:.0f}% | "
                             f"{r['drops_off']:.0f} / {r['drops_on']:.0f} | {overlap} |")
        lines.append("")
        lines += [f"- {name}: the small flows' FCT CIs (SUSS off and on) overlap {per_kernel[0][0]}'s in {a} of "
                  f"{n} settings with n ≥ 2 on both" for name, (a, n) in agree.items()]
        lines.append("")
    for name, d, plan, ran, _ in per_kernel:
        lines += [f"## {name}", "", f"Ran under: {ran}.", ""]
        try:
            report = (d / "reports" / "latest" / "table.md").read_text()
            body = report.split("\n", 1)[1] if report.startswith("# ") else report
            lines += [f"Its report ({d / 'reports' / 'latest' / 'table.md'}):", "", body.strip(), ""]
        except OSError:
            lines += ["No report yet.", ""]
    with paths.filled_whole(dest) as part:
        (part / "table.md").write_text("\n".join(lines))
        write_html(part / "table.md", every_cell)
        (part / "kernels.json").write_text(json.dumps(stamped("sslab.summary", {
            "kernels": [{"kernel": name, "matrix_dir": str(d)} for name, d in runs]}), indent=1))
    index_for(dest)
    paths.point_latest(dest)
    return dest
