"""A delay that varies over time on the hop to the client, on the testbed (UML): each packet's one-way
delay from the bottleneck to the client follows the sine asked for, and no packet overtakes another."""

import json

import pytest

from sslab.analysis.pcap import flow_packets
from sslab.paths import REPO_ROOT

from .helpers import sslab

pytestmark = pytest.mark.vm
VARYING = REPO_ROOT / "tests/data/varying-delay.yaml"


def test_the_clients_delay_follows_its_sine_and_keeps_the_packets_order(tmp_path):
    """20 ms of round trip, 40 ms more one way at the peak: from the bottleneck's capture to the
    client's, a data segment takes 10 ms at the trough and 50 ms at the peak (its serialisation on the
    fast line, 0.12 us, aside); the flow meets both, and the client sees the bottleneck's order."""
    res = sslab(["run", "startup", "--scenario", str(VARYING)], tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (tmp_path / "startup" / "latest").resolve()
    [rd] = list((run_dir / "job/out/runs").iterdir())
    run = json.loads((rd / "run.json").read_text())
    replay = run["delay_replay"]
    assert replay["error"] is None and replay["bin_ms"] == 10
    assert {r[1] for r in replay["rows"]} >= {0.0, 40.0}     # trough and peak both set during the flow
    port = run["flows"][0]["port"]
    sent = [(p[0], p[2], p[5]) for p in flow_packets(rd / run["pcap"], port) if p[1] == "s" and p[5]]
    got = [(p[0], p[2], p[5]) for p in flow_packets(rd / run["client_pcap"], port) if p[1] == "s" and p[5]]
    assert [s[1:] for s in sent] == [g[1:] for g in got]      # every segment, in the bottleneck's order
    one_way_ms = [(g[0] - s[0]) / 1e3 for s, g in zip(sent, got)]
    assert 9.9 <= min(one_way_ms) <= 10.5 and 49.5 <= max(one_way_ms) <= 50.5, (min(one_way_ms), max(one_way_ms))
    assert run["bottleneck"]["drops"] == 0
