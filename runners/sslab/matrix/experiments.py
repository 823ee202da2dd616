"""Running an experiment file: what `sslab run EXPERIMENT` (and `make <experiment>`) does below the
command line, which only parses the arguments into a Request and prints the Outcome.

    Request --checked, before anything runs--> the parts (or cells) to run
            --the controller runs them--------> run directories --the report--> Outcome

Everything is read and checked first (the file, its scenarios, the selection, the overrides, the
options that do not apply to its kind: Refusal, exit 2); then one boot shows the testbed works
here; then the runs and the report the file names.

Where the runs go: the experiment's parts as cells (matrix.parts.plan_parts), a series' parts its one
axis and a one-scenario experiment a matrix with no axes, each cell compiled once and keyed by one
key wherever it runs, dealt by the matrix's controller (matrix.parts.run_parts_on_hosts) to the hosts
of an inventory: this host's own by default (`playbooks/inventory/localhost.ini`: one UML per core
under virtual time, else the one real-clock substrate; its runner started without Ansible), another
given by INVENTORY=, or (SLURM=1) a Slurm cluster's nodes as one job array (matrix.slurm).  A matrix
runs through the same controller (matrix.orchestrate).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection

from .. import paths
from ..experiment.compile import CompiledPart, compile_parts
from ..scenario import knobs as knob_table
from ..scenario import overrides
from ..scenario.sets import SetError, Sets
from ..scenario.sets import resolve as resolve_sets
from .slurm import SlurmSettings


class Refusal(ValueError):
    """A request refused before anything runs (exit 2); the message names the option and why."""


@dataclass(frozen=True)
class Request:
    """One `sslab run`: the experiment and every option the command line gave (None: not given)."""
    experiment: str
    #: SELECT= / VARIANTS= words (None: the experiment's default selection).
    select: list[str] | None = None
    #: NAME=value settings as given (SET=, the make variables of axes and aliases, knobs by their field
    #: or make variable), resolved by the experiment (sslab.scenario.sets).
    sets: list[str] = field(default_factory=list)
    #: The knobs their own options set (--suss-version, ...), by name.
    knobs: dict[str, Any] = field(default_factory=dict)
    reps: int | None = None
    iterations: int | None = None
    scenario: str | None = None
    #: --report: run directories to write the experiment's report over (no runs).
    report_over: list[str] | None = None
    substrate: str = "uml"
    accel: str = "auto"
    clock: str = "real"
    jobs: int | None = None
    backend: str | None = None
    again: bool = False
    inventory: str | None = None
    serial: str | None = None
    container: str | None = None
    host_timeout: float | None = None
    kernels: list[str] | None = None
    boot_share: int | None = None
    #: SLURM=1: the cells as one Slurm job array (matrix.slurm), with what the user asked of Slurm.
    slurm: SlurmSettings | None = None


@dataclass
class Outcome:
    """What a request left: an exit status, and what to show (a report over runs, or each run's own)."""
    status: int
    report: Path | None = None
    runs: list[Path] = field(default_factory=list)
    took: str = ""
    #: One scenario file run as it is (--scenario): its run's own table, the time beside it.
    alone: bool = False


def run_experiment(req: Request) -> Outcome:
    """Run @req's experiment as asked (module docstring)."""
    from ..analysis.reports import write_over_runs
    from ..experiment import load_experiment
    exp = load_experiment(req.experiment)
    if exp.kind == "matrix":
        return _run_matrix(exp, req)
    for option, value in (("--iter", req.iterations), ("--kernel", req.kernels), ("--boot-share", req.boot_share)):
        if value:
            raise Refusal(f"{option}: {exp.target} is not a matrix ({option} belongs to matrices: "
                          f"`sslab experiments` lists them)")
    if req.slurm and req.scenario:
        raise Refusal("--scenario runs one scenario file here; SLURM=1 runs an experiment's parts as a job array")
    if not req.inventory:
        for option, value in (("--serial", req.serial), ("--container", req.container),
                              ("--host-timeout", req.host_timeout)):
            if value:
                raise Refusal(f"{option}: runs on the hosts of an inventory; give --inventory (INVENTORY=)")
    report = exp.spec.report_of
    sets = resolved(req, f"`make {exp.target}`", aliases=exp.spec.aliases)
    if req.report_over:
        if report.write is None:
            raise Refusal(f"--report: {exp.target}'s report is written with each run; `sslab report RUN_DIR` "
                          f"rebuilds one")
        return Outcome(0, report=write_over_runs(report, [Path(d) for d in req.report_over],
                                                 paths.new_run_dir(reports_dir(exp, req, Sets(sets.knobs)))))
    if req.scenario:
        if exp.kind != "scenario":
            raise Refusal(f"--scenario: {exp.target} runs several parts; SELECT= picks among them")
        from ..experiment.spec import Part
        from ..scenario import load_scenario
        load_scenario(req.scenario)
        parts = [Part(exp.target, frozenset(), path=Path(req.scenario))]
    else:
        parts = exp.choose(req.select)
    parts = exp.overridden(parts, sets.fields)
    # Each part compiled once, here, before any testbed boots: a field that refuses its value stops it.
    cells = compile_parts(exp, parts, req.reps or exp.spec.repetitions, req.backend, sets.knobs)
    from .orchestrate import DEFAULT_INVENTORY
    # One scenario file run as it is: its run's own table, no report over runs.
    executor = OnInventory(Path(req.inventory) if req.inventory else DEFAULT_INVENTORY, slurm=req.slurm,
                           alone=exp.kind == "scenario" and parts[0].path is not None)
    t0 = time.monotonic()
    status, run_dirs = executor.run(exp, cells, req)
    took = executor.took(time.monotonic() - t0, len(run_dirs))
    done = [d for d in run_dirs if d is not None]
    if report.write is None or executor.alone:
        return Outcome(status, runs=done, took=took, alone=executor.alone)
    if not done:
        return Outcome(status)
    added = {name for p in parts for name in p.added}
    return Outcome(status, report=write_over_runs(report, done, paths.new_run_dir(reports_dir(exp, req, sets, added))),
                   took=took)


def resolved(req: Request, what: str, *, axes=(), aliases=None) -> Sets:
    """@req's settings over the experiment @what names (sslab.scenario.sets), refused (Refusal, exit
    2) before anything runs when one names nothing it has."""
    try:
        return resolve_sets(req.sets, what, axes=axes, aliases=aliases, knobs=req.knobs)
    except SetError as e:
        raise Refusal(str(e)) from None


def reports_dir(exp, req: Request, sets: Sets, added: Collection[str] = ()) -> str:
    """results/<this>/ for an experiment's reports over runs: `<output>/reports`, or, for runs of a start
    the file does not list (@added), under a knob, a field set (SET=, an alias) or another backend (a
    cause run: SENDER_QDISC=fq),
    `<output>/reports_<suffix>-<value>`, as a matrix's directory is named: such a report never becomes
    the experiment's `reports/latest`, which the claims ledger and the docs read as the experiment at
    its own settings."""
    from ..experiment.spec import start_suffix
    apart = start_suffix(added) + knob_table.dir_suffix(sets.knobs) + overrides.dir_suffix(list(sets.fields)) \
        + (f"_backend-{req.backend}" if req.backend else "")
    return f"{exp.output}/reports{apart}"


def own_settings_of(name: str) -> dict[str, set]:
    """The values experiment @name's own file gives each knob's setting (analysis.conditions.OWN_SETTINGS'
    names: host model, LANs, sender qdisc, offloads, socket buffers, SUSS version), over every part or
    every setting of its matrix, no knob set: what a run of it as its file has it ran under (Table 1's
    socket buffers linux-senders; E1's raised).  The claims ledger passes over an archive that departs
    from them: a cause run (analysis.claims.judge)."""
    from ..analysis.conditions import setting_fields
    from ..analysis.setting import from_model
    from ..experiment import load_experiment
    from ..scenario import load_scenario, parse_scenario
    from .spec import load_matrix, settings

    exp = load_experiment(name)
    if exp.kind == "matrix":
        m = load_matrix(str(exp.matrix_path))
        scenarios = [m.scenario_for(m.probe(setting), 0) for setting in settings(m.spec, {})]
    else:
        scenarios = [load_scenario(p.path) if p.path else parse_scenario(p.data) for p in exp.parts]
    own: dict[str, set] = {}
    for s in scenarios:
        for k, v in setting_fields(from_model(s.model_dump(mode="json", by_alias=True), 0)).items():
            own.setdefault(k, set()).add(v)
    return own


class OnInventory:
    """The hosts of an Ansible inventory (this host's own by default: its boots through the controller
    without Ansible, matrix.fleet), or with @slurm a Slurm cluster's nodes as one job array
    (matrix.slurm): each part a cell (matrix.parts), its run found by its key.  A part that failed on
    every host it was dealt to (or in its task) is None, and the status says so.  @alone: one scenario
    file run as it is (--scenario), keyed as a series' parts are; its run's own table, no report over
    runs."""

    def __init__(self, inventory: Path, slurm: SlurmSettings | None = None, alone: bool = False):
        self.inventory = inventory
        self.slurm = slurm
        self.alone = alone

    def run(self, exp, cells: list[CompiledPart], req: Request) -> tuple[int, list[Path | None]]:
        """Each store's parts (CompiledPart.store: the experiment's own, and apart from it those the command
        line changed) through the controller in turn; the first non-zero status, each part's run in order."""
        from .parts import run_parts_on_hosts
        status, found = 0, [None] * len(cells)
        for store in dict.fromkeys(c.store for c in cells):
            mine = [i for i, c in enumerate(cells) if c.store == store]
            rc, runs = run_parts_on_hosts(store, exp.spec.title, exp.spec.report_of.name, [cells[i] for i in mine],
                                          self.inventory, series=exp.kind != "scenario", substrate=req.substrate,
                                          jobs=req.jobs, clock=req.clock, accel=req.accel, container=req.container,
                                          serial=req.serial, host_timeout=req.host_timeout, again=req.again,
                                          slurm=self.slurm)
            status = status or rc
            for i, d in zip(mine, runs):
                found[i] = d
        return status, found

    def took(self, seconds: float, n: int) -> str:
        if self.alone:
            return f"({seconds:.0f} s)"
        return f"({seconds:.0f} s for {n} part(s){', as a Slurm job array' if self.slurm else ''})"


def _compared(m, words: list[str] | None):
    """@m with the start @words name on its compared side (VARIANTS=cubic_rapid; the off side may be
    named too): one start at a time, one the file lists or any other the harness knows
    (Matrix.compared)."""
    if not words:
        return m
    c = m.spec.compare
    asked = [w for w in words if w != c.off]
    if len(asked) != 1:
        raise Refusal(f"--select {','.join(words)}: {m.spec.name} compares {c.off} with one start at a time, "
                      f"one of {', '.join(m.starts())} or any other the harness knows (VARIANTS=cubic_rapid)")
    return m.compared(asked[0])


def _run_matrix(exp, req: Request) -> Outcome:
    """A matrix experiment: its cells through the controller (run_matrix_file)."""
    for option, value in (("--reps", req.reps), ("--scenario", req.scenario), ("--report", req.report_over)):
        if value:
            raise Refusal(f"{option}: {exp.target} is a matrix: its cells are chosen by its axes (--set "
                          f"CCA=cubic; make: CCA= BUF= RTT=), the start compared by --select (VARIANTS=) and "
                          f"repetitions by --iter (ITER=); `sslab matrix report DIR` rebuilds its report")
    return Outcome(run_matrix_file(str(exp.matrix_path), req))


def run_matrix_file(matrix: str, req: Request) -> int:
    """The matrix file @matrix (a path or a name under experiments/scenarios/) with @req's selection,
    overrides and knobs, on the kernel the environment names or on each of --kernel's (KERNELS=), by
    the controller (matrix.orchestrate), which prints its progress and report; its exit status."""
    from . import load_matrix
    from .orchestrate import run_matrix, run_on_kernels
    m = _compared(load_matrix(matrix), req.select)
    sets = resolved(req, m.spec.name, axes=m.spec.axes)
    m = m.with_sets(list(sets.fields))
    inventory = Path(req.inventory or paths.REPO_ROOT / "playbooks" / "inventory" / "localhost.ini")
    run_args = dict(iterations=req.iterations, inventory=inventory, serial=req.serial, substrate=req.substrate,
                    jobs=req.jobs, clock=req.clock, container=req.container, backend=req.backend,
                    knobs=sets.knobs, boot_share=req.boot_share, host_timeout=req.host_timeout, slurm=req.slurm)
    if req.kernels:
        return run_on_kernels(m, sets.axes, req.kernels, **run_args)
    return run_matrix(m, sets.axes, **run_args)
