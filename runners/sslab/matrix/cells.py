"""Running one host's cells: skip finished ones, retry a failure once, record it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import threading
import time
import traceback
from pathlib import Path

from ..records import read_record, read_runs_index, stamped
from ..experiment import gzip_in_place, run_scenario_into, write_manifest
from ..scenario import scenario_from_dump
from .spec import MatrixError
from .store import CellStore, write_json_atomic

#: A failed cell is tried this many times in one invocation, then recorded as failed.
ATTEMPTS = 2


def compress_pcaps(run_dir: Path) -> int:
    """gzip every pcap of a finished cell in place (the archive keeps .pcap.gz only)."""
    n = 0
    for p in sorted(run_dir.rglob("*.pcap")):
        gzip_in_place(p)
        n += 1
    return n


def run_one_cell(cell: dict, dest: Path, substrate, host: str) -> dict:
    """Run @cell's scenario into @dest (a partial directory) and finish its archive."""
    s = scenario_from_dump(cell["scenario"])
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    run_scenario_into(s, dest, substrate, source={"matrix_cell": cell["key"], "name": s.name})
    compress_pcaps(dest)
    runs = read_runs_index(dest / "job" / "out" / "runs.json")
    traffic = 0.0
    for r in runs:
        traffic += read_record(dest / "job" / "out" / "runs" / r["tag"] / "run.json", "sslab.run")["seconds"]
    meta = read_record(dest / "meta.json", "sslab.meta")
    info = {"key": cell["key"], "setting": cell["setting"], "rep": cell["rep"], "name": cell["name"],
            "host": host, "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "wall_s": round(time.monotonic() - t0, 1), "traffic_s": round(traffic, 1),
            "substrate_s": meta.get("substrate_seconds"), "runs": [r["tag"] for r in runs]}
    (dest / "cell.json").write_text(json.dumps(stamped("sslab.cell", info), indent=1, sort_keys=True))
    write_manifest(dest)
    return info


class Progress:
    """progress/<host>.json: what this host has done, for the controller's bar (thread-safe)."""

    def __init__(self, store: CellStore, host: str, keys: list[str]):
        self.path = store.dir / "progress" / f"{host}.json"
        self.lock = threading.Lock()
        self.running: dict[str, float] = {}  # cell label -> when it started
        self.state = {"host": host, "total": len(keys), "done": 0, "skipped": 0, "failed": 0,
                      "running": None, "running_since": None, "cell_seconds": [], "pid": os.getpid(),
                      "updated": time.time(), "finished": False, "workers": 1}

    def update(self, **kw) -> None:
        with self.lock:
            self.state.update(kw, updated=time.time())
            write_json_atomic(self.path, self.state)

    def add(self, counter: str, cell_seconds: float | None = None) -> None:
        with self.lock:
            self.state[counter] += 1
            if cell_seconds is not None:
                self.state["cell_seconds"] = self.state["cell_seconds"] + [round(cell_seconds, 1)]
            self.state["updated"] = time.time()
            write_json_atomic(self.path, self.state)

    def start(self, label: str) -> None:
        with self.lock:
            self.running[label] = time.time()
            self._running_fields()

    def end(self, label: str) -> None:
        with self.lock:
            self.running.pop(label, None)
            self._running_fields()

    def _running_fields(self) -> None:
        labels = list(self.running)
        self.state.update(running=" + ".join(labels) or None,
                          running_since=min(self.running.values()) if labels else None, updated=time.time())
        write_json_atomic(self.path, self.state)


def run_cells(matrix_dir: Path, plan: dict, host: str, keys: list[str], substrate, log=print,
              runner=run_one_cell) -> dict:
    """Run this host's cells: skip finished ones, retry a failure once, record it.

    @substrate is one substrate, or a list of them to run that many cells at
    once (UMLs pinned to one core each; the same seeds give the same results
    serial or parallel).  Returns counts.  An interruption (Ctrl-C, SIGTERM,
    a lost host) leaves the cells in progress as .partial directories, which
    never count as done, and records no failure for them.
    """
    store = CellStore(matrix_dir)
    by_key = {c["key"]: c for c in plan["cells"]}
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        raise MatrixError(f"cells not in the plan: {unknown[:3]}")
    workers = list(substrate) if isinstance(substrate, (list, tuple)) else [substrate]
    with host_lock(store, host):
        return _run_cells_locked(store, by_key, host, keys, workers, log, runner)


@contextlib.contextmanager
def host_lock(store: CellStore, host: str):
    """One runner per host and matrix: a second would boot more testbeds on the same cores."""
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


class Stopping(Exception):
    """The runner is being stopped: the cell in progress is left unfinished, not failed."""


def _run_cells_locked(store: CellStore, by_key: dict, host: str, keys: list[str], workers: list, log,
                      runner) -> dict:
    progress = Progress(store, host, keys)
    progress.update(workers=len(workers))
    todo: "queue.Queue[tuple[int, str]]" = queue.Queue()
    for n, key in enumerate(keys, 1):
        todo.put((n, key))
    stop = threading.Event()

    def one_cell(n: int, key: str, substrate) -> None:
        cell = by_key[key]
        label = f"{cell['name']} r{cell['rep']}"
        if store.done(key):
            progress.add("skipped")
            log(f"[{host}] {n}/{len(keys)} {label}: already done ({key})")
            return
        for attempt in range(1, ATTEMPTS + 1):
            if stop.is_set():
                return
            partial = store.new_partial(key)
            progress.start(label)
            log(f"[{host}] {n}/{len(keys)} {label}: running (attempt {attempt}, {key})")
            t0 = time.monotonic()
            try:
                info = runner(cell, partial, substrate, host)
                store.commit(partial, key)
            except Exception as e:  # noqa: BLE001 - any failure of a cell is recorded, then retried
                progress.end(label)
                if stop.is_set():
                    return  # killed on the way out: not a failure of the cell
                err = f"{type(e).__name__}: {e}\n\n{traceback.format_exc()}"
                where = store.record_failure(partial, key, attempt, err)
                log(f"[{host}]   attempt {attempt} failed: {str(e).splitlines()[0][:200]} (log: {where})")
                if attempt == ATTEMPTS:
                    progress.add("failed")
                continue
            progress.end(label)
            progress.add("done", time.monotonic() - t0)
            log(f"[{host}]   {label} done in {info['wall_s']:.0f} s (traffic {info['traffic_s']:.0f} s)")
            return

    def worker(substrate) -> None:
        while not stop.is_set():
            try:
                n, key = todo.get_nowait()
            except queue.Empty:
                return
            one_cell(n, key, substrate)

    if len(workers) == 1:
        worker(workers[0])  # in this thread: a signal unwinds straight through the running cell
    else:
        threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in workers]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(timeout=0.5)
        except BaseException:
            # Ctrl-C or SIGTERM reached this thread: stop handing out cells and end
            # the running testbeds; their cells stay .partial.
            stop.set()
            for w in workers:
                getattr(w, "stop_all", lambda: None)()
            for t in threads:
                t.join(timeout=30)
            raise
    progress.update(finished=True)
    with progress.lock:
        progress.running.clear()
        progress._running_fields()
    return {"ran": progress.state["done"], "skipped": progress.state["skipped"], "failed": progress.state["failed"]}


def record_host_error(matrix_dir: Path, host: str, message: str) -> None:
    """progress/<host>.json says the host ran nothing and why (a substrate that does not boot there):
    the controller prints this message rather than Ansible's record of the failed task."""
    path = CellStore(matrix_dir).dir / "progress" / f"{host}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"host": host, "total": 0, "done": 0, "skipped": 0, "failed": 0, "running": None,
                             "running_since": None, "cell_seconds": [], "pid": os.getpid(), "updated": time.time(),
                             "finished": True, "workers": 0, "error": message})


def host_error(progress_file: Path) -> str | None:
    """The error a host's runner recorded (record_host_error), if any."""
    try:
        return json.loads(progress_file.read_text()).get("error")
    except (OSError, ValueError):
        return None


def check_host_matches(plan: dict, image_hash: str, code_version: str) -> None:
    """A host must run exactly the image and traffic code the cell keys were made for."""
    if image_hash != plan["image_hash"]:
        raise MatrixError(f"this host's image {image_hash[:12]} is not the plan's {plan['image_hash'][:12]}")
    if code_version != plan["code_version"]:
        raise MatrixError(f"this host's traffic code {code_version[:12]} is not the plan's "
                          f"{plan['code_version'][:12]}: ship the controller's tree")
