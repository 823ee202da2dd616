"""The substrate self-check behind `make vm-check`.  Runs on the substrate.

It reports what experiments depend on: the kernel release, which qdiscs can
be instantiated, which congestion controls are available once our module is
loaded, how fast the job share writes, and a link self-test: two namespaces
joined by a veth pair with netem (50 Mbit/s, 50 ms) on both ends, so a
100 ms round trip through a 50 Mbit/s bottleneck, measured by ping (idle
minimum RTT) and iperf3 (throughput).

On a real clock the substrate has a latency of its own (under TCG 0.8-1.1
ms per round trip, varying from boot to boot).  Experiments measure it and
take it off their netem delay lines (guest/fidelity.py); the self-test
does the same so that it checks the path experiments get: it measures the
idle RTT with the configured delays (raw_min_rtt_ms), the substrate's own
RTT with zero delay (substrate_rtt_ms), and the RTT after taking that off
(min_rtt_ms, the one checked against 1 ms).  Under virtual time
(SSLAB_CLOCK=uml/inf-cpu) nothing is taken off: over the delay lines alone
the RTT must be the configured 100 ms within ping's resolution, and with the
rate limit 100 ms plus the serialisation of ping's two 98-byte frames at
50 Mbit/s (0.031 ms), every ping alike (mdev under 0.01 ms).  One ping warms
the path up first (ARP).

Throughput.  netem's rate limit counts whole frames (IP packet plus 14-byte
Ethernet header), so the rate to compare with the configured 50 Mbit/s is
the sender device's transmitted bytes over the steady part of a transfer
that keeps the link busy.  Under a real clock that transfer is UDP at twice
the rate, which keeps netem's queue at its limit (UDP_OVERLOAD says why not
TCP, UDP_QUEUE_LIMIT why a shorter queue for it);
under a virtual clock it is the TCP flow below (there nothing stalls, and
an unpaced sender would stop the clock).  Then one TCP flow
(iperf3, the kernel's default CCA) for goodput: the receiver's counts TCP
payload only and is lower by the header share (1448/1514 with timestamps,
~47.8 Mbit/s); iperf3's per-interval figures are the sender's (bytes written
to the socket).

A lossy self-test names where it lost: drop counters of both qdiscs and
devices and of the input backlog (netns.INPUT_BACKLOG says why that one is
raised), and the sender's TCP counters (timeouts, fast retransmits, reordering).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from ..records import VIRTUAL_CLOCKS
from .netns import (in_ns, link_stats, parse_ping, qdisc_stats, raise_input_backlog, restore_input_backlog, sh,
                    softnet_drops, tcp_counters, tx_bytes, unchanged_input_backlog)
from .qdiscs import probe_qdiscs

RATE_MBIT = 50
ONE_WAY_DELAY_MS = 50
#: netem queue limit: far above the path's BDP (~420 frames), so the
#: self-test measures the rate limit, not drops at a short queue.
NETEM_LIMIT = 10000
IPERF_SECONDS = 14
#: The link's rate is measured with UDP offered at twice the rate: netem's queue grows to its
#: limit and drops what comes beyond it, so the link stays busy through stalls of the sender
#: shorter than what the queue holds.  A TCP flow leaves it idle after a timeout: measured
#: under TCG, the ACK clock stopped for a second or more once in 8 self-tests, with nothing
#: dropped anywhere, and TCP's rate over the window was 42.5 Mbit/s.  The sender does not get
#: the 100 Mbit/s asked for: under TCG it is held by the guest's CPU to 56-96 Mbit/s (62.5 in
#: the run of 25 Nov 2026 below), so how soon the queue reaches its limit depends on the host.
UDP_OVERLOAD = 2
#: netem's queue limit (frames of 1442 bytes) on the sender's side for the UDP phase.  At the
#: TCP phase's NETEM_LIMIT (2.3 s of the link's time) a sender at 56 Mbit/s fills the queue
#: after 19 s, beyond the phase's 12: a CI run (25 Nov 2026) saw no drop at all, and so no
#: evidence that the queue was full while the rate was read.  1000 frames (0.23 s of the
#: link's time; stalls of the sender shorter than that still leave the link busy) fill in
#: 1.9 s at 56 Mbit/s and before the window starts (UDP_STEADY_FROM_S) at any sender above
#: 53.9 Mbit/s; the check is that netem dropped frames inside the window.
UDP_QUEUE_LIMIT = 1000
#: A UDP socket's frames count against its send buffer until they leave netem, so with the
#: default (208 KiB, below the 312 KB the 50 ms delay line holds) the sender is held to about
#: the link's rate (measured: 52.6 Mbit/s sent) and the queue stays short.  iperf3's -w (it
#: sets both buffers and checks them), with the kernel-wide maxima raised for the phase, lets
#: the queue fill.
UDP_SOCKET_BUFFER = 16 << 20
SOCKET_BUFFER_MAX = (Path("/proc/sys/net/core/wmem_max"), Path("/proc/sys/net/core/rmem_max"))
UDP_PAYLOAD = 1400
UDP_SECONDS = 12
UDP_STEADY_FROM_S = 3
#: Throughput is read over [STEADY_FROM_S, IPERF_SECONDS - 1]: slow start
#: at a 100 ms RTT is over in about 1.5 s.
STEADY_FROM_S = 4
PING_COUNT = 20
#: A default ping's frame: 56 data bytes + ICMP 8 + IP 20 + Ethernet 14.
PING_FRAME_BYTES = 98

RTT_TOLERANCE_MS = 1.0
#: Under virtual time: ping's resolution (3 decimals of a ms), and the spread allowed.
VIRTUAL_RTT_TOLERANCE_MS = 0.002
VIRTUAL_MDEV_MAX_MS = 0.01
RATE_TOLERANCE = 0.03


def virtual_clock() -> bool:
    return os.environ.get("SSLAB_CLOCK", "") in VIRTUAL_CLOCKS


def load_our_module(manifest: dict) -> dict:
    mod = manifest.get("module") or {}
    if not mod.get("present"):
        return {"present": False, "reason": mod.get("reason", "no module in this image")}
    loaded = {}
    for name in mod.get("modules", {}):
        res = subprocess.run(["modprobe", name], capture_output=True, text=True)
        loaded[name] = True if res.returncode == 0 else res.stderr.strip()
    return {"present": True, "loaded": loaded}


def share_write_rate(out: Path, megabytes: int = 64) -> float:
    """MB/s for writing a file to the job share (fsync'd), then removing it."""
    path = out / ".share-probe.bin"
    block = os.urandom(1 << 20)
    t0 = time.monotonic()
    with open(path, "wb") as f:
        for _ in range(megabytes):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    dt = time.monotonic() - t0
    path.unlink()
    return round(megabytes / dt, 1)


def read_at(read: Callable[[], int]) -> tuple[int, float]:
    """@read's value and the time it was read at: the middle of the command that read it.  Under
    TCG with the guest busy an `ip` command takes up to about 0.4 s (the window's start moved by
    that much between self-tests), so a time taken after it puts the window's ends late by
    amounts that differ."""
    before = time.monotonic()
    value = read()
    return value, (before + time.monotonic()) / 2


def qdisc_drops(ns: str, dev: str) -> int:
    return sum(q.get("drops", 0) for q in qdisc_stats(ns, dev))


def iperf3(a: str, b: str, options: list[str], seconds: int, steady_from_s: int,
           window_drops: bool = False) -> dict:
    """One iperf3 transfer from namespace @a to @b; the rate of frames leaving the sender's
    device (its netem's output) over [steady_from_s, seconds - 1], and iperf3's report.
    @window_drops: also the frames the sender's qdisc dropped within that window."""
    # -J: the report `--get-server-output` brings back to the client is then JSON.
    server = subprocess.Popen(["ip", "netns", "exec", b, "iperf3", "-s", "-1", "-J"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    client = subprocess.Popen(["ip", "netns", "exec", a, "iperf3", "-c", "10.201.0.2", "-J",
                               "-t", str(seconds), *options], stdout=subprocess.PIPE, text=True)
    t_start = time.monotonic()
    time.sleep(steady_from_s)
    drops0 = qdisc_drops(a, "va") if window_drops else 0
    bytes0, t0 = read_at(lambda: tx_bytes(a, "va"))
    time.sleep(seconds - 1 - steady_from_s)
    bytes1, t1 = read_at(lambda: tx_bytes(a, "va"))
    drops1 = qdisc_drops(a, "va") if window_drops else 0
    report = json.loads(client.communicate(timeout=seconds + 60)[0])
    server.wait(timeout=30)
    if "error" in report:
        raise RuntimeError(f"iperf3 {' '.join(options)}: {report['error']}")
    out = {"wire_mbps": round((bytes1 - bytes0) * 8 / (t1 - t0) / 1e6, 3),
           "window_s": [round(t0 - t_start, 2), round(t1 - t_start, 2)], "report": report}
    if window_drops:
        out["window_drops"] = drops1 - drops0
    return out


def receiver_goodput(report: dict, from_s: int, to_s: int) -> float:
    """Mbit/s the iperf3 server received over its intervals [@from_s, @to_s) (one a second, from
    when the transfer began), from the server's report that `--get-server-output` brings back."""
    intervals = report["server_output_json"]["intervals"][from_s:to_s]
    if len(intervals) != to_s - from_s:
        raise RuntimeError(f"iperf3's server reported {len(intervals)} intervals in [{from_s}, {to_s})")
    sums = [iv["sum"] for iv in intervals]
    return round(sum(x["bytes"] for x in sums) * 8 / sum(x["seconds"] for x in sums) / 1e6, 3)


def netem(ns: str, dev: str, verb: str, one_way_ms: float, rate: bool = True, limit: int = NETEM_LIMIT) -> None:
    """`tc qdisc add` or `change` of @dev's netem with every option given.  `change` keeps the
    qdisc and its counters; of the options, one left out keeps its value if it travels in an
    attribute of its own (the rate) and goes to tc's default if it is one of the basic ones
    (delay, limit), so all are given."""
    in_ns(ns, "tc", "qdisc", verb, "dev", dev, "root", "netem", "delay", f"{one_way_ms:.3f}ms",
          *(["rate", f"{RATE_MBIT}mbit"] if rate else []), "limit", str(limit))


def udp_overload(a: str, b: str, backlog_before: int, one_way_ms: float) -> dict:
    """The link's rate under UDP_OVERLOAD (real clocks only) with the sender's queue held to
    UDP_QUEUE_LIMIT, with the drops it caused; returns when netem's queue has drained again and
    has the TCP phase's limit back."""
    buffer_max = {path: path.read_text() for path in SOCKET_BUFFER_MAX}
    for path in SOCKET_BUFFER_MAX:
        path.write_text(str(UDP_SOCKET_BUFFER))
    netem(a, "va", "change", one_way_ms, limit=UDP_QUEUE_LIMIT)
    try:
        udp = iperf3(a, b, ["-u", "-b", f"{UDP_OVERLOAD * RATE_MBIT}M", "-l", str(UDP_PAYLOAD),
                            "-w", str(UDP_SOCKET_BUFFER)], UDP_SECONDS, UDP_STEADY_FROM_S, window_drops=True)
    finally:
        for path, value in buffer_max.items():
            path.write_text(value)
    udp["drops"] = where_dropped(a, b, backlog_before)
    wait_drained(a, "va")
    netem(a, "va", "change", one_way_ms)
    return udp


def wait_drained(ns: str, dev: str, timeout_s: float = 30) -> None:
    """Wait until @dev's qdisc holds nothing (the UDP phase leaves seconds of frames queued)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if all(q.get("qlen", 0) == 0 for q in qdisc_stats(ns, dev)):
            return
        time.sleep(0.5)
    raise RuntimeError(f"{dev}'s qdisc did not drain within {timeout_s} s")


def counters_since(now: dict, before: dict) -> dict:
    """@now - @before, key by key, through nested dicts of counters."""
    return {k: counters_since(v, before[k]) if isinstance(v, dict) else v - before[k] for k, v in now.items()}


def where_dropped(a: str, b: str, backlog_before: int) -> dict:
    """Drop counters along the self-test's path, to tell a lossy run's cause."""
    out: dict = {"softnet_backlog": softnet_drops() - backlog_before}
    for ns, dev in ((a, "va"), (b, "vb")):
        q = qdisc_stats(ns, dev)
        link = link_stats(ns, dev)
        out[dev] = {"qdisc_drops": sum(x.get("drops", 0) for x in q), "qdisc_overlimits":
                    sum(x.get("overlimits", 0) for x in q), "rx_dropped": link["rx"]["dropped"],
                    "tx_dropped": link["tx"]["dropped"]}
    return out


#: The sender's TCP counters that tell why a flow retransmitted (/proc/net/netstat, TcpExt).
SENDER_COUNTERS = ("TCPTimeouts", "TCPSpuriousRTOs", "TCPLossProbes", "TCPFastRetrans", "TCPSlowStartRetrans",
                   "TCPSACKReorder", "TCPDSACKRecv")


def link_selftest() -> dict:
    a, b = "sslab-st-a", "sslab-st-b"
    backlog = unchanged_input_backlog() if virtual_clock() else raise_input_backlog()
    for ns in (a, b):
        sh("ip", "netns", "del", ns, check=False)
        sh("ip", "netns", "add", ns)
    try:
        sh("ip", "link", "add", "va", "netns", a, "type", "veth", "peer", "name", "vb", "netns", b)
        for ns, dev, addr in ((a, "va", "10.201.0.1/30"), (b, "vb", "10.201.0.2/30")):
            in_ns(ns, "ip", "addr", "add", addr, "dev", dev)
            in_ns(ns, "ip", "link", "set", dev, "up")
            in_ns(ns, "ip", "link", "set", "lo", "up")
            # Segmentation offloads would hand netem 64 KB super-packets.
            in_ns(ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", check=False)
            netem(ns, dev, "add", ONE_WAY_DELAY_MS)
        def ping_min() -> dict:
            in_ns(a, "ping", "-n", "-q", "-c", "1", "10.201.0.2", check=False)  # ARP, first packet
            return parse_ping(in_ns(a, "ping", "-n", "-q", "-c", str(PING_COUNT), "-i", "0.1", "10.201.0.2"))

        def set_delay(ms: float, rate: bool = True) -> None:
            # del + add: `change` keeps netem options that are left out (the rate).
            for ns, dev in ((a, "va"), (b, "vb")):
                in_ns(ns, "tc", "qdisc", "del", "dev", dev, "root")
                netem(ns, dev, "add", ms, rate)

        # The delay lines alone first: the round trip a path's propagation gives.
        set_delay(ONE_WAY_DELAY_MS, rate=False)
        delay_only = ping_min()
        # Then with the rate limit: each ping frame is also serialised at 50 Mbit/s, each way.
        set_delay(ONE_WAY_DELAY_MS)
        raw = ping_min()
        set_delay(0)
        substrate = ping_min()
        serialisation = 2 * PING_FRAME_BYTES * 8 / (RATE_MBIT * 1e6) * 1e3
        offset = 0.0 if virtual_clock() else max(substrate["min"] - serialisation, 0) / 2
        one_way_ms = max(ONE_WAY_DELAY_MS - offset, 0)
        set_delay(one_way_ms)
        ping = ping_min()

        backlog_before = softnet_drops()
        # Under a virtual clock the sender takes no time: an unpaced UDP sender never lets the
        # clock move (measured: the job hung).  There TCP's rate is exact, and stalls do not occur.
        udp = None if virtual_clock() else udp_overload(a, b, backlog_before, one_way_ms)
        counters_before = tcp_counters(a, SENDER_COUNTERS)
        # The server's own report (the receiver's bytes, second by second) comes back with the
        # client's: the client's intervals count bytes written to its socket, not delivered.
        tcp = iperf3(a, b, ["--get-server-output"], IPERF_SECONDS, STEADY_FROM_S)
        drops = where_dropped(a, b, backlog_before)
        drops = counters_since(drops, udp["drops"]) if udp else drops
        counters = counters_since(tcp_counters(a, SENDER_COUNTERS), counters_before)
        report = tcp["report"]
        intervals = report["intervals"]
        received = receiver_goodput(report, STEADY_FROM_S, IPERF_SECONDS - 1)
        return {
            "configured": {"rate_mbit": RATE_MBIT, "one_way_delay_ms": ONE_WAY_DELAY_MS,
                           "netem_limit": NETEM_LIMIT, "rtt_ms": 2 * ONE_WAY_DELAY_MS},
            "ping_ms": ping,
            "min_rtt_ms": ping["min"],
            "delay_only_ping_ms": delay_only,
            "serialisation_ms": round(serialisation, 4),
            "expected_rtt_ms": round(2 * ONE_WAY_DELAY_MS + serialisation, 4),
            "raw_min_rtt_ms": raw["min"],
            "substrate_rtt_ms": substrate["min"],
            "delay_offset_ms": round(offset, 3),
            "wire_rate_mbps": (udp or tcp)["wire_mbps"],
            "wire_window_s": (udp or tcp)["window_s"],
            "wire_rate_from": "udp" if udp else "tcp",
            "udp_sent_mbps": round(udp["report"]["end"]["sum"]["bits_per_second"] / 1e6, 3) if udp else None,
            "udp_queue_limit": UDP_QUEUE_LIMIT if udp else None,
            "udp_window_drops": udp["window_drops"] if udp else None,
            "tcp_wire_rate_mbps": tcp["wire_mbps"],
            "tcp_wire_window_s": tcp["window_s"],
            # Over the seconds the wire's rate was read over: the two compare; the whole
            # transfer's average (below) holds its slow start and any stall at its start.
            "iperf3_goodput_steady_mbps": received,
            "iperf3_goodput_total_mbps": round(report["end"]["sum_received"]["bits_per_second"] / 1e6, 3),
            "iperf3_retransmits": report["end"]["sum_sent"].get("retransmits"),
            "input_backlog": backlog,
            # The UDP phase's drops at netem's queue limit are by design; the TCP phase's are not.
            "udp_drops": udp["drops"] if udp else None,
            "drops": drops,
            "sender_counters": counters,
            # Per second, as iperf3 reports them: [retransmits, cwnd in bytes, smoothed RTT in ms].
            "iperf3_intervals": [[iv["streams"][0].get("retransmits"), iv["streams"][0].get("snd_cwnd"),
                                  round(iv["streams"][0].get("rtt", 0) / 1e3, 1)] for iv in intervals],
        }
    finally:
        for ns in (a, b):
            sh("ip", "netns", "del", ns, check=False)
        restore_input_backlog(backlog)


def verdict(result: dict) -> dict:
    st = result["link_selftest"]
    cfg = st["configured"]
    out = {"qdiscs_present": all(result["qdiscs"].values())}
    if virtual_clock():
        # The delay lines give 100.000 ms; with the rate limit, ping's frames add their
        # serialisation (2 x 98 bytes at 50 Mbit/s = 0.031 ms), exactly.
        out["delay_rtt_exact"] = abs(st["delay_only_ping_ms"]["min"] - cfg["rtt_ms"]) <= VIRTUAL_RTT_TOLERANCE_MS
        out["min_rtt_exact"] = abs(st["min_rtt_ms"] - st["expected_rtt_ms"]) <= VIRTUAL_RTT_TOLERANCE_MS
        out["rtt_mdev_below_0.01ms"] = max(st["ping_ms"]["mdev"], st["delay_only_ping_ms"]["mdev"]) \
            < VIRTUAL_MDEV_MAX_MS
    else:
        out["min_rtt_within_1ms"] = abs(st["min_rtt_ms"] - st["expected_rtt_ms"]) <= RTT_TOLERANCE_MS
        # The rate is the link's when the UDP sender outran it: its queue was at the limit
        # (netem dropped) while the rate was read.
        out["rate_measured_over_a_full_queue"] = st["udp_window_drops"] > 0
    out["no_input_backlog_drops"] = st["drops"]["softnet_backlog"] == 0
    out["rate_within_3pct"] = abs(st["wire_rate_mbps"] - cfg["rate_mbit"]) <= RATE_TOLERANCE * cfg["rate_mbit"]
    return out


def main() -> int:
    out = Path(os.environ.get("SSLAB_OUT_DIR", "."))
    manifest_path = Path("/etc/sslab/image.json")
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    result: dict = {"kernel_release": os.uname().release, "clock": os.environ.get("SSLAB_CLOCK")}
    params = Path("/sys/module/kernel/parameters")
    # What our UML kernel learnt of the host's FP state at boot (images/uml/patches/0003-*).
    result["uml_fp"] = {k: int((params / f"uml_{k}").read_text()) for k in ("host_fp_bytes", "fp_area_bytes")
                        if (params / f"uml_{k}").exists()} or None
    result["module"] = load_our_module(manifest)
    result["tcp_available_congestion_control"] = (
        Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    result["qdiscs"] = probe_qdiscs()
    result["share_write_mb_per_s"] = share_write_rate(out)
    result["link_selftest"] = link_selftest()
    result["checks"] = verdict(result)
    (out / "vmcheck.json").write_text(json.dumps(result, indent=2, sort_keys=True))
    print(json.dumps(result["checks"]))
    return 0 if all(result["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
