#!/usr/bin/env python3
"""Measure a Linux host's receive cost per TCP packet, natively: `make bench BENCH=rxcost`.

The host models (sslab.scenario.hosts) charge each end host `rx_cost` per
packet it receives.  This measures the number on the machine it runs on,
with the host's own kernel (not the testbed's), in two network namespaces
joined by a veth pair:

  - GRO, GSO and TSO off on both ends: every 1448-byte segment is a packet
    of its own through the whole stack, as on a NIC without offloads;
  - the receiver acknowledges every segment (route option `quickack 1`);
  - the sender starts with a window of 100 segments (route `initcwnd`), so
    its first write leaves as one back-to-back train of BURST segments;
  - the receiving application sleeps while the train arrives, so its
    socket is never owned by the reader and each segment is processed
    (and its ACK sent) in the softirq that receives it;
  - tcpdump listens on the receiver's veth: it sees a data segment as it
    enters the receiver's stack and the ACK as it leaves.

Reported, over all trains (medians and the 10th/90th percentiles):

  rx_us      from a data segment entering the receiver's stack to the ACK
             for it leaving: IP and TCP receive, building and sending the
             ACK.  This is the receive cost per packet the model charges.
  period_us  between consecutive data segments of a train at the receiver:
             on a veth the sender's transmit, the receiver's processing
             and the sender's ACK receive run one after another on one
             CPU, so this is the whole loop per packet (an upper bound).

Needs root (namespaces), ip, ethtool and tcpdump.  Run it on an idle
machine: it is a timing measurement, and the CPU model decides it.

    python3 runners/rxcost.py [--trains 30] [--burst 60] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dpkt

NS_SEND, NS_RECV = "sslab-rxc-s", "sslab-rxc-r"
DEV_SEND, DEV_RECV = "rxc-s", "rxc-r"
ADDR_SEND, ADDR_RECV = "10.77.0.1", "10.77.0.2"
PORT = 5201
MSS_PAYLOAD = 1448          # 1500-byte MTU, IPv4, TCP with timestamps
OFFLOADS = ("gro", "gso", "tso")


def sh(*argv: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def set_up() -> None:
    tear_down()
    sh("ip", "netns", "add", NS_SEND)
    sh("ip", "netns", "add", NS_RECV)
    sh("ip", "link", "add", DEV_SEND, "netns", NS_SEND, "type", "veth", "peer", "name", DEV_RECV, "netns", NS_RECV)
    for ns, dev, addr, peer, route_opt in ((NS_SEND, DEV_SEND, ADDR_SEND, ADDR_RECV, ("initcwnd", "100")),
                                           (NS_RECV, DEV_RECV, ADDR_RECV, ADDR_SEND, ("quickack", "1",
                                                                                      "initrwnd", "100"))):
        sh("ip", "link", "set", "lo", "up", ns=ns)
        sh("ip", "addr", "add", f"{addr}/32", "dev", dev, ns=ns)
        sh("ip", "link", "set", dev, "up", ns=ns)
        sh("ip", "route", "add", peer, "dev", dev, *route_opt, ns=ns)
        sh("ethtool", "-K", dev, *[x for o in OFFLOADS for x in (o, "off")], ns=ns)


def tear_down() -> None:
    for ns in (NS_SEND, NS_RECV):
        sh("ip", "netns", "del", ns, check=False)


RECEIVER = r"""
import socket, sys, time
trains, size = int(sys.argv[1]), int(sys.argv[2])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
ls.bind(("%s", %d)); ls.listen(1)
print("ready", flush=True)
for _ in range(trains):
    c, _ = ls.accept()
    time.sleep(0.3)                      # the train arrives while nobody reads
    got = 0
    while got < size:
        b = c.recv(1 << 20)
        if not b:
            break
        got += len(b)
    c.close()
""" % (ADDR_RECV, PORT)

SENDER = r"""
import socket, sys, time
trains, size = int(sys.argv[1]), int(sys.argv[2])
for _ in range(trains):
    s = socket.create_connection(("%s", %d))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    time.sleep(0.05)
    s.sendall(b"x" * size)
    time.sleep(0.6)
    s.close()
    time.sleep(0.05)
""" % (ADDR_RECV, PORT)


def capture(trains: int, burst: int, pcap: Path) -> None:
    size = burst * MSS_PAYLOAD
    dump = subprocess.Popen(["ip", "netns", "exec", NS_RECV, "tcpdump", "-i", DEV_RECV, "-n", "-s", "96",
                             "--time-stamp-precision=nano", "-w", str(pcap), "tcp", "port", str(PORT)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    recv = subprocess.Popen(["ip", "netns", "exec", NS_RECV, sys.executable, "-c", RECEIVER, str(trains), str(size)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert recv.stdout is not None and recv.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # tcpdump's socket open
        sh(sys.executable, "-c", SENDER, str(trains), str(size), ns=NS_SEND)
        recv.wait(timeout=60)
    finally:
        time.sleep(0.5)
        dump.terminate()
        dump.wait(timeout=10)
        if recv.poll() is None:
            recv.kill()


def analyse(pcap: Path, burst: int) -> dict:
    """Per train: data→ACK delay of each segment, and the spacing of the data segments."""
    rx, period = [], []
    trains = 0
    with open(pcap, "rb") as f:
        pkts = []
        for ts_ns, buf in _records_ns(f):
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            # Captures are cut at 96 bytes: the payload's length is the IP header's.
            pkts.append((ts_ns, ip.data, ip.len - ip.hl * 4 - ip.data.off * 4))
    flows: dict[int, list] = {}
    for ts, tcp, length in pkts:
        client_port = tcp.sport if tcp.dport == PORT else tcp.dport
        flows.setdefault(client_port, []).append((ts, tcp, length))
    for seg in flows.values():
        data = [(ts, (t.seq + n) & 0xFFFFFFFF) for ts, t, n in seg if t.dport == PORT and n > 0]
        acks = {t.ack: ts for ts, t, n in seg if t.sport == PORT and (t.flags & dpkt.tcp.TH_ACK) and n == 0}
        train = data[:burst]
        if len(train) < burst:
            continue
        trains += 1
        # Only back-to-back segments: the first of a train waits for nothing, later ones may
        # have been queued behind the receiver's work, so take each segment's own delay.
        for ts, end in train:
            if end in acks and acks[end] >= ts:
                rx.append((acks[end] - ts) / 1000)
        period += [(b[0] - a[0]) / 1000 for a, b in zip(train, train[1:])]
    if not rx:
        raise SystemExit(f"no data/ACK pairs in {pcap}: was every segment acknowledged (quickack)?")
    return {"trains": trains, "segments": len(rx), "rx_us": summary(rx), "period_us": summary(period)}


def _records_ns(f):
    """(timestamp in ns, bytes) of a nanosecond pcap (float seconds lose the sub-microsecond part)."""
    head = f.read(24)
    magic = struct.unpack("<I", head[:4])[0]
    if magic != 0xA1B23C4D:
        raise SystemExit("expected a nanosecond-resolution pcap (tcpdump --time-stamp-precision=nano)")
    rec = struct.Struct("<IIII")
    while True:
        h = f.read(16)
        if len(h) < 16:
            return
        sec, nsec, incl, _ = rec.unpack(h)
        yield sec * 1_000_000_000 + nsec, f.read(incl)


def summary(xs: list[float]) -> dict:
    q = statistics.quantiles(xs, n=10)
    return {"median": round(statistics.median(xs), 2), "p10": round(q[0], 2), "p90": round(q[-1], 2), "n": len(xs)}


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trains", type=int, default=30)
    ap.add_argument("--burst", type=int, default=60)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    if a.trains < 2 or not 2 <= a.burst <= 100:
        print("rxcost: --trains must be at least 2 and --burst 2..100 (the sender's initial window)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("rxcost: needs root (it creates network namespaces)", file=sys.stderr)
        return 2
    missing = [t for t in ("ip", "ethtool", "tcpdump") if not shutil.which(t)]
    if missing:
        print(f"rxcost: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        pcap = Path(tmp) / "rx.pcap"
        try:
            set_up()
            capture(a.trains, a.burst, pcap)
        finally:
            tear_down()
        found = analyse(pcap, a.burst)
    loadavg = os.getloadavg()[0]
    result = {"benchmark": "rxcost", "cpu": cpu_model(), "cores": os.cpu_count(), "kernel": platform.release(),
              "offloads_off": list(OFFLOADS), "mss": MSS_PAYLOAD, "burst": a.burst, "loadavg_1min": loadavg,
              **found}
    print(json.dumps(result), flush=True)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
