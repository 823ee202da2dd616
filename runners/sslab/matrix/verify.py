"""`make verify ARTIFACT=dir [SAMPLE=n]`: rerun some cells of an archived matrix and say, cell by cell,
whether they give the same bytes.

Under virtual time one seed gives one byte stream, so an archive is checkable: a cell's plan (its
scenario resolved, its seed) is in the matrix plan, the image and traffic code it ran are named
there.  A sample of the finished cells (SAMPLE of them, spread evenly over the plan's order) is run
again on this host into results/verify/<stamp>/ (report.md, verify.json: each cell's verdict as
data, and the reruns), each from its plan alone, and every flow of every
run is compared with the archived one, ACK by ACK (the sender's trace) and packet by packet (the
bottleneck's capture): sslab.analysis.oracle.compare_runs, as `sslab same-bytes` does.

A cell that shared a boot (BOOT_SHARE) is the run its boot's earlier repetitions led to: those are
run again before it, in the same boot, as they were, and only the sampled cell is compared.

Refused (exit 2) before anything runs, with the reason, when this host cannot give those bytes: an
artifact run under a real clock (QEMU, native: no two runs are the same bytes), another image than
this tree builds, or another traffic code (check out the commit the artifact names).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..analysis.archive import ArchiveError, current_cells, latest_plan
from ..analysis.oracle import FlowComparison, compare_runs, difference_text
from ..plan_record import MatrixPlan, PlannedCell
from ..records import stamped
from .cells import run_cell_group
from .plan import traffic_code_version
from .spec import MatrixError

#: Substrates whose runs are bit-reproducible (virtual time).
VIRTUAL = ("uml",)


@dataclass
class CellVerdict:
    cell: PlannedCell
    flows: list[FlowComparison]

    @property
    def same(self) -> bool:
        return bool(self.flows) and all(f.identical for f in self.flows)


def sample(cells: list[tuple[PlannedCell, Path]], n: int) -> list[tuple[PlannedCell, Path]]:
    """@n of @cells, spread evenly over their order (the first, the last, and between); all of them
    when there are no more than @n."""
    if n >= len(cells):
        return list(cells)
    if n == 1:
        return [cells[0]]
    return [cells[round(i * (len(cells) - 1) / (n - 1))] for i in range(n)]


def verifiable(artifact: Path, image_hash: str) -> tuple[MatrixPlan, list[tuple[PlannedCell, Path]]]:
    """The artifact's plan and finished cells, when this host can rerun them bit for bit: MatrixError
    naming why not, before anything runs."""
    try:
        _, plan = latest_plan(artifact)
    except ArchiveError as e:
        raise MatrixError(str(e)) from None
    if plan.substrate not in VIRTUAL:
        raise MatrixError(f"{artifact} ran on {plan.substrate} ({plan.clock}), a real clock: no two runs give the same "
                          f"bytes there, so there is nothing to verify byte for byte")
    if plan.image_hash != image_hash:
        raise MatrixError(f"{artifact} ran on image {plan.image_hash[:12]}; this tree builds {image_hash[:12]}: check "
                          f"out the commit its cells name (their meta.json's code) and run `make verify` there")
    code = traffic_code_version()
    if plan.code_version != code:
        raise MatrixError(f"{artifact} ran traffic code {plan.code_version[:12]}; this tree's is {code[:12]}: check out "
                          f"the commit its cells name (their meta.json's code)")
    cells = current_cells(artifact, plan)
    if not cells:
        raise MatrixError(f"{artifact}: no finished cell to verify")
    return plan, cells


def boot_leading_to(plan: MatrixPlan, cell: PlannedCell) -> list[PlannedCell]:
    """The cells of @cell's boot up to it, in position order (just @cell when it had a boot of its own)."""
    if cell.boot is None:
        return [cell]
    group = sorted((c for c in plan.cells if c.boot and c.boot.group == cell.boot.group), key=lambda c: c.boot_position)
    return [c for c in group if c.boot_position <= cell.boot_position]


def verify_cells(plan: MatrixPlan, chosen: list[tuple[PlannedCell, Path]], substrate, dest: Path,
                 log=print) -> list[CellVerdict]:
    """Run each of @chosen again (with its boot's earlier repetitions) into @dest/<key>/ and compare."""
    out = []
    for cell, archived in chosen:
        group = boot_leading_to(plan, cell)
        dirs = [dest / (c.key if c is cell else f".before-{c.key}") for c in group]
        for d in dirs:
            d.mkdir(parents=True)
        log(f"verify: {cell.name} iteration {cell.rep} (cell {cell.key[:8]})"
            + (f", after {len(group) - 1} repetition(s) of its boot" if len(group) > 1 else ""))
        run_cell_group(group, dirs, substrate, "verify", report=False)
        out.append(CellVerdict(cell, compare_runs(archived, dest / cell.key)))
    return out


def report_lines(artifact: Path, plan: MatrixPlan, verdicts: list[CellVerdict], of: int) -> list[str]:
    same = sum(v.same for v in verdicts)
    lines = [f"# Verify: {artifact}", "",
             f"**{same} of {len(verdicts)} cells the same bytes** (a sample of {len(verdicts)} of the {of} finished "
             f"cells; image {plan.image_hash[:12]}, traffic code {plan.code_version[:12]}, {plan.substrate} "
             f"{plan.clock}).", "",
             "Each cell run again from its plan and seed (a shared boot's earlier repetitions before it), every "
             "flow compared with the archive's ACK by ACK (tcp_probe) and packet by packet (the bottleneck's "
             "capture).", "",
             "| cell | iteration | flows | the same bytes | first difference |", "|---|---|---|---|---|"]
    for v in verdicts:
        first = next((f for f in v.flows if not f.identical), None)
        lines.append(f"| {v.cell.name} ({v.cell.key[:8]}) | {v.cell.rep} | {len(v.flows)} | "
                     f"{sum(f.identical for f in v.flows)} | "
                     f"{'–' if first is None else f'{first.run} port {first.port}: ' + difference_text(first, 'rerun')} |")
    return lines + [""]


def verdict_record(artifact: Path, plan: MatrixPlan, verdicts: list[CellVerdict], of: int) -> dict:
    """verify.json: what report.md says, as data (each cell's verdict and its flows' comparisons)."""
    return stamped("sslab.verify", {
        "artifact": str(artifact), "image_hash": plan.image_hash, "code_version": plan.code_version,
        "substrate": plan.substrate, "clock": plan.clock, "finished_cells": of,
        "same": sum(v.same for v in verdicts),
        "cells": [{"key": v.cell.key, "name": v.cell.name, "rep": v.cell.rep, "same": v.same,
                   "flows": [f.as_dict() for f in v.flows]} for v in verdicts]})


def new_verify_dir() -> Path:
    return paths.RESULTS_DIR / "verify" / paths.stamp()
