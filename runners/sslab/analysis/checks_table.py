"""A checks section of a described report (sslab.analysis.runs_report), over a matrix's settings: a row
per setting (a value of each of several keys), a column per check its reading registers
(plugins.Records.checks).  A check is what a paper's reading says of one setting's runs in a word or
a figure, beside the paper's row for it where there is one: whether a start made the small flows faster
(a sign test of a paired difference), the drops on either side, how many runs passed their fidelity.

    - show: checks
      intro: "What each setting shows besides its FCTs: ..."   # a paragraph before the table
      rows: [large_cc, buffer, large_rtt]                     # the keys, in the row's order
      paper: rows                                             # the reference's list a check may read
      columns:
        - {check: small_faster, heading: "small flows faster with {on}?"}
        - {check: drops, heading: drops off / on}

A heading may name the starts compared ({off}, {on}).  The settings are listed in the plan's order, a
setting without runs left out; a value reads as the matrix's words for it (a start's name).  A row of
a value shown beside another's paper column (our bbr3 beside the paper's BBRv2) is given that column's
paper row.  Nothing here knows a paper.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..scenario.model import Strict
from .plugins import Records
from .settings_table import SettingsGrid


class CheckColumn(Strict):
    check: str
    heading: str


class Checks(Strict):
    show: Literal["checks"]
    #: Its heading on the page, or none (the table follows the section before it).
    heading: str = ""
    #: A paragraph before the table ({off}, {on}: the starts compared).
    intro: str = ""
    rows: list[str] = Field(min_length=1)
    #: The reference's list of the paper's rows, matched on the keys; none: every check is given None.
    paper: str | None = None
    columns: list[CheckColumn] = Field(min_length=1)


def checks_text(spec: Checks, records: list[dict], reading: Records, reference: dict, matrix: SettingsGrid,
                names: dict[str, str]) -> str:
    """The section's intro and table ("" when no setting has runs)."""
    by: dict[tuple, list[dict]] = {}
    for r in records:
        by.setdefault(tuple(str(r[k]) for k in spec.rows), []).append(r)
    papers = {tuple(str(p[k]) for k in spec.rows): p for p in reference.get(spec.paper, [])} if spec.paper else {}
    head = [reading.keys[k][0] for k in spec.rows] + [c.heading.format(**names) for c in spec.columns]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for setting in dict.fromkeys(tuple(s[k] for k in spec.rows) for s in matrix.planned):
        runs = by.get(setting)
        if not runs:
            continue
        paper = papers.get(tuple(matrix.beside.get(v, v) for v in setting))
        cells = [matrix.labels.get(v, v) for v in setting] + [reading.checks[c.check](runs, paper) for c in spec.columns]
        lines.append("| " + " | ".join(cells) + " |")
    if len(lines) == 2:
        return ""
    return "\n".join(([spec.intro.format(**names), ""] if spec.intro else []) + lines)
