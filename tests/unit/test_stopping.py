"""`sslab matrix stop` on real processes: a runner holding its host's lock, a process it left working in
a partial cell (as a UML does), and the partial cell itself."""

import subprocess
import sys
import time

from sslab.matrix.stopping import lock_holder, stop_runner

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
                                          "left_behind": [], "partials_removed": 0}


def test_a_controller_stopped_by_a_signal_exits_128_plus_its_number():
    from sslab.matrix.stopping import interrupt_exit_status
    assert interrupt_exit_status(KeyboardInterrupt()) == 130            # a Ctrl-C of Python's own
    assert interrupt_exit_status(KeyboardInterrupt("SIGINT")) == 130
    assert interrupt_exit_status(KeyboardInterrupt("SIGTERM")) == 143   # was 130: the soak's session 1
    assert interrupt_exit_status(KeyboardInterrupt("SIGHUP")) == 129
