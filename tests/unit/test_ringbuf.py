"""The ring-buffer trace reader (sslab.analysis.ringbuf) on pages built by hand, each number worked out
below: the events' walk (data events short and long, a discarded one, a time extend, the page's end),
the times as the kernel prints them (microseconds, rounded), the CPUs merged, lost events counted, and
the text of each event as its print fmt has the kernel print it.  That the kernel's own pages read so:
tests/integration/test_ringbuf_trace.py."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from sslab.analysis import ringbuf
from sslab.analysis.traces import Record, read_trace, ringbuf_records, trace_facts
from sslab.experiment.archive import complete_run
from sslab.paths import REPO_ROOT

PAGE = 4096
HEADER_PAGE = ("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
               "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
               "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
               "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n")
HEADER_EVENT = ("# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
                "\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
                "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n")
COMMON = ("\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
          "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
          "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
          "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n")
#: A made-up event of 56 bytes: every conversion and argument kind the reader prints.
DEMO = ("name: demo\nID: 7\nformat:\n" + COMMON +
        "\tfield:u16 sport;\toffset:8;\tsize:2;\tsigned:0;\n"
        "\tfield:s32 gap;\toffset:12;\tsize:4;\tsigned:1;\n"
        "\tfield:u64 big;\toffset:16;\tsize:8;\tsigned:0;\n"
        "\tfield:u8 kind;\toffset:24;\tsize:1;\tsigned:0;\n"
        "\tfield:u8 type;\toffset:25;\tsize:1;\tsigned:0;\n"
        "\tfield:u8 saddr[28];\toffset:28;\tsize:28;\tsigned:0;\n\n"
        'print fmt: "sport=%u gap=%d big=%#llx kind=%s type=%s src=%pISpc", REC->sport, REC->gap, REC->big, '
        '__print_symbolic(REC->kind, { 0, "zero" }, { 1, "one" }), ss_event_name(REC->type), REC->saddr\n')


def demo(sport: int, gap: int = 0, big: int = 0, kind: int = 0, etype: int = 0, addr: bytes | None = None) -> bytes:
    saddr = addr or struct.pack("<H", 2) + struct.pack(">H", sport) + bytes([10, 1, 1, 2]) + bytes(20)
    return struct.pack("<HBBi", 7, 0, 0, 99) + struct.pack("<H2xiQBB2x", sport, gap, big, kind, etype) + saddr


def event(payload: bytes, delta: int) -> bytes:
    """A data event: type_len = its 4-byte words when they fit in 28, else 0 and its length in array[0]."""
    assert len(payload) % 4 == 0
    if len(payload) <= 112:
        return struct.pack("<I", (delta << 5) | len(payload) // 4) + payload
    return struct.pack("<II", delta << 5, len(payload) + 4) + payload


def page(timestamp: int, events: bytes, flags: int = 0, lost: int | None = None) -> bytes:
    tail = struct.pack("<Q", lost) if lost is not None else b""
    body = events + tail
    return struct.pack("<QQ", timestamp, len(body) | flags) + body + bytes(PAGE - 16 - len(body))


def trace_file(cpus: dict[int, list[bytes]], formats: dict[str, str], **extra) -> bytes:
    header = {"page_size": PAGE, "byteorder": "little", "header_page": HEADER_PAGE, "header_event": HEADER_EVENT,
              "formats": formats, "cpus": sorted(cpus), **extra}
    out = ringbuf.MAGIC + json.dumps(header).encode() + b"\n"
    for cpu in sorted(cpus):
        out += struct.pack("<Q", len(cpus[cpu])) + b"".join(cpus[cpu])
    return out


def hand_worked() -> bytes:
    # CPU 0, one page from 1.000000000 s: event A 1000 ns on (1.000001000); a discarded event (padding,
    # its delta 50 not counted, 64 bytes); a time extend of 5 << 27 + 7 = 671,088,647 ns (1.671089647);
    # event B, a long one (type_len 0), 853 ns on: 1.671090500 s, printed rounded as 1.671091.
    long_demo = demo(5202, gap=-3, big=255, kind=1, etype=1) + bytes(64)   # 120 bytes: past type_len's 112
    cpu0 = (event(demo(5201), 1000)
            + struct.pack("<II", (50 << 5) | 29, 60) + bytes(56)
            + struct.pack("<II", (7 << 5) | 30, 5)
            + event(long_demo, 853))
    # CPU 1: event C at the page's own time (delta 0), 1.000001000 s, A's time: A is printed first;
    # the page says 3 events were lost before it (their count stored after its events).
    ipv6 = struct.pack("<H", 10) + struct.pack(">H", 5203) + bytes(4) + bytes(15) + b"\x01" + bytes(4)
    cpu1 = event(demo(5203, kind=9, etype=40, addr=ipv6), 0)
    return trace_file({0: [page(1_000_000_000, cpu0)],
                       1: [page(1_000_001_000, cpu1, ringbuf.MISSED_EVENTS | ringbuf.MISSED_STORED, lost=3)]},
                      {"x/demo": DEMO}, event_names=["new_round", "growth"])


def test_the_walk_finds_each_data_event_at_its_time_and_the_cpus_merged():
    rb = ringbuf.parse(hand_worked())
    rows = rb.rows("demo")
    assert rb.column("demo", "sport", rows).tolist() == [5201, 5203, 5202]
    assert rb.ts_ns[rows].tolist() == [1_000_001_000, 1_000_001_000, 1_671_090_500]
    assert rb.seconds(rows).tolist() == [1.000001, 1.000001, 1.671091]
    assert rb.column("demo", "gap", rows).tolist() == [0, 0, -3]
    assert rb.missed == 3


def test_each_event_is_printed_as_its_print_fmt_has_the_kernel_print_it():
    rb = ringbuf.parse(hand_worked())
    assert rb.texts("demo", rb.rows("demo")) == [
        "sport=5201 gap=0 big=0x0 kind=zero type=new_round src=10.1.1.2:5201",
        "sport=5203 gap=0 big=0x0 kind=0x9 type=? src=[::1]:5203",       # not in the tables: 0x9, ?
        "sport=5202 gap=-3 big=0xff kind=one type=growth src=10.1.1.2:5202"]
    [a, c, b] = ringbuf_records(rb)
    assert a == Record(1.000001, "demo", {"sport": "5201", "gap": "0", "big": "0x0", "kind": "zero", "type": "new_round",
                                         "src": "10.1.1.2:5201"})
    assert (c.fields["src"], b.ts) == ("[::1]:5203", 1.671091)


#: 6.12's and 7.x's tcp_probe end with two addresses printed by a plain %p (its tail, cut to two fields).
POINTERS = ("name: probe_tail\nID: 8\nformat:\n" + COMMON +
            "\tfield:__u64 sock_cookie;\toffset:8;\tsize:8;\tsigned:0;\n"
            "\tfield:const void * skaddr;\toffset:16;\tsize:8;\tsigned:0;\n\n"
            'print fmt: "sock_cookie=%llx skaddr=%p", REC->sock_cookie, REC->skaddr\n')


def test_an_address_printed_by_plain_p_is_the_address_in_16_hex_digits():
    # The kernel would print the address hashed by its boot's key; the pages hold the address,
    # 0x99e1200, printed zero-padded to 16 digits as a 64-bit kernel pads a pointer.
    payload = struct.pack("<HBBi", 8, 0, 0, 99) + struct.pack("<QQ", 0x2a, 0x99E1200)
    rb = ringbuf.parse(trace_file({0: [page(1_000_000_000, event(payload, 0))]}, {"x/probe_tail": POINTERS}))
    assert rb.texts("probe_tail", rb.rows("probe_tail")) == ["sock_cookie=2a skaddr=00000000099e1200"]


def test_a_file_that_is_not_one_or_a_layout_it_does_not_know_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a ring-buffer trace"):
        ringbuf.parse(b"# tracer: nop\n")
    odd = hand_worked().replace(b"data max type_len  == 28", b"data max type_len  == 27")
    with pytest.raises(ValueError, match="header_event"):
        ringbuf.parse(odd)
    with pytest.raises(ValueError, match="bytes after"):
        ringbuf.parse(hand_worked() + b"x")


TCP_PROBE = ("name: tcp_probe\nID: 446\nformat:\n" + COMMON +
             "\tfield:__u8 saddr[28];\toffset:8;\tsize:28;\tsigned:0;\n"
             "\tfield:__u16 sport;\toffset:64;\tsize:2;\tsigned:0;\n"
             "\tfield:__u32 snd_nxt;\toffset:80;\tsize:4;\tsigned:0;\n"
             "\tfield:__u32 snd_una;\toffset:84;\tsize:4;\tsigned:0;\n"
             "\tfield:__u32 snd_cwnd;\toffset:88;\tsize:4;\tsigned:0;\n"
             "\tfield:__u32 ssthresh;\toffset:92;\tsize:4;\tsigned:0;\n"
             "\tfield:__u32 snd_wnd;\toffset:96;\tsize:4;\tsigned:0;\n"
             "\tfield:__u32 srtt;\toffset:100;\tsize:4;\tsigned:0;\n\n"
             'print fmt: "src=%pISpc snd_nxt=%#x snd_una=%#x snd_cwnd=%u ssthresh=%u snd_wnd=%u srtt=%u", REC->saddr, '
             "REC->snd_nxt, REC->snd_una, REC->snd_cwnd, REC->ssthresh, REC->snd_wnd, REC->srtt\n")


def probe(cwnd: int, ssthresh: int, una: int) -> bytes:
    record = bytearray(104)
    struct.pack_into("<HBBi", record, 0, 446, 0, 0, 1)
    record[8:16] = struct.pack("<H", 2) + struct.pack(">H", 5201) + bytes([10, 1, 1, 2])
    struct.pack_into("<H", record, 64, 5201)
    struct.pack_into("<IIIIII", record, 80, una + 14480, una, cwnd, ssthresh, 1 << 20, 50_000)
    return bytes(record)


def test_a_run_with_a_ring_buffer_trace_is_finished_as_one_with_text(tmp_path):
    # Three ACKs 1 ms apart: cwnd 10, 20 in slow start (ssthresh infinite), then 14 with ssthresh 14.
    pages = page(2_000_000_000, event(probe(10, 0x7FFFFFFF, 1000), 0) + event(probe(20, 0x7FFFFFFF, 15480), 1_000_000)
                 + event(probe(14, 14, 29960), 1_000_000))
    raw = trace_file({0: [pages]}, {"tcp/tcp_probe": TCP_PROBE})
    run_dir = tmp_path / "000-x-r0"
    run_dir.mkdir()
    (run_dir / "flow.trace.rb").write_bytes(raw)
    (run_dir / "run.json").write_text(json.dumps({"tag": "x", "trace": "flow.trace.rb",
                                                  "flows": [{"port": 5201, "fct_s": 1.0}]}))
    done = complete_run(run_dir, check_captures=False)
    assert done["trace"] == "flow.trace.rb.gz" and not (run_dir / "flow.trace.rb").exists()
    [flow] = done["flows"]
    assert flow["slow_start"] == {"exit_cwnd": 20, "ssthresh": 14, "exit_time_s": 0.002, "undone_reductions": 0}
    assert flow["probe_records"] == 3 and flow["server_fct_s"] == 0.052   # 2 ms of ACKs and the first srtt
    assert "trace_lost_events" not in done
    archived = ringbuf.read(run_dir / "flow.trace.rb.gz")
    assert archived.header["event_names"][0] == "new_round"       # the module's names, written in by the host
    records = read_trace(run_dir / "flow.trace.rb.gz")
    assert [(r.ts, r.fields["snd_cwnd"], r.fields["snd_nxt"]) for r in records] == \
        [(2.0, "10", "0x3c78"), (2.001, "20", "0x7508"), (2.002, "14", "0xad98")]   # una + 14480
    assert trace_facts(raw, [5201])[5201]["slow_start"] == flow["slow_start"]
    # Finished again (a read-out interrupted after the compression and run again): the same bytes.
    packed = (run_dir / "flow.trace.rb.gz").read_bytes()
    again = json.loads((run_dir / "run.json").read_text())
    again["trace"] = "flow.trace.rb"
    (run_dir / "run.json").write_text(json.dumps(again))
    assert complete_run(run_dir, check_captures=False)["flows"] == done["flows"]
    assert (run_dir / "flow.trace.rb.gz").read_bytes() == packed
    assert np.array_equal(ringbuf.read(run_dir / "flow.trace.rb.gz").ts_ns, archived.ts_ns)


def test_a_run_whose_ring_buffer_lost_events_says_how_many(tmp_path):
    lost = page(2_000_000_000, event(probe(10, 0x7FFFFFFF, 1000), 0), ringbuf.MISSED_EVENTS | ringbuf.MISSED_STORED, lost=41)
    (tmp_path / "flow.trace.rb").write_bytes(trace_file({0: [lost]}, {"tcp/tcp_probe": TCP_PROBE}))
    (tmp_path / "run.json").write_text(json.dumps({"tag": "x", "trace": "flow.trace.rb", "flows": [{"port": 5201}]}))
    done = complete_run(tmp_path, check_captures=False)
    assert done["trace_lost_events"] == 41 and done["flows"][0]["probe_records"] == 1


def test_kernel_trace_prints_a_run_s_trace_a_line_an_event(tmp_path):
    (tmp_path / "flow.trace.rb").write_bytes(hand_worked())
    env = {**os.environ, "SSLAB_RESULTS": str(tmp_path / "results")}
    res = subprocess.run([sys.executable, "-m", "sslab", "kernel-trace", str(tmp_path / "flow.trace.rb"), "--port", "5202"],
                         capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout == "    1.671091: demo: sport=5202 gap=-3 big=0xff kind=one type=growth src=10.1.1.2:5202\n"
