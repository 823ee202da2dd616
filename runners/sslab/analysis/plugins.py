"""The papers' plug-ins as the engines see them: reports and claim extractors, by name.

A paper's package (sslab.papers.<paper>) registers its reports (Table 1's, the Astart
paper's tables beside ours, ...) and the extractors its ledger's claims name when it is
imported, as a congestion-control module registers its algorithm with the kernel: the
engines here (the claims, the matrix report, the reports over runs) look them up by
name and name no paper.  sslab.papers imports every paper's package; a layer that reads
a report or judges a claim imports sslab.papers first.

The one report the engines bring themselves is `startup`, each scenario run's own
(sslab.analysis.startup); an experiment file may also describe its report as data
(sslab.analysis.runs_report), which needs no registration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .evidence.base import Measured
from .matrix_kind import MatrixReport


@dataclass(frozen=True)
class Report:
    name: str
    #: What it is, for `sslab experiments` and the errors.
    what: str
    #: For a report over several runs: write(run_dirs, dest) -> dest.  None: per run or per matrix.
    write: Callable[[list[Path], Path], Path] | None = None
    #: A matrix's report, over its cell store (sslab.analysis.matrix_report writes it).
    matrix: MatrixReport | None = None


#: Every report by name: the engines' own, then what the papers register.
REPORTS: dict[str, Report] = {
    "startup": Report("startup", "each scenario run's own tables and plots (FCT, loss, cwnd against time)"),
}
#: Every extractor a ledger's claim may name (`evidence: {extract: NAME}`), as the papers register them.
EXTRACTORS: dict[str, Callable[..., Measured]] = {}


def register_reports(*reports: Report) -> None:
    """Add @reports to REPORTS; a name taken already is refused (two papers, one name)."""
    for report in reports:
        if report.name in REPORTS and REPORTS[report.name] is not report:
            raise ValueError(f"report {report.name!r} registered twice")
        REPORTS[report.name] = report


def register_extractors(extractors: Mapping[str, Callable[..., Measured]]) -> None:
    """Add @extractors to EXTRACTORS; a name taken already is refused."""
    for name, fn in extractors.items():
        if name in EXTRACTORS and EXTRACTORS[name] is not fn:
            raise ValueError(f"claim extractor {name!r} registered twice")
        EXTRACTORS[name] = fn


def matrix_report_of(named: str) -> MatrixReport:
    """The matrix's report a matrix names (one of matrix_report_names())."""
    kind = REPORTS[named].matrix
    if kind is None:
        raise KeyError(f"report {named!r} is not a matrix's")
    return kind


def matrix_report_names() -> tuple[str, ...]:
    """The reports a matrix may name."""
    return tuple(name for name, r in REPORTS.items() if r.matrix is not None)
