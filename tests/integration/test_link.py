"""A varying link on the real UML guest: the replayed trace's rate is what the bottleneck delivers,
the hop's slots make bursts and add their delay, and a deep buffer holds a deep queue."""

import json
import statistics

import pytest
import yaml

from sslab.analysis.link import rate_series
from sslab.records import read_runs_index
from sslab.scenario.traces import OPPORTUNITY_FRAME_BYTES, write_mahimahi

from .helpers import sslab

pytestmark = pytest.mark.vm
#: The trace: 20 Mbit/s for 0.5 s, then 60 Mbit/s for 0.5 s, repeating (whole frames per 10 ms bin).
LOW, HIGH = 17 * OPPORTUNITY_FRAME_BYTES * 8 / 10e-3 / 1e6, 50 * OPPORTUNITY_FRAME_BYTES * 8 / 10e-3 / 1e6


@pytest.fixture(scope="module")
def link_run(tmp_path_factory, image):
    d = tmp_path_factory.mktemp("link")
    trace = d / "step.mahi"
    trace.write_text(write_mahimahi([LOW] * 50 + [HIGH] * 50, 10))
    scenario = {
        "name": "link-replay", "topology": {"kind": "dumbbell", "pairs": 1},
        "bottleneck": {"buffer": {"packets": 400},
                       "link": {"kind": "wifi", "trace": str(trace)}},
        "pairs": [{"rtt": "20ms"}],
        "cases": [{"name": "long", "flows": [{"pair": 1, "cc": "cubic", "duration": "4s"}]}],
        "repetitions": 1, "variation": {"trace_offset": 0},
        # The router's every interface too: the queue the FIFO counts, checked against the capture.
        "capture": {"pcap": True, "snaplen": 96, "traces": False, "router": True},
    }
    (d / "s.yaml").write_text(yaml.safe_dump(scenario))
    results = d / "results"
    res = sslab(["startup", "--scenario", str(d / "s.yaml")], results, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (results / "startup" / "latest").resolve()
    tag = read_runs_index(run_dir / "job/out/runs.json")[0]["tag"]
    run = json.loads((run_dir / "job/out/runs" / tag / "run.json").read_text())
    fidelity = json.loads((run_dir / "job/out/fidelity.json").read_text())
    return run, fidelity, run_dir


def test_the_bottleneck_delivers_the_replayed_trace(link_run):
    run, _, _ = link_run
    f = run["link_fidelity"]
    assert f["replay_error"] is None
    assert f["busy_bins"] >= 250, f          # the queue never ran dry for most of the 400 bins
    assert f["delivered_over_allowed"] == pytest.approx(1.0, abs=0.01), f
    assert f["bin_error_frames_p95_abs"] <= 1.5, f  # per bin: within a frame or so
    assert f["ok"] and run["fidelity"]["link_ok"]
    # Both levels, each on its own: what left the bottleneck in the busy bins of each.
    series = rate_series(run["link_replay"])
    rows = run["link_replay"]["rows"]
    busy = [s for s, (a, b) in zip(series, zip(rows, rows[1:])) if a[3] > 0 and b[3] > 0]
    for level in (LOW, HIGH):
        got = [s[2] for s in busy if s[1] == pytest.approx(level)]
        assert len(got) > 60
        assert statistics.fmean(got) == pytest.approx(level, rel=0.01)


def test_the_rate_changes_every_bin_on_time(link_run):
    run, _, _ = link_run
    rows = run["link_replay"]["rows"]
    t = [r[0] for r in rows]
    # Under virtual time each change happens at its boundary (10 ms apart) to within 0.1 ms.
    gaps = [b - a for a, b in zip(t, t[1:])]
    assert statistics.median(gaps) == pytest.approx(0.010, abs=1e-4)
    assert max(abs(g - 0.010) for g in gaps) < 1e-3
    levels = [r[1] for r in rows[:100]]
    assert levels[:50] == [pytest.approx(LOW)] * 50 and levels[50:100] == [pytest.approx(HIGH)] * 50


def test_the_hop_sends_bursts_and_holds_a_deep_queue(link_run):
    run, fidelity, _ = link_run
    b = run["link_bursts"]
    # Slots of 2-4 ms at 20-60 Mbit/s hold about 3-20 frames each.
    assert b["mean"] >= 3 and b["max"] <= 64 and b["share_in_bursts_of_2_plus"] > 0.9, b
    assert run["link_fidelity"]["queue_max_pkts"] >= 200
    # The idle RTT: 20 ms plus a slot's wait each way (2-4 ms down, 0.5-1.5 ms up).
    lo, hi = fidelity["rtt"]["slot_wait_ms"]
    assert (lo, hi) == (2.5, 5.5)
    assert 20 + lo <= fidelity["rtt"]["measured_ms"]["1"] <= 20 + hi + 0.1
    assert fidelity["rtt"]["ok"] and run["fidelity"]["base_rtt_ok"]


def test_the_htb_shapers_fifo_counts_the_queues_peak_the_router_capture_sees(link_run):
    """Under the HTB shaper the FIFO counts its own peak (our patch 0008): the most packets the
    router's capture sees held at once, to the packet, with the drops; the readings at the trace's
    bins' ends and every half second are below it or at it."""
    from sslab.analysis.queuecheck import check_runs
    run, _, run_dir = link_run
    [(tag, c)] = check_runs(run_dir)
    assert run["router_pcap_dropped_by_kernel"] == 0
    assert run["bottleneck"]["peak_pkts"] is not None and run["bottleneck"]["peak_bytes"] > 0
    assert c.held.peak_pkts == run["bottleneck"]["peak_pkts"] == c.qdisc_peak_pkts, c.held
    assert c.held.dropped == run["bottleneck"]["drops"] and c.queue_agrees
    assert 200 <= c.held.peak_pkts <= 400
    assert run["link_fidelity"]["queue_max_pkts"] <= c.held.peak_pkts
    assert c.readings_max_pkts is None or c.readings_max_pkts <= c.held.peak_pkts
