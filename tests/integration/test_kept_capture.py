"""A capture kept for the boot (sslab.guest.capture.KeptCapture) on this host's own kernel: one real
tcpdump on a veth between two network namespaces, three runs of TCP traffic through it, each run
taking its own packets into a file of its own.

What must hold: each run's file is a whole pcap (tcpdump's header, then whole records) holding
exactly the run's connections and as many packets as tcpdump counted for it; a segment that comes
after a run's take and before the next run starts is left out of both; the one tcpdump serves every
run.  The guest runs the same code under virtual time (tests/integration/test_startup.py's eight runs
a boot); here the clock is real, which only makes the flush's wait a real 50 ms."""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sslab.guest.capture import KeptCapture, dropped_by_kernel, start_capture
from sslab.guest.netns import NamespaceLauncher

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "tcpdump", "stdbuf")),
                                reason="needs root, iproute2 and tcpdump")

SERVER, CLIENT = "10.77.0.1", "10.77.0.2"


@dataclass
class Holder:
    """What start_capture reads of a topology: the launcher and the boot's kept captures."""
    launcher: NamespaceLauncher
    r1: str
    bottleneck_dev: str = "veth0"
    kept_captures: dict = field(default_factory=dict)


@pytest.fixture
def link():
    """Two namespaces joined by a veth pair (veth0 in the first, at SERVER; veth1 in the second)."""
    a, b = (f"sslab-k{uuid.uuid4().hex[:8]}" for _ in range(2))
    for ns in (a, b):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for cmd in (["ip", "link", "add", "veth0", "netns", a, "type", "veth", "peer", "veth1", "netns", b],
                    ["ip", "-n", a, "addr", "add", f"{SERVER}/24", "dev", "veth0"],
                    ["ip", "-n", b, "addr", "add", f"{CLIENT}/24", "dev", "veth1"],
                    ["ip", "-n", a, "link", "set", "veth0", "up"], ["ip", "-n", b, "link", "set", "veth1", "up"]):
            subprocess.run(cmd, check=True)
        yield a, b
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def transfer(launcher: NamespaceLauncher, a: str, b: str, port: int, size: int) -> int:
    """@size bytes from a server in @a on @port to a client in @b; the client's port."""
    srv = launcher.within(a, lambda: socket.create_server((SERVER, port)))
    cli = launcher.within(b, lambda: socket.create_connection((SERVER, port), timeout=10))
    conn, _ = srv.accept()
    conn.sendall(b"x" * size)
    conn.close()
    got = 0
    while chunk := cli.recv(65536):
        got += len(chunk)
    assert got == size
    mine = cli.getsockname()[1]
    cli.close()
    srv.close()
    return mine


def records(path: Path) -> list[tuple[int, int]]:
    """(source port, destination port) of every record of a microsecond little-endian pcap of
    Ethernet frames; the file must end where its last record does."""
    data = path.read_bytes()
    assert data[:4] == b"\xd4\xc3\xb2\xa1", path
    out, off = [], 24
    while off < len(data):
        _sec, _usec, kept, _wire = struct.unpack_from("<IIII", data, off)
        frame = data[off + 16: off + 16 + kept]
        assert len(frame) == kept, f"{path}: a record cut short at {off}"
        ihl = (frame[14] & 0x0F) * 4
        out.append(struct.unpack_from(">HH", frame, 14 + ihl))
        off += 16 + kept
    return out


def captured(note: str) -> int:
    return int(next(line.split()[0] for line in note.splitlines() if line.endswith("captured")))


def test_one_tcpdump_gives_each_run_its_own_packets(link, tmp_path):
    a, b = link
    db = Holder(NamespaceLauncher(), a)
    try:
        takes, notes, clients = [], [], []
        for run, port in enumerate((5201, 5202, 5203)):
            take = start_capture(db, tmp_path / f"run{run}.pcap", 96, immediate=False)
            clients.append(transfer(db.launcher, a, b, port, 200_000))
            notes.append(take.stop())
            takes.append(take)
            if run == 1:
                # After run 1's take and before run 2 starts: a connection of its own, in neither file.
                transfer(db.launcher, a, b, 5299, 1_000)
        kept = db.kept_captures[(a, "veth0", 96)]
        assert isinstance(kept, KeptCapture) and all(t.kept is kept for t in takes)
        assert kept.proc.poll() is None   # still the one tcpdump
        for run, (port, note) in enumerate(zip((5201, 5202, 5203), notes)):
            seen = records(tmp_path / f"run{run}.pcap")
            assert {frozenset(p) for p in seen} == {frozenset((port, clients[run]))}, (run, note)
            left_out = int(note.splitlines()[-1].split()[0]) if "left out" in note else 0
            assert len(seen) == captured(note) - left_out > 20, (run, note)
            assert dropped_by_kernel(note) == 0
        assert "left out" not in notes[0] and "left out" not in notes[1]
        assert "from before the run left out" in notes[2]
    finally:
        for kept in db.kept_captures.values():
            kept.close()
        db.launcher.close()
    assert not any(kept.spool.exists() for kept in db.kept_captures.values())

