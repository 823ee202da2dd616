"""runners/rxcost.py's analysis: data-to-ACK delay and data spacing, on a capture built by hand."""

import struct
import sys

import dpkt

from sslab.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "runners"))
import rxcost  # noqa: E402


def _frame(sport: int, dport: int, seq: int, ack: int, payload: int) -> bytes:
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=dpkt.tcp.TH_ACK, off=8,
                       opts=b"\x01\x01\x08\x0a" + bytes(8))  # NOP NOP timestamps: a 32-byte header
    tcp.data = b"x" * payload
    ip = dpkt.ip.IP(src=b"\x0a\x4d\x00\x01", dst=b"\x0a\x4d\x00\x02", p=dpkt.ip.IP_PROTO_TCP, data=tcp)
    ip.len = 20 + 32 + payload
    eth = dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
    return bytes(eth)[:96]  # cut as tcpdump -s 96 does: the payload's length must come from the IP header


def _write_nano_pcap(path, records: list[tuple[int, bytes]]) -> None:
    """A nanosecond pcap (a float timestamp would lose the nanoseconds this test is about)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 96, 1))
        for ts_ns, frame in records:
            f.write(struct.pack("<IIII", ts_ns // 10**9, ts_ns % 10**9, len(frame), len(frame) + 1448))
            f.write(frame)


def test_each_segment_is_timed_to_its_own_ack(tmp_path):
    # One train of 3 segments, 2.5 us apart; the receiver's ACKs leave 1.2, 1.4 and 1.6 us after them.
    # A second flow with only 2 segments is not a whole train and is left out.
    pcap = tmp_path / "t.pcap"
    t0 = 1_700_000_000 * 10**9
    records = []
    for i, rx_ns in enumerate((1200, 1400, 1600)):
        seq = 1000 + i * 1448
        records.append((t0 + i * 2500, _frame(40000, rxcost.PORT, seq, 1, 1448)))
        records.append((t0 + i * 2500 + rx_ns, _frame(rxcost.PORT, 40000, 1, seq + 1448, 0)))
    for i in range(2):
        records.append((t0 + 10**6 + i * 3000, _frame(40001, rxcost.PORT, 5000 + i * 1448, 1, 1448)))
    _write_nano_pcap(pcap, records)
    found = rxcost.analyse(pcap, burst=3)
    assert found["trains"] == 1 and found["segments"] == 3
    assert found["rx_us"]["median"] == 1.4 and found["rx_us"]["n"] == 3
    assert found["period_us"]["median"] == 2.5 and found["period_us"]["n"] == 2
