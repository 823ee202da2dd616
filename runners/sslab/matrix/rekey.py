"""Finished runs under the keys they have now, where their keys were made the old way.

Until 2 Dec 2026 a key hashed the scenario's model and, with the guest's code, the front end's
source (sslab.experiment.keys: LEGACY_TRAFFIC_CODE); now it hashes the compiled plan and the code
that runs it, so a change to the front end that compiles to the same plans keeps every key.  That
change itself gives every run a new key.  `sslab matrix rekey` finds each finished run whose old key
this tree would still have made (the traffic code it ran with is this tree's by the old definition,
so its plan is what this tree compiles) and links it under its new key beside the old one:

- a matrix cell: cells/<new> -> <old>, for each cell of each plans/plan-*.json whose code version
  is this tree's old one (the cell's plan is in the plan file);
- a series' or a scenario's run: results/<kind>/keys/<new> -> the run the old key names, where the
  old key is the one this tree gives the run's recorded scenario (its meta.json), compiled anew.

Nothing is moved, rewritten or removed; a run made by other code keeps its old key only, which the
old keys would not have found either.  Running it twice links nothing twice.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..analysis.archive import cell_done
from ..experiment.keys import (LEGACY_TRAFFIC_CODE, cell_key, legacy_cell_key, legacy_scenario_key, scenario_key,
                               traffic_code_version)
from ..experiment.run import Compiled
from ..plan_record import read_matrix_plan
from ..records import plan_record
from ..scenario import scenario_from_dump


@dataclass
class Rekeyed:
    """What a pass found: runs linked under their new key, runs that had it already, and runs whose
    code is not this tree's (left under their old key)."""
    linked: list[Path] = field(default_factory=list)
    already: int = 0
    other_code: int = 0

    def summary(self) -> str:
        return (f"{len(self.linked)} run(s) linked under their new key, {self.already} had it already, "
                f"{self.other_code} made by other code (kept under their old key)")


def _link(link: Path, target: Path, dry_run: bool, out: Rekeyed) -> None:
    """@link -> @target (relative, so the results tree can move), unless @link exists."""
    if link.exists() or link.is_symlink():
        out.already += 1
        return
    if not dry_run:
        os.symlink(os.path.relpath(target, link.parent), link)
    out.linked.append(link)


def rekey_matrix(matrix_dir: Path, legacy_code: str, code: str, out: Rekeyed, dry_run: bool = False) -> None:
    """The finished cells of @matrix_dir's plans made by this tree's code (@legacy_code, its old
    definition), each linked under the key @code gives it now."""
    for plan_path in sorted((matrix_dir / "plans").glob("plan-*.json")):
        plan = read_matrix_plan(plan_path)
        for cell in plan.cells:
            if not cell_done(matrix_dir, cell.key):
                continue
            # Other code, or a plan from before plans carried each cell's compiled plan.
            if plan.code_version != legacy_code or cell.plan is None:
                out.other_code += 1
                continue
            if plan.kind == "parts":
                old = legacy_scenario_key(cell.scenario, plan.image_hash, plan.code_version, plan.clock,
                                          plan.substrate)
                new = scenario_key(cell.plan, plan.image_hash, code, plan.clock, plan.substrate)
            else:
                old = legacy_cell_key(cell.scenario, cell.rep, plan.image_hash, plan.code_version, plan.clock,
                                      cell.boot)
                new = cell_key(cell.plan, cell.rep, plan.image_hash, code, plan.clock, cell.boot)
            if old != cell.key:
                out.other_code += 1
                continue
            _link(matrix_dir / "cells" / new, matrix_dir / "cells" / cell.key, dry_run, out)


def rekey_runs(kind_dir: Path, legacy_code: str, code: str, out: Rekeyed, dry_run: bool = False) -> None:
    """The runs results/<kind>/keys/ names (@kind_dir), each linked under its new key where this tree
    gives its recorded scenario the old key it has."""
    keys = kind_dir / "keys"
    for link in sorted(keys.iterdir()):
        if link.name.startswith("."):   # a key's lock (sslab.experiment.series), or a link being made
            continue
        run = link.resolve()
        meta_path = run / "meta.json"
        if not link.is_symlink() or not meta_path.is_file():
            continue
        meta = json.loads(meta_path.read_text())
        model = (meta.get("scenario") or {}).get("model")
        image = (meta.get("image") or {}).get("hash")
        clock, substrate = meta.get("clock"), meta.get("substrate")
        if model is None or clock is None or substrate is None:
            out.other_code += 1
            continue
        if legacy_scenario_key(model, image, legacy_code, clock, substrate) != link.name:
            out.other_code += 1
            continue
        compiled = Compiled.of(scenario_from_dump(model))
        new = scenario_key(plan_record(compiled.plan), image, code, clock, substrate)
        _link(keys / new, run, dry_run, out)


def rekey(results: Path = paths.RESULTS_DIR, dry_run: bool = False) -> Rekeyed:
    """Every matrix directory and every results/<kind>/keys/ under @results (sslab.matrix.rekey)."""
    legacy_code = traffic_code_version(paths.REPO_ROOT, LEGACY_TRAFFIC_CODE)
    code = traffic_code_version()
    out = Rekeyed()
    for plans in sorted(results.rglob("plans")):
        if plans.is_dir() and (plans.parent / "cells").is_dir():
            rekey_matrix(plans.parent, legacy_code, code, out, dry_run)
    for keys in sorted(results.rglob("keys")):
        if keys.is_dir() and keys.parent != results:
            rekey_runs(keys.parent, legacy_code, code, out, dry_run)
    return out
