"""The papers' plug-ins as the engines see them: reports and claim extractors, by name.

A paper's package (sslab.papers.<paper>) registers its reports (Table 1's, the Astart
paper's tables beside ours, ...) and the extractors its ledger's claims name when it is
imported, as a congestion-control module registers its algorithm with the kernel: the
engines here (the claims, the matrix report, the reports over runs) look them up by
name and name no paper.  sslab.papers imports every paper's package; a layer that reads
a report or judges a claim imports sslab.papers first.

The one report the engines bring themselves is `startup`, each scenario run's own
(sslab.analysis.startup); an experiment file may also describe its report as data
(sslab.analysis.runs_report), which needs no registration of its own: it reads one
record per run through a reading registered here (RECORDS: the engines' `last hop`, a
paper's own), and shows the quantities that reading names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .evidence.base import Measured
from .matrix_kind import MatrixReport


@dataclass(frozen=True)
class Metric:
    """A per-run quantity a report may show: the run record's field, a column's words, its digits."""
    field: str
    label: str
    digits: int
    #: Shown times this (a fraction as a percentage).
    scale: float = 1.0
    #: After a value in a sentence or a column's heading ("0.412 s").
    unit: str = ""
    #: Over several runs, not the mean of the runs' own values but this of the means of @means_of
    #: (an improvement: 1 - mean FCT on / mean FCT off), by field.
    of_means: Callable[[dict[str, float]], float] | None = None
    means_of: tuple[str, ...] = ()


@dataclass(frozen=True)
class Records:
    """How a report described as data reads its runs: one record (a dict) per run of a run directory,
    the fields a section may group by, and the quantities it may show."""
    name: str
    load: Callable[[Path], list[dict]]
    #: A field a section may group by: its column's heading and how a value reads.
    keys: Mapping[str, tuple[str, Callable[[object], str]]]
    metrics: Mapping[str, Metric]
    #: Fields the same for every run of one value of a key (a link's rate beside its name), which a
    #: heading may name besides the keys.
    group_fields: tuple[str, ...] = ()
    #: What load reads: a run directory of a scenario ("runs": load(run_dir)), or a matrix's current
    #: cells' runs ("matrix", a matrix's report: load(matrix_dir, plan)).
    over: str = "runs"
    #: Values the paper implies without printing them, by name: from a row of its reference (value, ±),
    #: and (implied_means) from its whole reference, per value of a key, per metric.
    implied: Mapping[str, Callable[[dict], tuple[float, float]]] = field(default_factory=dict)
    implied_means: Mapping[str, Callable[[dict], dict[str, dict[str, tuple[float, float]]]]] = \
        field(default_factory=dict)
    #: What a checks section may say of a setting, by name: from the setting's records and the paper's
    #: row for it (None: no paper row), a cell's text (sslab.analysis.checks_table).
    checks: Mapping[str, Callable[[list[dict], dict | None], str]] = field(default_factory=dict)

    def check_keys(self, keys: list[str]) -> None:
        """ValueError for the first of @keys a section may not group these records by."""
        for k in keys:
            if k not in self.keys:
                raise ValueError(f"{k!r}: records {self.name!r} group by one of {', '.join(self.keys)}")

    def check_metrics(self, metrics: list[str]) -> None:
        """ValueError for the first of @metrics these records do not have."""
        for m in metrics:
            if m not in self.metrics:
                raise ValueError(f"metric {m!r}: records {self.name!r} have {', '.join(self.metrics)}")


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
#: Every reading of runs a described report may name (`records:`), the engines' and the papers'.
RECORDS: dict[str, Records] = {}
#: A matrix's figure a paper draws (a described matrix report's `figure:`): draw(matrix_dir, plan, dest)
#: -> the file written into dest, or None when there is nothing to draw.
FIGURES: dict[str, Callable[..., Path | None]] = {}
#: Every extractor a ledger's claim may name (`evidence: {extract: NAME}`), as the papers register them.
EXTRACTORS: dict[str, Callable[..., Measured]] = {}


def register_reports(*reports: Report) -> None:
    """Add @reports to REPORTS; a name taken already is refused (two papers, one name)."""
    for report in reports:
        if report.name in REPORTS and REPORTS[report.name] is not report:
            raise ValueError(f"report {report.name!r} registered twice")
        REPORTS[report.name] = report


def register_records(*readings: Records) -> None:
    """Add @readings to RECORDS; a name taken already is refused."""
    for r in readings:
        if r.name in RECORDS and RECORDS[r.name] is not r:
            raise ValueError(f"records {r.name!r} registered twice")
        RECORDS[r.name] = r


def register_figures(figures: Mapping[str, Callable[..., Path | None]]) -> None:
    """Add @figures to FIGURES; a name taken already is refused."""
    for name, fn in figures.items():
        if name in FIGURES and FIGURES[name] is not fn:
            raise ValueError(f"figure {name!r} registered twice")
        FIGURES[name] = fn


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
