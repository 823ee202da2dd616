"""Requests that cannot run are refused before anything starts, with exit status 2 and their reason."""

import os
import subprocess
import sys

import pytest

from sslab.paths import REPO_ROOT


@pytest.mark.parametrize("args, said", [
    (["run", "wifi", "--reps", "0"], "REPS=0: at least 1"),
    (["soak", "--", "trace", "show", "x"], "a soak runs a matrix: `run EXPERIMENT ...` or `matrix run MATRIX ...`"),
    (["soak", "--faults", "0", "--", "run", "smoke"], "--faults=0: at least 1"),
    (["soak", "--dest", "tests", "--", "run", "smoke"], "tests is not empty: a soak writes into a new directory"),
    (["soak", "--", "run", "smoke", "--inventory", "playbooks/inventory/localhost.ini"],
     "a soak over hosts runs on the test fleet (make fleet-up;"),
    (["run", "blitzstart", "--select", "mars"], "nothing named mars"),
    (["run", "fct-vs-size", "--select", "wired,mars"], "nothing named mars"),
    (["run", "startpu"], "no experiment 'startpu'"),
    (["run", "no-such-dir/e1.yaml"], "no-such-dir/e1.yaml: no such experiment file"),
    (["run", "startup", "--set", "CCA=cubic"], "`make startup` has no setting CCA (its names: BUF, RTT"),
    (["run", "dynamics", "--set", "BUF=2BDP"], "`make dynamics` has no setting BUF (its names: RTT"),
    (["run", "startup", "--set", "bottleneck.rte=20mbit"], "bottleneck.rte: unknown field"),
    (["run", "startup", "--set", "bottleneck.buffer.packets=0"], "packets must be at least 1, got 0"),
    (["run", "startup", "--set", "RTT=fast"], "fast"),
    (["run", "startup", "--set", "pairs.9.rtt=25ms"], "the list at pairs has 5 item(s)"),
    (["run", "reproduce-table1", "--set", "bottleneck.rte=20mbit"], "bottleneck.rte: unknown field"),
    (["run", "startup", "--set", "topology.sender_qdisc=pfifo"], "SENDER_QDISC takes none, fq, fq_codel"),
    (["run", "startup", "--sender-qdisc", "fq", "--set", "SENDER_QDISC=fq_codel"], "SENDER_QDISC given twice"),
    (["matrix", "run", "fairness", "--set", "bottleneck.rate=fast"], "bottleneck.rate: cannot read"),
    (["run", "reproduce-table1", "--set", "CCA=cubic", "--set", "cca=bbr"], "CCA given twice: cubic and bbr"),
    (["run", "reproduce-table1", "--set", "NETEM=one"], "table1 has no setting NETEM (its axes: BUF, CCA"),
    (["run", "startup", "--set", "RTT=25ms", "--set", "pairs.*.rtt=50ms"], "pairs.*.rtt set twice, to two values"),
    (["run", "wifi", "--serial", "1"], "--serial: runs on the hosts of an inventory; give --inventory"),
    (["run", "startup", "--inventory", "no/such.ini"], "no inventory no/such.ini"),
    (["run", "reproduce-table1", "--reps", "2"], "--reps: reproduce-table1 is a matrix"),
    (["run", "reproduce-table1", "--set", "CCA=vegasx"], "vegasx"),
    (["run", "reproduce-table1", "--set", "CCA=Vegas-X"], "CCA=Vegas-X: not a congestion-control name"),
    (["run", "reproduce-table1", "--set", "RTT=,"], "RTT is empty"),
    (["run", "reproduce-table1", "--set", "RTT=0"], "RTT=0ms: makes an invalid table1 scenario"),
    (["run", "wifi", "--scenario", "experiments/scenarios/e1-startup.yaml"], "--scenario: wifi runs several parts"),
    (["run", "startup", "--scenario", "experiments/scenarios/e1-startpu.yaml"], "e1-startpu.yaml"),
    (["run", "fct-vs-size", "--jobs", "0"], "JOBS=0: at least 1"),
    (["run", "startup", "--suss-version", "2023"], "invalid choice: 2023"),
    (["run", "startup", "--select", "cubic_search", "--set", "module_params.search_version=5"],
     "search_version 5: 3 to 4 (SEARCH: cubic_search's version"),
    (["run", "startup", "--select", "cubic_search4", "--set", "module_params.search_thresh_pct=100"],
     "search_thresh_pct 100: 0 to 99 (SEARCH: THRESH, percent (0: the version's"),
    (["experiments", "--html"], "unrecognized arguments: --html"),
    (["startup", "--suss-version", "2023"], "invalid choice: 2023"),
    (["startup", "--hosts", "fast"], "invalid choice: 'fast'"),
    (["startup", "--lans", "hub"], "invalid choice: 'hub'"),
    (["captures", "no-such-dir"], "no run under no-such-dir"),
    (["matrix", "run", "table1", "--set", "CCA=vegasx"], "vegasx"),
    (["run", "reproduce-table1", "--set", "LAYOUT=nine-pairs"],
     "LAYOUT=nine-pairs: table1's layout is one of own-pairs, five-pairs"),
    (["run", "reproduce-table1", "--set", "FIRST_START=25s"],
     "flow 2 starts at 25 s, when flow 1 can have ended (it starts at 0 s and needs at least 20.91 s alone"),
    (["run", "reproduce-table1", "--set", "FIRST_START=-1s"], "FIRST_START=-1s"),
    (["run", "startup", "--offloads", "tso"], "invalid choice: 'tso'"),
    (["run", "startup", "--set", "topology.offloads=gro"], "OFFLOADS takes off, linux"),
    (["run", "startup", "--set", "OFFLOADS=linux-5"], "OFFLOADS takes off, linux, linux-2, linux-4"),
    (["run", "startup", "--socket-buffers", "small"], "invalid choice: 'small'"),
    (["run", "startup", "--set", "SOCKET_BUFFERS=4mb"], "SOCKET_BUFFERS takes raised, linux, linux-senders"),
    (["matrix", "independence", "no-such-matrix"], "no-such-matrix: not a matrix directory"),
    (["matrix", "rekey", "--results", "no-such-tree"], "no-such-tree: no such results tree"),
    # every other command, each with one bad value
    (["image", "rebuild"], "invalid choice: 'rebuild'"),
    (["image", "prune", "--keep", "-1"], "KEEP=-1: at least 0"),
    (["image", "prune", "--keep", "all"], "KEEP=all: a whole number"),
    (["container", "push"], "invalid choice: 'push'"),
    (["fresh-check", "--main", "reproduce-tabel1"], "'reproduce-tabel1' is not a target of the Makefile"),
    (["fresh-check", "--need-gb", "1e9"], "fresh-check needs about 1e+09 GB free"),
    (["vm-check", "--timeout", "0"], "0: more than 0 seconds"),
    (["exec", "--timeout", "-5", "--", "true"], "-5: more than 0 seconds"),
    (["startup", "--reps", "0"], "REPS=0: at least 1"),
    (["startup", "--scenario", "experiments/scenarios/e1-startpu.yaml"], "e1-startpu.yaml"),
    (["crosscheck", "--reps", "0"], "REPS=0: at least 1"),
    (["run", "astart", "--select", "mars"], "mars"),
    (["run", "astart", "--jobs", "0"], "JOBS=0: at least 1"),
    (["run", "blitzstart", "--reps", "two"], "REPS=two: a whole number"),
    (["trace", "generate", "--model", "gauss-markov", "--mean", "fast", "--cv", "0.1", "--tau", "1s",
      "--out", "/tmp/never-written.trace"], "fast"),
    (["trace", "show", "no-such.trace"], "no-such.trace"),
    (["kernel-trace", "no-such.trace.rb.gz"], "no-such.trace.rb.gz: no such file"),
    (["kernel-trace", "README.md"], "README.md: not a kernel trace of a run"),
    (["clab", "no-such.yaml"], "no-such.yaml"),
    (["report", "no-such-run"], "no-such-run is not a run directory"),
    (["matrix", "run", "table1", "--iter", "0"], "ITER=0: at least 1"),
    (["matrix", "run-cells", "--matrix-dir", "m", "--plan", "no-plan.json", "--host", "h"], "no-plan.json"),
    (["matrix", "pack", "--matrix-dir", "m", "--plan", "no-plan.json", "--host", "h", "--out", "x.tar"],
     "no-plan.json: cannot read it"),
    (["matrix", "merge", "--matrix-dir", "m", "--tar", "no-cells.tar"], "no-cells.tar: no such tar of cells"),
    (["matrix", "report", "no-such-matrix"], "no-such-matrix"),
    (["same-bytes", "no-such-run", "no-such-run-either"], "no-such-run is not a finished run directory"),
    (["compare", "no-such-dir", "results"], "no-such-dir: no flows.csv there"),
])
def test_refused_with_exit_2_before_anything_starts(tmp_path, args, said):
    env = {"SSLAB_RESULTS": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
           **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
    res = subprocess.run([sys.executable, "-m", "sslab", *args], capture_output=True, text=True, cwd=REPO_ROOT,
                         env=env, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert said in res.stderr
    assert not any(tmp_path.iterdir()), "something was written before the refusal"


@pytest.mark.parametrize("args, env, said", [
    (["run", "startup"], {"SSLAB_KERNEL_PATCHES": "/nonexistent/patches"},
     "KERNEL_PATCHES=/nonexistent/patches: no such directory"),
    (["run", "reproduce-table1", "--set", "CCA=cubic"], {"SSLAB_MODULES": "/nonexistent/module"},
     "MODULES=/nonexistent/module: no such directory"),
    (["run", "startup", "--substrate", "vm"], {"SSLAB_MODULES": str(REPO_ROOT / "examples/bring-your-own/module")},
     "SUBSTRATE=vm runs another kernel: use SUBSTRATE=uml"),
    (["image", "build"], {"SSLAB_KERNEL_PATCHES": str(REPO_ROOT / "examples/bring-your-own/module")},
     "no *.patch or *.diff file"),
    (["run", "startup"], {"SSLAB_KERNEL_SOURCE": "5.4"}, "KERNEL_SOURCE=5.4: not a kernel source the testbed knows"),
    (["run", "reproduce-table1", "--set", "CCA=cubic", "--kernel", "6.1", "--kernel", "7.3,patchez=x"], {},
     "kernel '7.3,patchez=x': after the source's name come only patches=DIR and modules=DIR"),
    (["matrix", "run", "table1", "--kernel", "6.1", "--kernel", "6.1"], {}, "'6.1' is the same kernel as '6.1'"),
    (["run", "reproduce-table1", "--kernel", "7.3"], {"SSLAB_KERNEL_SOURCE": "7.3"},
     "leave KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES= unset beside it"),
    (["run", "startup", "--kernel", "7.3"], {}, "--kernel: startup is not a matrix"),
])
def test_a_researchers_kernel_that_cannot_be_built_is_refused(tmp_path, args, env, said):
    """KERNEL_PATCHES= and MODULES= are checked before any image build, boot or run."""
    full = {"SSLAB_RESULTS": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **env,
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
    res = subprocess.run([sys.executable, "-m", "sslab", *args], capture_output=True, text=True, cwd=REPO_ROOT,
                         env=full, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert said in res.stderr
    assert not any(tmp_path.iterdir()), "something was written before the refusal"


def test_a_build_steps_no_space_is_the_caches_full_disk(tmp_path, monkeypatch):
    """An image build step that found no space (cp, make: "No space left on device") is said to have
    filled the cache's disk even with more than the threshold free there now (the build's own
    clean-up freed it); other errors are not a full disk."""
    from sslab.cli import full_disk_behind
    from sslab.substrate.image import ImageError
    from sslab.substrate.job import JobError
    monkeypatch.setenv("SSLAB_CACHE", str(tmp_path / "cache"))   # not made yet: its nearest parent
    cp = "error: command failed (1): cp -a …\ncp: cannot create directory 'x/rootfs/usr': No space left on device"
    assert full_disk_behind(ImageError(cp)) == tmp_path
    assert full_disk_behind(ImageError("error: command failed (100): apt-get install …")) is None
    assert full_disk_behind(JobError("the scenario job failed (exit 1)")) is None


def test_same_bytes_refuses_runs_the_second_directory_does_not_have(tmp_path):
    """Two runs of one scenario with different repetitions: the one with more runs first is refused,
    naming a missing run and what to do, before any trace is read (exit 2)."""
    import json
    from sslab.records import runs_index
    for name, reps in (("two", 2), ("ten", 10)):
        out = tmp_path / name / "job" / "out"
        out.mkdir(parents=True)
        out.joinpath("runs.json").write_text(json.dumps(runs_index(
            [{"tag": f"{k:03d}-cubic_hs-5MB-r{k}", "case": "cubic_hs-5MB", "rep": k} for k in range(reps)])))
    res = subprocess.run([sys.executable, "-m", "sslab", "same-bytes", str(tmp_path / "ten"), str(tmp_path / "two")],
                         capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert (f"{tmp_path / 'two'} has no run 002-cubic_hs-5MB-r2 (nor 7 more) of {tmp_path / 'ten'}'s 10: give the "
            "run directory with fewer runs (repetitions) first") in res.stderr
