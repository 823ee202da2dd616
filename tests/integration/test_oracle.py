"""The kernel as the oracle (sslab.experiment.oracle): our cubic_ss and cubic_hs against the kernel's
own `cubic` on E1's path, 5 MB and 20 MB, in both of cubic_hs's HyStart rounds, ACK by ACK and
packet by packet; and a pairing that must differ, found different at the ACK where it does."""

import json
import os
import subprocess
import sys

import pytest

from sslab.paths import REPO_ROOT

pytestmark = pytest.mark.vm


def oracle(tmp_path, *scenarios):
    env = {**os.environ, "SSLAB_RESULTS": str(tmp_path)}
    for var in ("SSLAB_KERNEL_SOURCE", "SSLAB_KERNEL_PATCHES", "SSLAB_MODULES"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "sslab", "oracle", *scenarios], capture_output=True, text=True,
                         cwd=REPO_ROOT, env=env, timeout=3600)
    written = (tmp_path / "oracle" / "latest").resolve() / "oracle.json"
    assert written.exists(), f"no oracle.json (exit {res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    record = json.loads(written.read_text())
    return res, record["flows"]


def test_our_cubic_is_the_kernels_ack_for_ack(tmp_path):
    res, flows = oracle(tmp_path, "e1", "e1-519")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # E1: cubic_ss and cubic_hs (6.1.192's rounds) at 5 and 20 MB; cubic_hs in 5.19's on the patched kernel.
    assert [(f["scenario"], f["cc_ours"], f["cc_kernel"]) for f in flows] == [
        ("oracle-e1", "cubic_ss", "cubic"), ("oracle-e1", "cubic_ss", "cubic"),
        ("oracle-e1", "cubic_hs", "cubic"), ("oracle-e1", "cubic_hs", "cubic"),
        ("oracle-e1-519", "cubic_hs", "cubic"), ("oracle-e1-519", "cubic_hs", "cubic")]
    for f in flows:
        assert f["identical"], f
        assert f["acks"] > 3000 and f["packets"] > 6000
    # The 20 MB runs lose packets, recover and run in congestion avoidance to the end: every ACK of it
    # compared, and the same loss on both sides.
    big = [f for f in flows if f["run"].endswith("20MB-r0")]
    assert all(f["lost"][0] == f["lost"][1] > 0 for f in big if f["cc_ours"] == "cubic_ss")
    assert all(f["acks"] > 9000 for f in big)


def test_a_hystart_that_never_tests_is_found_different(tmp_path):
    res, flows = oracle(tmp_path, str(REPO_ROOT / "tests/data/oracle-mismatch.yaml"))
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]
    (f,) = flows
    assert not f["identical"]
    # The first difference is the kernel's HyStart leaving slow start: its ssthresh becomes finite
    # where ours stays infinite; every ACK before it was the same.
    diff = f["ack_difference"]
    assert "ssthresh" in diff["fields"] and diff["fields"]["ssthresh"]["ours"] == 2147483647
    assert diff["fields"]["ssthresh"]["kernel"] < 2147483647 and diff["index"] > 100
