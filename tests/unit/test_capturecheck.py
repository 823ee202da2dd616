"""tshark's second opinion on a capture (sslab.analysis.capturecheck), on captures made here.

The capture below is worked by hand: a handshake, segments 0, 1, 3, 4 of 1448 bytes (2 lost
before the capture point), 2 sent again 0.5 ms after 4 and again 446 ms later, then a FIN.
"""

import shutil

import dpkt
import pytest

from sslab.analysis import capturecheck
from sslab.analysis.pcap import analyse_pcap

from .test_analysis import CLIENT, SERVER, frame

A, S, F = dpkt.tcp.TH_ACK, dpkt.tcp.TH_SYN, dpkt.tcp.TH_FIN
ISN = 1000
MSS = 1448

#: The figures both parsers must give for the capture above.
EXPECTED = {"syn_us": 10_000_000, "first_data_us": 10_150_000, "last_new_data_us": 10_154_000,
            # 0, 1, 3, 4 and 2 twice
            "data_segments": 6, "retransmitted_segments": 2,
            # one hole (segment 2), seen at segment 3; the FIN starts where the data ends
            "holes": 1, "bytes": 5 * MSS}


def write_capture(path, lose_first_copy=True, then=()):
    """The capture above, and after it the frames of @then, (frame, ts) each."""
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, snaplen=96)
        w.writepkt(frame(CLIENT, SERVER, 40000, 5201, 5000, S), ts=10.0)
        w.writepkt(frame(SERVER, CLIENT, 5201, 40000, ISN, S | A), ts=10.05)
        w.writepkt(frame(CLIENT, SERVER, 40000, 5201, 5001, A), ts=10.1)
        first = ISN + 1
        sent = ((0, 10.15), (1, 10.151), (3, 10.153), (4, 10.154)) if lose_first_copy else \
            ((0, 10.15), (1, 10.151), (2, 10.152), (3, 10.153), (4, 10.154))
        for i, t in sent:
            w.writepkt(frame(SERVER, CLIENT, 5201, 40000, first + i * MSS, A, MSS), ts=t)
        w.writepkt(frame(SERVER, CLIENT, 5201, 40000, first + 2 * MSS, A, MSS), ts=10.1545)
        w.writepkt(frame(SERVER, CLIENT, 5201, 40000, first + 2 * MSS, A, MSS), ts=10.6)
        w.writepkt(frame(SERVER, CLIENT, 5201, 40000, first + 5 * MSS, A | F), ts=10.7)
        for buf, ts in then:
            w.writepkt(buf, ts=ts)
    return path


def test_our_parser_on_the_hand_worked_capture(tmp_path):
    path = write_capture(tmp_path / "flow.pcap")
    assert capturecheck.our_view(path, [5201])[5201] == EXPECTED
    pf = analyse_pcap(path, 5201)
    # new bytes: what moved the highest byte seen; segment 2's bytes came after 3 and 4 (a retransmission)
    assert pf.new_bytes == 4 * MSS and pf.seq_span == 5 * MSS


def test_no_hole_when_nothing_is_lost(tmp_path):
    path = write_capture(tmp_path / "flow.pcap", lose_first_copy=False)
    ours = capturecheck.our_view(path, [5201])[5201]
    assert ours["holes"] == 0 and ours["data_segments"] == 7 and ours["retransmitted_segments"] == 2
    assert ours["bytes"] == 5 * MSS


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark is a host package (make deps installs it)")
def test_tshark_reads_the_capture_as_we_do(tmp_path):
    """tshark calls the first copy of 2 out-of-order (0.5 ms after the newest segment, within its RTT
    estimate) and the second a retransmission; counted together, as the module says, they are our 2."""
    path = write_capture(tmp_path / "flow.pcap")
    check = capturecheck.check_capture(path, [5201])
    assert check["agree"] is True and check["version"]
    flow = check["flows"][0]
    assert {k: flow["tshark"][k] for k in EXPECTED} == EXPECTED and flow["tshark"]["streams"] == 1
    assert flow["differences"] == []
    # The record is a function of the capture: no wall time in it (a run's record is the same bytes
    # wherever it is finished; tshark's time goes to meta.json's capture_check_seconds).
    import json
    assert json.dumps(capturecheck.check_capture(path, [5201])) == json.dumps(check)
    # the same from the .gz archive copy, as the archive keeps it
    import gzip
    with open(path, "rb") as src, gzip.open(str(path) + ".gz", "wb") as dst:
        dst.write(src.read())
    path.unlink()
    assert capturecheck.check_capture(path, [5201])["agree"] is True


def _line(ts, stream, sport, dport, flags, seglen, seq, rtx="", ooo="", lost=""):
    return "\t".join([ts, str(stream), str(sport), str(dport), flags, str(seglen), str(seq), rtx, "", "", ooo, lost])


def test_the_flows_payload_is_decoded_as_data_over_their_ports():
    """tshark is told the payload on our ports is data (no heuristic dissector tried on it); a port between
    them is no flow of ours and is asked about by nobody."""
    assert capturecheck.payload_as_data([5203, 5201, 5213]) == "tcp.port==5201-5213,data"


def test_tshark_fields_two_streams_on_one_port_are_summed():
    """iperf3's control and data connections share the server port: one flow to our parser, two
    streams to tshark, whose bytes and segments are summed."""
    lines = [_line("1.000000000", 0, 40000, 5201, "0x0002", 0, 0),
             _line("1.010000000", 0, 5201, 40000, "0x0012", 0, 0),
             _line("1.020000000", 0, 5201, 40000, "0x0018", 100, 1),
             _line("1.100000000", 1, 40001, 5201, "0x0002", 0, 0),
             _line("1.110000000", 1, 5201, 40001, "0x0012", 0, 0),
             _line("1.120000000", 1, 5201, 40001, "0x0010", 1000, 1),
             _line("1.130000000", 1, 5201, 40001, "0x0010", 1000, 2001, lost="1"),
             _line("1.140000000", 1, 5201, 40001, "0x0010", 1000, 1001, ooo="1"),
             _line("1.150000000", 1, 5202, 40002, "0x0010", 1000, 1)]  # another port: not asked for
    view = capturecheck.parse_tshark_fields(lines, [5201])[5201]
    assert view == {"syn_us": 1_000_000, "first_data_us": 1_020_000, "last_new_data_us": 1_130_000,
                    "data_segments": 4, "retransmitted_segments": 1, "holes": 1, "bytes": 100 + 3000,
                    "streams": 2}


def test_tshark_columns_read_as_its_fields_did():
    """tshark prints the figures as columns (field_columns): a flag present reads "✓" there and "1" as a
    field, tcp.flags "0x010" there and "0x0010" as a field; both spellings give the same view."""
    assert capturecheck.field_columns().startswith('"frame.time_epoch","%Cus:frame.time_epoch:0:U","tcp.stream",')
    assert capturecheck.field_columns().count("%Cus:") == len(capturecheck.TSHARK_FIELDS)

    def lines(flag: str, syn: str, synack: str, ack: str) -> list[str]:
        return [_line("1.000000000", 0, 40000, 5201, syn, 0, 0),
                _line("1.010000000", 0, 5201, 40000, synack, 0, 0),
                _line("1.020000000", 0, 5201, 40000, ack, 1000, 1),
                _line("1.030000000", 0, 5201, 40000, ack, 1000, 2001, lost=flag),
                _line("1.040000000", 0, 5201, 40000, ack, 1000, 1001, rtx=flag)]
    as_fields = capturecheck.parse_tshark_fields(lines("1", "0x0002", "0x0012", "0x0010"), [5201])
    as_columns = capturecheck.parse_tshark_fields(lines("✓", "0x002", "0x012", "0x010"), [5201])
    assert as_columns == as_fields == {5201: {
        "syn_us": 1_000_000, "first_data_us": 1_020_000, "last_new_data_us": 1_030_000, "data_segments": 3,
        "retransmitted_segments": 1, "holes": 1, "bytes": 3000, "streams": 1}}


def test_differences_and_the_report_line():
    ours = dict(EXPECTED)
    theirs = {**EXPECTED, "retransmitted_segments": 3, "streams": 1}
    assert capturecheck.differences(ours, theirs) == ["retransmitted_segments 2/3"]
    good = {"tag": "000-a", "pcap": "000-a.pcap", "capture_check": {
        "version": "4.0.17", "agree": True, "flows": [{"port": 5201, "differences": []}]}}
    bad = {"tag": "001-b", "pcap": "001-b.pcap", "capture_check": {
        "version": "4.0.17", "agree": False, "flows": [{"port": 5201, "differences": ["holes 1/2"]}]}}
    unchecked = {"tag": "002-c", "pcap": "002-c.pcap"}
    line = capturecheck.agreement_line([good, bad, unchecked])
    assert line.startswith("- captures checked by tshark 4.0.17: 1 of 2 runs agree")
    assert "1 not checked" in line and "DIFFER: 001-b port 5201: holes 1/2" in line
    assert "none of 1 (not asked for" in capturecheck.agreement_line([unchecked])
    assert "none recorded" in capturecheck.agreement_line([{"tag": "x", "pcap": None}])


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark is a host package (make deps installs it)")
def test_the_captures_command_reads_an_unchecked_run_and_writes_nothing(tmp_path):
    """`sslab captures DIR`: a run made before the check (no capture_check) is read now, its flows
    printed beside tshark's, and its record left as it was."""
    import json
    import subprocess
    import sys
    from sslab.paths import REPO_ROOT
    from sslab.records import stamped
    run_dir = tmp_path / "job" / "out" / "runs" / "000-a-r0"
    run_dir.mkdir(parents=True)
    write_capture(run_dir / "000-a-r0.pcap")
    record = json.dumps(stamped("sslab.run", {"tag": "000-a-r0", "pcap": "000-a-r0.pcap", "flows": [{"port": 5201}]}))
    (run_dir / "run.json").write_text(record)
    res = subprocess.run([sys.executable, "-m", "sslab", "captures", str(tmp_path)], capture_output=True, text=True,
                         cwd=REPO_ROOT / "runners")
    assert res.returncode == 0, res.stderr
    row = next(line for line in res.stdout.splitlines() if line.startswith("| job/out/runs/000-a-r0 |"))
    # ours | tshark: first / last new data (ms from SYN), segments, retransmitted, holes, bytes
    assert "| 5201 | 150.000 / 154.000 | 6 | 2 | 1 | 7240 | 150.000 / 154.000 | 6 | 2 | 1 | 7240 | agree |" in row
    assert "1 runs, 0 with a flow on which" in res.stdout and "1 read now (not recorded)" in res.stdout
    assert (run_dir / "run.json").read_text() == record


@pytest.mark.skipif(not (shutil.which("tshark") and shutil.which("tcpdump")),
                    reason="tshark and tcpdump are host packages (make deps installs them)")
def test_tshark_is_given_every_frame_but_the_receivers_pure_acks(tmp_path):
    """senders_frames, as tcpdump applies it to the hand-worked capture with two more frames: of its 12,
    the receiver's two pure ACKs (the handshake's last and one after the data) are left out, and the
    sender's pure ACK is kept."""
    import subprocess
    path = write_capture(tmp_path / "flow.pcap", then=[
        (frame(CLIENT, SERVER, 40000, 5201, 5001, A), 10.8),  # the receiver's pure ACK
        (frame(SERVER, CLIENT, 5201, 40000, ISN + 1 + 6 * MSS, A), 10.9)])  # the sender's
    with open(path, "rb") as f:
        records = list(dpkt.pcap.Reader(f))
    kept = subprocess.run(["tcpdump", "-n", "-r", str(path), capturecheck.senders_frames([5201])],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(records) == 12 and len(kept) == 10
    assert sum("40000 > " in line for line in kept) == 1  # the client's SYN alone
    assert capturecheck.check_capture(path, [5201])["agree"] is True


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark is a host package (make deps installs it)")
def test_without_tcpdump_tshark_reads_every_frame_and_gives_the_same_figures(tmp_path, monkeypatch):
    """A host with tshark and no tcpdump (a Slurm node's own packages) checks its captures all the same:
    tshark given the whole capture, gzipped as the archive keeps it, gives the figures it gives when
    tcpdump has left the receivers' pure ACKs out."""
    import gzip
    path = write_capture(tmp_path / "flow.pcap", then=[
        (frame(CLIENT, SERVER, 40000, 5201, 5001, A), 10.8),
        (frame(SERVER, CLIENT, 5201, 40000, ISN + 1 + 6 * MSS, A), 10.9)])
    with open(path, "rb") as src, gzip.open(str(path) + ".gz", "wb") as dst:
        dst.write(src.read())
    path.unlink()
    filtered = capturecheck.check_capture(path, [5201])
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "tshark").symlink_to(shutil.which("tshark"))
    monkeypatch.setenv("PATH", str(bare))
    assert shutil.which("tcpdump") is None and shutil.which("gzip") is None
    assert capturecheck.check_capture(path, [5201]) == filtered and filtered["agree"] is True
