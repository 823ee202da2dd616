"""A run's ftrace text cut into columns by a small compiled reader (tracecols.c).

Why compiled: the host's read-out of a Table 1 run's trace (18-31 MB of text, about 60k tcp_probe
lines) took 0.2-0.4 s in Python, most of it turning each line's hex and decimal fields into
integers one call at a time; a regular expression over the whole text with numpy columns, tried
on 3 Dec 2026, gained under 20 %, and a data-frame library's regular expressions (polars, tried on
4 Dec) about 1.5 times.  In C the lines of an 18.7 MB trace take 21 ms (gcc -O3, AMD EPYC); over
the 640 traces of a Table 1 archive the facts took 51 s instead of 137 s, the rest now being the
Python facts' own loop (4 Dec 2026, docs/notebook/cost.md).  It is one C file of the
project's, compiled on first use with the host's C compiler (`make deps` installs gcc) into the
cache (paths.cache_dir(), keyed by the source's hash), and loaded with ctypes: no package to build,
nothing to install.

It only reads: what a row means is the Python reader's (sslab.analysis.traces, which calls this).
Where the C reader cannot read a trace exactly as the Python reader would (tracecols.c says when),
or the compiler is missing, `read` returns None and the caller reads the trace in Python.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import paths

SOURCE = Path(__file__).with_name("tracecols.c")
#: The values of a row, in tracecols.c's order (its tc_keys): those traces.PROBE_FACT_FIELDS names.
VALUES = ("snd_nxt", "snd_una", "snd_cwnd", "ssthresh", "snd_wnd", "srtt")
NOT_CANONICAL, NO_ROOM = -1, -2


@dataclass(frozen=True)
class TraceColumns:
    """A trace's tcp_probe rows, in the trace's order, and its other lines' places in the text."""
    ts: np.ndarray          # float64, seconds
    port: np.ndarray        # int32, the sender's (src=) port; -1 where it is none a run asks for
    values: np.ndarray      # int64, one row a record, one column a name of VALUES
    other: np.ndarray       # int64, [start, end) of each other line the Python reader would parse


def read(text: bytes) -> TraceColumns | None:
    """@text's columns, or None: no compiled reader here, or a trace it cannot read exactly."""
    lib = _library()
    if lib is None:
        return None
    cap = text.count(b"\n") + 1
    ts = np.empty(cap, dtype=np.float64)
    port = np.empty(cap, dtype=np.int32)
    values = np.empty((cap, len(VALUES)), dtype=np.int64)
    other = np.empty((cap, 2), dtype=np.int64)
    n_other = ctypes.c_long(0)
    rows = lib.tc_read(text, len(text), cap, ts.ctypes.data, port.ctypes.data, values.ctypes.data,
                       other.ctypes.data, ctypes.byref(n_other))
    if rows < 0:
        if rows == NO_ROOM:      # cannot happen: a row or an other line per line at most
            raise RuntimeError("tracecols: more lines than the text has")
        return None
    return TraceColumns(ts[:rows], port[:rows], values[:rows], other[:n_other.value])


@functools.cache
def _library() -> ctypes.CDLL | None:
    """The compiled reader, built on first use (once per source and platform); None without a compiler."""
    source = SOURCE.read_bytes()
    tag = hashlib.sha256(source + sys.platform.encode() + os.uname().machine.encode()).hexdigest()[:16]
    built = paths.cache_dir() / "host" / f"tracecols-{tag}.so"
    try:
        if not built.exists() and not _build(built):
            return None
        lib = ctypes.CDLL(str(built))
    except OSError as e:        # a cache it cannot write, a library it cannot load
        print(f"tracecols: {e}: reading traces in Python (slower)", file=sys.stderr)
        return None
    lib.tc_read.restype = ctypes.c_long
    lib.tc_read.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_long)]
    return lib


def _build(built: Path) -> bool:
    """Compile SOURCE into @built; False (and a line on stderr) without a compiler or when it fails."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        print("tracecols: no C compiler: reading traces in Python (slower)", file=sys.stderr)
        return False
    built.parent.mkdir(parents=True, exist_ok=True)
    tmp = built.with_name(f".{built.name}.{os.getpid()}")
    res = subprocess.run([cc, "-O3", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)], capture_output=True, text=True)
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        print(f"tracecols: {cc} failed, reading traces in Python (slower): {res.stderr.strip()[-400:]}", file=sys.stderr)
        return False
    os.replace(tmp, built)      # another process building the same source writes the same file
    return True
