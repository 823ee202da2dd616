"""An experiment's cells on this host's testbeds, each run into its own run directory, up to N at
once; keyed, so that a rerun runs only what has not finished.

An experiment such as E9 (one scenario per link) is planned as cells, one per
part (sslab.matrix.parts.plan_parts): each a scenario with all its
repetitions, compiled once, keyed by the key it has on any host.  Under UML
each cell gets its own substrate pinned to its own core, so cells in parallel
give the same bytes as one after another; on a real clock the caller must pass
one substrate (never two experiments at once).

Each cell is keyed (sslab.experiment.keys.scenario_key: the
scenario as run, with its repetitions, backend and knobs; the image; the
traffic code; the clock).  A finished run is recorded as
results/<kind>/keys/<key>, a link to its run directory, made after its
manifest (the last file a run writes); a series finds its finished runs by
their keys and does not run them again.  A run stopped part-way (Ctrl-C, a
failure) leaves a run directory without manifest and no key, and runs again
whole: all repetitions of a scenario share one boot, and a run's bytes are
the ones its boot gives, so it is not cut into pieces.  But one stopped after
its guest finished (in the host's read-out of a long scenario's runs) is read
out again, not run again: its directory already holds every byte its boot
gives (results/<kind>/keys/.<key>.started names it; run.guest_finished).  A finished run whose
files no longer match its manifest (a disk's fault, a hand's) is no longer named by its key, and runs
again; its directory is kept, saying why (drop_damaged).  To run one again
anyway: `sslab run --again` (make AGAIN=1); its key then names the new run.

Two commands in one checkout (two `make wifi`, or `make startup` beside
`make fct-vs-size` sharing a scenario) never run one key at once: a run holds
the key's lock file, and a command that finds it held says so and waits, then
takes the other's finished run instead of running it again.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


from .. import paths
from ..plan_record import MatrixPlan
from ..records import read_plan
from .run import Compiled, damaged_among, finish_read_out, guest_finished, run_compiled
from .workers import run_on_each


def finished_run(kind: str, key: str) -> Path | None:
    """The run directory results/<kind>/keys/@key names, if that run finished (its manifest is there)."""
    link = paths.RESULTS_DIR / kind / "keys" / key
    if link.is_symlink() and (link.resolve() / "manifest.json").is_file():
        return link.resolve()
    return None


def started_link(kind: str, key: str) -> Path:
    """results/<kind>/keys/.<key>.started: the run directory a command last started for @key (made before
    its testbed boots, removed once the key names a finished run)."""
    return paths.RESULTS_DIR / kind / "keys" / f".{key}.started"


def interrupted_run(kind: str, key: str) -> Path | None:
    """The run directory a stopped command started for @key, if its guest finished (guest_finished):
    the same command again reads it out rather than running it again."""
    link = started_link(kind, key)
    return link.resolve() if link.is_symlink() and guest_finished(link.resolve()) else None


def record_started(kind: str, key: str, run_dir: Path) -> None:
    link = started_link(kind, key)
    link.parent.mkdir(parents=True, exist_ok=True)
    paths.point_link(link, run_dir)


def record_finished(kind: str, key: str, run_dir: Path) -> None:
    """results/<kind>/keys/@key -> @run_dir, made in one rename (never a half-made link)."""
    keys = paths.RESULTS_DIR / kind / "keys"
    keys.mkdir(parents=True, exist_ok=True)
    paths.point_link(keys / key, run_dir)


#: How often a command waiting for another's run of one key looks again (and at Ctrl-C).
KEY_WAIT_POLL_S = 0.5


@contextlib.contextmanager
def key_lock(kind: str, key: str, name: str, stop: threading.Event, log) -> Iterator[bool]:
    """Hold results/<kind>/keys/.@key.lock while running @key: two commands never run one key at once
    (two `make wifi` in one checkout).  One that finds the lock held says for what and by whom, and
    waits (Ctrl-C still stops it: Stopping); yields whether it waited, so that the caller looks again
    whether the other command finished the run meanwhile."""
    def say(pid: str) -> None:
        log(f"{kind}: {name}: another command (pid {pid}) is running it (key {key}); waiting for it", flush=True)

    try:
        with paths.pid_lock(paths.RESULTS_DIR / kind / "keys" / f".{key}.lock", when_held=say,
                            wait=lambda: stop.wait(KEY_WAIT_POLL_S)) as waited:
            yield waited
    except paths.LockWaitStopped:
        raise Stopping(f"{kind}: {name}: stopped while waiting for another command's run") from None


class Stopping(Exception):
    """Ctrl-C or SIGTERM came while a worker waited for another command's run."""


@dataclass(frozen=True)
class PartRun:
    """Where an experiment's part is run from and recorded: its cell's key (the key its run has here
    or on any host), where its words came from (meta.json records it:
    sslab.experiment.compile.source_of) and results/<kind>/, where the key is linked.  Two parts of
    one scenario are one cell, linked under each part's kind."""
    name: str
    key: str
    source: dict
    kind: str


def run_series(plan: MatrixPlan, parts: list[PartRun], substrates: list, again: bool = False,
               log=print) -> list[Path]:
    """Run @plan's cells (an experiment's parts, sslab.matrix.parts.plan_parts: each cell one
    scenario with all its repetitions, its compiled plan, its key) on this host's @substrates, up to
    len(@substrates) at once, but for those whose key names a finished run under every one of its
    parts' kinds (@again: run those too); returns each part's run directory in the order of @parts.
    A cell runs from the plan it carries, as a host of an inventory runs it: nothing is validated
    again here."""
    by_key: dict[str, list[PartRun]] = {}
    for part in parts:
        by_key.setdefault(part.key, []).append(part)
    todo: queue.Queue = queue.Queue()
    if not again:
        drop_damaged([(cell.key, p.kind) for cell in plan.cells for p in by_key[cell.key]], log)
    for cell in plan.cells:
        found = [finished_run(p.kind, cell.key) for p in by_key[cell.key]]
        if again or all(d is None for d in found):
            todo.put(cell)
        elif all(d is not None for d in found):
            for p, d in zip(by_key[cell.key], found):
                log(f"{p.kind}: {cell.name}: already run, key {cell.key} ({d}); not run again", flush=True)
        else:   # run under another part's name: the same run, linked for this part too
            link_for_parts(by_key[cell.key], next(d for d in found if d is not None))
    stop = threading.Event()
    failures: list[BaseException] = []

    def worker(substrate) -> None:
        while not stop.is_set():
            try:
                cell = todo.get_nowait()
            except queue.Empty:
                return
            first = by_key[cell.key][0]
            try:
                with key_lock(first.kind, cell.key, cell.name, stop, log) as waited:
                    if waited and not again and (d := finished_run(first.kind, cell.key)) is not None:
                        log(f"{first.kind}: {cell.name}: run meanwhile by the other command, key "
                            f"{cell.key} ({d}); not run again", flush=True)
                    elif not again and (d := interrupted_run(first.kind, cell.key)) is not None:
                        log(f"{first.kind}: {cell.name}: its guest finished before the command that ran it "
                            f"stopped ({d}); reading its runs out, not running it again", flush=True)
                        finish_read_out(d)
                    else:
                        d = run_compiled(Compiled(read_plan(cell.plan, f"cell {cell.key}'s plan"), cell.scenario),
                                         first.source, first.kind, substrate,
                                         started=lambda run_dir: record_started(first.kind, cell.key, run_dir))
                    link_for_parts(by_key[cell.key], d)
                    started_link(first.kind, cell.key).unlink(missing_ok=True)
            except Stopping:
                return
            except Exception as e:  # noqa: BLE001 - the first failure stops the series, raised below
                failures.append(e)
                stop.set()
                return

    # Ctrl-C or SIGTERM: nothing more starts and the running testbeds end; their run directories
    # stay without manifest, and without key.
    run_on_each(substrates, worker, stop)
    if failures:
        raise failures[0]
    return [finished_run(p.kind, p.key) for p in parts]


#: What a damaged run's directory gets: why its key no longer names it.
DAMAGED_NOTE = "damaged.txt"


def drop_damaged(keyed: list[tuple[str, str]], log) -> list[Path]:
    """Each finished run a key of @keyed names ((key, kind): results/<kind>/keys/<key>), checked against
    its manifest (manifest_problems); a damaged one (a file changed, cut short, gone or added since it
    finished) is no longer named by its keys, so that it runs again, and is kept where it is with
    DAMAGED_NOTE saying why.  The runs dropped."""
    found: dict[Path, list[tuple[str, str]]] = {}       # a finished run, and the (key, kind) that name it
    for key, kind in dict.fromkeys(keyed):
        if (d := finished_run(kind, key)) is not None:
            found.setdefault(d, []).append((key, kind))
    dropped = []
    for run_dir, bad in damaged_among(list(found)).items():
        for key, kind in found[run_dir]:
            link = paths.RESULTS_DIR / kind / "keys" / key
            if link.is_symlink() and link.resolve() == run_dir:
                link.unlink()
        (run_dir / DAMAGED_NOTE).write_text("Its files no longer match its manifest; its key no longer names it, "
                                            "and the run was started again:\n" + "\n".join(bad) + "\n")
        log(f"{found[run_dir][0][1]}: run {run_dir}: its files no longer match its manifest "
            f"({'; '.join(bad[:3])}{'; ...' if len(bad) > 3 else ''}): kept there, run again", flush=True)
        dropped.append(run_dir)
    return dropped


def link_for_parts(parts: list[PartRun], run_dir: Path) -> None:
    """@run_dir recorded as the finished run of each of @parts (one cell)."""
    for p in parts:
        record_finished(p.kind, p.key, run_dir)
