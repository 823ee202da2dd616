"""The UML processes a killed run leaves, found as whole trees below init (substrate/leftovers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sslab.substrate.leftovers import UML_WORD, orphans, stop_orphaned_umls


def test_orphans_are_whole_trees_below_init():
    # 10 an orphaned helper; 20 a UML whose start outran its runner's death, 21 and 22 below it, 23 below
    # 22; 30 a running UML of runner 5 (not a UML), 31 its helper; 40 a UML whose parent is a shell (7).
    parents = {10: 1, 20: 1, 21: 20, 22: 20, 23: 22, 30: 5, 31: 30, 40: 7}
    assert orphans(parents) == [10, 20, 21, 22, 23]
    assert orphans({}) == []
    # A loop of parents (pids reused while reading /proc) reaches no init: not an orphan.
    assert orphans({50: 51, 51: 50}) == []


#: Leaves its child to init: the forked process and its own child sleep; their pids go to stdout.
TREE = """
import os, sys, time
if os.fork():
    os._exit(0)
child = os.fork()
if child == 0:
    time.sleep(60)
    os._exit(0)
print(os.getpid(), child, flush=True)
time.sleep(60)
"""


def parent_of(pid: int) -> int | None:
    """@pid's parent, None when it is gone or a zombie."""
    try:
        status = dict(ln.split(":", 1) for ln in Path(f"/proc/{pid}/status").read_text().splitlines())
    except FileNotFoundError:
        return None
    return None if status["State"].split()[0] in "ZX" else int(status["PPid"])


def test_a_killed_runs_tree_is_stopped_whole_and_a_running_one_left_alone(tmp_path):
    """An orphaned UML-like process and its child (both with a UML's word in their command line, working
    under the results) are both stopped: killing the root alone would leave its child to init.  A
    process of the same kind whose parent lives (this test) is left alone."""
    cell = tmp_path / "cell"
    cell.mkdir()
    (tmp_path / "tree.py").write_text(TREE)
    launcher = subprocess.Popen([sys.executable, str(tmp_path / "tree.py"), UML_WORD], cwd=cell,
                                stdout=subprocess.PIPE, text=True)
    root, child = map(int, launcher.stdout.readline().split())
    assert launcher.wait(timeout=10) == 0
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", UML_WORD], cwd=cell)
    try:
        deadline = time.monotonic() + 10
        while parent_of(root) != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        # A subreaper above this test would take the orphan in place of init.
        assert (parent_of(root), parent_of(child)) == (1, root)
        said = []
        assert stop_orphaned_umls(tmp_path, log=lambda *a, **k: said.append(a[0])) == sorted([root, child])
        assert said and f"pids {', '.join(map(str, sorted([root, child])))}" in said[0]
        deadline = time.monotonic() + 10
        while (parent_of(root), parent_of(child)) != (None, None) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (parent_of(root), parent_of(child)) == (None, None)
        assert running.poll() is None and parent_of(running.pid) == os.getpid()
        assert stop_orphaned_umls(tmp_path / "elsewhere") == []
    finally:
        running.kill()
        running.wait()
        for pid in (root, child):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
