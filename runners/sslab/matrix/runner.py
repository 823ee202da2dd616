"""What one host of a matrix runs: the cells a plan deals it (`sslab matrix run-cells`, which Ansible's
cells.yml starts on each host, the controller's own included).

    the plan, the keys dealt --checked--> this host's testbeds (preflight) --> each boot's cells
    --> the finished cells packed for the controller (even when one failed)
"""

from __future__ import annotations

import signal
from pathlib import Path

from ..plan_record import read_matrix_plan
from ..substrate import make_substrate
from ..substrate.kinds import kind_of
from ..substrate.preflight import ready
from .experiments import Refusal, Request
from .stopping import EXIT_SIGNAL_BASE


def run_host_cells(matrix_dir: Path, plan_path: Path, host: str, keys: list[str] | None, redo: list[str],
                   req: Request, pack_to: Path | None = None, log=print) -> dict:
    """Run the cells of the plan at @plan_path that are @host's (@keys, the batch the controller deals it
    now; None: the plan's dealing) into @matrix_dir, setting @redo aside first (they arrived damaged);
    then, with @pack_to, tar what finished for the controller.  The counts of run_cells."""
    from . import MatrixError, check_host_matches, run_cells, set_aside, traffic_code_version
    from ..substrate.leftovers import stop_orphaned_umls
    from ..substrate.preflight import SubstrateUnusable
    from .cells import record_host_error
    from .orchestrate import check_jobs
    plan = read_matrix_plan(plan_path)
    keys = keys if keys is not None else plan.deal.get(host)
    if keys is None:
        raise MatrixError(f"the plan deals no cells to host {host!r}")
    if stray := sorted(set(redo) - set(keys)):
        raise Refusal(f"--redo names cells not run here: {', '.join(stray)}")

    def stop(signum, frame):
        # Unwind: the VM's QEMU is killed on the way out; the cell in
        # progress stays a .partial directory, which never counts.
        raise SystemExit(EXIT_SIGNAL_BASE + signum)
    signal.signal(signal.SIGTERM, stop)
    jobs = check_jobs(req.substrate, req.jobs)
    # The UMLs of a runner killed outright worked under the matrix directory, which on a fleet host
    # is not under the results directory the substrate looks in (the host's SSLAB_RESULTS).
    stop_orphaned_umls(matrix_dir)
    try:
        substrates = testbeds(req, jobs)
    except SubstrateUnusable as e:
        # The controller prints this, not Ansible's record of the failed task.
        record_host_error(matrix_dir, host, str(e))
        raise
    image_hash = substrates[0].image.manifest()["image_hash"] if kind_of(req.substrate).has_image \
        else plan.image_hash
    check_host_matches(plan, image_hash, traffic_code_version())
    for key in redo:
        set_aside(matrix_dir, key, "arrived damaged at the controller; run again")
    try:
        return run_cells(matrix_dir, plan, host, keys, substrates, log=log)
    finally:
        if pack_to:
            # What finished comes home even when a cell failed (not when stopped: SystemExit).
            from .transfer import pack_cells
            pack_cells(matrix_dir, plan, host, pack_to, keys)


def testbeds(req: Request, jobs: int) -> list:
    """This host's testbeds for @req: one UML per core under virtual time (@jobs of them), else the one
    real-clock substrate; the first has passed the preflight (one boot on this host)."""
    if kind_of(req.substrate).side_by_side:
        from ..substrate.uml import allowed_cpus
        substrates = [make_substrate("uml", cpu=c) for c in allowed_cpus()[:jobs]]
    else:
        substrates = [make_substrate(req.substrate, req.accel, req.clock)]
    ready(substrates[0])
    return substrates
