"""What a matrix's report is (`report:` of a matrix file, sslab.analysis.matrix_report): one class per
report, in its paper's package (sslab.papers), registered with the others (sslab.analysis.plugins).

A report gives its tables (with the page's introduction to them and what goes into summary.json),
what its flows-over-time plots stand for, and whatever it adds after them; matrix_report writes the
page around them: the title, the selection and the conditions it ran under, the parameters the paper
leaves unstated, the plots, the claims and the cells' wall times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..plan_record import MatrixPlan


@dataclass
class Tables:
    """A report's tables: the markdown table, the summary's fields (`extra`: its rows, a `verdict`,
    `notes`, a `plot`, ...), the sentence that introduces the table, and (a calibration) the lines that
    come before it."""
    table: str
    extra: dict
    intro: str
    before: list[str] = field(default_factory=list)
    #: The calibration's candidates pooled are no evidence for a claim: no claims section then.
    claims: bool = True


@dataclass(frozen=True)
class MatrixReport:
    name: str
    #: The flows-over-time plots: the paper's figure they stand for, which flow of a run is drawn thick
    #: (its index) and what the two kinds of flow are called.
    figure: str
    highlight: int
    flow_names: tuple[str, str]
    #: The flows over time as small multiples: a figure per value of the first axis, a row per value of
    #: the second, a column per value of the third and side (off, on); None: a figure per setting.
    flows_grid: tuple[str, str, str] | None = None

    def tables(self, matrix_dir: Path, plan: MatrixPlan, dest: Path) -> Tables:
        raise NotImplementedError

    def after_plots(self, matrix_dir: Path, extra: dict) -> list[str]:
        """Lines after the flows-over-time plots (none unless the report has some)."""
        return []

    def summary(self, title: str, lines: list[str], extra: dict, dest: Path) -> Path | None:
        """The answer (@lines) and its plots as one file a review or a paper takes, into @dest; None
        unless the report has an answer of that kind."""
        return None

    def settings(self, plan: MatrixPlan) -> tuple | None:
        """The report's settings section (settings_table.Settings) and the reading it is over
        (plugins.Records: the registry of readings imports this module, so no type here), when
        it has one: what the same matrix on several kernels is set side by side by (None: each kernel's
        own report follows, nothing before them)."""
        return None

    def summary_fields(self, matrix_dir: Path, plan: MatrixPlan) -> dict:
        """The summary's fields recomputed from a matrix's archive ({} by default): the headline a
        ledger's paper-value counts show."""
        return {}
