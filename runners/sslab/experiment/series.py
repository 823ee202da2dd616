"""Several scenario files, each run into its own run directory, up to N at once; keyed, so that a
rerun runs only what has not finished.

Experiments such as E9 (one scenario per link) are a series of ordinary
scenario runs.  Under UML each run gets its own substrate pinned to its own
core, so runs in parallel give the same bytes as run one after another; on a
real clock the caller must pass one substrate (never two experiments at once).

Each scenario's run is keyed (sslab.experiment.keys.scenario_key: the
scenario as run, with its repetitions, backend and knobs; the image; the
traffic code; the clock).  A finished run is recorded as
results/<kind>/keys/<key>, a link to its run directory, made after its
manifest (the last file a run writes); a series finds its finished runs by
their keys and does not run them again.  A run stopped part-way (Ctrl-C, a
failure) leaves a run directory without manifest and no key, and runs again
whole: all repetitions of a scenario share one boot, and a run's bytes are
the ones its boot gives, so it is not cut into pieces.  To run one again
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
from pathlib import Path

import yaml

from .. import paths
from ..scenario import Scenario
from ..substrate.preflight import check_offered
from .keys import scenario_run_key, traffic_code_version
from .run import run_as_run, scenario_as_run
from .workers import run_on_each


def write_scenarios(scenarios: list[dict], dest: Path) -> list[Path]:
    """Each scenario (plain data) as its own file in @dest (<scenario name>.yaml): what run_series
    runs, and the record of what ran."""
    files = []
    for data in scenarios:
        f = dest / f"{data['name']}.yaml"
        f.write_text(yaml.safe_dump(data, sort_keys=False))
        files.append(f)
    return files


def write_series_scenarios(series, settings: list[dict], dest: Path) -> list[Path]:
    """The scenarios of a series file's @settings, written by write_scenarios."""
    return write_scenarios([series.scenario_data(setting) for setting in settings], dest)


def key_of(s: Scenario, substrate) -> str:
    """@s's run key on @substrate (its image, clock and name)."""
    image = getattr(substrate, "image", None)
    image_hash = image.manifest()["image_hash"] if image is not None else None
    return scenario_run_key(s, image_hash, traffic_code_version(), substrate.clock, substrate.name)


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


def run_series(scenarios: list[tuple[Path, str]], substrates: list, reps: int | None = None,
               knobs: dict | None = None, backend: str | None = None, again: bool = False,
               log=print) -> list[Path]:
    """Run every (file, kind) in @scenarios into results/<kind>/<id>/, but for those whose key names a
    finished run (that run's directory is returned; @again: run those too); returns the run
    directories in the order of @scenarios.  Up to len(@substrates) at once.  Each file is read and
    validated once, as the command line runs it: its checks, its key and its run use that one."""
    as_run = [scenario_as_run(path, reps, backend, knobs) for path, _ in scenarios]
    # A congestion control the kernel under test lacks stops the series before its first run.
    check_offered(substrates[0], {cc for s in as_run for cc in s.congestion_controls()})
    keys = [key_of(s, substrates[0]) for s in as_run]
    done = [None if again else finished_run(kind, key) for (_, kind), key in zip(scenarios, keys)]
    todo: queue.Queue = queue.Queue()
    for n, (s, (_, kind), key, d) in enumerate(zip(as_run, scenarios, keys, done)):
        if d is not None:
            log(f"{kind}: {s.name}: already run, key {key} ({d}); not run again", flush=True)
        else:
            todo.put(n)
    stop = threading.Event()
    failures: list[BaseException] = []

    def worker(substrate) -> None:
        while not stop.is_set():
            try:
                n = todo.get_nowait()
            except queue.Empty:
                return
            path, kind = scenarios[n]
            try:
                name = as_run[n].name
                with key_lock(kind, keys[n], name, stop, log) as waited:
                    if waited and not again and (d := finished_run(kind, keys[n])) is not None:
                        log(f"{kind}: {name}: run meanwhile by the other command, key "
                            f"{keys[n]} ({d}); not run again", flush=True)
                        done[n] = d
                        continue
                    done[n] = run_as_run(as_run[n], path, kind, substrate)
                    record_finished(kind, keys[n], done[n])
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
    return done
