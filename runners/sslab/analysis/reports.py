"""Reports by name: what an experiment file's `report:` may say.

Every report is a function of the archive alone: written per run (the
scenario run's own report.md and summary.json, written as the run finishes:
`startup`), over the run directories an experiment's parts' keys name, into
a new directory (`astart`, `blitzstart`, and every report an experiment file
describes: sslab.analysis.runs_report), or over a matrix's cell store
(`table1`, `fairness`: a MatrixReport, sslab.analysis.matrix_kind, which
sslab.analysis.matrix_report writes; the matrix file names its report too,
and the experiment file must name the same).  `make report` rebuilds any of
them from the archive, byte for byte.  A new report over runs is lines of its
experiment file (runs_report); one that needs Python is a writer in this
package, or a MatrixReport in a module of its own, and a line here: this is
the one registry of reports.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import astart, blitzstart, runs_report
from .claims import append_report_claims
from .fairness import FAIRNESS
from .html import publish
from .interactive import append_fct_page
from .matrix_kind import MatrixReport
from .table1_report import TABLE1
from .tidy import write_flows_table


@dataclass(frozen=True)
class Report:
    name: str
    #: What it is, for `sslab experiments` and the errors.
    what: str
    #: For a report over several runs: write(run_dirs, dest) -> dest.  None: per run or per matrix.
    write: Callable[[list[Path], Path], Path] | None = None
    #: A matrix's report, over its cell store (sslab.analysis.matrix_report writes it).
    matrix: MatrixReport | None = None


REPORTS: dict[str, Report] = {r.name: r for r in (
    Report("startup", "each scenario run's own tables and plots (FCT, loss, cwnd against time)"),
    Report("astart", "the Astart paper's tables and figures beside ours (E8)", astart.write_report),
    Report("blitzstart", "the Blitzstart report's Table 1 beside ours (E9)", blitzstart.write_report),
    Report("table1", "Table 1's layout: per setting the large flow's FCT and the small flows' mean FCT, SUSS off "
           "and on, with 95 % CIs, claim checks and the paper's values beside ours; every flow's goodput over time "
           "per setting, the paper's Fig. 16 (E7)", matrix=TABLE1),
    Report("fairness", "Jain's index of goodput over time, SUSS off and on, and how long it takes to return to "
           "0.95 after the fifth flow joins; every flow's goodput over time per setting, the paper's Fig. 2 (E6)",
           matrix=FAIRNESS),
)}

#: The reports a matrix file may name.
MATRIX_REPORT_NAMES = tuple(name for name, r in REPORTS.items() if r.matrix is not None)


def report_of(named: str | runs_report.RunsReport) -> Report:
    """The report an experiment file's `report:` names (one of REPORTS) or describes (runs_report)."""
    if isinstance(named, str):
        return REPORTS[named]
    return Report(named.name, named.what, functools.partial(runs_report.write, named))


def matrix_report_of(named: str) -> MatrixReport:
    """The matrix's report a matrix file's `report:` names (one of MATRIX_REPORT_NAMES)."""
    kind = REPORTS[named].matrix
    if kind is None:
        raise KeyError(f"report {named!r} is not a matrix's")
    return kind


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
