"""Running one host's cells: skip finished ones, retry a failure once, record it."""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import shutil
import time
import traceback
from pathlib import Path

from ..experiment import run_scenario_into, write_manifest
from ..scenario import scenario_from_dump
from .spec import MatrixError
from .store import CellStore, write_json_atomic

#: A failed cell is tried this many times in one invocation, then recorded as failed.
ATTEMPTS = 2


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
