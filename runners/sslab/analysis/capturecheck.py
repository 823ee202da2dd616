"""A second opinion on every capture: tshark's TCP analysis beside our parser's, per flow.

Our FCTs at the bottleneck, retransmission counts and goodput rest on one
parser (sslab.analysis.pcap) that nobody else wrote.  tshark (Wireshark's
dissectors, a different code base with its own sequence analysis) reads the
same capture, and each flow's figures from both are compared:

  figure          ours (sslab.analysis.pcap)           tshark
  syn             first SYN towards the server port   the same frame (tcp.flags)
  first data      first segment from the port with    the same (tcp.len > 0)
                  data
  last new data   last data segment that moved the    last data frame with none of the
                  highest byte seen                   flags below
  data segments   segments from the port with data    frames with tcp.len > 0
  retransmitted   data segments whose every byte was  frames flagged retransmission, fast
                  seen before                         retransmission, spurious retransmission
                                                      or out-of-order (see below)
  holes           segments starting beyond every      frames flagged "previous segment(s)
                  byte seen before (a FIN too)        not captured" (tcp.analysis.lost_segment)
  bytes           highest data byte reached, from     max(relative seq + len), less the
                  the SYN-ACK's sequence number       SYN's one

Where the two name things differently, like is compared with like:
- tshark calls a retransmission that arrives within its RTT estimate of the
  newest segment "out-of-order" (it cannot tell them apart at one capture
  point); our captures are taken after the bottleneck's FIFO queue on links
  that never reorder (sslab.guest.dumbbell), so every one of those is a
  retransmission, and the two flags are counted together.
- tshark's "lost segment" is one flag per hole, whatever the hole's length:
  it is compared with our count of holes, not with packets dropped.
- Times are the capture's own (microseconds): they must be equal.

A flow agrees when every figure is equal.  A port with more than one TCP
connection (iperf3's control and data connections share the server port)
is one flow to our parser and several streams to tshark: tshark's figures
are then summed over its streams and the record says how many there were.

Cost: tshark dissects every packet (about 6 s of CPU for a Table 1 run's 240k
packets, 24 Nov 2026; 1.5 s for one of 159k since its figures are asked as
columns and its payload decoded as data, 6 Dec 2026; the receivers' pure ACKs are left out before
it reads, senders_frames): matrices check a sample of their
cells (sslab.matrix.spec, `capture_check_every` and `capture_check_per_setting`), every scenario run
checks all.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import time
from pathlib import Path

from .pcap import analyse_pcap_ports, stored_capture

FIGURES = ("syn_us", "first_data_us", "last_new_data_us", "data_segments", "retransmitted_segments",
           "holes", "bytes")
#: The frames tshark is asked about: data, connection set-up and close, and any segment after a hole.
TSHARK_FILTER = ("tcp.len > 0 or tcp.flags.syn == 1 or tcp.flags.fin == 1 "
                 "or tcp.analysis.lost_segment")
TSHARK_FIELDS = ("frame.time_epoch", "tcp.stream", "tcp.srcport", "tcp.dstport", "tcp.flags", "tcp.len",
                 "tcp.seq", "tcp.analysis.retransmission", "tcp.analysis.fast_retransmission",
                 "tcp.analysis.spurious_retransmission", "tcp.analysis.out_of_order",
                 "tcp.analysis.lost_segment")
#: tshark's preferences, stated rather than taken from whatever profile the host has: no reassembly
#: (our captures keep 96 bytes of each packet), relative sequence numbers, sequence analysis on; and
#: nothing computed that no column asks for: bytes in flight (tcp.analysis.bytes_in_flight, worked out
#: for every packet) and the TCP summary line in the tree.  Without those
#: two, the 64 captures tshark checks in Table 1 at ITER=10 took 142 s of CPU, not 159 s, every
#: line of tshark's output the same (an AMD EPYC without AVX-512, 7 Dec 2026).
TSHARK_PREFS = ("tcp.desegment_tcp_streams:FALSE", "tcp.relative_sequence_numbers:TRUE",
                "tcp.analyze_sequence_numbers:TRUE", "tcp.calculate_timestamps:FALSE",
                "tcp.track_bytes_in_flight:FALSE", "tcp.summary_in_tree:FALSE")


def field_columns() -> str:
    """TSHARK_FIELDS as tshark's columns (its `gui.column.format` preference), one a field, each
    field's first occurrence and its value unresolved, printed tab-separated by `-T tabs`.

    Why columns and not `-T fields -e`: for fields, tshark 4.0 builds every packet's whole protocol
    tree and walks it for each field it prints, looking each node up by name; a column asks the
    dissectors for its field alone.  On a Table 1 capture of 159k packets: 2.9 s of CPU as fields,
    1.5 s as columns (an AMD EPYC, 6 Dec 2026), every line the same but two spellings, both read
    alike by parse_tshark_fields: a flag present is "1" as a field and "✓" as a column, and
    tcp.flags is "0x0010" as a field and "0x010" as a column."""
    return ",".join(f'"{f}","%Cus:{f}:0:U"' for f in TSHARK_FIELDS)
SYN, ACK, FIN = 0x02, 0x10, 0x01


def payload_as_data(ports: list[int]) -> str:
    """tshark's decode-as for our flows' payload: plain data.  Without it tshark offers every segment's
    payload to each of its heuristic dissectors registered on TCP (some eighty) before calling it data;
    with it, one fifth of its CPU is saved (3.4 -> 2.7 s for a Table 1 capture of 160k packets, on an AMD
    EPYC, 5 Dec 2026), and the fields it prints, all TCP's own, are the same line for line (40 captures
    of E1, E2, E4, E10 and Table 1 compared whole)."""
    return f"tcp.port=={min(ports)}-{max(ports)},data"


@functools.cache
def tshark_version() -> str | None:
    """tshark's version ("4.0.17"), or None when it is not installed (asked once a process)."""
    if not shutil.which("tshark"):
        return None
    res = subprocess.run(["tshark", "--version"], capture_output=True, text=True)
    first = (res.stdout.splitlines() or [""])[0]  # "TShark (Wireshark) 4.0.17 (Git v4.0.17 ...)."
    words = first.split()
    return words[2] if len(words) > 2 else first


def _us(ts: float | None) -> int | None:
    return None if ts is None else round(ts * 1e6)


def our_view(path: Path, ports: list[int]) -> dict[int, dict]:
    """Each port's figures from our parser."""
    return {p: {"syn_us": _us(f.syn_ts), "first_data_us": _us(f.first_data_ts),
                "last_new_data_us": _us(f.last_new_data_ts), "data_segments": f.data_segments,
                "retransmitted_segments": f.retransmitted_segments, "holes": f.holes, "bytes": f.seq_span}
            for p, f in analyse_pcap_ports(path, ports).items()}


def _epoch_us(text: str) -> int:
    """frame.time_epoch ("1767226078.680063000") in whole microseconds, without a float."""
    sec, _, frac = text.partition(".")
    return int(sec) * 1_000_000 + int((frac + "000000")[:6])


def parse_tshark_fields(lines, ports: list[int]) -> dict[int, dict]:
    """Each port's figures from tshark's lines of TSHARK_FIELDS, tab-separated (field_columns): a
    flag (the tcp.analysis ones) is set where its column is not empty, whatever it says."""
    wanted = set(ports)
    view = {p: {"syn_us": None, "first_data_us": None, "last_new_data_us": None, "data_segments": 0,
                "retransmitted_segments": 0, "holes": 0, "bytes": 0, "streams": 0} for p in ports}
    streams: dict[int, dict[str, dict]] = {p: {} for p in ports}
    for line in lines:
        cols = line.rstrip("\n").split("\t")
        if len(cols) < len(TSHARK_FIELDS):
            continue
        ts, stream, sport, dport, flags, seglen, seq, rtx, fast, spurious, ooo, lost = cols[:len(TSHARK_FIELDS)]
        sport, dport, flags = int(sport), int(dport), int(flags, 16)
        if flags & SYN and not flags & ACK and dport in wanted:
            v = view[dport]
            v["syn_us"] = v["syn_us"] if v["syn_us"] is not None else _epoch_us(ts)
            continue
        if sport not in wanted:
            continue
        v, s = view[sport], streams[sport].setdefault(stream, {"synack": False, "top": 0})
        if flags & SYN:
            s["synack"] = True
            continue
        if lost:
            v["holes"] += 1
        n = int(seglen or 0)
        if n <= 0:
            continue
        t = _epoch_us(ts)
        v["data_segments"] += 1
        if v["first_data_us"] is None:
            v["first_data_us"] = t
        if rtx or fast or spurious or ooo:
            v["retransmitted_segments"] += 1
        else:
            v["last_new_data_us"] = t
        s["top"] = max(s["top"], int(seq) + n)
    for p in ports:
        # Relative sequence numbers start at the SYN's 0 when the SYN-ACK was seen, else at the
        # first segment's 0.
        view[p]["bytes"] = sum(s["top"] - (1 if s["synack"] else 0) for s in streams[p].values())
        view[p]["streams"] = len(streams[p])
    return view


def senders_frames(ports: list[int]) -> str:
    """The frames tshark is given, as a libpcap filter that tcpdump applies before tshark dissects any:
    every frame from the flows' server ports (the senders), and towards them SYNs, FINs and segments
    with data.  What is left out is the receivers' pure ACKs, from which no figure is read: tshark
    classifies a retransmission by the sender's own sequence numbers, and where ACKs would have
    made it "fast" or "spurious" or "out-of-order" instead, the four flags are counted together.
    Shown, not assumed: the 64 captures Table 1 checked at ITER=10 checked again this way (an Intel
    Xeon, 7 Dec 2026), every check the same as the one recorded without the filter, the checks' child
    processes' CPU 82.4 -> 60.3 s (gzip's and tcpdump's included).
    The senders' own pure ACKs stay: tshark flags a hole on the next frame a sender sends, which
    may carry no data (two flows' holes differed by one when the filter dropped them too)."""
    tcp_payload = "(ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2)) > 0"
    return (f"tcp src portrange {min(ports)}-{max(ports)} or tcp[tcpflags] & (tcp-syn|tcp-fin) != 0 "
            f"or {tcp_payload}")


def senders_frames_pipe(path: Path, ports: list[int]) -> list[tuple[str, subprocess.Popen]]:
    """The processes that give the frames of the capture at @path that senders_frames keeps, started:
    gzip for a .pcap.gz (tcpdump reads no gzip), then tcpdump; the last one's stdout is a pcap."""
    stages: list[tuple[str, subprocess.Popen]] = []
    if path.suffix == ".gz":
        stages.append(("gzip", subprocess.Popen(["gzip", "-dc", "--", str(path)], stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE)))
    with stages[-1][1].stdout if stages else open(path, "rb") as feed:
        stages.append(("tcpdump", subprocess.Popen(["tcpdump", "-n", "-r", "-", "-w", "-", senders_frames(ports)],
                                                   stdin=feed, stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    return stages


def tshark_view(path: Path, ports: list[int]) -> dict[int, dict]:
    """Each port's figures from tshark's own analysis of the capture at @path (pcap or .pcap.gz), of
    the frames senders_frames keeps when @ports are named."""
    path = stored_capture(path)
    if not path.exists():
        raise FileNotFoundError(f"no capture at {path}")
    # Without tcpdump (a node with tshark alone), tshark reads every frame: the same figures, more CPU.
    stages = senders_frames_pipe(path, ports) if ports and shutil.which("tcpdump") else []
    cmd = ["tshark", "-r", "-" if stages else str(path), "-n", "-Y", TSHARK_FILTER, "-T", "tabs"]
    for pref in (*TSHARK_PREFS, f"gui.column.format:{field_columns()}"):
        cmd += ["-o", pref]
    if ports:
        cmd += ["-d", payload_as_data(ports)]
    feed = stages[-1][1].stdout if stages else None
    proc = subprocess.Popen(cmd, stdin=feed, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if feed is not None:
        feed.close()  # tshark holds it now: an early exit of tshark then ends tcpdump too
    view = parse_tshark_fields(proc.stdout, ports)
    # tshark's failure first: the stages before it may have died only of its going (a broken pipe).
    # Each one's stderr read before it is waited for: a full stderr pipe would hold it up.
    ends = [("tshark", proc.stderr.read(), proc)]
    ends += [(name, stage.stderr.read().decode(errors="replace"), stage) for name, stage in stages]
    failed = [(name, code, err) for name, err, stage in ends if (code := stage.wait()) != 0]  # every one reaped
    if failed:
        name, code, err = failed[0]
        raise RuntimeError(f"{name} failed on {path} (exit {code}): {err.strip()[-500:]}")
    return view


def differences(ours: dict, theirs: dict) -> list[str]:
    """The figures on which one flow's two views differ, each as "figure ours/tshark"."""
    return [f"{k} {ours.get(k)}/{theirs.get(k)}" for k in FIGURES if ours.get(k) != theirs.get(k)]


def timed_tshark_view(path: Path, ports: list[int]) -> tuple[dict[int, dict], float]:
    """tshark_view and the wall seconds it took."""
    t0 = time.monotonic()
    view = tshark_view(path, ports)
    return view, time.monotonic() - t0


def check_capture(path: Path, ports: list[int], version: str | None = None,
                  theirs: tuple[dict[int, dict], float] | None = None) -> dict:
    """Both views of every flow in the capture at @path, and whether they agree.

    {"tool": "tshark", "version", "agree", "flows": [{"port", "ours", "tshark", "differences"}]},
    or {"tool", "skipped": why, "agree": None} without tshark: the same bytes for the same capture
    (tshark's wall time is the caller's to keep: timed_tshark_view).  @theirs: timed_tshark_view's
    answer, when it was run already (sslab.experiment.archive runs it beside the trace's read-out)."""
    version = version or tshark_version()
    if version is None:
        return {"tool": "tshark", "version": None, "skipped": "tshark is not installed", "agree": None}
    view, _seconds = theirs or timed_tshark_view(path, ports)
    ours = our_view(path, ports)
    flows = [{"port": p, "ours": ours[p], "tshark": view[p], "differences": differences(ours[p], view[p])}
             for p in ports]
    return {"tool": "tshark", "version": version, "agree": not any(f["differences"] for f in flows), "flows": flows}


def agreement_line(runs: list[dict], unchecked_why: str = "not asked for") -> str:
    """The report's line: how many runs' captures tshark checked and how many agreed, per flow
    (@unchecked_why: why some were not, when some were not)."""
    checks = [r.get("capture_check") for r in runs if r.get("pcap")]
    done = [c for c in checks if c and c.get("agree") is not None]
    if not checks:
        return "- captures: none recorded, so none checked by tshark"
    versions = sorted({c["version"] for c in done})
    if not done:
        why = next((c["skipped"] for c in checks if c and c.get("skipped")), unchecked_why)
        return f"- captures checked by tshark: none of {len(checks)} ({why})"
    agreed = sum(1 for c in done if c["agree"])
    flows = sum(len(c["flows"]) for c in done)
    bad = [f"{r['tag']} port {f['port']}: {', '.join(f['differences'])}" for r in runs
           for f in (r.get("capture_check") or {}).get("flows", []) if f["differences"]]
    line = (f"- captures checked by tshark {', '.join(versions)}: {agreed} of {len(done)} runs agree with our"
            f" parser on every flow ({flows} flows; syn, first and last new data, data segments,"
            f" retransmissions, holes, bytes){'' if len(done) == len(checks) else f'; {len(checks) - len(done)} not checked ({unchecked_why})'}")
    if bad:
        line += "; DIFFER: " + "; ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    return line


def _ms(us: int | None, origin: int | None) -> str:
    return "–" if us is None or origin is None else f"{(us - origin) / 1000:.3f}"


def flows_table(tag: str, check: dict) -> list[str]:
    """Markdown rows, a flow each: our figures and tshark's side by side (times in ms from the flow's
    SYN: first data, last new data), and whether they agree."""
    rows = []
    for f in check.get("flows", []):
        cells = []
        for view in (f["ours"], f["tshark"]):
            syn = view["syn_us"]
            cells.append(f"{_ms(view['first_data_us'], syn)} / {_ms(view['last_new_data_us'], syn)} | "
                         f"{view['data_segments']} | {view['retransmitted_segments']} | {view['holes']} | "
                         f"{view['bytes']}")
        verdict = "agree" if not f["differences"] else "DIFFER: " + ", ".join(f["differences"])
        rows.append(f"| {tag} | {f['port']} | {cells[0]} | {cells[1]} | {verdict} |")
    return rows


FLOWS_TABLE_HEAD = ["| run | port | ours: first / last new data (ms from SYN) | segments | retransmitted | holes | "
                    "bytes | tshark: first / last new data | segments | retransmitted | holes | bytes | |",
                    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
