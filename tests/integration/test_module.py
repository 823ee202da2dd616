"""Our congestion-control module on the image's kernels (the stock one under QEMU, the UML one), on real stacks."""

import json
import os
import subprocess
import sys

import pytest

from sslab.ccas import OUR_CCAS, module_param_declarations
from sslab.paths import REPO_ROOT
from sslab.records import read_runs_index
from sslab.substrate.job import JobSpec
from sslab.substrate.qemu import TestbedVM
from sslab.substrate.uml import UMLTestbed

pytestmark = pytest.mark.vm
NAMES = list(OUR_CCAS)
SMOKE = REPO_ROOT / "tests/data/module-smoke.yaml"


def run_guest(image, tmp_path, argv, timeout, substrate="vm"):
    testbed = TestbedVM(image) if substrate == "vm" else UMLTestbed(image)
    res = testbed.run(JobSpec(argv=argv, timeout_s=timeout), tmp_path / "job")
    assert res.ok, res.stderr()[-3000:]
    return res


@pytest.mark.parametrize("substrate", ["uml", "vm"])
def test_module_loads_selects_and_unloads(image, tmp_path, substrate):
    assert image.manifest()["module"]["present"] and image.manifest()["uml"]["module"]["present"]
    res = run_guest(image, tmp_path, ["python3", "-m", "sslab.guest.modcheck"], 120, substrate)
    out = json.loads(res.stdout().strip().splitlines()[-1])
    for name in NAMES:
        assert name in out["available_after_load"]
        assert out["selectable"][name]
    ok, err = out["rmmod_while_in_use"]
    assert not ok and "in use" in err
    assert out["rmmod_when_unused"] == [True, ""]
    assert not any(n in out["available_after_unload"] for n in NAMES)
    assert out["reloaded"]
    # Every parameter the module's source declares, at its declared default, with its description, and no
    # other (bbr3's and bbr2_sslab's only where the kernel has our patch 0005: the UML one).
    declared = [p for p in module_param_declarations() if p.source.startswith("core/") or substrate == "uml"]
    assert out["params"] == {p.name: p.default for p in declared}
    assert out["params"]["suss_max"] == 3 and out["params"]["rapid_k36"] == 22
    for p in declared:
        assert out["descriptions"][p.name].startswith(p.description), p.name
    # The SUSS version: 2024 by default; 2025 and 0 (ours) taken; anything else refused and not stored.
    v = out["suss_version"]
    assert v["default"] == 2024 and v["2025"] == 2025 and v["0"] == 0 and v["2024"] == 2024
    assert v["2023"] == "refused: Invalid argument" and v["abc"].startswith("refused")


def test_variants_behave_on_a_real_path(tmp_path):
    """One flow each over 50 Mbit/s, 50 ms, 1 BDP, on the default substrate.

    cubic_suss must accelerate in round 2 (the initial window's ACK train is
    a few ms, far under minRTT/4) and leave slow start before a traditional
    slow start would; cubic_ss must overflow the buffer.
    """
    env = {**os.environ, "SSLAB_RESULTS": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "sslab", "startup", "--scenario", str(SMOKE)], capture_output=True,
                         text=True, cwd=REPO_ROOT, env=env, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    out = (tmp_path / "startup" / "latest").resolve() / "job" / "out"
    runs = {}
    for entry in read_runs_index(out / "runs.json"):
        run = json.loads((out / "runs" / entry["tag"] / "run.json").read_text())
        runs[run["flows"][0]["cc"]] = run
    suss = runs["cubic_suss"]["flows"][0]
    growth = [e for e in suss["events"] if e["type"] == "growth"]
    assert growth and growth[0]["a"] == "2" and growth[0]["b"] == "4", growth[:2]
    assert any(e["type"] == "pacing" for e in suss["events"])
    assert runs["cubic_ss"]["bottleneck"]["drops"] > 0
    # The server namespace's own counters (read from the job's process, netns.tcp_counters_of):
    # every segment the bottleneck dropped was the one flow's data, and the flow completed, so
    # each was sent again.
    assert runs["cubic_ss"]["tcp_counters"]["1"]["RetransSegs"] >= runs["cubic_ss"]["bottleneck"]["drops"]
    ss_exit = runs["cubic_ss"]["flows"][0]["slow_start"]["exit_cwnd"]
    assert ss_exit > runs["cubic_hs"]["flows"][0]["slow_start"]["exit_cwnd"]
    for r in runs.values():
        flow = r["flows"][0]
        assert flow["cc_used"] == flow["cc"]
        assert r["tcp_counters"]["1"]["TCPSACKReorder"] == 0, "the dumbbell reordered packets"


def test_suss_versions_on_a_real_path(tmp_path):
    """cubic_suss (the default, 2024), cubic_suss25 and ours over one path, one run each.

    Each run's record names the version; each version's events carry it.  Round 2's blue train is
    the initial window's 10 ACKs: ours scales their time by 10/10, the authors' code by 10 / the 9
    blue ACKs before the tail, so their dtB is ours x 10/9 (each run is its own run, and the
    ACKs of runs at other moments of one boot differ by a few us: 2178 against 2181 us here, so
    within 1%).  Both code versions plan round 2 by their arithmetic: 20 red packets, limit
    (cwnd + acked) + 20 = 40.
    """
    env = {**os.environ, "SSLAB_RESULTS": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "sslab", "startup", "--scenario",
                          str(REPO_ROOT / "tests/data/suss-versions.yaml")], capture_output=True, text=True,
                         cwd=REPO_ROOT, env=env, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    out = (tmp_path / "startup" / "latest").resolve() / "job" / "out"
    flows = {}
    for entry in read_runs_index(out / "runs.json"):
        run = json.loads((out / "runs" / entry["tag"] / "run.json").read_text())
        flows[run["flows"][0]["cc"]] = run["flows"][0]
    assert {cc: f["version"] for cc, f in flows.items()} == \
        {"cubic_suss": "2024", "cubic_suss25": "2025", "cubic_susspaper": "ours"}
    for cc, version in (("cubic_suss", "1"), ("cubic_suss25", "2"), ("cubic_susspaper", "0")):
        assert {e["version"] for e in flows[cc]["events"]} == {version}, cc

    def first(cc, kind):
        return next(e for e in flows[cc]["events"] if e["type"] == kind)
    ours = int(first("cubic_susspaper", "blue_train")["b"])
    for cc in ("cubic_suss", "cubic_suss25"):
        assert abs(int(first(cc, "blue_train")["b"]) / ours - 10 / 9) < 0.01, cc
        plan = first(cc, "pacing")
        assert plan["a"] == "20" and plan["limit"] == "40", (cc, plan)
    # The report names the versions.
    report = ((tmp_path / "startup" / "latest").resolve() / "report.md").read_text()
    assert "SUSS 2024" in report and "SUSS 2025" in report and "SUSS ours" in report
