"""A run's packet capture: tcpdump on a device of a namespace, headers only."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from .dumbbell import Dumbbell


#: Without immediate mode libpcap hands packets over in ring blocks, when a
#: block is full or after tcpdump's 1 s buffer timeout: waiting this long
#: before stopping it lets the last block through.
PCAP_DRAIN_S = 1.2


class Pcap:
    """tcpdump on the bottleneck device (inside r1) or another (ns, dev), headers only.

    Two modes, recorded with every run (observers shift a chaotic run's
    trajectory: compare only runs captured the same way):
      immediate  (real clocks) every packet is handed over at once, so a
                 short flow is not lost when tcpdump stops; tcpdump wakes
                 for every packet;
      buffered   (virtual time) packets come in ring blocks, and the capture
                 waits PCAP_DRAIN_S of guest time, which costs no wall time,
                 before stopping.  Under UML a wake-up per packet cost 9 s of
                 wall time in an E7 run.  The file is written in blocks of
                 WRITE_BUFFER, not a write() per packet (-U) nor one per
                 block of the file system (1 KB on UML's hostfs): under UML
                 each write is a system call through the host's ptrace, ~190k
                 and ~19k of them per E7 run; the file is whole once tcpdump
                 exits.
    """

    #: tcpdump's output buffer in buffered mode.
    WRITE_BUFFER = "256K"

    def __init__(self, db: Dumbbell, path: Path, snaplen: int, immediate: bool = True,
                 where: tuple[str, str] | None = None):
        self.immediate = immediate
        ns, dev = where or (db.r1, db.bottleneck_dev)
        # -Z root: keep the capture file root's (tcpdump would hand it to its own user, a uid
        # that means someone else on the host that owns the job directory).
        tcpdump = ["tcpdump", "-Z", "root", "-i", dev, "-n", "-s", str(snaplen)]
        if immediate:
            argv = [*tcpdump, "-U", "--immediate-mode", "-w", str(path), "tcp"]
            self.proc = db.launcher.popen(ns, argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        else:
            # To stdout, given stdio's buffer of WRITE_BUFFER by stdbuf: stdio would write a file
            # it opened in blocks of the file system's size.
            argv = ["stdbuf", "-o", self.WRITE_BUFFER, *tcpdump, "-w", "-", "tcp"]
            with open(path, "wb") as out:
                self.proc = db.launcher.popen(ns, argv, stdout=out, stderr=subprocess.PIPE, text=True)
        # "listening on ..." once capturing; on "any", its link type and a warning first.
        said = []
        line = self.proc.stderr.readline()
        while line and "listening" not in line and len(said) < 4:
            said.append(line.strip())
            line = self.proc.stderr.readline()
        if "listening" not in line:
            self.proc.kill()  # it may be running: its stderr ends only with it
            raise RuntimeError(f"tcpdump did not start: {' '.join(said)} {self.proc.stderr.read()[-300:]}")

    @property
    def mode(self) -> str:
        return "immediate" if self.immediate else "buffered"

    def stop(self) -> str:
        if not self.immediate:
            time.sleep(PCAP_DRAIN_S)
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        return err.strip()


def dropped_by_kernel(note: str | None) -> int | None:
    """tcpdump's own count of packets it could not keep up with."""
    for line in (note or "").splitlines():
        if line.endswith("packets dropped by kernel"):
            return int(line.split()[0])
    return None
