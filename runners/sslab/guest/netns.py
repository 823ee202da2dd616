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
