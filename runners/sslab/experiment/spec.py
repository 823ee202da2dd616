"""Experiment files: one per experiment, in experiments/; the file's name is its make target.

    format: sslab.experiment/1
    id: E1
    title: start-up on a wired bottleneck
    reproduces: {paper: "SUSS (SIGCOMM'24)", figure: "...", values: "where the paper's values are"}
    what: |
      What it runs and reports, in a few lines.
    scenario: scenarios/e1-startup.yaml      # what runs: ONE of
    #   scenario: a scenario file, or a scenario written here (its `extends:` relative to this file);
    #             with `axes:` a template, each combination of the axes' values one part (E2, E4)
    #   parts:    several runs, one report over them; each part is a scenario (a file or written here,
    #             {name, scenario}) or, with axes, one part per combination ({scenario, axes}), with an
    #             optional tag
    #   matrix:   a matrix, run through its controller with its own report: a mapping of how its cells
    #             run (name, iterations, compare, ...) beside the scenario template and its axes,
    #             or a matrix file's path (experiments/scenarios/)
    axes:                        # with scenario: one part per combination (sslab.scenario.axes), named
      cc: [cubic_hs, cubic_suss] #   by its labels joined by "-" (an axis called `name` names it whole)
    select: [wired, wifi, lte]   # parts (and cases) run when SELECT= is not given (default: all)
    repetitions: 3               # over the scenarios' own (default: theirs)
    report: startup              # a report by its name (sslab.analysis.plugins), or one described here
                                 # (what it groups by, its tables, checks and plots: sslab.analysis.runs_report)
    output: startup              # results/<output>/ (default: the file's name)
    aliases:                     # names for fields of its scenarios (sslab.scenario.overrides):
      RTT: [pairs.*.rtt, bottleneck.buffer.rtt]   # `make startup RTT=25ms` sets both
    time_here: "..."             # measured wall time of `make <target>` with its defaults

Paths are relative to the experiment file.  A part is chosen by SELECT= through its name,
its tag, or any text value of its series setting (E4's `link: wired`), so `SELECT=wired`
picks every wired setting.  A word may also name a case of the parts' scenarios by a label of
its case axis (E1's and E4's `cc`): `VARIANTS=cubic_hs,cubic_rapid` narrows that axis in every
part chosen, so a file can list starts that run only when asked for (its `select` leaves
them out).  Everything is read and checked when the file is loaded: a bad
file, part or selection is refused (exit 2) before anything runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Collection

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .. import paths
from .. import papers  # noqa: F401 (every paper's reports and extractors, registered)
from ..analysis.plugins import REPORTS, Report
from ..analysis.reports import report_of
from ..analysis.runs_report import RunsReport
from ..ccas import KNOWN_CCAS, cc_name_refusal
from ..records import check as check_format
from ..scenario import Scenario, ScenarioError, load_scenario, overrides, parse_scenario
from ..scenario.load import (case_labels, field_errors, inline_scenario_data, narrow_cases, read_yaml_file,
                             scenario_file_data, start_axis, with_start)
from ..scenario.axes import Axis
from ..scenario.series import Series, SeriesSpec

EXPERIMENTS_DIR = paths.REPO_ROOT / "experiments"
#: The record kind of an experiment file (sslab.records).
FORMAT_KIND = "sslab.experiment"


class ExperimentError(ValueError):
    """An experiment file or request that cannot run (refused before anything starts)."""


class Reproduces(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    paper: str
    figure: str
    #: Where the paper's values are printed beside ours (a report, docs/experiments.md).
    values: str | None = None


class PartSpec(BaseModel):
    """One part (name and scenario: a file, or a scenario written here), or, with axes, a scenario
    template of which each combination of the axes' values is a part (named by its labels)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    scenario: str | dict[str, Any]
    axes: dict[str, Axis] | None = Field(default=None, min_length=1)
    tag: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.-]*$")

    @model_validator(mode="before")
    @classmethod
    def _no_series_file(cls, data: Any) -> Any:
        if isinstance(data, dict) and "series" in data:
            raise ValueError("a series file's settings are written in place: the part's scenario (its template) and "
                             "axes (`{scenario: {...}, axes: {name: [...]}}`)")
        return data

    @model_validator(mode="after")
    def _named(self):
        if self.axes is None and self.name is None:
            what = f" {self.scenario}" if isinstance(self.scenario, str) else ""
            raise ValueError(f"the part{what} needs a name (its results directory)")
        if self.axes is not None and self.name is not None:
            raise ValueError("a part over axes is named by each combination's labels: give it a tag, not a name")
        return self


class ExperimentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    format: str
    id: str = Field(pattern=r"^E[0-9]+(/E[0-9]+)?$")
    title: str
    reproduces: Reproduces
    what: str
    scenario: str | dict[str, Any] | None = None
    #: With scenario: the scenario is a template, and each combination of these axes' values fills it
    #: as a part of its own (a series written in the experiment's file: sslab.scenario.series).
    axes: dict[str, Axis] | None = Field(default=None, min_length=1)
    parts: list[PartSpec] | None = Field(default=None, min_length=1)
    #: The matrix: a mapping of how its cells run (sslab.matrix.spec.MatrixSpec's fields but its axes,
    #: report and title, which are the experiment's), beside the scenario template and its axes; or a
    #: matrix file's path.
    matrix: str | dict[str, Any] | None = None
    select: list[str] | None = Field(default=None, min_length=1)
    repetitions: int | None = Field(default=None, ge=1)
    report: str | RunsReport
    output: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    time_here: str
    #: Names (make variables) for fields of its scenarios, each the paths it sets (sslab.scenario.overrides).
    aliases: dict[str, list[str]] | None = None

    @model_validator(mode="before")
    @classmethod
    def _report_of_another(cls, data: Any) -> Any:
        """`report: fct-vs-size` where no report of the registry has that name: the report the experiment of
        that name describes in its file (a cause run of E4 reports as E4 does)."""
        if isinstance(data, dict) and isinstance(data.get("report"), str) and data["report"] not in REPORTS:
            f = EXPERIMENTS_DIR / f"{data['report']}.yaml"
            other = read_yaml_file(f, ExperimentError) if f.is_file() else None
            if isinstance(other, dict) and isinstance(other.get("report"), dict):
                return {**data, "report": other["report"]}
        return data

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, v: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
        for name, fields in (v or {}).items():
            if not overrides.ALIAS_RE.match(name):
                raise ValueError(f"alias {name!r}: a name in capitals, as a make variable (RTT)")
            bad = [p for p in fields if not overrides.PATH_RE.match(p)]
            if not fields or bad:
                raise ValueError(f"alias {name}: give the paths of the fields it sets (pairs.*.rtt), "
                                 f"not {bad or fields}")
        return v

    @property
    def report_of(self) -> Report:
        """The report, named or described (sslab.analysis.reports.report_of)."""
        return report_of(self.report)

    @property
    def matrix_in_place(self) -> bool:
        """Its matrix is written in this file (a mapping), beside the scenario template and axes."""
        return isinstance(self.matrix, dict)

    @model_validator(mode="after")
    def _one_kind(self):
        # A matrix written in place runs the file's scenario over its axes: the three are one grid.
        kinds = [k for k in ("scenario", "parts", "matrix") if getattr(self, k) is not None
                 and not (k == "scenario" and self.matrix_in_place)]
        if self.matrix_in_place and (not isinstance(self.scenario, dict) or self.axes is None):
            raise ValueError("a matrix written in place runs the file's scenario (a template written here) over "
                             "its axes: give both")
        if len(kinds) != 1:
            raise ValueError(f"an experiment runs exactly one of scenario, parts or matrix (this one: "
                             f"{', '.join(kinds) or 'none'})")
        if isinstance(self.report, str) and self.report not in REPORTS:
            raise ValueError(f"report {self.report!r}: no such report (known: {', '.join(REPORTS)}), or describe "
                             f"one (sslab.analysis.runs_report)")
        for_matrix = self.report_of.matrix is not None
        if for_matrix != (self.matrix is not None):
            raise ValueError(f"report {self.report_of.name!r} is " + ("a matrix's" if for_matrix else "not a matrix's"))
        if self.axes is not None and (self.scenario is None or isinstance(self.matrix, str)):
            raise ValueError("axes fill a scenario template: give it as scenario (parts and a matrix file have "
                             "their own)")
        if self.report_of.write is not None and self.parts is None and self.axes is None:
            raise ValueError(f"report {self.report_of.name!r} is written over several runs: the experiment runs parts "
                             f"(or its scenario over axes)")
        if self.matrix is not None and (self.select or self.repetitions or self.output or self.aliases):
            raise ValueError("a matrix's cells are chosen by its axes (CCA=, BUF=, RTT=, their `option`) and "
                             "ITER=, not select, repetitions or aliases, and its results go under its own name, "
                             "not output")
        return self


@dataclass(frozen=True)
class Part:
    """One scenario run of an experiment: a scenario file as it is (path), or a scenario as data (data:
    written in the experiment file, a setting of its axes, or a file's narrowed or with fields set), compiled
    as it is (sslab.experiment.compile)."""
    name: str
    tags: frozenset[str]
    path: Path | None = None
    data: dict | None = field(default=None, compare=False)
    #: The file its words are in, when it is data: the experiment file (or the scenario file it narrows).
    defined_in: Path | None = None
    #: What its results directory's name adds when fields were set on it (SET=, an alias:
    #: `_set-RTT-25ms`) or a start its file does not list runs in it (`_start-cubic_suss25`): runs
    #: that are not the experiment as its file has it are kept apart from those that are, which the
    #: claims ledger and the docs read.
    apart: str = ""
    #: The starts it runs that its file does not list (VARIANTS=), in the order asked.
    added: tuple[str, ...] = ()
    #: The fields a command line set on it, as given (`RTT=25ms`): its runs' record says so.
    given: str = ""
    #: Its scenario as the file's check at load validated it (None once narrowed or set otherwise):
    #: compiled as it is when the command line changes nothing of it (sslab.experiment.compile).
    checked: Scenario | None = field(default=None, compare=False, repr=False)


def start_suffix(starts: Collection[str]) -> str:
    """What a directory's name adds for runs of starts the file does not list: `_start-a+b`, as a
    matrix's does for the start it compares (sslab.matrix.orchestrate.matrix_rel_of)."""
    return f"_start-{'+'.join(sorted(starts))}" if starts else ""


class Experiment:
    def __init__(self, spec: ExperimentSpec, path: Path):
        self.spec, self.path = spec, path
        self.target = path.stem
        self.output = spec.output or path.stem
        #: The series whose settings are its starts (E2's), each with its parts' tags: a start the file
        #: does not list becomes a setting of each (Experiment._start_parts).
        self._start_series: list[tuple[frozenset[str], Series]] = []
        #: The names of the parts those series made: their start is a setting, not a case.
        self._start_series_parts: set[str] = set()
        self.parts = self._parts()
        # A matrix archives its cells under its own name (results/<matrix name>/).
        if spec.matrix_in_place:
            self.output = str(spec.matrix.get("name") or path.stem)
        elif spec.matrix is not None:
            data = read_yaml_file(self.matrix_path, ExperimentError)
            section = (data or {}).get("matrix") or {}
            self.output = str(section.get("name") or self.matrix_path.stem)
            if section.get("report") != spec.report_of.name:
                raise ExperimentError(f"{path}: report {spec.report_of.name!r}, but its matrix ({spec.matrix}) writes "
                                      f"{section.get('report')!r}: name the matrix's report")
        if spec.select:
            self.choose(spec.select)  # the default selection must name parts

    @property
    def kind(self) -> str:
        """'scenario' (one run), 'parts' (runs and a report over them: parts, or a scenario over axes)
        or 'matrix'."""
        if self.spec.matrix is not None:
            return "matrix"
        if self.spec.axes is not None:
            return "parts"
        return next(k for k in ("scenario", "parts", "matrix") if getattr(self.spec, k) is not None)

    def _file(self, rel: str) -> Path:
        f = (self.path.parent / rel).resolve()
        if not f.is_file():
            raise ExperimentError(f"{self.path}: {rel}: no such file")
        return f

    @property
    def matrix_path(self) -> Path:
        """The file that holds its matrix: this one, or its matrix file."""
        return self.path if self.spec.matrix_in_place else self._file(self.spec.matrix)

    def _parts(self) -> list[Part]:
        s = self.spec
        if s.matrix is not None:
            self.matrix_path  # noqa: B018 - refuse a missing file at load
            return []
        if s.scenario is not None:
            return self._checked(self._grid(self.target, s.scenario, s.axes, frozenset()))
        parts: list[Part] = []
        for p in s.parts:
            parts += self._grid(p.name, p.scenario, p.axes, frozenset({p.tag} if p.tag else set()))
        return self._checked(parts)

    def _grid(self, name: str | None, scenario: str | dict, axes: dict | None, tags: frozenset[str]) -> list[Part]:
        """The parts a scenario makes (a file, or written here: its `extends:` relative to this file),
        each checked: itself, named @name; or, with @axes, one per combination of their values (a
        series: sslab.scenario.series), named by its labels, tagged @tags and its text values.  A series
        whose axis is a flow's start may take a start no file lists (_start_parts)."""
        where = f"{self.path} scenario"
        if axes is None:
            if isinstance(scenario, str):
                f = self._file(scenario)
                return [Part(name, tags, path=f, checked=load_scenario(f))]
            data = inline_scenario_data(scenario, self.path.parent, where)
            return [Part(name, tags, data=data, defined_in=self.path, checked=parse_scenario(data, where))]
        template = (scenario_file_data(self._file(scenario)) if isinstance(scenario, str) else
                    inline_scenario_data(scenario, self.path.parent, where))
        try:
            spec = SeriesSpec(name=self.output, axes=axes)
        except ValidationError as e:
            raise ExperimentError(f"{self.path}: axes: {'; '.join(field_errors(e))}") from None
        series = Series(spec, template, self.path)
        checked = {setting["name"]: s for setting, s in series.scenarios()}  # every setting must make a valid one
        made = [replace(p, checked=checked[p.name]) for p in self._series_parts(series, series.settings(), tags)]
        if series.start_axis() is not None:
            self._start_series.append((tags, series))
            self._start_series_parts |= {q.name for q in made}
        return made

    def _checked(self, parts: list[Part]) -> list[Part]:
        """@parts, refused if two share a name or run scenarios of one name."""
        dup = sorted({p.name for p in parts if [q.name for q in parts].count(p.name) > 1})
        if dup:
            raise ExperimentError(f"{self.path}: part names repeat: {', '.join(dup)}")
        # A run's record names its scenario by name: two parts' runs must not read alike.
        named = [p.data["name"] for p in parts if p.data is not None]
        dup = sorted({n for n in named if named.count(n) > 1})
        if dup:
            raise ExperimentError(f"{self.path}: two parts run a scenario named {', '.join(dup)}: their runs' "
                                  f"records would not tell them apart")
        return parts

    @staticmethod
    def _series_parts(series: Series, settings: list[dict], tags: frozenset[str]) -> list[Part]:
        """A part for each of @settings of @series, tagged with @tags and its text values."""
        return [Part(setting["name"], tags | {v for v in setting.values() if isinstance(v, str)},
                     data=series.scenario_data(setting), defined_in=series.path) for setting in settings]

    def _start_parts(self, name: str) -> list[Part]:
        """The parts a start the files do not list adds: the settings of each series of starts with
        @name its start (E2's `cc`), as the file would have them if it listed it; checked now."""
        out = []
        for tags, series in self._start_series:
            more = series.with_start(name)
            axis = more.start_axis()
            for part in self._series_parts(more, [x for x in more.settings() if x.get(axis) == name], tags):
                out.append(replace(part, apart=start_suffix([name]), added=(name,),
                                   checked=parse_scenario(part.data, f"{series.path} setting {part.name}")))
        return out

    def choose(self, words: list[str] | None) -> list[Part]:
        """The parts that @words choose, in the file's order; the file's `select` when @words is None.

        A word names parts (by name, tag or series setting value) or cases: a label of a case axis
        of the parts' scenarios (a variant of E1's or E4's `cc`), which narrows that axis in every
        part chosen.  Words of one kind leave the other kind to the file's `select` (else: every
        part, every case).  A word that names nothing is refused."""
        default_parts, default_cases = self._split(self.spec.select or [])
        if words is None:
            part_words, case_words = default_parts, default_cases
        else:
            part_words, case_words = self._split(words)
            part_words, case_words = part_words or default_parts, case_words or default_cases
        known = {p.name for p in self.parts} | set().union(*(p.tags for p in self.parts))
        parts = self.parts + [p for w in part_words if w not in known for p in self._start_parts(w)]
        chosen = [p for p in parts if not part_words or p.name in part_words or p.tags & set(part_words)]
        return [self._narrowed(p, set(case_words)) for p in chosen]

    @staticmethod
    def data_of(part: Part) -> dict:
        """@part's scenario as plain data: written in its experiment file, or read from its own."""
        return part.data if part.data is not None else scenario_file_data(part.path)

    def _case_labels(self, part: Part) -> set[str]:
        return {label for labels in case_labels(self.data_of(part)).values() for label in labels}

    def _split(self, words: list[str]) -> tuple[list[str], list[str]]:
        """@words as (those naming parts, those naming cases); refused if one names neither."""
        part_words = [w for w in words if any(w == p.name or w in p.tags for p in self.parts)
                      or (self._start_series and cc_name_refusal(w) is None)]
        labels = set().union(*(self._case_labels(p) for p in self.parts)) if self.parts else set()
        case_words = [w for w in words if w not in part_words and (w in labels or self._takes_start(w))]
        unknown = [w for w in words if w not in part_words and w not in case_words]
        if unknown:
            tags = sorted(set().union(*(p.tags for p in self.parts)) - {p.name for p in self.parts})
            raise ExperimentError(f"{self.path.name}: nothing named {', '.join(unknown)} (parts: "
                                  f"{', '.join(p.name for p in self.parts)}"
                                  + (f"; also by {', '.join(tags)}" if tags else "")
                                  + (f"; cases by {', '.join(sorted(labels))}" if labels else "")
                                  + (f"; or beside them any start the harness knows: "
                                     f"{', '.join(c for c in KNOWN_CCAS if c not in labels)}"
                                     if self._start_series or self._case_starts() else "") + ")")
        return part_words, case_words

    def _case_starts(self) -> bool:
        """A part (not a series of starts' setting) has a case axis of starts (sslab.scenario.load.start_axis)."""
        return any(start_axis(self.data_of(p)) for p in self.parts if p.name not in self._start_series_parts)

    def _takes_start(self, word: str) -> bool:
        """@word names a start the harness knows (or a researcher's kernel may register) and a part has
        an axis of starts to run it on: `VARIANTS=cubic_suss25` runs it beside the file's starts without
        the file listing it."""
        return cc_name_refusal(word) is None and self._case_starts()

    def _narrowed(self, part: Part, case_words: set[str]) -> Part:
        """@part with its case axes narrowed to @case_words (sslab.scenario.load.narrow_cases), a start
        its file does not list added to its axis of starts first (with_start); @part itself when that
        leaves its cases as they are."""
        if not case_words:
            return part
        data = self.data_of(part)
        new = sorted(w for w in case_words - self._case_labels(part) if cc_name_refusal(w) is None)
        if new and (axis := start_axis(data)) is None:
            raise ExperimentError(f"{self.path.name}: {part.name} has no axis of starts to run {', '.join(new)} on "
                                  f"(a case axis that is a flow's congestion control alone)")
        try:
            for name in new:
                data = with_start(data, axis, name)
        except ScenarioError as e:
            raise ExperimentError(f"{self.path.name}: {part.name}: {e}") from None
        narrowed = narrow_cases(data, case_words)
        if not new:
            return part if narrowed is data else replace(part, path=None, data=narrowed,
                                                         defined_in=self._file_of(part), checked=None)
        added = (*part.added, *new)
        return replace(part, path=None, data=narrowed, defined_in=self._file_of(part), apart=start_suffix(added),
                       added=added, checked=None)

    def _file_of(self, part: Part) -> Path:
        """The file @part's words are in."""
        return part.path or part.defined_in or self.path

    def overridden(self, parts: list[Part], sets: tuple[overrides.Override, ...]) -> list[Part]:
        """@parts with the fields @sets name (resolved: sslab.scenario.sets) set in each one's scenario;
        refused (ExperimentError) before anything runs when a path is not the scenario's.  A field that
        refuses its value is refused when the part is compiled (sslab.experiment.compile), before any
        testbed boots."""
        if not sets:
            return parts
        given = " ".join(dict.fromkeys(o.given for o in sets))
        out = []
        for part in parts:
            source = f"{part.name} with {given}"
            try:
                data = overrides.apply(self.data_of(part), list(sets))
            except overrides.OverrideError as e:
                raise ExperimentError(f"{source}: {e}") from None
            data = {**data, "description": f"{data.get('description', '').strip()} (set: {given})".strip()}
            out.append(replace(part, path=None, data=data, defined_in=self._file_of(part), given=given, checked=None,
                               apart=part.apart + overrides.dir_suffix(list(sets))))
        return out

    def repetitions(self) -> list[int]:
        """The repetitions a default run does per scenario: the file's, else each part's own."""
        if self.spec.repetitions:
            return [self.spec.repetitions]
        reps = {(load_scenario(p.path) if p.path else parse_scenario(p.data)).repetitions for p in self.parts}
        return sorted(reps)

    def kind_of(self, part: Part) -> str:
        """results/<this>/ for a part's runs: the output itself for a single scenario, each with what
        a field set on it adds (Part.apart)."""
        return f"{self.output}{part.apart}" if self.kind == "scenario" else f"{self.output}/{part.name}{part.apart}"


def experiment_files() -> list[Path]:
    return sorted(EXPERIMENTS_DIR.glob("*.yaml"))


def experiment_path(name_or_path: str) -> Path:
    """A path as given, else experiments/<name>.yaml."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        if not p.is_file():
            raise ExperimentError(f"{p}: no such experiment file")
        return p
    f = EXPERIMENTS_DIR / f"{name_or_path}.yaml"
    if not f.is_file():
        raise ExperimentError(f"no experiment {name_or_path!r} (known: "
                              f"{', '.join(x.stem for x in experiment_files())}; a new one is a file "
                              f"experiments/<name>.yaml)")
    return f


def load_experiment(name_or_path: str | Path) -> Experiment:
    path = experiment_path(str(name_or_path))
    data = read_yaml_file(path, ExperimentError)
    if not isinstance(data, dict):
        raise ExperimentError(f"{path}: an experiment file is a mapping of fields")
    try:
        check_format(FORMAT_KIND, data, str(path))
    except ValueError as e:
        raise ExperimentError(str(e)) from None
    try:
        spec = ExperimentSpec.model_validate(data)
    except ValidationError as e:
        lines = field_errors(e)
        raise ExperimentError(f"{path}: invalid experiment ({len(lines)} error{'s' if len(lines) > 1 else ''})\n"
                              + "\n".join(lines)) from None
    try:
        return Experiment(spec, path)
    except ScenarioError as e:
        raise ExperimentError(f"{path}: {e}") from None


def experiments_in_order() -> list[Experiment]:
    """Every experiment file, loaded, in the order of their ids (E1 .. E9), then by name."""
    exps = [load_experiment(f) for f in experiment_files()]
    return sorted(exps, key=lambda e: (int(re.match(r"E([0-9]+)", e.spec.id)[1]), e.target))


def experiments_table() -> str:
    """The README's table of experiments, generated from experiments/*.yaml."""
    rows = ["| exp. | reproduces | make target | results in |", "|---|---|---|---|"]
    for e in experiments_in_order():
        s = e.spec
        rows.append(f"| {s.id}: {s.title} | {s.reproduces.paper}, {s.reproduces.figure} | `make {e.target}` | "
                    f"`results/{e.output}/` |")
    return "\n".join(rows) + "\n"


def experiment_times_table() -> str:
    """What each experiment took on this project's machine with its defaults (its file's time_here,
    with what ran and the date): the measurements page's table, generated from experiments/*.yaml."""
    rows = ["| exp. | make target | wall time here |", "|---|---|---|"]
    rows += [f"| {e.spec.id}: {e.spec.title} | `make {e.target}` | {e.spec.time_here} |" for e in experiments_in_order()]
    return "\n".join(rows) + "\n"
