"""Cell keys, plans and dealing cells to hosts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import paths
from .spec import Matrix, settings

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


def cell_key(scenario: dict, rep: int, image_hash: str, code_version: str, clock: str = "qemu/mttcg") -> str:
    """A cell's identity: what runs (scenario, repetition), on what (image, traffic code) and
    under which clock; results from another clock are other cells."""
    parts = {"scenario": scenario, "rep": rep, "image": image_hash, "code": code_version}
    if clock != "qemu/mttcg":  # the keys of cells made before clocks were named stay what they were
        parts["clock"] = clock
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def plan_matrix(m: Matrix, chosen: dict[str, list[str]], iterations: int, image_hash: str,
                available_ccas: dict[str, str], code_version: str, substrate: str = "vm",
                clock: str = "qemu/mttcg", backend: str | None = None) -> dict:
    """Every cell of the selection, in the order they should run (repetition-major,
    so a partial run covers every setting before repeating any)."""
    spec = m.spec
    runnable, unavailable = [], []
    for setting in settings(spec, chosen):
        missing = [v for a, v in setting.items() if spec.axes[a].cca and v not in available_ccas]
        if missing:
            unavailable.append({"setting": setting, "reason": f"{', '.join(missing)} is not offered by the "
                                                              f"kernel under test"})
        else:
            runnable.append(setting)
    cells = []
    for rep in range(iterations):
        for setting in runnable:
            s = m.scenario_for(setting, rep)
            model = s.model_dump(mode="json", by_alias=True)
            if backend:
                model["topology"]["backend"] = backend
            cells.append({"key": cell_key(model, rep, image_hash, code_version, clock), "setting": setting,
                          "rep": rep, "name": s.name, "scenario": model})
    return {"matrix": spec.name, "title": spec.title, "report": spec.report,
            "matrix_file": str(m.path.relative_to(paths.REPO_ROOT)) if m.path.is_relative_to(paths.REPO_ROOT)
            else str(m.path), "matrix_sha256": hashlib.sha256(m.path.read_bytes()).hexdigest(),
            "selection": chosen, "iterations": iterations, "image_hash": image_hash,
            "code_version": code_version, "available_ccas": available_ccas, "unavailable": unavailable,
            "substrate": substrate, "clock": clock,
            "defaults": spec.defaults, "labels": spec.labels,
            "paper_beside": {k: v.model_dump() for k, v in spec.paper_beside.items()},
            "compare": spec.compare.model_dump(),
            "axes": {a: spec.axes[a].option for a in spec.axes},
            # The file's own values per axis: a setting with any other value is beside the paper's grid.
            "axis_values": {a: list(spec.axes[a].values) for a in spec.axes}, "cells": cells}


def deal(cells: list[dict], hosts: list[str]) -> dict[str, list[str]]:
    """Round-robin: host i gets cells i, i+n, i+2n, ... (each host a spread of settings)."""
    out: dict[str, list[str]] = {h: [] for h in hosts}
    for i, cell in enumerate(cells):
        out[hosts[i % len(hosts)]].append(cell["key"])
    return out
