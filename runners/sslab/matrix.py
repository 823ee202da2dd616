"""Matrices: many scenarios, split into cells, run resumably and archived.

A matrix file (playbooks/matrices/*.yaml) is a scenario template plus axes:

    matrix:
      name: table1
      axes:                               # make variable that narrows each
        large_cc: {option: CCA, values: [cubic, bbr, bbr2], cca: true}
        buffer:   {option: BUF, values: [1BDP, 2BDP]}
      iterations: 2                       # ITER=
      compare: {param: small, "off": cubic_hs, "on": cubic_suss}
    scenario: {... "{large_cc}" ... "{buffer}" ...}

A *setting* is one value per axis; a *cell* is one setting x one
repetition: one scenario, run in one boot of the testbed, holding the
compared cases (SUSS off and on) back to back.  Cells are what get dealt to
hosts, retried, archived and resumed.

Cell key = sha256 of (the cell's scenario, its repetition, the image hash,
the traffic code's version).  The traffic code is the code that decides what
runs on the wire (runners/sslab/guest/, scenario.py, vm.py, job.py); the
image hash covers the kernel, our module and the guest agent.  Analysis
code is left out on purpose: reports rebuild from the archive, so a change
in a table does not make any traffic stale.

On disk, results/<matrix>/<selection>/:

    plans/plan-<stamp>.json   each invocation's plan (cells, keys, dealing)
    cells/<key>/              a finished cell; cell.json is written last and
                              the directory appears by one rename, so a cell
                              is either complete or absent
    cells/.partial-<key>-*    a cell being run (never counted as done)
    failed/<key>-<stamp>-a<N>/  a failed attempt, with its log (error.txt)
    progress/<host>.json      the running host's progress
    reports/<stamp>/          tables and plots (reports/latest -> newest)

Nothing is ever overwritten: a cell directory that exists is never
replaced, a report goes to a new directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import itertools
import json
import os
import re
import secrets
import shutil
import time
import traceback
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from . import paths
from .scenario import KNOWN_CCAS, Scenario, _substitute, parse_scenario, scenario_from_dump

MATRICES_DIR = paths.REPO_ROOT / "playbooks" / "matrices"
#: Files whose content decides what traffic a cell runs (besides the image).
TRAFFIC_CODE = ("runners/sslab/guest/*.py", "runners/sslab/scenario.py", "runners/sslab/vm.py",
                "runners/sslab/job.py")
#: A failed cell is tried this many times in one invocation, then recorded as failed.
ATTEMPTS = 2


class MatrixError(ValueError):
    """A matrix request that cannot run (refused before anything starts)."""


# --------------------------------------------------------------------------
# The matrix file
# --------------------------------------------------------------------------


class Axis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    option: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    values: list[str] = Field(min_length=1)
    #: The values name congestion controls: checked against the kernel under test.
    cca: bool = False


class Compare(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    param: str
    off: str
    on: str


class MatrixSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str
    report: Literal["table1", "fairness"]
    iterations: int = Field(ge=1, le=1000)
    #: How many the paper ran, when it says (printed beside ours).
    paper_iterations: int | None = None
    axes: dict[str, Axis] = Field(min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)
    alternate_cases: bool = True
    compare: Compare
    defaults: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _options_unique(self):
        opts = [a.option for a in self.axes.values()]
        if len(set(opts)) != len(opts):
            raise ValueError(f"axes share a make option: {opts}")
        return self


class Matrix:
    """A loaded matrix file: its spec and its scenario template."""

    def __init__(self, spec: MatrixSpec, template: dict, path: Path):
        self.spec, self.template, self.path = spec, template, path

    def scenario_for(self, setting: dict[str, str], rep: int) -> Scenario:
        data = _substitute(self.template, setting)
        s = parse_scenario(data, f"{self.path} {setting}")
        if self.spec.alternate_cases and rep % 2 == 1:
            # Alternate in pairs: off-on in even repetitions, on-off in odd ones.
            s = scenario_from_dump({**s.model_dump(by_alias=True), "cases": [
                c.model_dump(by_alias=True) for c in reversed(s.cases)]})
        return s


def matrix_path(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml"):
        return p
    return MATRICES_DIR / f"{name_or_path}.yaml"


def load_matrix(name_or_path: str) -> Matrix:
    path = matrix_path(name_or_path)
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in MATRICES_DIR.glob("*.yaml")))
        raise MatrixError(f"no matrix {name_or_path!r} (known: {known})")
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or set(data) != {"matrix", "scenario"}:
        raise MatrixError(f"{path}: a matrix file has exactly two sections, matrix and scenario")
    try:
        spec = MatrixSpec.model_validate(data["matrix"])
    except ValidationError as e:
        raise MatrixError(f"{path}: invalid matrix: {e}") from None
    m = Matrix(spec, data["scenario"], path)
    # Every setting must make a valid scenario (CCA axes aside: their
    # availability is the kernel's business, checked when planning).
    for setting in settings(spec, {}):
        probe = {k: ("cubic" if spec.axes[k].cca and v not in KNOWN_CCAS else v) for k, v in setting.items()}
        m.scenario_for(probe, 0)
    return m


# --------------------------------------------------------------------------
# Selection: the make variables (CCA=cubic BUF=2BDP RTT=100 ITER=3)
# --------------------------------------------------------------------------


def _norm(v: Any) -> str:
    return re.sub(r"\s+", "", str(v)).lower()


def _match(given: str, values: list[str]) -> str | None:
    """The axis value @given names: exact (case-blind), or a bare number taking the values' unit."""
    g = _norm(given)
    for v in values:
        nv = _norm(v)
        if g == nv:
            return v
        m = re.fullmatch(r"([0-9.]+)([a-z]+)", nv)
        if m and re.fullmatch(r"[0-9.]+", g) and float(g) == float(m[1]):
            return v
    return None


def resolve_selection(spec: MatrixSpec, options: dict[str, str]) -> dict[str, list[str]]:
    """Axis -> chosen values, from OPTION=v1,v2 pairs; unknown options or values are refused."""
    by_option = {a.option: name for name, a in spec.axes.items()}
    chosen: dict[str, list[str]] = {}
    for opt, raw in options.items():
        if opt not in by_option:
            raise MatrixError(f"{spec.name} has no option {opt} (it has: {', '.join(sorted(by_option))})")
        axis = by_option[opt]
        values = spec.axes[axis].values
        picked = []
        for part in str(raw).split(","):
            if not part.strip():
                continue
            v = _match(part, values)
            if v is None:
                raise MatrixError(f"{opt}={part.strip()}: not a value of {spec.name}'s {axis} "
                                  f"(one of: {', '.join(values)})")
            if v not in picked:
                picked.append(v)
        if not picked:
            raise MatrixError(f"{opt} is empty")
        chosen[axis] = picked
    return chosen


def settings(spec: MatrixSpec, chosen: dict[str, list[str]]) -> list[dict[str, str]]:
    names = list(spec.axes)
    lists = [chosen.get(n, spec.axes[n].values) for n in names]
    # Keep the file's order of values, whatever order they were asked in.
    lists = [[v for v in spec.axes[n].values if v in lst] for n, lst in zip(names, lists)]
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def selection_id(spec: MatrixSpec, chosen: dict[str, list[str]]) -> str:
    """The matrix directory's name: which part of the matrix this is (not how many iterations)."""
    parts = [f"{spec.axes[a].option.lower()}-{'+'.join(_norm(v) for v in vals)}"
             for a, vals in chosen.items() if vals != spec.axes[a].values]
    return "_".join(parts) if parts else "all"


# --------------------------------------------------------------------------
# Keys and plans
# --------------------------------------------------------------------------


def traffic_code_version(root: Path = paths.REPO_ROOT) -> str:
    h = hashlib.sha256()
    for pattern in TRAFFIC_CODE:
        for p in sorted(root.glob(pattern)):
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def cell_key(scenario: dict, rep: int, image_hash: str, code_version: str) -> str:
    blob = json.dumps({"scenario": scenario, "rep": rep, "image": image_hash, "code": code_version},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def plan_matrix(m: Matrix, chosen: dict[str, list[str]], iterations: int, image_hash: str,
                available_ccas: dict[str, str], code_version: str) -> dict:
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
            cells.append({"key": cell_key(model, rep, image_hash, code_version), "setting": setting,
                          "rep": rep, "name": s.name, "scenario": model})
    return {"matrix": spec.name, "title": spec.title, "report": spec.report,
            "matrix_file": str(m.path.relative_to(paths.REPO_ROOT)) if m.path.is_relative_to(paths.REPO_ROOT)
            else str(m.path), "matrix_sha256": hashlib.sha256(m.path.read_bytes()).hexdigest(),
            "selection": chosen, "iterations": iterations, "image_hash": image_hash,
            "code_version": code_version, "available_ccas": available_ccas, "unavailable": unavailable,
            "defaults": spec.defaults, "labels": spec.labels, "compare": spec.compare.model_dump(),
            "axes": {a: spec.axes[a].option for a in spec.axes}, "cells": cells}


def deal(cells: list[dict], hosts: list[str]) -> dict[str, list[str]]:
    """Round-robin: host i gets cells i, i+n, i+2n, ... (each host a spread of settings)."""
    out: dict[str, list[str]] = {h: [] for h in hosts}
    for i, cell in enumerate(cells):
        out[hosts[i % len(hosts)]].append(cell["key"])
    return out


# --------------------------------------------------------------------------
# The cell store
# --------------------------------------------------------------------------


class CellStore:
    """cells/, failed/ and progress/ of one matrix directory."""

    def __init__(self, matrix_dir: Path):
        self.dir = Path(matrix_dir)
        self.cells = self.dir / "cells"
        self.failed = self.dir / "failed"

    def done(self, key: str) -> bool:
        return (self.cells / key / "cell.json").is_file()

    def cell_dir(self, key: str) -> Path:
        return self.cells / key

    def failures(self, key: str) -> list[Path]:
        return sorted(self.failed.glob(f"{key}-*")) if self.failed.exists() else []

    def new_partial(self, key: str) -> Path:
        self.cells.mkdir(parents=True, exist_ok=True)
        d = self.cells / f".partial-{key}-{secrets.token_hex(3)}"
        d.mkdir()
        return d

    def commit(self, partial: Path, key: str) -> Path:
        """Make a finished cell count: one rename.  Refuses to replace an existing cell."""
        final = self.cells / key
        if final.exists():
            raise FileExistsError(f"cell {key} already exists; not overwritten ({partial} kept)")
        os.rename(partial, final)  # atomic; fails if @final appeared meanwhile and is non-empty
        return final

    def record_failure(self, partial: Path, key: str, attempt: int, error: str) -> Path:
        self.failed.mkdir(parents=True, exist_ok=True)
        dest = self.failed / f"{key}-{paths.stamp()}-a{attempt}"
        (partial / "error.txt").write_text(error)
        os.rename(partial, dest)
        return dest

    def stale_partials(self) -> list[Path]:
        return sorted(self.cells.glob(".partial-*")) if self.cells.exists() else []


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(3)}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


# --------------------------------------------------------------------------
# Running cells (on one host)
# --------------------------------------------------------------------------


def compress_pcaps(run_dir: Path) -> int:
    """gzip every pcap of a finished cell in place (the archive keeps .pcap.gz only)."""
    n = 0
    for p in sorted(run_dir.rglob("*.pcap")):
        with open(p, "rb") as src, gzip.open(p.with_name(p.name + ".gz"), "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        p.unlink()
        n += 1
    return n


def run_one_cell(cell: dict, dest: Path, substrate, host: str) -> dict:
    """Run @cell's scenario into @dest (a partial directory) and finish its archive."""
    from .experiment import run_scenario_into, write_manifest
    s = scenario_from_dump(cell["scenario"])
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    run_scenario_into(s, dest, substrate, source={"matrix_cell": cell["key"], "name": s.name})
    compress_pcaps(dest)
    runs = json.loads((dest / "job" / "out" / "runs.json").read_text())
    traffic = 0.0
    for r in runs:
        traffic += json.loads((dest / "job" / "out" / "runs" / r["tag"] / "run.json").read_text())["seconds"]
    meta = json.loads((dest / "meta.json").read_text())
    info = {"key": cell["key"], "setting": cell["setting"], "rep": cell["rep"], "name": cell["name"],
            "host": host, "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "wall_s": round(time.monotonic() - t0, 1), "traffic_s": round(traffic, 1),
            "substrate_s": meta.get("substrate_seconds"), "runs": [r["tag"] for r in runs]}
    (dest / "cell.json").write_text(json.dumps(info, indent=1, sort_keys=True))
    write_manifest(dest)
    return info


class Progress:
    """progress/<host>.json: what this host has done, for the controller's bar."""

    def __init__(self, store: CellStore, host: str, keys: list[str]):
        self.path = store.dir / "progress" / f"{host}.json"
        self.state = {"host": host, "total": len(keys), "done": 0, "skipped": 0, "failed": 0,
                      "running": None, "running_since": None, "cell_seconds": [], "pid": os.getpid(),
                      "updated": time.time(), "finished": False}

    def update(self, **kw) -> None:
        self.state.update(kw, updated=time.time())
        write_json_atomic(self.path, self.state)


def run_cells(matrix_dir: Path, plan: dict, host: str, keys: list[str], substrate, log=print,
              runner=run_one_cell) -> dict:
    """Run this host's cells: skip finished ones, retry a failure once, record it.

    Returns counts.  An interruption (Ctrl-C, a lost host) leaves the cell in
    progress as a .partial directory, which never counts as done.
    """
    store = CellStore(matrix_dir)
    by_key = {c["key"]: c for c in plan["cells"]}
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        raise MatrixError(f"cells not in the plan: {unknown[:3]}")
    with host_lock(store, host):
        return _run_cells_locked(store, by_key, host, keys, substrate, log, runner)


@contextlib.contextmanager
def host_lock(store: CellStore, host: str):
    """One runner per host and matrix: a second would boot a second VM on the same cores."""
    path = store.dir / "progress" / f"{host}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise MatrixError(f"another runner for host {host} is working on {store.dir} "
                              f"(pid {f.read().strip() or '?'}); wait for it or stop it") from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        yield


def _run_cells_locked(store: CellStore, by_key: dict, host: str, keys: list[str], substrate, log,
                      runner) -> dict:
    progress = Progress(store, host, keys)
    progress.update()
    counts = {"ran": 0, "skipped": 0, "failed": 0}
    for n, key in enumerate(keys, 1):
        cell = by_key[key]
        if store.done(key):
            counts["skipped"] += 1
            progress.update(skipped=counts["skipped"])
            log(f"[{host}] {n}/{len(keys)} {cell['name']} r{cell['rep']}: already done ({key})")
            continue
        for attempt in range(1, ATTEMPTS + 1):
            partial = store.new_partial(key)
            progress.update(running=f"{cell['name']} r{cell['rep']}", running_since=time.time())
            log(f"[{host}] {n}/{len(keys)} {cell['name']} r{cell['rep']}: running (attempt {attempt}, {key})")
            t0 = time.monotonic()
            try:
                info = runner(cell, partial, substrate, host)
                store.commit(partial, key)
            except Exception as e:  # noqa: BLE001 - any failure of a cell is recorded, then retried
                err = f"{type(e).__name__}: {e}\n\n{traceback.format_exc()}"
                where = store.record_failure(partial, key, attempt, err)
                log(f"[{host}]   attempt {attempt} failed: {str(e).splitlines()[0][:200]} (log: {where})")
                if attempt == ATTEMPTS:
                    counts["failed"] += 1
                    progress.update(failed=counts["failed"], running=None)
                continue
            counts["ran"] += 1
            secs = progress.state["cell_seconds"] + [round(time.monotonic() - t0, 1)]
            progress.update(done=counts["ran"], cell_seconds=secs, running=None)
            log(f"[{host}]   done in {info['wall_s']:.0f} s (traffic {info['traffic_s']:.0f} s)")
            break
    progress.update(finished=True, running=None)
    return counts


def check_host_matches(plan: dict, image_hash: str, code_version: str) -> None:
    """A host must run exactly the image and traffic code the cell keys were made for."""
    if image_hash != plan["image_hash"]:
        raise MatrixError(f"this host's image {image_hash[:12]} is not the plan's {plan['image_hash'][:12]}")
    if code_version != plan["code_version"]:
        raise MatrixError(f"this host's traffic code {code_version[:12]} is not the plan's "
                          f"{plan['code_version'][:12]}: ship the controller's tree")


def current_cells(matrix_dir: Path, plan: dict) -> list[tuple[dict, Path]]:
    store = CellStore(matrix_dir)
    return [(c, store.cell_dir(c["key"])) for c in plan["cells"] if store.done(c["key"])]


def latest_plan(matrix_dir: Path) -> tuple[Path, dict]:
    plans = sorted((Path(matrix_dir) / "plans").glob("plan-*.json"))
    if not plans:
        raise MatrixError(f"{matrix_dir} holds no plan (plans/plan-*.json): not a matrix directory")
    return plans[-1], json.loads(plans[-1].read_text())


def validate_options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise MatrixError(f"--set takes OPTION=value, got {p!r}")
        k, v = p.split("=", 1)
        out[k.strip().upper()] = v.strip()
    return out

