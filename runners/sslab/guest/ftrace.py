"""Record kernel tracepoints with ftrace.  Runs on the substrate.

Four events are recorded per run:
  tcp:tcp_probe       the stack's per-ACK view, for any congestion control
                      (including the kernel's own cubic and bbr);
  sslab:sslab_ack     our module's per-ACK view (round, min RTTs, state);
  sslab:sslab_event   our module's algorithm events;
  sslab:sslab_bbr3    bbr3's state at each round and each change of state.
Records are filtered to the experiment's server ports at the source.  A
run's trace is the ring buffer's pages as the kernel holds them, copied out
of per_cpu/cpuN/trace_pipe_raw with the format files that say what they
hold (`<tag>.trace.rb`, laid out as sslab.analysis.ringbuf says): the guest
formats nothing.  Reading, the per-flow facts and compressing are the
host's (sslab.analysis.ringbuf, sslab.analysis.traces).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import struct
import sys
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
#: Per-CPU ring buffer (KiB).  A Table 1 run fills about 12 MB of it (124k events of 60-128 bytes
#: with their headers); past this the oldest pages are overwritten, and the host counts what was lost.
BUFFER_KB = 32768
#: The first line of a run's trace file (sslab.analysis.ringbuf.MAGIC: the host's reader checks it).
RINGBUF_MAGIC = b"sslab-ringbuf 1\n"
#: The pipe the pages pass through on their way to the file: a splice() moves as many pages as the
#: pipe holds, so a larger one takes fewer calls (each a round trip through the host under UML).
PIPE_BYTES = 1 << 20


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
        #: What a run's trace file says of its pages (the header of sslab.analysis.ringbuf), read once.
        self.header: bytes = b""

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
        self.header = self._header()

    def _header(self) -> bytes:
        """The trace file's first two lines: what the pages are and what the events in them hold."""
        events = self.root / "events"
        header = {"page_size": os.sysconf("SC_PAGE_SIZE"), "byteorder": sys.byteorder,
                  "header_page": (events / "header_page").read_text(),
                  "header_event": (events / "header_event").read_text(),
                  "formats": {f"{ev.parent.name}/{ev.name}": (ev / "format").read_text()
                              for d in self.enabled
                              for ev in ([d] if (d / "format").is_file() else sorted(d.iterdir()))
                              if (ev / "format").is_file()},
                  "cpus": self._cpus()}
        return RINGBUF_MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n"

    def _cpus(self) -> list[int]:
        return sorted(int(p.name[3:]) for p in (self.root / "per_cpu").iterdir() if p.name[3:].isdigit())

    def start(self, port: int | None = None, last_port: int | None = None) -> None:
        """Start recording a run (setting up on first use, for the given ports)."""
        if not self.enabled:
            self.setup(port if port is not None else 5201, last_port)
        self._w("trace", "")
        self._w("tracing_on", "1")

    def stop(self, dest: Path) -> int:
        """Stop recording and copy the ring buffer's pages to @dest; return how many (0: no event,
        and no file)."""
        self._w("tracing_on", "0")
        pages = 0
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(out, self.header)
            for cpu in self._cpus():
                pages += copy_pages(self.root / "per_cpu" / f"cpu{cpu}" / "trace_pipe_raw", out)
        finally:
            os.close(out)
        self._w("trace", "")
        if pages == 0:
            dest.unlink()
        return pages

    def close(self) -> None:
        """Stop recording at the end of a job.

        The events stay enabled: disabling patches kernel text too, and the
        VM powers off after the job anyway (on a native host the events stay
        on, filtered to the experiment ports, until tracing is reset).
        """
        self._w("tracing_on", "0")


def copy_out(src: BinaryIO, out: BinaryIO) -> int:
    """Copy @src from its position to its end onto @out's (flushed), in the kernel; return the bytes
    copied.  For a kept capture's spool (sslab.guest.capture), and tracefs's text `trace` file,
    which the tests read beside the pages a run copies (copy_pages).

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


def copy_pages(src: Path, out: int) -> int:
    """Append one CPU's ring-buffer pages, read (consumed) from its trace_pipe_raw @src, to the file
    open at descriptor @out: their count (u64, little-endian), then the pages.  Return the count.

    Full pages by splice() through a pipe: the kernel hands over its own pages, a pipe's worth a
    call, unformatted and uncopied (sendfile() from trace_pipe_raw is refused, EINVAL, on UML's
    6.1: 7 Dec 2026).  splice() gives only full pages; the last, partly filled, comes by read(),
    which returns a page a call.  Non-blocking: when nothing is left the kernel says EAGAIN rather
    than waiting for events."""
    page = os.sysconf("SC_PAGE_SIZE")
    count_at = os.lseek(out, 0, os.SEEK_CUR)
    os.write(out, struct.pack("<Q", 0))
    pages = 0
    fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK)
    r, w = os.pipe()
    try:
        try:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:
            pass                      # a pipe of the default size: more calls, the same pages
        while True:
            try:
                n = os.splice(fd, w, PIPE_BYTES, flags=os.SPLICE_F_NONBLOCK)
            except BlockingIOError:
                break
            if n == 0:
                break
            left = n
            while left:
                left -= os.splice(r, out, left)
            pages += n // page
        while True:
            try:
                chunk = os.read(fd, page)
            except BlockingIOError:
                break
            if not chunk:
                break
            os.write(out, chunk)
            pages += 1
    finally:
        os.close(r)
        os.close(w)
        os.close(fd)
    os.pwrite(out, struct.pack("<Q", pages), count_at)
    return pages
