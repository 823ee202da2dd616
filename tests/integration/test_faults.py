"""Faults a long matrix meets, injected for real (docs/faults.md): a damaged cache entry, two commands
at once on one checkout, a testbed killed outright.  Each is refused or survived, and nothing
recorded is lost."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sslab.paths import REPO_ROOT
from sslab.substrate.buildtools import sha256_file

from .helpers import SMOKE_ARGS, SMOKE_MATRIX, matrix_records, mounted_tmpfs, processes_of, sslab

pytestmark = pytest.mark.vm
SMOKE = str(REPO_ROOT / "tests/data/module-smoke.yaml")


def finished_runs(results: Path, kind: str = "startup") -> list[Path]:
    """The finished runs results/<kind>/keys/ names (a part's run, a cell of the experiment's store)."""
    keys = results / kind / "keys"
    return sorted(k.resolve() for k in keys.iterdir() if not k.name.startswith(".") and
                  (k.resolve() / "manifest.json").is_file()) if keys.is_dir() else []


def uml_main_processes(root: Path) -> list[int]:
    """The UML kernels running for runs under @root: of the processes there with a UML's command
    line (its guest's processes share it), those whose parent is none of them."""
    pids = {int(line.split(" ", 1)[0]) for line in processes_of(root, "time-travel=inf-cpu")
            if "time-travel=inf-cpu" in line}   # not a cell runner, whose command line names @root
    mains = []
    for pid in pids:
        try:
            ppid = int(next(ln.split()[1] for ln in Path(f"/proc/{pid}/status").read_text().splitlines()
                            if ln.startswith("PPid:")))
        except (OSError, StopIteration):
            continue
        if ppid not in pids:
            mains.append(pid)
    return mains


def test_a_damaged_image_is_set_aside_with_a_warning_and_built_again_never_booted(tmp_path, image):
    """One byte of the cached image's UML kernel flipped (a crash while writing, a bad disk): the next
    command names the file, moves the image aside, builds it again (its final stage, ~30 s) and runs
    on the rebuilt one, which is byte for byte what the recipe recorded."""
    linux = image.root / "linux"
    recorded = json.loads(image.manifest_path.read_text())["files"]["linux"]
    backup = tmp_path / "linux.good"
    shutil.copy2(linux, backup)
    aside = []
    try:
        with open(linux, "r+b") as f:
            f.seek(4096)
            byte = f.read(1)
            f.seek(4096)
            f.write(bytes([byte[0] ^ 0xFF]))
        res = sslab(["startup", "--scenario", SMOKE], tmp_path / "results", timeout=900)
        aside = sorted(image.root.parent.glob(f".damaged-{image.root.name}-*"))
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        out = res.stdout + res.stderr
        assert f"the cached image {image.root.name[:12]} is damaged and was not booted: linux: sha256 " in out, \
            out[-3000:]
        assert f"recorded {recorded[:12]}..." in out and "building it again" in out
        # Set aside, not deleted; the damaged copy is still the damaged one.
        assert len(aside) == 1 and sha256_file(aside[0] / "linux") != recorded
        # Rebuilt in place: the recorded bytes, and the run booted them.
        assert sha256_file(linux) == recorded
        run = (tmp_path / "results" / "startup" / "latest").resolve()
        meta = json.loads((run / "meta.json").read_text())
        assert meta["image"]["hash"] == image.root.name
        # The warning came before the boot: the run's UML started after the rebuild finished.
        assert out.index("is damaged and was not booted") < out.index(f"image {image.root.name[:12]} ready")
    finally:
        if not image.is_complete():  # the rebuild failed: put the good kernel back under the old name
            for d in aside:
                d.rename(image.root)
                shutil.copy2(backup, linux)
                break
        for d in sorted(image.root.parent.glob(f".damaged-{image.root.name}-*")):
            shutil.rmtree(d)


def test_a_uml_killed_outright_fails_its_attempt_keeps_nothing_half_done_and_the_cell_runs_again_whole(
        tmp_path, image):
    """SIGKILL to the UML kernel mid-run (what the OOM killer does): that attempt of the cell fails naming
    the testbed, kept under failed/ and never counted; the runner runs the cell again whole (its second
    attempt), and the command ends with one finished run whose key names it."""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    cmd = [sys.executable, "-m", "sslab", "run", "startup", "--scenario", SMOKE]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        for pid in uml_main_processes(results):
            # The run's UML (its directory is under the results; the preflight boot's is the
            # cache's), once its console says the traffic has begun.
            console = Path(os.readlink(f"/proc/{pid}/cwd")) / "console.log"
            if console.is_file() and b"SSLAB-PHASE flow traffic" in console.read_bytes():
                os.kill(pid, signal.SIGKILL)
                killed = pid
                break
        time.sleep(0.02)
    out = proc.communicate(timeout=600)[0]
    assert killed is not None, out[-3000:]
    assert proc.returncode == 0, out[-3000:]
    [attempt] = (results / "startup" / "failed").glob("*-a1")
    error = (attempt / "error.txt").read_text()
    assert "UML was killed by SIGKILL (unless by a stop here: by the kernel's OOM killer" in error, error[-3000:]
    assert "Nothing of this boot is recorded as done: the same command again runs it whole." in error
    assert not (attempt / "manifest.json").exists()
    [log] = (results / "startup" / "logs").glob("run-*/cells-localhost-b1.log")
    assert "attempt 1 failed: " in log.read_text() and "running (attempt 2, " in log.read_text(), log.read_text()
    assert not uml_main_processes(results) and not processes_of(results, "time-travel=inf-cpu")  # nothing left
    [run] = finished_runs(results)
    assert run.name == attempt.name.split("-")[0] and json.loads((run / "meta.json").read_text())["run_order"]


def test_a_runner_killed_outright_takes_its_uml_with_it_and_a_rerun_completes(tmp_path, image):
    """SIGKILL to `sslab run` itself mid-run: no `finally` runs, yet its UML dies with it (started
    under a parent-death signal) and leaves no process behind; the run is not recorded as done and
    the same command again runs it whole."""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    cmd = [sys.executable, "-m", "sslab", "run", "startup", "--scenario", SMOKE]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    main = None
    while main is None and time.monotonic() < deadline and proc.poll() is None:
        for pid in uml_main_processes(results):
            console = Path(os.readlink(f"/proc/{pid}/cwd")) / "console.log"
            if console.is_file() and b"SSLAB-PHASE flow traffic" in console.read_bytes():
                proc.kill()
                main, phases = pid, console.read_bytes().count(b"SSLAB-PHASE")
                break
        time.sleep(0.02)
    proc.communicate(timeout=60)
    assert main is not None and proc.returncode == -signal.SIGKILL
    time.sleep(3)  # a UML left running would go on through its runs (each a few phases a second)
    assert not Path(f"/proc/{main}").exists()  # the UML died with its runner
    assert console.read_bytes().count(b"SSLAB-PHASE") <= phases + 1, console.read_text()[-1500:]
    # What may stay are the UML's own helpers, asleep (6.1's): the next command stops them first.
    left = sorted(int(line.split(" ", 1)[0]) for line in processes_of(results, "time-travel=inf-cpu"))
    assert finished_runs(results) == []
    again = sslab(["run", "startup", "--scenario", SMOKE], results, timeout=900)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    if left:
        assert f"stopped {len(left)} UML process(es) a killed run left behind under {results}" in again.stdout
    assert not processes_of(results, "time-travel=inf-cpu")
    assert len(finished_runs(results)) == 1 and "already run, key" not in again.stdout


def test_two_commands_never_run_one_key_at_once_the_second_waits_and_takes_the_first_ones_run(tmp_path, image):
    """Two `sslab run` of one scenario, started together on one checkout: one runs it, the other says
    which command holds its key, waits, and takes its run rather than being refused beside it (as a
    second matrix is); one cell, one key."""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    cmd = [sys.executable, "-m", "sslab", "run", "startup", "--scenario", SMOKE]
    procs = [subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=900)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(o[-2000:] for o in outs)
    waiting = [o for o in outs if "is running it (key " in o and "waiting for it" in o]
    assert len(waiting) == 1, "\n---\n".join(o[-2000:] for o in outs)
    assert "already run, key " in waiting[0] and "to run on" not in waiting[0], waiting[0][-2000:]
    [cell] = [d for d in (results / "startup" / "cells").iterdir() if not d.name.startswith(".")]
    assert finished_runs(results) == [cell]


def flip_a_byte_of_a_record(run: Path) -> tuple[dict, Path]:
    """A byte in the middle of @run's fourth run record flipped (a disk's fault): each record's bytes
    before it, and the record flipped."""
    records = {r.relative_to(run): r.read_bytes() for r in sorted((run / "job/out/runs").glob("*/run.json"))}
    victim = run / sorted(records)[3]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    return records, victim


def test_an_experiments_finished_run_damaged_on_disk_is_set_aside_and_run_again_to_the_same_bytes(tmp_path, image):
    """E1 run, then a byte of one run's record flipped in its cell: the same command again sets the cell
    aside (failed/, saying what differs), runs its key again, and the new cell's records are the bytes
    the first had."""
    results = tmp_path / "results"
    args = ["run", "startup", "--reps", "1"]
    first = sslab(args, results, timeout=900)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    [cell] = finished_runs(results)
    records, victim = flip_a_byte_of_a_record(cell)
    again = sslab(args, results, timeout=900)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"cell {cell.name}: its files no longer match its manifest ({victim.relative_to(cell)}: sha256" \
        in again.stdout, again.stdout[-3000:]
    [aside] = (results / "startup" / "failed").glob(f"{cell.name}-*-set-aside")
    assert str(victim.relative_to(cell)) in (aside / "error.txt").read_text()
    assert finished_runs(results) == [cell]   # the key's run again, in the same place
    assert {r: (cell / r).read_bytes() for r in records} == records


def test_a_run_recorded_before_the_cell_store_is_found_by_its_key_and_run_again_when_damaged(tmp_path, image):
    """A part's run as commands before 8 Dec 2026 recorded it (a run directory results/<kind>/<run-id>/,
    which its key names): found and not run again; a byte of it flipped, it is kept where it is with
    damaged.txt saying why, its key runs again, and the new run's records are the bytes it had."""
    results = tmp_path / "results"
    args = ["run", "startup", "--reps", "1"]
    first = sslab(args, results, timeout=900)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    [cell] = finished_runs(results)
    old = results / "startup" / "20261201T000000Z-legacy"
    cell.rename(old)
    (results / "startup" / "keys" / cell.name).unlink()
    (results / "startup" / "keys" / cell.name).symlink_to(Path("..") / old.name)
    assert finished_runs(results) == [old]
    again = sslab(args, results, timeout=900)
    assert again.returncode == 0 and "already run, key" in again.stdout, again.stdout[-3000:]
    records, victim = flip_a_byte_of_a_record(old)
    again = sslab(args, results, timeout=900)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"startup: run {old}: its files no longer match its manifest ({victim.relative_to(old)}: sha256" \
        in again.stdout, again.stdout[-3000:]
    assert str(victim.relative_to(old)) in (old / "damaged.txt").read_text()
    [new] = finished_runs(results)
    assert new == cell and {r: (new / r).read_bytes() for r in records} == records


def test_a_runner_killed_in_its_read_out_is_read_out_again_not_run_again(tmp_path, image):
    """E1: SIGKILL to the command (its controller) and its cell runner once the cell's guest has finished, while the runner reads it out (every capture checked by tshark,
    a few seconds): the partial cell stays, the same command again reads it out, boots nothing, and
    ends it byte for byte as a run left alone ends (each run's record)."""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    args = ["run", "startup", "--reps", "1"]
    proc = subprocess.Popen([sys.executable, "-m", "sslab", *args], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    cells = results / "startup" / "cells"
    deadline = time.monotonic() + 600
    killed = None
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        # meta.json is written once the job is back from the guest; the read-out follows it.
        for meta in cells.glob(".partial-*/meta.json"):
            try:
                back = "job_exit_code" in json.loads(meta.read_text())
            except ValueError:   # being written
                continue
            runner = (results / "startup" / "progress" / "localhost.lock").read_text().strip()
            if back and not (meta.parent / "manifest.json").exists() and runner.isdigit():
                os.kill(int(runner), signal.SIGKILL)
                proc.kill()
                killed = meta.parent
        time.sleep(0.01)
    out = proc.communicate(timeout=60)[0]
    assert killed is not None and proc.returncode == -signal.SIGKILL, out[-3000:]
    assert killed.is_dir() and not (killed / "manifest.json").exists() and not list(cells.glob("[!.]*"))
    logs = results / "startup" / "logs"
    before = set(logs.glob("run-*/cells-localhost-b1.log"))
    again = sslab(args, results, timeout=900)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    [log] = [f.read_text() for f in set(logs.glob("run-*/cells-localhost-b1.log")) - before]
    assert f"its guest finished before the runner that ran it stopped ({killed}); reading its runs out, " \
           "not running it again" in log and "running (attempt" not in log, log[-3000:]
    [cell] = [d for d in cells.iterdir() if not d.name.startswith(".")]
    assert json.loads((cell / "cell.json").read_text())["read_out_again"] is True
    assert (results / "startup" / "keys" / cell.name).resolve() == cell
    alone = tmp_path / "alone"
    res = sslab(["run", "startup", "--reps", "1"], alone, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [left_alone] = finished_runs(alone)
    records = sorted((left_alone / "job" / "out" / "runs").glob("*/run.json"))
    assert len(records) == 8
    for r in records:
        assert (cell / r.relative_to(left_alone)).read_bytes() == r.read_bytes(), r.parent.name


def test_sigterm_to_a_matrix_mid_cell_exits_143_and_the_same_command_again_completes(tmp_path, image):
    """SIGTERM (`kill`, a closed session) to `sslab matrix run` while a cell runs: it stops its hosts'
    runs and exits 128 + 15 (it exited 130, Ctrl-C's, until the soak of 3 Dec 2026 saw it); the same
    command again runs what is missing."""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    cmd = [sys.executable, "-m", "sslab", *SMOKE_ARGS]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 600
    while not uml_main_processes(results) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.terminate()
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 143 and "interrupted (SIGTERM)" in out, out[-3000:]
    again = sslab(SMOKE_ARGS, results)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert len(matrix_records(results / SMOKE_MATRIX)) == 6


def test_a_matrix_whose_terminal_is_gone_still_stops_its_runs_and_exits_129(tmp_path, smoke_here):
    """The ssh session dropped under a running matrix: SIGHUP, and its console (a pipe here) closed, so
    every write fails.  It stops its runner and the runner's UMLs all the same, exits 128 + SIGHUP, and
    the same command again ends with the bytes of a matrix left alone.  (Until 3 Dec 2026 the first
    failed write ended it with exit 1 and its runner's UMLs left running: the soak over the fleet.)"""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    proc = subprocess.Popen([sys.executable, "-m", "sslab", *SMOKE_ARGS], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while not uml_main_processes(results) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert uml_main_processes(results), "no boot ran"
    proc.stdout.close()
    os.kill(proc.pid, signal.SIGHUP)
    assert proc.wait(timeout=300) == 128 + signal.SIGHUP
    from sslab.matrix.stopping import processes_inside
    deadline = time.monotonic() + 5      # a UML's last helpers take a moment to go after it
    while processes_inside(results) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_inside(results) == [], "the stopped matrix left processes working in its results"
    again = sslab(SMOKE_ARGS, results)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert matrix_records(results / SMOKE_MATRIX) == smoke_here


def test_a_controller_killed_mid_cell_leaves_no_runner_and_one_left_otherwise_is_stopped_by_the_next(
        tmp_path, smoke_here):
    """SIGKILL to `sslab matrix run` while its runner boots a cell: the runner it started here ends with
    it, its UMLs too.  A runner that outlived its controller all the same (one Ansible started, as on a
    host of this machine with a tree of its own; here the killed run's plan, run by hand in a session of
    its own) holds the host's lock: the same command again stops it first (the soak of 3 Dec 2026: it had
    refused the new runner, and the host was given up), and the matrix ends with the bytes of one left
    alone."""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    cmd = [sys.executable, "-m", "sslab", *SMOKE_ARGS]
    # Output to nothing: a pipe would be held open by a runner left behind.
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 600
    while not uml_main_processes(results) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.kill()
    assert proc.wait(timeout=60) == -signal.SIGKILL
    from sslab.matrix.stopping import processes_inside
    deadline = time.monotonic() + 10
    while processes_inside(results) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_inside(results) == [], "the runner of a controller killed outright worked on"
    mdir = results / SMOKE_MATRIX
    (plan,) = (mdir / "plans").glob("plan-*.json")
    keys = [k for boot in json.loads(plan.read_text())["boots"] for k in boot]
    left = subprocess.Popen([sys.executable, "-m", "sslab", "matrix", "run-cells", "--matrix-dir", str(mdir),
                             "--plan", str(plan), "--host", "localhost", "--keys", ",".join(keys), "--jobs", "1"],
                            cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while not uml_main_processes(results) and time.monotonic() < deadline and left.poll() is None:
        time.sleep(0.05)
    assert left.poll() is None, "the runner left behind ended before it booted"
    again = sslab(SMOKE_ARGS, results)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"host localhost: stopped the runner a stopped controller left (pid {left.pid})" in again.stderr, \
        again.stderr[-3000:]
    assert left.wait(timeout=30) != 0
    assert matrix_records(mdir) == smoke_here


def test_finished_cells_damaged_on_disk_are_found_and_run_again_to_the_same_bytes(tmp_path, smoke_here):
    """The smoke matrix run, then one cell's capture bit-flipped and another's run record cut short on
    disk: the same command again names both, sets them aside, runs those two alone, and ends with
    every cell's bytes those of the matrix left alone (smoke_here)."""
    results = tmp_path / "results"
    res = sslab(SMOKE_ARGS, results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    mdir = results / SMOKE_MATRIX
    flipped, cut = sorted(smoke_here)[:2]
    capture = sorted((mdir / "cells" / flipped).rglob("*.pcap.gz"))[0]   # the smoke matrix keeps no traces
    data = bytearray(capture.read_bytes())
    data[len(data) // 2] ^= 0x10
    capture.write_bytes(bytes(data))
    record = sorted((mdir / "cells" / cut).rglob("run.json"))[0]
    record.write_bytes(record.read_bytes()[:200])
    again = sslab(SMOKE_ARGS, results)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    for key, name in ((flipped, capture), (cut, record)):
        assert f"cell {key}: its files no longer match its manifest ({name.relative_to(mdir / 'cells' / key)}: " \
               f"sha256" in again.stdout, again.stdout[-3000:]
    assert "4 already done, 2 to run" in again.stdout, again.stdout[-3000:]
    assert len(list((mdir / "failed").glob("*-set-aside"))) == 2
    assert matrix_records(mdir) == smoke_here


def test_a_damaged_cell_of_a_shared_boot_runs_again_in_its_whole_boot_to_the_same_bytes(tmp_path):
    """Cells sharing boots (--boot-share 4: two boots of four), then the second cell of a boot damaged
    on disk: the same command again runs that boot whole, and every cell, the boot's records it keeps
    (the guest's status.json and stdout.log) among its files, is the bytes of the matrix left alone.
    (A boot cut after the damaged cell gave it a shorter boot's records: the soak of 3 Dec 2026.)"""
    args = ["matrix", "run", "smoke", "--iter", "4", "--boot-share", "4"]
    alone, results = tmp_path / "alone", tmp_path / "results"
    for where in (alone, results):
        res = sslab(args, where)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    left_alone = matrix_records(alone / SMOKE_MATRIX)
    assert len(left_alone) == 8
    mdir = results / SMOKE_MATRIX
    second = next(d for d in sorted((mdir / "cells").iterdir())
                  if json.loads((d / "cell.json").read_text()).get("boot", {}).get("position") == 1)
    record = sorted(second.rglob("run.json"))[0]
    record.write_bytes(record.read_bytes()[:100])
    again = sslab(args, results)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"cell {second.name}: its files no longer match its manifest" in again.stdout + again.stderr
    assert matrix_records(mdir) == left_alone


@pytest.fixture
def small_disk(tmp_path):
    """A 300 KB filesystem (tmpfs) for the results: a run's captures and traces do not fit."""
    yield from mounted_tmpfs(tmp_path / "small", "300k")


def test_a_full_disk_fails_the_run_saying_so_and_a_rerun_with_space_completes(small_disk, image):
    results = small_disk / "results"
    res = sslab(["run", "startup", "--scenario", SMOKE], results, timeout=600)
    assert res.returncode == 1, res.stdout[-2000:] + res.stderr[-2000:]
    assert f"error: no space left on the device holding {results}" in res.stderr, res.stderr[-2000:]
    assert "Nothing unfinished was recorded as done" in res.stderr
    assert finished_runs(results) == [] and not (results / "startup" / "keys" / "latest").exists()
    failed = sorted(p for p in (results / "startup").iterdir() if p.name[:8].isdigit())
    subprocess.run(["mount", "-o", "remount,size=50m", str(small_disk)], check=True)
    again = sslab(["run", "startup", "--scenario", SMOKE], results, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    [run] = finished_runs(results)
    assert run not in failed and all(p.is_dir() for p in failed)  # the failed one kept, not finished
    keys = [p for p in (results / "startup" / "keys").iterdir() if not p.name.startswith(".")]
    assert [k.resolve() for k in keys] == [run]


@pytest.fixture
def disk_to_fill(tmp_path):
    """A 64 MB filesystem (tmpfs) for the results, which a test fills on purpose (fill_all_but)."""
    yield from mounted_tmpfs(tmp_path / "fillable", "64m")


def fill_all_but(where: Path, leave: int) -> Path:
    """A file that takes all but @leave bytes of the free space of @where's filesystem."""
    filler = where / "filler"
    with open(filler, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, shutil.disk_usage(where).free - leave)
    return filler


@pytest.fixture
def soak_disk(tmp_path):
    """A 256 MB filesystem of its own (tmpfs) for a soak's runs, which its disk fault fills."""
    yield from mounted_tmpfs(tmp_path / "soak", "256m")


def test_the_soaks_full_disk_mid_matrix_then_the_same_command_again_ends_as_one_left_alone(soak_disk, smoke_here):
    """The soak's disk fault (sslab.matrix.soak, fill-the-disk) while the smoke matrix boots its first
    cells: the results' filesystem left with its last megabytes, then freed.  The controller runs on or
    stops saying so (exit 1, "no space left"), the ballast is gone, and the same command again ends
    with every cell's bytes those of the matrix left alone."""
    from sslab.matrix import soak
    assert soak.shares_a_filesystem(soak_disk) is None
    soaker = soak.Soaker(soak_disk, SMOKE_ARGS, seed=1, n=1)
    (soak_disk / "logs").mkdir()
    proc = soaker.start("stormy", "first.log")
    deadline = time.monotonic() + 120
    while not soaker.umls() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert soaker.umls(), (soak_disk / "logs" / "first.log").read_text()[-3000:]
    fault = soak.Fault("fill-the-disk")
    soaker.fill_the_disk(fault, proc)
    proc.wait(timeout=600)
    log = soaker.console.text()
    assert int(fault.what.split("filled to ")[1].split(" MB")[0]) <= soak.DISK_LEFT_B >> 20, fault.what
    assert not (soak_disk / soak.BALLAST).exists()
    # Stopped, it names the full disk: the controller's own write failed, or its runner's (the host's
    # loss says why).  Its console is whole: a user's terminal is not on the full disk.
    assert proc.returncode == 0 or (proc.returncode == 1 and "no space left on the device holding" in log), log[-3000:]
    results = soak_disk / "stormy"
    again = sslab(SMOKE_ARGS, results)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert matrix_records(results / SMOKE_MATRIX) == smoke_here


def file_hashes(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): sha256_file(p) for p in sorted(d.rglob("*")) if p.is_file() and not p.is_symlink()}


def test_a_full_disk_mid_report_leaves_no_half_report_and_nothing_recorded_changed(disk_to_fill, image):
    """A run's report rebuilt (`sslab report`) and a matrix's (`sslab matrix report`) with 16 KB left:
    each fails saying so (exit 1), leaves no half-written report under any name, changes no byte
    of what was recorded and moves no `latest`; with the space back, the same command writes it."""
    results = disk_to_fill / "results"
    run = sslab(["run", "startup", "--scenario", SMOKE], results, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    [run_dir] = finished_runs(results)
    matrix = sslab(["matrix", "run", str(REPO_ROOT / "tests/data/matrix-tiny.yaml"), "--set", "CCA=cubic"], results,
                   timeout=600)
    assert matrix.returncode == 0, matrix.stdout[-2000:] + matrix.stderr[-2000:]
    matrix_dir = results / "tiny" / "cca-cubic"
    latest = (matrix_dir / "reports" / "latest").resolve()
    recorded = {d: file_hashes(d) for d in (run_dir, matrix_dir)}
    reports = sorted(p.name for p in (matrix_dir / "reports").iterdir())

    filler = fill_all_but(disk_to_fill, 16 * 1024)
    for args in (["report", str(run_dir)], ["matrix", "report", str(matrix_dir)]):
        res = sslab(args, results, timeout=300)
        assert res.returncode == 1, (args, res.stdout[-2000:], res.stderr[-2000:])
        assert "error: no space left on the device holding" in res.stderr, res.stderr[-2000:]
        assert "Traceback" not in res.stderr
    assert not [p.name for p in run_dir.iterdir() if "rebuilt" in p.name]   # no rebuilt-*, no .rebuilt-*.partial
    assert sorted(p.name for p in (matrix_dir / "reports").iterdir()) == reports
    assert (matrix_dir / "reports" / "latest").resolve() == latest
    assert {d: file_hashes(d) for d in (run_dir, matrix_dir)} == recorded

    filler.unlink()
    again = sslab(["report", str(run_dir)], results, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    [rebuilt] = [p for p in run_dir.iterdir() if "rebuilt" in p.name]
    assert rebuilt.name.startswith("rebuilt-") and (rebuilt / "report.md").is_file() and (rebuilt / "summary.json").is_file()
    again = sslab(["matrix", "report", str(matrix_dir)], results, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    new = (matrix_dir / "reports" / "latest").resolve()
    assert new != latest and new.name not in reports and (new / "table.md").is_file() and (new / "report.html").is_file()
    assert {k: v for k, v in file_hashes(run_dir).items() if not k.startswith("rebuilt-")} == recorded[run_dir]


def test_a_second_controller_of_one_matrix_is_refused_before_it_plans_and_the_first_finishes(tmp_path, image):
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    cmd = [sys.executable, "-m", "sslab", "matrix", "run", str(REPO_ROOT / "tests/data/matrix-tiny.yaml"),
           "--set", "CCA=cubic"]
    first = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lock = results / "tiny" / "cca-cubic" / "controller.lock"
    deadline = time.monotonic() + 120
    while not (lock.is_file() and lock.read_text().strip() == str(first.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = first.communicate(timeout=600)[0]
    assert first.returncode == 0, out[-3000:]
    assert second.returncode == 2, second.stdout[-2000:] + second.stderr[-2000:]
    assert (f"error: another `sslab matrix run` (pid {first.pid}) is running the cells of "
            f"{results / 'tiny' / 'cca-cubic'}; nothing was planned or run") in second.stderr
    plans = list((results / "tiny" / "cca-cubic" / "plans").glob("plan-*.json"))
    assert len(plans) == 1  # the refused one planned nothing
    again = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "1 already done, 0 to run" in again.stdout, again.stdout[-2000:]


def test_a_controller_killed_outright_loses_no_cell_leaves_nothing_running_and_a_rerun_runs_the_rest(
        tmp_path, image):
    """SIGKILL to `sslab matrix run` once its first cell is home: the cells home stay done, nothing is
    left running (the runner it started here, with every boot in one batch, ends with it), and the same
    command runs only the cells not home."""
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    cmd = [sys.executable, "-m", "sslab", "matrix", "run", str(REPO_ROOT / "experiments/scenarios/smoke.yaml"),
           "--iter", "2", "--boot-share", "1", "--jobs", "1"]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cells = results / "smoke" / "all" / "cells"
    deadline = time.monotonic() + 600
    while not list(cells.glob("*/cell.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.kill()
    proc.wait(timeout=60)
    home = {p.parent.name for p in cells.glob("*/cell.json")}
    assert home and proc.returncode == -signal.SIGKILL
    time.sleep(3)
    assert not processes_matching_results(results)  # no runner, no UML left working for it
    again = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"4 cells; {len(home)} already done, {4 - len(home)} to run" in again.stdout, again.stdout[-2000:]
    assert home <= {p.parent.name for p in cells.glob("*/cell.json")} and len(list(cells.glob("*/cell.json"))) == 4


def processes_matching_results(results: Path) -> list[str]:
    """Processes working for @results: a cell runner naming it, or a UML working under it."""
    return processes_of(results, "run-cells", "time-travel=inf-cpu")
