"""A matrix: a scenario template plus axes, every combination a setting, each repetition of a setting a
keyed cell.  Written in place in its experiment's file (experiments/reproduce-table1.yaml: the
experiment's `scenario:` and `axes:`, and a `matrix:` mapping of how its cells run), or as a matrix
file of two sections, `matrix` and `scenario` (experiments/scenarios/smoke.yaml)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Collection, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .. import paths
from ..ccas import cc_name_refusal
from ..analysis.runs_report import RunsReport
from ..experiment.spec import EXPERIMENTS_DIR, FORMAT_KIND
from ..scenario import KNOWN_CCAS, Scenario, ScenarioError, overrides, parse_scenario, substitute
from ..scenario.axes import Axis, check_axes, combinations, squeezed
from ..scenario.knobs import apply as apply_knobs
from ..scenario.load import (case_labels, field_errors, inline_scenario_data, narrow_cases, read_template_file,
                             read_yaml_file, with_start)
from ..scenario.units import frame_bytes

MATRICES_DIR = paths.REPO_ROOT / "experiments" / "scenarios"


class MatrixError(ValueError):
    """A matrix request that cannot run (refused before anything starts)."""


class Compare(BaseModel):
    """The two arms of every cell: the cases whose parameter @param is @off and @on.  The template's
    axis of @param may list more starts than @on: one of them runs in @on's place when asked for
    (Matrix.compared; VARIANTS=cubic_rapid), its cells archived apart."""
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    param: str
    off: str
    on: str


class PaperBeside(BaseModel):
    """A value of ours shown beside another of the paper's columns (bbr3 beside the paper's BBRv2):
    never presented as that column; the report says which it is beside and prints @note."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    column: str
    note: str


class StartsDuring(BaseModel):
    """Flow @flow of every case (1-based, in the case's order) starts while flow @of can still be
    running: before @of's start plus the least time it can take, its frames alone at the bottleneck's
    rate (a timed flow: its duration).  Table 1's first small flow joins the large one; a setting that
    starts it later (FIRST_START=30s) is refused before anything runs."""
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    flow: int = Field(ge=1)
    of: int = Field(ge=1)

    def refusal(self, s: Scenario) -> str | None:
        """Why @s breaks the rule (None: it keeps it)."""
        for case in s.cases:
            if max(self.flow, self.of) > len(case.flows):
                return f"case {case.name} has {len(case.flows)} flows: no flow {max(self.flow, self.of)}"
            joining, running = case.flows[self.flow - 1], case.flows[self.of - 1]
            if running.duration is not None:
                least = running.duration
            else:
                mss = s.topology.mtu - 52
                frames = -(-running.size // mss)
                least = frames * frame_bytes(s.topology.mtu) * 8 / (s.bottleneck.rate_mbit * 1e6)
            if joining.start >= running.start + least:
                return (f"flow {self.flow} starts at {joining.start:g} s, when flow {self.of} can have ended "
                        f"(it starts at {running.start:g} s and needs at least {least:.2f} s alone at "
                        f"{s.bottleneck.rate_mbit:g} Mbit/s): start it earlier")
        return None


class MatrixSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str
    #: Its report, a matrix's report of the registry (sslab.analysis.plugins.matrix_report_names), or one
    #: described in its experiment file over a paper's reading of the cells (sslab.analysis.matrix_described).
    report: str | RunsReport
    iterations: int = Field(ge=1, le=1000)
    #: How many the paper ran, when it says (printed beside ours).
    paper_iterations: int | None = None
    #: The settings: every combination (sslab.scenario.axes); an axis with an `option` is narrowed by it.
    axes: dict[str, Axis] = Field(min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)
    #: Values the paper did not run, each shown beside one of the paper's (its `column`).
    paper_beside: dict[str, PaperBeside] = Field(default_factory=dict)
    alternate_cases: bool = True
    compare: Compare
    defaults: dict[str, str] = Field(default_factory=dict)
    #: The paper values its report compares with (results/reference/<name>.yaml); default: its own name's.
    #: A matrix that varies what the paper left unstated (table1-calibrate) names the paper's table.
    reference: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    #: A flow's FCT as the report reads it: "client", connect() to the last byte; "server", the first
    #: segment to the last ACK, from the sender's per-ACK trace (sslab.analysis.traces.ProbeFacts).
    fct_timing: Literal["client", "server"] = "client"
    #: The sample of cells whose captures tshark reads as well as our parser (sslab.analysis.capturecheck,
    #: planned by sslab.matrix.plan.checks_capture): the k-th setting's repetitions k, k + N, k + 2N, ...
    #: (N: capture_check_every; 1: every cell), so each repetition checks 1/N of the settings and every
    #: setting is checked within N repetitions ...
    capture_check_every: int = Field(default=1, ge=1)
    #: ... and at most this many of each setting's cells (None: no bound), so tshark's cost stops growing
    #: with the repetitions: the check is of our parser on the traffic a setting makes, and a setting's
    #: repetitions make traffic of one kind.
    capture_check_per_setting: int | None = Field(default=None, ge=1)
    #: A flow that must start while another can still be running (Table 1's first small flow).
    starts_during: StartsDuring | None = None

    @field_validator("report")
    @classmethod
    def _known_report(cls, v: str | RunsReport) -> str | RunsReport:
        # The papers registered their reports when experiment.spec, imported above, imported them.
        from ..analysis.plugins import RECORDS, matrix_report_names
        if isinstance(v, RunsReport):
            if RECORDS[v.records].over != "matrix":
                raise ValueError(f"report {v.name!r} reads records {v.records!r}, a scenario's runs: a matrix's "
                                 f"report reads its cells (records over a matrix)")
            return v
        if v not in matrix_report_names():
            raise ValueError(f"report {v!r}: one of {', '.join(matrix_report_names())}, or describe one")
        return v

    @property
    def report_name(self) -> str:
        return self.report if isinstance(self.report, str) else self.report.name

    @model_validator(mode="after")
    def _options_unique(self):
        check_axes(self.axes, "axes")
        opts = [a.option for a in self.axes.values() if a.option]
        if len(set(opts)) != len(opts):
            raise ValueError(f"axes share a make option: {opts}")
        return self


class Matrix:
    """A loaded matrix file: its spec and its scenario template."""

    def __init__(self, spec: MatrixSpec, template: dict, path: Path, file_on: str | None = None,
                 file_template: dict | None = None, sets: tuple[overrides.Override, ...] = ()):
        self.spec, self.template, self.path = spec, template, path
        #: The start the file compares with compare.off (compare.on as written), and the template
        #: with every start the file lists on compare.param's axis (Matrix.compared narrows it).
        self.file_on = file_on or spec.compare.on
        self.file_template = file_template or template
        #: The fields a command line set in the template (SET=path=value): its cells are other cells,
        #: archived apart (orchestrate.matrix_rel_of).
        self.sets = sets

    def starts(self) -> list[str]:
        """The starts that may run on the compared side: the file's values of compare.param other
        than compare.off."""
        c = self.spec.compare
        return [v for v in case_labels(self.file_template).get(c.param, [c.on]) if v != c.off]

    def compared(self, on: str | None = None) -> "Matrix":
        """The matrix whose cells run compare.off beside @on (default: the file's compare.on): the
        template's compare.param axis narrowed to those two, so the file's own comparison makes the
        scenarios (and cell keys) it made before it listed other starts."""
        c = self.spec.compare
        on = on or self.file_on
        template = self.file_template
        if on not in self.starts():
            # A start the file does not list runs in compare.on's place all the same (sslab.scenario.load.with_start).
            if (why := cc_name_refusal(on)) is not None:
                raise MatrixError(f"{self.spec.name}: {on} is not a start it can compare with {c.off}: {why}")
            try:
                template = with_start(template, c.param, on)
            except ScenarioError as e:
                raise MatrixError(f"{self.spec.name}: {e}") from None
        spec = self.spec.model_copy(update={"compare": c.model_copy(update={"on": on})})
        return Matrix(spec, narrow_cases(template, {c.off, on}), self.path, self.file_on, self.file_template,
                      self.sets)

    def with_knobs(self, values: dict | None) -> "Matrix":
        """The matrix with the knobs a command line set over its scenario (sslab.scenario.knobs)."""
        if not values:
            return self
        return Matrix(self.spec, apply_knobs(dict(self.template), values), self.path, self.file_on,
                      apply_knobs(dict(self.file_template), values), self.sets)

    def with_sets(self, sets: list[overrides.Override]) -> "Matrix":
        """The matrix with fields of its template set (SET=bottleneck.rate=20mbit), checked now on its
        first setting's scenario: a path the template does not have, or a value the field refuses, is
        refused (MatrixError) before anything runs.  An axis's placeholder ({buffer}) set to a value
        takes that field off the axis."""
        if not sets:
            return self
        try:
            m = Matrix(self.spec, overrides.apply(self.template, sets), self.path, self.file_on,
                       overrides.apply(self.file_template, sets), self.sets + tuple(sets))
        except overrides.OverrideError as e:
            raise MatrixError(f"{self.spec.name}: {e}") from None
        try:
            check_every_setting(m)
        except ValueError as e:  # ScenarioError: the field's own reason
            raise MatrixError(f"{self.spec.name} with {' '.join(dict.fromkeys(o.given for o in sets))}: {e}") from None
        return m

    def check_chosen(self, chosen: dict[str, list[str]]) -> None:
        """Each value @chosen (sslab.scenario.sets: an axis's name -> its labels asked) that the file
        does not list makes a cell that can run, else MatrixError before anything runs: on a start's
        axis a congestion control the harness knows (a researcher's kernel's own names are taken here
        and checked when it boots: ccas.cc_name_refusal), on another a valid scenario, built with
        the other axes at their first values."""
        for axis, values in chosen.items():
            ax = self.spec.axes[axis]
            for value in (v for v in values if v not in ax.labels(axis)):
                asked = f"{ax.option}={value}"
                if ax.cca:
                    # A word that is no name at all was refused with the other settings (sslab.scenario.sets).
                    if all(cc_name_refusal(cc) is not None for cc in ax.may_run(value)):
                        raise MatrixError(f"{asked}: not a congestion control the harness knows (known: "
                                          f"{', '.join(KNOWN_CCAS)}; a name of your own module: MODULES=dir)")
                    continue
                first = {a: [value] if a == axis else self.spec.axes[a].labels(a)[:1] for a in self.spec.axes}
                try:
                    self.scenario_for(self.probe(combinations(self.spec.axes, first)[0]), 0)
                except ScenarioError as e:
                    raise MatrixError(f"{asked}: makes an invalid {self.spec.name} scenario: "
                                      f"{_error_detail(e)}") from None

    def probe(self, setting: dict[str, str]) -> dict[str, str]:
        """@setting with a start the harness does not know (a researcher's module's name) run as cubic:
        what a scenario's validity depends on, before any kernel is asked for its names."""
        return {a: ("cubic" if a in self.spec.axes and self.spec.axes[a].cca and v not in KNOWN_CCAS else v)
                for a, v in setting.items()}

    def scenario_for(self, setting: dict[str, str], rep: int, offered: Collection[str] | None = None) -> Scenario:
        """The cell's scenario: the template with @setting, its own seed for repetition @rep,
        and (alternate_cases) the compared cases in the order of the repetition.  @offered: the
        congestion controls of the kernel under test (Axis.runs)."""
        data = substitute(self._flows_running(setting, offered), resolved(setting))
        # Errors name the setting by its axes' labels (not a mapping value's every parameter).
        where = f"{self.path} {({a: setting[a] for a in self.spec.axes if a in setting})}"
        s = parse_scenario(data, where)
        if self.spec.starts_during and (why := self.spec.starts_during.refusal(s)):
            raise ScenarioError(f"{where}:\n  {why}")
        # The repetition's seed and case order set on the checked scenario (neither changes what the
        # model checks): no dump and second validation.
        cases = s.cases[::-1] if self.spec.alternate_cases and rep % 2 == 1 else s.cases
        # Alternate in pairs: off-on in even repetitions, on-off in odd ones.
        return s.model_copy(update={"seed": repetition_seed(s.seed, rep), "cases": cases})


    def _flows_running(self, setting: dict[str, str], offered: Collection[str] | None = None) -> dict:
        """The template with each flow whose cc is a cca axis's placeholder ("{large_cc}") set to the
        control the setting's value runs (Axis.runs_as); names and the rest keep the value."""
        runs = {f"{{{k}}}": ax.runs(setting[k], offered) for k, ax in self.spec.axes.items()
                if ax.cca and k in setting and ax.runs(setting[k], offered) != setting[k]}
        cases = self.template.get("cases")
        if not runs or not isinstance(cases, dict):
            return self.template
        flows = [{**f, "cc": runs[f["cc"]]} if isinstance(f, dict) and f.get("cc") in runs else f
                 for f in cases.get("flows", [])]
        return {**self.template, "cases": {**cases, "flows": flows}}


def resolved(setting: dict) -> dict:
    """@setting with a value that names another of its parameters ("{large_rtt}") given that one's value,
    in a string or anywhere inside a list or mapping: a mapping value of one axis may follow another axis
    (the calibration's small flows, each at the large flow's minRTT; a layout's pairs, the first at it).
    A value so given may name another in turn (a layout's pair at "{r1}", the small flows' minRTT that is
    "{large_rtt}"): three rounds at most, a parameter named deeper taken as written."""
    out = setting
    for _ in range(3):
        out = {k: substitute(v, out) for k, v in out.items()}
    return out


def repetition_seed(base: int, rep: int) -> int:
    """Repetition @rep's seed, from the scenario's: its own stream, recorded in the cell's scenario.

    Under virtual time the same seed repeats a cell exactly, so each
    repetition gets a seed of its own (the guest's entropy and the flows'
    start offsets follow it)."""
    digest = hashlib.sha256(f"sslab-repetition/{base}/{rep}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def settings(spec: MatrixSpec, chosen: dict[str, list[str]]) -> list[dict[str, str]]:
    """Every combination of the chosen values (an axis not chosen: all of the file's), in the
    file's order; values beside the file's after them, in the order asked (sslab.scenario.axes)."""
    return combinations(spec.axes, chosen)


def selection_id(spec: MatrixSpec, chosen: dict[str, list[str]]) -> str:
    """The matrix directory's name: which part of the matrix this is (not how many iterations)."""
    parts = [f"{(spec.axes[a].option or a).lower()}-{'+'.join(squeezed(v) for v in vals)}"
             for a, vals in chosen.items() if vals != spec.axes[a].default_labels(a)]
    return "_".join(parts) if parts else "all"


def _error_detail(e: ScenarioError) -> str:
    """A scenario's errors in one line, each reason once: the first field with it, and how many more
    ("cases[0].flows[1].start: cannot read time '-1s' (and 23 more fields)")."""
    lines = [ln.strip() for ln in str(e).splitlines()[1:]] or [str(e)]
    by_reason: dict[str, list[str]] = {}
    for ln in lines:
        field, sep, reason = ln.partition(": ")
        by_reason.setdefault(reason if sep else ln, []).append(field if sep else "")
    return "; ".join(f"{fields[0]}: {reason}" + (f" (and {len(fields) - 1} more fields)" if len(fields) > 1 else "")
                     if fields[0] else reason for reason, fields in by_reason.items())


def matrix_path(name_or_path: str) -> Path:
    """A path as given; else the file that holds the matrix of that name (or of that experiment's name)."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml"):
        return p
    return next((f for name, f in _holders() if name_or_path in (name, f.stem)),
                MATRICES_DIR / f"{name_or_path}.yaml")


def _in_experiment(data: Any) -> bool:
    """@data (a file's) is an experiment file's."""
    return isinstance(data, dict) and str(data.get("format", "")).startswith(FORMAT_KIND + "/")


def _holders() -> list[tuple[str, Path]]:
    """(a matrix's name, the file that holds it), every matrix: the experiments' written in place (by their
    `matrix:` mapping's name), then the matrix files among MATRICES_DIR's (by their stem; the scenarios
    beside them have no `matrix:`)."""
    found = []
    for f in [*sorted(EXPERIMENTS_DIR.glob("*.yaml")), *sorted(MATRICES_DIR.glob("*.yaml"))]:
        try:
            data = yaml.safe_load(f.read_text())
        except yaml.YAMLError:
            continue
        if _in_experiment(data) and isinstance(data.get("matrix"), dict):
            found.append((str(data["matrix"].get("name") or f.stem), f))
        elif f.parent == MATRICES_DIR and isinstance(data, dict) and "matrix" in data:
            found.append((f.stem, f))
    return found


def matrix_files() -> list[Path]:
    """Every file that holds a matrix: an experiment's, in place, or a matrix file."""
    return sorted(f for _, f in _holders())


def load_matrix(name_or_path: str) -> Matrix:
    path = matrix_path(name_or_path)
    by_name = Path(name_or_path).suffix not in (".yaml", ".yml")
    if not path.exists() or (by_name and path not in matrix_files()):
        known = ", ".join(sorted(name for name, _ in _holders()))
        raise MatrixError(f"no matrix {name_or_path!r} (known: {known})")
    data = read_yaml_file(path, MatrixError)
    if _in_experiment(data):
        spec, template = _in_place(path, data)
    else:
        spec, template = read_template_file(path, "matrix", MatrixSpec, MatrixError)
    m = Matrix(spec, template, path).compared()
    check_every_setting(m)
    return m


def _in_place(path: Path, data: dict) -> tuple[MatrixSpec, dict]:
    """The matrix an experiment file holds in place: its `matrix:` mapping (how the cells run: name,
    iterations, compare, labels, ...; its title, else the experiment's), the experiment's axes and
    report, and its scenario as the template (its `extends:` followed relative to the file)."""
    section = data.get("matrix")
    if not isinstance(section, dict) or not isinstance(data.get("scenario"), dict) or not data.get("axes"):
        raise MatrixError(f"{path}: a matrix written in its experiment's file is a `matrix:` mapping beside the "
                          f"experiment's scenario (a mapping: the template) and axes")
    report = data.get("report")
    # A report described here names the page's title; else the experiment's.
    title = report.get("title") if isinstance(report, dict) and report.get("title") else data.get("title")
    spec_data = {"name": path.stem, "title": title, **section, "axes": data["axes"], "report": report}
    try:
        spec = MatrixSpec.model_validate(spec_data)
    except ValidationError as e:
        # Each field by its place in the experiment's file: axes.<axis> and report at its top, the rest
        # under matrix:.
        lines = [f"  {'' if ln.strip().startswith(('axes', 'report')) else 'matrix.'}{ln.strip()}"
                 for ln in field_errors(e)]
        raise MatrixError(f"{path}: invalid matrix ({len(lines)} error{'s' if len(lines) > 1 else ''})\n"
                          + "\n".join(lines)) from None
    try:
        template = inline_scenario_data(data["scenario"], path.parent, f"{path} scenario")
    except ScenarioError as e:
        raise MatrixError(str(e)) from None
    return spec, template


def check_every_setting(m: Matrix) -> None:
    """Every setting of @m makes a valid scenario (CCA axes aside: their availability is the kernel's
    business, checked when planning); a ScenarioError with the field's reason if not."""
    for setting in settings(m.spec, {}):
        m.scenario_for(m.probe(setting), 0)
