"""The guest's namespace launcher (sslab.guest.netns.NamespaceLauncher), kept for a boot, on this
host's own kernel: real network namespaces (`ip netns add`) and real programs started in them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid

import pytest

from sslab.guest.netns import CommandError, NamespaceLauncher

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="needs root and iproute2 (ip netns add)")


@pytest.fixture
def namespaces():
    """Two fresh network namespaces, deleted afterwards."""
    names = [f"sslab-t{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for ns in names:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    yield names
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def namespace_of_file(ns: str) -> str:
    """What /proc/PID/ns/net reads for a process in @ns: the pinned file's inode."""
    return f"net:[{os.stat(f'/run/netns/{ns}').st_ino}]"


def test_each_program_starts_in_its_namespace_and_the_caller_stays_where_it_was(namespaces):
    mine = os.readlink("/proc/thread-self/ns/net")
    launcher = NamespaceLauncher()
    try:
        seen = {ns: launcher.run(ns, ["readlink", "/proc/self/ns/net"], check=True).stdout.strip()
                for ns in namespaces + namespaces}   # each namespace twice: its handle is reused
    finally:
        launcher.close()
    assert seen == {ns: namespace_of_file(ns) for ns in namespaces}
    assert len(set(seen.values()) | {mine}) == 3
    assert os.readlink("/proc/thread-self/ns/net") == mine


def test_threads_starting_programs_at_once_each_get_their_namespace(namespaces):
    """setns moves only the calling thread: callers on many threads at once (a run's flows start
    from a thread each) each start theirs in the namespace they asked for, and stay in their own."""
    from concurrent.futures import ThreadPoolExecutor
    launcher = NamespaceLauncher()
    mine = os.readlink("/proc/thread-self/ns/net")

    def start(ns: str) -> tuple[str, str, str]:
        got = launcher.run(ns, ["readlink", "/proc/self/ns/net"], check=True).stdout.strip()
        return ns, got, os.readlink("/proc/thread-self/ns/net")
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            seen = list(pool.map(start, namespaces * 20))
    finally:
        launcher.close()
    assert all(got == namespace_of_file(ns) and after == mine for ns, got, after in seen)


def test_programs_started_in_one_namespace_run_side_by_side(namespaces):
    launcher = NamespaceLauncher()
    try:
        t0 = time.monotonic()
        procs = [launcher.popen(namespaces[0], ["sleep", "1"]) for _ in range(3)]
        assert all(p.poll() is None for p in procs)   # started, none waited for
        assert [p.wait(timeout=10) for p in procs] == [0, 0, 0]
        assert time.monotonic() - t0 < 2.5            # together, not one after another (3 s)
    finally:
        launcher.close()


def test_a_closed_launcher_lets_a_deleted_namespace_go(namespaces):
    """An open handle of a namespace keeps it alive after `ip netns del`; close() lets the handles
    go, and the namespace goes, a veth into it with it."""
    ns = namespaces[0]
    outside = f"sslab-v{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "link", "add", outside, "type", "veth", "peer", "name", "inside", "netns", ns], check=True)
    launcher = NamespaceLauncher()
    try:
        launcher.run(ns, ["true"], check=True)
        subprocess.run(["ip", "netns", "del", ns], check=True)
        time.sleep(0.5)
        assert link_exists(outside)       # the launcher's handle still holds the namespace
    finally:
        launcher.close()
    deadline = time.monotonic() + 10
    while link_exists(outside) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not link_exists(outside)


def link_exists(dev: str) -> bool:
    return subprocess.run(["ip", "link", "show", dev], capture_output=True).returncode == 0


def test_a_failing_program_a_missing_namespace_and_a_timeout_say_what_they_are(namespaces):
    launcher = NamespaceLauncher()
    try:
        with pytest.raises(CommandError, match=r"ls /no/such in sslab-t\w+ failed \(2\): .*No such file"):
            launcher.run(namespaces[0], ["ls", "/no/such"], check=True)
        assert launcher.run(namespaces[0], ["ls", "/no/such"]).returncode == 2   # unchecked: its status
        with pytest.raises(CommandError, match="no network namespace sslab-none"):
            launcher.run("sslab-none", ["true"])
        with pytest.raises(subprocess.TimeoutExpired):
            launcher.run(namespaces[1], ["sleep", "30"], timeout=0.5)
        assert launcher.run(namespaces[1], ["cat"], input="fed\n", check=True).stdout == "fed\n"
    finally:
        launcher.close()



def test_echoes_from_this_process_cross_a_veth_between_namespaces_and_an_unanswered_one_is_an_error(namespaces):
    """guest/echo.py's measurement: a socket opened in one namespace (launcher.within) sends ping's
    requests across a veth to the other and reads the replies with their kernel timestamps; the
    caller's thread is back home after; an address nobody has answers nothing."""
    from sslab.guest.echo import EchoError, echoes, open_echo_socket
    a, b = namespaces
    subprocess.run(["ip", "-n", a, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", b], check=True)
    for ns, dev, addr in ((a, "va", "10.9.0.1/24"), (b, "vb", "10.9.0.2/24")):
        subprocess.run(["ip", "-n", ns, "addr", "add", addr, "dev", dev], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
    mine = os.readlink("/proc/thread-self/ns/net")
    launcher = NamespaceLauncher()
    try:
        with launcher.within(a, lambda: open_echo_socket("10.9.0.2")) as sock:
            seen = echoes(sock, count=3, interval_s=0.05)
        assert os.readlink("/proc/thread-self/ns/net") == mine
        with launcher.within(a, lambda: open_echo_socket("10.9.0.3")) as sock:
            silent = echoes(sock, count=2, interval_s=0.05, wait_s=0.3)
    finally:
        launcher.close()
    assert seen.sent == 3 and len(seen.rtts_us) == 3
    assert all(0 <= rtt < 50_000 for rtt in seen.rtts_us)          # a veth: well under 50 ms
    assert seen.min_ms == min(seen.rtts_us) / 1000
    assert silent.rtts_us == ()
    with pytest.raises(EchoError):
        silent.min_ms
