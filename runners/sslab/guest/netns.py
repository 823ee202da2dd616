"""Small helpers for network namespaces and tc, used by guest-side jobs."""

from __future__ import annotations

import json
import re
import subprocess


class CommandError(RuntimeError):
    pass


def sh(*cmd: str, check: bool = True, timeout: float | None = 120) -> str:
    res = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        raise CommandError(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()}")
    return res.stdout


def end_batch(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Let a `... -batch -` process finish on end of input; kill it if it does not."""
    if proc.poll() is None:
        proc.stdin.close()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()


def in_ns(ns: str, *cmd: str, check: bool = True, timeout: float | None = 120) -> str:
    return sh("ip", "netns", "exec", ns, *cmd, check=check, timeout=timeout)


def run_batch(tool: str, ns: str | None, lines: list[str], force: bool = False, timeout: float = 120) -> None:
    """Run @lines as one `ip -batch` or `tc -batch` (in namespace @ns, or the current one): one
    process for what would be one process a line.  With @force, lines that fail are skipped."""
    if not lines:
        return
    cmd = [tool] + (["-n", ns] if ns else []) + (["-force"] if force else []) + ["-batch", "-"]
    res = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0 and not force:
        raise CommandError(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()[-800:]}")


CLONE_NEWNET = 0x40000000


def set_sysctls(ns: str, values: dict[str, str]) -> None:
    """Write net sysctls of namespace @ns from this process: a thread joins the namespace
    (setns affects only the calling thread) and writes /proc/sys, which follows the
    writer's namespace.  No process is started (each costs wall time under UML)."""
    import ctypes
    import threading

    libc = ctypes.CDLL(None, use_errno=True)
    failure: list[str] = []

    def write() -> None:
        with open(f"/run/netns/{ns}") as f:
            if libc.setns(f.fileno(), CLONE_NEWNET) != 0:
                failure.append(f"setns({ns}): errno {ctypes.get_errno()}")
                return
        for key, value in values.items():
            with open("/proc/sys/" + key.replace(".", "/"), "w") as out:
                out.write(value)

    t = threading.Thread(target=write)
    t.start()
    t.join()
    if failure:
        raise CommandError(failure[0])


def tx_bytes(ns: str, dev: str) -> int:
    """Bytes the device has transmitted (after its qdisc), link-layer headers included."""
    data = json.loads(sh("ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev))
    return int(data[0]["stats64"]["tx"]["bytes"])


PING_SUMMARY = re.compile(r"= (?P<min>[0-9.]+)/(?P<avg>[0-9.]+)/(?P<max>[0-9.]+)/(?P<mdev>[0-9.]+) ms")


def parse_ping(output: str) -> dict[str, float]:
    """min/avg/max/mdev in ms from ping's summary line."""
    m = PING_SUMMARY.search(output)
    if not m:
        raise CommandError(f"no RTT summary in ping output: {output[-300:]!r}")
    return {k: float(v) for k, v in m.groupdict().items()}
