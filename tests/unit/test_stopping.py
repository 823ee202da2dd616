"""`sslab matrix stop` on real processes: a runner holding its host's lock, a process it left working in
a partial cell (as a UML does), and the partial cell itself."""

import json
import subprocess
import sys
import time

from sslab.matrix.stopping import lock_holder, partials_words, stop_runner
from sslab.matrix.store import CellStore
from sslab.records import stamped

#: A stand-in runner: takes the host's lock as run-cells does, starts a process inside a partial
#: cell in a session of its own (as a UML is started), and ignores SIGTERM (a runner that hangs).
RUNNER = """
import os, signal, subprocess, sys, time
from pathlib import Path
from sslab.matrix.cells import host_lock
from sslab.matrix.store import CellStore
store = CellStore(Path(sys.argv[1]))
with host_lock(store, "h"):
    partial = store.new_partial("k0")
    subprocess.Popen(["sleep", "600"], cwd=partial, start_new_session=True)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("ready", flush=True)
    time.sleep(600)
"""


def test_stop_kills_the_runner_what_it_left_and_removes_partial_cells(tmp_path):
    runner = subprocess.Popen([sys.executable, "-c", RUNNER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert runner.stdout.readline().strip() == "ready"
    assert lock_holder(tmp_path / "progress" / "h.lock") == runner.pid
    (tmp_path / "cells" / "k1").mkdir()  # a finished cell: kept
    t0 = time.monotonic()
    out = stop_runner(tmp_path, "h", grace_s=1.0)
    assert out["runner"] == runner.pid and out["killed_after_grace"]
    assert len(out["left_behind"]) == 1 and out["partials_removed"] == 1
    assert runner.wait(timeout=5) != 0 and time.monotonic() - t0 < 5
    assert [p.name for p in (tmp_path / "cells").iterdir()] == ["k1"]
    assert lock_holder(tmp_path / "progress" / "h.lock") is None
    # Nothing left to stop: said so.
    assert stop_runner(tmp_path, "h") == {"host": "h", "runner": None, "killed_after_grace": False,
                                          "left_behind": [], "partials_removed": 0, "partials_kept": 0}


def test_a_controller_stopped_by_a_signal_exits_128_plus_its_number():
    from sslab.matrix.stopping import interrupt_exit_status
    assert interrupt_exit_status(KeyboardInterrupt()) == 130            # a Ctrl-C of Python's own
    assert interrupt_exit_status(KeyboardInterrupt("SIGINT")) == 130
    assert interrupt_exit_status(KeyboardInterrupt("SIGTERM")) == 143   # was 130: the soak's session 1
    assert interrupt_exit_status(KeyboardInterrupt("SIGHUP")) == 129


def guest_back(partial, exit_code: int = 0) -> None:
    """@partial as a boot leaves it once its job is back from the guest: meta.json with the job's exit,
    the guest's index of its runs (the host's read-out follows)."""
    (partial / "job" / "out").mkdir(parents=True)
    (partial / "job" / "out" / "runs.json").write_text("[]")
    (partial / "meta.json").write_text(json.dumps(stamped("sslab.meta", {"job_exit_code": exit_code,
                                                                         "job_timed_out": False})))


def test_stop_keeps_a_partial_cell_whose_guest_finished_for_the_next_runner_to_read_out(tmp_path):
    store = CellStore(tmp_path)
    finished, failed, booting = store.new_partial("k1"), store.new_partial("k2"), store.new_partial("k3")
    guest_back(finished)
    guest_back(failed, exit_code=1)
    out = stop_runner(tmp_path, "h")
    assert (out["partials_removed"], out["partials_kept"]) == (2, 1)
    assert store.stale_partials() == [finished] and store.guest_finished("k1") == finished
    assert store.guest_finished("k2") is None and store.guest_finished("k3") is None
    # Its manifest written (the read-out ended): nothing to read out.
    (finished / "manifest.json").write_text("{}")
    assert store.guest_finished("k1") is None
    assert partials_words(2, 1) == ", 2 partial cell(s) removed, 1 kept to be read out"
    assert partials_words(1) == partials_words("1", "0") == ", 1 partial cell(s) removed"
