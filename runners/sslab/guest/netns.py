"""Small helpers for network namespaces and tc, used by guest-side jobs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


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
    """@cmd's output, run by `ip netns exec` in @ns: with the namespace's /sys and /etc too."""
    return sh("ip", "netns", "exec", ns, *cmd, check=check, timeout=timeout)


class NamespaceLauncher:
    """Starts the run's network programs (the transfer tool, tcpdump, ss) in the topology's
    network namespaces from this process, through handles of the namespaces opened once and kept
    as long as the topology.

    setns moves only the calling thread, and a new process is in the network namespace of the
    thread that forked it: the caller's thread joins the namespace, forks the program and goes
    back to its own, so no process of ours stands between.  Why: under UML every system call and
    page fault of a guest process is a round trip through the host's ptrace; counted in an E7 run
    (`make bench BENCH=syscalls`), `ip netns exec` cost about 410 a use (its mount namespace and
    /sys), and a small static program that joins and then execs the real one about 100 (its own
    exec), where a run starts some 40 programs; this, two setns calls.  Programs that read the
    namespace's /sys or /etc (receive steering) still go through `ip netns exec` (in_ns).

    Each caller must be in the namespace the launcher was made in (the job's own: every thread
    of the job is).  close() lets the handles go (an open handle keeps a namespace alive after
    `ip netns del`); the next start opens them again."""

    def __init__(self) -> None:
        self._home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        self._handles: dict[str, int] = {}
        self._lock = threading.Lock()

    def _handle(self, ns: str) -> int:
        with self._lock:
            if ns not in self._handles:
                self._handles[ns] = open_namespace(ns)
            return self._handles[ns]

    def within(self, ns: str, work: Callable[[], T]) -> T:
        """@work() on the calling thread in namespace @ns, which it then leaves: a process it starts
        or a socket it opens stays in @ns (guest/echo.py's echo socket)."""
        _setns(self._handle(ns), ns)
        try:
            return work()
        finally:
            _setns(self._home, "the launcher's own")

    def popen(self, ns: str, argv: list[str], **kwargs) -> subprocess.Popen:
        """subprocess.Popen(@argv, **@kwargs), in namespace @ns."""
        return self.within(ns, lambda: subprocess.Popen(argv, **kwargs))

    def run(self, ns: str, argv: list[str], timeout: float | None = 120, check: bool = False,
            input: str | None = None) -> subprocess.CompletedProcess:
        """subprocess.run(@argv, capture_output=True, text=True, ...) in namespace @ns; with
        @check, CommandError if it fails."""
        with self.popen(ns, argv, stdin=subprocess.PIPE if input is not None else None,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            try:
                out, err = proc.communicate(input, timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
        if check and proc.returncode != 0:
            raise CommandError(f"{' '.join(argv)} in {ns} failed ({proc.returncode}): {err.strip()}")
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)

    def close(self) -> None:
        with self._lock:
            handles, self._handles = self._handles, {}
        for fd in handles.values():
            os.close(fd)


#: Where `ip netns add NAME` pins a namespace.
NETNS_RUN_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
_libc = None


def _setns(fd: int, name: str) -> None:
    """Move the calling thread into the network namespace of handle @fd (@name: for the error)."""
    global _libc
    import ctypes

    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        raise CommandError(f"setns({name}): errno {ctypes.get_errno()}")


def open_namespace(ns: str) -> int:
    """A handle (file descriptor) of network namespace @ns, as `ip netns add` pinned it."""
    try:
        return os.open(NETNS_RUN_DIR / ns, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        raise CommandError(f"no network namespace {ns}: {e}") from None


def join_namespace(ns: str) -> None:
    """Move the calling thread (only it: setns is per thread) into network namespace @ns."""
    fd = open_namespace(ns)
    try:
        _setns(fd, ns)
    finally:
        os.close(fd)


def run_batch(tool: str, ns: str | None, lines: list[str], force: bool = False, timeout: float = 120) -> None:
    """Run @lines as one `ip -batch` or `tc -batch` (in namespace @ns, or the current one): one
    process for what would be one process a line.  With @force, lines that fail are skipped."""
    if not lines:
        return
    cmd = [tool] + (["-n", ns] if ns else []) + (["-force"] if force else []) + ["-batch", "-"]
    res = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0 and not force:
        raise CommandError(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()[-800:]}")


def in_namespaces(namespaces: list[str], work: Callable[[str], T]) -> dict[str, T]:
    """@work(ns) for each of @namespaces, run by one thread of this process that joins each
    namespace in turn (setns affects only the calling thread; the thread ends with it).  What
    follows the caller's network namespace does: /proc/sys/net, and /proc/thread-self/net
    (/proc/net is the process's, its first thread's).  No process is started: under UML each
    costs wall time (an `ip netns exec` of a short command, about 40 ms)."""
    done: dict[str, T] = {}
    failure: list[BaseException] = []

    def visit() -> None:
        try:
            for ns in namespaces:
                join_namespace(ns)
                done[ns] = work(ns)
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            failure.append(e)

    t = threading.Thread(target=visit)
    t.start()
    t.join()
    if failure:
        raise failure[0]
    return done


def set_sysctls(ns: str, values: dict[str, str]) -> None:
    """Write net sysctls of namespace @ns from this process (in_namespaces)."""
    def write(_ns: str) -> None:
        for key, value in values.items():
            with open("/proc/sys/" + key.replace(".", "/"), "w") as out:
                out.write(value)

    in_namespaces([ns], write)


#: net.core.netdev_max_backlog under a real clock.  A veth pair hands each packet to the
#: receiving CPU's input backlog.  A netem queue whose timer fires late (a vCPU the host held
#: back) releases all that came due at once, and past the kernel's default of 1000 packets the
#: backlog drops them: losses of the substrate, not of the emulated path.  Measured: vm-check's
#: self-test under QEMU TCG lost 90 and 253 packets there in 2 of 4 runs, the second taking the
#: link's rate to 44.7 of 50 Mbit/s.  10x the largest netem queue the harness configures (the
#: self-test's 10000), so that a whole queue released at once fits.
INPUT_BACKLOG = 100_000
NETDEV_MAX_BACKLOG = Path("/proc/sys/net/core/netdev_max_backlog")


def raise_input_backlog() -> dict[str, int]:
    """Raise the (kernel-wide) input backlog to INPUT_BACKLOG; returns what the job ran with and
    the value it had ({"ran_with", "default"}), for restore_input_backlog (on a native host the
    setting is the host's own).

    For real clocks only.  Under a virtual clock timers fire when due and no burst builds up,
    and a job must not touch the setting before its runs: even reading it at a job's start
    shifted the seeded timeline (measured: the determinism scenario's pcap changed, same seed,
    where an added comment left it byte-identical)."""
    before = int(NETDEV_MAX_BACKLOG.read_text())
    if before < INPUT_BACKLOG:
        NETDEV_MAX_BACKLOG.write_text(str(INPUT_BACKLOG))
    return {"ran_with": max(before, INPUT_BACKLOG), "default": before}


def unchanged_input_backlog() -> dict[str, int]:
    """The input backlog as the kernel has it, in raise_input_backlog's form (nothing raised)."""
    value = int(NETDEV_MAX_BACKLOG.read_text())
    return {"ran_with": value, "default": value}


def restore_input_backlog(backlog: dict[str, int]) -> None:
    if backlog["ran_with"] != backlog["default"]:
        NETDEV_MAX_BACKLOG.write_text(str(backlog["default"]))


def softnet_drops() -> int:
    """Packets dropped since boot because a CPU's input backlog was full."""
    return parse_softnet_drops(Path("/proc/net/softnet_stat").read_text())


def parse_softnet_drops(text: str) -> int:
    """The drops of /proc/net/softnet_stat: its second column, one line per CPU, in hexadecimal."""
    return sum(int(line.split()[1], 16) for line in text.splitlines() if line.strip())


def tcp_counters(ns: str, names: tuple[str, ...] | None = None) -> dict[str, int]:
    """Namespace @ns's Tcp: and TcpExt: counters (/proc/net/snmp and netstat); only @names of
    them if given."""
    return tcp_counters_of([ns], names)[ns]


def tcp_counters_of(namespaces: list[str], names: tuple[str, ...] | None = None) -> dict[str, dict[str, int]]:
    """tcp_counters of each of @namespaces, read by this process (in_namespaces), not by a
    process per namespace."""
    def read(_ns: str) -> dict[str, int]:
        text = "".join(Path(f"/proc/thread-self/net/{name}").read_text() for name in ("snmp", "netstat"))
        return parse_tcp_counters(text, names)

    return in_namespaces(namespaces, read)


def parse_tcp_counters(text: str, names: tuple[str, ...] | None = None) -> dict[str, int]:
    """The Tcp: and TcpExt: tables of snmp/netstat text (pairs of lines, names then values), or
    only @names of them."""
    out: dict[str, int] = {}
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    for head, vals in zip(lines[::2], lines[1::2]):
        if head[0] in ("Tcp:", "TcpExt:"):
            out.update({k: int(v) for k, v in zip(head[1:], vals[1:]) if names is None or k in names})
    return out


def link_stats(ns: str, dev: str) -> dict:
    """The device's counters (`ip -s -j link`'s stats64: rx and tx bytes, packets, dropped, ...)."""
    return json.loads(sh("ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev))[0]["stats64"]


def qdisc_stats(ns: str, dev: str) -> list[dict]:
    """The device's qdiscs with their counters (`tc -s -j qdisc show`: drops, overlimits, qlen, ...)."""
    return json.loads(sh("tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", dev))


def tx_bytes(ns: str, dev: str) -> int:
    """Bytes the device has transmitted (after its qdisc), link-layer headers included."""
    return int(link_stats(ns, dev)["tx"]["bytes"])


PING_SUMMARY = re.compile(r"= (?P<min>[0-9.]+)/(?P<avg>[0-9.]+)/(?P<max>[0-9.]+)/(?P<mdev>[0-9.]+) ms")


def parse_ping(output: str) -> dict[str, float]:
    """min/avg/max/mdev in ms from ping's summary line."""
    m = PING_SUMMARY.search(output)
    if not m:
        raise CommandError(f"no RTT summary in ping output: {output[-300:]!r}")
    return {k: float(v) for k, v in m.groupdict().items()}
