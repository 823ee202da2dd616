"""results/index.html as a dashboard: a row per report, sortable and filterable offline.

Each row says, from the report's directory and the archive it was written from alone:

    experiment   its id and make target (experiments/*.yaml, by the results folder it writes)
    reproduces   the paper and its figure or table
    report       the page, by its title
    written      when (the report directory's stamp, else the page's time)
    commit       the harness's git commit its runs ran (a run's meta.json, a matrix cell's)
    n            its runs (a run directory's), the runs it was written over, or a matrix's
                 repetitions (the most any of its settings has)
    status       done, or partial (a matrix's cells not all done, as its summary.json counts them; a
                 run directory without its manifest), coloured; empty for a matrix report that did not
                 count them
    headline     a report's counts of the paper's values by outcome where its summary has them
                 (Table 1's: per group, reproduced / not / not decided) and of the paper's claims it
                 tests, else its first bold sentence, else empty; its summary.json and flows.csv linked

The page is still one file with its style inline; its one script (a dozen lines, inline) sorts by a
column when its heading is clicked and keeps the rows a typed filter matches: nothing is fetched.
"""

from __future__ import annotations

import html
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .. import paths
from ..records import RecordFormatError, read_runs_index
from .conditions import commit_text

#: A results directory's stamp (paths.stamp): when it was written.
STAMP = re.compile(r"(\d{8}T\d{6}Z)")


@dataclass(frozen=True)
class CatalogueEntry:
    """What an experiment file says of itself, by the results folder it writes."""
    output: str
    target: str
    id: str
    paper: str
    figure: str


def output_of(path: Path, data: dict) -> str:
    """The results folder an experiment file writes: its `output:`, else its name; a matrix's is its
    matrix's name, written in place or in its matrix file (the rule of sslab.experiment.spec.Experiment,
    held to it by a unit test)."""
    if isinstance(data.get("matrix"), dict):
        return str(data["matrix"].get("name") or path.stem)
    if data.get("matrix"):
        matrix = yaml.safe_load((path.parent / data["matrix"]).read_text()) or {}
        return str((matrix.get("matrix") or {}).get("name") or Path(data["matrix"]).stem)
    return str(data.get("output") or path.stem)


def catalogue(experiments: Path | None = None) -> dict[str, CatalogueEntry]:
    """Every experiment file of @experiments (the tree's experiments/) by the folder it writes."""
    out = {}
    for f in sorted((experiments or paths.REPO_ROOT / "experiments").glob("*.yaml")):
        try:
            data = yaml.safe_load(f.read_text()) or {}
            name = output_of(f, data)
        except (OSError, yaml.YAMLError):
            continue  # a broken file is refused where it is run; the index goes on without it
        rep = data.get("reproduces") or {}
        out[name] = CatalogueEntry(name, f.stem, str(data.get("id", "")), str(rep.get("paper", "")),
                                   str(rep.get("figure", "")))
    return out


@dataclass(frozen=True)
class IndexRow:
    page: Path
    folder: str
    title: str
    written: str
    commit: str
    n: int | None
    status: str
    headline: str


def _text_of(report_dir: Path) -> str:
    for name in ("table.md", "report.md"):
        if (report_dir / name).is_file():
            return (report_dir / name).read_text()
    return ""


def _meta_commit(run_dir: Path) -> str:
    try:
        return commit_text(json.loads((run_dir / "meta.json").read_text()).get("code") or {})
    except (OSError, ValueError):
        return ""


def _runs_in(run_dir: Path) -> int | None:
    try:
        return len(read_runs_index(run_dir / "job" / "out" / "runs.json"))
    except RecordFormatError:
        return None


def counts_text(counts: dict[str, dict[str, int]]) -> str:
    """A report's headline counts (its summary's `headline`: per group of values, each outcome's
    count) in one line: "reproduced / not / not decided: the large flow's FCTs 12/2/2 of 16; ..."."""
    return "reproduced / not / not decided: " + "; ".join(
        f"{group} {t.get('reproduced', 0)}/{t.get('not reproduced', 0)}/{t.get('not decided', 0)} of {t.get('of', 0)}"
        for group, t in counts.items())


def row_of(page: Path, results: Path, title: str) -> IndexRow:
    """The index's row of the report page @page (under @results)."""
    d = page.parent
    text = _text_of(d)
    bold = re.search(r"\*\*(.+?)\*\*", text)
    headline = bold.group(1) if bold else ""
    m = STAMP.search(d.name) or STAMP.search(d.parent.name)
    written = (time.strftime("%Y-%m-%d %H:%M", time.strptime(m.group(1), "%Y%m%dT%H%M%SZ")) if m else
               time.strftime("%Y-%m-%d %H:%M", time.gmtime(page.stat().st_mtime)))
    folder = page.relative_to(results).parts[0]
    summary = _summary(d)
    if isinstance(summary.get("headline"), dict) and summary["headline"]:
        headline = counts_text(summary["headline"])
    if isinstance(summary.get("claims"), list) and summary["claims"]:
        outcomes = [c.get("outcome", "") for c in summary["claims"]]
        headline += ("; " if headline else "") + "claims: " + ", ".join(
            f"{outcomes.count(o)} {o}" for o in dict.fromkeys(outcomes)) + f" of {len(outcomes)}"
    if (d / "table.md").is_file():  # a matrix's report: its cells counted (reports before 29 Nov 2026 did not)
        if "cells_planned" not in summary:
            return IndexRow(page, folder, title, written, "", None, "", headline)
        done, planned = summary["cells_done"], summary["cells_planned"]
        reps = max((r["n"] for r in summary.get("rows") or [] if isinstance(r, dict) and r.get("n")), default=None)
        cells = d.parent.parent / "cells"
        commit = next((c for cell in sorted(cells.iterdir()) if (c := _meta_commit(cell))), "") \
            if cells.is_dir() else ""
        return IndexRow(page, folder, title, written, commit, reps,
                        "done" if done == planned else f"partial ({done} of {planned} cells)", headline)
    run_dir = d.parent if d.name.startswith("rebuilt-") else d  # a run's report, or one rebuilt in it
    if (n := _runs_in(run_dir)) is not None:
        status = "done" if (run_dir / "manifest.json").is_file() else "partial"
        return IndexRow(page, folder, title, written, _meta_commit(run_dir), n, status, headline)
    runs = [Path(r) for r in summary.get("runs") or [] if isinstance(r, str)]  # a report over runs
    commit = next((c for r in runs if (c := _meta_commit(r))), "")
    return IndexRow(page, folder, title, written, commit, len(runs) or None, "done", headline)


def _summary(report_dir: Path) -> dict:
    try:
        data = json.loads((report_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


#: Sorting by a column's heading and filtering by what is typed: the page's only script.
SCRIPT = """
const rows = () => Array.from(document.querySelectorAll('#reports tbody tr'));
document.querySelectorAll('#reports th').forEach((th, i) => th.addEventListener('click', () => {
  const up = th.dataset.dir !== 'up'; th.dataset.dir = up ? 'up' : 'down';
  const key = r => r.children[i].dataset.key || r.children[i].textContent;
  const sorted = rows().sort((a, b) => key(a).localeCompare(key(b), undefined, {numeric: true}) * (up ? 1 : -1));
  sorted.forEach(r => r.parentNode.appendChild(r));
}));
document.getElementById('filter').addEventListener('input', e => {
  const words = e.target.value.toLowerCase().split(/\\s+/).filter(w => w);
  rows().forEach(r => { r.hidden = !words.every(w => r.textContent.toLowerCase().includes(w)); });
});
"""

COLUMNS = ("experiment", "reproduces", "report", "written", "commit", "n", "status", "headline")


def _data_links(report_dir: Path, results: Path) -> str:
    """Links to a report's data beside it (summary.json, flows.csv), for the headline's cell."""
    found = [f for f in ("summary.json", "flows.csv") if (report_dir / f).is_file()]
    return ("<br>" + " ".join(f"<a href=\"{html.escape(Path(os.path.relpath(report_dir / f, results)).as_posix())}\">"
                              f"{f}</a>" for f in found)) if found else ""


def index_body(rows: list[IndexRow], results: Path, known: dict[str, CatalogueEntry]) -> str:
    """The dashboard's HTML (a heading, the filter box, the table, its script)."""
    def cell(text: str, key: str | None = None) -> str:
        attr = "" if key is None else ' data-key="' + html.escape(key) + '"'
        return f"<td{attr}>{text}</td>"

    body = []
    for r in rows:
        e = known.get(r.folder)
        exp = f"{html.escape(e.id)} <code>make {html.escape(e.target)}</code>" if e else f"<code>{html.escape(r.folder)}</code>"
        rel = Path(os.path.relpath(r.page, results)).as_posix()
        body.append("<tr>" + cell(exp, f"{e.id if e else ''} {r.folder}")
                    + cell(html.escape(f"{e.paper}: {e.figure}" if e else ""))
                    + cell(f"<a href=\"{html.escape(rel)}\">{html.escape(r.title)}</a><br><code>"
                           f"{html.escape(Path(os.path.relpath(r.page.parent, results)).as_posix())}</code>")
                    + cell(html.escape(r.written)) + cell(f"<code>{html.escape(r.commit)}</code>")
                    + cell("" if r.n is None else str(r.n), f"{r.n or 0:08d}")
                    + f"<td class=\"{'done' if r.status == 'done' else 'partial' if r.status else ''}\">"
                    + f"{html.escape(r.status)}</td>"
                    + cell(html.escape(r.headline) + _data_links(r.page.parent, results)) + "</tr>")
    if not body:
        return "<h1>slowstart-lab results</h1>\n<p>No report yet.</p>"
    head = "".join(f"<th title=\"sort\">{c}</th>" for c in COLUMNS)
    return ("<h1>slowstart-lab results</h1>\n<p>Every report, newest first per experiment; a heading sorts by its "
            "column, the box keeps the rows that hold every word typed.</p>\n"
            "<p><input id=\"filter\" type=\"search\" placeholder=\"filter: e7 cubic partial ...\" size=\"40\"></p>\n"
            f"<table id=\"reports\"><thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body)
            + f"\n</tbody></table>\n<script>{SCRIPT}</script>")
