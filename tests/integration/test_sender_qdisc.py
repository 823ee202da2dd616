"""The senders' own qdisc on the real UML guest (SENDER_QDISC=, issue 59's causes).

A CUBIC flow on a 40 ms path through a 20 Mbit/s bottleneck (a frame 0.6056 ms), its second round:
segments 11-30, sent as the initial window's ACKs return.  Without a qdisc on the sender (the veth's
default) CUBIC does not pace: each ACK releases two segments at once, they queue at the bottleneck
and leave it a frame time apart.  fq paces every flow at the rate TCP sets, in slow start twice cwnd
per srtt: with cwnd at 19-20 and srtt 40-41.5 ms, a segment every 1.0-1.09 ms, slower than the
bottleneck, so they leave it as fq sent them.  (The initial window itself goes unpaced either way:
fq marks a socket as paced only when it first dequeues one of its packets.)
"""

import statistics

import pytest

from sslab.analysis.pcap import flow_packets, stored_capture

from .helpers import one_cubic_flow

pytestmark = pytest.mark.vm
FRAME_US = 1514 * 8 / 20  # at 20 Mbit/s


def second_round_gaps_us(qdisc: str, tmp_path) -> tuple[list[int], list[int]]:
    """The gaps between the initial window's segments and between the second round's, leaving the
    bottleneck (microseconds)."""
    tag_dir, run = one_cubic_flow(tmp_path, f"qdisc-{qdisc}", {"sender_qdisc": qdisc}, "20mbit", 100, "1MB")
    data = [p[0] for p in flow_packets(stored_capture(tag_dir / run["pcap"]), 5201) if p[1] == "s" and p[5] > 0]
    gaps = [b - a for a, b in zip(data, data[1:])]
    return gaps[:9], gaps[10:29]


def test_without_a_qdisc_cubic_leaves_in_bursts_the_bottleneck_spreads(tmp_path, image):
    first, second = second_round_gaps_us("none", tmp_path)
    assert statistics.median(first) == pytest.approx(FRAME_US, abs=5), first
    assert statistics.median(second) == pytest.approx(FRAME_US, abs=5), second


def test_fq_paces_cubic_at_twice_cwnd_per_srtt(tmp_path, image):
    first, second = second_round_gaps_us("fq", tmp_path)
    assert statistics.median(first) == pytest.approx(FRAME_US, abs=5), first
    assert 1000 <= statistics.median(second) <= 1090, second
