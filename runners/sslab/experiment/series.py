"""An experiment's finished runs named by their keys: results/<kind>/keys/<key>, a link to the run's
directory (a cell of the experiment's store, results/<experiment>/cells/<key>; before 8 Dec 2026 a
run directory results/<kind>/<run-id>), made once the run's manifest (the last file a run writes) is
there.  A command finds an experiment's finished parts by their keys and does not run them again
(matrix.parts.run_parts_on_hosts; AGAIN=1 runs them anyway, and the key then names the new run).

A finished run whose files no longer match its manifest (a disk's fault, a hand's) is no longer named
by its key, and runs again; its directory is kept, saying why (drop_damaged).

Two commands in one checkout (two `make wifi`, or `make startup` beside `make fct-vs-size` sharing a
scenario) never run one key at once: a command holds the key's lock file while it runs it, and one
that finds it held says so and waits, then takes the other's finished run instead of running it
again (key_lock).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

from .. import paths
from .run import damaged_among


def finished_run(kind: str, key: str) -> Path | None:
    """The run directory results/<kind>/keys/@key names, if that run finished (its manifest is there)."""
    link = paths.RESULTS_DIR / kind / "keys" / key
    if link.is_symlink() and (link.resolve() / "manifest.json").is_file():
        return link.resolve()
    return None


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
