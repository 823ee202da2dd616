"""A matrix as a Slurm job array (SLURM=1) on a real one-node cluster this module starts and stops
(tests/integration/slurmcluster.py), submitted by an unprivileged user from their own environment:
the same bytes as here, every process of the tasks under the user's uid, a cancelled task reported
and rerun, a drained node survived, bad input refused before anything is submitted."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from sslab.paths import REPO_ROOT

from . import slurmcluster as sc
from .helpers import SMOKE_ARGS, SMOKE_MATRIX, experiment, keyed, matrix_records, sslab

pytestmark = pytest.mark.vm
ARGS = SMOKE_ARGS
MATRIX = SMOKE_MATRIX
#: Seconds between the controller's looks at the queue: short here, where nothing else uses Slurm.
POLL = ["--slurm", "--slurm-poll", "1"]


@pytest.fixture(scope="module")
def cluster(image):
    assert os.geteuid() == 0, "the one-node cluster's daemons need root (CI runs as root)"
    for cmd in ("slurmctld", "slurmd", "sbatch", "munged"):
        assert subprocess.run(["sh", "-c", f"command -v {cmd} || test -x /usr/sbin/{cmd}"],
                              capture_output=True).returncode == 0, f"no {cmd}: `make slurm-deps` installs Debian's"
    # Where the user's commands can read the configuration (pytest's own directories are root's alone).
    d = Path(tempfile.mkdtemp(prefix="sslab-slurm-"))
    d.chmod(0o755)
    c = sc.start(d)
    yield c
    sc.stop(c)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def user(cluster, image):
    """The user: their Python, their (read-only) image cache, their results; a function that runs the
    harness as them."""
    u = sc.ensure_user()
    home = Path(u.pw_dir)
    python = sc.user_python(home)
    cache = sc.user_cache(home, image)

    def run(args: list[str], results: Path, extra_env: dict | None = None, popen: bool = False):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(home), "LANG": "C.UTF-8",
               "SSLAB_RESULTS": str(results), "SSLAB_CACHE": str(cache), "PYTHONPATH": str(REPO_ROOT / "runners"),
               **cluster.env(), **(extra_env or {})}
        cmd = sc.as_user("env", *[f"{k}={v}" for k, v in env.items()], str(python), "-m", "sslab", *args)
        if popen:
            return subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)

    def results_dir(name: str) -> Path:
        d = home / "results" / f"{name}-{time.strftime('%H%M%S')}-{os.getpid()}"
        subprocess.run(sc.as_user("mkdir", "-p", str(d)), check=True)
        return d

    return u, run, results_dir


def task_processes(launcher: int) -> dict[int, tuple[int, str]]:
    """Processes below a slurmstepd (Slurm's own, root's, not counted) or below @launcher (runuser, root's,
    not counted): pid -> (uid, command line)."""
    info: dict[int, tuple[int, int, str, str]] = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            status = dict(ln.split(":", 1) for ln in (p / "status").read_text().splitlines() if ":" in ln)
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            info[int(p.name)] = (int(status["PPid"]), int(status["Uid"].split()[0]), status["Name"].strip(), cmd)
        except (OSError, KeyError, ValueError):
            continue  # gone meanwhile
    out = {}
    for pid, (ppid, uid, name, cmd) in info.items():
        if name == "slurmstepd" or pid == launcher:
            continue
        seen, up = set(), ppid
        while up in info and up not in seen:
            seen.add(up)
            if info[up][2] == "slurmstepd" or up == launcher:
                out[pid] = (uid, cmd)
                break
            up = info[up][0]
    return out


def queued(cluster, job: str) -> dict[str, str]:
    out = cluster.run("squeue", "-h", "-r", "-j", job, "-o", "%K|%T", check=False).stdout
    return dict(line.split("|") for line in out.split())


def job_of(mdir: Path) -> str:
    deadline = time.monotonic() + 300
    while not (mdir / "slurm.json").is_file():
        assert time.monotonic() < deadline, "no array was submitted"
        time.sleep(0.5)
    return str(json.loads((mdir / "slurm.json").read_text())["job"])


def running(cluster, job: str) -> bool:
    return "RUNNING" in queued(cluster, job).values()


def start_array(cluster, run, results: Path, ready) -> tuple[subprocess.Popen, Path, str]:
    """The smoke matrix submitted by the user in the background; returned once @ready(mdir, job) holds."""
    mdir = results / MATRIX
    proc = run(ARGS + POLL, results, popen=True)
    job = job_of(mdir)
    deadline = time.monotonic() + 600
    while not ready(mdir, job):
        assert time.monotonic() < deadline and proc.poll() is None, "the array never reached the state asked for"
        time.sleep(0.1)
    return proc, mdir, job


def test_the_array_gives_the_same_bytes_as_here_every_process_the_users(cluster, user, smoke_here):
    u, run, results_dir = user
    results = results_dir("same")
    proc = run(ARGS + POLL, results, popen=True)
    uids: dict[int, set] = {}
    umls = 0
    # Every process the tasks start (below a slurmstepd: the task's shell, the runner, its UMLs and
    # their helpers) and the controller's (below the runuser that started it), while they run.
    while proc.poll() is None:
        for pid, (uid, cmd) in task_processes(proc.pid).items():
            uids.setdefault(uid, set()).add(cmd[:120])
            umls += "time-travel" in cmd
        time.sleep(0.2)
    out = proc.stdout.read()
    assert proc.returncode == 0, out[-4000:] + cluster.log_tail()
    assert set(uids) == {u.pw_uid}, {k: sorted(v)[:5] for k, v in uids.items()}
    assert umls > 0, "no UML of the tasks was seen running"
    # Six boots of one cell: one array of six tasks, each a host of its own, every cell home.
    assert "6 cells; 0 already done, 6 to run in 6 boot(s) as 6 task(s) of one Slurm job array" in out, out
    mdir = results / MATRIX
    record = json.loads((mdir / "slurm.json").read_text())
    assert len(record["tasks"]) == 6 and all(s["state"] == "COMPLETED" for s in record["states"].values())
    hosts = {json.loads((mdir / "cells" / k / "cell.json").read_text())["host"] for k in smoke_here}
    assert hosts == {f"slurm-{record['job']}_{i}" for i in range(6)}
    assert matrix_records(mdir) == smoke_here
    for i in range(6):  # a log a task, where Slurm's record of it says
        log = Path(record["logs"]) / f"{record['job']}_{i}.out"
        assert log.stat().st_uid == u.pw_uid and "done in" in log.read_text()
    show = cluster.run("scontrol", "-o", "show", "job", str(record["job"])).stdout
    assert "JobName=sslab:smoke:all" in show and f"UserId={u.pw_name}({u.pw_uid})" in show
    # A rerun submits nothing: every cell is there.
    res = run(ARGS + POLL, results)
    assert res.returncode == 0 and "6 already done, 0 to run" in res.stdout, res.stdout[-2000:]
    assert json.loads((mdir / "slurm.json").read_text())["job"] == record["job"]


def test_a_cancelled_task_is_reported_and_a_rerun_completes_the_same_cells(cluster, user, smoke_here):
    u, run, results_dir = user
    results = results_dir("cancelled")
    proc, mdir, job = start_array(cluster, run, results, lambda mdir, job: running(cluster, job))
    victim = next(t for t, s in queued(cluster, job).items() if s == "RUNNING")
    cluster.run("scancel", f"{job}_{victim}")  # as the administrator would, mid-run
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 1, out[-3000:]
    assert re.search(rf"task {victim} \(1 cell\(s\), 1 not home\): CANCELLED.*log .*{job}_{victim}\.out", out), out[-3000:]
    assert "1 cell(s) not done" in out
    assert not list((mdir / "cells").glob(".partial-*")), "a partial cell was left"
    first = json.loads((mdir / "slurm.json").read_text())
    res = run(ARGS + POLL, results)
    assert res.returncode == 0, res.stdout[-3000:]
    assert "5 already done, 1 to run in 1 boot(s) as 1 task(s)" in res.stdout
    assert json.loads((mdir / "slurm.json").read_text())["job"] != first["job"]
    assert matrix_records(mdir) == smoke_here


def home(mdir: Path) -> set[str]:
    """Cells home (a partial directory may hold a cell.json before its rename)."""
    cells = mdir / "cells"
    return {d.name for d in cells.iterdir() if (d / "cell.json").is_file() and not d.name.startswith(".")} \
        if cells.is_dir() else set()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_cancels_the_array_and_loses_nothing_finished(cluster, user, smoke_here, sig):
    """Exit 128 + the signal, as a controller of hosts exits (SIGTERM gave 130 until 3 Dec 2026)."""
    u, run, results_dir = user
    results = results_dir(f"stopped-by-{sig.name}")
    proc, mdir, job = start_array(cluster, run, results, lambda mdir, job: home(mdir) and running(cluster, job))
    # The controller itself (runuser's child), as a terminal's Ctrl-C reaches it.
    controller = next(pid for pid, (uid, cmd) in task_processes(proc.pid).items()
                      if "-m sslab matrix run" in cmd and uid == u.pw_uid)
    os.kill(controller, sig)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 128 + sig, out[-3000:]
    assert f"interrupted ({sig.name}): cancelling the array" in out and f"scancel {job}" in out, out[-3000:]
    assert queued(cluster, job) == {}, "the array is still queued"
    kept = home(mdir)
    assert 1 <= len(kept) < 6 and not list((mdir / "cells").glob(".partial-*")), sorted((mdir / "cells").iterdir())
    assert {k: smoke_here[k] for k in kept} == {k: v for k, v in matrix_records(mdir).items() if k in kept}
    res = run(ARGS + POLL, results)
    assert res.returncode == 0 and f"{len(kept)} already done, {6 - len(kept)} to run" in res.stdout, res.stdout[-3000:]
    assert matrix_records(mdir) == smoke_here


def test_a_node_drained_mid_array_is_survived(cluster, user, smoke_here):
    u, run, results_dir = user
    results = results_dir("drained")
    node = cluster.run("sinfo", "-h", "-p", "debug", "-o", "%N").stdout.strip()
    proc, mdir, job = start_array(cluster, run, results, lambda mdir, job: running(cluster, job))
    cluster.run("scontrol", "update", f"nodename={node}", "state=drain", "reason=sslab-test")
    try:
        # The running tasks finish on the draining node; the pending ones wait, and the controller says why.
        deadline = time.monotonic() + 600
        while running(cluster, job):
            assert time.monotonic() < deadline
            time.sleep(0.5)
        assert "PENDING" in queued(cluster, job).values()
        time.sleep(3)
    finally:
        cluster.run("scontrol", "update", f"nodename={node}", "state=resume")
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, out[-3000:]
    assert re.search(r"0 running, \d pending \(Nodes required for job are DOWN, DRAINED", out), out[-3000:]
    assert matrix_records(mdir) == smoke_here


def test_an_experiments_parts_as_the_array_give_the_bytes_of_a_run_here(cluster, user, tmp_path):
    """SLURM=1 on an experiment that is not a matrix: each part a cell and a task, keyed as a run here alone
    is (a rerun runs neither), with the bytes a run here gives, flow by flow, ACK by ACK, packet by packet."""
    from sslab.analysis.oracle import compare_runs
    u, run, results_dir = user
    results = results_dir("parts")
    files = results / "files"
    files.mkdir()
    smoke = str(REPO_ROOT / "tests/data/module-smoke.yaml")
    (files / "a.yaml").write_text(yaml.safe_dump({
        "extends": smoke, "name": "slurm-parts-a", "pairs": [{"rtt": "50ms"}],
        "bottleneck": {"buffer": {"bdp": 1, "rtt": "50ms"}}, "capture": {"pcap": True, "traces": True},
        "cases": {"name": "{cc}", "flows": [{"pair": 1, "cc": "{cc}", "size": "1MB", "start": "0s"}],
                  "axes": {"cc": ["cubic_hs", "cubic_suss"]}}}))
    f = experiment(files, "slurm-parts", parts=[{"name": "a", "scenario": str(files / "a.yaml")},
                                                {"name": "b", "scenario": smoke}])
    res = run(["run", f] + POLL, results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "2 part(s) in 2 cell(s), 0 already run, 2 to run as 2 task(s) of one Slurm job array" in res.stdout, \
        res.stdout[-3000:]
    [(key_a, run_a)] = keyed(results, "slurm-parts/a").items()
    [(key_b, run_b)] = keyed(results, "slurm-parts/b").items()
    job = json.loads((results / "slurm-parts" / "slurm.json").read_text())["job"]
    assert {json.loads((d / "cell.json").read_text())["host"] for d in (run_a, run_b)} == \
        {f"slurm-{job}_0", f"slurm-{job}_1"}
    assert all((d / "report.md").is_file() for d in (run_a, run_b))
    res = run(["run", f] + POLL, results)
    assert res.returncode == 0 and res.stdout.count("already run, key") == 2, res.stdout[-3000:]
    # The same part run here, by root, without Slurm: the same key, the same bytes.
    here_results = tmp_path / "here"
    res = sslab(["run", f, "--select", "a"], here_results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [(key_here, here)] = keyed(here_results, "slurm-parts/a").items()
    assert key_here == key_a
    rows = compare_runs(run_a, here)
    assert len(rows) == 2 and all(r.identical for r in rows), rows


def test_bad_input_is_refused_before_anything_is_submitted(cluster, user, image, tmp_path):
    u, run, results_dir = user
    results = results_dir("refused")
    jobs_before = cluster.run("scontrol", "-o", "show", "jobs").stdout.count("JobId=")
    res = run(ARGS + POLL, results, extra_env={"PATH": "/nonexistent"})
    assert res.returncode == 2 and "no sbatch, squeue, scancel, sinfo, scontrol on the PATH" in res.stderr, res.stderr
    res = run(ARGS + POLL + ["--slurm-args=--partition=nosuch"], results)
    assert res.returncode == 2 and "Slurm refuses the array" in res.stderr and "nosuch" in res.stderr.lower(), \
        res.stdout[-1000:] + res.stderr
    res = run(ARGS + POLL + ["--slurm-args=--array=0-3"], results)
    assert res.returncode == 2 and "is the harness's to set" in res.stderr, res.stderr
    # A cache in /tmp, which the partition's other node would not see.
    tmp_cache = Path("/tmp") / f"sslab-ci-cache-{os.getpid()}"
    subprocess.run(["cp", "-al", str(Path(u.pw_dir) / "cache"), str(tmp_cache)], check=True)
    try:
        res = run(ARGS + POLL + ["--slurm-args=--partition=pair"], results, extra_env={"SSLAB_CACHE": str(tmp_cache)})
        assert res.returncode == 2 and f"the image cache {tmp_cache} is under /tmp" in res.stderr, res.stderr
    finally:
        subprocess.run(["rm", "-rf", str(tmp_cache)])
    res = run(ARGS + POLL + ["--inventory", str(REPO_ROOT / "playbooks/inventory/localhost.ini.nosuch")], results)
    assert res.returncode == 2 and "INVENTORY= belongs to a fleet" in res.stderr, res.stderr
    assert cluster.run("scontrol", "-o", "show", "jobs").stdout.count("JobId=") == jobs_before
    assert not (results / MATRIX / "slurm.json").exists()
    # The make line passes SLURM_ARGS through as one option.
    dry = subprocess.run(["make", "-n", "matrix", "MATRIX=smoke", "SLURM=1", "SLURM_ARGS=--partition=x --time=5",
                          "SLURM_CELLS=2"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert "--slurm '--slurm-args=--partition=x --time=5' --slurm-cells 2" in dry.stdout, dry.stdout[-2000:]
