"""Following a testbed kernel's console: markers, phases and their deadlines (QEMU and UML alike).

The image's init prints markers on the console (``SSLAB:userspace``,
``SSLAB:shares-mounted``, ``SSLAB:agent-exit``, ``SSLAB:poweroff``), each
with the guest's uptime.  The host copies the console to a log, times the
boot with the markers and knows which phase a hang is in: every phase has a
deadline, and a kernel that misses one is killed and named.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

MARKER = re.compile(r"SSLAB:(?P<name>[a-z-]+)(?P<rest>.*?)\s*uptime=(?P<uptime>[0-9.]+)")

Marker = tuple[str, str, float, float]  # (name, rest of the line, guest uptime, host seconds since start)


class VMError(RuntimeError):
    pass


class VMHangError(VMError):
    def __init__(self, phase: str, waited: float, serial_log: Path):
        self.phase = phase
        self.waited = waited
        self.serial_log = serial_log
        super().__init__(
            f"VM hung in phase '{phase}': no progress after {waited:.0f} s; killed. "
            f"Serial console log: {serial_log}"
        )


class SerialReader(threading.Thread):
    """Copies the console to a log file and reports SSLAB markers."""

    def __init__(self, stream, log_path: Path, t0: float):
        super().__init__(daemon=True)
        self.stream = stream
        self.log_path = log_path
        self.t0 = t0
        self.markers: "queue.Queue[Marker]" = queue.Queue()

    def run(self) -> None:
        with open(self.log_path, "w", errors="replace") as log:
            for raw in iter(self.stream.readline, b""):
                line = raw.decode(errors="replace").rstrip("\r\n")
                t = time.monotonic() - self.t0
                log.write(f"{t:9.3f} {line}\n")
                log.flush()
                m = MARKER.search(line)
                if m:
                    self.markers.put((m["name"], m["rest"].strip(), float(m["uptime"]), t))
        self.markers.put(("eof", "", 0.0, time.monotonic() - self.t0))


class FileReader(SerialReader):
    """Follows a console that the kernel writes to a regular file (a UML's standard output).

    A pipe would let the host's reading speed reach the guest: a UML gets an
    interrupt whenever its output pipe becomes writable again, at a guest
    instant set by when the host got round to reading, and Linux mixes every
    interrupt's timing into its random pool.  A regular file is always
    writable, so the guest never waits on the host.  The log is the file
    itself (no host timestamps on its lines); the SSLAB lines (markers and
    phase marks) are copied with the host's time at which they were read to
    <log>.times, which shows where wall time went.
    """

    POLL_S = 0.05

    def __init__(self, path: Path, proc, t0: float):
        threading.Thread.__init__(self, daemon=True)
        self.log_path = path
        self.proc = proc
        self.t0 = t0
        self.markers: "queue.Queue[Marker]" = queue.Queue()

    def run(self) -> None:
        times = self.log_path.with_name(self.log_path.name + ".times")
        with open(self.log_path, "rb") as f, open(times, "w") as timed:
            pending = b""
            while True:
                exited = self.proc.poll() is not None
                chunk = f.read()
                if chunk:
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    t = time.monotonic() - self.t0
                    for raw in lines:
                        line = raw.decode(errors="replace")
                        if "SSLAB" in line:
                            timed.write(f"{t:9.3f} {line.strip()}\n")
                            timed.flush()
                        m = MARKER.search(line)
                        if m:
                            self.markers.put((m["name"], m["rest"].strip(), float(m["uptime"]), t))
                elif exited:
                    break
                else:
                    time.sleep(self.POLL_S)
        self.markers.put(("eof", "", 0.0, time.monotonic() - self.t0))


def job_phases(cfg, job_timeout_s: float) -> list[tuple[str, set[str], float]]:
    """The phases of a testbed boot that runs one job: (name, markers that end it, deadline s).

    @cfg has boot_timeout_s, shares_timeout_s, job_grace_s and poweroff_timeout_s
    (VMConfig, UMLConfig)."""
    return [
        ("boot", {"userspace"}, cfg.boot_timeout_s),
        ("mount-shares", {"shares-mounted"}, cfg.shares_timeout_s),
        ("job", {"agent-exit", "no-job"}, job_timeout_s + cfg.job_grace_s),
        ("poweroff", {"eof"}, cfg.poweroff_timeout_s),
    ]


def _how_it_ended(code: int | None) -> str:
    """A testbed process's end in words: a signal by name, with who sends SIGKILL unasked."""
    if code is None or code >= 0:
        return f"exited ({code})"
    name = signal.Signals(-code).name
    if -code == signal.SIGKILL:
        return (f"was killed by {name} (unless by a stop here: by the kernel's OOM killer, which `dmesg` "
                f"names, or by another process)")
    return f"was killed by {name}"


def follow_phases(proc: subprocess.Popen, reader: SerialReader, phases: list[tuple[str, set[str], float]],
                  poweroff_timeout_s: float, what: str = "QEMU", kill_group: bool = False) -> tuple[list[Marker], int]:
    """Wait through @phases ((name, markers that end it, deadline s)); return the markers seen and the exit code.

    Raises VMHangError when a phase misses its deadline and VMError when the
    process exits before the last phase.  The process (with its process
    group when @kill_group) is killed on the way out whatever happened.
    """
    seen: list[Marker] = []
    try:
        for phase, enders, limit in phases:
            start = time.monotonic()
            while True:
                left = limit - (time.monotonic() - start)
                if left <= 0:
                    raise VMHangError(phase, limit, reader.log_path)
                try:
                    marker = reader.markers.get(timeout=min(left, 1.0))
                except queue.Empty:
                    continue
                seen.append(marker)
                if marker[0] in enders:
                    break
                if marker[0] == "eof":
                    code = proc.wait(timeout=10)
                    tail = reader.log_path.read_text(errors="replace")[-2000:]
                    raise VMError(f"{what} {_how_it_ended(code)} during phase '{phase}'.  Nothing of this boot "
                                  f"is recorded as done: the same command again runs it whole.  Console tail:\n{tail}")
        code = proc.wait(timeout=poweroff_timeout_s)
    except subprocess.TimeoutExpired:
        raise VMHangError("poweroff", poweroff_timeout_s, reader.log_path)
    finally:
        if proc.poll() is None or kill_group:
            stop_process(proc, kill_group)
        reader.join(timeout=5)
    return seen, code


def stop_process(proc: subprocess.Popen, group: bool) -> None:
    """SIGKILL @proc (and its process group: a UML's host processes) and reap it."""
    try:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        elif proc.poll() is None:
            proc.kill()
    except ProcessLookupError:
        pass
    proc.wait()
