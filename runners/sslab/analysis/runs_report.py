"""A report over runs, written from the experiment file's own description of it.

An experiment file's `report:` is either the name of a report written in Python (sslab.analysis.
reports) or a description, read here, of what to show over its runs (one record per run:
sslab.analysis.lastmile.load_setting):

    report:
      name: wifi                             # the report's name (results/<output>/reports/, the plan)
      title: "E2: ..."                       # the page's first heading
      intro: "Mean ±half-width of ..."       # the words under it; {suss_legend}, {baseline} filled in
      order: [cubic_ss, cubic_hs, ...]       # the variants' order in tables and legends (others after)
      sections:                              # in this order, each under its heading
        - {show: table, heading: "{link}, wired RTT {rtt_ms} ms", per: [link, rtt_ms], rows: [size],
           metrics: [fct, lost]}             # a table a (per) group, a row a (rows) group, a column
                                             # a variant and metric (lastmile.METRICS)
        - {show: link traits, heading: ...}  # the link as measured (lastmile.link_traits)
        - {show: improvement, heading: ..., baseline: cubic_hs, against: cubic_suss}   # (off - on) / off
        - {show: headline, heading: ..., at_least: 0.20, sizes_under: 5MB, rtt_over_ms: 50}
        - {show: ranking, heading: ..., lines: [{text: ..., metric: lost, order: most first}]}
      plots: [{plot: against size, metric: fct, file: ..., ylabel: ..., title: ...},
              {plot: fct and improvement}, {plot: dynamics}, {plot: link run}]

A record per run is the engines' reading of one flow over a last hop (`records: last hop`, the
default: every section and plot above), or a reading a paper's package registers (sslab.analysis.
plugins.RECORDS), over which a report shows change sections (sslab.analysis.change_table):

      records: blitzstart                    # E9's runs: link, size, start; fct, lost, fairness
      reference: {file: results/reference/blitzstart.yaml, keys: {link: link, size: size, start: hint}}
      sections:
        - {show: change, heading: "{link}: {rate_mbit} Mbit/s", per: [link], rows: [size], of: start,
           baseline: std, metrics: [{metric: fct, scale: 1000, unit: ms, paper: fct_change_ms}]}
      notes: "Where our setting differs from the paper's ..."   # after everything else

So a new report over an experiment's runs, grouped and shown another way, is lines of its file;
Python only for a quantity or a check that is new (a Metric of a reading, a section kind here).
The report's summary.json holds every group's rows (`sizes`), each section's own data (`changes`,
`paper_tables`), with a reference every comparison with the paper (`paper_values`, which its ledger
reads), and over a paper's reading every run's record (`records`, which its extractors read).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator, model_validator

from ..records import stamped
from ..scenario import parse_size
from ..scenario.model import Strict
from . import lastmile
from .change_table import Change, change_rows, change_text, direction_counts
from .checks_table import Checks
from .conditions import conditions_of
from .plots import plot_dynamics
from .plugins import FIGURES, RECORDS, Records, register_records
from .settings_table import Settings
from .sides_table import Sides, sides_rows, sides_text
from .value_table import Means, Values, chosen as _chosen, heading, means_text, values_rows, values_text
from .verdict import Comparison, count_line

#: A field of a run's record a table may group by, with its column's heading and how a value reads.
KEYS: dict[str, tuple[str, object]] = {
    "link": ("link", str),
    "rtt_ms": ("RTT (ms)", lambda v: f"{v:g}"),
    "size": ("size", lastmile.size_text),
    "cc": ("variant", str),
}


#: What a report's intro may name: the SUSS versions' legend and an improvement's baseline (over a
#: scenario's runs); a matrix's two compared starts (over its cells).
INTRO_NAMES = ("suss_legend", "baseline", "off", "on")
#: The sections a report over any reading may show (the others are over the last hop's records).
OVER_ANY = (Change, Values, Means, Sides, Settings, Checks)
#: The engines' own reading of runs: one flow a run over a last hop (lastmile.load_setting).
LAST_HOP = "last hop"
register_records(Records(LAST_HOP, lastmile.load_setting, KEYS, lastmile.METRICS))


def _metric(v: str) -> str:
    if v not in lastmile.METRICS:
        raise ValueError(f"metric {v!r}: one of {', '.join(lastmile.METRICS)}")
    return v


def _key(v: str) -> str:
    if v not in KEYS or v == "cc":
        raise ValueError(f"{v!r}: group by one of {', '.join(k for k in KEYS if k != 'cc')}")
    return v


class Table(Strict):
    """Per group of @per (a table each, under @heading with the group's values filled in), a row per
    group of @rows, a column per variant and metric."""
    show: Literal["table"]
    heading: str
    per: list[str] = []
    rows: list[str] = Field(min_length=1)
    metrics: list[str] = Field(min_length=1)

    _per = field_validator("per", "rows")(lambda cls, v: [_key(k) for k in v])
    _metrics = field_validator("metrics")(lambda cls, v: [_metric(m) for m in v])

    @model_validator(mode="after")
    def _heading_names(self):
        try:
            self.heading.format(**{k: "" for k in self.per})
        except (KeyError, IndexError) as e:
            raise ValueError(f"heading {self.heading!r} names {e}, not one of per: {self.per}") from None
        return self


class LinkTraits(Strict):
    """The links as measured (bursts at the client, rate against the trace, the queue)."""
    show: Literal["link traits"]
    heading: str


class Improvement(Strict):
    """(off - on) / off of the mean FCT per link, RTT and size: off the variant @baseline, on each
    variant whose label starts with @against (each SUSS version run).  (Not `off:` and `on:`: YAML
    reads those words as booleans.)"""
    show: Literal["improvement"]
    heading: str
    baseline: str
    against: str


class Headline(Strict):
    """A claim of the paper's kind, with its verdict: every size under @sizes_under improves by more
    than @at_least (a fraction) at every RTT over @rtt_over_ms (needs an improvement section)."""
    show: Literal["headline"]
    heading: str
    at_least: float = Field(gt=0, lt=1)
    sizes_under: int
    rtt_over_ms: float = Field(ge=0)

    _size = field_validator("sizes_under", mode="before")(lambda cls, v: parse_size(v))


class RankLine(Strict):
    """One sentence: @text, then every variant's mean @metric, most or least first."""
    text: str
    metric: str
    order: Literal["most first", "least first"]
    #: Only transfers of at most this size (default: all).
    sizes_up_to: int | None = None
    #: Its values' name in summary.json.
    key: str

    _metric = field_validator("metric")(lambda cls, v: _metric(v))
    _size = field_validator("sizes_up_to", mode="before")(lambda cls, v: v if v is None else parse_size(v))


class Ranking(Strict):
    show: Literal["ranking"]
    heading: str
    lines: list[RankLine] = Field(min_length=1)


Section = Annotated[Union[Table, LinkTraits, Improvement, Headline, Ranking, Change, Values, Means, Sides,
                          Settings, Checks],
                    Field(discriminator="show")]


class Reference(Strict):
    """The paper's values as data, a file of the repository: its `rows:` (mappings, matched to a change
    section's rows by @keys: our key -> the row's field), or mappings of its own by a row's value (a
    values section names one)."""
    file: str
    keys: dict[str, str] = {}

    @field_validator("file")
    @classmethod
    def _exists(cls, v: str) -> str:
        from ..paths import REPO_ROOT
        if not (REPO_ROOT / v).is_file():
            raise ValueError(f"reference {v!r}: no such file in the repository")
        return v

    def data(self) -> dict:
        import yaml
        from ..paths import REPO_ROOT
        return yaml.safe_load((REPO_ROOT / self.file).read_text()) or {}

    def mappings(self) -> dict[str, dict]:
        """The file's mappings by name (a values section's `paper:`)."""
        return {k: v for k, v in self.data().items() if isinstance(v, dict)}

    def rows(self) -> dict[tuple, dict]:
        """The file's rows by our keys' values (in the order of @keys); {} without keys."""
        if not self.keys:
            return {}
        return {tuple(str(r[field]) for field in self.keys.values()): r for r in self.data()["rows"]}


class Flows(Strict):
    """A matrix's flows-over-time plots (sslab.analysis.matrix_kind.MatrixReport's fields): the paper's
    figure they stand for, the flow drawn thick (its index), the two kinds of flow's names, and the
    small multiples' axes (a figure per value of the first, a row per the second's, a column per the
    third's and side), or none (a figure per setting)."""
    figure: str
    highlight: int
    names: list[str] = Field(min_length=2, max_length=2)
    grid: list[str] | None = Field(default=None, min_length=3, max_length=3)


class AgainstSize(Strict):
    """One panel per link and RTT: @metric's mean against size per variant, the sd shaded."""
    plot: Literal["against size"]
    metric: str
    file: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*\.png$")
    ylabel: str
    title: str

    _metric = field_validator("metric")(lambda cls, v: _metric(v))


class LinkFigure(Strict):
    """Per link, the paper's Figs. 11-12 layout: FCT against size per RTT over the improvement
    (needs an improvement section; the headline's bound marked when there is one)."""
    plot: Literal["fct and improvement"]


class Dynamics(Strict):
    """cwnd, in flight and delivered against time of the largest transfer's first repetition."""
    plot: Literal["dynamics"]


class LinkRun(Strict):
    """The trace's rate, the rate delivered and the queue of the largest transfer's first repetition."""
    plot: Literal["link run"]


Plot = Annotated[Union[AgainstSize, LinkFigure, Dynamics, LinkRun], Field(discriminator="plot")]


class RunsReport(Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    #: What it shows, in a line (`sslab experiments`, the docs).
    what: str
    title: str
    #: The words under the title (a paper's report may write its own).
    intro: str = ""
    #: How a run becomes a record (sslab.analysis.plugins.RECORDS): the engines' `last hop` (one flow
    #: a run over a last hop: every section kind and plot), or a paper's (change sections).
    records: str = LAST_HOP
    order: list[str] = []
    sections: list[Section] = Field(min_length=1)
    plots: list[Plot] = []
    #: The paper's values the change sections set beside ours.
    reference: Reference | None = None
    #: Words after everything else (where our setting differs from the paper's).
    notes: str = ""
    #: Over a matrix's reading: its flows-over-time plots, and a figure its paper draws (by name:
    #: sslab.analysis.plugins.FIGURES).
    flows: Flows | None = None
    figure: str | None = None

    @model_validator(mode="after")
    def _reads(self):
        if self.records not in RECORDS:
            raise ValueError(f"records {self.records!r}: one of {', '.join(sorted(RECORDS))}")
        if self.records != LAST_HOP:
            other = [s.show for s in self.sections if not isinstance(s, OVER_ANY)] + [p.plot for p in self.plots]
            if other:
                raise ValueError(f"{', '.join(other)}: a section or plot over records {LAST_HOP!r} only, "
                                 f"not {self.records!r}")
        reading = RECORDS[self.records]
        if reading.over == "matrix":
            if self.flows is None:
                raise ValueError(f"records {self.records!r} are a matrix's: its report says how its flows over time "
                                 f"are drawn (flows: {{figure, highlight, names}})")
            if any(isinstance(s, Change) for s in self.sections):
                raise ValueError("a change section is over a scenario's runs, not a matrix's")
        elif self.flows is not None or self.figure is not None:
            raise ValueError("flows and figure are a matrix's report's (records over a matrix)")
        if self.figure is not None and self.figure not in FIGURES:
            raise ValueError(f"figure {self.figure!r}: one of {', '.join(sorted(FIGURES)) or 'none'}")
        for s in self.sections:
            if isinstance(s, Change):
                _check_change(s, reading, self.reference)
            elif isinstance(s, (Values, Means)):
                _check_keyed(s, reading, self.reference)
            elif isinstance(s, Sides):
                _check_sides(s, reading)
            elif isinstance(s, Settings):
                _check_settings(s, reading, self.reference)
            elif isinstance(s, Checks):
                _check_checks(s, reading, self.reference)
        return self

    @model_validator(mode="after")
    def _needs(self):
        shown = {s.show for s in self.sections}
        improvement = [s for s in self.sections if isinstance(s, Improvement)]
        if len(improvement) > 1:
            raise ValueError("one improvement section at most (the headline and the figure read it)")
        if not improvement and ("headline" in shown or any(isinstance(p, LinkFigure) for p in self.plots)):
            raise ValueError("a headline section or an `fct and improvement` plot needs an improvement section")
        try:
            self.intro.format(**dict.fromkeys(INTRO_NAMES, ""))
        except (KeyError, IndexError) as e:
            raise ValueError(f"intro names {e}: it may name {', '.join('{' + n + '}' for n in INTRO_NAMES)}") from None
        return self

    def section(self, kind: type) -> Strict | None:
        return next((s for s in self.sections if isinstance(s, kind)), None)


def _check_change(s: Change, reading: Records, reference: Reference | None) -> None:
    keys = [*s.per, *s.rows, s.of]
    reading.check_keys([*keys, *s.order])
    reading.check_metrics([m.metric for m in s.metrics])
    for m in s.metrics:
        if m.within and m.within.field not in reading.group_fields:
            raise ValueError(f"within {m.within.field!r}: one of {', '.join(reading.group_fields) or 'none'}")
        if m.paper and reference is None:
            raise ValueError(f"metric {m.metric!r} names the paper's {m.paper!r}: the report needs a reference")
    if reference and any(m.paper for m in s.metrics) and not reference.keys:
        raise ValueError("a change section's paper values are rows of the reference: give its keys")
    if reference and not set(reference.keys) <= set(keys):
        raise ValueError(f"reference keys {sorted(reference.keys)}: not all of the section's {keys}")
    try:
        s.heading.format(**{k: "" for k in [*s.per, *reading.group_fields]})
    except (KeyError, IndexError) as e:
        raise ValueError(f"heading {s.heading!r} names {e}, not one of per: {s.per} or "
                         f"{list(reading.group_fields)}") from None


def _check_keyed(s: Values | Means, reading: Records, reference: Reference | None) -> None:
    fields = [*reading.keys, *reading.group_fields]
    reading.check_keys([s.rows] + ([s.columns] if isinstance(s, Means) else []))
    for f in s.where:
        if f not in fields:
            raise ValueError(f"where {f!r}: records {reading.name!r} have {', '.join(fields)}")
    reading.check_metrics([s.metric] if isinstance(s, Values) else s.metrics)
    try:
        s.heading.format(**{f: "" for f in fields})
    except (KeyError, IndexError) as e:
        raise ValueError(f"heading {s.heading!r} names {e}, not one of {fields}") from None
    if isinstance(s, Values):
        if reference is None:
            raise ValueError(f"values {s.paper!r}: the report needs a reference")
        if s.paper not in reference.mappings():
            raise ValueError(f"values {s.paper!r}: not a mapping of {reference.file}")
        try:
            s.comparison.format(row="")
        except (KeyError, IndexError) as e:
            raise ValueError(f"comparison {s.comparison!r} names {e}: it may name {{row}}") from None


def _check_settings(s: Settings, reading: Records, reference: Reference | None) -> None:
    reading.check_keys([*s.rows, *(m.per for m in s.means)])
    reading.check_metrics([c.metric for c in s.columns])
    if reading.over != "matrix":
        raise ValueError("a settings section is over a matrix's settings (records over a matrix)")
    if reference is None:
        raise ValueError("a settings section sets the paper's values beside ours: the report needs a reference")
    lists = {k for k, v in reference.data().items() if isinstance(v, list)}
    for name in [s.paper, *(m.paper for m in s.means if m.paper)]:
        if name not in lists:
            raise ValueError(f"paper {name!r}: the reference {reference.file} lists {', '.join(sorted(lists)) or 'none'}")
    for c in s.columns:
        if c.implied and c.implied not in reading.implied:
            raise ValueError(f"implied {c.implied!r}: records {reading.name!r} imply {', '.join(reading.implied) or 'none'}")
    for m in s.means:
        if (m.paper is None) == (m.implied is None):
            raise ValueError(f"means per {m.per}: give the paper's list (paper:) or what the reading implies (implied:)")
        if m.implied and m.implied not in reading.implied_means:
            raise ValueError(f"implied {m.implied!r}: records {reading.name!r} imply means "
                             f"{', '.join(reading.implied_means) or 'none'}")
        if m.per not in s.rows:
            raise ValueError(f"means per {m.per!r}: one of the rows' keys {s.rows}")


def _check_checks(s: Checks, reading: Records, reference: Reference | None) -> None:
    reading.check_keys(s.rows)
    if reading.over != "matrix":
        raise ValueError("a checks section is over a matrix's settings (records over a matrix)")
    for c in s.columns:
        if c.check not in reading.checks:
            raise ValueError(f"check {c.check!r}: records {reading.name!r} check {', '.join(reading.checks) or 'nothing'}")
        try:
            c.heading.format(off="", on="")
        except (KeyError, IndexError) as e:
            raise ValueError(f"heading {c.heading!r} names {e}: it may name {{off}} and {{on}}") from None
    try:
        s.intro.format(off="", on="")
    except (KeyError, IndexError) as e:
        raise ValueError(f"intro {s.intro!r} names {e}: it may name {{off}} and {{on}}") from None
    if s.paper is not None:
        if reference is None:
            raise ValueError(f"paper {s.paper!r}: the report has no reference")
        lists = {k for k, v in reference.data().items() if isinstance(v, list)}
        if s.paper not in lists:
            raise ValueError(f"paper {s.paper!r}: the reference {reference.file} lists {', '.join(sorted(lists)) or 'none'}")


def _check_sides(s: Sides, reading: Records) -> None:
    fields = [*reading.keys, *reading.group_fields]
    reading.check_keys([*s.rows, s.side, s.pair_by])
    reading.check_metrics([m.metric for m in s.metrics])
    for m in s.metrics:
        bad = [f for f in m.missing_fields() if f not in fields]
        if bad:
            raise ValueError(f"missing {m.missing!r} names {bad[0]!r}, not one of {fields}")


# -- writing ---------------------------------------------------------------

def _panel_order(key: tuple) -> tuple:
    """Groups in a report's order: the wired link first, then by name; RTTs and sizes ascending."""
    return tuple((v != "wired", v) if isinstance(v, str) else (False, v) for v in key)


def _variants(records: list[dict], order: list[str]) -> list[str]:
    seen = {r["cc"] for r in records}
    return [c for c in order if c in seen] + sorted(seen - set(order))


def table_text(spec: Table, rows: list[dict], ccs: list[str]) -> list[tuple[dict, str]]:
    """@spec's tables over @rows (lastmile.size_rows), one per group of spec.per, with the group's values."""
    out = []
    for group in sorted({tuple(r[k] for k in spec.per) for r in rows}, key=_panel_order):
        mine = [r for r in rows if tuple(r[k] for k in spec.per) == group]
        at = {(tuple(r[k] for k in spec.rows), r["cc"]): r for r in mine}
        one = len(spec.metrics) == 1
        head = [KEYS[k][0] for k in spec.rows] + [cc if one else f"{cc}: {lastmile.METRICS[m].label}"
                                                  for cc in ccs for m in spec.metrics]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for key in sorted({k for k, _ in at}, key=_panel_order):
            cells = [KEYS[k][1](v) for k, v in zip(spec.rows, key)]
            for cc in ccs:
                r = at.get((key, cc))
                cells += [lastmile.mean_pm(r[m], lastmile.METRICS[m].digits, lastmile.METRICS[m].scale) if r else "–"
                          for m in spec.metrics]
            lines.append("| " + " | ".join(cells) + " |")
        out.append(({k: KEYS[k][1](v) for k, v in zip(spec.per, group)}, "\n".join(lines)))
    return out


def headline_text(spec: Headline, heads: list[dict]) -> str:
    pct = f"{spec.at_least * 100:g}"
    return (f"Verdict: every size's 95 % CI above {pct} %: reproduced; any one wholly under it: not reproduced; "
            "else not decided at this n (the claims ledger's rule).\n\n"
            f"| link | RTT (ms) | on | sizes under {lastmile.size_text(spec.sizes_under)} "
            f"| least improvement [its CI] | n "
            f"| mean improvement | sizes at or under {pct}% | verdict |\n|---|---|---|---|---|---|---|---|---|\n"
            + "".join(f"| {h['link']} | {h['rtt_ms']:g} | {h['on']} | "
                      f"{', '.join(lastmile.size_text(s) for s in h['sizes'])} | {h['least'] * 100:+.1f}%"
                      + (f" [{h['least_ci'][0] * 100:+.1f}, {h['least_ci'][1] * 100:+.1f}]" if h['least_ci'] else "")
                      + f" | {h['n']} | {h['mean'] * 100:+.1f}% | "
                      f"{', '.join(lastmile.size_text(s) for s in h['short_of_20pct']) or '–'} | {h['verdict']} |\n"
                      for h in heads)).rstrip("\n")


def ranking(line: RankLine, records: list[dict], ccs: list[str]) -> dict[str, float]:
    """Every variant's mean @line.metric over its runs (of at most line.sizes_up_to), in the line's order."""
    m = lastmile.METRICS[line.metric]
    chosen = [r for r in records if line.sizes_up_to is None or r["size"] <= line.sizes_up_to]
    # A run without the quantity (None: a flow that never left slow start has no exit class) is left out.
    values = {cc: [r[m.field] for r in chosen if r["cc"] == cc and r[m.field] is not None] for cc in ccs}
    means = {cc: statistics.fmean(vs) for cc, vs in values.items() if vs}
    return dict(sorted(means.items(), key=lambda kv: -kv[1] if line.order == "most first" else kv[1]))


def ranking_text(line: RankLine, means: dict[str, float]) -> str:
    m = lastmile.METRICS[line.metric]
    return (f"{line.text}: " + ", ".join(f"{cc} {v * m.scale:.{m.digits}f}" + (f" {m.unit}" if m.unit else "")
                                         for cc, v in means.items()) + ".")


def write(spec: RunsReport, run_dirs: list[Path], dest: Path) -> Path:
    """@spec over @run_dirs into @dest: report.md, summary.json and the plots."""
    reading = RECORDS[spec.records]
    records = []
    for d in run_dirs:
        records.extend(reading.load(Path(d)))
    last_hop = spec.records == LAST_HOP
    ccs = _variants(records, spec.order) if last_hop else []
    rows = lastmile.size_rows(records) if last_hop else []
    improvement = spec.section(Improvement)
    head = spec.section(Headline)
    imps = lastmile.improvements(records, improvement.baseline, improvement.against) if improvement else []
    summary: dict = {"sizes": rows} if last_hop else {}
    if improvement:
        summary["improvements"] = imps
    reference = spec.reference.rows() if spec.reference else {}
    keyed = list(spec.reference.keys) if spec.reference else []
    changes = {id(s): change_rows(s, records, reading, reference, keyed) for s in spec.sections if isinstance(s, Change)}
    papers = spec.reference.mappings() if spec.reference else {}
    valued = {id(s): values_rows(s, records, reading, papers[s.paper]) for s in spec.sections if isinstance(s, Values)}
    judged = []
    for s in spec.sections:
        if isinstance(s, Change):
            judged += [Comparison.from_record(c) for r in changes[id(s)] for c in r["comparisons"]]
        elif isinstance(s, Values):
            judged += [Comparison.from_record(r["comparison"]) for r in valued[id(s)] if r["comparison"]]
    counted = f"{count_line(judged)}\n\n" if spec.reference else ""
    text = [f"# {spec.title}\n\n{counted}Runs: {', '.join(map(str, run_dirs))}\n\n"
            f"Ran under: {conditions_of(run_dirs)}\n\n",
            spec.intro.format(suss_legend=lastmile.SUSS_LEGEND, baseline=improvement.baseline if improvement else "")
            + "\n"]
    fields = [*reading.keys, *reading.group_fields]
    for section in spec.sections:
        if isinstance(section, (Values, Means)):
            title = heading(section.heading, _chosen(records, section.where), fields)
            if isinstance(section, Values):
                body = values_text(section, valued[id(section)], reading)
                summary.setdefault("paper_tables", {})[section.paper] = valued[id(section)]
            else:
                body = means_text(section, records, reading)
            text.append(f"\n## {title}\n\n{body}\n")
            continue
        if isinstance(section, Sides):
            text.append(f"\n## {section.heading}\n\n{sides_text(section, sides_rows(section, records, reading), reading)}\n")
            continue
        if isinstance(section, Change):
            mine = changes[id(section)]
            for values, table in change_text(section, mine, reading):
                text.append(f"\n## {section.heading.format(**values)}\n\n{table}\n")
            text.append(f"\n{direction_counts(section, mine, reading)}\n")
            summary.setdefault("changes", []).extend(mine)
            continue
        if isinstance(section, Table):
            for values, table in table_text(section, rows, ccs):
                text.append(f"\n## {section.heading.format(**values)}\n\n{table}\n")
            continue
        if isinstance(section, LinkTraits):
            summary["traits"] = lastmile.link_traits(records)
            body = lastmile.traits_table(summary["traits"])
        elif isinstance(section, Improvement):
            body = lastmile.improvement_table(imps)
        elif isinstance(section, Headline):
            summary["headline"] = lastmile.headline(imps, section.at_least, section.sizes_under, section.rtt_over_ms)
            body = headline_text(section, summary["headline"])
        else:
            sentences = []
            for line in section.lines:
                summary[line.key] = ranking(line, records, ccs)
                sentences.append(ranking_text(line, summary[line.key]))
            body = "\n\n".join(sentences)
        text.append(f"\n## {section.heading}\n\n{body}\n")
    plots = _plots(spec, records, rows, imps, ccs, dest, head)
    if spec.plots:
        text.append("\nPlots: " + ", ".join(p.name for p in plots if p) + "\n")
    if spec.notes:
        text.append(f"\n{spec.notes.rstrip()}\n")
    if spec.reference:
        summary["paper_values"] = [c.record() for c in judged]
    if not last_hop:
        # Every run's record, as the reading made it: what a ledger's extractor reads of the report.
        summary["records"] = records
    (dest / "report.md").write_text("".join(text))
    _summary(dest, run_dirs, summary)
    return dest


def _plots(spec: RunsReport, records: list[dict], rows: list[dict], imps: list[dict], ccs: list[str],
           dest: Path, head: Headline | None) -> list[Path | None]:
    if not spec.plots:
        return []
    panels = sorted({(r["link"], r["rtt_ms"]) for r in rows}, key=_panel_order)
    largest = max((r["size_label"] for r in records), key=parse_size, default=None)
    out: list[Path | None] = []
    for p in spec.plots:
        if isinstance(p, AgainstSize):
            out.append(lastmile.plot_against_size(rows, dest, p.file, p.metric, p.ylabel, p.title, panels, ccs))
        elif isinstance(p, LinkFigure):
            out += [lastmile.plot_link_figure(rows, imps, dest, link, ccs, head.at_least if head else None)
                    for link in sorted({r["link"] for r in rows}, key=lambda x: _panel_order((x,)))]
        elif largest and isinstance(p, Dynamics):
            out.append(plot_dynamics([dict(r["run"], dir=r["run"]["dir"]) for r in records], dest, size=largest, rep=0))
        elif largest and isinstance(p, LinkRun):
            out.append(lastmile.plot_link_run([r for r in records if r["size_label"] == largest and r["rep"] == 0],
                                              dest, f"link-{largest}.png"))
    return out


def _summary(dest: Path, run_dirs: list[Path], parts: dict) -> None:
    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("run", "values")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x
    (dest / "summary.json").write_text(json.dumps(
        stamped("sslab.summary", {"runs": [str(d) for d in run_dirs], **clean(parts),
                                  "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}),
        indent=1, default=str))
