"""Finishing a run's archive on the host, after the substrate's job.

The guest leaves each run's trace as the ring buffer's pages
(`<tag>.trace.rb`; an older guest, the text ftrace wrote, `<tag>.trace`) and
a run.json with what it measured.  Here, for every run: the trace is read
once, what it says per flow (slow start's end, receiver-limited ACKs, the
module's events) is added to run.json, and the trace is compressed
(`<tag>.trace.rb.gz`), the names the module's events print written into
its header (sslab.analysis.ringbuf).  On a varying link the link's fidelity
(rate against the trace, queue) and the bursts seen at the client are added
(sslab.analysis.link).  The capture, when there is one and it is asked for, is
read by tshark as well as by our parser, per flow (sslab.analysis.capturecheck):
the two views go in run.json's capture_check, their agreement in its fidelity
(capture_ok).  Under a UML kernel with the spin guard, the ticks it charged
during the run's traffic, counted from the boot's console, go in its
fidelity too (spin_guard_charges; sslab.substrate.spinguard).
Every field the guest wrote stays as it was; run.json is replaced by one
rename.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from isal import igzip

from .. import ccas
from ..records import read_record, read_runs_index
from ..analysis.capturecheck import check_capture, timed_tshark_view, tshark_version
from ..analysis import ringbuf
from ..analysis.link import arrival_bursts, burst_summary, replay_fidelity
from ..analysis.traces import ringbuf_facts, trace_facts
from ..substrate.spinguard import Charge, console_charges, during

#: How hard captures and traces are compressed: ISA-L's level 2 (see gzip_in_place; of its levels
#: 1 and 2, as fast as each other, the smaller output).
GZIP_LEVEL = 2
#: tshark processes reading a job's captures at once (complete_runs): a testbed's job has ended when
#: they run, and a matrix's other slots are busy in their own processes.
TSHARK_READERS = 2
#: Per-flow fields that come from the trace (absent or empty when a run was not traced).
NO_TRACE = {"slow_start": None, "probe_records": 0, "server_fct_s": None, "receiver_limited_acks": 0, "events": [], "bbr3": []}


def gzip_in_place(raw: Path) -> Path:
    """Replace @raw by @raw.gz, reproducibly: the same bytes in give the same bytes out.

    The gzip header keeps a name and a time; the time is 0, so the archive of
    a run is a function of the run, not of when it was made.  Deflated by
    ISA-L (python-isal's igzip: a gzip file any gzip reads) at its level 2
    (GZIP_LEVEL), not by zlib: a Table 1 run's 31.7 MB trace took 0.020 s of
    CPU against zlib level 1's 0.082 (2.72 MB against 2.65), its 16.7 MB
    capture 0.021 s against 0.106 (3.29 MB against 3.01), on the AMD EPYC
    (6 Dec 2026): 0.29 s of a Table 1 cell's 5.3.  ISA-L picks its code by
    the CPU; levels 0-2 gave the same bytes on this AVX-512 host and, under
    qemu-user, as a Haswell (AVX2) and a Nehalem (SSE4.2), and other bytes
    only on QEMU's bare x86-64 model, without SSE4.2 (level 3 differs from
    one CPU to the next): sslab.analysis.samebytes compares archives by
    what they hold, not by their compressed bytes.
    """
    with open(raw, "rb") as src:
        return _gzip_as(raw, lambda dst: shutil.copyfileobj(src, dst, 1 << 20))


def gzip_bytes(data: bytes, raw: Path) -> Path:
    """gzip_in_place's file for @raw made from @data (what @raw holds, amended), @raw removed."""
    return _gzip_as(raw, lambda dst: dst.write(data))


def _gzip_as(raw: Path, write) -> Path:
    """@raw.gz, its content written by @write into the gzip stream (gzip_in_place's header and level),
    then @raw removed."""
    packed = raw.with_name(raw.name + ".gz")
    tmp = packed.with_name(f".{packed.name}.tmp")
    with open(tmp, "wb") as out, \
            igzip.IGzipFile(filename=raw.name, fileobj=out, mode="wb", compresslevel=GZIP_LEVEL, mtime=0) as dst:
        write(dst)
    os.replace(tmp, packed)
    raw.unlink(missing_ok=True)
    return packed


@functools.cache
def event_names() -> list[str]:
    """The names the module's `sslab_event` prints, by type number (the declarations' order)."""
    return [e.name for e in ccas.parse_trace_declarations()[1]]


def complete_run(run_dir: Path, check_captures: bool = True, tshark: Future | None = None,
                 timing: dict | None = None, guard: list[Charge] | None = None) -> dict:
    """Finish one run's record (the module's docstring); @check_captures: tshark reads its capture
    (@tshark: that reading, started already: timed_tshark_view's future).  tshark's wall seconds
    are added to @timing["capture_check_seconds"], never to the record: a run's record is the
    same bytes wherever and whenever it is finished.  @guard: the spin guard's charges in the boot
    (None: a kernel without the guard)."""
    path = run_dir / "run.json"
    run = read_record(path, "sslab.run")
    trace = run.get("trace")
    # A record that names the compressed trace was finished before (a read-out interrupted after it and
    # run again): its flows keep the facts they have.  One that names the raw trace was not, even if
    # the trace was compressed already (the read-out stopped between the two): it is read from that.
    traced = trace is not None and not trace.endswith(".gz")
    if traced:
        raw = run_dir / trace
        text = raw.read_bytes() if raw.exists() else igzip.decompress((run_dir / f"{trace}.gz").read_bytes())
        ports = [f["port"] for f in run["flows"]]
        if ringbuf.is_ringbuf(raw):
            text = ringbuf.with_header(text, event_names=event_names())
            pages = ringbuf.parse(text)
            facts = ringbuf_facts(pages, ports)
            if pages.missed:
                # Overwritten before the run's end (a ring buffer too small for the run): the facts
                # miss those events, and the record says how many there were.
                run["trace_lost_events"] = pages.missed
        else:
            facts = trace_facts(text, ports)
        for flow in run["flows"]:
            flow.update(facts[flow["port"]])
    elif trace is None:
        for flow in run["flows"]:
            flow.update(NO_TRACE)
    if run.get("link_replay") and "link_fidelity" not in run:
        run["link_fidelity"] = replay_fidelity(run["link_replay"])
        run.setdefault("fidelity", {})["link_ok"] = run["link_fidelity"]["ok"]
    if run.get("client_pcap") and "link_bursts" not in run and (run_dir / run["client_pcap"]).exists():
        run["link_bursts"] = burst_summary(arrival_bursts(run_dir / run["client_pcap"],
                                                          {f["port"] for f in run["flows"]}))
    if check_captures and needs_capture_check(run):
        ports = [f["port"] for f in run["flows"]]
        try:
            theirs = tshark.result() if tshark else timed_tshark_view(run_dir / run["pcap"], ports)
            run["capture_check"] = check_capture(run_dir / run["pcap"], ports, theirs=theirs)
            if timing is not None:
                timing["capture_check_seconds"] = timing.get("capture_check_seconds", 0.0) + theirs[1]
        except (RuntimeError, OSError) as e:
            run["capture_check"] = {"tool": "tshark", "error": str(e)[-500:], "agree": False}
        if run["capture_check"]["agree"] is not None:
            run.setdefault("fidelity", {})["capture_ok"] = run["capture_check"]["agree"]
    if guard is not None and "started_unix" in run:
        run.setdefault("fidelity", {})["spin_guard_charges"] = during(guard, run["started_unix"],
                                                                      run["started_unix"] + run["seconds"])
    if traced:
        if ringbuf.is_ringbuf(raw):
            gzip_bytes(text, raw)
        elif raw.exists():
            gzip_in_place(raw)
        run["trace"] = trace + ".gz"
    tmp = path.with_name(".run.json.tmp")
    tmp.write_text(json.dumps(run, indent=1))
    os.replace(tmp, path)
    return run


def needs_capture_check(run: dict) -> bool:
    return bool(run.get("pcap")) and "capture_check" not in run and tshark_version() is not None


def complete_runs(out_dir: Path, check_captures: bool = True, timing: dict | None = None,
                  spin_guard: bool = False) -> int:
    """Finish every run listed in @out_dir/runs.json; return how many (tshark's wall seconds in all
    added to @timing, see complete_run).  @spin_guard: the job's UML kernel has the spin guard (its
    charges are read from the boot's console, beside @out_dir).

    tshark reads the captures from threads of their own (TSHARK_READERS at once), ahead of this one
    reading the traces: its CPU time (processes of its own) overlaps ours.  Measured on E1 (40 runs,
    one boot, 26 Nov 2026): the host's read-out took 40.3 s with tshark after each trace (29.0 s
    of it tshark), 29.8 s with one reader beside it, 17.9 s with two."""
    index = read_runs_index(out_dir / "runs.json") if (out_dir / "runs.json").exists() else []
    guard = console_charges(out_dir.parent) if spin_guard else None
    runs = {e["tag"]: read_record(out_dir / "runs" / e["tag"] / "run.json", "sslab.run") for e in index}
    with ThreadPoolExecutor(max_workers=TSHARK_READERS) as pool:
        readings = {tag: pool.submit(timed_tshark_view, out_dir / "runs" / tag / run["pcap"],
                                     [f["port"] for f in run["flows"]])
                    for tag, run in runs.items() if check_captures and needs_capture_check(run)}
        for entry in index:
            complete_run(out_dir / "runs" / entry["tag"], check_captures, readings.get(entry["tag"]), timing, guard)
    return len(index)
