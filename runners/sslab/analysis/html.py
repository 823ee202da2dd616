"""Every report as a page a browser opens from disk, and an index over results/.

    report.html  beside each report.md (or a matrix's table.md): the same text, tables and plots,
                 with links to the captures and traces of the runs it was written from
    index.html   results/index.html: every report, a row each, newest first per experiment (dashboard)

Static files only: the style is inline, a report page has no script (the index has one, inline, to
sort and filter its rows) and nothing is fetched from the network, so a page opens from disk
(file://) on a machine with no server and no connection.
Links are relative, so a results/ tree copied elsewhere keeps working.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import markdown

from .. import paths
from . import dashboard
from .archive import run_summaries_of, runs_named_by_keys
from .pcap import stored_capture

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 75em; margin: 1.5em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
code { background: #f5f5f5; padding: 0 0.2em; }
nav { font-size: 0.9em; margin-bottom: 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em; }
td.done { background: #e3f1fa; } td.partial { background: #fdf0d5; }
p.contents { font-size: 0.9em; }
td.reproduced { background: #d9eaf6; } td.not-reproduced { background: #f8ddcc; } td.not-decided { background: #fbeccd; }
"""

#: A table cell that is a verdict (the report's rule: sslab.analysis.verdict), coloured as the plots colour it.
VERDICT_CELL = re.compile(r"<td>(reproduced|not reproduced|not decided)(\b[^<]*)</td>")


def coloured_verdicts(body: str) -> str:
    """@body with every table cell that is a verdict ("reproduced", "not reproduced", "not decided at n = 7",
    "reproduced (n = 1, no CI)") given its verdict's class, so the page colours it."""
    return VERDICT_CELL.sub(lambda m: f'<td class="{m[1].replace(" ", "-")}">{m[1]}{m[2]}</td>', body)

#: The fields of a run record naming the files a report links to: the bottleneck's capture, the
#: client's, the router's (every interface: capture.router), the per-ACK trace.
RUN_FILES = ("pcap", "client_pcap", "router_pcap", "trace")


def _title(text: str, fallback: str) -> str:
    m = re.search(r"^# (.+)$", text, re.M)
    return m.group(1).strip() if m else fallback


def _rel(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target, start)).as_posix()


#: How a link to each of RUN_FILES reads.
RUN_FILE_WORDS = {"pcap": "capture", "client_pcap": "client's capture", "router_pcap": "router's capture",
                  "trace": "trace"}


def labelled_run_files(run_dirs: list[Path], labels: dict[Path, str]) -> list[tuple[str, list[tuple[str, Path]]]]:
    """The captures and traces every run of @run_dirs (run directories or matrix cells) records, as
    archived (a capture may be kept gzipped), by run directory: (its label, [(the run's tag and what
    the file is, the file)]); a directory without a label in @labels goes by its plan's scenario name
    and its own name."""
    out = []
    for d in run_dirs:
        d = Path(d)
        files = []
        for run, run_dir in run_summaries_of(d):
            for k in RUN_FILES:
                if run.get(k) and (f := stored_capture(run_dir / run[k])).is_file():
                    files.append((f"{run_dir.name} {RUN_FILE_WORDS[k]}", f))
        if files:
            out.append((labels.get(d) or _scenario_name(d), files))
    return out


def _scenario_name(run_dir: Path) -> str:
    try:
        return f"{json.loads((run_dir / 'plan.json').read_text())['name']} ({run_dir.name})"
    except (OSError, ValueError, KeyError):
        return run_dir.name


# Up to this many runs' (or cells') captures and traces are listed on the report's page; more go
# to a page of their own beside it.
CAPTURES_INLINE_MAX = 12
CAPTURES_PAGE = "captures.html"


def page(title: str, body: str, nav: str = "") -> str:
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n{nav}\n{body}\n</body></html>\n")


def write_html(md_path: Path, run_dirs: list[Path] | None = None, run_labels: dict[Path, str] | None = None,
               out_name: str = "report.html") -> Path:
    """@md_path's report as HTML beside it (report.html), with links to the captures and traces of
    @run_dirs (each directory's under its label in @run_labels, else its scenario's name) and back to
    results/index.html when the report lies under results/."""
    md_path = Path(md_path)
    text = md_path.read_text()
    # Every section an anchor (its id from its heading), and the page's sections listed at its top.
    md = markdown.Markdown(extensions=["tables", "fenced_code", "toc"], extension_configs={"toc": {"toc_depth": "2"}})
    body = coloured_verdicts(md.convert(text))
    sections = re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', body)
    data = [f for f in (md_path.parent / "summary.json", *sorted(md_path.parent.glob("*.csv"))) if f.exists()]
    if data:
        body += ("\n<h2 id=\"data\">Data</h2>\n<p>" + " · ".join(f"<a href=\"{f.name}\">{f.name}</a>" for f in data)
                 + " (flows.csv: a row per flow per run, the setting as columns, which "
                   "<code>sslab.results.load</code> reads into a pandas DataFrame; compare.csv: a comparison's "
                   "groups)</p>")
    groups = labelled_run_files(run_dirs or [], run_labels or {})
    if groups:
        items = "\n".join(
            f"<li>{html.escape(label)}: " + ", ".join(f"<a href=\"{html.escape(_rel(f, md_path.parent))}\">"
                                                     f"{html.escape(text)}</a>" for text, f in files) + "</li>"
            for label, files in groups)
        listing = f"<ul>\n{items}\n</ul>"
        if len(groups) > CAPTURES_INLINE_MAX:
            # A matrix's (160 cells at Table 1's default): on a page of their own, the report's end kept short.
            captures = md_path.parent / CAPTURES_PAGE
            captures.write_text(page(f"{_title(text, md_path.parent.name)}: captures and traces",
                                     f"<h1>Captures and traces</h1>\n{listing}",
                                     f"<nav><a href=\"{out_name}\">the report</a></nav>"))
            listing = (f"<p>The captures and traces of {len(groups)} cells, on "
                       f"<a href=\"{CAPTURES_PAGE}\">a page of their own</a>.</p>")
        body += f"\n<h2 id=\"captures\">Captures and traces</h2>\n{listing}"
        sections.append(("captures", "Captures and traces"))
    if data:
        sections.append(("data", "Data"))
    if len(sections) > 1:
        contents = " · ".join(f"<a href=\"#{i}\">{t}</a>" for i, t in sections)
        listed = f'<p class="contents">On this page: {contents}</p>'
        body = re.sub(r"</h1>", lambda m: m[0] + "\n" + listed, body, count=1)
    nav = ""
    if md_path.resolve().is_relative_to(paths.RESULTS_DIR.resolve()):
        nav = f"<nav><a href=\"{_rel(paths.RESULTS_DIR / 'index.html', md_path.parent)}\">all results</a></nav>"
    out = md_path.parent / out_name
    out.write_text(page(_title(text, md_path.parent.name), body, nav))
    return out


def reports_under(results: Path) -> list[Path]:
    """Every report page under @results but those of a matrix's cells (which the matrix's report
    links), of unfinished cells and of what a store keeps under failed/; an experiment's part, a cell
    its key names (results/<kind>/keys/<key>), has its page listed as a run of its own."""
    parts = runs_named_by_keys(results)
    def listed(p: Path) -> bool:
        where = p.relative_to(results).parts
        if ".partial" in str(p) or "failed" in where:
            return False
        return "cells" not in where or p.parent.resolve() in parts
    return sorted(p for p in results.rglob("report.html") if listed(p))


def write_index(results: Path | None = None) -> Path:
    """results/index.html: every report page, a row each (sslab.analysis.dashboard), per experiment
    (the first folder under results/), newest first (by the time its page was written)."""
    results = Path(results or paths.RESULTS_DIR)
    groups: dict[str, list[Path]] = {}
    for p in reports_under(results):
        groups.setdefault(p.relative_to(results).parts[0], []).append(p)
    rows = [dashboard.row_of(p, results, _title_of(p)) for name in sorted(groups)
            for p in sorted(groups[name], key=lambda p: p.stat().st_mtime, reverse=True)]
    body = dashboard.index_body(rows, results, dashboard.catalogue())
    out = results / "index.html"
    results.mkdir(parents=True, exist_ok=True)
    out.write_text(page("slowstart-lab results", body))
    return out


def _title_of(page_path: Path) -> str:
    m = re.search(r"<title>(.*?)</title>", page_path.read_text(), re.S)
    return html.unescape(m.group(1)) if m else page_path.parent.name


def index_of(where: Path) -> Path | None:
    """results/index.html when @where lies under results/ (else None: a run kept elsewhere is no part
    of this results tree)."""
    if Path(where).resolve().is_relative_to(paths.RESULTS_DIR.resolve()):
        return paths.RESULTS_DIR / "index.html"
    return None


def index_for(where: Path) -> Path | None:
    """results/index.html brought up to date when @where lies under results/ (index_of)."""
    return write_index(paths.RESULTS_DIR) if index_of(where) else None


def publish(md_path: Path, run_dirs: list[Path] | None = None) -> Path:
    """The report's page, and the index over results/ brought up to date when the report is there."""
    out = write_html(md_path, run_dirs)
    index_for(md_path)
    return out
