"""Cell keys, plans and dealing cells to hosts."""

from __future__ import annotations

import hashlib

from .. import paths
from ..experiment.keys import TRAFFIC_CODE, cell_key, traffic_code_version
from ..experiment.run import Compiled
from ..plan_record import BootPlace, MatrixPlan, PlannedCell, Unavailable
from ..records import plan_record
from .spec import Matrix, settings

__all__ = ["TRAFFIC_CODE", "cell_key", "traffic_code_version", "boot_place", "new_cell", "setting_id",
           "plan_matrix", "boot_groups", "boots_to_run"]

def boot_place(setting_id: str, rep: int, share: int) -> BootPlace:
    """Where repetition @rep of a setting runs when @share repetitions share a boot: its group
    (repetitions share*k .. share*k + share - 1 of the setting) and its position there.  The
    group's first runs exactly as alone; the others after the repetitions before them in it."""
    return BootPlace(group=f"{setting_id}/{rep // share}", share=share, position=rep % share)


def new_cell(key: str, setting: dict[str, str], rep: int, compiled: Compiled, capture_check: bool,
             boot: BootPlace | None = None, source: dict | None = None) -> PlannedCell:
    """A plan's cell, the one place one is made (its fields: sslab.plan_record.PlannedCell): its
    scenario compiled once, here, into the plan its host runs."""
    return PlannedCell(key=key, setting=setting, rep=rep, name=compiled.name, scenario=compiled.model,
                       plan=plan_record(compiled.plan), capture_check=capture_check, boot=boot, source=source)


def setting_id(setting: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(setting.items()))


def checks_capture(setting: int, rep: int, done: int, every: int, per_setting: int | None) -> bool:
    """Whether tshark reads the captures of repetition @rep of the @setting-th setting, which has had
    @done cells read so far (MatrixSpec.capture_check_every and capture_check_per_setting): the
    repetitions congruent to @setting modulo @every, staggered by the setting so that every setting
    takes its turn (every @every-th cell in plan order checked the same 1/@every of the settings in
    every repetition whenever their number was a multiple of @every: Table 1's 32, 4 of them)."""
    return (rep - setting) % every == 0 and (per_setting is None or done < per_setting)


def plan_matrix(m: Matrix, chosen: dict[str, list[str]], iterations: int, image_hash: str,
                available_ccas: dict[str, str], code_version: str, substrate: str = "vm",
                clock: str = "qemu/mttcg", backend: str | None = None, boot_share: int = 1) -> MatrixPlan:
    """Every cell of the selection, in the order they should run (repetition-major,
    so a partial run covers every setting before repeating any).  @boot_share > 1: that many
    repetitions of a setting share a boot (boot_place); their cells are run group by group."""
    if boot_share < 1:
        raise ValueError(f"boot_share must be at least 1, got {boot_share}")
    spec = m.spec
    runnable, unavailable = [], []

    def labels(setting: dict) -> dict[str, str]:
        """What a cell records of its setting: each axis's label (a mapping value's other parameters,
        a layout's pairs, follow from it)."""
        return {a: str(setting[a]) for a in spec.axes}

    for setting in settings(spec, chosen):
        missing = [" or ".join(spec.axes[a].may_run(v)) for a, v in setting.items()
                   if a in spec.axes and spec.axes[a].cca and spec.axes[a].runs(v, available_ccas) not in available_ccas]
        if missing:
            unavailable.append(Unavailable(setting=labels(setting), reason=f"{', '.join(missing)} is not offered by "
                                                                   f"the kernel under test"))
        else:
            runnable.append(setting)
    cells = []
    checked = [0] * len(runnable)
    for rep in range(iterations):
        for k, setting in enumerate(runnable):
            s = m.scenario_for(setting, rep, available_ccas)
            if backend:
                s = s.model_copy(update={"topology": s.topology.model_copy(update={"backend": backend})})
            compiled = Compiled.of(s)
            boot = boot_place(setting_id(labels(setting)), rep, boot_share) if boot_share > 1 else None
            check = checks_capture(k, rep, checked[k], spec.capture_check_every, spec.capture_check_per_setting)
            checked[k] += check
            cells.append(new_cell(cell_key(plan_record(compiled.plan), rep, image_hash, code_version, clock, boot),
                                  labels(setting),
                                  rep, compiled, check, boot))
    return MatrixPlan(
        matrix=spec.name, title=spec.title, report=spec.report_name,
        matrix_file=str(m.path.relative_to(paths.REPO_ROOT)) if m.path.is_relative_to(paths.REPO_ROOT)
        else str(m.path), matrix_sha256=hashlib.sha256(m.path.read_bytes()).hexdigest(),
        selection=chosen, iterations=iterations, boot_share=boot_share, image_hash=image_hash,
        code_version=code_version, available_ccas=available_ccas, unavailable=unavailable,
        substrate=substrate, clock=clock, defaults=spec.defaults, reference=spec.reference,
        fct_timing=spec.fct_timing, labels=spec.labels,
        runs_as={v: ax.runs(v, available_ccas) for ax in spec.axes.values() if ax.cca for v in ax.runs_as},
        paper_beside={k: v.model_dump() for k, v in spec.paper_beside.items()},
        compare=spec.compare.model_dump(), axes={a: spec.axes[a].option for a in spec.axes},
        # The file's own values per axis: a setting with any other value is beside the paper's grid.
        axis_values={a: spec.axes[a].labels(a) for a in spec.axes}, cells=cells)


def boot_groups(cells: list[PlannedCell]) -> list[list[PlannedCell]]:
    """@cells as the boots they run in: a group per shared boot (in position order), a cell of its
    own otherwise; in the order of each group's first cell."""
    groups: dict[str, list[PlannedCell]] = {}
    for cell in cells:
        groups.setdefault(cell.boot_group, []).append(cell)
    return [sorted(g, key=lambda c: c.boot_position) for g in groups.values()]


def boots_to_run(cells: list[PlannedCell]) -> list[list[str]]:
    """@cells' keys as the boots they run in (boot_groups), in order: what the dealer deals, a boot
    at a time (matrix.dealer)."""
    return [[c.key for c in group] for group in boot_groups(cells)]
