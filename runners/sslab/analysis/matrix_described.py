"""A matrix's report described in its experiment file (`report:` a mapping, as a report over runs is:
sslab.analysis.runs_report), over a paper's reading of the matrix's cells (`records:` a reading over
a matrix, registered by the paper: sslab.analysis.plugins.RECORDS):

    report:
      name: fairness
      what: ...
      title: "E6 fairness (SUSS paper, Fig. 15)"
      records: fairness                       # papers/suss/fairness.py: a record per run of every cell
      intro: "Jain's index F over 1 s windows ... off = {off}, on = {on}."   # the matrix's two starts
      flows: {figure: Fig. 2, highlight: -1, names: [the new flow, the running flows]}
      figure: jain                            # a figure the paper draws (plugins.FIGURES)
      sections:
        - {show: sides, heading: ..., rows: [incumbents, buffer, rtt], side: side, sides: ["off", "on"], ...}

matrix_report writes the page around it as around any matrix's report (sslab.analysis.matrix_kind):
the title, the selection, the conditions, the claims, the flows over time, the cells' wall times.
report_kind finds a matrix's report by its plan: registered by a paper, or described in the file the
plan names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import paths
from ..plan_record import MatrixPlan
from .archive import cell_timing, current_cells, overhead_table
from .causes import causes_md, load_causes
from .checks_table import Checks, checks_text
from .matrix_kind import MatrixReport, Tables
from .plugins import FIGURES, RECORDS, REPORTS, Records
from .runs_report import RunsReport
from .settings_table import (Settings, SettingsGrid, comparison_table, headline, headline_counts, judged,
                             kernels_text, mean_rows, repetitions, setting_rows, settings_text)
from .sides_table import Sides, sides_rows, sides_text
from .value_table import Means, Values, means_text, values_rows, values_text
from .verdict import RULE, RULE_RECORD, Comparison, tally


@dataclass(frozen=True)
class DescribedMatrixReport(MatrixReport):
    spec: RunsReport = field(default=None)  # type: ignore[assignment]

    @classmethod
    def of(cls, spec: RunsReport) -> "DescribedMatrixReport":
        flows = spec.flows
        return cls(spec.name, flows.figure, flows.highlight, tuple(flows.names),
                   tuple(flows.grid) if flows.grid else None, spec=spec)

    def tables(self, matrix_dir: Path, plan: MatrixPlan, dest: Path) -> Tables:
        spec = self.spec
        reading = RECORDS[spec.records]
        records = reading.load(matrix_dir, plan)
        # The matrix's two compared starts, as headings, intros and a settings section's words name them.
        names = {"off": plan.compare.get("off", ""), "on": plan.compare.get("on", "")}
        parts, extra = [], {}
        # The paper's values a settings section judged: the headline, every value, the causes tried.
        comparisons: list[Comparison] = []
        about: list[tuple[dict, Comparison]] = []
        verdict: list[str] = []
        for section in spec.sections:
            if isinstance(section, Sides):
                rows = sides_rows(section, records, reading)
                body = sides_text(section, rows, reading)
                extra.setdefault("rows", []).extend(row for row, _ in rows)
            elif isinstance(section, Values):
                rows = values_rows(section, records, reading, spec.reference.mappings()[section.paper])
                body = values_text(section, rows, reading)
                extra.setdefault("paper_tables", {})[section.paper] = rows
            elif isinstance(section, Settings):
                matrix = settings_grid(plan)
                ref = spec.reference.data()
                rows = setting_rows(section, records, reading, ref, matrix, names)
                means = mean_rows(section, rows, reading, ref, matrix, names)
                body = settings_text(section, rows, means, reading, matrix)
                pairs = judged(rows, means)
                if pairs:
                    mine = [c for _, c in pairs]
                    verdict += headline(section, mine, repetitions(rows))
                    extra.setdefault("headline", {}).update(headline_counts(section, mine))
                    comparisons += mine
                    about += pairs
            elif isinstance(section, Checks):
                body = checks_text(section, records, reading, spec.reference.data() if spec.reference else {},
                                   settings_grid(plan), names)
            else:
                assert isinstance(section, Means)
                body = means_text(section, records, reading)
            parts.append(f"## {section.heading}\n\n{body}" if section.heading else body)
        if spec.figure:
            drawn = FIGURES[spec.figure](matrix_dir, plan, dest)
            extra["plot"] = drawn.name if drawn else None
        extra["records"] = records
        if comparisons:
            extra.update({"verdict": verdict, "verdict_rule": {**RULE_RECORD, "text": RULE},
                          "comparisons": [c.record() for c in comparisons],
                          "comparisons_md": comparison_table(comparisons), "paper_outcomes": tally(comparisons),
                          "causes_md": causes_md(load_causes(plan.reference or plan.matrix), about)})
        extra["overhead_md"] = overhead_table([cell_timing(c, d) for c, d in current_cells(matrix_dir, plan)])
        intro = spec.intro.format(**names)
        return Tables("\n\n".join(parts), extra, intro)

    def settings(self, plan: MatrixPlan) -> tuple[Settings, Records] | None:
        section = self.spec.section(Settings)
        return None if section is None else (section, RECORDS[self.spec.records])  # type: ignore[return-value]


def kernels_table(kernels: list[tuple[str, Path, MatrixPlan]]) -> list[str]:
    """The same matrix on several kernels (@kernels: each one's name, matrix directory and plan, the
    first the one the others are set beside), a row per setting and kernel by the report's settings
    section (settings_table.kernels_text); nothing when the report has none or the kernels' plans name
    different reports."""
    if not kernels or len({plan.report for _, _, plan in kernels}) != 1:
        return []
    found = report_kind(kernels[0][2]).settings(kernels[0][2])
    if found is None:
        return []
    spec, reading = found
    rows = [(name, setting_rows(spec, reading.load(d, plan), reading, {}, settings_grid(plan), {}))
            for name, d, plan in kernels]
    return kernels_text(spec, reading, rows, dict(kernels[0][2].labels))


def settings_grid(plan: MatrixPlan) -> SettingsGrid:
    """What a settings section reads of a matrix's plan: its settings, its file's grid, its values' words,
    the values shown beside another's paper values."""
    return SettingsGrid([c.setting for c in plan.cells], plan.axis_values, dict(plan.labels),
                        {value: b["column"] for value, b in plan.paper_beside.items()})


def described_in(matrix_file: str | Path) -> RunsReport | None:
    """The report the experiment file @matrix_file (from the repository's root) describes, if it does."""
    path = paths.REPO_ROOT / matrix_file
    if not path.is_file():
        return None
    report = (yaml.safe_load(path.read_text()) or {}).get("report")
    return RunsReport.model_validate(report) if isinstance(report, dict) else None


def report_kind(plan: MatrixPlan) -> MatrixReport:
    """A matrix's report by its plan: the one a paper registered under the plan's report name, else the
    one the plan's matrix file describes."""
    registered = REPORTS.get(plan.report)
    if registered is not None and registered.matrix is not None:
        return registered.matrix
    spec = described_in(plan.matrix_file) if plan.matrix_file else None
    if spec is None or spec.name != plan.report:
        raise KeyError(f"report {plan.report!r}: neither a paper's matrix report nor described in "
                       f"{plan.matrix_file or 'a matrix file'}")
    return DescribedMatrixReport.of(spec)
