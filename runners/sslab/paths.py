"""Where things live: the source tree, the image cache, the results tree, new run directories.

A leaf module (standard library only), imported from every layer.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: Root of the source tree (the directory holding Makefile and images/).
REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGES_DIR = REPO_ROOT / "images"
KERNEL_DIR = REPO_ROOT / "kernel"
RESULTS_DIR = Path(os.environ.get("SSLAB_RESULTS", REPO_ROOT / "results")).absolute()  # relative: to where it ran


def cache_dir() -> Path:
    """The image cache: $SSLAB_CACHE, else $XDG_CACHE_HOME/sslab, else ~/.cache/sslab.

    It lives outside the work tree so that a fresh clone on the same machine
    reuses an image built earlier (images are keyed by their recipe's hash).
    """
    if env := os.environ.get("SSLAB_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sslab"


#: Free bytes below which a disk counts as full when a run failed (a Table 1 cell writes about 10 MB).
FULL_BELOW_BYTES = 64 * 1024 * 1024


def existing_part(where: Path) -> Path:
    """@where, or its nearest parent that exists (a results directory not made yet)."""
    return next((p for p in (where, *where.parents) if p.exists()), Path("/"))


def nearly_full(where: Path) -> Path | None:
    """@where (or its nearest existing parent) if the disk holding it has under FULL_BELOW_BYTES free."""
    probe = existing_part(where)
    return probe if shutil.disk_usage(probe).free < FULL_BELOW_BYTES else None


def full_disk_message(filename: str | None) -> str:
    """What a full disk (or quota) stopped, and what to do: the device, its free space, and that a rerun
    completes what is missing (nothing unfinished is recorded as done)."""
    where = Path(filename) if filename else RESULTS_DIR
    free = shutil.disk_usage(existing_part(where)).free / 1e6
    return (f"no space left on the device holding {where} ({free:.1f} MB free there now).  Nothing "
            f"unfinished was recorded as done: free space (or point SSLAB_RESULTS= / SSLAB_CACHE= "
            f"elsewhere) and run the same command again; it runs only what is missing.")


def stamp() -> str:
    """A new directory name for a run or report: UTC time plus a random suffix (STAMP matches it)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(2)


#: What stamp() makes.
STAMP = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{4}")


def new_run_dir(kind: str) -> Path:
    """A fresh results directory results/<kind>/<run-id>; never an existing one."""
    d = RESULTS_DIR / kind / stamp()
    d.mkdir(parents=True, exist_ok=False)
    point_latest(d)
    return d


@contextlib.contextmanager
def filled_whole(final: Path) -> Iterator[Path]:
    """A new directory that appears at @final only once what fills it has finished: filled as
    .<name>.partial beside it (which no index lists), renamed to @final at the end; on any error (a
    full disk, an interrupt) the partial one is removed and the error goes on.  For a report: a
    reader never finds half of one under its name."""
    part = final.with_name(f".{final.name}.partial")
    part.mkdir(parents=True)
    try:
        yield part
        os.rename(part, final)
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise


def point_latest(target: Path) -> None:
    """Make <target's parent>/latest point at @target (see point_link)."""
    latest = target.parent / "latest"
    if latest.exists() and not latest.is_symlink():
        return  # something of the user's: left alone
    point_link(latest, target)


def point_link(link: Path, target: Path) -> None:
    """Make @link a relative symlink to @target, in one rename (never a half-made link)."""
    tmp = link.parent / f".{link.name}.tmp"
    if tmp.is_symlink():
        tmp.unlink()
    tmp.symlink_to(os.path.relpath(target, link.parent))
    tmp.replace(link)


def write_json_atomic(path: Path, data: Any) -> None:
    """@data as JSON in @path, by one rename of a file of its own: a reader never sees half of it, and
    two writers at once each leave a whole file (the last rename wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(3)}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


@contextlib.contextmanager
def pid_lock(path: Path, when_held: Callable[[str], None] | None = None,
             wait: Callable[[], bool] | None = None) -> Iterator[bool]:
    """Hold an exclusive lock on the file @path, which names this process's pid while it is held;
    yields whether another process held it first.

    When another holds it, @when_held(its pid, as the file says) is called once: it may raise (a
    refusal that names the holder) or say what is waited for.  Then this waits for it: @wait() is
    called between tries, sleeping as it likes, and returns True to give up (a stop was asked), which
    raises LockWaitStopped; without @wait, a try every half second until the holder lets go."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        held_by_other = False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not held_by_other:
                    held_by_other = True
                    f.seek(0)
                    if when_held is not None:
                        when_held(f.read().strip() or "?")
                if wait is None:
                    time.sleep(0.5)
                elif wait():
                    raise LockWaitStopped(f"stopped while waiting for {path}")
        try:
            f.seek(0)
            f.truncate()
            f.write(str(os.getpid()))
            f.flush()
            yield held_by_other
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class LockWaitStopped(Exception):
    """A stop (Ctrl-C, SIGTERM) came while waiting for another process's lock (pid_lock)."""
