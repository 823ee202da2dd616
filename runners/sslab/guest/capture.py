"""A run's packet capture: tcpdump on a device of a namespace, headers only (start_capture)."""

from __future__ import annotations

import os
import re
import select
import signal
import struct
import subprocess
import time
from pathlib import Path
from typing import BinaryIO

from .dumbbell import Dumbbell
from .ftrace import copy_out


#: Without immediate mode libpcap hands packets over in ring blocks, when a
#: block is full or after tcpdump's 1 s buffer timeout: waiting this long
#: before taking a run's packets lets the last block through.
PCAP_DRAIN_S = 1.2
#: Guest seconds between asking tcpdump to write out what it holds and asking its counts.  Under
#: virtual time a process a signal wakes runs before the clock moves on, so one wait is enough and
#: costs no wall time; a short one keeps the flush's signal apart from the counts' (pending
#: together, the kernel would hand SIGUSR1 over first).
FLUSH_WAIT_S = 0.05
#: Where a kept capture spools between two runs' takes: the guest's own tmpfs.
SPOOL_DIR = Path("/tmp")
#: A classic pcap file's header, which a kept capture's first take holds and each later take is given.
PCAP_HEADER_BYTES = 24
#: tcpdump's counts, on SIGUSR1 ("tcpdump: 12 packets captured, 24 packets received by filter, ...")
#: and at its exit (a line each).
_COUNT = re.compile(r"(\d+) packets? (captured|received by filter|dropped by kernel|dropped by interface)")


def _tcpdump(ns_dev: tuple[str, str], snaplen: int) -> list[str]:
    # -Z root: keep the capture file root's (tcpdump would hand it to its own user, a uid that means
    # someone else on the host that owns the job directory).
    return ["tcpdump", "-Z", "root", "-i", ns_dev[1], "-n", "-s", str(snaplen)]


def _wait_listening(proc: subprocess.Popen) -> None:
    """Return once tcpdump says it is capturing ("listening on ..."; on "any", its link type and a
    warning first)."""
    said = []
    line = proc.stderr.readline()
    while line and "listening" not in line and len(said) < 4:
        said.append(line.strip())
        line = proc.stderr.readline()
    if "listening" not in line:
        proc.kill()  # it may be running: its stderr ends only with it
        raise RuntimeError(f"tcpdump did not start: {' '.join(said)} {proc.stderr.read()[-300:]}")


def start_capture(db: Dumbbell, path: Path, snaplen: int, immediate: bool = True,
                  where: tuple[str, str] | None = None) -> Pcap | KeptCaptureTake:
    """A run's capture into @path, of the bottleneck device (inside r1) or @where (ns, dev).

    Two modes, recorded with every run (observers shift a chaotic run's trajectory: compare only runs
    captured the same way):
      immediate  (real clocks) every packet is handed over at once, so a short flow is not lost when
                 tcpdump stops; tcpdump wakes for every packet; a tcpdump a run (Pcap);
      buffered   (virtual time) packets come in ring blocks and are written in blocks of
                 KeptCapture.WRITE_BUFFER; one tcpdump a device for the boot, each run taking the
                 packets since the last (KeptCapture)."""
    ns_dev = where or (db.r1, db.bottleneck_dev)
    if immediate:
        return Pcap(db, path, snaplen, ns_dev)
    key = (*ns_dev, snaplen)
    kept = db.kept_captures.get(key)
    if kept is None or kept.proc.poll() is not None:
        kept = db.kept_captures[key] = KeptCapture(db, ns_dev, snaplen)
    return KeptCaptureTake(kept, path)


class Pcap:
    """tcpdump for one run, in immediate mode, each packet written as it comes (-U)."""

    mode = "immediate"

    def __init__(self, db: Dumbbell, path: Path, snaplen: int, ns_dev: tuple[str, str]):
        argv = [*_tcpdump(ns_dev, snaplen), "-U", "--immediate-mode", "-w", str(path), "tcp"]
        self.proc = db.launcher.popen(ns_dev[0], argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _wait_listening(self.proc)

    def stop(self) -> str:
        """Stop it; tcpdump's note of its counts."""
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        return err.strip()


class KeptCapture:
    """tcpdump kept for the boot on one device, under virtual time: a run takes the packets written
    since the run before it, so that a run starts and stops no capture of its own (a tcpdump's start,
    two processes exec'd under UML's ptrace, and its end were most of a Table 1 run's set-up and a
    part of its end; 2026-12-07 in docs/notebook/cost.md).

    tcpdump writes to a spool on the guest's tmpfs, opened for appending, in blocks of WRITE_BUFFER
    (its standard output given that buffer by stdbuf: under UML each write() is a system call through
    the host's ptrace; a write per packet, -U, was ~190k of them in an E7 run).  A take waits
    PCAP_DRAIN_S (the ring's last block), has tcpdump write out what it holds (SIGUSR2) and say its
    counts (SIGUSR1), copies the spool into the run's file (the first take holds the file's header,
    each later one is given it) and empties the spool, where tcpdump's next write lands at 0.  No
    TCP segment crosses the device between two runs (the fidelity checks' and the base RTTs' pings
    are ICMP, outside the filter), so each run's file holds its own packets and only them."""

    #: tcpdump's output buffer.
    WRITE_BUFFER = "256K"
    mode = "buffered"

    def __init__(self, db: Dumbbell, ns_dev: tuple[str, str], snaplen: int):
        self.spool = SPOOL_DIR / f"sslab-capture-{ns_dev[0]}-{ns_dev[1]}-{snaplen}.pcap"
        argv = ["stdbuf", "-o", self.WRITE_BUFFER, *_tcpdump(ns_dev, snaplen), "-w", "-", "tcp"]
        fd = os.open(self.spool, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        try:
            self.proc = db.launcher.popen(ns_dev[0], argv, stdout=fd, stderr=subprocess.PIPE, text=True)
        finally:
            os.close(fd)
        _wait_listening(self.proc)
        self.header: bytes | None = None
        #: tcpdump's counts at the last take.
        self.counts: dict[str, int] = {}

    def take(self, dest: Path, since: float) -> str:
        """The packets since the last take into @dest, a capture file of their own, but any stamped
        before @since (the run's start, guest wall clock: a segment of the run before, a FIN sent
        again, that came after that run's take); tcpdump's counts of them, in the words of its note
        at exit, and how many were left out."""
        time.sleep(PCAP_DRAIN_S)
        self.proc.send_signal(signal.SIGUSR2)
        time.sleep(FLUSH_WAIT_S)
        self.proc.send_signal(signal.SIGUSR1)
        counts = self._counts()
        # Unbuffered: sendfile copies from the descriptor's own position, where each seek puts it.
        with open(self.spool, "rb", buffering=0) as src, open(dest, "wb") as out:
            first = self.header is None
            if first:
                self.header = src.read(PCAP_HEADER_BYTES)
            early = records_before(src, self.header, PCAP_HEADER_BYTES if first else 0, since)
            out.write(self.header)
            out.flush()
            copy_out(src, out)
        os.truncate(self.spool, 0)
        note = [f"{n} packet{'' if n == 1 else 's'} {what}"
                for what, n in ((w, counts[w] - self.counts.get(w, 0)) for w in counts)]
        if early:
            note.append(f"{early} packet{'' if early == 1 else 's'} from before the run left out")
        self.counts = counts
        return "\n".join(note)

    def _counts(self) -> dict[str, int]:
        deadline = time.monotonic() + 30
        while select.select([self.proc.stderr], [], [], max(0.0, deadline - time.monotonic()))[0]:
            line = self.proc.stderr.readline()
            if not line:
                break
            if found := _COUNT.findall(line):
                return {what: int(n) for n, what in found}
        raise RuntimeError(f"tcpdump on {self.spool.name} said no counts (exit {self.proc.poll()})")

    def close(self) -> None:
        """End it (at the boot's end) and remove its spool."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()
        self.spool.unlink(missing_ok=True)


class KeptCaptureTake:
    """A run's share of a kept capture: its packets go to @path when the run stops it."""

    mode = KeptCapture.mode

    def __init__(self, kept: KeptCapture, path: Path):
        self.kept, self.path = kept, path
        self.since = time.time()

    def stop(self) -> str:
        return self.kept.take(self.path, self.since)


#: A classic pcap's record header (seconds, microseconds, bytes kept, bytes on the wire), by the byte
#: order its file's magic number says (tcpdump writes the host's).
_RECORD_HEADER = {b"\xd4\xc3\xb2\xa1": struct.Struct("<IIII"), b"\xa1\xb2\xc3\xd4": struct.Struct(">IIII")}


def records_before(src: BinaryIO, header: bytes, offset: int, since: float) -> int:
    """Move @src past the records from @offset on that are stamped before @since; how many.  Only
    the first few are read: a run's own packets follow them."""
    record = _RECORD_HEADER.get(header[:4])
    if record is None:
        raise RuntimeError(f"not a microsecond pcap from tcpdump: magic {header[:4].hex()}")
    early = 0
    while True:
        src.seek(offset)
        head = src.read(record.size)
        if len(head) < record.size:
            break
        sec, usec, kept, _wire = record.unpack(head)
        if sec + usec / 1e6 >= since:
            break
        early += 1
        offset += record.size + kept
    src.seek(offset)
    return early


def dropped_by_kernel(note: str | None) -> int | None:
    """tcpdump's own count of packets it could not keep up with, from its note (None: no count)."""
    counts = {what: int(n) for n, what in _COUNT.findall(note or "")}
    return counts.get("dropped by kernel")
