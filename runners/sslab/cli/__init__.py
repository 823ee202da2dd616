"""Command line: `python -m sslab ...` (the Makefile's targets call this).

Thin: it parses arguments and calls one function per command; errors that
refuse a request before anything starts exit 2, failures during a run exit 1.

    spec      the argument spec: every command and its options
    commands  what each command does
    status    exit statuses, and Refused
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from pathlib import Path

from .. import paths
from ..records import RecordFormatError
from . import commands
from .spec import build_parser
from .status import EXIT_FAILED, EXIT_REFUSED, EXIT_SIGNAL_BASE, Refused

class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a closed terminal, `kill`, a CI timeout), raised where the program is,
    like a Ctrl-C: every `finally` runs, so a build unmounts its chroot and removes its
    directories, and a run stops its testbeds."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class LastingConsole:
    """A standard stream that outlives its terminal.  A closed terminal or a dropped ssh session sends
    SIGHUP and then fails every write (EIO, EPIPE); a controller stopping its hosts' runs must not be
    cut short by saying so.  Once a write fails, the stream's descriptor is pointed at /dev/null
    (what is buffered then flushes there, so the interpreter's own flush at exit does not fail and
    change the exit status) and the rest is dropped: the records on disk say what happened."""

    def __init__(self, stream):
        self._stream = stream
        self.gone = False

    def _lost(self) -> None:
        self.gone = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except OSError:
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except OSError:
                self._lost()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _interrupted(signum, frame):
    # Once: a second signal must not cut the clean-up short (SIGKILL still ends everything, and
    # the next build removes what a killed one left).
    signal.signal(signum, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def main(argv: list[str] | None = None) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupted)
    if not isinstance(sys.stdout, LastingConsole):
        # A line at a time, also into a pipe or a file (`| tee`, nohup): what a command said before a
        # SIGKILL is not lost in its buffer (a soak's killed controllers had said nothing, 3 Dec 2026).
        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(line_buffering=True)
        sys.stdout, sys.stderr = LastingConsole(sys.stdout), LastingConsole(sys.stderr)
    p = build_parser()
    args = p.parse_args(argv)
    if getattr(args, "argv", None) and args.argv[0] == "--":
        args.argv = args.argv[1:]
    from ..analysis.archive import ArchiveError
    from ..experiment import ExperimentError
    from ..matrix import MatrixError
    from ..matrix.experiments import Refusal
    from ..scenario import ScenarioError
    from ..substrate.image import ImageError
    from ..substrate.job import JobError
    from ..substrate.mirrors import MirrorError
    from ..substrate.native import NativeUnavailable
    from ..substrate.kernelchanges import KernelChangesRefused, PatchRefused
    from ..substrate.preflight import SubstrateUnusable, Unoffered
    from ..substrate.qemu import VMError
    try:
        return getattr(commands, f"cmd_{args.command}")(args)
    except KeyboardInterrupt as e:
        signum = e.signum if isinstance(e, Terminated) else signal.SIGINT
        print(f"interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        return EXIT_SIGNAL_BASE + signum
    except (Refused, Refusal, ScenarioError, ExperimentError, NativeUnavailable, SubstrateUnusable, MatrixError,
            ArchiveError, RecordFormatError, KernelChangesRefused, PatchRefused, Unoffered) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_REFUSED
    except (ImageError, MirrorError, VMError, JobError) as e:
        print(f"error: {e}", file=sys.stderr)
        if (full := full_disk_behind(e)) is not None:
            print(f"error: {paths.full_disk_message(str(full))}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        print(f"error: {paths.full_disk_message(e.filename)}", file=sys.stderr)
        return EXIT_FAILED


#: How a program the harness ran says it could not write.
NO_SPACE = "No space left on device"


def full_disk_behind(e: Exception) -> Path | None:
    """The full disk that failed @e, if one did: a guest that could not write (its files go to the
    host's disk through hostfs) or a build step (debootstrap, cp, make in the cache) fails in words
    of its own ("the job left no status", "Couldn't download ...").  The results' disk or the
    cache's when either is nearly full; else the cache's (an image build's) or the results' when the
    error says a write found no space."""
    for where in (paths.RESULTS_DIR, paths.cache_dir()):
        if (full := paths.nearly_full(where)) is not None:
            return full
    if NO_SPACE in f"{e}{getattr(e, 'output', '')}":
        from ..substrate.image import ImageError
        return paths.existing_part(paths.cache_dir() if isinstance(e, ImageError) else paths.RESULTS_DIR)
    return None


