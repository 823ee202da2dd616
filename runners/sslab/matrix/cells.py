"""Running one host's cells, a boot at a time: skip finished ones, retry a failure once, record it."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import shutil
import threading
import time
import traceback
from pathlib import Path

from .. import paths
from ..records import read_plan, read_record, read_runs_index, stamped
from ..experiment import gzip_in_place, run_scenarios_in_one_boot, write_manifest
from ..experiment.run import Compiled, finish_run_dir
from ..experiment.workers import run_on_each
from ..plan_record import MatrixPlan, PlannedCell
from .plan import boot_groups
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


def run_cell_group(cells: list[PlannedCell], dests: list[Path], substrate, host: str, report: bool = True) -> list[dict]:
    """Run @cells (one, or the repetitions of one setting that share a boot, in position order)
    into @dests (partial directories) in one boot, and finish each one's archive.  @report: each
    one's run report too (an experiment's parts, which its report reads; a matrix's cells are read
    by the matrix's report, and `make report RUN=<cell>` writes one's on demand).  A matrix's cells
    keep their captures gzipped; a part with its report keeps them as the report links them, raw."""
    if any(c.plan is None for c in cells):
        raise MatrixError(f"cell {cells[0].key}: planned before cells carried their plans (29 Nov 2026); "
                          f"run the matrix again to plan it anew")
    scenarios = [Compiled(read_plan(c.plan, f"cell {c.key}'s plan"), c.scenario) for c in cells]
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    run_scenarios_in_one_boot(scenarios, dests, substrate,
                              [{**(c.source or {}), "matrix_cell": c.key, "name": s.name,
                                "capture_check": c.capture_check, "report": report} for c, s in zip(cells, scenarios)])
    return finish_cells(cells, dests, host, started, time.monotonic() - t0, compress=not report)


def read_out_cell(cell: PlannedCell, partial: Path, host: str) -> dict:
    """@cell's @partial directory, whose guest finished before the runner that ran it stopped
    (experiment.run.guest_finished: it holds every byte its boot gives), read out and finished as its
    boot would have finished it, booting nothing; its cell.json says so (read_out_again), its wall
    seconds the boot's as meta.json recorded them and this read-out's."""
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    finish_run_dir(partial)
    meta = read_record(partial / "meta.json", "sslab.meta")
    return finish_cells([cell], [partial], host, started, (meta.get("substrate_seconds") or 0.0) + time.monotonic() - t0,
                        compress=not meta["scenario"].get("report", True), read_out_again=True)[0]


def finish_cells(cells: list[PlannedCell], dests: list[Path], host: str, started: str, wall: float,
                 compress: bool = True, read_out_again: bool = False) -> list[dict]:
    """The end of a boot's cells (@dests, each read out): pcaps compressed (@compress), cell.json (@wall:
    the boot's seconds), the manifest last."""
    for dest in dests if compress else []:
        compress_pcaps(dest)
    infos = []
    for cell, dest in zip(cells, dests):
        runs = read_runs_index(dest / "job" / "out" / "runs.json")
        traffic = 0.0
        for r in runs:
            traffic += read_record(dest / "job" / "out" / "runs" / r["tag"] / "run.json", "sslab.run")["seconds"]
        meta = read_record(dest / "meta.json", "sslab.meta")
        substrate_s = meta.get("substrate_seconds")
        info = {"key": cell.key, "setting": cell.setting, "rep": cell.rep, "name": cell.name,
                "host": host, "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                # A shared boot's time is shared out evenly among its cells.
                "wall_s": round(wall / len(cells), 1), "traffic_s": round(traffic, 1),
                "substrate_s": substrate_s if len(cells) == 1 or substrate_s is None
                else round(substrate_s / len(cells), 1), "runs": [r["tag"] for r in runs]}
        if read_out_again:
            info["read_out_again"] = True
        if len(cells) > 1:
            info["boot"] = {**cell.boot.model_dump(), "cells": [c.key for c in cells], "wall_s": round(wall, 1),
                            "substrate_s": substrate_s}
        (dest / "cell.json").write_text(json.dumps(stamped("sslab.cell", info), indent=1, sort_keys=True))
        write_manifest(dest)
        infos.append(info)
    return infos


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

    def add(self, counter: str, cell_seconds: float | None = None, key: str | None = None) -> None:
        with self.lock:
            self.state[counter] += 1
            if key is not None:
                self.state[f"{counter}_keys"] = self.state.get(f"{counter}_keys", []) + [key]
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


def run_cells(matrix_dir: Path, plan: MatrixPlan, host: str, keys: list[str], substrate, log=print,
              runner=None) -> dict:
    """Run this host's cells: skip finished ones, retry a failure once, record it.

    @substrate is one substrate, or a list of them to run that many boots at
    once (UMLs pinned to one core each; the same seeds give the same results
    serial or parallel).  A boot's cells run through @runner (run_cell_group,
    with run reports for an experiment's parts only), a cell of its own alone
    and a shared boot's (the plan's "boot" groups)
    together, the whole group though only some of its cells are missing (the ones
    before a missing cell make its state, and every cell keeps copies of its boot's
    records, which a shorter boot changes; what the others make is dropped: a
    finished cell is never replaced).
    Returns counts.  An interruption (Ctrl-C, SIGTERM, a lost host) leaves the
    cells in progress as .partial directories, which never count as done, and
    records no failure for them.
    """
    store = CellStore(matrix_dir)
    by_key = {c.key: c for c in plan.cells}
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        raise MatrixError(f"cells not in the plan: {unknown[:3]}")
    workers = list(substrate) if isinstance(substrate, (list, tuple)) else [substrate]
    runner = runner or functools.partial(run_cell_group, report=plan.kind == "parts")
    with host_lock(store, host):
        return _run_cells_locked(store, plan.cells, host, keys, workers, log, runner)


def host_boots(cells: list[PlannedCell], keys: list[str]) -> list[tuple[list[PlannedCell], list[str]]]:
    """The boots a host runs for its cells @keys (of the plan's @cells): per boot, the cells it
    runs (a shared boot's whole group: run_cells says why) and which of them are the host's; in
    the order of @keys."""
    mine = set(keys)
    boots = []
    for group in boot_groups(cells):
        dealt = [c.key for c in group if c.key in mine]
        if dealt:
            boots.append((group, dealt))
    order = {k: i for i, k in enumerate(keys)}
    return sorted(boots, key=lambda b: min(order[k] for k in b[1]))


@contextlib.contextmanager
def host_lock(store: CellStore, host: str):
    """One runner per host and matrix: a second would boot more testbeds on the same cores."""
    def refuse(pid: str) -> None:
        raise MatrixError(f"another runner for host {host} is working on {store.dir} (pid {pid}); wait for it "
                          f"or stop it")

    with paths.pid_lock(store.dir / "progress" / f"{host}.lock", when_held=refuse):
        yield


def _run_cells_locked(store: CellStore, cells: list[PlannedCell], host: str, keys: list[str], workers: list, log,
                      runner) -> dict:
    progress = Progress(store, host, keys)
    progress.update(workers=len(workers))
    todo: "queue.Queue[tuple[int, list[PlannedCell], list[str]]]" = queue.Queue()
    n = 0
    for boot, dealt in host_boots(cells, keys):
        todo.put((n + 1, boot, dealt))
        n += len(dealt)
    stop = threading.Event()

    def label_of(boot: list[PlannedCell]) -> str:
        c0 = boot[0]
        return f"{c0.name} r{c0.rep}" + (f"-{boot[-1].rep}" if len(boot) > 1 else "")

    def read_out(n: int, cell: PlannedCell, label: str) -> bool:
        """Whether @cell was finished from a partial directory whose guest had finished (a runner stopped in
        its read-out): it is read out, not run again.  One that fails to read out is set aside, and the
        cell runs."""
        partial = store.guest_finished(cell.key)
        if partial is None:
            return False
        log(f"[{host}] {n}/{len(keys)} {label}: its guest finished before the runner that ran it stopped "
            f"({partial}); reading its runs out, not running it again")
        progress.start(label)
        t0 = time.monotonic()
        try:
            read_out_cell(cell, partial, host)
            store.commit(partial, cell.key)
        except Exception as e:  # noqa: BLE001 - kept for a look, and the cell runs whole
            progress.end(label)
            if stop.is_set():
                return True
            where = store.record_failure(partial, cell.key, 0, f"{type(e).__name__}: {e}\n\n{traceback.format_exc()}")
            log(f"[{host}]   reading it out failed: {str(e).splitlines()[0][:200]} (kept: {where}); running it")
            return False
        progress.end(label)
        progress.add("done", time.monotonic() - t0)
        log(f"[{host}]   {label} read out in {time.monotonic() - t0:.0f} s")
        return True

    def one_boot(n: int, boot: list[PlannedCell], dealt: list[str], substrate) -> None:
        label = label_of(boot)
        mine = [c for c in boot if c.key in dealt]
        missing = [c for c in mine if not store.done(c.key)]
        for c in mine:
            if c not in missing:
                progress.add("skipped")
                log(f"[{host}] {n}/{len(keys)} {c.name} r{c.rep}: already done ({c.key})")
        if not missing:
            return
        if len(boot) == 1 and read_out(n, boot[0], label):
            return
        for attempt in range(1, ATTEMPTS + 1):
            if stop.is_set():
                return
            # The whole boot, though only some of its cells are missing (one damaged on disk, or failed):
            # the ones before a missing cell make its state, and each cell keeps copies of its boot's
            # records (the guest's status, with the boot's guest seconds, and its console), which a
            # shorter boot would change (the soak of 3 Dec 2026: 11 of 320 cells run again in a boot
            # cut after them differed in those two files).  Cells not missing are run only for that.
            partials = [store.new_partial(c.key) for c in boot]
            progress.start(label)
            what = f"{len(boot)} cells in one boot, {len(missing)} to keep" if len(boot) > 1 else boot[0].key
            log(f"[{host}] {n}/{len(keys)} {label}: running (attempt {attempt}, {what})")
            t0 = time.monotonic()
            try:
                infos = runner(boot, partials, substrate, host)
                for c, partial in zip(boot, partials):
                    if c in missing:
                        store.commit(partial, c.key)
                    else:
                        # Run again only to reach the state of the cells after it; never replaces it.
                        shutil.rmtree(partial, ignore_errors=True)
            except Exception as e:  # noqa: BLE001 - any failure of a cell is recorded, then retried
                progress.end(label)
                if stop.is_set():
                    return  # killed on the way out: not a failure of the cell
                err = f"{type(e).__name__}: {e}\n\n{traceback.format_exc()}"
                where = None
                for c, partial in zip(boot, partials):
                    if c in missing and partial.exists():
                        where = store.record_failure(partial, c.key, attempt, err)
                    else:
                        shutil.rmtree(partial, ignore_errors=True)
                log(f"[{host}]   attempt {attempt} failed: {str(e).splitlines()[0][:200]} (log: {where})")
                if attempt == ATTEMPTS:
                    for c in missing:
                        progress.add("failed", key=c.key)
                continue
            progress.end(label)
            seconds = time.monotonic() - t0
            for _ in missing:
                progress.add("done", seconds / len(boot))
            info = {i["key"]: i for i in infos}
            traffic = sum(info[c.key]["traffic_s"] for c in boot if c.key in info)
            log(f"[{host}]   {label} done in {seconds:.0f} s (traffic {traffic:.0f} s"
                f"{f', {len(boot)} cells' if len(boot) > 1 else ''})")
            return

    def worker(substrate) -> None:
        while not stop.is_set():
            try:
                n, boot, dealt = todo.get_nowait()
            except queue.Empty:
                return
            one_boot(n, boot, dealt, substrate)

    # Ctrl-C or SIGTERM: nothing more is dealt and the running testbeds end; their cells stay .partial.
    run_on_each(workers, worker, stop)
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


def check_host_matches(plan: MatrixPlan, image_hash: str, code_version: str) -> None:
    """A host must run exactly the image and traffic code the cell keys were made for."""
    if image_hash != plan.image_hash:
        raise MatrixError(f"this host's image {image_hash[:12]} is not the plan's {plan.image_hash[:12]}")
    if code_version != plan.code_version:
        raise MatrixError(f"this host's traffic code {code_version[:12]} is not the plan's "
                          f"{plan.code_version[:12]}: ship the controller's tree")
