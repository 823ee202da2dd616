"""The queue's peak read over rtnetlink (sslab.guest.qdiscpeak): messages built by hand as the kernel
lays them out, parsed back."""

import struct

from sslab.guest import qdiscpeak as qp
from sslab.guest.dumbbell import HtbShaper
from sslab.records import Queue, Rate


def rtattr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def qdisc_message(ifindex: int, kind: str, parent: int, app: bytes | None, seq: int = 1) -> bytes:
    tcm = struct.pack("=BBHiIII", 0, 0, 0, ifindex, 0x10000, parent, 1)
    # TCA_STATS2 nests TCA_STATS_BASIC (1) and TCA_STATS_QUEUE (3) before the application's (4).
    stats = rtattr(1, struct.pack("=QI", 123456, 89) + b"\0" * 4) + rtattr(3, struct.pack("=5I", 0, 9000, 3, 0, 0))
    if app is not None:
        stats += rtattr(qp.TCA_STATS_APP, app)
    body = tcm + rtattr(qp.TCA_KIND, kind.encode() + b"\0") + rtattr(2, b"\x01" * 7) + rtattr(qp.TCA_STATS2 | 0x8000, stats)
    return struct.pack("=IHHII", 16 + len(body), qp.RTM_NEWQDISC, 2, seq, 0) + body


def test_a_patched_netems_peak_is_read_from_its_application_statistics():
    # 412 packets, 617,176 bytes (412 frames of 1,498 bytes) at most; the TCA_STATS2 attribute carries
    # NLA_F_NESTED, as the kernel sets it.
    data = (qdisc_message(7, "netem", qp.TC_H_ROOT, struct.pack("=II", 412, 617_176))
            + qdisc_message(7, "netem", 0x10001, struct.pack("=II", 3, 4500))      # a child, not the root
            + qdisc_message(8, "noqueue", qp.TC_H_ROOT, None)                        # no application stats
            + qdisc_message(9, "tbf", qp.TC_H_ROOT, struct.pack("=I", 5))          # another kind's, another size
            + struct.pack("=IHHII", 20, qp.NLMSG_DONE, 2, 1, 0) + b"\0" * 4)
    msgs = qp.messages(data)
    assert [k for k, _ in msgs] == [qp.RTM_NEWQDISC] * 4 + [qp.NLMSG_DONE]
    peaks = [qp.parse_qdisc(p) for _, p in msgs[:4]]
    assert peaks[0] == qp.QdiscPeak(7, "netem", 0x10000, qp.TC_H_ROOT, 412, 617_176)
    assert peaks[1].parent == 0x10001 and peaks[1].packets == 3
    assert peaks[2] is None and peaks[3] is None


def test_the_dump_request_asks_for_every_qdisc():
    req = qp.dump_request(seq=5)
    length, kind, flags, seq, pid = struct.unpack_from("=IHHII", req)
    assert (length, kind, seq, pid) == (36, qp.RTM_GETQDISC, 5, 0) and len(req) == 36
    assert flags == qp.NLM_F_REQUEST | qp.NLM_F_DUMP == 0x301


def test_attributes_stop_at_a_truncated_one():
    assert qp.attributes(rtattr(1, b"abc") + struct.pack("=HH", 2, 9)) == {1: b"abc"}


def test_the_htb_shapers_fifo_is_found_under_its_class():
    # HTB's class 1:1 is the kernel's 0x00010001: a pfifo's peak there (patch 0008) is the bottleneck's
    # under the HTB shaper; the root's HTB reports none of its own.
    assert qp.tc_handle(1, 1) == 0x10001 and qp.tc_handle(*HtbShaper.FIFO_PARENT) == 0x10001
    lines = HtbShaper(Rate(50), 15140, Queue(1000)).tc("r1-eth2")
    assert lines[-1] == "qdisc add dev r1-eth2 parent 1:1 handle 10: pfifo limit 1000"
    data = qdisc_message(4, "htb", qp.TC_H_ROOT, None) + qdisc_message(4, "pfifo", 0x10001, struct.pack("=II", 1000, 1_514_000))
    [htb, fifo] = [qp.parse_qdisc(p) for _, p in qp.messages(data)]
    assert htb is None and (fifo.kind, fifo.parent, fifo.packets, fifo.bytes) == ("pfifo", 0x10001, 1000, 1_514_000)
