"""A change section of a described report (sslab.analysis.runs_report): one value of a key (the
baseline: a standard start) against each other value of it, per group and row of other keys, each
quantity's change with Welch's 95 % CI, and the paper's change beside ours with its direction and
verdict (sslab.analysis.verdict).

    change of a quantity   mean with the other value - mean with the baseline, over the runs of the
                           same group and row; its CI by Welch's t (unequal variances)
    marks                  "n.s." when the CI holds 0; the section's own mark (`within:`) when the
                           change is smaller in magnitude than a field of the runs (one base RTT)
    direction              our significant change's sign against the paper's (verdict.direction)
    verdict                the change's size against the paper's (the value rule, kind "change")

Input: the records of a registered reading (sslab.analysis.plugins.RECORDS); the section's spec is
typed here and read with the report's (runs_report).  Nothing here knows a paper.
"""

from __future__ import annotations

import re
import statistics
from typing import Literal

from pydantic import Field

from ..scenario.model import Strict
from .plugins import Records
from .stats import fmt_value, welch_diff
from .verdict import DIRECTIONS, Comparison, direction

class Coarser(Strict):
    """The paper prints values of at least @at_least in magnitude to ±@rounding (FCT changes of a second
    and more in tenths of a second, against whole ms below)."""
    at_least: float = Field(gt=0)
    rounding: float = Field(ge=0)


class Within(Strict):
    """Mark a change smaller in magnitude than the run's @field (in the change's unit) with @mark."""
    field: str
    mark: str


class ChangeMetric(Strict):
    """One quantity of a change section: its means with the baseline and with each other value, and,
    unless @means_only, the change (other - baseline, Welch's 95 % CI), the paper's, its direction and
    verdict."""
    metric: str
    means_only: bool = False
    #: The change's words in the verdicts (summary.json's paper_values, the claims' ids); default
    #: "<label> change".
    what: str | None = None
    #: The change printed times @scale, to @digits, in @unit (an FCT in s as a change in ms: 1000, 0, ms).
    scale: float = 1.0
    digits: int | None = None
    unit: str = ""
    #: The reference row's field holding the paper's change.
    paper: str | None = None
    #: ± of the paper's printed value (its last digit's half), and where it prints coarser.
    rounding: float = Field(default=0.0, ge=0)
    coarser: Coarser | None = None
    within: Within | None = None


class Change(Strict):
    """Per group of @per (a table each, under @heading), a row per group of @rows and value of @of other
    than @baseline: each metric with @baseline against that value, of the same group and row."""
    show: Literal["change"]
    heading: str
    per: list[str] = []
    rows: list[str] = Field(min_length=1)
    of: str
    baseline: str
    metrics: list[ChangeMetric] = Field(min_length=1)
    #: The order of a key's values (those not listed after, in natural order: "0.5x" before "1x").
    order: dict[str, list[str]] = {}


_NUMBER = re.compile(r"^[-+]?\d+(\.\d+)?")


def natural(value: str) -> tuple:
    """A key's value in natural order: by its leading number when it has one ("0.5x" before "1x"
    before "10x"), then by its text."""
    m = _NUMBER.match(value)
    return (0, float(m.group()), value) if m else (1, 0.0, value)


def ordered(values: set[str], first: list[str]) -> list[str]:
    """@values: those in @first in its order, then the others in natural order."""
    return [v for v in first if v in values] + sorted(values - set(first), key=natural)


def _mean(vals: list) -> float | None:
    vals = [v for v in vals if v is not None]
    return statistics.fmean(vals) if vals else None


def rounding_of(m: ChangeMetric, paper: float) -> float:
    """± of the paper's value as printed."""
    return m.coarser.rounding if m.coarser and abs(paper) >= m.coarser.at_least else m.rounding


def what_of(m: ChangeMetric, reading: Records) -> str:
    label = reading.metrics[m.metric].label
    return m.what or f"{label} change" + (f" ({m.unit})" if m.unit else "")


def change_rows(spec: Change, records: list[dict], reading: Records, reference: dict[tuple, dict],
                reference_keys: list[str]) -> list[dict]:
    """One row per group of spec.per, row of spec.rows and value of spec.of other than the baseline
    present in @records, in the section's order; @reference: the paper's rows by the values of
    @reference_keys (the report's reference keys: runs_report.Reference)."""
    def values(key: str, rs: list[dict]) -> list[str]:
        return ordered({str(r[key]) for r in rs}, spec.order.get(key, []))

    def key_groups(keys: list[str], rs: list[dict]) -> list[tuple[dict, list[dict]]]:
        out = [({}, rs)]
        for k in keys:
            out = [({**at, k: v}, [r for r in mine if str(r[k]) == v]) for at, mine in out for v in values(k, mine)]
        return out

    rows = []
    for at, mine in key_groups([*spec.per, *spec.rows], records):
        base = [r for r in mine if str(r[spec.of]) == spec.baseline]
        for other in (v for v in values(spec.of, mine) if v != spec.baseline):
            runs = [r for r in mine if str(r[spec.of]) == other]
            where = {**at, spec.of: other}
            paper = reference.get(tuple(str(where[k]) for k in reference_keys)) if reference_keys else None
            row: dict = {**where, "group": {f: mine[0].get(f) for f in reading.group_fields},
                         "n_baseline": len(base), "n": len(runs), "quantities": {}, "comparisons": []}
            for m in spec.metrics:
                field = reading.metrics[m.metric].field
                q: dict = {"baseline": _mean([r[field] for r in base]), "other": _mean([r[field] for r in runs])}
                if not m.means_only:
                    # Scaled before the difference, so that its CI is in the unit printed.
                    d = welch_diff([r[field] * m.scale for r in base if r[field] is not None],
                                   [r[field] * m.scale for r in runs if r[field] is not None])
                    theirs = paper.get(m.paper) if paper and m.paper else None
                    q.update(change=d, paper=theirs, direction=direction(d["diff"], d["ci95"], theirs),
                             verdict="–")
                    if m.within:
                        bound = _mean([r[m.within.field] for r in runs])
                        q["within"] = d["diff"] is not None and bound is not None and abs(d["diff"]) < bound
                    if theirs is not None and d["diff"] is not None:
                        c = Comparison(" ".join(str(v) for v in where.values()), what_of(m, reading), "change",
                                       d["diff"], float(theirs), min(len(base), len(runs)),
                                       tuple(d["ci95"]) if d["ci95"] else None, rounding=rounding_of(m, float(theirs)))
                        q["verdict"] = c.verdict_text()
                        row["comparisons"].append(c.record())
                row["quantities"][m.metric] = q
            rows.append(row)
    return rows


def _marks(q: dict, m: ChangeMetric) -> str:
    ci = q["change"]["ci95"]
    if ci is None:
        return ""
    marks = ["n.s."] if ci[0] <= 0 <= ci[1] else []
    if m.within and q.get("within"):
        marks.append(m.within.mark)
    return f" ({', '.join(marks)})" if marks else ""


def change_text(spec: Change, rows: list[dict], reading: Records) -> list[tuple[dict, str]]:
    """@spec's tables over its @rows (change_rows), one per group of spec.per, with the values a heading
    may name (the group's keys and reading.group_fields)."""
    keys, of = reading.keys, reading.keys[spec.of][0]
    head = [keys[k][0] for k in spec.rows] + [of, f"n ({spec.baseline}/{of})"]
    for m in spec.metrics:
        metric = reading.metrics[m.metric]
        unit = f" ({metric.unit})" if metric.unit else ""
        head.append(f"{metric.label} {spec.baseline} → {of}{unit}")
        if not m.means_only:
            head += [f"{metric.label} change{f', {m.unit}' if m.unit else ''} (ours)", "paper", "direction", "verdict"]
    out = []
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in spec.per), []).append(r)
    for group, mine in groups.items():
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in mine:
            cells = [keys[k][1](r[k]) for k in spec.rows] + [keys[spec.of][1](r[spec.of]),
                                                              f"{r['n_baseline']}/{r['n']}"]
            for m in spec.metrics:
                q, digits = r["quantities"][m.metric], reading.metrics[m.metric].digits
                cells.append(f"{fmt_value(q['baseline'], digits)} → {fmt_value(q['other'], digits)}")
                if not m.means_only:
                    d = m.digits if m.digits is not None else digits
                    cells += [f"{fmt_value(q['change']['diff'], d, True)}{_marks(q, m)}",
                              "–" if q["paper"] is None else f"{q['paper']:+g}", q["direction"], q["verdict"]]
            lines.append("| " + " | ".join(cells) + " |")
        first = group_record(mine[0], spec.per, reading)
        out.append((first, "\n".join(lines)))
    return out


def group_record(row: dict, per: list[str], reading: Records) -> dict:
    """What a heading may name of @row's group: its keys' values as they read, and the group's fields."""
    named = {k: reading.keys[k][1](row[k]) for k in per}
    for f in reading.group_fields:
        v = row.get("group", {}).get(f)
        named[f] = f"{v:g}" if isinstance(v, float) else str(v)
    return named


def direction_counts(spec: Change, rows: list[dict], reading: Records) -> str:
    """The section's closing lines: how many rows have a paper's value, each compared quantity's
    directions counted, and the rows whose direction disagrees."""
    compared = [r for r in rows if r["comparisons"]]
    parts = [f"Rows with the paper's values: {len(compared)} of {len(rows)}"]
    judged = [m for m in spec.metrics if not m.means_only and m.paper]
    for m in judged:
        ds = [r["quantities"][m.metric]["direction"] for r in compared]
        parts.append(f"{reading.metrics[m.metric].label} directions: "
                     + ", ".join(f"{k} {ds.count(k)}" for k in DIRECTIONS))
    text = "; ".join(parts) + "."
    bad = [(" ".join(str(r[k]) for k in [*spec.per, *spec.rows, spec.of]),
            [reading.metrics[m.metric].label for m in judged if r["quantities"][m.metric]["direction"] == "DISAGREES"])
           for r in compared]
    bad = [(where, labels) for where, labels in bad if labels]
    if bad:
        text += "\n\nDisagreeing: " + "; ".join(f"{w} ({', '.join(ls)})" for w, ls in bad) + "."
    return text
