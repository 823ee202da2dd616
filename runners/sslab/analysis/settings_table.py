"""A settings section of a described report (sslab.analysis.runs_report): a row per setting (a value
of each of several keys: a matrix's axes), and per quantity a pair of columns, ours (mean ±half-width
of its 95 % CI over the setting's runs) and the paper's (a row of the reference file's list, matched on
the keys), the row's verdict last (how many of the paper's values ours reproduce: the value rule,
sslab.analysis.verdict); then rows of means over settings beside the paper's means (its Average rows,
or values its rows imply), each judged only where every setting it averages ran.

    - show: settings
      heading: "..."                           # its heading on the page, or none
      rows: [large_cc, buffer, large_rtt]      # the keys, in the row's order
      paper: rows                              # the reference's list of the paper's rows
      columns:
        - {metric: off_small, heading: "small off (s)", kind: fct, rounding: 0.005,
           what: "small flows' mean FCT, {on} off", short: small off, group: "the small flows' FCTs"}
        - {metric: large_change_pct, implied: stability, kind: change, ...}   # no heading: judged, not shown
      means:
        - {per: large_cc, paper: averages, cells: ["average ({buffer})", "{settings} settings"],
           where_text: "{label} Average", about: {buffer: average, large_rtt: average}, group: ...}

A quantity of the reading whose value over several runs is made of other quantities' means (an
improvement: 1 - mean on / mean off) is shown so, with its CI over the runs' own values as an interval
(it need not be centred on ours).  A paper value the reference does not print but implies (the
stability effect from two printed FCTs, a mean the Average rows imply) comes from the reading
(Records.implied), with its own ±.  Nothing here knows a paper.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field, model_validator

from ..scenario.model import Strict
from .plugins import Records
from .stats import ci95, cis_overlap, describe, fmt_mean_ci
from .verdict import NOT_DECIDED, NOT_REPRODUCED, RULE, Comparison, tally, tally_text


class Column(Strict):
    """A quantity beside the paper's value of it."""
    metric: str
    #: Its column pair's heading (ours; the paper's is "paper"); none: judged and counted, not shown.
    heading: str | None = None
    #: The paper's row's field holding it (default: the metric's name) ...
    paper: str | None = None
    #: ... or a value the paper implies from its row (the reading's Records.implied).
    implied: str | None = None
    kind: Literal["fct", "value", "change", "improvement"]
    #: ± of the paper's value as printed (an implied value brings its own).
    rounding: float = Field(default=0.0, ge=0)
    #: The verdict's words: what it is ({on}, {off}: the starts compared), its short name in a row's
    #: list of misses, what the headline counts it under, after a value in a sentence.
    what: str
    short: str
    group: str
    unit: str = ""
    #: After a value in its cell ("%").
    suffix: str = ""


class MeanRows(Strict):
    """Per value of @per, the mean over the settings @where matches (of the paper's grid) beside the
    paper's: a row of the reference's @paper list, or the values the reading implies (@implied)."""
    per: str
    where: dict[str, str] = {}
    paper: str | None = None
    implied: str | None = None
    #: The row's cells after @per's: "{<key>}" the key's values over the settings, "{settings}" their count.
    cells: list[str]
    #: A comparison's place ("{label} Average") and the setting the causes read it as.
    where_text: str
    about: dict[str, str]
    group: str
    #: The verdict cell where the paper's mean is over settings not all run here.
    unjudged: str = "not judged: the paper's mean is over settings not all run here"


class Settings(Strict):
    show: Literal["settings"]
    #: Its heading on the page, or none (a table that is the page's first).
    heading: str = ""
    rows: list[str] = Field(min_length=1)
    paper: str
    columns: list[Column] = Field(min_length=1)
    means: list[MeanRows] = []
    #: What the report's headline calls the values it counts ("Table 1's values"), and its lines (the
    #: columns' and the means' groups) in this order; none given: as they first appear.
    values_called: str = "The paper's values"
    groups: list[str] = []

    @model_validator(mode="after")
    def _groups_listed(self):
        used = [*(c.group for c in self.columns), *(m.group for m in self.means)]
        if self.groups and not set(used) <= set(self.groups):
            raise ValueError(f"group {sorted(set(used) - set(self.groups))[0]!r}: not one of groups {self.groups}")
        return self

    def group_order(self) -> list[str]:
        return self.groups or list(dict.fromkeys([*(c.group for c in self.columns), *(m.group for m in self.means)]))


@dataclass
class SettingRow:
    """A setting's row: its runs, each column's values described, ours, the paper's, the verdicts."""
    setting: dict[str, str]
    records: list[dict]
    stats: dict[str, dict] = field(default_factory=dict)
    ours: dict[str, float] = field(default_factory=dict)
    paper: dict | None = None
    comparisons: list[Comparison] = field(default_factory=list)
    verdict: str = ""
    on_grid: bool = True


@dataclass
class MeanRow:
    """A mean over settings: the value of its key (@key), the settings it averages, ours, the paper's
    (value, ±) per quantity, the verdicts, and the setting the causes read its comparisons as."""
    key: str
    settings: list[SettingRow]
    ours: dict[str, float]
    paper: dict[str, tuple[float, float]] | None
    comparisons: list[Comparison]
    verdict: str
    about: dict[str, str]
    spec: MeanRows


@dataclass
class SettingsGrid:
    """What a settings section reads of a matrix besides its runs: every setting planned (in order), each
    axis's values as the matrix file gives them (the paper's grid; None: every value is), a value's
    words (a start's name), and a value whose rows stand beside another's paper values, not judged by
    them (our bbr3 beside the paper's BBRv2: value -> the paper's)."""
    planned: list[dict[str, str]]
    grid: dict[str, list[str]] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    beside: dict[str, str] = field(default_factory=dict)


def reproduced_count(comparisons: list[Comparison]) -> str:
    """A row's verdict cell: how many of its paper values ours reproduce."""
    return f"{sum(c.reproduced for c in comparisons)} of {len(comparisons)} reproduced"


def reproduced_cell(comparisons: list[Comparison]) -> str:
    """reproduced_count, and the others with their outcome."""
    rest = [c for c in comparisons if not c.reproduced]
    words = {NOT_REPRODUCED: "not", NOT_DECIDED: "undecided"}
    return reproduced_count(comparisons) + (
        "; " + ", ".join(f"{c.short or c.what} {c.difference_text()} ({words[c.outcome]})" for c in rest) if rest else "")


def on_grid(grid: dict[str, list[str]] | None, setting: dict[str, str]) -> bool:
    """Whether every value of @setting is one of @grid's (a matrix file's own values: the paper's grid;
    None, a plan from before they were recorded, holds only the file's values)."""
    return grid is None or all(v in grid.get(k, [v]) for k, v in setting.items())


def _fields(reading: Records, metric: str) -> tuple[str, ...]:
    """The runs' fields ours is made of: the metric's own, or those whose means it takes."""
    m = reading.metrics[metric]
    return m.means_of if m.of_means else (m.field,)


def _of_means(reading: Records, metric: str, means: dict[str, float]) -> float:
    """Ours from the means of _fields."""
    m = reading.metrics[metric]
    return m.of_means(means) if m.of_means else means[m.field]


def _means(fields: tuple[str, ...], records: list[dict]) -> dict[str, float]:
    return {f: statistics.fmean(r[f] for r in records) for f in fields}


def _ours(reading: Records, metric: str, records: list[dict]) -> float:
    """Ours over @records: the mean of the runs' values, or what the metric makes of other means."""
    return _of_means(reading, metric, _means(_fields(reading, metric), records))


def _paper_value(col: Column, row: dict, reading: Records) -> tuple[float, float]:
    if col.implied:
        return reading.implied[col.implied](row)
    return float(row[col.paper or col.metric]), col.rounding


def setting_rows(spec: Settings, records: list[dict], reading: Records, reference: dict, matrix: SettingsGrid,
                 names: dict[str, str]) -> list[SettingRow]:
    """Every planned setting's row, in the plan's order (a setting without runs: no stats)."""
    by: dict[tuple, list[dict]] = {}
    for r in records:
        by.setdefault(tuple(str(r[k]) for k in spec.rows), []).append(r)
    papers = {tuple(str(p[k]) for k in spec.rows): p for p in reference.get(spec.paper, [])}
    out = []
    for setting in list(dict.fromkeys(tuple(s[k] for k in spec.rows) for s in matrix.planned)):
        row = SettingRow(dict(zip(spec.rows, setting)), by.get(setting, []))
        row.on_grid = on_grid(matrix.grid, row.setting)
        out.append(row)
        if not row.records:
            continue
        for col in spec.columns:
            m = reading.metrics[col.metric]
            values = [r[m.field] for r in row.records]
            row.stats[col.metric] = describe(values)
            row.ours[col.metric] = _ours(reading, col.metric, row.records)
        paper_key = tuple(matrix.beside.get(v, v) for v in setting)
        row.paper = papers.get(paper_key)
        if row.paper is None:
            row.verdict = "no paper value" if row.on_grid else "no paper value (beside the paper's grid)"
        elif paper_key != setting:
            row.verdict = _not_judged_beside(setting, paper_key, matrix)
        else:
            where = " ".join(matrix.labels.get(v, v) for v in setting)
            for col in spec.columns:
                value, rounding = _paper_value(col, row.paper, reading)
                row.comparisons.append(Comparison(
                    where, col.what.format(**names), col.kind, row.ours[col.metric], value, len(row.records),
                    ci95([r[reading.metrics[col.metric].field] for r in row.records]),
                    derived=col.implied is not None, rounding=rounding, short=col.short, group=col.group,
                    unit=col.unit))
            row.verdict = reproduced_count(row.comparisons)
    return out


def _not_judged_beside(setting: tuple, paper_key: tuple, matrix: SettingsGrid) -> str:
    theirs = next(p for v, p in zip(setting, paper_key) if v != p)
    return f"not judged: beside {matrix.labels.get(theirs, theirs)}, another algorithm"


def _per_repetition(reading: Records, shown: list[Column], settings: list[SettingRow]) -> list[dict[str, float]]:
    """One value per k-th run of every setting, up to the fewest any has: each quantity's mean over the
    settings' k-th runs (the settings differ, so the spread is over repetitions, not over settings:
    what a CI on the paper's mean row measures)."""
    out = []
    for i in range(min(len(s.records) for s in settings)):
        runs = [s.records[i] for s in settings]
        out.append({c.metric: _of_means(reading, c.metric, _means(_fields(reading, c.metric), runs)) for c in shown})
    return out


def mean_rows(spec: Settings, rows: list[SettingRow], reading: Records, reference: dict, matrix: SettingsGrid,
              names: dict[str, str]) -> list[MeanRow]:
    """Each of the section's means per value of its key, over the settings of the paper's grid that ran."""
    shown = [c for c in spec.columns if c.heading is not None]
    fields = tuple(dict.fromkeys(f for c in shown for f in _fields(reading, c.metric)))
    out = []
    per_values = list(dict.fromkeys(r.setting[m.per] for m in spec.means for r in rows if r.records))
    for value in per_values:
        for m in spec.means:
            ran = [r for r in rows if r.records and r.on_grid and r.setting[m.per] == value
                   and all(r.setting.get(k) == v for k, v in m.where.items())]
            if not ran:
                continue
            # The mean of the settings' means (each setting counts once, whatever its runs).
            setting_means = [_means(fields, r.records) for r in ran]
            means = {f: statistics.fmean(s[f] for s in setting_means) for f in fields}
            ours = {c.metric: _of_means(reading, c.metric, means) for c in shown}
            theirs_key = matrix.beside.get(value, value)
            if m.implied:
                paper = reading.implied_means[m.implied](reference).get(theirs_key)
            else:
                row = next((p for p in reference.get(m.paper or "", []) if str(p[m.per]) == theirs_key), None)
                paper = None if row is None else {c.metric: _paper_value(c, row, reading) for c in shown}
            wanted = [s for s in _grid_settings(spec, matrix, m.per, value) if all(s.get(k) == v for k, v in m.where.items())]
            whole = bool(wanted) and all(any(r.setting == s for r in ran) for s in wanted)
            label = matrix.labels.get(value, value)
            comparisons: list[Comparison] = []
            if paper is None:
                verdict = "no paper value"
            elif theirs_key != value:
                verdict = _not_judged_beside((value,), (theirs_key,), matrix)
            elif not whole:
                verdict = m.unjudged
            else:
                per = _per_repetition(reading, shown, ran)
                for c in shown:
                    v, rounding = paper[c.metric]
                    comparisons.append(Comparison(
                        m.where_text.format(label=label), c.what.format(**names), c.kind, ours[c.metric], v,
                        len(per), ci95([p[c.metric] for p in per]), derived=m.implied is not None,
                        rounding=rounding, short=c.short, group=m.group, unit=c.unit))
                verdict = reproduced_count(comparisons)
            out.append(MeanRow(value, ran, ours, paper, comparisons, verdict, {m.per: value, **m.about}, m))
    return out


def judged(rows: list[SettingRow], means: list[MeanRow]) -> list[tuple[dict[str, str], Comparison]]:
    """Every comparison the section made, in its table's order, with the setting it is about (the causes
    tried read it: sslab.analysis.causes)."""
    return [(r.setting, c) for r in rows for c in r.comparisons] + [(m.about, c) for m in means for c in m.comparisons]


def repetitions(rows: list[SettingRow]) -> int | None:
    """The runs every setting that ran has, when they all have the same (the headline's n)."""
    ns = {len(r.records) for r in rows if r.records}
    return ns.pop() if len(ns) == 1 else None


def _grid_settings(spec: Settings, matrix: SettingsGrid, per: str, value: str) -> list[dict[str, str]]:
    """Every setting of the paper's grid with @per = @value: the product of the grid's values of the
    other keys (none: nothing to judge a mean by)."""
    if matrix.grid is None or any(k not in matrix.grid for k in spec.rows if k != per):
        return []
    settings = [{per: value}]
    for k in spec.rows:
        if k != per:
            settings = [{**s, k: v} for s in settings for v in matrix.grid[k]]
    return [{k: s[k] for k in spec.rows} for s in settings]


def _cell(col: Column, reading: Records, row: SettingRow) -> str:
    m = reading.metrics[col.metric]
    if m.of_means is None:
        return fmt_mean_ci(row.stats[col.metric], m.digits)
    ci = row.stats[col.metric]["ci95"]
    text = f"{row.ours[col.metric]:.{m.digits}f}{col.suffix}"
    return text + (f" [{ci[0]:.{m.digits}f}{col.suffix}, {ci[1]:.{m.digits}f}{col.suffix}]" if ci else "")


def _paper_cell(col: Column, reading: Records, value: float | None, implied: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.{reading.metrics[col.metric].digits}f}{col.suffix}" + (" (implied)" if implied else "")


def settings_text(spec: Settings, rows: list[SettingRow], means: list[MeanRow], reading: Records,
                  matrix: SettingsGrid) -> str:
    shown = [c for c in spec.columns if c.heading is not None]
    head = [reading.keys[k][0] for k in spec.rows] + ["n"]
    lines = ["| " + " | ".join(head) + " | " + " | ".join(f"{c.heading} | paper" for c in shown)
             + " | paper values reproduced |", "|---" * (len(head) + 1 + 2 * len(shown)) + "|"]

    def line(keys: list[str], n: int | str, cells: list[tuple[str, str]], verdict: str) -> str:
        return f"| {' | '.join(keys)} | {n} | " + " | ".join(f"{o} | {p}" for o, p in cells) + f" | {verdict} |"

    for r in rows:
        keys = [matrix.labels.get(v, v) for v in r.setting.values()]
        if not r.records:
            lines.append(line(keys, 0, [("not run yet", "")] + [("", "")] * (len(shown) - 1), ""))
            continue
        paper = [_paper_cell(c, reading, None if r.paper is None else _paper_value(c, r.paper, reading)[0])
                 for c in shown]
        lines.append(line(keys, len(r.records), [(_cell(c, reading, r), p) for c, p in zip(shown, paper)],
                          r.verdict))
    for mr in means:
        spec_m = mr.spec
        fill = {k: ", ".join(sorted({s.setting[k] for s in mr.settings})) for k in spec.rows}
        fill["settings"] = str(len(mr.settings))
        keys = [matrix.labels.get(mr.key, mr.key)] + [c.format(**fill) for c in spec_m.cells]
        cells = [(f"{mr.ours[c.metric]:.{reading.metrics[c.metric].digits}f}{c.suffix}",
                  _paper_cell(c, reading, None if mr.paper is None else mr.paper[c.metric][0],
                              spec_m.implied is not None))
                 for c in shown]
        lines.append(line(keys, sum(len(s.records) for s in mr.settings), cells, mr.verdict))
    return "\n".join(lines)



def kernels_text(spec: Settings, reading: Records, kernels: list[tuple[str, list[SettingRow]]],
                 labels: dict[str, str] | None = None) -> list[str]:
    """The same settings on several kernels (@kernels: each kernel's name and its setting_rows, the first
    the one the others are set beside): a row per setting and kernel with the section's shown columns,
    then, per FCT column, whether its 95 % CI shares a point with the first kernel's (no proof of
    equality, only no evidence against it at this n); under the table, per kernel and FCT column, in how
    many settings (n >= 2 on both) they share one.  A kernel that did not run a setting: its row says so."""
    labels = labels or {}
    shown = [c for c in spec.columns if c.heading is not None]
    fcts = [c for c in shown if c.kind == "fct"]
    first_name = kernels[0][0]
    head = [reading.keys[k][0] for k in spec.rows] + ["kernel", "n"]
    lines = [f"Mean ±95% CI over each setting's repetitions (n); \"overlaps {first_name}\": whether that FCT's "
             f"95% CI shares a point with {first_name}'s (– with n < 2).", "",
             "| " + " | ".join(head + [c.heading or "" for c in shown]
                               + [f"{c.short} overlaps {first_name}" for c in fcts]) + " |",
             "|---" * (len(head) + len(shown) + len(fcts)) + "|"]
    # A row's setting is keyed by spec.rows, in their order (setting_rows), as settings_text reads it.
    by_kernel = [(name, {tuple(r.setting.values()): r for r in rows if r.records}) for name, rows in kernels]
    settings = list(dict.fromkeys(tuple(r.setting.values()) for _, rows in kernels for r in rows))
    tallies: dict[str, dict[str, list[int]]] = {name: {c.metric: [0, 0] for c in fcts} for name, _ in kernels[1:]}
    for setting in settings:
        keys = [labels.get(v, v) for v in setting]
        first: SettingRow | None = None
        for name, rows in by_kernel:
            row = rows.get(setting)
            if row is None:
                lines.append(f"| {' | '.join(keys)} | {name} | 0 | not run |" + " |" * (len(shown) + len(fcts) - 1))
                continue
            first = first or row
            if row is first:
                overlaps = ["(the first)"] * len(fcts)
            else:
                found = [cis_overlap(first.stats[c.metric], row.stats[c.metric]) for c in fcts]
                overlaps = [{True: "yes", False: "NO", None: "–"}[o] for o in found]
                for c, o in zip(fcts, found):
                    if o is not None:
                        tallies[name][c.metric][0] += o
                        tallies[name][c.metric][1] += 1
            cells = [_cell(c, reading, row) for c in shown]
            lines.append(f"| {' | '.join(keys)} | {name} | {len(row.records)} | {' | '.join(cells + overlaps)} |")
    lines.append("")
    for name, by_metric in tallies.items():
        lines.append(f"- {name}: the CIs overlap {first_name}'s, in settings with n ≥ 2 on both: "
                     + ", ".join(f"{c.short} {by_metric[c.metric][0]} of {by_metric[c.metric][1]}" for c in fcts))
    return lines + [""]


def headline(spec: Settings, comparisons: list[Comparison], n: int | None = None) -> list[str]:
    """The report's first lines: per group its outcomes, then the rule; @n the repetitions when every
    setting has the same (at n = 1 the means decide, and the line says so)."""
    at = "" if n is None else (f" at n = {n}" + (" (one repetition: the means decide, no CI)" if n == 1 else ""))
    lines = [f"**{spec.values_called} under the verdict{at}:**", ""]
    lines += [f"- {group}: {tally_text(counts)}" for group, counts in _tallies(spec, comparisons)]
    return lines + ["", f"The rule: {RULE}."]


def headline_counts(spec: Settings, comparisons: list[Comparison]) -> dict[str, dict[str, int]]:
    """The headline as data: each group's tally (summary.json, the claims ledger)."""
    return dict(_tallies(spec, comparisons))


def _tallies(spec: Settings, comparisons: list[Comparison]) -> list[tuple[str, dict[str, int]]]:
    return [(g, tally(mine)) for g in spec.group_order() if (mine := [c for c in comparisons if c.group == g])]


def comparison_table(comparisons: list[Comparison]) -> str:
    """Every paper value beside ours, with the verdict on each."""
    lines = ["| setting | value | ours [95 % CI] | paper | band | difference | verdict |",
             "|---|---|---|---|---|---|---|"]
    for c in comparisons:
        # The band one digit finer than the values: its edges are what the CI is held to.
        fmt, edge = {"fct": (lambda v: f"{v:.2f} s", lambda v: f"{v:.3f} s"),
                     "change": (lambda v: f"{v:+.1f}%", lambda v: f"{v:+.2f}%"),
                     "value": (lambda v: f"{v:.3g}", lambda v: f"{v:.4g}")}.get(
            c.kind, (lambda v: f"{v:.0f}%", lambda v: f"{v:.1f}%"))
        paper = fmt(c.paper) + (" (implied)" if c.derived else "")
        ci = f" [{fmt(c.ci95[0])}, {fmt(c.ci95[1])}]" if c.has_ci else ""
        lo, hi = c.band
        lines.append(f"| {c.where} | {c.what} | {fmt(c.ours)}{ci} | {paper} | {edge(lo)} to {edge(hi)} | "
                     f"{c.difference_text()} | {c.verdict_text()} |")
    return "\n".join(lines)
