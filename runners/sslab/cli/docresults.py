"""The documentation's results page, "Table 1 at a glance", from a snapshot of a real report.

A snapshot (docs/results/table1/) is what one `make reproduce-table1` wrote and a reader of the
site needs: its summary.json (the verdict's counts, the claims, every value with its outcome, the
causes tried), its three answer plots, a picture of its page's first screen and the console's last
lines, with where and when it ran (snapshot.json).  `python -m sslab docs-snapshot REPORT` takes
one; docs/hooks.py renders the page and the home page's summary from it when the site is built, so
the text cannot drift from the numbers.
"""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

from .. import paths
from ..analysis.answer_plots import BOUND_FILE, FILE, SETTINGS_FILE, SUMMARY_FILE
from ..analysis.tidy import table_of
from ..substrate.hostfacts import cpu_info
from .status import Refused

SNAPSHOT_DIR = paths.REPO_ROOT / "docs" / "results" / "table1"
#: The three answer plots every Table 1 report draws, and the one file holding them with the answer.
PLOTS = (FILE, SETTINGS_FILE, BOUND_FILE)
SUMMARY_PDF = SUMMARY_FILE
SCREENSHOT = "first-screen.png"
CONSOLE = "console.txt"
#: The console's ending, as a reader sees it after a run (sslab.analysis.matrix_report's console_ending).
CONSOLE_LINES = 20


def _cells_commit(report: Path) -> str:
    """The git commit the report's cells ran (its flows.csv's 'code' column), or '' if it names none."""
    table = table_of(report)
    if table is None:
        return ""
    with open(table, newline="") as f:
        first = next(csv.DictReader(f), None)
    return (first or {}).get("code") or ""


def _ran_under(report: Path) -> str:
    """The report's "Ran under: ..." line (substrate, clock, host model, SUSS, HyStart), or ''."""
    table = report / "table.md"
    lines = table.read_text().splitlines() if table.is_file() else []
    return next((ln.removeprefix("Ran under: ").rstrip(".") for ln in lines if ln.startswith("Ran under: ")), "")


def take_snapshot(report: Path, command: str, console: Path | None = None,
                  screenshot: Path | None = None, dest: Path = SNAPSHOT_DIR) -> Path:
    """Copy @report's summary.json and answer plots (and @screenshot, and @console's last lines) into
    @dest with snapshot.json: the command that made it, the report's folder, the cells' commit, the
    CPU and the date.  Refused before anything is copied when @report is not a Table 1 report."""
    report = Path(report)
    missing = [n for n in ("summary.json", *PLOTS) if not (report / n).is_file()]
    if missing:
        raise Refused(f"{report} is not a Table 1 report with its answer (no {', '.join(missing)})")
    summary = json.loads((report / "summary.json").read_text())
    if not summary.get("verdict"):
        raise Refused(f"{report}/summary.json has no verdict lines: not a Table 1 report")
    for f in (console, screenshot):
        if f is not None and not Path(f).is_file():
            raise Refused(f"{f}: no such file")
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("summary.json", *PLOTS, *([SUMMARY_PDF] if (report / SUMMARY_PDF).is_file() else [])):
        shutil.copyfile(report / name, dest / name)
    if screenshot is not None:
        shutil.copyfile(screenshot, dest / SCREENSHOT)
    if console is not None:
        tail = Path(console).read_text(errors="replace").rstrip("\n").splitlines()[-CONSOLE_LINES:]
        (dest / CONSOLE).write_text("\n".join(tail) + "\n")
    meta = {"command": command, "report": str(report.resolve()), "commit": _cells_commit(report),
            "ran_under": _ran_under(report), "cpu": cpu_info()[0],
            "taken": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%MZ")}
    (dest / "snapshot.json").write_text(json.dumps(meta, indent=1) + "\n")
    return dest


def _snapshot(where: Path) -> tuple[dict, dict] | None:
    if not (where / "snapshot.json").is_file():
        return None
    return json.loads((where / "snapshot.json").read_text()), json.loads((where / "summary.json").read_text())


def _notebook_links(text: str) -> str:
    """A cause's record names its notebook page as a path; on the site, a link to it."""
    return re.sub(r"docs/notebook/([\w-]+)\.md", r"[notebook/\1](notebook/\1.md)", text)


def results_page(where: Path = SNAPSHOT_DIR, rel: str = "results/table1") -> str:
    """docs/results.md's body from the snapshot in @where (@rel: the snapshot's folder as the page
    links it): the answer, the three plots, the first screen and the console's end, where ours
    differs and why, every value beside the paper's."""
    got = _snapshot(where)
    if got is None:
        return "*No snapshot of a Table 1 report is in the repository yet (`python -m sslab docs-snapshot`).*"
    meta, s = got
    ran = f"  Ran under: {meta['ran_under']}." if meta.get("ran_under") else ""
    out = [f"*From `{meta['command']}` at commit {meta['commit'] or 'unknown'}; the machine's CPU: {meta['cpu']}; "
           f"taken {meta['taken']}.{ran}  Every number below is in the run's summary.json "
           f"([a copy]({rel}/summary.json)).*", "", *s["verdict"], ""]
    claims = s.get("claims") or []
    if claims:
        out += ["**The paper's claims these runs test** (each by its ledger's test, on these runs alone): "
                + "; ".join(f"{c['id']} {c['verdict']}" for c in claims) + ".", ""]
    for alt, name in s.get("answer_plots") or [(n, n) for n in PLOTS]:
        out += [f"![{alt}]({rel}/{name})", "", f"*{alt[0].upper()}{alt[1:]}.*", ""]
    if (where / SUMMARY_PDF).is_file():
        out += [f"The answer and these plots in one file, as the report writes it for a review or a paper: "
                f"[{SUMMARY_PDF}]({rel}/{SUMMARY_PDF}).", ""]
    if (where / SCREENSHOT).is_file():
        out += ["## The report's first screen", "", f"![the report's first screen]({rel}/{SCREENSHOT})", ""]
    if (where / CONSOLE).is_file():
        out += ["## What the console printed last", "", "```", (where / CONSOLE).read_text().rstrip("\n"), "```", ""]
    causes = s.get("causes_md") or []
    if causes:
        out += [_notebook_links(ln) for ln in causes] + [""]
    if s.get("comparisons_md"):
        out += ["## Every paper value beside ours", "", s["comparisons_md"], ""]
    return "\n".join(out)


#: A verdict as the E7 table marks it beside our value.
_MARK = {"reproduced": "✓", "not reproduced": "✗", "not decided": "?"}
#: The E7 table's columns: the paper's five values of a setting, by their short names in summary.json.
E7_COLUMNS = (("large off", "off: large (s)"), ("small off", "off: small (s)"), ("large on", "on: large (s)"),
              ("small on", "on: small (s)"), ("improvement", "improvement"))


def e7_beside_paper(where: Path = SNAPSHOT_DIR) -> str:
    """docs/experiments.md's E7 table: each value the paper prints for Table 1 (its 1 BDP rows and Average
    rows) beside ours from the snapshot, with the verdict on each."""
    got = _snapshot(where)
    if got is None:
        return "*No snapshot of a Table 1 report is in the repository yet (`python -m sslab docs-snapshot`).*"
    meta, s = got
    rows: dict[str, dict[str, dict]] = {}
    for c in s["comparisons"]:
        if not c["derived"] and c["short"] in dict(E7_COLUMNS):
            rows.setdefault(c["where"], {})[c["short"]] = c

    def cell(c: dict | None) -> str:
        if c is None:
            return "–"
        # The paper's value as it printed it (its rounding says to how many digits), ours to 0.01 s or 1 %.
        printed = max(0, round(-math.log10(2 * c["rounding"]))) if c.get("rounding") else 2
        unit = " %" if c["kind"] == "improvement" else ""
        ours = f"{c['ours']:.0f}" if c["kind"] == "improvement" else f"{c['ours']:.2f}"
        return f"{c['paper']:.{printed}f}{unit} / {ours}{unit} {_MARK.get(c['outcome'], c['outcome'])}"

    out = [f"Each cell: the paper's value / ours, and the verdict (✓ reproduced, ✗ not reproduced, ? not decided at "
           f"the n run), from `{meta['command']}` at commit {meta['commit'] or 'unknown'} ({meta['taken'][:10]}; "
           f"the [results page](results.md) has the rule, the plots and the causes tried).", "",
           "| setting | " + " | ".join(name for _, name in E7_COLUMNS) + " |", "|---" * (1 + len(E7_COLUMNS)) + "|"]
    out += [f"| {where} | " + " | ".join(cell(got.get(short)) for short, _ in E7_COLUMNS) + " |"
            for where, got in rows.items()]
    return "\n".join(out)


def results_glance(where: Path = SNAPSHOT_DIR) -> str:
    """The home page's lines: the verdict's counts of the snapshot, and where the rest is."""
    got = _snapshot(where)
    if got is None:
        return "*No snapshot of a Table 1 report is in the repository yet.*"
    meta, s = got
    return "\n".join([f"What `{meta['command']}` reproduced (commit {meta['commit'] or 'unknown'}, "
                      f"{meta['taken'][:10]}; the [results page](results.md) has the plots and why "
                      "values differ):", "", *s["verdict"][1:], ""])
