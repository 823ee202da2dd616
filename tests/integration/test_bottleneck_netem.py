"""The bottleneck's netem arrangement on the real UML guest (issue 59's calibration, stage 2).

One CUBIC flow fills a 1 BDP buffer on a 40 ms path at 20 Mbit/s (a frame 0.6056 ms; the buffer
66 frames, 40 ms of them), beside a second, idle pair at 80 ms.  With the delay lines apart from
the queue the flow's RTT rises to about twice the base one (40 ms queued on 40 ms of path).  With
one netem that also holds the delay every pair shares (half the smallest RTT: 20 ms on the data
side), the limit counts the frames in that delay too and a frame waits the delay or the queue,
whichever is longer: at most 66 frames, 40 ms, in the netem, 20 ms back, so the RTT never passes
about 1.5 times the base one.  With the whole smallest RTT in it ("one-rtt": 40 ms, 66 frames at the
link's rate) the delay alone fills the limit at the link's rate, and a burst let in where there is room
waits behind the frames before it: measured 1.40 times the base one (2 Dec 2026), under what "apart"
adds.  Every arrangement gives each pair its configured idle RTT.
"""

import pytest
import yaml

from sslab.analysis.traces import read_trace

from .helpers import startup_runs

pytestmark = pytest.mark.vm
BASE_MS, OTHER_MS, BUFFER_PKTS = 40, 80, 66


def scenario(netem: str) -> dict:
    return {
        "name": f"netem-{netem}", "topology": {"kind": "dumbbell", "pairs": 2},
        "bottleneck": {"rate": "20mbit", "buffer": {"packets": BUFFER_PKTS}, "netem": netem},
        "pairs": [{"rtt": f"{BASE_MS}ms"}, {"rtt": f"{OTHER_MS}ms"}],
        "cases": [{"name": "fill", "flows": [{"pair": 1, "cc": "cubic", "duration": "6s"}]}],
        "repetitions": 1, "capture": {"pcap": False, "snaplen": 96, "traces": True},
    }


def run_with(netem: str, tmp_path) -> tuple[dict, list[float], dict]:
    path = tmp_path / f"{netem}.yaml"
    path.write_text(yaml.safe_dump(scenario(netem)))
    [(tag_dir, run)] = startup_runs(path, tmp_path / netem)
    import json
    fidelity = json.loads((tag_dir.parent.parent / "fidelity.json").read_text())
    srtt_ms = [r.int("srtt") / 1000 for r in read_trace(tag_dir / run["trace"]) if r.event == "tcp_probe"]
    return run, srtt_ms, fidelity


@pytest.mark.parametrize("netem, lo, hi", [("apart", 1.8, 2.1), ("one", 1.35, 1.6), ("one-rtt", 1.0, 1.6)])
def test_where_the_delay_sits_sets_what_a_full_buffer_adds(netem, lo, hi, tmp_path, image):
    run, srtt_ms, fidelity = run_with(netem, tmp_path)
    measured = fidelity["rtt"]["measured_ms"]
    assert measured["1"] == pytest.approx(BASE_MS, abs=1) and measured["2"] == pytest.approx(OTHER_MS, abs=1)
    assert run["bottleneck"]["drops"] > 0, run["bottleneck"]   # the buffer did fill
    assert lo * BASE_MS <= max(srtt_ms) <= hi * BASE_MS, (netem, max(srtt_ms))
