"""An experiment's parts as cells (plan_parts), and those cells on the hosts of an inventory.

A series or one-scenario experiment (E1, E2, E4/E5, E8, E9) is planned as a matrix is: each part (a
scenario with all its repetitions, in one boot) is a cell, a series' parts its one axis and a
one-scenario experiment a matrix with no axes.  They run through the same machinery as a matrix's
cells: each keyed by the same key (sslab.experiment.keys.scenario_key), dealt by the controller to
the hosts as they free up (matrix.fleet: this host's own by default, without Ansible; INVENTORY='s
through it), landing in the experiment's store, and resumed after Ctrl-C or a lost host.

    results/<output>/cells/<key>/       a part's run: a run directory like any other
    results/<output>/plans/, progress/  the plan the hosts read, their progress
    results/<kind>/keys/<key>           -> the part's finished run, wherever it ran (experiment.series);
                                        results/<kind>/latest -> the last part's of a command

A finished part is not run again (AGAIN=1 runs it anyway), and the report is written from the runs
the keys name.  Runs recorded before 8 Dec 2026 (run directories results/<kind>/<run-id>/, which
the keys name) count as finished as they are.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import threading
from pathlib import Path

from .. import paths
from ..experiment.keys import scenario_key
from ..experiment.compile import CompiledPart
from ..experiment.run import Compiled
from ..experiment.series import drop_damaged, finished_run, key_lock, record_finished
from ..plan_record import MatrixPlan, PlannedCell
from ..records import plan_record
from ..substrate import make_substrate
from ..substrate.image import ensure_image
from ..substrate.kinds import kind_of
from ..substrate.preflight import offered_ccas, preflight
from .fleet import on_this_machine
from .orchestrate import (SLURM_INVENTORY, check_hosts, check_jobs, check_slurm, controller_lock, estimate_cell_seconds,
                          host_slots, run_on_hosts, write_plan)
from .plan import new_cell, traffic_code_version
from .slurm import SlurmArray, SlurmSettings
from .spec import MatrixError
from .store import CellStore, set_aside
from .transfer import set_aside_damaged


def cell_key_of(plan: MatrixPlan, compiled: Compiled) -> str:
    """The key @plan gives a scenario (@compiled, as run): the key a run of it on this machine alone has."""
    return scenario_key(plan_record(compiled.plan), plan.image_hash, plan.code_version, plan.clock, plan.substrate)


def plan_parts(output: str, title: str, report: str, parts: list[tuple[str, Compiled]], image_hash: str | None,
               ccas: list[str] | dict[str, str], code_version: str, substrate: str, clock: str,
               series: bool = True, sources: list[dict] | None = None) -> MatrixPlan:
    """An experiment as cells (the matrix plan's shape), which this host's testbeds run
    (run_parts_on_hosts: this host's inventory or another's): a cell per part, its scenario with all
    its repetitions (one boot), compiled here once, keyed by the same key wherever it runs.  A series'
    parts are its one axis, "part"; a one-scenario experiment (@series False) is a matrix with no
    axes and one cell.  @sources: where each part's words came from, which its run's meta.json
    records (a cell of two parts: the first's)."""
    plan = MatrixPlan(matrix=output, title=title, report=report, kind="parts",
                      selection={"part": [n for n, _ in parts]} if series else {}, iterations=1, boot_share=1,
                      image_hash=image_hash, code_version=code_version, available_ccas=ccas,
                      substrate=substrate, clock=clock, cells=[])
    cells: dict[str, PlannedCell] = {}
    for (name, compiled), source in zip(parts, sources or [None] * len(parts)):
        key = cell_key_of(plan, compiled)
        # Two parts that run the same scenario are one cell (one key), run once and linked for both.
        cells.setdefault(key, new_cell(key, {"part": name} if series else {}, 0, compiled, True, source=source))
    plan.cells = list(cells.values())
    return plan


def offered_here(parts: list[CompiledPart], substrate: str, accel: str, clock: str, changes, probe: bool,
                 log=print) -> tuple[str, list[str] | dict[str, str]]:
    """The image the parts run on (built if need be) and the congestion controls its kernel offers,
    refused (MatrixError) when a part asks for one it lacks, before anything runs; @probe: one boot
    here first, so that a substrate that cannot boot stops the run with its cause."""
    manifest = ensure_image(changes=changes).manifest()
    ccas = kind_of(substrate).offered_ccas(manifest)
    if probe:
        testbed = make_substrate(substrate, accel, clock)
        ccas = offered_ccas(testbed, preflight(testbed, log=lambda msg: log(msg, flush=True)))
    if ccas is None:
        raise MatrixError("the image manifest lists no congestion controls for this substrate: rebuild with "
                          "`make image`")
    lacking = sorted({cc for p in parts for cc in p.compiled.congestion_controls()} - set(ccas))
    if lacking:
        raise MatrixError(f"the kernel under test offers no congestion control {', '.join(lacking)}; nothing was "
                          f"run.  It has: {', '.join(ccas)}")
    return manifest["image_hash"], ccas


def run_parts_on_hosts(output: str, title: str, report: str, parts: list[CompiledPart],
                       inventory: Path, *, series: bool = True, substrate: str = "uml", jobs: int | None = None,
                       clock: str = "real", accel: str = "auto",
                       container: str | None = None, serial: str | None = None,
                       host_timeout: float | None = None, again: bool = False, log=print,
                       slurm: SlurmSettings | None = None) -> tuple[int, list[Path | None]]:
    """Run @parts (each compiled, with its name and results/<kind>/, where its key is linked) on the
    hosts of @inventory (this host's own: the default), or with @slurm as one Slurm job array; the
    exit status and each part's finished run directory (None: not finished: failed, or stopped).
    results/<kind>/latest names the run of the last part of each kind."""
    jobs = check_jobs(substrate, jobs)
    if slurm is not None:
        container, hosts, changes = check_slurm(slurm, paths.RESULTS_DIR / output, substrate, inventory, container,
                                                serial, host_timeout)
    else:
        container, hosts, changes = check_hosts(substrate, inventory, container)
    if kind_of(substrate).has_image:
        image_hash, ccas = offered_here(parts, substrate, accel, clock, changes, probe=slurm is not None or (
            not container and any(on_this_machine(v) for v in hosts.values())), log=log)
    else:
        image_hash, ccas = None, []   # a native host checks its own kernel (substrate/native.py)
    clock_name = kind_of(substrate).clock(clock)
    plan = plan_parts(output, title, report, [(p.name, p.compiled) for p in parts], image_hash, ccas,
                      traffic_code_version(), substrate, clock_name, series=series, sources=[p.source for p in parts])
    plan.jobs = jobs
    store_dir = paths.RESULTS_DIR / output
    # Each part's key and where it is linked (results/<kind>/keys/<key>).
    keyed = [(cell_key_of(plan, p.compiled), p.kind) for p in parts]
    with contextlib.ExitStack() as held:
        # Two commands never run one key at once: one that finds a key it would run held by another
        # (two `make wifi`) says so and waits, then takes the other's run (below).  Taken in one order,
        # so that no two commands each hold a key the other waits for.
        name_of = {k: p.name for k, p in zip(keyed, parts)}
        for key, kind in sorted({(k, kind) for k, kind in keyed if again or finished_run(kind, k) is None}):
            held.enter_context(key_lock(kind, key, name_of[key, kind], threading.Event(), log))
        held.enter_context(controller_lock(store_dir))  # one controller per store: a second is refused (exit 2)
        store = CellStore(store_dir)
        if not again:
            # A finished run whose files changed since is no result: set aside (a cell of the store) or no
            # longer named by its key (a run elsewhere: experiment.series), it runs again.
            set_aside_damaged(store, [c.key for c in plan.cells], log=log)
            drop_damaged(keyed, log)
        missing = []
        for cell in plan.cells:
            key = cell.key
            found = [finished_run(kind, key) for k, kind in keyed if k == key]
            if again:
                if store.done(key):
                    set_aside(store_dir, key, "run again (AGAIN=1)")
                # Run again, not read out from a boot a stopped runner left.
                while (partial := store.guest_finished(key)) is not None:
                    shutil.rmtree(partial)
                missing.append(cell)
            elif all(d is not None for d in found):
                log(f"{cell.name}: already run, key {key} ({found[0]}); not run again", flush=True)
            elif store.done(key) or any(d is not None for d in found):
                # Run here or there under another part's name: the same run, linked for this part too.
                run = store.cell_dir(key) if store.done(key) else next(d for d in found if d is not None)
                for k, kind in keyed:
                    if k == key:
                        record_finished(kind, key, run)
            else:
                missing.append(cell)
        plan_path = write_plan(plan, store_dir, missing, SLURM_INVENTORY if slurm else inventory, hosts)
        rc = 0
        if missing and slurm is not None:
            array = SlurmArray(slurm, store_dir, output, plan_path, plan.boots, substrate, clock,
                               log=lambda msg: log(msg, flush=True), env=changes.env())
            log(f"{title}: {len(parts)} part(s) in {len(plan.cells)} cell(s), {len(plan.cells) - len(missing)} "
                f"already run, {len(missing)} to run as {len(array.tasks)} task(s) of one Slurm job array; "
                f"plan {plan_path}", flush=True)
            rc = array.run()
        elif missing:
            est, _ = estimate_cell_seconds(None, plan, store)
            slots = host_slots(hosts, jobs)
            log(f"{title}: {len(parts)} part(s) in {len(plan.cells)} cell(s), {len(plan.cells) - len(missing)} "
                f"already run, {len(missing)} to run on "
                f"{len(hosts)} host(s) ({', '.join(hosts)}), dealt as they free up; plan {plan_path}", flush=True)
            rc = run_on_hosts(plan, plan_path, output, inventory, hosts, slots, est, substrate=substrate, jobs=jobs,
                              clock=clock, container=container, serial=serial, host_timeout=host_timeout,
                              changes=changes, accel=accel)
        runs: list[Path | None] = []
        ran = {c.key for c in missing if store.done(c.key)}
        for key, kind in keyed:
            if key in ran:
                record_finished(kind, key, store.cell_dir(key))
            runs.append(finished_run(kind, key))
            if runs[-1] is not None:
                paths.point_link(paths.RESULTS_DIR / kind / "latest", runs[-1])
        if any(d is None for d in runs):
            print(f"{sum(d is None for d in runs)} part(s) not run (failed or interrupted): the same command runs only "
                  f"those{store.failures_note()}", file=sys.stderr)
            rc = rc or 1
        return rc, runs
