"""Reports by name: what an experiment file's `report:` may say, and writing one over runs.

Every report is a function of the archive alone: written per run (the
scenario run's own report.md and summary.json, written as the run finishes:
`startup`), over the run directories an experiment's parts' keys name, into
a new directory (every report an experiment file describes:
sslab.analysis.runs_report, the Astart paper's and the Blitzstart report's
too), or over a matrix's cell store (a MatrixReport,
sslab.analysis.matrix_kind, which sslab.analysis.matrix_report writes: Table
1's, fairness's).  `make report` rebuilds any of them from the archive, byte
for byte.  A new report over runs is lines of its experiment file
(runs_report); one that needs Python is its paper's, registered by its
paper's package (sslab.papers; the registry: sslab.analysis.plugins).
"""

from __future__ import annotations

import functools
from pathlib import Path

from . import runs_report
from .claims import append_report_claims
from .html import publish
from .interactive import append_fct_page
from .matrix_described import DescribedMatrixReport
from .plugins import RECORDS, REPORTS, Report
from .tidy import write_flows_table


def report_of(named: str | runs_report.RunsReport) -> Report:
    """The report an experiment file's `report:` names (one of REPORTS) or describes (runs_report: over a
    scenario's runs; matrix_described: over a matrix's cells)."""
    if isinstance(named, str):
        return REPORTS[named]
    if RECORDS[named.records].over == "matrix":
        return Report(named.name, named.what, matrix=DescribedMatrixReport.of(named))
    return Report(named.name, named.what, functools.partial(runs_report.write, named))


def write_over_runs(report: Report, run_dirs: list[Path], dest: Path) -> Path:
    """@report over @run_dirs into @dest (report.md, its tables and plots), its page beside it
    (report.html, linking the runs' captures and traces) and the index over results/; returns @dest."""
    if report.write is None:
        raise ValueError(f"report {report.name!r} is written with each run, not over runs")
    dest = report.write(run_dirs, dest)
    append_report_claims(dest / "report.md", dest)
    write_flows_table(dest, run_dirs)
    append_fct_page(dest / "report.md", f"{report.name}: FCT over repetitions")
    publish(dest / "report.md", run_dirs)
    return dest
