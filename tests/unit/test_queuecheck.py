"""The bottleneck's queue counted from a capture of the router's interfaces (sslab.analysis.queuecheck),
on captures written here packet by packet, with the counts worked by hand."""

import gzip
import struct

import pytest

from sslab.analysis.queuecheck import (RouterPacket, bottleneck_view, count_held, delivery_bins, linktype,
                                       router_packets)

SERVER = 5201
CLIENT = 40000


def _ip_tcp(sport: int, dport: int, seq: int, ip_id: int, payload: int, flags: int = 0x10) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 20 + payload, ip_id, 0x4000, 64, 6, 0,
                     bytes([10, 0, 1, 1]), bytes([10, 0, 2, 1]))
    return ip + tcp  # headers only, as a capture of snaplen 96 keeps them


def _sll2(outgoing: bool) -> bytes:
    return struct.pack("!HHIHBB8s", 0x0800, 0, 3, 1, 4 if outgoing else 0, 6, b"\0" * 8)


def _sll(outgoing: bool) -> bytes:
    return struct.pack("!HHH8sH", 4 if outgoing else 0, 1, 6, b"\0" * 8, 0x0800)


def write_cooked(path, packets, link: int = 276, packed: bool = False):
    """A microsecond pcap of Linux cooked frames (@link 276: version 2, 113: version 1)."""
    head = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 96, link)
    body = b""
    for ts, outgoing, sport, dport, seq, ip_id, payload in packets:
        frame = (_sll2 if link == 276 else _sll)(outgoing) + _ip_tcp(sport, dport, seq, ip_id, payload)
        body += struct.pack("<IIII", int(ts), round((ts % 1) * 1e6), len(frame), len(frame) + payload) + frame
    (gzip.open if packed else open)(path, "wb").write(head + body)


# In order: A, B and C reach the router; C finds the queue full (it never leaves); A leaves; D
# arrives; B and D leave; C is sent again (the same sequence number, the next IP id) and passes.
# A client's ACK crosses too.  Held: 1, 2, (C dropped), 1, 2, 1, 0, 1, 0: the peak is 2, first at B.
EVENTS = [
    (0.010, False, SERVER, CLIENT, 0, 1, 1000),      # A in
    (0.011, False, SERVER, CLIENT, 1000, 2, 1000),   # B in
    (0.012, False, SERVER, CLIENT, 2000, 3, 1000),   # C in: dropped
    (0.030, True, SERVER, CLIENT, 0, 1, 1000),       # A out
    (0.031, False, CLIENT, SERVER, 1, 9, 0),         # the client's ACK in
    (0.032, False, SERVER, CLIENT, 3000, 4, 1000),   # D in
    (0.050, True, SERVER, CLIENT, 1000, 2, 1000),    # B out
    (0.070, True, SERVER, CLIENT, 3000, 4, 1000),    # D out
    (0.120, False, SERVER, CLIENT, 2000, 5, 1000),   # C again in
    (0.140, True, SERVER, CLIENT, 2000, 5, 1000),    # C again out
]


@pytest.mark.parametrize("link", [276, 113])
def test_cooked_captures_are_read_packet_by_packet_with_their_direction(tmp_path, link):
    path = tmp_path / "flow.router.pcap"
    write_cooked(path, EVENTS, link)
    assert linktype(path) == link
    got = list(router_packets(path))
    assert [(p.outgoing, p.sport, p.seq, p.ip_id, p.payload) for p in got] == \
        [(o, s, q, i, n) for _, o, s, _, q, i, n in EVENTS]
    assert got[0].ts == pytest.approx(0.010) and got[0].ip_len == 1040


def test_a_gzipped_capture_is_read_the_same(tmp_path):
    write_cooked(tmp_path / "a.pcap", EVENTS)
    write_cooked(tmp_path / "b.pcap.gz", EVENTS, packed=True)
    assert list(router_packets(tmp_path / "a.pcap")) == list(router_packets(tmp_path / "b.pcap"))


def test_a_capture_of_one_interface_is_refused(tmp_path):
    path = tmp_path / "flow.pcap"
    path.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 96, 1))
    with pytest.raises(ValueError, match="link type 1, not a capture of every interface"):
        list(router_packets(path))


def _packets():
    return [RouterPacket(ts, o, s, d, q, 0x10, n, i, 40 + n) for ts, o, s, d, q, i, n in EVENTS]


def test_the_queue_held_counts_arrivals_that_leave_and_drops_those_that_never_do():
    held = count_held(_packets(), {SERVER})
    assert (held.peak_pkts, held.peak_ts) == (2, 0.011)
    assert (held.arrivals, held.departures, held.dropped) == (5, 4, 1)


def test_a_retransmission_is_another_packet_by_its_ip_id():
    """Known by its sequence number alone, the dropped C would take the place its resending frees,
    and the queue would read 3 at C's arrival."""
    same_id = [p if p.seq != 2000 else RouterPacket(p.ts, p.outgoing, p.sport, p.dport, p.seq, p.flags, p.payload,
                                                    3, p.ip_len) for p in _packets()]
    assert count_held(same_id, {SERVER}).peak_pkts == 3
    assert count_held(_packets(), {SERVER}).peak_pkts == 2


def test_delivery_is_what_left_towards_the_clients_per_bin_in_frame_bytes():
    # A, B, D leave in 0-0.1 s, C in 0.1-0.2 s: 1040 + 14 bytes each.
    assert delivery_bins(_packets(), {SERVER}, 0.1) == {0: 3 * 1054, 1: 1054}


def test_the_bottleneck_sees_the_clients_arrivals_and_the_servers_departures():
    seen = [(ts, key[0], key[2]) for ts, key, _ in bottleneck_view(_packets(), {SERVER})]
    assert seen == [(0.030, SERVER, 0), (0.031, CLIENT, 1), (0.050, SERVER, 1000), (0.070, SERVER, 3000),
                    (0.140, SERVER, 2000)]


def _check(qdisc_peak, qdisc_drops, allows=50.12):
    from sslab.analysis.queuecheck import HeldCount, QueueCheck
    return QueueCheck(held=HeldCount(peak_pkts=2, arrivals=5, departures=4, dropped=1), qdisc_peak_pkts=qdisc_peak,
                      qdisc_drops=qdisc_drops, readings_max_pkts=0, buffer_pkts=2, link_mbit=50.0, bin_s=0.1,
                      busiest_bin_mbit=50.02, bin_allows_mbit=allows)


def test_the_qdiscs_count_and_drops_are_held_to_the_captures():
    assert _check(2, 1).queue_agrees
    assert not _check(3, 1).queue_agrees and not _check(2, 0).queue_agrees
    # The HTB shaper counts no peak: the capture's is the count, the drops still compared.
    assert _check(None, 1).queue_agrees and not _check(None, 2).queue_agrees
    assert _check(2, 1).delivery_within_link and not _check(2, 1, allows=50.0).delivery_within_link
    assert _check(2, 1, allows=None).delivery_within_link  # a varying link: no one rate


def test_a_router_capture_needs_the_bottlenecks_beside_it():
    from sslab.scenario.model import CaptureSpec
    assert CaptureSpec(router=True).router
    with pytest.raises(ValueError, match="needs pcap: true"):
        CaptureSpec(router=True, pcap=False)
