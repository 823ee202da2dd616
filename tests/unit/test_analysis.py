"""Analysis of archived runs: pcaps, traces and statistics, on data made here."""

import gzip
import math

import dpkt
import pytest

from sslab.analysis.pcap import analyse_pcap
from sslab.analysis.stats import describe, t95
from sslab.analysis.traces import parse, slow_start_exit, trace_series


SERVER, CLIENT = b"\x0a\x01\x01\x02", b"\x0a\x02\x01\x02"


def frame(src, dst, sport, dport, seq, flags, payload=0):
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, flags=flags, off=5)
    ip = dpkt.ip.IP(src=src, dst=dst, p=dpkt.ip.IP_PROTO_TCP, data=tcp)
    tcp.data = b"\0" * payload
    ip.len = 20 + 20 + payload
    return bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, data=ip))


def test_pcap_fct_and_retransmissions(tmp_path):
    path = tmp_path / "flow.pcap"
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f)
        w.writepkt(frame(CLIENT, SERVER, 40000, 5201, 1000, dpkt.tcp.TH_SYN), ts=10.0)
        seq = 0xFFFFF000  # wraps during the flow
        for i in range(5):
            w.writepkt(frame(SERVER, CLIENT, 5201, 40000, (seq + i * 1448) & 0xFFFFFFFF, dpkt.tcp.TH_ACK, 1448),
                       ts=10.1 + i * 0.01)
        # a retransmission of the third segment, after the last new one
        w.writepkt(frame(SERVER, CLIENT, 5201, 40000, (seq + 2 * 1448) & 0xFFFFFFFF, dpkt.tcp.TH_ACK, 1448), ts=10.3)
        # another flow's data is ignored
        w.writepkt(frame(SERVER, CLIENT, 5202, 40001, 7, dpkt.tcp.TH_ACK, 1448), ts=11.0)
    pf = analyse_pcap(path, 5201)
    assert pf.syn_ts == pytest.approx(10.0)
    assert pf.last_new_data_ts == pytest.approx(10.14)
    assert pf.data_segments == 6 and pf.retransmitted_segments == 1
    assert sum(pf.new_bytes_by_bin.values()) == 5 * 1448


def test_describe_and_ci():
    d = describe([1, 2, 3, 4, 5])
    assert d["median"] == 3 and d["mean"] == 3
    half = 2.776 * math.sqrt(2.5) / math.sqrt(5)  # t(0.975, 4) from a printed table
    assert d["ci95"] == pytest.approx([3 - half, 3 + half], abs=1e-3)
    assert describe([7])["ci95"] is None and describe([])["n"] == 0
    # Printed tables give 2.776 (4), 2.074 (22), 1.962 (1000), 12.706 (1).
    assert t95(4) == pytest.approx(2.776, abs=5e-4) and t95(22) == pytest.approx(2.074, abs=5e-4)
    assert t95(1000) == pytest.approx(1.962, abs=5e-4) and t95(1) == pytest.approx(12.706, abs=5e-4)
    assert math.isnan(t95(0))


PROBE = ("          <idle>-0       [000] ..s2.    {ts:.6f}: tcp_probe: family=AF_INET src=10.1.1.2:5201 "
         "dest=10.2.1.2:40000 mark=0x0 data_len=0 snd_nxt={nxt:#x} snd_una={una:#x} snd_cwnd={cwnd} "
         "ssthresh={ss} snd_wnd=1000000 srtt=100000 rcv_wnd=65280 sock_cookie=2")


def test_trace_parse_and_slow_start_exit_across_an_undo(tmp_path):
    inf = 2147483647
    rows = [(1.0, 10, inf), (1.1, 20, inf), (1.2, 52, 36), (1.21, 53, inf), (1.3, 400, inf), (1.4, 280, 280)]
    text = "# tracer: nop\n" + "\n".join(
        PROBE.format(ts=t, nxt=0x1000 + c * 1448, una=0x1000, cwnd=c, ss=s) for t, c, s in rows)
    recs = parse(text)
    assert len(recs) == 6 and recs[0].int("snd_cwnd") == 10 and recs[0].int("snd_nxt") == 0x1000 + 14480
    ss = slow_start_exit(recs)
    assert ss == {"exit_cwnd": 400, "ssthresh": 280, "exit_time_s": pytest.approx(0.4), "undone_reductions": 1}
    path = tmp_path / "t.trace.gz"
    with gzip.open(path, "wt") as f:
        f.write(text)
    s = trace_series(path, 5201)
    assert s["cwnd"] == [10, 20, 52, 53, 400, 280] and s["in_flight_source"] == "outstanding"
    assert s["in_flight"][1] == pytest.approx(20)
