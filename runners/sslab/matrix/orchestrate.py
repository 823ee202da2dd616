"""The controller side of a matrix: plan, run it on the fleet, report.

    sslab matrix run table1 --set CCA=cubic --iter 1 --inventory INV

1. Validate the request (unknown options or values: refused, exit 2).
2. Build or reuse the image; read which congestion controls its kernel
   offers; plan every cell of the selection (matrix.plan_matrix).
3. Leave out cells already done; write the plan, with the boots still to
   run, to plans/.
4. Announce what will run, the chosen defaults and the expected time.
5. Run the boots on the inventory's hosts, dealt as hosts free up
   (matrix.fleet, matrix.dealer; playbook logs under logs/run-<stamp>/),
   with a board of each host's state.
6. Write the report (reports/<stamp>/table.md) and print its answer and where it is.

A host whose inventory entry has no `sslab_workdir` runs its cells in the
controller's own tree and results directory (localhost).  Any other host
gets the controller's tree shipped to its workdir, runs `make deps image`
there, and its finished cells are fetched back and merged (a cell already
on the controller is never replaced).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
from pathlib import Path

from .. import paths
from ..analysis.matrix_report import console_ending, write_kernels_report, write_matrix_report
from ..experiment.timing import expected_seconds
from ..plan_record import Inventory, MatrixPlan, PlannedCell, write_matrix_plan
from ..records import read_plan
from ..scenario.knobs import dir_suffix as knob_suffix
from ..scenario.overrides import dir_suffix as sets_suffix
from ..substrate import make_substrate
from ..substrate.image import ensure_image
from ..substrate.kernelchanges import KernelChanges
from ..substrate.preflight import offered_ccas, preflight
from .fleet import Fleet, inventory_hosts, on_this_machine
from ..substrate.kinds import kind_of
from .plan import boots_to_run, plan_matrix, traffic_code_version
from .slurm import SlurmArray, SlurmSettings, check_cluster, require_commands
from .spec import Matrix, MatrixError, selection_id
from .stopping import EXIT_SIGNAL_BASE, interrupt_exit_status
from .store import CONTROLLER_LOCK, CellStore
from .transfer import set_aside_damaged

DEFAULT_INVENTORY = paths.REPO_ROOT / "playbooks" / "inventory" / "localhost.ini"
#: What a plan run as a Slurm array records as its inventory.
SLURM_INVENTORY = Path("slurm")


def check_jobs(substrate: str, jobs: int | None) -> int:
    """Cells at once per host: up to the host's cores under UML (each pinned to its own), one
    on a real clock (two experiments at once would disturb each other's measurements)."""
    if not kind_of(substrate).side_by_side:
        if jobs not in (None, 1):
            raise MatrixError(f"JOBS={jobs}: on {substrate} the clock is real, and two experiments at once "
                              f"would disturb each other; JOBS>1 needs SUBSTRATE=uml")
        return 1
    cores = len(os.sched_getaffinity(0))
    jobs = cores if jobs is None else jobs
    if not 1 <= jobs <= cores:
        raise MatrixError(f"JOBS={jobs}: this host has {cores} core(s) to pin UMLs to (1..{cores})")
    return jobs


def check_boot_share(substrate: str, boot_share: int | None) -> int:
    """Repetitions of a setting per boot (BOOT_SHARE=): the substrate's own default
    (sslab.substrate.kinds) unless given."""
    if boot_share is None:
        return kind_of(substrate).boot_share
    if boot_share < 1:
        raise MatrixError(f"BOOT_SHARE={boot_share}: at least 1 (1: a boot per cell)")
    return boot_share


def estimate_cell_seconds(m: Matrix | None, plan: MatrixPlan, store: CellStore) -> tuple[float, str]:
    """Seconds per cell: the mean of this matrix's finished cells, else this host's last runs' measure
    applied to the cells' scenarios (sslab.experiment.timing), else the substrate's generous guess."""
    walls = []
    for c in plan.cells:
        info = store.cell_dir(c.key) / "cell.json"
        if info.exists():
            walls.append(json.loads(info.read_text())["wall_s"])
    if walls:
        return statistics.fmean(walls), "measured on this matrix"
    expected = [expected_seconds(read_plan(c.plan), plan.substrate) for c in plan.cells[:8] if c.plan is not None]
    return statistics.fmean(e for e, _ in expected), expected[0][1]


# --------------------------------------------------------------------------
# Run
# --------------------------------------------------------------------------


def matrix_rel_of(m: Matrix, chosen: dict[str, list[str]], backend: str | None, knobs: dict | None,
                  changes: KernelChanges) -> str:
    """The matrix's directory under results/: its selection, then what makes its cells other cells
    (a backend, another start compared (Matrix.compared), a knob's value (sslab.scenario.knobs), a field
    set in its template (Matrix.with_sets) or a kernel other than the matrix's own), archived apart."""
    return f"{m.spec.name}/{selection_id(m.spec, chosen)}" + (f"_backend-{backend}" if backend else "") \
        + (f"_start-{m.spec.compare.on}" if m.spec.compare.on != m.file_on else "") \
        + knob_suffix(knobs) + sets_suffix(list(m.sets)) + (f"_kernel-{changes.label()}" if not changes.empty else "")


def write_plan(plan: MatrixPlan, matrix_dir: Path, missing: list[PlannedCell], inventory: Path, hosts: dict) -> Path:
    """@plan, with the boots its @missing cells run in and the inventory, as the store's newest plan
    file (plans/plan-<stamp>.json): what the hosts read."""
    # Dealt as hosts free up (matrix.dealer): the plan records what was to run, a boot at a time.
    plan.boots = boots_to_run(missing)
    plan.deal = {}
    plan.inventory = Inventory(path=str(inventory), hosts=list(hosts))
    plan_path = matrix_dir / "plans" / f"plan-{paths.stamp()}.json"
    plan_path.parent.mkdir(parents=True, exist_ok=True)
    write_matrix_plan(plan, plan_path)
    return plan_path


def run_on_hosts(plan: MatrixPlan, plan_path: Path, matrix_rel: str, inventory: Path, hosts: dict, slots: dict[str, int],
                 est: float, *, substrate: str, jobs: int, clock: str, container: str | None, serial: str | None,
                 host_timeout: float | None, changes: KernelChanges, accel: str = "auto") -> int:
    """Deal @plan's boots to the hosts of @inventory through Ansible (matrix.fleet) until every one is
    home or given up; the exit status (128 + the signal that stopped it, everything stopped: 130 Ctrl-C, 143
    SIGTERM)."""
    fleet = Fleet(inventory, hosts, paths.RESULTS_DIR / matrix_rel, matrix_rel, plan_path, plan, plan.boots,
                  {"sslab_substrate": substrate, "sslab_jobs": jobs, "sslab_clock": clock, "sslab_accel": accel,
                   "sslab_kernel_source": changes.source_name or "",
                   "sslab_kernel_patches": str(changes.patches_dir or ""),
                   "sslab_modules": str(changes.modules_dir or ""),
                   **({"sslab_container": container} if container else {})},
                  slots, int(serial) if serial else None, est,
                  timeout_s=host_timeout, log=lambda msg: print(msg, file=sys.stderr, flush=True))
    try:
        return fleet.run()
    except KeyboardInterrupt as e:
        return interrupt_exit_status(e)


def check_hosts(substrate: str, inventory: Path, container: str | None) -> tuple[str | None, dict, KernelChanges]:
    """Where cells may run, checked before anything is built: the container (CONTAINER=, or
    SSLAB_CONTAINER) only on the substrate it carries, the inventory's hosts, and a researcher's kernel
    (KERNEL_SOURCE=, KERNEL_PATCHES=, MODULES=) only on this machine, whose image it changes."""
    container = container or os.environ.get("SSLAB_CONTAINER") or None
    if container and not kind_of(substrate).in_container:
        raise MatrixError("CONTAINER= runs cells on the container's UML substrate: SUBSTRATE=uml")
    hosts = inventory_hosts(inventory)
    changes = KernelChanges.from_env()
    if not changes.empty and (container or not all(on_this_machine(v) for v in hosts.values())):
        raise MatrixError("KERNEL_SOURCE=, KERNEL_PATCHES=, MODULES= and KERNELS= build this machine's image only: "
                          "run on this machine (the default inventory), without CONTAINER=")
    return container, hosts, changes


def check_slurm(settings: SlurmSettings, matrix_dir: Path, substrate: str, inventory: Path, container: str | None,
                serial: str | None, host_timeout: float | None) -> tuple[None, dict, KernelChanges]:
    """What SLURM=1 takes, checked before anything is built: the UML substrate (a plain program on the
    nodes), none of the fleet's options (Slurm places and times the tasks: its own --time in SLURM_ARGS),
    and the cluster (slurm.check_cluster).  A researcher's kernel is built here, into the cache the
    nodes share."""
    require_commands()
    if not kind_of(substrate).side_by_side:
        raise MatrixError(f"SLURM=1 runs UML under virtual time on the nodes; SUBSTRATE={substrate} is not that")
    for option, value in (("INVENTORY=", inventory != DEFAULT_INVENTORY), ("CONTAINER=", container),
                          ("SERIAL=", serial), ("HOST_TIMEOUT=", host_timeout)):
        if value:
            raise MatrixError(f"{option} belongs to a fleet; SLURM=1 runs the cells as Slurm places them "
                              f"(its limits: --time in SLURM_ARGS)")
    check_cluster(settings, matrix_dir)
    return None, {}, KernelChanges.from_env()


def host_slots(hosts: dict, jobs: int) -> dict[str, int]:
    """How many boots each host runs at once: its inventory's sslab_host_jobs, else JOBS=."""
    return {h: int(v.get("sslab_host_jobs") or jobs) for h, v in hosts.items()}


def run_matrix(m: Matrix, chosen: dict[str, list[str]], iterations: int | None, inventory: Path,
               serial: str | None = None, substrate: str = "uml", jobs: int | None = None,
               clock: str = "real", container: str | None = None, backend: str | None = None,
               knobs: dict | None = None, check_only: bool = False,
               boot_share: int | None = None, host_timeout: float | None = None,
               slurm: SlurmSettings | None = None) -> int:
    """Run the matrix's missing cells on the kernel the environment names (KernelChanges.from_env) and
    write its report; on the inventory's hosts, or with @slurm as one Slurm job array (matrix.slurm).
    @check_only: stop after the image is built, the testbed booted here and the congestion controls
    asked for found in its kernel (run_on_kernels checks every kernel first)."""
    m.check_chosen(chosen)
    # Cells of another knob's value are other cells (their scenario differs), archived apart.
    m = m.with_knobs(knobs)
    iterations = iterations or m.spec.iterations
    if iterations < 1:
        raise MatrixError(f"ITER must be at least 1, got {iterations}")
    jobs = check_jobs(substrate, jobs)
    boot_share = check_boot_share(substrate, boot_share)
    # Cells built by another backend than the matrix names are archived apart; where they land, the
    # nodes of a Slurm array must see (checked before anything is built).
    matrix_rel = matrix_rel_of(m, chosen, backend, knobs, KernelChanges.from_env())
    matrix_dir = paths.RESULTS_DIR / matrix_rel
    if slurm is not None:
        container, hosts, changes = check_slurm(slurm, matrix_dir, substrate, inventory, container, serial, host_timeout)
    else:
        container, hosts, changes = check_hosts(substrate, inventory, container)
    image = ensure_image(changes=changes)
    # A Slurm array's controller, like a host of this machine, boots here first.
    boots_here = slurm is not None or not container and any(on_this_machine(v) for v in hosts.values())
    if boots_here:
        # One boot on this machine before any cell: a substrate that cannot boot here stops the
        # matrix with its cause (SubstrateUnusable), not with every cell failing twice.  Hosts
        # elsewhere (and containers) check themselves before their first cell (matrix run-cells).
        probe = make_substrate(substrate, clock=clock)
        booted = preflight(probe, log=lambda msg: print(msg, flush=True))
    manifest = image.manifest()
    ccas = kind_of(substrate).offered_ccas(manifest)
    if ccas is not None and boots_here:
        # With what the booted kernel registers (a researcher's module's names among them).
        ccas = offered_ccas(probe, booted)
    if ccas is None:
        raise MatrixError("the image manifest lists no congestion controls for this substrate (an image from "
                          "before they were recorded): rebuild with `make image`")
    # By the control a value's flows run (CCA=bbr2 runs bbr2_sslab: Axis.runs_as).
    lacking = sorted({" or ".join(m.spec.axes[axis].may_run(v)) for axis, values in chosen.items()
                      if m.spec.axes[axis].cca for v in values if m.spec.axes[axis].runs(v, ccas) not in ccas}
                     # The start asked for in the compared place (VARIANTS=), as an axis's value asked for by name.
                     | ({m.spec.compare.on} if m.spec.compare.on != m.file_on and m.spec.compare.on not in ccas else set()))
    if lacking:
        # Asked for by name (CCA=...): refused, not listed as unavailable as the file's own values are.
        raise MatrixError(f"the kernel under test offers no congestion control {', '.join(lacking)}; no cell was "
                          f"run.  It has: {', '.join(ccas)}")
    if check_only:
        return 0
    clock_name = kind_of(substrate).clock(clock)
    plan = plan_matrix(m, chosen, iterations, manifest["image_hash"], ccas, traffic_code_version(),
                       substrate=substrate, clock=clock_name, backend=backend, boot_share=boot_share)
    plan.jobs = jobs
    with controller_lock(matrix_dir):
        store = CellStore(matrix_dir)
        # A finished cell whose files changed since it landed is no result: run it again.
        set_aside_damaged(store, [c.key for c in plan.cells], log=print)
        missing = [c for c in plan.cells if not store.done(c.key)]
        plan_path = write_plan(plan, matrix_dir, missing, SLURM_INVENTORY if slurm else inventory, hosts)
        array = SlurmArray(slurm, matrix_dir, matrix_rel, plan_path, plan.boots, substrate, clock,
                           log=lambda msg: print(msg, flush=True), env=changes.env()) if slurm and missing else None

        est, est_source = estimate_cell_seconds(m, plan, store)
        print(f"{m.spec.title}: {matrix_dir}")
        for u in plan.unavailable:
            print(f"  unavailable, not run and never substituted: {u.setting}: {u.reason}")
        print("  parameters the paper leaves unstated, as chosen here:")
        for k, v in m.spec.defaults.items():
            print(f"    {k}: {v}")
        runnable = len(plan.cells) // iterations  # iterations >= 1, checked above
        where = (f"as {len(array.tasks) if array else 0} task(s) of one Slurm job array" if slurm else
                 f"on {len(hosts)} host(s) ({', '.join(hosts)}), dealt as they free up")
        print(f"  {runnable} settings x {iterations} iteration(s) = {len(plan.cells)} cells; "
              f"{len(plan.cells) - len(missing)} already done, {len(missing)} to run in {len(plan.boots)} boot(s) "
              f"{where}")
        current = {c.key for c in plan.cells}
        # A cell linked under its new key (sslab.matrix.rekey) is in this plan by that link.
        current |= {os.readlink(store.cells / k) for k in current if (store.cells / k).is_symlink()}
        stale = [d for d in (store.cells.iterdir() if store.cells.exists() else [])
                 if not d.name.startswith(".") and d.name not in current]
        if stale:
            print(f"  {len(stale)} cell(s) in {store.cells} are not in this plan (another image or traffic code, "
                  f"or a repetition beyond ITER): kept, not used in this report")
        if array is not None:
            print(f"  substrate {substrate} ({clock_name}); "
                  + (f"up to {boot_share} repetitions of a setting per boot" if boot_share > 1 else "a boot per cell")
                  + f"; about {len(missing) * est / 60:.0f} core-minutes ({est:.0f} s per cell, {est_source}), "
                  f"as fast as the cluster gives cores", flush=True)
        elif missing:
            # Hosts run side by side, unless SERIAL= limits how many at once.
            slots = host_slots(hosts, jobs)
            at_once = sum(sorted(slots.values(), reverse=True)[:int(serial)]) if serial else sum(slots.values())
            per_boot = len(missing) / len(plan.boots)
            rounds = -(-len(plan.boots) // at_once)
            print(f"  substrate {substrate} ({clock_name}), {jobs} boot(s) at a time per host"
                  f"{f', in the container {container}' if container else ''}; "
                  + (f"up to {boot_share} repetitions of a setting per boot (BOOT_SHARE=; the first runs as alone, "
                     f"the others after it, keyed apart)" if boot_share > 1 else "a boot per cell"))
            print(f"  expected time: about {rounds * per_boot * est / 60:.0f} min ({est:.0f} s per cell"
                  f", {est_source};"
                  f" {iterations} iteration(s)"
                  f"{f', the paper ran {m.spec.paper_iterations}' if m.spec.paper_iterations else ''})", flush=True)
        rc = 0
        if array is not None:
            rc = array.run()
        elif missing:
            rc = run_on_hosts(plan, plan_path, matrix_rel, inventory, hosts, slots, est, substrate=substrate, jobs=jobs,
                              clock=clock, container=container, serial=serial, host_timeout=host_timeout, changes=changes)
        failed = [c for c in plan.cells if not store.done(c.key)]
        if rc > EXIT_SIGNAL_BASE:
            # Stopped by Ctrl-C, SIGTERM or a lost terminal: stop now.  A report can take minutes (Table 1's,
            # five), and what is home is reported by `make report ARTIFACT=` or by the run that completes it.
            print(f"stopped: no report written; {len(failed)} cell(s) not done: rerun the same command to run only "
                  f"those (`make report ARTIFACT={matrix_dir}` reports the {len(plan.cells) - len(failed)} home)",
                  file=sys.stderr)
            return rc
        report = write_matrix_report(matrix_dir)
        print(console_ending(report))
        if failed:
            print(f"{len(failed)} cell(s) not done (failed or interrupted): rerun the same command to run only "
                  f"those{store.failures_note()}", file=sys.stderr)
            return rc or 1
        return rc


@contextlib.contextmanager
def controller_lock(matrix_dir: Path):
    """One controller per matrix directory: a second `sslab matrix run` of the same selection would
    plan and deal the same cells (its hosts' runners are refused, one per host and directory), so it
    is refused before it plans anything (exit 2), saying which process runs it."""
    # Beside progress/, not in it: a host lock there means a runner still working (matrix.stopping).
    path = matrix_dir / CONTROLLER_LOCK

    def refuse(pid: str) -> None:
        raise MatrixError(f"another `sslab matrix run` (pid {pid}) is running the cells of {matrix_dir}; nothing "
                          f"was planned or run.  Wait for it (its cells land there), or stop it, then run this "
                          f"again: only what is missing runs")

    with paths.pid_lock(path, when_held=refuse):
        yield


def parse_kernels(terms: list[str]) -> list[KernelChanges]:
    """The `kernel` axis's values (--kernel, make KERNELS=), checked before anything is built: each
    known and readable, none twice, and not beside KERNEL_SOURCE=/KERNEL_PATCHES=/MODULES=."""
    if not KernelChanges.from_env().empty:
        raise MatrixError("KERNELS= names every kernel of the matrix; leave KERNEL_SOURCE=, KERNEL_PATCHES= and "
                          "MODULES= unset beside it (e.g. KERNELS=\"6.1 7.3 6.1,patches=DIR\")")
    kernels = [KernelChanges.parse(t) for t in terms]
    seen: dict[str, str] = {}
    for term, k in zip(terms, kernels):
        if (label := k.label()) in seen:
            raise MatrixError(f"KERNELS: {term!r} is the same kernel as {seen[label]!r}")
        seen[label] = term
    return kernels


@contextlib.contextmanager
def kernel_env(changes: KernelChanges):
    """The process's environment naming this kernel while a matrix runs on it (every step, the image
    build, the preflight, the playbook and its cell runners, reads it); restored after."""
    saved = {k: os.environ.get(k) for k in changes.env()}
    os.environ.update(changes.env())
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_on_kernels(m: Matrix, chosen: dict[str, list[str]], kernel_terms: list[str], **run_args) -> int:
    """The `kernel` axis: the same matrix on several kernels (sources, patch sets, modules).

    1. Every kernel's image is built and booted here, and the congestion controls asked for are
       checked in each, before any cell runs (a patch that does not apply, a kernel that does not
       boot or lacks a name stops everything here).
    2. The cells, kernel after kernel; each kernel's cells are keyed by its image and archived in a
       directory of their own (`_kernel-<label>`; the default kernel's is the matrix's own), so a
       rerun runs only what is missing on each.
    3. A report with the kernels side by side (reports/<stamp>/table.md under the selection's
       `_kernels` directory), from those directories' archives.
    A congestion control only a researcher's module registers (CCA=) is taken on the kernels that
    carry it and refused, before any cell, on any that does not."""
    kernels = parse_kernels(kernel_terms)
    for k in kernels:
        print(f"kernel {k.describe()}: image and boot check", flush=True)
        with kernel_env(k):
            run_matrix(m, chosen, check_only=True, **run_args)
    rc = 0
    dirs: list[tuple[str, Path]] = []
    for k in kernels:
        print(f"\n== kernel {k.describe()} ==", flush=True)
        with kernel_env(k):
            rc = run_matrix(m, chosen, **run_args) or rc
        rel = matrix_rel_of(m, chosen, run_args.get("backend"), run_args.get("knobs"), k)
        dirs.append((k.describe(), paths.RESULTS_DIR / rel))
    base = matrix_rel_of(m, chosen, run_args.get("backend"), run_args.get("knobs"), KernelChanges())
    dest = write_kernels_report(dirs, paths.RESULTS_DIR / f"{base}_kernels")
    print((dest / "table.md").read_text())
    print(f"kernels side by side: {dest / 'table.md'}")
    return rc
