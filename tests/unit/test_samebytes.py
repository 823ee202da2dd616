"""Two results trees paired run by run (sslab.analysis.samebytes): the names the pairing uses, and what
counts as the same."""

import gzip
import json
import struct

import pytest
from isal import isal_zlib

from sslab.analysis.samebytes import PairResult, TreeResult, Unpairable, compare_pair, run_dirs, same_file
from sslab.experiment.archive import gzip_in_place

from .test_ringbuf import TCP_PROBE, event, page, probe, trace_file


def run_dir(path, cell=None):
    """A finished run directory with no runs (its index empty) and, for a matrix cell, its cell.json."""
    (path / "job" / "out").mkdir(parents=True)
    (path / "job" / "out" / "runs.json").write_text("[]")
    if cell:
        (path / "cell.json").write_text(json.dumps(cell))
    return path


def test_runs_are_named_by_what_both_trees_share_not_by_when_or_by_key(tmp_path):
    scenario = run_dir(tmp_path / "startup" / "20261205T001447Z-0c52")
    (tmp_path / "startup" / "latest").symlink_to("20261205T001447Z-0c52")
    series = run_dir(tmp_path / "wifi" / "cubic_suss" / "20261205T001509Z-8651")
    cell = run_dir(tmp_path / "table1" / "buf-1bdp_rtt-25ms" / "cells" / "4f63ad85173b2d371fac",
                   {"name": "table1-cubic-1BDP-25ms", "rep": 1})
    run_dir(tmp_path / "table1" / "buf-1bdp_rtt-25ms" / "cells" / ".partial-5a47f5ed-b0f778")
    run_dir(cell / "job" / "uml")  # a run's own inner directory is not a run
    assert run_dirs(tmp_path) == {"startup/*": scenario, "wifi/cubic_suss/*": series,
                                  "table1/buf-1bdp_rtt-25ms: table1-cubic-1BDP-25ms r1": cell}


def test_an_experiments_part_is_named_by_where_its_key_is_linked_in_either_layout(tmp_path):
    """A part run as a cell of its experiment's store pairs with the same part run before 8 Dec 2026
    into a directory of its own: both by the kind its key is linked under.  A cell linked for two
    parts takes the first kind's name; failed/ (an attempt, a cell set aside) holds no run."""
    old, new = tmp_path / "old", tmp_path / "new"
    before = run_dir(old / "wifi" / "cubic_suss" / "20261205T001509Z-8651")
    (old / "wifi" / "cubic_suss" / "keys").mkdir()
    (old / "wifi" / "cubic_suss" / "keys" / "k1").symlink_to("../20261205T001509Z-8651")
    after = run_dir(new / "wifi" / "cells" / "k1", {"name": "e2-wifi-cubic_suss", "rep": 0})
    twice = run_dir(new / "wifi" / "cells" / "k2", {"name": "e2-wifi-cubic_hs", "rep": 0})
    for kind, key in (("cubic_suss", "k1"), ("b_second", "k2"), ("a_first", "k2")):
        (new / "wifi" / kind / "keys").mkdir(parents=True, exist_ok=True)
        (new / "wifi" / kind / "keys" / key).symlink_to(f"../../cells/{key}")
    run_dir(new / "wifi" / "failed" / "k1-20261207T000000Z-set-aside", {"name": "e2-wifi-cubic_suss", "rep": 0})
    assert run_dirs(old) == {"wifi/cubic_suss/*": before}
    assert run_dirs(new) == {"wifi/cubic_suss/*": after, "wifi/a_first/*": twice}


def test_a_tree_with_two_runs_of_one_scenario_is_refused_naming_both(tmp_path):
    run_dir(tmp_path / "startup" / "20261205T001447Z-0c52")
    run_dir(tmp_path / "startup" / "20261205T002000Z-1a2b")
    with pytest.raises(Unpairable, match="two runs named startup/\\*"):
        run_dirs(tmp_path)


def test_a_capture_or_trace_that_differs_or_is_missing_makes_the_pair_differ(tmp_path):
    a, b = run_dir(tmp_path / "a"), run_dir(tmp_path / "b")
    for d in (a, b):
        (d / "job" / "out" / "runs" / "000-x-r0").mkdir(parents=True)
        (d / "job" / "out" / "runs" / "000-x-r0" / "flow.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(60))
        (d / "job" / "out" / "runs" / "000-x-r0" / "run.json").write_text(json.dumps({"started_unix": str(d)}))
    same = compare_pair("x", a, b)
    assert same.same and same.files == 1 and same.files_differing == []  # run.json (host times) not compared
    (b / "job" / "out" / "runs" / "000-x-r0" / "flow.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(59) + b"\x01")
    (a / "job" / "out" / "runs" / "000-x-r0" / "flow.trace.gz").write_bytes(b"\x1f\x8b")
    moved = compare_pair("x", a, b)
    assert not moved.same and moved.files == 2
    assert moved.files_differing == ["job/out/runs/000-x-r0/flow.pcap", "job/out/runs/000-x-r0/flow.trace.gz"]


def test_a_raw_capture_pairs_with_its_gzipped_copy_by_what_it_holds(tmp_path):
    """A part run before 8 Dec 2026 kept its capture raw; one run since, as a cell, keeps it gzipped:
    the two pair by the raw name and are the same when the copy holds the capture's bytes."""
    a, b = run_dir(tmp_path / "a"), run_dir(tmp_path / "b")
    capture = b"\xd4\xc3\xb2\xa1" + bytes(60)
    for d in (a, b):
        (d / "job" / "out" / "runs" / "000-x-r0").mkdir(parents=True)
    (a / "job" / "out" / "runs" / "000-x-r0" / "flow.pcap").write_bytes(capture)
    (b / "job" / "out" / "runs" / "000-x-r0" / "flow.pcap.gz").write_bytes(gzip.compress(capture, mtime=0))
    same = compare_pair("x", a, b)
    assert same.same and same.files == 1 and compare_pair("x", b, a).same
    (b / "job" / "out" / "runs" / "000-x-r0" / "flow.pcap.gz").write_bytes(gzip.compress(capture[:-1] + b"\x01"))
    moved = compare_pair("x", a, b)
    assert not moved.same and moved.files_differing == ["job/out/runs/000-x-r0/flow.pcap"]


def test_a_compressed_file_is_compared_by_what_it_holds_not_by_its_compressor(tmp_path):
    text = b"".join(b"  <idle>-0 [000] ..s.. %d.000000: tcp_probe: snd_cwnd=%d\n" % (i, i % 97) for i in range(200_000))
    (tmp_path / "isal").mkdir()
    (tmp_path / "isal" / "flow.trace").write_bytes(text)
    by_isal = gzip_in_place(tmp_path / "isal" / "flow.trace")
    by_zlib = tmp_path / "flow.trace.gz"
    by_zlib.write_bytes(gzip.compress(text, compresslevel=1, mtime=0))
    assert by_isal.read_bytes() != by_zlib.read_bytes()        # two deflaters, two byte streams
    assert gzip.decompress(by_isal.read_bytes()) == text       # a gzip file any gzip reads
    assert same_file(by_isal, by_zlib) and same_file(by_zlib, by_isal)
    one_more = tmp_path / "one-more.trace.gz"
    one_more.write_bytes(gzip.compress(text + b"x", mtime=0))
    shorter = tmp_path / "shorter.trace.gz"
    shorter.write_bytes(gzip.compress(text[:-1], mtime=0))
    assert not same_file(by_isal, one_more) and not same_file(one_more, by_isal)
    assert not same_file(by_isal, shorter) and not same_file(shorter, by_isal)
    raw_a, raw_b = tmp_path / "a.pcap", tmp_path / "b.pcap"   # not compressed: byte for byte
    raw_a.write_bytes(isal_zlib.compress(text, 1))
    raw_b.write_bytes(isal_zlib.compress(text, 0))
    assert not same_file(raw_a, raw_b)


def test_gzip_in_place_gives_the_same_bytes_for_the_same_trace(tmp_path):
    text = b"".join(b"sslab_ack: sport=5201 cwnd=%d\n" % i for i in range(50_000))
    outs = []
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "flow.trace").write_bytes(text)
        outs.append(gzip_in_place(tmp_path / d / "flow.trace").read_bytes())
        assert not (tmp_path / d / "flow.trace").exists()
    assert outs[0] == outs[1] and gzip.decompress(outs[0]) == text


def test_the_trees_are_the_same_only_when_every_flow_and_file_is_and_every_run_has_its_pair():
    whole = PairResult("a", flows=26, flows_same=26, files=4)
    assert TreeResult([whole], []).same
    assert not TreeResult([whole, PairResult("b", flows=8, flows_same=7, files=16)], []).same
    assert not TreeResult([whole, PairResult("b", flows=8, flows_same=8, files=16, files_differing=["f"])], []).same
    assert not TreeResult([whole, PairResult("b", runs_differ="no run 001")], []).same
    one_sided = TreeResult([whole], ["startup/* (only in B)"])
    assert not one_sided.same
    assert one_sided.lines()[-1] == "1 run paired, 1 not; 26 of 26 flows the same bytes; 4 of 4 capture and trace files"


def test_a_trace_as_text_and_as_ring_buffer_pages_is_paired_and_compared_by_its_records(tmp_path):
    """An archive from before the guest copied the ring buffer's pages holds the kernel's text: a run
    of it pairs with a run of now by what the two traces say, event by event."""
    raw = trace_file({0: [page(2_000_000_000, event(probe(10, 0x7FFFFFFF, 1000), 0) + event(probe(20, 14, 15480), 1_000_000))]},
                     {"tcp/tcp_probe": TCP_PROBE})
    lines = ["# tracer: nop",
             "          <idle>-0       [000] ..s..     2.000000: tcp_probe: src=10.1.1.2:5201 snd_nxt=0x3c78 "
             "snd_una=0x3e8 snd_cwnd=10 ssthresh=2147483647 snd_wnd=1048576 srtt=50000",
             "          <idle>-0       [000] ..s..     2.001000: tcp_probe: src=10.1.1.2:5201 snd_nxt=0x7508 "
             "snd_una=0x3c78 snd_cwnd=20 ssthresh=14 snd_wnd=1048576 srtt=50000"]
    a, b = run_dir(tmp_path / "a"), run_dir(tmp_path / "b")
    for d in (a, b):
        (d / "job" / "out" / "runs" / "000-x-r0").mkdir(parents=True)
    (a / "job" / "out" / "runs" / "000-x-r0" / "flow.trace.gz").write_bytes(gzip.compress("\n".join(lines).encode()))
    rb = b / "job" / "out" / "runs" / "000-x-r0" / "flow.trace.rb.gz"
    rb.write_bytes(gzip.compress(raw))
    same = compare_pair("x", a, b)
    assert same.same and same.files == 1 and same.files_differing == []
    rb.write_bytes(gzip.compress(raw.replace(struct.pack("<I", 20), struct.pack("<I", 21))))   # cwnd 20 -> 21
    assert compare_pair("x", a, b).files_differing == ["job/out/runs/000-x-r0/flow.trace.gz"]
