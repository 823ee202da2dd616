"""What makes a run what it is, as a key: a results store finds finished work by it.

A key covers what decides the traffic (the plan the scenario compiles to, the
image, the code that boots the guest and runs the plan, the clock), never where
or when it ran: under virtual time one key gives one byte stream, so finished
work with a key is not run again.  The front end (sslab.scenario: the files,
their axes, the compiler) is not in it: whatever it decides is in the plan, so
a change there that compiles to the same plans keeps every key.  The file's
own words in the plan (`asked`: its description, the buffer as written) are
left out too; a run found by its key keeps the words of the file that made it.

Keys made before 2 Dec 2026 hashed the scenario's model and the front end's
source (LEGACY_TRAFFIC_CODE); `sslab matrix rekey` gives the runs that those
keys would still find the keys they have now (sslab.matrix.rekey).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import paths
from ..plan_record import BootPlace

#: Files whose content decides what traffic a plan makes (besides the image): the guest's code and the
#: leaves its job imports, and the host's code that boots the guest and hands it the plan.
TRAFFIC_CODE = ("runners/sslab/guest/*.py", "runners/sslab/substrate/qemu.py", "runners/sslab/substrate/uml.py",
                "runners/sslab/substrate/job.py", "runners/sslab/experiment/plan.py",
                # the leaves the job (sslab.guest.scenario_run) imports, and nothing else of the host's:
                # JOB_LEAVES, which a test holds to what it imports.  Not ccas.py: the harness's reading
                # of the module's declarations is the front end's, and what it decides is in the plan.
                "runners/sslab/records.py")
#: The modules outside sslab.guest that a run's job imports (their files are in TRAFFIC_CODE).
JOB_LEAVES = ("sslab.records",)
#: What the traffic code was before 2 Dec 2026, in its order: the front end's source with the rest
#: (sslab.matrix.rekey reads it to tell which runs the old keys still found).
LEGACY_TRAFFIC_CODE = ("runners/sslab/guest/*.py", "runners/sslab/scenario/*.py", "runners/sslab/substrate/qemu.py",
                       "runners/sslab/substrate/uml.py", "runners/sslab/substrate/job.py",
                       "runners/sslab/experiment/plan.py", "runners/sslab/ccas.py", "runners/sslab/records.py")
#: Plan fields that are the file's words, not what runs.
NOT_IN_KEY = ("asked",)


def traffic_code_version(root: Path = paths.REPO_ROOT, patterns: tuple[str, ...] = TRAFFIC_CODE) -> str:
    h = hashlib.sha256()
    for pattern in patterns:
        for p in sorted(root.glob(pattern)):
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def plan_identity(plan: dict) -> dict:
    """What of a plan record (sslab.records.plan_record) a key covers: all of it but the file's words."""
    return {k: v for k, v in plan.items() if k not in NOT_IN_KEY}


def cell_key(plan: dict, rep: int, image_hash: str, code_version: str, clock: str = "qemu/mttcg",
             boot: BootPlace | None = None) -> str:
    """A cell's identity: what runs (@plan, the scenario's compiled plan record, and the repetition),
    on what (image, traffic code) and under which clock; results from another clock are other cells.
    @boot: where a cell that shares its boot with the repetitions before it stands in that boot (see
    boot_place); a cell first in its boot runs exactly as alone and has the key it has alone."""
    return _cell_digest({"plan": plan_identity(plan)}, rep, image_hash, code_version, clock, boot)


def scenario_key(plan: dict, image_hash: str | None, code_version: str, clock: str, substrate: str) -> str:
    """A scenario run's identity, all its repetitions in one boot (a series' scenario): what runs
    (@plan, its compiled plan record), on what (image, traffic code, substrate) and under which clock."""
    return _scenario_digest({"plan": plan_identity(plan)}, image_hash, code_version, clock, substrate)


def legacy_cell_key(scenario: dict, rep: int, image_hash: str, code_version: str, clock: str = "qemu/mttcg",
                    boot: BootPlace | None = None) -> str:
    """The key a cell had before 2 Dec 2026 (its scenario's model, not its plan): what
    sslab.matrix.rekey looks for."""
    return _cell_digest({"scenario": scenario}, rep, image_hash, code_version, clock, boot)


def legacy_scenario_key(scenario: dict, image_hash: str | None, code_version: str, clock: str,
                        substrate: str) -> str:
    """The key a scenario run had before 2 Dec 2026 (sslab.matrix.rekey)."""
    return _scenario_digest({"scenario": scenario}, image_hash, code_version, clock, substrate)


def _cell_digest(what: dict, rep: int, image_hash: str, code_version: str, clock: str,
                 boot: BootPlace | None) -> str:
    """A cell's key of @what runs (its plan, or before 2 Dec 2026 its scenario) and the rest."""
    parts = {**what, "rep": rep, "image": image_hash, "code": code_version}
    if clock != "qemu/mttcg":  # the keys of cells made before clocks were named stay what they were
        parts["clock"] = clock
    if boot and boot.position > 0:
        parts["boot"] = {"share": boot.share, "position": boot.position}
    return _digest(parts)


def _scenario_digest(what: dict, image_hash: str | None, code_version: str, clock: str, substrate: str) -> str:
    """A scenario run's key of @what runs (its plan, or before 2 Dec 2026 its scenario) and the rest."""
    return _digest({"what": "scenario", **what, "image": image_hash, "code": code_version, "clock": clock,
                    "substrate": substrate})


def _digest(parts: dict) -> str:
    """A key: the first 20 hex digits of the sha256 of @parts as canonical JSON."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]
