"""A sides section of a described report (sslab.analysis.runs_report): each run has a side (SUSS off
or on, run back to back in one cell), and per group of its rows a quantity is shown for each side,
mean ±half-width of its 95 % CI over the runs, and, paired by repetition, its difference between the
sides (second - first) with its own CI.

    - show: sides
      heading: Recovery after the fifth flow joins
      rows: [incumbents, buffer, rtt]
      side: side                  # the key whose values are the sides ...
      sides: ["off", "on"]        # ... in this order
      pair_by: rep                # a difference pairs the runs of one value of this key
      metrics:
        - {metric: before, together: true}                   # one column: "off / on"
        - {metric: recovery, difference: true,               # a column per side and on - off
           missing: "not within {observed_s:.0f} s"}         # a run without it, counted

A run without the quantity (None: F never returned to 0.95) is left out of its mean and counted after
it with @missing's words, filled with the least of the named field over those runs.  Nothing here
knows a paper.
"""

from __future__ import annotations

import string
from typing import Literal

from pydantic import Field, model_validator

from ..scenario.model import Strict
from .change_table import natural
from .plugins import Records
from .stats import describe, fmt_mean_ci


class SideMetric(Strict):
    metric: str
    #: Both sides in one column ("0.981 ±0.004 / 0.979 ±0.006"); else a column each.
    together: bool = False
    #: A column of the paired difference, the second side's minus the first's.
    difference: bool = False
    #: Words after the mean for runs without the quantity ("{field}": the least of it over them).
    missing: str | None = None

    def missing_fields(self) -> list[str]:
        return [f for _, f, _, _ in string.Formatter().parse(self.missing or "") if f]


class Sides(Strict):
    show: Literal["sides"]
    heading: str
    rows: list[str] = Field(min_length=1)
    side: str
    sides: list[str] = Field(min_length=2, max_length=2)
    pair_by: str
    metrics: list[SideMetric] = Field(min_length=1)
    order: dict[str, list[str]] = {}

    @model_validator(mode="after")
    def _one_pairing(self):
        if any(m.together and m.difference for m in self.metrics):
            raise ValueError("a metric's difference needs its sides in columns of their own (not together)")
        return self


def _with_missing(m: SideMetric, field: str, runs: list[dict], digits: int) -> str:
    got = [r[field] for r in runs if r[field] is not None]
    lacking = [r for r in runs if r[field] is None]
    text = fmt_mean_ci(describe(got), digits) if got else ""
    if lacking and m.missing:
        words = m.missing.format(**{f: min(r[f] for r in lacking) for f in m.missing_fields()})
        text += f"{' + ' if got else ''}{len(lacking)}× {words}"
    return text or "–"


def _place(s: Sides, group: tuple) -> tuple:
    """A group's place: by each row key in turn, its listed values first (s.order), then natural order."""
    out: list = []
    for k, v in zip(s.rows, group):
        first = s.order.get(k, [])
        out += [first.index(v) if v in first else len(first), natural(v)]
    return tuple(out)


def sides_rows(s: Sides, records: list[dict], reading: Records) -> list[tuple[dict, list[dict]]]:
    """Per group of s.rows, in order: its row (the keys' values, n, each metric's values by side and
    the paired differences) and its runs."""
    fmt = {k: reading.keys[k][1] for k in [*s.rows, s.side, s.pair_by]}
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(fmt[k](r[k]) for k in s.rows), []).append(r)
    first, second = s.sides
    out = []
    for g in sorted(groups, key=lambda g: _place(s, g)):
        runs = groups[g]
        pairs: dict[str, dict[str, dict]] = {}
        for r in runs:
            pairs.setdefault(fmt[s.pair_by](r[s.pair_by]), {})[fmt[s.side](r[s.side])] = r
        row: dict = {**dict(zip(s.rows, g)), "n": len(pairs), "quantities": {}}
        for m in s.metrics:
            field = reading.metrics[m.metric].field
            q: dict = {v: [r[field] for r in runs if fmt[s.side](r[s.side]) == v] for v in s.sides}
            if m.difference:
                q["difference"] = [p[second][field] - p[first][field] for p in pairs.values()
                                   if first in p and second in p
                                   and p[first][field] is not None and p[second][field] is not None]
            row["quantities"][m.metric] = q
        out.append((row, runs))
    return out


def sides_text(s: Sides, rows: list[tuple[dict, list[dict]]], reading: Records) -> str:
    first, second = s.sides
    side_of = reading.keys[s.side][1]
    head = [reading.keys[k][0] for k in s.rows] + ["n"]
    for m in s.metrics:
        label = reading.metrics[m.metric].label
        if m.together:
            head.append(f"{label}, {first} / {second}")
        else:
            head += [f"{label}, {first}", f"{label}, {second}"]
        if m.difference:
            head.append(f"{label}: {second} − {first}")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row, runs in rows:
        cells = [row[k] for k in s.rows] + [str(row["n"])]
        for m in s.metrics:
            metric = reading.metrics[m.metric]
            texts = [_with_missing(m, metric.field, [r for r in runs if side_of(r[s.side]) == v], metric.digits)
                     for v in s.sides]
            cells += [" / ".join(texts)] if m.together else texts
            if m.difference:
                diffs = row["quantities"][m.metric]["difference"]
                cells.append(fmt_mean_ci(describe(diffs), metric.digits) if diffs else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
