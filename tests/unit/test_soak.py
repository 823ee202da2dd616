"""The soak's parts that need no testbed (sslab.matrix.soak): its schedule from a seed, the cells compared
by what their guests made, its summary."""

import json
import os
from pathlib import Path

from sslab import paths
from sslab.matrix import soak


def test_a_schedule_is_its_seeds_every_kind_at_least_once_its_moments_over_the_storms_span():
    a = soak.draw_schedule(7, 40, calm_s=100.0)
    assert [(f.kind, f.after_s) for f in a] == [(f.kind, f.after_s) for f in soak.draw_schedule(7, 40, calm_s=100.0)]
    assert [f.kind for f in a] != [f.kind for f in soak.draw_schedule(8, 40, calm_s=100.0)]
    assert len(a) == 40 and set(f.kind for f in a) == set(soak.KINDS) and len(soak.KINDS) >= 6
    # The moments, summed from the gaps, rise within the span (1.5 x 100 s) and spread over it.
    moments = [sum(f.after_s for f in a[:i + 1]) for i in range(len(a))]
    assert all(f.after_s >= 0 for f in a) and moments[-1] <= soak.STORM_SPAN * 100.0 + 0.01
    assert moments[0] < 0.25 * soak.STORM_SPAN * 100.0 < 0.75 * soak.STORM_SPAN * 100.0 < moments[-1]
    assert len(soak.draw_schedule(1, 3, calm_s=1.0)) == 3   # fewer faults than kinds: the first kinds, shuffled


def test_cells_that_land_together_are_one_landing_and_the_record_keeps_the_time_between_landings(tmp_path):
    """Table 1's calm run at 320 cells (3 Dec 2026): a boot's ten cells come home within a few seconds,
    a landing every 80-110 s (the record's landing_s, which says how the faults' gaps compare).  Hand-worked: manifests at 0, 3, 96, 97, 98 and 200 s are three landings
    (0-3, 96-98, 200); a calm run of 300 s lands every 100 s."""
    assert soak.landings([0.0, 3.0, 96.0, 97.0, 98.0, 200.0]) == 3
    assert soak.landings([5.0, 0.0, 10.0, 20.5]) == 2          # unordered; a gap of 10 s is one landing
    assert soak.landings([]) == 0
    cells = tmp_path / "m" / "cells"
    for key, t in [("a", 1000.0), ("b", 1003.0), ("c", 1096.0), ("d", 1098.0), ("e", 1200.0), (".x", 5000.0)]:
        (cells / key).mkdir(parents=True)
        (cells / key / "manifest.json").write_text("{}")
        os.utime(cells / key / "manifest.json", (t, t))
    (cells / "f").mkdir()                                       # a cell not landed: no manifest
    assert soak.landing_interval(tmp_path, [Path("m")], 300.0) == 100.0
    # All at once (or their times lost in a copy): the whole calm run.
    for key in "abcde":
        os.utime(cells / key / "manifest.json", (1000.0, 1000.0))
    assert soak.landing_interval(tmp_path, [Path("m")], 300.0) == 300.0


def test_a_kind_left_out_is_never_drawn_and_the_rest_each_at_least_once():
    kinds = tuple(k for k in soak.KINDS if k != "fill-the-disk")
    drawn = [f.kind for f in soak.draw_schedule(7, 40, calm_s=100.0, kinds_allowed=kinds)]
    assert "fill-the-disk" not in drawn and set(drawn) == set(kinds)


def test_the_disk_fault_is_drawn_only_on_a_filesystem_of_its_own():
    """A directory not made yet is judged by the nearest one that exists."""
    assert soak.shares_a_filesystem(paths.REPO_ROOT / "results" / "soak" / "new") == f"the repository ({paths.REPO_ROOT})"
    shm = Path("/dev/shm")      # tmpfs, where this Linux has one: neither the repository's nor the cache's
    if shm.is_dir() and shm.stat().st_dev not in (paths.REPO_ROOT.stat().st_dev, paths.cache_dir().stat().st_dev):
        assert soak.shares_a_filesystem(shm / "soak" / "new") is None


def cell(root, key, artifacts):
    d = root / "cells" / key
    d.mkdir(parents=True)
    (d / "cell.json").write_text("{}")
    (d / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))


def test_cells_compare_by_what_their_guests_made_not_by_the_hosts_timings(tmp_path):
    calm, stormy = tmp_path / "calm", tmp_path / "stormy"
    made = {"job/plan.json": "p", "job/out/runs/000/run.json": "r"}
    for key in ("a", "b", "c"):
        cell(calm, key, {**made, "cell.json": "calm's wall time", "meta.json": "m1"})
    cell(stormy, "a", {**made, "cell.json": "stormy's wall time", "meta.json": "m2"})   # host's files differ only
    cell(stormy, "b", {**made, "job/out/runs/000/run.json": "R"})                      # a record differs
    assert soak.compare(calm, stormy) == {"identical": ["a"], "different": ["b"], "missing": ["c"]}


def test_a_soak_passes_only_with_no_cell_different_or_missing_and_every_damaged_cell_found():
    record = soak.Soak(3, ["run", "smoke"], faults=[
        soak.Fault("sigkill-controller", 2.0, "session 1: the controller exited -9"),
        soak.Fault("flip-a-byte", 0.0, "cell k: job/out/x (flip-a-byte)", detected=True),
        soak.Fault("sigkill-boot", 1.0, "no boot running at that moment: nothing killed"),
        soak.Fault("sigterm-controller", 1.0, "not injected: the matrix had finished")], sessions=3,
        calm_s=100.0, stormy_s=160.0)
    fine = soak.summarise(record, {"identical": ["k", "l"], "different": [], "missing": []})
    assert fine["ok"] and fine["injected_by_kind"] == {"sigkill-controller": 1, "flip-a-byte": 1}
    assert (fine["damaged_cells"], fine["damaged_detected"], fine["lost_to_faults_s"]) == (1, 1, 60.0)
    assert not soak.summarise(record, {"identical": ["k"], "different": ["l"], "missing": []})["ok"]
    assert not soak.summarise(record, {"identical": ["k"], "different": [], "missing": ["l"]})["ok"]
    record.faults[1].detected = False
    assert not soak.summarise(record, {"identical": ["k", "l"], "different": [], "missing": []})["ok"]
    assert soak.summary_lines(fine)[0] == "soak (seed 3): OK"


def test_a_sessions_console_is_written_whole_through_its_pipe(tmp_path):
    """What the controller writes to its console (a pipe, as a terminal would be) lands in the log file,
    in order, all of it once the session ends."""
    import subprocess
    import sys
    console = soak.Console(tmp_path / "session.log")
    proc = subprocess.Popen([sys.executable, "-c", "import sys\nfor i in range(20000): print(i)\n"
                             "print('the end', file=sys.stderr)"], stdout=console.write_fd, stderr=subprocess.STDOUT)
    console.start()
    assert proc.wait(timeout=60) == 0
    text = console.text()
    assert text.splitlines() == [str(i) for i in range(20000)] + ["the end"]
    assert (tmp_path / "session.log").read_text() == text


def test_the_inventory_a_soaked_command_names_is_read_in_either_spelling():
    assert soak.inventory_in(["run", "smoke", "--inventory", "a.ini", "--iter", "2"]) == Path("a.ini")
    assert soak.inventory_in(["run", "smoke", "--inventory=b.ini"]) == Path("b.ini")
    assert soak.inventory_in(["run", "smoke", "--iter", "2"]) is None
    assert soak.fleet_trouble(["run", "smoke"]) is None


def test_a_damage_changes_a_file_that_has_bytes(tmp_path):
    """flip-a-byte or cut-a-file on a cell whose guest-made files include an empty one (stderr.log):
    the file damaged always differs afterwards (an empty file's flip had changed nothing)."""
    import random
    soaker = soak.Soaker(tmp_path, ["matrix", "run", "smoke"], seed=1, n=1)
    cell_dir = tmp_path / "stormy" / "m" / "cells" / "k"
    (cell_dir / "job" / "out").mkdir(parents=True)
    (tmp_path / "stormy" / "m" / "plans").mkdir()
    (cell_dir / "cell.json").write_text("{}")
    (cell_dir / "job" / "out" / "stderr.log").write_text("")
    (cell_dir / "job" / "out" / "run.json").write_text('{"fct": 1.5}')
    (cell_dir / "manifest.json").write_text(json.dumps({"artifacts": {"job/out/stderr.log": "e", "job/out/run.json": "r"}}))
    for kind in ("flip-a-byte", "cut-a-file"):
        for seed in range(5):
            (cell_dir / "job" / "out" / "run.json").write_text('{"fct": 1.5}')
            fault = soak.Fault(kind)
            assert soaker.damage(fault, random.Random(seed)) == "k"
            assert fault.what == f"cell k: job/out/run.json ({kind})"
            assert (cell_dir / "job" / "out" / "run.json").read_bytes() != b'{"fct": 1.5}'


#: A stand-in for a matrix command, run as a real process by the soak: session 1 lands no cell and fails;
#: later sessions land cell k, and set it aside and run it again when its record no longer is what it
#: wrote (as the harness does with a damaged cell).
FAKE_MATRIX = '''
import os, shutil, sys
from pathlib import Path
m = Path(os.environ["SSLAB_RESULTS"]) / "m"
(m / "plans").mkdir(parents=True, exist_ok=True)
count = m.parent / "sessions"
n = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(n))
if n == 1:
    sys.exit(1)
cell = m / "cells" / "k"
record = cell / "job" / "out" / "run.json"
if cell.is_dir() and record.read_bytes() != b'{"fct": 1.5}':
    aside = m / "failed" / f"k-{n}-set-aside"
    aside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(cell), str(aside))
    (aside / "error.txt").write_text("its files no longer match its manifest")
if not cell.is_dir():
    record.parent.mkdir(parents=True)
    record.write_bytes(b'{"fct": 1.5}')
    (cell / "cell.json").write_text("{}")
    (cell / "manifest.json").write_text('{"artifacts": {"job/out/run.json": "r"}}')
'''


def test_a_damage_drawn_before_any_cell_landed_waits_for_one_and_is_found(tmp_path):
    """A file cut drawn for the first gap, when no cell has landed: it is not lost (four of 40 were, at
    320 cells) but made at the first gap with a cell, and the session after it finds it."""
    script = tmp_path / "fake_matrix.py"
    script.write_text(FAKE_MATRIX)

    class FakeMatrix(soak.Soaker):
        def command(self, where):
            env = {**soak.os.environ, "SSLAB_RESULTS": str(self.dest / where)}
            return [soak.sys.executable, str(script)], env

    dest = tmp_path / "soak"
    (dest / "logs").mkdir(parents=True)
    soaker = FakeMatrix(dest, ["matrix", "run", "smoke"], seed=1, n=1, log=lambda *_: None)
    fault = soak.Fault("cut-a-file", after_s=0.0)
    soaker.record.faults = [fault]
    soaker.run_stormy()
    assert fault.what == "cell k: job/out/run.json (cut-a-file)"
    assert fault.detected is True
    # 1: no cell, the damage waits; 2: the cell lands; 3: the damage made before it, and found.
    assert soaker.record.sessions == 3
    assert len(list((dest / "stormy" / "m" / "failed").glob("k-3-set-aside"))) == 1


def test_an_earlier_soaks_calm_run_is_lent_only_to_the_same_matrix(tmp_path):
    """--calm-from: refused (with why) when the earlier soak has no finished calm run, or ran another
    matrix; taken when only the inventory differs (where a matrix runs does not change its bytes)."""
    earlier = tmp_path / "earlier"
    assert "holds no finished calm run" in soak.calm_trouble(earlier, ["run", "smoke"])
    (earlier / "calm" / "m" / "cells").mkdir(parents=True)
    (earlier / "calm" / "m" / "plans").mkdir()
    (earlier / soak.CALM_RECORD).write_text(json.dumps({"args": ["run", "smoke", "--iter", "2"], "calm_s": 90.0}))
    assert "not this matrix" in soak.calm_trouble(earlier, ["run", "smoke", "--iter", "3"])
    assert soak.calm_trouble(earlier, ["run", "smoke", "--inventory", "fleet.ini", "--iter", "2"]) is None
    assert soak.calm_trouble(earlier, ["run", "smoke", "--iter", "2", "--inventory=f.ini"]) is None
    (earlier / soak.CALM_RECORD).write_text("{")
    assert "not a calm run's record" in soak.calm_trouble(earlier, ["run", "smoke", "--iter", "2"])
    assert soak.without_inventory(["a", "--inventory", "x", "b", "--inventory=y"]) == ["a", "b"]


def test_a_soak_that_takes_an_earlier_calm_run_runs_none_and_compares_with_it(tmp_path):
    """A soak (a stand-in matrix, run as a process) writes calm.json when its calm run ends; a second soak
    given it runs no calm run of its own, takes its wall time, and compares its stormy run with it."""
    script = tmp_path / "fake_matrix.py"
    # Every session lands its cell; each takes a moment, so that the calm run's wall time (to 0.1 s) is
    # not 0 on a fast machine.
    script.write_text(FAKE_MATRIX.replace("if n == 1:\n    sys.exit(1)\n", "import time\ntime.sleep(0.2)\n"))

    class FakeMatrix(soak.Soaker):
        def command(self, where):
            env = {**soak.os.environ, "SSLAB_RESULTS": str(self.dest / where)}
            return [soak.sys.executable, str(script)], env

    first = FakeMatrix(tmp_path / "a", ["matrix", "run", "smoke"], seed=1, n=0, log=lambda *_: None)._run()
    calm = json.loads((tmp_path / "a" / soak.CALM_RECORD).read_text())
    assert calm["args"] == ["matrix", "run", "smoke"] and calm["calm_s"] == first["calm_s"] > 0
    assert first["cells"] == {"identical": 1, "different": 0, "missing": 0} and first["calm_from"] is None

    second = FakeMatrix(tmp_path / "b", ["matrix", "run", "smoke"], seed=1, n=0, log=lambda *_: None,
                        calm_from=tmp_path / "a")._run()
    assert not (tmp_path / "b" / "calm").exists() and not (tmp_path / "b" / soak.CALM_RECORD).exists()
    assert second["calm_from"] == str((tmp_path / "a").resolve()) and second["calm_s"] == calm["calm_s"]
    assert second["cells"] == {"identical": 1, "different": 0, "missing": 0} and second["ok"]
    assert (tmp_path / "b" / "stormy" / "m" / "cells" / "k").is_dir()
    assert "an earlier soak's" in soak.report_md(second)


def test_a_soaks_page_is_listed_in_the_results_index(tmp_path, monkeypatch):
    """A soak under results/ (its default place) is a row of results/index.html beside the experiments'
    reports, its page beside its record; one kept elsewhere touches no index."""
    from sslab.analysis import html
    results = tmp_path / "results"
    monkeypatch.setattr(paths, "RESULTS_DIR", results)
    s = {"args": ["matrix", "run", "smoke"], "seed": 3, "ok": True, "faults": [], "injected_by_kind": {},
         "cells": {"identical": 1, "different": 0, "missing": 0}, "cells_different": [], "cells_missing": [],
         "damaged_cells": 0, "damaged_detected": 0, "sessions": 1, "calm_s": 1.0, "stormy_s": 1.0,
         "lost_to_faults_s": 0.0, "calm_from": None, "landing_s": None}
    dest = results / "soak" / "20261204T000000Z-abcd"
    dest.mkdir(parents=True)
    page = soak.write_pages(dest, s)
    assert page == dest / "report.html" and (dest / "report.md").read_text().startswith("# Soak: `sslab matrix run smoke`")
    index = (results / "index.html").read_text()
    assert "soak/20261204T000000Z-abcd/report.html" in index and "Soak:" in index
    elsewhere = tmp_path / "kept" / "s1"
    elsewhere.mkdir(parents=True)
    (results / "index.html").unlink()
    assert soak.write_pages(elsewhere, s).is_file() and not (results / "index.html").exists()
    assert html.index_of(elsewhere) is None



#: A stand-in session: it checks its host for a moment (no lock yet), then holds its matrix's controller
#: lock as the harness's controller does (sslab.paths.pid_lock) while it runs, a few seconds.
SLOW_TO_LOCK = '''
import os, sys, time
from pathlib import Path
from sslab import paths
m = Path(os.environ["SSLAB_RESULTS"]) / "m"
time.sleep(1.0)
with paths.pid_lock(m / "controller.lock"):
    time.sleep(float(os.environ.get("HOLD_S", "4")))
'''
#: A second controller as the harness's: refused (exit 2, its words) when the lock is held.
SECOND = '''
import os, sys
from pathlib import Path
from sslab.matrix.orchestrate import MatrixError, controller_lock
try:
    with controller_lock(Path(os.environ["SSLAB_RESULTS"]) / "m"):
        print("ran the matrix")
except MatrixError as e:
    print(e); sys.exit(2)
'''


def test_a_second_controller_starts_only_once_the_first_holds_its_lock_and_must_be_refused(tmp_path):
    """The second controller is started beside the session's once that holds its matrix's lock (one
    started during the session's own checks took the lock first, ran the whole matrix, and the session
    was refused: 4 Dec 2026); a second that is not refused fails the soak."""
    import subprocess
    import sys
    session, second = tmp_path / "session.py", tmp_path / "second.py"
    session.write_text(SLOW_TO_LOCK)
    second.write_text(SECOND)

    class Stand(soak.Soaker):
        def command(self, where):
            env = {**os.environ, "SSLAB_RESULTS": str(self.dest / where)}
            return [sys.executable, str(second)], env

    dest = tmp_path / "soak"
    (dest / "logs").mkdir(parents=True)
    soaker = Stand(dest, ["matrix", "run", "smoke"], seed=1, n=1, log=lambda *_: None)
    env = {**os.environ, "SSLAB_RESULTS": str(dest / "stormy")}
    proc = subprocess.Popen([sys.executable, str(session)], env=env, start_new_session=True)
    fault = soak.Fault("second-controller")
    assert soaker.strike(fault, proc, 1) is False       # struck at once: it waits for the lock first
    assert fault.what == "the second exited 2" and fault.detected is True
    assert proc.wait(timeout=30) == 0                     # the session ran on to its end
    # A session that ends before it holds a lock: nothing started, nothing counted.
    quick = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    quick.wait()
    late = soak.Fault("second-controller")
    assert soaker.strike(late, quick, 2) is False and late.what.startswith("not injected")
    # The record: a second refused passes; one that ran fails the soak, as a cell that differs would.
    soaker.record.faults = [fault, late]
    compared = {"identical": ["k"], "different": [], "missing": []}
    assert soak.summarise(soaker.record, compared)["ok"]
    fault.detected, fault.what = False, "the second exited 0 (NOT refused as it must be)"
    assert not soak.summarise(soaker.record, compared)["ok"]
