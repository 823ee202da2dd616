"""What a run records of the host it ran on: CPU, kernel, and the size of the host's XSAVE area.

The UML substrate saves and restores every guest process's floating-point
registers through the host's ptrace, in the host's XSAVE format; the area's
size is the host's own (its CPU's features as its kernel enables them):

    AVX2 only                   832-1088 bytes
    AVX-512 without PKRU        2432     (measured here: AMD EPYC)
    AVX-512 with PKRU           2696     (what UML 6.1 was compiled for)
    AVX-512 with AMX tiles      11008    (Intel Xeon Sapphire Rapids and later)

Our UML kernel asks the host for it at boot (images/uml/patches/0003-*);
this module asks the same question from the host side, so that a run's
record and a preflight's message can name it even when the guest never
booted: PTRACE_GETREGSET of NT_X86_XSTATE on a stopped child, into a buffer
larger than any area, returns the area's length.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys

#: CPU flags that decide the XSAVE area's size, or that a reader of a failure wants to see.
XSTATE_FLAGS = ("xsave", "avx", "avx2", "avx512f", "pku", "ospke", "amx_tile", "amx_bf16", "amx_int8")

#: Run in a fresh interpreter (a fork inside the harness, with its threads, is not safe):
#: a child stops itself under PTRACE_TRACEME, the parent reads its XSAVE area's length.
_PROBE = r"""
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long
PTRACE_TRACEME, PTRACE_GETREGSET, NT_X86_XSTATE = 0, 0x4204, 0x202
class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
pid = os.fork()
if pid == 0:
    libc.ptrace(PTRACE_TRACEME, 0, None, None)
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(0)
os.waitpid(pid, os.WUNTRACED)
buf = ctypes.create_string_buffer(1 << 20)
iov = IOVec(ctypes.cast(buf, ctypes.c_void_p), len(buf))
rc = libc.ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, ctypes.byref(iov))
err = ctypes.get_errno()
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print(iov.len if rc == 0 else f"errno {err} ({os.strerror(err)})")
"""


def xstate_probe() -> tuple[int | None, str]:
    """(the host's XSAVE area in bytes, how it was learnt); (None, why not) when it cannot be."""
    if platform.machine() != "x86_64" or sys.platform != "linux":
        return None, f"not x86-64 Linux ({sys.platform}, {platform.machine()})"
    try:
        res = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"the probe did not run: {e}"
    out = res.stdout.strip()
    if res.returncode == 0 and out.isdigit():
        return int(out), "ptrace GETREGSET NT_X86_XSTATE"
    return None, f"ptrace GETREGSET NT_X86_XSTATE failed: {out or res.stderr.strip()[-200:]}"


def cpu_info(path: str = "/proc/cpuinfo") -> tuple[str, set[str]]:
    """(model name, flags) of the first CPU in @path."""
    model, flags = "unknown", set()
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model == "unknown":
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
                if model != "unknown" and flags:
                    break
    except OSError:
        pass
    return model, flags


@functools.lru_cache(maxsize=1)
def host_facts() -> dict:
    """The facts a run and a preflight record of this host (asked once per process)."""
    model, flags = cpu_info()
    xstate, how = xstate_probe()
    uname = os.uname()
    return {"cpu_model": model, "cpu_flags": [f for f in XSTATE_FLAGS if f in flags],
            "amx": "amx_tile" in flags, "xstate_bytes": xstate, "xstate_from": how,
            "kernel": uname.release, "machine": uname.machine, "cores": len(os.sched_getaffinity(0))}


def describe(facts: dict) -> str:
    """One line for a message: CPU, XSAVE area, kernel."""
    area = f"{facts['xstate_bytes']} bytes" if facts.get("xstate_bytes") else f"unknown ({facts.get('xstate_from')})"
    return (f"{facts['cpu_model']} ({facts['machine']}, {facts['cores']} cores; flags: "
            f"{' '.join(facts['cpu_flags']) or 'none of ' + ', '.join(XSTATE_FLAGS)}); XSAVE area {area}; "
            f"host kernel {facts['kernel']}")
