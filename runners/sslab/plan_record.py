"""The matrix plan record, typed: the cells a controller planned, as the hosts run them and the reports read them.

A matrix (E6, E7) or an experiment's parts on an inventory (sslab.matrix.parts) is planned into
cells; the controller writes the plan to results/<matrix>/plans/plan-<stamp>.json
("sslab.matrix-plan" records), each host's cell runner reads it to run the cells dealt to it, and
the reports read the newest one to know what was asked.  Every one of them goes through this
definition:

    MatrixPlan                    what was asked (matrix, selection, iterations, boot share), on what
      unavailable [Unavailable]   (image, traffic code, substrate, clock), the matrix file's tables
      cells [PlannedCell]         its reports read, and how this run of it deals its missing cells
        boot BootPlace | None

Each field says what it is where it is declared (and on the documentation's formats page).

A cell's key is made from its scenario, repetition and boot place (sslab.experiment.keys.cell_key),
not from this record: the record only carries it.

The file is the record's JSON with a field that is None left out (a cell of a boot of its own has no
"boot"); a plan written before a field existed reads with the field's default.  A host process and
the reports read it the same way (read_matrix_plan); a mistyped or missing field is refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .records import RecordFormatError, read_record, stamped

KIND = "sslab.matrix-plan"


class _Record(BaseModel):
    # Unknown fields are kept, not refused: a newer harness may add one without a format bump.
    model_config = ConfigDict(extra="allow")


class BootPlace(_Record):
    """Where a cell stands when repetitions of its setting share a boot; the group's first runs
    exactly as alone."""
    group: str  # "<setting>/<k>": repetitions share*k .. share*k + share - 1 of the setting
    share: int  # repetitions per boot
    position: int  # this cell's place in its boot, from 0


class PlannedCell(_Record):
    """One cell of a plan."""
    key: str  # its identity (sslab.experiment.keys.cell_key): its directory under cells/
    setting: dict[str, str]  # axis -> value (a part's: {"part": name})
    rep: int  # its repetition
    name: str  # the setting's scenario name
    scenario: dict[str, Any]  # the scenario as validated (its model_dump): the record's (keys made before 2 Dec 2026 hashed it)
    #: Its plan (sslab.scenario.to_plan, every quantity resolved): what the host that runs it reads, and
    #: what its key covers.
    #: None in matrix plans written before 29 Nov 2026, which reports may still read.
    plan: dict[str, Any] | None = None
    capture_check: bool = True  # whether tshark reads its captures too (a sample of a matrix's cells)
    boot: BootPlace | None = None  # where it stands in a shared boot; None: a boot of its own
    #: Where an experiment's part's words came from (sslab.experiment.compile.source_of), which its run's
    #: meta.json records; None for a matrix's cells (their matrix file and setting say it).
    source: dict[str, Any] | None = None

    @property
    def boot_group(self) -> str:
        """The boot this cell runs in: its shared boot's group, else its own key."""
        return self.boot.group if self.boot else self.key

    @property
    def boot_position(self) -> int:
        return self.boot.position if self.boot else 0


class Unavailable(_Record):
    """A setting the kernel under test cannot run: reported, never run, never substituted."""
    setting: dict[str, str]  # axis -> value
    reason: str  # e.g. "bbr2 is not offered by the kernel under test"


class Inventory(_Record):
    """The inventory a run of the plan deals its cells to."""
    path: str  # the inventory file
    hosts: list[str]  # its hosts' names


class MatrixPlan(_Record):
    """A matrix's cells as the controller planned them (plans/plan-<stamp>.json): what each host's
    cell runner runs and what the reports read."""
    matrix: str  # the matrix's name (an experiment's output name for its parts)
    title: str  # the report's title
    report: str  # the report writer: table1, fairness (a matrix); the experiment's (its parts)
    kind: Literal["matrix", "parts"] = "matrix"  # a matrix file's grid, or an experiment's parts on an inventory
    selection: dict[str, list[str]]  # axis -> the values chosen
    iterations: int  # repetitions of each setting
    boot_share: int = 1  # repetitions of a setting per boot
    image_hash: str | None  # the image the cells were keyed for (None: a native host's own kernel)
    code_version: str  # the traffic code the cells were keyed for (sslab.experiment.keys)
    available_ccas: dict[str, str] | list[str] = {}  # the kernel's congestion controls (name -> where from)
    unavailable: list[Unavailable] = []  # settings chosen but not run
    substrate: str = "vm"  # what the cells boot
    clock: str = "qemu/mttcg"  # under which clock (another clock's cells are other cells)
    matrix_file: str | None = None  # the matrix file, from the repository's root
    matrix_sha256: str | None = None  # its content's hash when planned
    defaults: dict[str, str] = {}  # what the paper leaves unstated, as the matrix file chose it
    reference: str | None = None  # the paper values it is compared with (results/reference/<name>.yaml), if not its own
    fct_timing: Literal["client", "server"] = "client"  # a flow's FCT as its client or its server's trace times it
    labels: dict[str, str] = {}  # how reports name a value (cubic -> CUBIC)
    runs_as: dict[str, str] = {}  # a value whose flows run another congestion control (bbr2 -> bbr2_sslab)
    paper_beside: dict[str, dict[str, Any]] = {}  # a value shown beside another's paper column, and why
    compare: dict[str, Any] = {}  # the compared parameter and its off and on values
    axes: dict[str, str | None] = {}  # axis -> its make variable
    axis_values: dict[str, Any] | None = None  # axis -> the matrix file's own values (the paper's grid)
    cells: list[PlannedCell]  # every cell, in the order they should run
    boots: list[list[str]] = []  # the missing cells' keys, a boot at a time, as this run deals them
    deal: dict[str, list[str]] = {}  # host -> keys, for a host run without the dealer (run-cells)
    inventory: Inventory | None = None  # where this run deals them
    jobs: int | None = None  # boots at a time per host

    def record(self) -> dict:
        """The plan as its file holds it: stamped, None fields left out."""
        return stamped(KIND, _without_none(self.model_dump(mode="json")))


def _without_none(record: dict) -> dict:
    """@record with its top-level None fields, and its cells', left out (a None nested deeper, in a
    scenario or a matrix file's table, is a value and stays)."""
    out = {k: v for k, v in record.items() if v is not None}
    if "cells" in out:
        out["cells"] = [{k: v for k, v in c.items() if v is not None} for c in out["cells"]]
    return out


def write_matrix_plan(plan: MatrixPlan, path: Path) -> None:
    Path(path).write_text(json.dumps(plan.record(), indent=1, sort_keys=True))


def read_matrix_plan(path: Path) -> MatrixPlan:
    """The plan in @path; RecordFormatError naming the path and the field if this harness cannot read it."""
    data = read_record(path, KIND)
    try:
        return MatrixPlan.model_validate({k: v for k, v in data.items() if k != "format"})
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RecordFormatError(f"{path}: not a matrix plan this harness reads: {where}: {first['msg']}") from None
