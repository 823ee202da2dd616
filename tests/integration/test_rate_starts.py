"""Astart and Blitzstart on the real UML guest: the module's numbers against the wire's."""

import pytest

from sslab.analysis.pcap import tcp_segments
from sslab.paths import REPO_ROOT

from .helpers import startup_runs

pytestmark = pytest.mark.vm
SCENARIO = REPO_ROOT / "tests/data/rate-starts.yaml"
MSS = 1448
#: 100 Mbit/s of 1514-byte frames carrying 1448 bytes each, over 100 ms: 826 packets.
BDP_PKTS = 100e6 / 8 / 1514 * 0.1


@pytest.fixture(scope="module")
def rate_runs(tmp_path_factory, image):
    runs = startup_runs(SCENARIO, tmp_path_factory.mktemp("results"))
    # In the file's order, one boot: the unhinted Blitzstart after the hinted one.
    assert [run["run"]["case"] for _, run in runs] == ["astart", "blitz", "std", "blitz-unhinted"]
    return {run["run"]["case"]: (tag_dir, run) for tag_dir, run in runs}


def events(run: dict, kind: str) -> list[dict]:
    return [{k: int(v) if k in ("a", "b", "c", "rate", "duration_us") else v for k, v in e.items()}
            for e in run["flows"][0]["events"] if e["type"] == kind]


def test_astart_ssthresh_follows_the_eligible_rate_estimate(rate_runs):
    _, run = rate_runs["astart"]
    start = events(run, "start")
    assert start and start[0]["b"] == 32  # the paper's initial ssthresh
    est = events(run, "estimate")
    assert len(est) > 10, "ssthresh was raised a few times at most"
    for e in est:
        # ssthresh = ERE x minRTT / MSS, at that ACK
        assert e["c"] == max(2, e["a"] * e["b"] // 1_000_000 // MSS), e
    assert [e["c"] for e in est] == sorted(e["c"] for e in est)  # only ever raised
    # ERE converges on the bottleneck's payload rate, never far above it ...
    assert max(e["a"] for e in est) <= 1.05 * 100e6 / 8 * MSS / 1514
    # ... so ssthresh ends near the BDP, starting from 32.
    assert 0.8 * BDP_PKTS <= est[-1]["c"] <= 1.05 * BDP_PKTS, est[-1]


def test_blitzstart_first_window_is_hint_times_rtt_and_paced(rate_runs):
    tag_dir, run = rate_runs["blitz"]
    flow = run["flows"][0]
    assert flow["hint_bytes_per_s"] == 2_500_000
    start = [e for e in events(run, "start") if e["c"]]
    assert len(start) == 1, start
    s = start[0]
    assert s["c"] == 2_500_000 and s["a"] == s["b"]  # cwnd = ssthresh: no slow start
    rtt_us = s["duration_us"] / 0.75  # paced over 75% of the handshake's RTT
    assert 100_000 <= rtt_us <= 100_500
    assert s["a"] == 2_500_000 * int(rtt_us) // 1_000_000 // MSS == 172
    assert s["rate"] == pytest.approx(s["a"] * MSS / (s["duration_us"] / 1e6), rel=1e-5)
    # The wire, after the bottleneck: the first window's 172 packets leave over
    # about 75 ms; unpaced they would pass the 100 Mbit/s bottleneck in 21 ms.
    port = flow["port"]
    times, seen = [], set()
    for ts, (sport, _dport, seq, _flags), payload in tcp_segments(tag_dir / "flow.pcap"):
        if sport == port and payload > 0 and seq not in seen:
            seen.add(seq)
            times.append(ts)
            if len(times) == s["a"]:
                break
    span_ms = (times[-1] - times[0]) * 1e3
    unpaced_ms = s["a"] * 1514 * 8 / 100e6 * 1e3
    assert span_ms == pytest.approx(s["duration_us"] / 1e3 * (s["a"] - 1) / s["a"], rel=0.08), span_ms
    assert span_ms > 3 * unpaced_ms
    # Not held back by the receiver's 64 KB first window: the whole window left in round 1.
    assert times[-1] - times[0] < rtt_us / 1e6


def test_the_standard_start_leaves_slow_start_by_hystart(rate_runs):
    # Blitzstart's baseline (Google QUIC's CUBIC): an initial window of 32 and a hybrid slow start with the
    # delay test alone (no ACK train by default), so its slow start ends on the delay test (cause 2) before
    # any loss, not at the first loss.
    _, run = rate_runs["std"]
    start = events(run, "start")
    assert start and start[0]["a"] == 32
    exits = events(run, "exit")
    assert exits and exits[0]["a"] == 2, exits
    losses = [e for e in run["flows"][0]["events"] if e["type"] == "loss"]
    assert not losses or float(losses[0]["ts"]) > float(exits[0]["ts"]), (exits[0], losses[0])


def test_a_flow_without_a_hint_gets_none_after_one_with_a_hint(rate_runs):
    # The traffic tool's server is kept for the boot on one port: the hinted flow's hint (its listener's
    # SO_MAX_PACING_RATE) must not reach the next flow, which the module would pace by it.
    _, run = rate_runs["blitz-unhinted"]
    flow = run["flows"][0]
    assert flow["cc_used"] == "cubic_blitz" and flow["port"] == rate_runs["blitz"][1]["flows"][0]["port"]
    assert not flow.get("hint_bytes_per_s")
    start = events(run, "start")
    assert start and all(e["c"] == 0 for e in start), start
