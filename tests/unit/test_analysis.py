"""Analysis of archived runs: pcaps, traces and statistics, on data made here."""

import gzip
import math
import struct

import dpkt
import numpy as np
import pytest

from sslab.analysis import pcap as pcapmod
from sslab.analysis.pcap import analyse_pcap
from sslab.analysis.stats import describe, t95
from sslab.analysis.traces import (flow_facts, flow_records, parse, records_by_port, slow_start_exit, trace_facts,
                                   trace_series)


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
    # The same series for every congestion control: tcp_probe's cwnd, outstanding and in-order acked.
    assert s["cwnd"] == [10, 20, 52, 53, 400, 280] and s["source"] == "tcp_probe"
    assert s["outstanding"][1] == pytest.approx(20) and s["acked_mb"] == [0.0] * 6
    assert s["t"] == pytest.approx([0, 0.1, 0.2, 0.21, 0.3, 0.4])
    # The smoothed RTT, from tcp_probe's srtt in microseconds.
    assert s["srtt_ms"] == [100.0] * 6


def test_server_fct_runs_from_the_first_segment_to_the_last_advancing_ack():
    """The first ACK at 1.0 s carries the handshake's srtt (100 ms): the first segment left at 0.9 s.
    snd_una last advances at 1.4 s, across the sequence space's wrap; the FIN's record at 1.5 s moves
    nothing.  0.9 s to 1.4 s: 0.5 s."""
    start = 0xFFFFF000
    rows = [(1.0, start), (1.2, start + 2 * 1448), (1.4, (start + 9 * 1448) & 0xFFFFFFFF),
            (1.5, (start + 9 * 1448) & 0xFFFFFFFF)]
    text = "\n".join(PROBE.format(ts=t, nxt=una, una=una, cwnd=10, ss=1) for t, una in rows)
    [facts] = trace_facts(text, [5201]).values()
    assert facts["server_fct_s"] == pytest.approx(0.5)
    assert flow_facts(parse(text))["server_fct_s"] == pytest.approx(0.5)


def _reference_records(path):
    with open(path, "rb") as f:
        return list(dpkt.pcap.Reader(f))


@pytest.mark.parametrize("endian", ["little", "big"])
def test_pcap_records_match_dpkt_across_chunks_and_a_cut_last_record(tmp_path, monkeypatch, endian):
    """Our record reader gives dpkt's (timestamp, bytes) exactly: records that straddle the
    reader's chunks, both byte orders, and a last record cut short by the file's end."""
    path = tmp_path / "flow.pcap"
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, snaplen=96)
        for i in range(50):
            w.writepkt(frame(SERVER, CLIENT, 5201, 40000, i * 1448, dpkt.tcp.TH_ACK, 1448)[:54 + i % 7],
                       ts=5.001471 + i * 0.000731)
    raw = path.read_bytes()
    if endian == "big":  # dpkt writes the host's order: the headers rewritten big-endian
        out = bytearray(struct.pack(">IHHiIII", 0xA1B2C3D4, *struct.unpack_from("<HHiIII", raw, 4)))
        off = 24
        while off < len(raw):
            sec, usec, cap, wire = struct.unpack_from("<IIII", raw, off)
            out += struct.pack(">IIII", sec, usec, cap, wire) + raw[off + 16:off + 16 + cap]
            off += 16 + cap
        raw = bytes(out)
    path.write_bytes(raw[:-20])  # the last record loses 20 of its bytes
    monkeypatch.setattr(pcapmod, "_CHUNK_BYTES", 37)  # not a multiple of any record's length
    with open(path, "rb") as f:
        ours = list(pcapmod.pcap_records(f))
    assert ours == _reference_records(path)
    assert len(ours) == 50 and len(ours[-1][1]) == 54 + 49 % 7 - 20
    # usec / 1e6 as dpkt computes it: 5.0014710000000004, where usec * 1e-6 gives 5.001471
    assert ours[0][0] == 5 + 1471 / 1e6 != 5 + 1471 * 1e-6


def test_pcap_records_leave_other_formats_to_dpkt(tmp_path):
    """A nanosecond pcap is read by dpkt (our reader knows microsecond pcaps only)."""
    path = tmp_path / "ns.pcap"
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, nano=True)
        w.writepkt(frame(SERVER, CLIENT, 5201, 40000, 0, dpkt.tcp.TH_ACK, 10), ts=5.000000123)
    with open(path, "rb") as f:
        ours = list(pcapmod.pcap_records(f))
    assert ours == _reference_records(path) and len(ours) == 1


def test_records_by_port_is_flow_records_of_each_port():
    """One pass picks out what flow_records picks out port by port: sport, or src's port."""
    text = "\n".join([
        PROBE.format(ts=1.0, nxt=1, una=1, cwnd=10, ss=1),
        "  x-1 [000] ..s.. 1.100000: sslab_event: sport=5202 dport=4 type=new_round",
        "  x-1 [000] ..s.. 1.200000: sslab_ack: sport=52011 dport=4 cwnd=3",
        "  x-1 [000] ..s.. 1.300000: tcp_probe: src=10.1.1.2:15201 dest=10.2.1.2:4 snd_cwnd=3",
    ])
    recs = parse(text)
    got = records_by_port(recs, [5201, 5202, 15201])
    for port in (5201, 5202, 15201):
        assert got[port] == flow_records(recs, port)
    assert [len(got[p]) for p in (5201, 5202, 15201)] == [1, 1, 1]


def test_trace_facts_are_the_facts_a_full_parse_gives():
    """The host's read-out (trace_facts) skips sslab_ack lines and cuts a tcp_probe's values out
    by position; the facts it gives are those of the full parse, item for item."""
    from sslab.analysis.traces import flow_facts, trace_facts
    lines = _probe_lines()
    text = "\n".join(lines)
    full = parse(text)
    fast = trace_facts(text, [5201, 5202])
    assert fast == {port: flow_facts(flow_records(full, port)) for port in (5201, 5202)}
    assert fast[5201]["slow_start"] == {"exit_cwnd": 14, "ssthresh": 7, "exit_time_s": 0.1, "undone_reductions": 0}
    assert fast[5201]["events"] == [{"ts": 1.3, "sport": "5201", "dport": "4", "type": "exit", "a": "1", "b": "2"}]
    assert (fast[5201]["probe_records"], fast[5201]["receiver_limited_acks"]) == (6, 0)
    assert fast[5202]["receiver_limited_acks"] == 1 and fast[5202]["slow_start"] is None   # still infinite
    assert fast[5202]["bbr3"] == [{"ts": 1.4, "sport": "5202", "dport": "5", "mode": "startup"}]
    # A tcp_probe format with the fields further on: the same facts.
    moved = text.replace("family=AF_INET ", "family=AF_INET x1=0 x2=0 x3=0 x4=0 x5=0 ")
    assert trace_facts(moved, [5201, 5202]) == fast
    # One without a field the facts read is refused, naming it.
    with pytest.raises(ValueError, match="without snd_wnd"):
        trace_facts(text.replace("snd_wnd=", "wnd="), [5201])


def _probe_lines(unasked_port: str = "5299") -> list[str]:
    """Two flows' tcp_probe records and the module's events, as the trace has them; the last record
    is a flow's the run did not ask for (its port @unasked_port)."""
    lines = [PROBE.format(ts=1.0 + i / 100, nxt=1448 * (i + 11), una=1448 * i, cwnd=10 + i, ss=0x7FFFFFFF)
             for i in range(5)]
    return lines + [PROBE.format(ts=1.1, nxt=1448 * 20, una=1448 * 8, cwnd=7, ss=7),
                    "  x-1 [000] ..s.. 1.200000: sslab_ack: sport=5201 dport=4 cwnd=3",
                    "  x-1 [000] ..s.. 1.300000: sslab_event: sport=5201 dport=4 type=exit a=1 b=2",
                    "  x-1 [000] ..s.. 1.400000: sslab_bbr3: sport=5202 dport=5 mode=startup",
                    # another flow's probe, one the run did not ask for, and a receiver-limited ACK:
                    # 10 segments in flight against a window of 15000 bytes, cwnd 12
                    PROBE.format(ts=1.5, nxt=1448 * 10, una=0, cwnd=12, ss=0x7FFFFFFF).replace(":5201 ", ":5202 ")
                    .replace("snd_wnd=1000000", "snd_wnd=15000"),
                    PROBE.format(ts=1.6, nxt=0, una=0, cwnd=1, ss=1).replace(":5201 ", f":{unasked_port} ")]


def _probe_text() -> str:
    """_probe_lines with a comment line and an empty one first, an event holding ": sslab_ack: " after
    the exit event, and the unasked flow's port written 05202 (never 5202 to the Python reader)."""
    lines = _probe_lines("05202")
    lines.insert(8, "  x-1 [000] ..s.. 1.350000: sslab_event: sport=5201 dport=4 note=: sslab_ack: x")
    return "\n".join(["# tracer: nop", "", *lines]) + "\n"


def test_the_compiled_trace_reader_cuts_each_probe_into_its_row():
    """Hand-read from _probe_text: seven tcp_probe rows in the trace's order; the first at 1.0 s from
    port 5201 with snd_nxt 11 x 1448 = 0x3e38, snd_una 0, cwnd 10, ssthresh 0x7fffffff, snd_wnd
    1000000 and srtt 100000; the last one's port written 05202, which the Python reader never takes
    for 5202, is none (-1).  The other lines the Python reader must read are the sslab_event at 1.3 s
    and the sslab_bbr3; the comment, the empty line, the sslab_ack and the event holding
    ": sslab_ack: " are passed over as that reader passes over them."""
    from sslab.analysis import tracecols
    data = _probe_text().encode()
    cols = tracecols.read(data)
    assert cols is not None, "the compiled reader did not read a canonical trace (no C compiler here?)"
    assert cols.ts.tolist() == [1.0, 1.01, 1.02, 1.03, 1.04, 1.1, 1.5, 1.6]
    assert cols.port.tolist() == [5201] * 6 + [5202, -1]
    assert cols.values[0].tolist() == [0x3E38, 0, 10, 0x7FFFFFFF, 1000000, 100000]
    assert cols.values[5].tolist() == [1448 * 20, 1448 * 8, 7, 7, 1000000, 100000]
    others = [data[a:b].decode() for a, b in cols.other.tolist()]
    assert [line.split(": ")[1] for line in others] == ["sslab_event", "sslab_bbr3"]
    assert "1.300000" in others[0]


@pytest.mark.parametrize("change", [
    ("snd_wnd=", "wnd="),                 # a field the facts read is missing
    ("1.020000:", "1.02e0:"),             # a time Python reads and C does not take
    ("snd_cwnd=12 ", "snd_cwnd=0x0C "),   # upper-case hex
    ("snd_cwnd=12 ", "snd_cwnd=012 "),    # a leading zero, which int(v, 0) refuses
    ("sock_cookie=2", "sock_cookie=\u00e9"),  # not ASCII
    ("mark=0x0 ", "mark=0x0  "),          # two spaces between words
])
def test_the_compiled_trace_reader_stands_aside_where_it_cannot_read_as_python_does(change):
    """Each change makes a trace the compiled reader does not read (None): the Python reader reads
    it instead, and trace_facts' answer is that reader's, error included."""
    from sslab.analysis import tracecols
    from sslab.analysis.traces import _trace_facts_read
    text = _probe_text().replace(*change)
    assert text != _probe_text()
    assert tracecols.read(text.encode()) is None
    try:
        expected = _trace_facts_read(text, [5201, 5202])
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)[:20]):
            trace_facts(text, [5201, 5202])
    else:
        assert trace_facts(text.encode(), [5201, 5202]) == expected


def test_without_a_place_to_build_the_compiled_reader_the_python_reader_reads(tmp_path, monkeypatch, capsys):
    """A cache the compiled reader cannot be built in (here a file where its folder would be): a line
    on stderr, no columns, and trace_facts' answer the Python reader's."""
    from sslab.analysis import tracecols
    from sslab.analysis.traces import _trace_facts_read
    (tmp_path / "cache").write_text("not a folder")
    monkeypatch.setenv("SSLAB_CACHE", str(tmp_path / "cache"))
    tracecols._library.cache_clear()
    try:
        assert tracecols.read(_probe_text().encode()) is None
        assert "reading traces in Python" in capsys.readouterr().err
        assert trace_facts(_probe_text(), [5201, 5202]) == _trace_facts_read(_probe_text(), [5201, 5202])
    finally:
        tracecols._library.cache_clear()


def test_trace_facts_from_the_compiled_reader_are_the_python_readers():
    """The same facts, item for item, from the columns as from the Python reader, for bytes and
    for text; and what the Python reader is held to elsewhere (a sequence space's wrap, slow
    start's end) holds of the columns' facts too."""
    from sslab.analysis import tracecols
    from sslab.analysis.traces import _trace_facts_of_columns, _trace_facts_read
    text = _probe_text()
    cols = tracecols.read(text.encode())
    assert cols is not None
    fast = _trace_facts_of_columns(cols, text.encode(), [5201, 5202])
    assert fast == _trace_facts_read(text, [5201, 5202]) == trace_facts(text, [5201, 5202])
    assert fast[5201]["slow_start"] == {"exit_cwnd": 14, "ssthresh": 7, "exit_time_s": 0.1, "undone_reductions": 0}
    assert fast[5201]["events"] == [{"ts": 1.3, "sport": "5201", "dport": "4", "type": "exit", "a": "1", "b": "2"}]
    assert fast[5202]["receiver_limited_acks"] == 1 and fast[5202]["probe_records"] == 1
    start = 0xFFFFF000
    rows = [(1.0, start), (1.2, start + 2 * 1448), (1.4, (start + 9 * 1448) & 0xFFFFFFFF),
            (1.5, (start + 9 * 1448) & 0xFFFFFFFF)]
    wrap = "\n".join(PROBE.format(ts=t, nxt=una, una=una, cwnd=10, ss=1) for t, una in rows)
    cols = tracecols.read(wrap.encode())
    assert cols is not None
    assert _trace_facts_of_columns(cols, wrap.encode(), [5201])[5201]["server_fct_s"] == pytest.approx(0.5)


def test_seen_ranges_count_each_byte_once():
    from sslab.analysis.pcap import SeenRanges
    r = SeenRanges()
    assert r.add(0, 100) == 100
    assert r.add(200, 300) == 100      # a hole 100-200
    assert r.add(50, 250) == 100       # fills it, overlapping both sides
    assert (r.starts, r.ends) == ([0], [300])
    assert r.add(0, 300) == 0 and r.add(300, 300) == 0
    assert r.add(400, 500) == 100 and r.add(350, 450) == 50
    assert (r.starts, r.ends) == ([0, 350], [300, 500])


def test_new_bytes_in_one_pass_are_seen_ranges_answers():
    """_new_bytes answers as SeenRanges.add does, range by range, taking the ranges that start at the
    highest end so far (in order, or past a hole) whole without asking it."""
    from sslab.analysis.pcap import _new_bytes
    import numpy as np
    starts = np.array([0, 100, 300, 200, 100, 400, 500, 350, 0])
    ends = np.array([100, 200, 400, 350, 150, 500, 600, 450, 700])
    # in order 100, 100; past a hole 200-300: 100; fills it and 50 past 300 already seen: 100; a duplicate: 0;
    # in order 100, 100; a duplicate: 0; from 0 to 700: only 600-700 is new
    assert _new_bytes(starts, ends).tolist() == [100, 100, 100, 100, 0, 100, 100, 0, 100]
    assert _new_bytes(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).tolist() == []
    # The first range need not start at 0; one before it is new where it is below it.
    assert _new_bytes(np.array([50, 0, 150]), np.array([150, 100, 200])).tolist() == [100, 50, 50]


def test_the_columns_are_the_records_fields_in_either_byte_order_and_cut_short(tmp_path):
    """segment_columns reads a capture whole by offset: the same segments as a record at a time, in a
    little- and a big-endian pcap, with frames that are not IPv4 TCP among them and a last record cut
    short by the file's end (a capture stopped while writing)."""
    frames = [frame(CLIENT, SERVER, 40000, 5201, 7000, dpkt.tcp.TH_SYN),
              b"\xff" * 12 + b"\x86\xdd" + b"\x00" * 60,                      # IPv6: left out
              frame(SERVER, CLIENT, 5201, 40000, 0xFFFFFFF0, dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK),
              frame(SERVER, CLIENT, 5201, 40000, 0xFFFFFFF1, dpkt.tcp.TH_ACK, 1448),
              frame(SERVER, CLIENT, 5201, 40000, 1433, dpkt.tcp.TH_ACK | dpkt.tcp.TH_FIN, 700)]
    for magic in ("<", ">"):
        path = tmp_path / f"c{magic == '<'}.pcap"
        head = struct.pack(magic + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 96, 1)
        body = b"".join(struct.pack(magic + "IIII", 100 + k, 250_000 * k, min(len(fr), 96), len(fr)) + fr[:96]
                        for k, fr in enumerate(frames))
        path.write_bytes(head + body[:-10])                                   # the last record cut short
        got = list(pcapmod.tcp_segments(path))
        assert got == list(pcapmod._segments_of_records(path))
        assert [(ts, ports_seq_flags, payload) for ts, ports_seq_flags, payload in got[:3]] == [
            (100.0, (40000, 5201, 7000, 0x02), 0), (102.5, (5201, 40000, 0xFFFFFFF0, 0x12), 0),
            (103.75, (5201, 40000, 0xFFFFFFF1, 0x10), 1448)]
        # The last frame's header is whole (its payload is what was cut), so it counts its 700 bytes.
        assert got[3][2] == 700 and len(got) == 4
        # Its bytes relative to the ISN (0xFFFFFFF0 + 1), across the wrap of the sequence numbers.
        syn, times, delivered = pcapmod.delivered_by_flow(path, [5201])[5201]
        assert syn == 100.0 and times == [103.75, 105.0] and delivered == [1448, 2148]


def test_delivered_counts_the_retransmission_that_fills_a_hole(tmp_path):
    """A flow's bytes past the bottleneck: segments 1 and 2, then 4 (3 was dropped before the capture
    point), then 3 again (the retransmission: counted, it fills the hole), then 2 again (a duplicate:
    not counted)."""
    from sslab.analysis.pcap import delivered_series, flow_packets
    path = tmp_path / "flow.pcap"
    mss = 1448
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, snaplen=96)
        w.writepkt(frame(CLIENT, SERVER, 40000, 5201, 7000, dpkt.tcp.TH_SYN), ts=1.0)
        w.writepkt(frame(SERVER, CLIENT, 5201, 40000, 9999, dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK), ts=1.05)
        for k, (n, t) in enumerate(((0, 1.2), (1, 1.21), (3, 1.22), (2, 1.4), (1, 1.5))):
            w.writepkt(frame(SERVER, CLIENT, 5201, 40000, 10000 + n * mss, dpkt.tcp.TH_ACK, mss), ts=t)
    t, delivered = delivered_series(path, 5201)
    assert t == pytest.approx([0.2, 0.21, 0.22, 0.4])
    assert delivered == [mss, 2 * mss, 3 * mss, 4 * mss]
    # The oracle's view of the same packets: sequence numbers relative to the server's ISN (9999).
    pk = flow_packets(path, 5201)
    assert [(p[1], p[2], p[5]) for p in pk] == [("c", 0, 0), ("s", 0, 0), ("s", 1, mss), ("s", 1 + mss, mss),
                                                ("s", 1 + 3 * mss, mss), ("s", 1 + 2 * mss, mss),
                                                ("s", 1 + mss, mss)]
    assert pk[0][0] == 1_000_000 and pk[2][0] == 1_200_000


def test_probe_facts_of_columns_are_those_of_the_records_one_at_a_time():
    """ProbeFacts.of_columns (the read-out's, numpy) against add() a record at a time, on flows drawn at
    random: snd_una wrapping past 2^32, standing still and going back (an old ACK), ssthresh infinite,
    finite and infinite again (a reduction undone), windows that do and do not bound the sender."""
    from sslab.analysis.traces import INFINITE_SSTHRESH, PROBE_FACT_FIELDS, ProbeFacts
    rng = np.random.default_rng(7)
    slots = [s for s in ProbeFacts.__slots__ if s != "mss"]
    for _ in range(300):
        n = int(rng.integers(0, 40))
        una = (2**32 - 20_000 + np.cumsum(rng.choice([0, 1448, 2896, -1448, 14480], size=n))) % 2**32
        nxt = (una + rng.integers(0, 60_000, size=n)) % 2**32
        cwnd = rng.integers(1, 60, size=n)
        ssthresh = np.where(rng.random(n) < 0.6, INFINITE_SSTHRESH, rng.integers(2, 40, size=n))
        wnd = rng.integers(1_000, 80_000, size=n)
        srtt = rng.integers(1, 200_000, size=n)
        ts = np.round(np.cumsum(rng.random(n)), 3)
        values = np.stack([nxt, una, cwnd, ssthresh, wnd, srtt], axis=1).astype(np.int64)
        assert PROBE_FACT_FIELDS == ("snd_nxt", "snd_una", "snd_cwnd", "ssthresh", "snd_wnd", "srtt")
        one_by_one = ProbeFacts()
        for row in zip(ts.tolist(), *values.T.tolist()):
            one_by_one.add(*row)
        at_once = ProbeFacts.of_columns(ts, values)
        assert {s: getattr(at_once, s) for s in slots} == {s: getattr(one_by_one, s) for s in slots}
        assert at_once.slow_start() == one_by_one.slow_start() and at_once.server_fct_s() == one_by_one.server_fct_s()
