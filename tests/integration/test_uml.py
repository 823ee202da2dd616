"""The default substrate on the real image: User-Mode Linux in virtual time.

What the virtual-time issue promises of it: exact RTTs, HyStart's ACK-train
exit working as on a quiet real host, runs that a seed repeats byte for byte
(also with the host's cores busy), and different seeds giving different runs.
"""

import hashlib
import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from sslab.ccas import OUR_CCAS
from sslab.paths import REPO_ROOT
from sslab.records import read_runs_index

from sslab.substrate.console import VMHangError
from sslab.substrate.job import JobSpec
from sslab.substrate.uml import UMLConfig, UMLTestbed

from .helpers import processes_of, sslab

pytestmark = pytest.mark.vm
DETERMINISM = REPO_ROOT / "tests/data/uml-determinism.yaml"
EXITS = REPO_ROOT / "tests/data/slow-start-exits.yaml"




@pytest.fixture(scope="module")
def uml_check(tmp_path_factory, image):
    res = sslab(["vm-check"], tmp_path_factory.mktemp("results"))
    lines = res.stdout.strip().splitlines()
    assert lines, f"vm-check printed nothing; stderr:\n{res.stderr[-3000:]}"
    report = json.loads(lines[-1])
    report["_returncode"] = res.returncode
    return report


def test_vm_check_on_uml_has_exact_rtts_and_the_rate(uml_check, image):
    c = uml_check
    assert c["substrate"] == "uml" and c["clock"] == "uml/inf-cpu"
    assert c["kernel_release"] == image.manifest()["uml"]["release"]
    for name in OUR_CCAS:
        assert name in c["tcp_available_congestion_control"]
    assert c["qdiscs"] == {"netem": True, "fq": True, "tbf": True, "htb": True}
    st = c["link_selftest"]
    # Over the delay lines alone: 100.000 ms, every ping.
    assert st["delay_only_ping_ms"]["min"] == 100.0 and st["delay_only_ping_ms"]["mdev"] < 0.01, st
    # With the 50 Mbit/s rate limit each ping frame (98 bytes) is also serialised, each way: +0.031 ms.
    assert abs(st["min_rtt_ms"] - 100.0314) <= 0.002 and st["ping_ms"]["mdev"] < 0.01, st["ping_ms"]
    assert st["raw_min_rtt_ms"] == st["min_rtt_ms"]  # nothing is calibrated away
    assert abs(st["wire_rate_mbps"] - 50.0) <= 0.03 * 50.0, st
    assert c["_returncode"] == 0 and all(c["checks"].values()), c["checks"]


@pytest.fixture(scope="module")
def uml(image):
    return UMLTestbed(image, UMLConfig())


def test_job_status_output_and_guest_time(uml, image, tmp_path):
    res = uml.run(JobSpec(argv=["sh", "-c", "uname -r; sleep 30; echo err >&2; exit 7"], timeout_s=120),
                  tmp_path / "j")
    assert res.exit_code == 7 and not res.timed_out
    assert res.stdout().strip() == image.manifest()["uml"]["release"]
    assert res.stderr().strip() == "err" and res.clock == "uml/inf-cpu"
    # 30 s of guest sleep cost no wall time: the guest's clock skips idle time.
    assert res.guest_seconds >= 30 and res.seconds_total < 20


def test_guest_root_is_read_only_and_the_command_line_names_no_run(uml, tmp_path):
    res = uml.run(JobSpec(argv=["sh", "-c", "touch /etc/x 2>&1; cat /proc/cmdline"], timeout_s=60), tmp_path / "j")
    out = res.stdout()
    assert "Read-only file system" in out
    assert str(tmp_path) not in out and "hostfs=." in out and "ipv6.disable=1" in out


def test_the_standard_library_is_read_compiled_from_the_image_and_the_shared_tree_compiled_in_the_guest(uml, tmp_path):
    # Before the job imports it, a standard module no one has imported in this boot (colorsys: not the
    # agent, which is Python too) is compiled at the prefix, the image's tree mounted there by sslab-init;
    # the shared tree's modules are compiled by the guest into its own tmpfs.
    script = ("ls /tmp/pycache/usr/lib/python3*/colorsys.cpython-*.pyc; ls -d /tmp/pycache/sslab 2>&1; "
              "python3 -c 'import colorsys, sslab.records as r; print(colorsys.__cached__); print(r.__cached__)'; "
              "ls /tmp/pycache/sslab/src/runners/sslab/records.cpython-*.pyc")
    res = uml.run(JobSpec(argv=["sh", "-c", script], timeout_s=60), tmp_path / "j")
    assert res.exit_code == 0, res.stderr()
    first, absent, colorsys_cached, records_cached, records_written = res.stdout().split("\n")[:5]
    assert first.startswith("/tmp/pycache/usr/lib/python3") and "No such file" in absent
    assert colorsys_cached == first
    assert records_cached == records_written == "/tmp/pycache/sslab/src/runners/sslab/" + Path(records_written).name


def test_a_job_past_its_timeout_is_killed(uml, tmp_path):
    res = uml.run(JobSpec(argv=["sleep", "600"], timeout_s=3), tmp_path / "j")
    assert res.timed_out and "timeout of 3 s" in res.status["error"]


def test_hung_guest_is_killed_naming_the_phase_with_all_its_processes(image, tmp_path):
    testbed = UMLTestbed(image, UMLConfig(job_grace_s=5))
    t0 = time.monotonic()
    with pytest.raises(VMHangError) as err:
        testbed.run(JobSpec(argv=["sh", "-c", "kill -STOP $PPID; sleep 600"], timeout_s=5), tmp_path / "j")
    assert err.value.phase == "job" and time.monotonic() - t0 < 60
    time.sleep(1)
    left = processes_of(tmp_path, str(image.uml_binary))
    assert not left, f"UML processes left running: {left}"


# --------------------------------------------------------------------------
# Slow-start exits on an exact clock
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exits_run(tmp_path_factory, image):
    results = tmp_path_factory.mktemp("results")
    res = sslab(["startup", "--scenario", str(EXITS)], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (results / "startup" / "latest").resolve()
    runs = {}
    for entry in read_runs_index(run_dir / "job/out/runs.json"):
        run = json.loads((run_dir / "job/out/runs" / entry["tag"] / "run.json").read_text())
        runs[run["flows"][0]["cc"]] = run
    return run_dir, runs


def test_hystart_leaves_slow_start_by_its_ack_train_test(exits_run):
    _, runs = exits_run
    flow = runs["cubic_hs"]["flows"][0]
    exits = [e for e in flow["events"] if e["type"] == "exit"]
    assert exits and exits[0]["a"] == "1", exits  # cause 1: the ACK train
    # ... before the 1-BDP buffer (413 packets) overflows: nothing is lost in slow start.  Linux's
    # CUBIC grows past BDP + buffer later, in congestion avoidance (the kernel's cubic: cwnd 867,
    # 42 drops, a good 1.6 s after the exit), so the first loss comes many RTTs (100 ms) after it.
    assert flow["slow_start"]["exit_cwnd"] < 2 * 413
    losses = [e for e in flow["events"] if e["type"] == "loss"]
    assert all(loss["ts"] > exits[0]["ts"] + 5 * 0.1 for loss in losses), (exits, losses)


def test_traditional_slow_start_overshoots(exits_run):
    _, runs = exits_run
    ss = runs["cubic_ss"]
    assert ss["bottleneck"]["drops"] > 100
    assert ss["flows"][0]["slow_start"]["exit_cwnd"] > runs["cubic_hs"]["flows"][0]["slow_start"]["exit_cwnd"]


def test_each_run_starts_on_a_whole_second_of_guest_time(exits_run):
    """Under virtual time each run of a boot starts when the guest's clock reaches a whole second
    (timeline.sleep_until_the_next_second): its console mark says so, for every run."""
    run_dir, runs = exits_run
    marks = [line.split("uptime=")[1] for line in (run_dir / "job/uml/console.log").read_text().splitlines()
             if line.startswith("SSLAB-PHASE run ")]
    assert len(marks) == len(runs) >= 2
    assert all(m.endswith(".000") for m in marks), marks
    assert len(set(marks)) == len(marks)


def test_fidelity_under_virtual_time_is_exact(exits_run):
    run_dir, runs = exits_run
    fid = json.loads((run_dir / "job/out/fidelity.json").read_text())
    assert fid["clock"] == "uml/inf-cpu" and not fid["rtt"]["calibrated"]
    # Exactly the configured 100 ms plus the bottleneck's serialisation of the ping (98 bytes at
    # 50 Mbit/s = 15.7 us), within ping's 1 us resolution, on every pair.
    for pair, measured in fid["rtt"]["measured_ms"].items():
        assert abs(measured - fid["rtt"]["expected_ms"][pair]) <= 0.002, fid["rtt"]
        assert fid["rtt"]["expected_ms"][pair] == 100.0157
    assert all(r["fidelity"]["base_rtt_ok"] for r in runs.values())
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["substrate"] == "uml" and meta["clock"] == "uml/inf-cpu"


# --------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------


def digest_of(run_dir: Path) -> dict[str, str]:
    """What a run produced, file by file: the records and captures the guest wrote, and the trace
    (host times, run ids and the report's paths aside)."""
    out = {}
    for p in sorted((run_dir / "job/out/runs").rglob("*")):
        if p.is_file():
            out[str(p.relative_to(run_dir))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def comparable(run: dict) -> dict:
    """run.json without the host's wall-clock start (the only field a run id shows in)."""
    return {k: v for k, v in run.items() if k not in ("started_unix", "seconds")}


def run_seed(results: Path, seed: int) -> Path:
    results.mkdir(parents=True, exist_ok=True)
    scenario = results / f"seed-{seed}.yaml"
    scenario.write_text(DETERMINISM.read_text().replace("seed: 1", f"seed: {seed}"))
    res = sslab(["startup", "--scenario", str(scenario)], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return (results / "startup" / "latest").resolve()


def runs_of(run_dir: Path) -> list[dict]:
    out = []
    for entry in read_runs_index(run_dir / "job/out/runs.json"):
        out.append(comparable(json.loads((run_dir / "job/out/runs" / entry["tag"] / "run.json").read_text())))
    return out


def busy(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def test_same_seed_is_byte_identical_also_with_the_host_busy_and_other_seeds_differ(tmp_path, image):
    a = run_seed(tmp_path / "a", 7)
    # Both host cores kept busy for the whole second run.
    stop_at = time.monotonic() + 600
    hogs = [multiprocessing.Process(target=busy, args=(stop_at,)) for _ in range(os.cpu_count() or 2)]
    for h in hogs:
        h.start()
    try:
        b = run_seed(tmp_path / "b", 7)
    finally:
        for h in hogs:
            h.terminate()
    c = run_seed(tmp_path / "c", 8)
    ra, rb, rc = runs_of(a), runs_of(b), runs_of(c)
    assert ra == rb
    # pcaps included: the capture's timestamps are the guest's virtual clock.
    da, db = digest_of(a), digest_of(b)
    pcaps = [k for k in da if k.endswith(".pcap")]
    assert pcaps and all(da[k] == db[k] for k in pcaps)
    assert ra != rc
    fcts = lambda runs: [f["fct_s"] for r in runs for f in r["flows"]]  # noqa: E731
    assert fcts(ra) != fcts(rc)
