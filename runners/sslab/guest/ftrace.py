"""Record kernel tracepoints with ftrace.  Runs on the substrate.

Four events are recorded per run:
  tcp:tcp_probe       the stack's per-ACK view, for any congestion control
                      (including the kernel's own cubic and bbr);
  sslab:sslab_ack     our module's per-ACK view (round, min RTTs, state);
  sslab:sslab_event   our module's algorithm events;
  sslab:sslab_bbr3    bbr3's state at each round and each change of state.
Records are filtered to the experiment's server ports at the source.  The
trace text is copied to the run's directory as the kernel formats it;
parsing and compressing it is the host's (sslab.analysis.traces).
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import BinaryIO

TRACEFS = Path("/sys/kernel/tracing")
#: What a job records: the stack's per-ACK view and our module's events, or the stack's alone (the
#: view every congestion control has: a run of ours and one of the kernel's then have the same
#: observers; our events' extra records alone moved the next run's start by 1 us).
ALL_EVENTS = ("tcp/tcp_probe", "sslab")
STACK_EVENTS = ("tcp/tcp_probe",)
#: The most one sendfile() call is asked to copy: the kernel copies a pipe's worth (64 KB) at a time
#: until then or the file's end, so a run's trace (tens of MB) takes a call or two.
SENDFILE_CHUNK = 1 << 30
#: Per-CPU ring buffer (KiB).  A 20 MB flow makes ~30k records of ~250 B.
BUFFER_KB = 32768


class Ftrace:
    """Tracepoint recording for a job: set up once, then start/stop per run.

    Enabling or disabling a trace event patches kernel text (static calls),
    which waits for every CPU to acknowledge an IPI.  Under multi-threaded
    TCG that wait sometimes never ends: the guest locks up (we saw it in E1
    runs).  So events are enabled once per job, for a range of ports, never
    disabled, and a run only flips `tracing_on` and clears the buffer, which
    patch nothing.  (See VMConfig.cpus for the whole story.)
    """

    def __init__(self, root: Path = TRACEFS):
        self.root = root
        self.enabled: list[Path] = []

    def _w(self, rel: str, value: str) -> None:
        (self.root / rel).write_text(value)

    def setup(self, port: int, last_port: int | None = None,
              systems: tuple[str, ...] = ALL_EVENTS) -> None:
        """Enable @systems for connections whose local port is in [port, last_port]."""
        if self.enabled:
            return
        filt = f"sport == {port}" if last_port is None else f"sport >= {port} && sport <= {last_port}"
        self._w("tracing_on", "0")
        self._w("buffer_size_kb", str(BUFFER_KB))
        for sysname in systems:
            d = self.root / "events" / sysname
            if not d.is_dir():
                continue
            events = [d] if (d / "enable").is_file() and (d / "filter").is_file() else \
                [e for e in d.iterdir() if (e / "filter").is_file()]
            for ev in events:
                (ev / "filter").write_text(filt)
                (ev / "enable").write_text("1")
                self.enabled.append(ev)

    def start(self, port: int | None = None, last_port: int | None = None) -> None:
        """Start recording a run (setting up on first use, for the given ports)."""
        if not self.enabled:
            self.setup(port if port is not None else 5201, last_port)
        self._w("trace", "")
        self._w("tracing_on", "1")

    def stop(self, dest: Path) -> int:
        """Stop recording and copy the trace text to @dest; return its size in bytes (0: no file)."""
        self._w("tracing_on", "0")
        with open(self.root / "trace", "rb") as src, open(dest, "wb") as out:
            size = copy_out(src, out)
        self._w("trace", "")
        if size == 0 or not _has_events(dest):
            dest.unlink()
            return 0
        return size

    def close(self) -> None:
        """Stop recording at the end of a job.

        The events stay enabled: disabling patches kernel text too, and the
        VM powers off after the job anyway (on a native host the events stay
        on, filtered to the experiment ports, until tracing is reset).
        """
        self._w("tracing_on", "0")


def copy_out(src: BinaryIO, out: BinaryIO) -> int:
    """Copy @src from its position to its end onto @out's (flushed), in the kernel; return the bytes
    copied.  For tracefs's `trace` file and a kept capture's spool (sslab.guest.capture).

    The `trace` file is a seq_file whose buffer is a page: read() hands over at most a page a call,
    and under UML every call is a round trip through the host's ptrace (about 9.6k of them for a
    CUBIC run's 37 MB, 26 Nov 2026).  sendfile() splices the same reads through a pipe inside the
    kernel: one call, the same pages in the same order (the file's splice_read is the generic one
    over the same seq_file reads; it is `trace_pipe`'s own splice, not this, that drops records at
    a page's end, 30 Nov 2026).  Where the kernel refuses (a file system without splice), read()."""
    total = 0
    try:
        while n := os.sendfile(out.fileno(), src.fileno(), None, SENDFILE_CHUNK):
            total += n
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOSYS) or total:
            raise
        shutil.copyfileobj(src, out, 1 << 20)
        total = out.tell()
    return total


def _has_events(path: Path) -> bool:
    """Whether a copied trace holds any event line (not just ftrace's '#' header)."""
    with open(path, "rb") as f:
        return any(not line.startswith(b"#") and line.strip() for line in f)
