"""The bottleneck's queue and delivery counted from a capture, to check what the reports print.

A run's report reads the bottleneck's queue from the qdisc's own count (netem's peak, our patch
0007; under the HTB shaper, its FIFO's, patch 0008) and its goodput from the capture past the
bottleneck.  A run asked with `capture.router: true` also has a capture on every interface of the
bottleneck's router (<tag>.router.pcap, tcpdump -i any in r1): each packet once as it reaches the
router and once as it leaves it, marked incoming or outgoing, in the order the two happened.  From
it:

    held(t) = packets towards the clients that reached the router by t and left past the
              bottleneck later - those that left by t

(a packet that never left was dropped: it never took a place), and its peak is what the qdisc
counts as held: the packets waiting and, with the shared delay in the bottleneck's netem (netem
"one"), those still in that delay.  Reaching the router and entering the bottleneck's qdisc are
one step of the kernel's forwarding, and so are leaving the qdisc and the capture's outgoing copy;
under UML one CPU makes both, so the file's order is the order of events.

What left past the bottleneck in each bin of time is the link's delivery: no bin can hold more
than the link's rate allows, plus the one frame on its edge.  Each flow's new data per bin, read
from this capture's outgoing copies by the same rule as the report's (sslab.analysis.pcap), must
be the report's own bins.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..records import Plan, read_plan, read_record
from .archive import runs_of
from .pcap import (GOODPUT_BIN_S, analyse_pcap_ports, analyse_segments, delivered_by_flow, delivered_by_segments,
                   open_pcap, pcap_records)
from .plots import FLOWS_BIN_S, delivered_bins

#: Linux's cooked captures (tcpdump -i any): version 1 and 2 of the header.
LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2 = 113, 276
#: The header's length and where it keeps the packet type and the protocol, by link type.
_COOKED = {LINKTYPE_LINUX_SLL: (16, 0, 14), LINKTYPE_LINUX_SLL2: (20, 10, 0)}
#: Packet types (linux/if_packet.h): sent by this host; anything else was received.
PACKET_OUTGOING = 4
_IPV4 = 0x0800
_TCP = struct.Struct("!HHI")
#: A frame's bytes the link's rate counts beyond the IP packet: the Ethernet header.
ETHERNET_HEADER_BYTES = 14


@dataclass(frozen=True)
class RouterPacket:
    ts: float
    outgoing: bool
    sport: int
    dport: int
    seq: int
    flags: int
    payload: int
    ip_id: int
    ip_len: int


def linktype(path: Path) -> int:
    """The link type of a pcap file (its header's last field)."""
    with open_pcap(path) as f:
        head = f.read(24)
    if len(head) < 24:
        raise ValueError(f"{path}: not a pcap file")
    order = "<" if head[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    return struct.unpack(order + "I", head[20:24])[0] & 0x0FFFFFFF


def router_packets(path: Path):
    """Every IPv4 TCP packet of a cooked capture (tcpdump -i any), in file order."""
    kind = linktype(path)
    if kind not in _COOKED:
        raise ValueError(f"{path}: link type {kind}, not a capture of every interface (tcpdump -i any: "
                         f"Linux cooked, {LINKTYPE_LINUX_SLL} or {LINKTYPE_LINUX_SLL2})")
    head, type_at, proto_at = _COOKED[kind]
    with open_pcap(path) as f:
        for ts, buf in pcap_records(f):
            if len(buf) < head + 20 or (buf[proto_at] << 8 | buf[proto_at + 1]) != _IPV4 or buf[head + 9] != 6:
                continue
            ihl = (buf[head] & 0x0F) * 4
            t = head + ihl
            if len(buf) < t + 14:
                continue
            ptype = buf[type_at] << 8 | buf[type_at + 1] if kind == LINKTYPE_LINUX_SLL else buf[type_at]
            ip_len = buf[head + 2] << 8 | buf[head + 3]
            sport, dport, seq = _TCP.unpack_from(buf, t)
            yield RouterPacket(ts, ptype == PACKET_OUTGOING, sport, dport, seq, buf[t + 13],
                               ip_len - ihl - (buf[t + 12] >> 4) * 4, buf[head + 4] << 8 | buf[head + 5], ip_len)


@dataclass
class HeldCount:
    """The bottleneck's queue counted from a router's capture (the module's docstring)."""
    peak_pkts: int = 0
    #: The capture time of the arrival that made the peak (first time it was reached).
    peak_ts: float | None = None
    arrivals: int = 0
    departures: int = 0
    #: Arrivals that never left (dropped at the bottleneck).
    dropped: int = 0


def count_held(packets: list[RouterPacket], server_ports: set[int]) -> HeldCount:
    """How many packets from @server_ports' side the bottleneck held at once, at most, and how many
    reached it, left it, and were dropped.  A packet is known by its ports, sequence number and IP
    id (Linux numbers a connection's packets, so a retransmission is another packet); an arrival
    takes a place only if a copy of it leaves later."""
    def key(p: RouterPacket) -> tuple:
        return p.sport, p.dport, p.seq, p.ip_id, p.payload

    towards = [p for p in packets if p.sport in server_ports]
    to_leave = Counter(key(p) for p in towards if p.outgoing)
    out = HeldCount()
    held = 0
    for p in towards:
        if p.outgoing:
            out.departures += 1
            held -= 1
            continue
        out.arrivals += 1
        k = key(p)
        if to_leave[k] <= 0:
            out.dropped += 1
            continue
        to_leave[k] -= 1
        held += 1
        if held > out.peak_pkts:
            out.peak_pkts, out.peak_ts = held, p.ts
    return out


def bottleneck_view(packets: list[RouterPacket], server_ports: set[int]):
    """The router's capture as the bottleneck's own capture sees it (tcp_segments' tuples): the
    clients' packets as they arrive from the bottleneck's far side, the servers' as they leave past
    it."""
    for p in packets:
        if p.outgoing == (p.sport in server_ports):
            yield p.ts, (p.sport, p.dport, p.seq, p.flags), p.payload


def delivery_bins(packets: list[RouterPacket], server_ports: set[int], bin_s: float) -> dict[int, int]:
    """Frame bytes that left past the bottleneck towards the clients, per @bin_s bin of capture time."""
    out: dict[int, int] = {}
    for p in packets:
        if p.outgoing and p.sport in server_ports:
            b = int(p.ts // bin_s)
            out[b] = out.get(b, 0) + p.ip_len + ETHERNET_HEADER_BYTES
    return out


@dataclass
class QueueCheck:
    """A run's report beside its router's capture."""
    held: HeldCount
    #: The qdisc's own count (run.json: bottleneck.peak_pkts; None: not counted) and drops.
    qdisc_peak_pkts: int | None
    qdisc_drops: int
    #: The most the half-second readings saw.
    readings_max_pkts: int | None
    buffer_pkts: int | None
    link_mbit: float
    bin_s: float
    #: The most frame bytes any bin carried, as Mbit/s, and what the link allows a bin (Mbit/s,
    #: one frame on its edge included).
    busiest_bin_mbit: float
    #: None on a varying link (a rate trace): no one rate to hold a bin to.
    bin_allows_mbit: float | None
    #: Per flow (server port): the bins where the report's new data per bin and the router
    #: capture's differ, as (bin, report's bytes, capture's bytes).
    goodput_differs: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    goodput_bins: int = 0
    #: The report's busiest flow-bin of new data (Mbit/s, @bin_s bins from the flow's SYN).
    report_busiest_mbit: float = 0.0
    #: The flows-over-time plots' series (data delivered past the bottleneck, Table 1's Fig. 16
    #: panels): the flows whose series from the report's capture and the router's differ.
    delivered_differs: list[int] = field(default_factory=list)
    #: Those plots' busiest FLOWS_BIN_S bin of any flow (Mbit/s), from the report's capture.
    plotted_busiest_mbit: float = 0.0

    @property
    def queue_agrees(self) -> bool:
        """The peak as the qdisc counted it (where it counts one: a kernel without our patches
        counts none, and then only the capture does) and the drops, each the capture's."""
        return self.qdisc_peak_pkts in (None, self.held.peak_pkts) and self.qdisc_drops == self.held.dropped

    @property
    def delivery_within_link(self) -> bool:
        return self.bin_allows_mbit is None or self.busiest_bin_mbit <= self.bin_allows_mbit

    @property
    def goodput_agrees(self) -> bool:
        return not any(self.goodput_differs.values()) and not self.delivered_differs

    @property
    def agrees(self) -> bool:
        return self.queue_agrees and self.delivery_within_link and self.goodput_agrees


def check_runs(run_dir: Path, bin_s: float = GOODPUT_BIN_S) -> list[tuple[str, QueueCheck]]:
    """Each run of @run_dir (a run directory or a matrix cell) that has a router's capture: its
    report (queue, drops, goodput per bin) against that capture (the module's docstring), by the
    run's directory name.
    ValueError: none has one (asked with capture.router)."""
    plan = read_plan(read_record(run_dir / "plan.json", "sslab.plan"), str(run_dir / "plan.json"))
    out = [(where.name, check_run(run, where, plan, bin_s)) for run, where in runs_of(run_dir) if run.get("router_pcap")]
    if not out:
        raise ValueError(f"{run_dir}: no run with a capture of the router's interfaces (run it with "
                         f"SET=capture.router=true)")
    return out


def check_run(run: dict, where: Path, plan: Plan, bin_s: float = GOODPUT_BIN_S) -> QueueCheck:
    """One run's record @run (in @where, of @plan) against its router's capture."""
    ports = [f["port"] for f in run["flows"]]
    packets = list(router_packets(where / run["router_pcap"]))
    held = count_held(packets, set(ports))
    readings = [s[1] for s in run.get("bottleneck_backlog") or []]
    link_mbit = float(plan.bottleneck.rate_mbit)
    bins = delivery_bins(packets, set(ports), bin_s)
    frame = max((p.ip_len for p in packets), default=0) + ETHERNET_HEADER_BYTES
    seen_there = list(bottleneck_view(packets, set(ports)))
    ours = analyse_pcap_ports(where / run["pcap"], ports, bin_s) if run.get("pcap") else {}
    theirs = analyse_segments(seen_there, ports, bin_s)
    differs = {}
    compared = 0
    for port in ports:
        a = ours[port].new_bytes_by_bin if port in ours else {}
        b = theirs[port].new_bytes_by_bin
        compared += len(set(a) | set(b))
        differs[port] = [(k, a.get(k, 0), b.get(k, 0)) for k in sorted(set(a) | set(b)) if a.get(k, 0) != b.get(k, 0)]
    busiest = max((b for f in ours.values() for b in f.new_bytes_by_bin.values()), default=0)
    plotted = delivered_by_flow(where / run["pcap"], ports) if run.get("pcap") else {}
    delivered = delivered_by_segments(seen_there, ports)
    plotted_busiest = max((m for _, ms in delivered_bins(ports, plotted) for m in ms), default=0.0) if plotted else 0.0
    return QueueCheck(
        held=held, qdisc_peak_pkts=run["bottleneck"].get("peak_pkts"), qdisc_drops=run["bottleneck"]["drops"],
        readings_max_pkts=max(readings) if readings else None, buffer_pkts=plan.bottleneck.buffer_pkts,
        link_mbit=link_mbit, bin_s=bin_s,
        busiest_bin_mbit=max(bins.values(), default=0) * 8 / bin_s / 1e6,
        bin_allows_mbit=None if plan.bottleneck.link.trace is not None else link_mbit + frame * 8 / bin_s / 1e6,
        goodput_differs=differs, goodput_bins=compared, report_busiest_mbit=busiest * 8 / bin_s / 1e6,
        delivered_differs=[p for p in ports if plotted.get(p) != delivered[p]],
        plotted_busiest_mbit=plotted_busiest)


def lines(check: QueueCheck, label: str) -> list[str]:
    """What `sslab queue-check` prints for one run."""
    h = check.held
    return [
        f"{label}:",
        f"  queue's peak: the qdisc's count {check.qdisc_peak_pkts if check.qdisc_peak_pkts is not None else '-'}, "
        f"the router's capture {h.peak_pkts} (buffer {check.buffer_pkts}; the half-second readings' largest "
        f"{check.readings_max_pkts if check.readings_max_pkts is not None else '-'}): "
        + ("the same" if check.qdisc_peak_pkts == h.peak_pkts else
           "the capture's alone (the qdisc counts none)" if check.qdisc_peak_pkts is None else "DIFFERENT"),
        f"  drops: the qdisc's {check.qdisc_drops}, the capture's {h.dropped} (of {h.arrivals} arrivals, "
        f"{h.departures} departures): {'the same' if check.qdisc_drops == h.dropped else 'DIFFERENT'}",
        f"  delivery: the busiest {check.bin_s:g} s bin {check.busiest_bin_mbit:.2f} Mbit/s of frames, "
        + ("a varying link (its rate trace): not held to one rate" if check.bin_allows_mbit is None else
           f"a bin allows {check.bin_allows_mbit:.2f} (the link {check.link_mbit:g} and one frame): "
           f"{'within' if check.delivery_within_link else 'ABOVE THE LINK'}"),
        f"  goodput per {check.bin_s:g} s bin (the runs' tables): the report's and the router capture's, "
        f"{check.goodput_bins} flow-bins, the busiest {check.report_busiest_mbit:.2f} Mbit/s: "
        + ("the same" if not any(check.goodput_differs.values()) else
           f"{sum(len(v) for v in check.goodput_differs.values())} DIFFER "
           f"(first: {next(v[0] for v in check.goodput_differs.values() if v)})"),
        f"  data delivered over time (the flows-over-time plots): the same series from both captures for "
        f"{len(check.goodput_differs) - len(check.delivered_differs)} of {len(check.goodput_differs)} flows; their "
        f"busiest {FLOWS_BIN_S:g} s bin {check.plotted_busiest_mbit:.2f} Mbit/s",
    ]
