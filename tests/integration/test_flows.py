"""Several flows in one run: start times, iperf3 for a timed flow, two RTTs."""

import json
import os
import subprocess
import sys

import pytest

from sslab.paths import REPO_ROOT
from sslab.records import read_runs_index

pytestmark = pytest.mark.vm


def test_two_flows_with_iperf3_and_a_late_start(tmp_path, image):
    env = {**os.environ, "SSLAB_RESULTS": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "sslab", "startup", "--kind", "flows", "--scenario",
                          str(REPO_ROOT / "tests/data/two-flows.yaml")],
                         capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=900)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    run_dir = (tmp_path / "flows" / "latest").resolve()
    fid = json.loads((run_dir / "job/out/fidelity.json").read_text())
    assert abs(fid["rtt"]["measured_ms"]["1"] - 40) < 1 and abs(fid["rtt"]["measured_ms"]["2"] - 80) < 1
    assert abs(fid["rate"]["measured_mbit"] - 20) < 1
    (tag,) = [e["tag"] for e in read_runs_index(run_dir / "job/out/runs.json")]
    run = json.loads((run_dir / "job/out/runs" / tag / "run.json").read_text())
    big, small = run["flows"]
    assert big["iperf3"] and big["iperf3"]["cc"] == "cubic"
    # the iperf3 flow shares the bottleneck with the other one for a while
    assert 8 < big["iperf3"]["receiver_mbit"] <= 20.5
    assert abs(big["fct_s"] - 6) < 1.5
    assert small["cc_used"] == "cubic_suss" and small["bytes_received"] == 1_000_000
    assert 1.8 < small["started_s"] < 2.8
    # The server's timing (the per-ACK trace's): its first segment leaves when the handshake's last
    # ACK arrives, 1.5 RTTs (120 ms) after the client's connect() plus what the SYN-ACK queued; its
    # last ACK arrives half an RTT after the client's last byte.  So one RTT (80 ms) less than the
    # client's, and at most the queue (100 frames at 20 Mbit/s: 61 ms) less again.
    assert small["fct_s"] - 0.080 - 0.062 <= small["server_fct_s"] <= small["fct_s"] - 0.080 + 0.003, small
    assert any(e["type"] == "new_round" for e in small["events"])
    assert run["bottleneck_backlog"] and max(b[1] for b in run["bottleneck_backlog"]) <= 100
