"""Record formats: every JSON record the harness writes names its kind and format version.

A record is one JSON object in a file (a scenario plan, a run's run.json, a
run directory's meta.json, a matrix cell's cell.json, a report's
summary.json, a matrix plan, a job's job.json and status.json, the guest's
index of runs runs.json) or an experiment file (experiments/*.yaml).  Each
carries

    "format": "<kind>/<version>"        e.g. "sslab.run/1"

so that a reader can tell, before it reads a field, whether it knows the
record: the same version is read; an older one is read as well (readers
keep the fields they have always had; a record written before formats
existed has no "format" and counts as version 0); a newer one is refused by
name, with the path, the version found and the version this harness reads,
never half-read.  Bump a kind's version when a field changes meaning or
goes away, not when one is added.

A leaf module, standard library only: the guest imports it too (the plan
it is handed is a record).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: kind -> the version this harness writes and reads up to.
FORMATS: dict[str, int] = {
    "sslab.plan": 1,      # a scenario's plan, host -> guest (sslab.experiment.plan)
    "sslab.run": 1,       # one run's record, guest -> host (sslab.guest.scenario_run)
    "sslab.meta": 1,      # a run directory's conditions (sslab.experiment.run)
    "sslab.manifest": 1,  # a run directory's artifacts with their sha256
    "sslab.cell": 1,      # a matrix cell's record (sslab.matrix.cells)
    "sslab.matrix-plan": 1,  # a matrix's expanded cells (sslab.matrix.orchestrate)
    "sslab.summary": 1,   # a report's figures (sslab.analysis)
    "sslab.experiment": 1,  # an experiment file, experiments/*.yaml (sslab.experiment.spec)
    "sslab.job": 1,       # a job directory's job.json, host -> agent (sslab.substrate.job)
    "sslab.status": 1,    # the agent's out/status.json, agent -> host (sslab.substrate.agent)
    "sslab.runs": 1,      # the guest's index of runs, out/runs.json (sslab.guest.scenario_run)
}


class RecordFormatError(ValueError):
    """A record this harness cannot read (a newer format, or another kind)."""


def format_of(kind: str) -> str:
    """The "format" value this harness writes for @kind."""
    return f"{kind}/{FORMATS[kind]}"


def stamped(kind: str, record: dict) -> dict:
    """@record with its "format" first (a new dict; @record is not changed)."""
    return {"format": format_of(kind), **{k: v for k, v in record.items() if k != "format"}}


def check(kind: str, record: Any, where: str = "record") -> dict:
    """@record if this harness can read it as @kind; RecordFormatError naming @where if not."""
    if not isinstance(record, dict):
        raise RecordFormatError(f"{where}: not a {kind} record (a JSON object), got {type(record).__name__}")
    fmt = record.get("format")
    if fmt is None:
        return record  # written before record formats: version 0
    got_kind, _, version = str(fmt).rpartition("/")
    if got_kind != kind or not version.isdigit():
        raise RecordFormatError(f"{where}: a {fmt!r} record where a {kind} record belongs")
    if int(version) > FORMATS[kind]:
        raise RecordFormatError(
            f"{where}: {kind} format {version}, newer than this harness reads ({FORMATS[kind]}); "
            f"it was written by a newer slowstart-lab: update this checkout (git pull) to read it")
    return record


def runs_index(runs: list[dict]) -> dict:
    """The record of a job's index of runs (out/runs.json): {"format", "runs": [...]}."""
    return stamped("sslab.runs", {"runs": runs})


def read_runs_index(path: Path) -> list[dict]:
    """The runs listed in an out/runs.json: a record (version 1) or, written before formats, a bare list."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise RecordFormatError(f"{path}: not JSON ({e})") from None
    except OSError as e:
        raise RecordFormatError(f"{path}: cannot read it ({e.strerror})") from None
    if isinstance(data, list):
        return data  # version 0
    return check("sslab.runs", data, str(path))["runs"]


def read_record(path: Path, kind: str) -> dict:
    """The @kind record in @path, checked (see check())."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise RecordFormatError(f"{path}: not JSON ({e})") from None
    except OSError as e:
        raise RecordFormatError(f"{path}: cannot read it ({e.strerror})") from None
    return check(kind, data, str(path))
