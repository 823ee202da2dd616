"""Our congestion-control module on the image's kernel, on real stacks."""

import json

import pytest

from sslab.substrate.job import JobSpec
from sslab.substrate.qemu import TestbedVM

pytestmark = pytest.mark.vm
NAMES = ["cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss"]


def run_guest(image, tmp_path, argv, timeout):
    res = TestbedVM(image).run(JobSpec(argv=argv, timeout_s=timeout), tmp_path / "job")
    assert res.ok, res.stderr()[-3000:]
    return res


def test_module_loads_selects_and_unloads(image, tmp_path):
    assert image.manifest()["module"]["present"]
    res = run_guest(image, tmp_path, ["python3", "-m", "sslab.guest.modcheck"], 120)
    out = json.loads(res.stdout().strip().splitlines()[-1])
    for name in NAMES:
        assert name in out["available_after_load"]
        assert out["selectable"][name]
    ok, err = out["rmmod_while_in_use"]
    assert not ok and "in use" in err
    assert out["rmmod_when_unused"] == [True, ""]
    assert not any(n in out["available_after_unload"] for n in NAMES)
    assert out["reloaded"] and out["param_suss_max"] == 3


def test_variants_behave_on_a_real_path(image, tmp_path):
    """One flow each over 50 Mbit/s, 50 ms, 1 BDP (short transfers to keep the suite fast).

    cubic_suss must accelerate in round 2 (the initial window's ACK train is
    a few ms, far under minRTT/4) and leave slow start before a traditional
    slow start would; cubic_ss must overflow the buffer.
    """
    res = run_guest(image, tmp_path, ["python3", "-m", "sslab.guest.ccbehaviour", "--parts", "smoke"], 600)
    data = json.loads((res.out_dir / "ccbehaviour.json").read_text())["parts"]["smoke"]
    runs = {r["cc"]: r for r in data["runs"]}
    suss = runs["cubic_suss"]
    growth = [e for e in suss["events"] if e["type"] == "growth"]
    assert growth and growth[0]["a"] == "2" and growth[0]["b"] == "4", growth[:2]
    assert any(e["type"] == "pacing" for e in suss["events"])
    assert runs["cubic_ss"]["bottleneck_drops"] > 0
    assert runs["cubic_ss"]["slow_start"]["exit_cwnd"] > runs["cubic_hs"]["slow_start"]["exit_cwnd"]
    for r in runs.values():
        assert r["cc_used"] == r["cc"]
        assert r["tcp_counters"]["TCPSACKReorder"] == 0, "the dumbbell reordered packets"
