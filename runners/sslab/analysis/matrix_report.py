"""Matrix reports, from a matrix directory's archive alone: the page around the tables and plots of
the report the matrix names, which its paper registers (sslab.analysis.plugins), such as

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
from pathlib import Path

from ..records import stamped
from .. import paths
from ..plan_record import MatrixPlan, PlannedCell
from .answer_plots import SUMMARY_FILE
from .archive import ArchiveError, current_cells, latest_plan, runs_of, side_of
from .claims import claims_answer_line, report_claims, report_claims_md
from .html import index_for, write_html
from .pcap import stored_capture
from .interactive import append_fct_page, flows_page
from .plots import plot_flows_grid, plot_flows_over_time, prefetch_capture_bins
from .conditions import conditions_of
from . import progress
from .matrix_described import kernels_table, report_kind
from .plan_notes import plan_notes
from .tidy import write_flows_table

__all__ = ["ArchiveError", "console_ending", "write_kernels_report", "write_matrix_report"]


def console_ending(report: Path) -> str:
    """What a matrix command prints when its report is written: the report's answer (its title, the
    paper values' counts and the claims' line: everything before its "Matrix ..." line), then where the
    whole report, its page and the results index are.  A report without an answer there (no paper
    values to set beside) is printed whole."""
    text = (report / "table.md").read_text()
    lines = text.splitlines()
    cut = next((i for i, ln in enumerate(lines) if ln.startswith("Matrix ")), None)
    # The plots are the page's (a console shows no image), and so are its links (the summary's file is
    # named with the report's paths below).
    head = [ln for ln in lines[:cut] if not ln.startswith("![") and "](" not in ln] if cut else []
    head = [ln for i, ln in enumerate(head) if ln.strip() or (i and head[i - 1].strip())]
    if len([ln for ln in head if ln.strip()]) < 2:
        return text.rstrip() + f"\n\nreport: {report / 'table.md'}"
    while head and not head[-1].strip():
        head.pop()
    index = paths.RESULTS_DIR / "index.html"
    pdf = report / SUMMARY_FILE
    also = f"; the answer and its plots for a review: {pdf}" if pdf.is_file() else ""
    return "\n".join([*head, "", f"report: {report / 'table.md'} (every table; the page: {report / 'report.html'}{also})",
                      *([f"all results: {index}"] if index.is_file() else [])])


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
    kind = report_kind(plan)
    with progress.stage("the tables written"):
        tables = kind.tables(matrix_dir, plan, dest)
    table, extra, intro = tables.table, tables.extra, tables.intro
    cells = current_cells(matrix_dir, plan)
    done = len(cells)
    # What ran and the captures' line, every matrix's, then the report kind's own notes.
    extra = {**extra, "notes": [*plan_notes(plan, cells), *extra.get("notes", [])]}
    # The paper's claims these cells test, judged once: the answer's line at the top, their section below.
    with progress.stage("the paper's claims judged"):
        claims = report_claims(paths.RESULTS_DIR, matrix_dir) if tables.claims else []
    answer = claims_answer_line(claims)
    if not isinstance(claims, Exception):
        extra = {**extra, "claims": [{"id": c.id, "outcome": v.outcome, "verdict": v.verdict}
                                     for c, v, _ in claims if not v.elsewhere]}
    ran_under = f"Ran under: {conditions_of([d for _, d in cells]) if cells else 'nothing run yet'}."
    with progress.stage("the answer's summary drawn"):
        summary = kind.summary(plan.title, [*extra.get("verdict", []), "", *([answer, ""] if answer else []),
                                            ran_under], extra, dest)
    lines = [f"# {plan.title}", "", *extra.get("verdict", []), *([""] if extra.get("verdict") else []),
             *([answer, ""] if answer else []),
             *[ln for alt, name in extra.get("answer_plots", []) for ln in (f"![{alt}]({name})", "")],
             *([f"The answer and its three plots in one file, for a review or a paper: [{summary.name}]({summary.name}).",
                ""] if summary else []),
             # The claims next, with the answer they complete (a calibration's candidates pooled are no
             # evidence for a claim): the printed report reaches them on its first pages.
             *([report_claims_md(paths.RESULTS_DIR, matrix_dir, claims), ""] if tables.claims else []),
             f"Matrix {plan.matrix} ({plan.matrix_file}), selection "
             f"{json.dumps(plan.selection, sort_keys=True)}, {plan.iterations} iteration(s): "
             f"{done} of {len(plan.cells)} cells done. Image {plan.image_hash[:12]}, traffic code "
             f"{plan.code_version[:12]}; plan {plan_path.name}.", "",
             ran_under, "",
             "Parameters the paper leaves unstated, as chosen here:", ""]
    lines += [f"- {k}: {v}" for k, v in plan.defaults.items()]
    if extra.get("bounds"):
        lines += ["", "What the paper's own numbers allow of them (lower bounds on each FCT from the transfer "
                  "at the bottleneck rate and slow start's round trips; docs/experiments.md, E7):", "",
                  *extra["bounds"]]
    lines += ["", *tables.before, intro, "", table, ""]
    if extra.get("notes"):
        lines += extra["notes"] + [""]
    if extra.get("plot"):
        lines += [f"![Jain's index]({extra['plot']})", ""]
    with progress.stage("the flows over time drawn"):
        lines += flows_over_time(plan, cells, dest)
    lines += kind.after_plots(matrix_dir, extra)
    if extra.get("comparisons_md"):
        lines += _every_value(plan, extra, dest)
    lines += _causes(plan, extra, dest)
    if extra.get("overhead_md"):
        # A row per cell: a page of its own (160 rows at Table 1's default), its sum here.
        rows = extra["overhead_md"].splitlines()
        _page_of_its_own(dest, "wall-time", f"{plan.title}: wall time per cell against its traffic time",
                         extra["overhead_md"])
        lines += ["## Wall time per cell against its traffic time", "",
                  "Every cell's on [a page of its own](wall-time.html); all of them together:", "",
                  *rows[:2], *[r for r in rows[2:] if r.startswith("| all ")], ""]
    (dest / "table.md").write_text("\n".join(lines))
    with progress.stage("the flows' table and the pages written"):
        write_flows_table(dest, [d for _, d in cells], [{"setting": c.setting, "rep": c.rep} for c, _ in cells])
        append_fct_page(dest / "table.md", f"{plan.matrix}: FCT over iterations")
        write_html(dest / "table.md", [d for _, d in cells],
                   {d: f"{c.name}, iteration {c.rep} (cell {c.key[:8]})" for c, d in cells})
    (dest / "summary.json").write_text(json.dumps(stamped("sslab.summary", {"plan": plan_path.name, **extra,
                                                                          "cells_done": done,
                                                                          "cells_planned": len(plan.cells),
                                                                          "code": plan.code_version}),
                                                  indent=1, sort_keys=True,
                                                  default=str))


def _page_of_its_own(dest: Path, stem: str, title: str, text: str) -> None:
    """A long part of the report as a page of its own beside it: <stem>.md (@title, then @text) and
    <stem>.html, which the report links."""
    (dest / f"{stem}.md").write_text(f"# {title}\n\n{text}\n")
    write_html(dest / f"{stem}.md", out_name=f"{stem}.html")


#: More paper values than this and their table is a page of its own (Table 1's default: 102 rows, two
#: thirds of the printed report), the report linking it beside the values not reproduced.
VALUES_INLINE_MAX = 24


def _every_value(plan: MatrixPlan, extra: dict, dest: Path) -> list[str]:
    """The report's lines of its section on every paper value: the table itself, or, past
    VALUES_INLINE_MAX rows, a link to values.html, which holds it."""
    table = extra["comparisons_md"]
    n = len(table.splitlines()) - 2   # the heading and its rule
    if n <= VALUES_INLINE_MAX:
        return ["## Every paper value beside ours", "", table, ""]
    _page_of_its_own(dest, "values", f"{plan.title}: every paper value beside ours", table)
    below = " Those not reproduced or not decided are listed below with the causes tried." \
        if extra.get("causes_md") else ""
    return ["## Every paper value beside ours", "",
            f"All {n}, each with its band and verdict, on [a page of their own](values.html).{below}", ""]


#: More values not reproduced than this and the causes tried about them are a page of their own (Table 1's
#: default: about 40 values, ten printed pages), the report linking it.
CAUSES_INLINE_MAX = 8


def _causes(plan: MatrixPlan, extra: dict, dest: Path) -> list[str]:
    """The report's lines of its section on the values not reproduced and the causes tried about each:
    the section itself, or, past CAUSES_INLINE_MAX values, a count and a link to causes.html, which holds it."""
    section = extra.get("causes_md") or []
    values = [ln for ln in section if ln.startswith("- ")]
    if len(values) <= CAUSES_INLINE_MAX:
        return section
    heading, _, *body = section   # the heading, its blank line, the section
    _page_of_its_own(dest, "causes", f"{plan.title}: {heading.removeprefix('## ')}", "\n".join(body))
    untested = sum(ln.endswith("no cause tested yet.") for ln in values)
    return [heading, "",
            f"{len(values)} values the verdict does not call reproduced, each with every candidate cause tried about "
            f"it, one change at a time, and what it did, on [a page of their own](causes.html)"
            + (f"; {untested} with no cause tested yet." if untested else "; every one with at least one cause tested."),
            ""]


def flows_over_time(plan: MatrixPlan, cells: list[tuple[PlannedCell, Path]], dest: Path) -> list[str]:
    """Every flow's goodput against time, off beside on, for the first finished repetition of each
    setting: small multiples when the report's kind declares a grid (Table 1: a figure per column, a
    row per RTT, a column per buffer and side), else a figure per setting; each setting also as an
    interactive page (flows-<setting>.html).  The report's lines that show them."""
    kind = report_kind(plan)
    figure, names = kind.figure, kind.flow_names
    firsts: list[tuple[PlannedCell, list[tuple[str, str, dict, Path | None]]]] = []
    seen = set()
    for cell, cell_dir in cells:
        values = tuple(cell.setting[a] for a in list(plan.axes or cell.setting))
        if values in seen:
            continue
        seen.add(values)
        sides = sorted(((side_of(plan, run), run, run_dir) for run, run_dir in runs_of(cell_dir)),
                       key=lambda s: s[0] != "off")
        firsts.append((cell, [(side, f"SUSS {side} ({plan.compare[side]})", run, capture_of(run, run_dir))
                              for side, run, run_dir in sides]))
    prefetch_capture_bins([(capture, tuple(f["port"] for f in run["flows"]))
                           for _, sides in firsts for _, _, run, capture in sides if capture is not None])
    lines = (_flows_grids(plan, firsts, dest) if kind.flows_grid and all(c.setting.keys() >= set(kind.flows_grid)
                                                                       for c, _ in firsts)
             else _flows_per_setting(plan, firsts, dest))
    if not lines:
        return []
    return [f"## The flows over time (the paper's {figure})", "",
            f"Each flow's goodput in 0.5 s bins: the new data it put past the bottleneck (the capture there, "
            f"so no bin runs faster than the link, drawn dashed; a run without a capture: its client's "
            f"received bytes, which a filled hole releases at once), off beside on, in the first finished "
            f"repetition of each setting; {names[0]} drawn thick.", "", *lines, ""]


def _flow_name(what: str, suffix: str) -> str:
    return "flows-" + re.sub(r"[^A-Za-z0-9.-]+", "_", what) + suffix


def _explore_page(cell: PlannedCell, sides: list, dest: Path) -> Path | None:
    """The setting's interactive page (zoom, hover, hide a flow)."""
    labelled = [(label, run, capture) for _, label, run, capture in sides]
    return flows_page(labelled, dest, _flow_name(cell.name, ".html"), f"{cell.name}, repetition {cell.rep}",
                      link_rate(cell), _flow_rtts(cell, sides[0][2]) if sides else None)


def _flows_per_setting(plan: MatrixPlan, firsts: list, dest: Path) -> list[str]:
    kind = report_kind(plan)
    lines = []
    for cell, sides in firsts:
        labelled = [(label, run, capture) for _, label, run, capture in sides]
        name = _flow_name(cell.name, ".png")
        if plot_flows_over_time(labelled, dest, name, f"{cell.name}, repetition {cell.rep}", kind.highlight,
                                kind.flow_names, link_mbit=link_rate(cell)):
            lines.append(f"![{cell.name}]({name})")
            if page := _explore_page(cell, sides, dest):
                lines += ["", f"[{page.name}]({page.name}): the same, to explore (zoom, hover, hide a flow)", ""]
    return lines


def _flow_rtts(cell: PlannedCell, run: dict) -> dict[int, float]:
    """Each flow of @run's minRTT (its pair's, from the cell's plan), by its index; {} for a plan without pairs."""
    pairs = (cell.plan or {}).get("pairs") or []
    return {i: pairs[f["pair"] - 1]["rtt_ms"] for i, f in enumerate(run["flows"])
            if isinstance(f.get("pair"), int) and 0 < f["pair"] <= len(pairs)}


def _flows_grids(plan: MatrixPlan, firsts: list, dest: Path) -> list[str]:
    """A figure per value of the kind's first grid axis: rows its second axis's values, columns its
    third's with each side; the settings' interactive pages linked under each."""
    kind = report_kind(plan)
    by, row_axis, col_axis = kind.flows_grid

    def ordered(axis: str, got: set) -> list:
        listed = [v for v in (plan.selection.get(axis) or (plan.axis_values or {}).get(axis) or []) if v in got]
        return listed + sorted(got - set(listed), key=str)

    lines = []
    for figure_value in ordered(by, {c.setting[by] for c, _ in firsts}):
        mine = [(c, sides) for c, sides in firsts if c.setting[by] == figure_value]
        rows = ordered(row_axis, {c.setting[row_axis] for c, _ in mine})
        col_values = ordered(col_axis, {c.setting[col_axis] for c, _ in mine})
        side_names = [s for s in ("off", "on") if any(side == s for _, sides in mine for side, *_ in sides)]
        cols = [f"{v}, SUSS {s}" for v in col_values for s in side_names]
        panels = {(c.setting[row_axis], f"{c.setting[col_axis]}, SUSS {side}"): (run, capture, _flow_rtts(c, run))
                  for c, sides in mine for side, _, run, capture in sides}
        label = plan.labels.get(figure_value, figure_value)
        name = _flow_name(f"{plan.matrix}-{figure_value}", ".png")
        reps = sorted({c.rep for c, _ in mine})
        title = f"{label} (the large flow), repetition {', '.join(map(str, reps))}"
        if plot_flows_grid(panels, rows, cols, dest, name, title, kind.highlight, kind.flow_names,
                           link_mbit=link_rate(mine[0][0])):
            lines += [f"![{label}: the flows over time, every setting]({name})", ""]
            pages = [(c, p) for c, sides in mine if (p := _explore_page(c, sides, dest))]
            if pages:
                lines += ["To explore, setting by setting (zoom, hover, hide a flow): "
                          + " · ".join(f"[{c.setting[row_axis]} {c.setting[col_axis]}]({p.name})" for c, p in pages),
                          ""]
    return lines


def link_rate(cell: PlannedCell) -> float | None:
    """The cell's bottleneck rate (Mbit/s): its plan's, else (plans before 29 Nov 2026) its scenario's."""
    if cell.plan is not None:
        return cell.plan["bottleneck"]["rate_mbit"]
    return (cell.scenario.get("bottleneck") or {}).get("rate")


def capture_of(run: dict, run_dir: Path) -> Path | None:
    """The run's capture at the bottleneck (or its compressed copy), None when it kept none."""
    if not run.get("pcap"):
        return None
    path = stored_capture(run_dir / run["pcap"])
    return path if path.exists() else None


def write_kernels_report(runs: list[tuple[str, Path]], base: Path) -> Path:
    """The same matrix on several kernels, side by side, into a new @base/reports/<stamp>/: for a
    report with a settings section (Table 1's, any file's) one row per setting and kernel, its columns
    (matrix_described.kernels_table); for any matrix each kernel's own table after it.  @runs: (kernel,
    its matrix directory), in the order asked; a pure function of those archives, like write_matrix_report."""
    dest = base / "reports" / paths.stamp()
    lines = ["# The same matrix on several kernels", ""]
    lines += [f"- {name}: {d}" for name, d in runs]
    per_kernel: list[tuple[str, Path, MatrixPlan, str]] = []
    every_cell: list[Path] = []   # the page links their captures and traces
    every_setting: list[dict] = []  # and flows.csv has their axes
    for name, d in runs:
        try:
            plan_path, plan = latest_plan(d)
        except ArchiveError:
            lines.append(f"- {name}: no plan in {d} (nothing run)")
            continue
        cells = current_cells(d, plan)
        every_cell += [c for _, c in cells]
        every_setting += [{"setting": c.setting, "rep": c.rep} for c, _ in cells]
        ran = conditions_of([c for _, c in cells]) if cells else "nothing run yet"
        per_kernel.append((name, d, plan, ran))
    lines.append("")
    lines += kernels_table([(name, d, plan) for name, d, plan, _ in per_kernel])
    for name, d, plan, ran in per_kernel:
        lines += [f"## {name}", "", f"Ran under: {ran}.", ""]
        try:
            report = (d / "reports" / "latest" / "table.md").read_text()
            body = report.split("\n", 1)[1] if report.startswith("# ") else report
            lines += [f"Its report ({d / 'reports' / 'latest' / 'table.md'}):", "", body.strip(), ""]
        except OSError:
            lines += ["No report yet.", ""]
    with paths.filled_whole(dest) as part:
        (part / "table.md").write_text("\n".join(lines))
        write_flows_table(part, every_cell, every_setting)
        write_html(part / "table.md", every_cell)
        (part / "kernels.json").write_text(json.dumps(stamped("sslab.summary", {
            "kernels": [{"kernel": name, "matrix_dir": str(d)} for name, d in runs]}), indent=1))
    index_for(dest)
    paths.point_latest(dest)
    return dest
