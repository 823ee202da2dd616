"""Stopping a host's runner of one matrix, whoever started it and from wherever: `sslab matrix stop`.

The controller's Ctrl-C (or SIGTERM) cannot count on signals reaching a host's runner: Ansible's
ssh connection does not carry them, and a runner started by Ansible on this machine is in a session
of its own.  So every host is stopped by name, on the host:

1. the runner, by the pid in progress/<host>.lock (matrix.cells.host_lock), SIGTERM: it unwinds,
   stopping its testbeds; SIGKILL after GRACE_S;
2. any process still working inside the matrix directory (a UML's working directory is its job's,
   inside the cell it runs: one a killed runner left behind), SIGKILL with its process group;
3. the partial cells (cells/.partial-*), which never count: removed, once no runner of this
   matrix directory holds its lock; but for one whose guest finished (a runner stopped in its
   read-out), which the next runner reads out rather than running it again (cells.run_cells).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import time
from pathlib import Path

from ..experiment.run import guest_finished
from .store import CellStore

#: Seconds a runner has to unwind after SIGTERM (it kills its UMLs, whose own grace is shorter).
GRACE_S = 5.0


def lock_holder(lock: Path) -> int | None:
    """The pid of the runner holding @lock, or None if nobody holds it."""
    try:
        with open(lock, "a+") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                text = f.read().strip()
                return int(text) if text.isdigit() else -1
            fcntl.flock(f, fcntl.LOCK_UN)
            return None
    except FileNotFoundError:
        return None


def processes_inside(directory: Path) -> list[int]:
    """Pids (not this one) whose working directory is inside @directory."""
    root = str(directory.resolve())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + "/"):
            found.append(int(entry.name))
    return found


def stop_runner(matrix_dir: Path, host: str, grace_s: float = GRACE_S) -> dict:
    """Stop @host's runner of @matrix_dir and what it left (see the module doc); what was stopped."""
    store = CellStore(matrix_dir)
    out: dict = {"host": host, "runner": None, "killed_after_grace": False, "left_behind": [], "partials_removed": 0,
                 "partials_kept": 0}
    lock = store.dir / "progress" / f"{host}.lock"
    pid = lock_holder(lock)
    if pid and pid > 0:
        out["runner"] = pid
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        # Its lock tells when it is gone (a zombie not yet reaped still answers kill(pid, 0)).
        if not _released(lock, grace_s):
            out["killed_after_grace"] = True
            _kill_with_group(pid)
            _released(lock, grace_s)
    if store.cells.exists():
        for p in processes_inside(store.cells):
            out["left_behind"].append(p)
            _kill_with_group(p)
        # SIGKILL is delivered, not yet done: a process is gone when it no longer works in the
        # directory (unit tests saw a second stop find the first one's `sleep` still there).
        _gone_from(store.cells, out["left_behind"], grace_s)
    if not any(lock_holder(lock) for lock in (store.dir / "progress").glob("*.lock")):
        for partial in store.stale_partials():
            if guest_finished(partial):
                out["partials_kept"] += 1
                continue
            shutil.rmtree(partial, ignore_errors=True)
            out["partials_removed"] += 1
    return out


def partials_words(removed: int | str, kept: int | str = 0) -> str:
    """What a stop did with the partial cells, as its line ends: ", N partial cell(s) removed", and
    how many it kept to be read out."""
    return f", {removed} partial cell(s) removed" + (f", {kept} kept to be read out" if str(kept) != "0" else "")


def _released(lock: Path, wait_s: float) -> bool:
    """Whether @lock is free within @wait_s seconds."""
    deadline = time.monotonic() + wait_s
    while lock_holder(lock):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _gone_from(directory: Path, pids: list[int], wait_s: float) -> bool:
    """Whether none of @pids works inside @directory any more, within @wait_s seconds."""
    deadline = time.monotonic() + wait_s
    while set(pids) & set(processes_inside(directory)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _kill_with_group(pid: int) -> None:
    """SIGKILL @pid and, if it leads one, its process group (a UML's host processes)."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _as_interrupt(signum, frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


#: A process stopped by signal N exits 128 + N (a shell's convention, and the reference's).
EXIT_SIGNAL_BASE = 128


def interrupt_exit_status(e: KeyboardInterrupt) -> int:
    """The exit status of a controller stopped by @e (stop_signals_interrupt names the signal in it; a bare
    KeyboardInterrupt is a Ctrl-C): 130 SIGINT, 143 SIGTERM, 129 SIGHUP."""
    name = e.args[0] if e.args and e.args[0] in signal.Signals.__members__ else "SIGINT"
    return EXIT_SIGNAL_BASE + signal.Signals[name]


@contextlib.contextmanager
def stop_signals_interrupt():
    """A controller's Ctrl-C, SIGTERM and SIGHUP, each as a KeyboardInterrupt naming the signal, whatever
    SIGINT was on arrival (a script's background job gets it ignored): the controller stops what it
    started, once, in order.  The handlers before are restored on the way out."""
    previous = {sig: signal.signal(sig, _as_interrupt) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
