"""What makes a run what it is, as a key: a results store finds finished work by it.

A key covers what decides the traffic (the scenario as run, the image, the
traffic code, the clock), never where or when it ran: under virtual time one
key gives one byte stream, so finished work with a key is not run again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import paths
from ..plan_record import BootPlace
from ..scenario import Scenario

#: Files whose content decides what traffic a cell runs (besides the image).
TRAFFIC_CODE = ("runners/sslab/guest/*.py", "runners/sslab/scenario/*.py", "runners/sslab/substrate/qemu.py",
                "runners/sslab/substrate/uml.py", "runners/sslab/substrate/job.py", "runners/sslab/experiment/plan.py",
                # the leaves the guest imports
                "runners/sslab/ccas.py", "runners/sslab/records.py")


def traffic_code_version(root: Path = paths.REPO_ROOT) -> str:
    h = hashlib.sha256()
    for pattern in TRAFFIC_CODE:
        for p in sorted(root.glob(pattern)):
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def cell_key(scenario: dict, rep: int, image_hash: str, code_version: str, clock: str = "qemu/mttcg",
             boot: BootPlace | None = None) -> str:
    """A cell's identity: what runs (scenario, repetition), on what (image, traffic code) and
    under which clock; results from another clock are other cells.  @boot: where a cell that
    shares its boot with the repetitions before it stands in that boot (see boot_place); a cell
    first in its boot runs exactly as alone and has the key it has alone."""
    parts = {"scenario": scenario, "rep": rep, "image": image_hash, "code": code_version}
    if clock != "qemu/mttcg":  # the keys of cells made before clocks were named stay what they were
        parts["clock"] = clock
    if boot and boot.position > 0:
        parts["boot"] = {"share": boot.share, "position": boot.position}
    return _digest(parts)


def scenario_key(scenario: dict, image_hash: str | None, code_version: str, clock: str, substrate: str) -> str:
    """A scenario run's identity, all its repetitions in one boot (a series' scenario): what runs
    (@scenario, its model as run), on what (image, traffic code, substrate) and under which clock."""
    return _digest({"what": "scenario", "scenario": scenario, "image": image_hash, "code": code_version,
                    "clock": clock, "substrate": substrate})


def scenario_run_key(s: Scenario, image_hash: str | None, code_version: str, clock: str, substrate: str) -> str:
    """@s's scenario_key (its model as run): the one key a scenario run has, here alone or as a cell
    on an inventory's hosts (sslab.matrix.parts)."""
    return scenario_key(s.model_dump(mode="json", by_alias=True), image_hash, code_version, clock, substrate)


def _digest(parts: dict) -> str:
    """A key: the first 20 hex digits of the sha256 of @parts as canonical JSON."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]
