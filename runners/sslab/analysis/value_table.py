"""Two section kinds of a described report (sslab.analysis.runs_report) over a paper's reading of runs:

    values   a quantity of ours per value of a key (an axis: RTT, capacity; or a start), the paper's
             value beside it from a mapping of its reference file, and the verdict (the value rule,
             sslab.analysis.verdict); with `trend:`, whether ours moves along the axis as the paper's
             does, row to row
    means    a quantity's mean per value of a key (the rows) and of another (the columns: the starts)

Each takes the runs its `where:` matches (fields of the record equal to the values given: the
Astart paper's Table 1 is NewReno's runs at 40 Mbit/s and a buffer of one BDP, over RTT).  A heading
may name a field of those runs: one value as it reads, several as their range ("20-60").  Nothing
here knows a paper.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import Field

from ..scenario.model import Strict
from .change_table import ordered
from .plugins import Records
from .stats import describe, fmt_value
from .verdict import Comparison


class Values(Strict):
    show: Literal["values"]
    heading: str
    #: The runs shown: each field of a record equal to the value given.
    where: dict[str, str | float | int] = {}
    rows: str
    metric: str
    #: The mapping of the report's reference file that holds the paper's value of each row.
    paper: str
    #: ± of the paper's values as printed.
    rounding: float = Field(ge=0)
    #: The verdicts' words: where ({row}: the row's value as it reads) and what (the quantity's unit).
    comparison: str
    what: str
    #: A column: does ours move from the row before as the paper's does?
    trend: bool = False
    order: list[str] = []
    #: How a row's value reads (a start's name in words), where not as the reading says.
    labels: dict[str, str] = {}


class Means(Strict):
    show: Literal["means"]
    heading: str
    where: dict[str, str | float | int] = {}
    rows: str
    columns: str
    metrics: list[str] = Field(min_length=1)
    order: dict[str, list[str]] = {}
    labels: dict[str, str] = {}


def chosen(records: list[dict], where: dict) -> list[dict]:
    """The records whose fields equal @where's values (numbers as numbers, anything else as text)."""
    def same(v, want) -> bool:
        if isinstance(want, (int, float)) and not isinstance(want, bool):
            return isinstance(v, (int, float)) and float(v) == float(want)
        return str(v) == str(want)
    return [r for r in records if all(k in r and same(r[k], v) for k, v in where.items())]


def span(records: list[dict], field: str) -> str:
    """@field over @records as a heading says it: its one value, its range, or – without any."""
    vals = sorted({r[field] for r in records if r.get(field) is not None})
    if not vals:
        return "–"
    text = [f"{v:g}" if isinstance(v, float) else str(v) for v in (vals[0], vals[-1])]
    return text[0] if len(vals) == 1 else f"{text[0]}-{text[1]}"


def heading(text: str, records: list[dict], fields: list[str]) -> str:
    return text.format(**{f: span(records, f) for f in fields})




def values_rows(spec: Values, records: list[dict], reading: Records, paper: dict) -> list[dict]:
    """Per row (ours and the paper's together): our values over its runs, described, the paper's, and
    the comparison's record (when both are there)."""
    mine = chosen(records, spec.where)
    m = reading.metrics[spec.metric]
    fmt = reading.keys[spec.rows][1]
    ours: dict[str, list] = {}
    for r in mine:
        ours.setdefault(fmt(r[spec.rows]), []).append(r[m.field])
    theirs = {fmt(float(k)) if isinstance(k, (int, float)) else str(k): v for k, v in paper.items()}
    out = []
    for row in ordered(set(ours) | set(theirs), spec.order):
        values = [v for v in ours.get(row, []) if v is not None]
        d = describe(values)
        entry = {"row": row, "n": d["n"], "mean": d["mean"], "ci95": d["ci95"], "paper": theirs.get(row),
                 "comparison": None}
        if d["mean"] is not None and entry["paper"] is not None:
            where = spec.comparison.format(row=spec.labels.get(row, row))
            c = Comparison(where, spec.what, "value", d["mean"], float(entry["paper"]), d["n"],
                           tuple(d["ci95"]) if d["ci95"] else None, rounding=spec.rounding)
            entry["comparison"] = c.record()
        out.append(entry)
    return out


def _trend(prev: dict | None, row: dict, digits: int) -> str:
    """Ours from the row before to this one against the paper's: agrees, DISAGREES, ours flat (the
    same to the digits shown where the paper's moved), or – without both on both rows."""
    if prev is None or row["mean"] is None or row["paper"] is None or prev["paper"] is None:
        return "–"
    if round(row["mean"], digits) == round(prev["mean"], digits) and row["paper"] != prev["paper"]:
        return "ours flat"
    return "agrees" if (row["mean"] < prev["mean"]) == (row["paper"] < prev["paper"]) else "DISAGREES"


def values_text(spec: Values, rows: list[dict], reading: Records) -> str:
    m = reading.metrics[spec.metric]
    head = [reading.keys[spec.rows][0], f"ours ({m.unit})" if m.unit else f"{m.label} (ours)", "paper", "reproduced?"]
    if spec.trend:
        head.append("direction of change along the axis")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    prev = None
    for r in rows:
        c = r["comparison"]
        cells = [spec.labels.get(r["row"], r["row"]), fmt_value(r["mean"], m.digits), "–" if r["paper"] is None else f"{r['paper']:g}",
                 Comparison.from_record(c).verdict_text() if c else "–"]
        if spec.trend:
            cells.append(_trend(prev, r, m.digits))
        lines.append("| " + " | ".join(cells) + " |")
        if r["mean"] is not None:
            prev = r
    return "\n".join(lines)


def means_text(spec: Means, records: list[dict], reading: Records) -> str:
    mine = chosen(records, spec.where)
    rfmt, cfmt = reading.keys[spec.rows][1], reading.keys[spec.columns][1]
    cols = ordered({cfmt(r[spec.columns]) for r in mine}, spec.order.get(spec.columns, []))
    rows = ordered({rfmt(r[spec.rows]) for r in mine}, spec.order.get(spec.rows, []))
    metrics = [reading.metrics[x] for x in spec.metrics]
    head = [reading.keys[spec.rows][0]] + [f"{spec.labels.get(c, c)}: {m.label}" + (f" ({m.unit})" if m.unit else "")
                                           for c in cols for m in metrics]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row]
        for c in cols:
            runs = [r for r in mine if rfmt(r[spec.rows]) == row and cfmt(r[spec.columns]) == c]
            for m in metrics:
                vals = [r[m.field] for r in runs if r[m.field] is not None]
                cells.append(fmt_value(statistics.fmean(vals) if vals else None, m.digits))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
