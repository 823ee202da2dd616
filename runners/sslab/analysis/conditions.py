"""What a figure ran under: substrate, clock, host model and SUSS version.

Every report prints one line of this for its runs (the project's rule: a
figure is reported with the substrate, clock, host model and SUSS version
it ran under).  Read from the archive alone: each run's meta.json (the
substrate, its clock and the scenario's model with its hosts) and its
flows' records (the SUSS version each cubic_suss flow ran).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..ccas import SUSS_VERSIONS
from ..scenario import Hosts


def host_model_text(model: dict) -> str:
    """The host model a scenario (its model dump) ran with, in one line: runs from before host models
    were recorded had ideal hosts."""
    if "hosts" not in model:
        return "ideal (not recorded: before host models)"
    return Hosts.model_validate(model["hosts"], context={"canonical": True}).describe()


def run_conditions(meta: dict, rows: list[dict] | None = None) -> str:
    """One run's conditions: @meta its meta.json, @rows anything carrying a flow's suss_version."""
    versions = sorted({r["suss_version"] for r in rows or [] if isinstance(r.get("suss_version"), int)})
    suss = ", ".join(SUSS_VERSIONS[v] for v in versions) if versions else "no SUSS flow"
    return (f"substrate {meta['substrate']}, clock {meta.get('clock', '?')}; host model "
            f"{host_model_text(meta['scenario']['model'])}; SUSS: {suss}")


def _flows_of(run_dir: Path) -> list[dict]:
    out = run_dir / "job" / "out"
    index = out / "runs.json"
    if not index.exists():
        return []
    return [f for e in json.loads(index.read_text())
            for f in json.loads((out / "runs" / e["tag"] / "run.json").read_text()).get("flows", [])]


def conditions_of(run_dirs: list[Path]) -> str:
    """The conditions of several runs (a report's scenarios, a matrix's cells) in one line when they
    agree, else each distinct one with how many runs ran under it."""
    seen: dict[str, int] = {}
    for d in run_dirs:
        meta_path = Path(d) / "meta.json"
        if not meta_path.exists():
            continue
        line = run_conditions(json.loads(meta_path.read_text()), _flows_of(Path(d)))
        seen[line] = seen.get(line, 0) + 1
    if not seen:
        return "not recorded (no run's meta.json found)"
    if len(seen) == 1:
        return next(iter(seen))
    return "; ".join(f"[{n} run(s)] {line}" for line, n in seen.items())
