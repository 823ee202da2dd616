"""The dumbbell, built from network namespaces on the substrate.

    s1 ─┐                          ┌─ c1
    s2 ─┤                          ├─ c2
    ... ├─ r1 ══ bottleneck ══> r2 ┤  ...
    sN ─┘                          └─ cN

Servers s_i (the senders, running the algorithm under test) sit behind
router r1, clients c_i (the receivers) behind r2.  Each host has a link of
its own to its router (lans "veth", the default), or each side's hosts
share a switch, an Open vSwitch bridge in standalone mode with no
controller, on its router by one link (lans "ovs"; sslab.guest.ovs):

    s_i ── lan1 ── r1 ══ bottleneck ══> r2 ── lan2 ── c_i

The switch's ports live in the root namespace; what is on r1's egress
towards s_i with point-to-point links (the pair's delay line, the host
model) is on the switch's port towards s_i instead, and likewise on r2's
side: the path's queues and delays are the same, with one more hop.

The only queue on the data path is the bottleneck: r1's egress towards
r2, a netem rate limiter (delay 0) whose queue limit is the buffer size.
With netem "one" (a plain reading of a testbed that sets rate, buffer and
delay with one netem on its router) that netem also holds the data
direction's delay every pair shares, half the smallest pair's RTT, and the
pairs' lines towards the clients keep the rest: its limit then counts the
packets in that delay as well as the queued ones, and a packet waits the
delay or the queue ahead of it, whichever is longer, not their sum.
netem computes each packet's departure time from the previous one's, so a late timer (common
under TCG) does not lose rate and no burst ever passes at line rate; an HTB
class with a packet FIFO is available as the alternative shaper, but under
TCG a small HTB burst loses rate (48.9 of 50 Mbit/s measured) and a large
one lets the initial window through unspread.  Each pair's base
RTT is two netem delays of RTT/2 on links that never queue: r2's egress
towards c_i (data) and r1's egress towards s_i (ACKs).  The senders' own
interfaces keep the veth default (no queue), so TCP Small Queues never
holds a sender back; sender_qdisc puts fq (which paces every flow at the
rate TCP sets, CUBIC's included) or fq_codel there instead.

A host model (sslab.scenario.hosts) adds the time hosts take, each host a
queue of its own: its access link's line rate (a netem rate on its own
egress, and on its router's egress towards it, in the netem of the delay
line: a FIFO server and a constant delay commute, and one netem serialises
exactly, where a rate in a child netem measured up to twice the frame's
time), then interrupt coalescing (netem slot) and its receive cost per
packet (a netem whose rate makes every packet one 65535-byte cell: a fixed
time per packet), each stage a child of the one before:

    r2-c_i: netem delay RTT/2 [rate NIC] [slot] --> [slot batch] --> [cost] --> c_i
    c_i:    [netem rate NIC] [slot up] --> r2 ...

On a hop with bursts (slot) the link's serialisation comes before the slot,
which releases frames together as an aggregate does; the receive cost then
spreads them.

Every veth sends one segment per packet (gso_max_segs 1): the bottleneck
and the traces see real 1500-byte packets, as on a wire.  With Linux's
offloads (topology.offloads "linux") the veths keep their TSO/GSO: a
sender hands its link segments of up to 64 KB (TCP sizes them to about a
millisecond of its pacing rate), its line rate (the host model's, else
1 Gbit/s) serialises each whole, and each crosses the routers, the
bottleneck and the client's link whole: what a NIC's segmentation at line
rate and the next hop's GRO make of a burst that arrives within one poll.
The bottleneck's netem then counts such a segment as one packet in its
limit and its bytes in its rate, as Linux's netem on a router with GRO
does, and the client acknowledges it at once (a stretch ACK).  A veth
merges on receive only what a device without TSO sends, so GRO proper is
not enabled: separate segments of a flow that a NIC would deliver within
one interrupt stay separate here.  "linux-N" caps every link's segments at
N (gso_max_segs N), which TCP's own sizing then keeps to: a router whose
NIC hands GRO at most N frames of a line-rate burst a poll.  Receivers advertise a large
initial window and have large buffers, and senders large send buffers, so a
flow is never limited by a buffer (the traces record snd_wnd so that a run
which was is flagged); with topology.socket_buffers "linux" every host keeps
Linux's own tcp_wmem and tcp_rmem instead, with "linux-senders" the servers.  Every
namespace has tcp_no_metrics_save, so one run's ssthresh never leaks into
the next through the route metrics cache.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import threading
from dataclasses import dataclass
from typing import Any

from ..records import (BatchSlots, CellRate, Delay, DelayVariation, Host, Plan, Queue, Rate, Stage,
                       UniformDelay)
from . import ovs
from .echo import echoes, open_echo_socket
from .netns import (NamespaceLauncher, end_batch, in_namespaces, in_ns, run_batch, set_sysctls, sh,
                    tcp_counters_of)
from .qdiscpeak import TC_H_ROOT, qdisc_peak, tc_handle

#: netem delay-line limit: far above anything in flight, so it never drops.
DELAY_LIMIT_PKTS = 100000
#: Client receive buffers (bytes), far beyond any window here.  They cannot
#: lift Linux's cap on the first advertised window (64 KB, whatever the
#: buffers or initrwnd), after which the window grows by about two segments
#: per segment received (x3 per round): enough for slow start's x2, not for
#: SUSS's x4 rounds, which the harness flags as receiver-limited.
CLIENT_RMEM_DEFAULT = 32 << 20
CLIENT_RMEM_MAX = 64 << 20
SERVER_WMEM_MAX = 64 << 20
#: Initial receive window clients advertise (packets), see module docstring.
CLIENT_INITRWND = 10000
#: HTB burst: 2 full frames.  HTB refills tokens on high-resolution timers,
#: so a small burst does not cap the rate (the saturating-flow check
#: verifies it); a large one lets a burst through at line rate after an
#: idle period (10 frames let a whole initial window through unspread,
#: which hides the bottleneck from SUSS's first ACK-train measurement).
BOTTLENECK_BURST_FRAMES = 2
#: The Ethernet header a veth adds to each IP packet (sslab.scenario.units.ETH_HEADER_BYTES;
#: guest code imports no host module).
ETH_HEADER_BYTES = 14
#: CPUs that process packets received on the dumbbell's veths (hex mask).
RPS_CPU_MASK = "1"
#: A receive cost is a netem rate at which every packet is one cell of this many bytes: the time per
#: packet is then the cell's time, whatever the packet's size (frames here are at most 1514 bytes).
COST_CELL_BYTES = 65535


# --------------------------------------------------------------------------
# A link as stages
# --------------------------------------------------------------------------
#
# Each mechanism a packet meets is one stage class with its netem words (sslab.records, "A link as
# stages", with the table of them): the plan lists the last hop's (bursts, loss, a varying delay),
# the rest are made here from the plan's numbers.  A line's stages are joined into one netem
# (`netem`); a host model's stages after its link are netems of their own, each a child of the one
# before (`chain`).
#
# The bottleneck on a varying link is HTB with a FIFO under it, not netem
# (`HtbShaper`): its rate is replayed from a trace (sslab.guest.linkreplay),
# and netem, which fixes each packet's departure when it is queued, would
# apply a new rate only after the whole queue had drained at the old one.
#
# Where each stage goes is Dumbbell._configure's (the lines towards each client and server, each
# client's own interface); random loss only once the fidelity checks are done (add_loss); a varying
# delay's extra by its replay during each run (linkreplay.DelayReplay).


def netem(*stages: Stage | None) -> str:
    """One netem qdisc's kind and arguments for @stages (None: a stage the line does not have), in
    the order given."""
    return " ".join(["netem", *(s.args() for s in stages if s is not None)])


def chain(dev: str, lines: list[str], limit: Queue) -> list[str]:
    """tc lines hanging netem @lines, each a child of the one before, under @dev's root netem 1:,
    each with @limit."""
    out, parent = [], "1:1"
    for k, line in enumerate(lines, start=1):
        out.append(f"qdisc add dev {dev} parent {parent} handle {10 * k}: {line} {limit.args()}")
        parent = f"{10 * k}:1"
    return out


@dataclass(frozen=True)
class HtbShaper:
    """The bottleneck as an HTB class at @rate with a @burst of bytes and a FIFO of @queue under it:
    a rate that can change while packets wait (a replayed trace)."""
    rate: Rate
    burst_bytes: int
    queue: Queue

    #: The HTB class the FIFO hangs from (its parent, as tc writes it: 1:1).
    FIFO_PARENT = (1, 1)

    def tc(self, dev: str) -> list[str]:
        """The root, the class, then the FIFO (last: the line a run's end changes to restart its peak)."""
        rate, burst = self.rate.args().removeprefix("rate "), str(self.burst_bytes)
        cls = "{}:{}".format(*self.FIFO_PARENT)
        return [f"qdisc add dev {dev} root handle 1: htb default 1",
                f"class add dev {dev} parent 1: classid {cls} htb rate {rate} ceil {rate} burst {burst} cburst {burst}",
                f"qdisc add dev {dev} parent {cls} handle 10: pfifo {self.queue.args()}"]


#: A line whose delay varies keeps its packets in order by a rate (Dumbbell._delay_line): this one, far
#: above any link here (a 1514-byte frame takes 0.12 us at it).
FIFO_RATE_MBIT = 100000
#: Every line's queue but the bottleneck's: never the one that drops.
DELAY_QUEUE = Queue(DELAY_LIMIT_PKTS)


def host_stages(host: Host | None) -> list[str]:
    """The netems that model a receiving host (the plan's) after its link, in the order packets meet
    them: coalescing, then the receive cost with its jitter (sslab.scenario.hosts)."""
    if host is None:
        return []
    lines = []
    if host.rx_batch:
        lines.append(netem(BatchSlots(host.rx_batch.period_us, host.rx_batch.packets)))
    cost_ns, jitter_us = round(host.rx_cost_us * 1000), host.rx_jitter_us
    if cost_ns or jitter_us:
        lines.append(netem(UniformDelay(jitter_us / 2) if jitter_us else None,
                           CellRate(round(COST_CELL_BYTES * 1e9 / cost_ns), COST_CELL_BYTES) if cost_ns else None))
    return lines


def _nic(host: Host | None) -> Rate | None:
    """A host's access link, as a line rate; None for an ideal host."""
    return Rate(host.nic_mbit) if host is not None and host.nic_mbit else None


class Dumbbell:
    """The dumbbell from plain network namespaces (`ip netns`, veth)."""

    backend = "netns"
    #: Each server's and client's one interface.
    host_dev = "eth0"

    def __init__(self, plan: Plan, prefix: str = "sl"):
        if not plan.pairs:
            raise ValueError("a dumbbell needs at least one pair")
        #: What the dumbbell is: the run's plan (sslab.records), read as it is, no copy of its own.
        self.plan = plan
        #: Every namespace's and switch's name starts with it.
        self.prefix = p = prefix
        #: Extra one-way delay taken off every delay line, ms: the substrate's own per-path latency,
        #: measured by calibrate_delay() on a real clock (the plan's delays are the path's).
        self.delay_offset_ms = 0.0
        self.r1, self.r2 = f"{p}-r1", f"{p}-r2"
        self.servers = [f"{p}-s{i}" for i in range(1, len(plan.pairs) + 1)]
        self.clients = [f"{p}-c{i}" for i in range(1, len(plan.pairs) + 1)]
        self.bottleneck_dev = "r1-r2"
        lans, shaper, netem_mode = plan.topology.lans, plan.bottleneck.link.shaper, plan.bottleneck.netem
        if lans not in ("veth", "ovs"):
            raise ValueError(f"lans must be veth or ovs, not {lans!r}")
        if netem_mode not in ("apart", "one", "one-rtt") or (netem_mode != "apart" and shaper != "netem"):
            raise ValueError(f"netem {netem_mode!r} with shaper {shaper!r}: apart, or one or one-rtt with a netem "
                             "shaper")
        #: The switches (Open vSwitch bridges, root namespace): servers' side, clients' side.
        self.switches = [f"{p}-lan1", f"{p}-lan2"] if lans == "ovs" else []
        self.versions: dict = {}
        self._ovs: ovs.Daemons | None = None
        #: Starts the run's network programs in the namespaces (their handles kept for the boot).
        self.launcher = NamespaceLauncher()
        #: The bottleneck queue's reader, started at the first read and kept for the boot.
        self._queue: QdiscStats | None = None
        #: The traffic tool's servers and clients kept for the boot, by (its mode, namespace, port)
        #: (sslab.guest.flows.KeptTool).
        self.kept_tools: dict[tuple[str, str, int], Any] = {}
        #: Captures kept for the boot under virtual time, by (namespace, device, snap length)
        #: (sslab.guest.capture.KeptCapture).
        self.kept_captures: dict[tuple[str, str, int], Any] = {}
        #: The link model's random loss is on the lines (add_loss): not during the fidelity checks,
        #: whose saturating flow and pings measure the path's rate and delay, not its loss.
        self.with_loss = False

    @property
    def switched(self) -> bool:
        return bool(self.switches)

    # -- what follows from the plan ----------------------------------------

    @property
    def shaper(self) -> str:
        """The bottleneck's shaper: "netem", a netem rate limiter (exact per-packet serialization, no
        burst) with the buffer as its queue limit; "htb", an HTB class and a FIFO (a replayed rate)."""
        return self.plan.bottleneck.link.shaper

    @property
    def shared_delay_ms(self) -> float:
        """The delay the bottleneck netem holds, on the data direction: with netem "one", half the
        smallest pair's RTT (every pair has at least that much one way; each pair's line towards its
        client keeps the rest); "one-rtt", the whole smallest RTT (every pair's two lines keep half
        of the rest each); else none."""
        smallest = min(p.rtt_ms for p in self.plan.pairs)
        return {"one": smallest / 2, "one-rtt": smallest}.get(self.plan.bottleneck.netem, 0.0)

    @property
    def frame_bytes(self) -> int:
        """A full-sized frame on these links: the MTU's IP packet and its Ethernet header."""
        return self.plan.topology.mtu + ETH_HEADER_BYTES

    @property
    def burst_bytes(self) -> int:
        """The HTB shapers' burst (bottleneck and trace replay): BOTTLENECK_BURST_FRAMES full frames."""
        return BOTTLENECK_BURST_FRAMES * self.frame_bytes

    @property
    def delay_variation(self) -> DelayVariation | None:
        """The varying delay towards the clients, or None."""
        return next((st for st in self.plan.bottleneck.link.down if isinstance(st, DelayVariation)), None)

    def host(self, pair: int, kind: str) -> Host | None:
        """Pair @pair's (1-based) server or client in the host model (None: ideal)."""
        pairs = self.plan.hosts.pairs
        return getattr(pairs[pair - 1], kind) if pair <= len(pairs) else None

    def toward_server(self, i: int) -> tuple[str | None, str]:
        """(namespace, device; None: the root namespace) whose egress is the last hop towards server @i."""
        return (None, f"{self.prefix}-l1-s{i}") if self.switched else (self.r1, f"r1-s{i}")

    def toward_client(self, i: int) -> tuple[str | None, str]:
        """(namespace, device) whose egress is the last hop towards client @i."""
        return (None, f"{self.prefix}-l2-c{i}") if self.switched else (self.r2, f"r2-c{i}")

    def switch_ports(self) -> dict[str, list[str]]:
        """Each switch's ports: its router's link first, then its hosts'."""
        if not self.switched:
            return {}
        p, n = self.prefix, len(self.plan.pairs)
        return {self.switches[0]: [f"{p}-l1-r1"] + [f"{p}-l1-s{i}" for i in range(1, n + 1)],
                self.switches[1]: [f"{p}-l2-r2"] + [f"{p}-l2-c{i}" for i in range(1, n + 1)]}

    @property
    def namespaces(self) -> list[str]:
        return [self.r1, self.r2] + self.servers + self.clients

    @staticmethod
    def _host(net: str, pair: int, host: int) -> str:
        """Address .host of the /24 for @pair inside @net."""
        base = ipaddress.IPv4Network(net).network_address
        return str(base + (pair << 8) + host)

    def server_addr(self, i: int) -> str:
        return self._host(self.plan.addresses.servers, i, 2)

    def client_addr(self, i: int) -> str:
        return self._host(self.plan.addresses.clients, i, 2)

    def _core(self, host: int) -> str:
        return str(ipaddress.IPv4Network(self.plan.addresses.core).network_address + host)

    # -- building -------------------------------------------------------

    # -- the parts a backend provides: namespaces and the links between them --

    def _create_namespaces(self) -> None:
        run_batch("ip", None, [f"netns add {ns}" for ns in self.namespaces])

    def _create_links(self) -> None:
        def where(ns: str | None) -> str:
            return f" netns {ns}" if ns else ""
        run_batch("ip", None, [f"link add {dev_a}{where(ns_a)} type veth peer name {dev_b}{where(ns_b)}"
                               for ns_a, dev_a, ns_b, dev_b in self.links()])

    def links(self) -> list[tuple[str | None, str, str | None, str]]:
        """(namespace, device, peer namespace, peer device) for every link; a switch's end is in the
        root namespace (None)."""
        out = [(self.r1, "r1-r2", self.r2, "r2-r1")]
        if self.switched:
            ports1, ports2 = self.switch_ports().values()
            out += [(self.r1, "r1-lan", None, ports1[0]), (self.r2, "r2-lan", None, ports2[0])]
            for srv, cli, to_srv, to_cli in zip(self.servers, self.clients, ports1[1:], ports2[1:]):
                out += [(srv, self.host_dev, None, to_srv), (cli, self.host_dev, None, to_cli)]
            return out
        for i, (srv, cli) in enumerate(zip(self.servers, self.clients), start=1):
            out += [(srv, self.host_dev, self.r1, f"r1-s{i}"), (cli, self.host_dev, self.r2, f"r2-c{i}")]
        return out

    def _start_switches(self) -> None:
        """The Open vSwitch daemons, when the LANs are switched (started here if none runs)."""
        if self.switched:
            self._ovs = ovs.Daemons().ensure()
            self.versions["openvswitch"] = ovs.version()

    def _create_switches(self) -> None:
        for bridge, ports in self.switch_ports().items():
            ovs.add_bridge(bridge, ports)

    def build(self) -> "Dumbbell":
        self._start_switches()
        self.teardown()
        self._create_namespaces()
        self._create_links()
        self._create_switches()
        self._configure()
        return self

    def switch_modes(self) -> dict[str, str]:
        """Each switch's fail mode and controllers, read back from Open vSwitch ({} unswitched)."""
        return ovs.fail_modes(self.switches) if self.switched else {}

    def _configure(self) -> None:
        """Everything after the namespaces and veths exist, batched: per namespace the sysctls
        written from this process, one `ip -batch` and one `tc -batch` (and, on SMP kernels, one
        shell for receive steering).  Every process costs wall time (15-40 ms each under UML),
        and the per-command form spawned several hundred of them for a 13-pair dumbbell."""
        ns_sysctl: dict[str, list[str]] = {ns: ["net.ipv4.tcp_no_metrics_save=1"] for ns in self.namespaces}
        # The switches' ports are in the root namespace (None): their devices and qdiscs only.
        every = self.namespaces + ([None] if self.switched else [])
        ns_devs: dict[str | None, list[str]] = {ns: [] for ns in every}
        ns_ip: dict[str | None, list[str]] = {ns: ["link set lo up"] if ns else [] for ns in every}
        ns_tc: dict[str | None, list[str]] = {ns: [] for ns in every}
        for r in (self.r1, self.r2):
            ns_sysctl[r].append("net.ipv4.ip_forward=1")
        # Offloads off: one segment per packet, so the bottleneck and the captures see real 1500-byte
        # packets and a packet-counted queue never counts 64 KB ones.  Linux's: every veth keeps its
        # TSO/GSO, and a sender's segment of up to 64 KB crosses every link whole (the module docstring);
        # "linux-N" caps it at N segments, the most a router's GRO merges of a line-rate burst.
        segments = self.plan.topology.segments_a_packet
        for ns_a, dev_a, ns_b, dev_b in self.links():
            for ns, dev in ((ns_a, dev_a), (ns_b, dev_b)):
                ns_devs[ns].append(dev)
                ns_ip[ns] += [*([f"link set {dev} gso_max_segs {segments}"] if segments else []),
                              f"link set {dev} mtu {self.plan.topology.mtu}", f"link set {dev} up"]
        core_len = ipaddress.IPv4Network(self.plan.addresses.core).prefixlen
        ns_ip[self.r1].append(f"addr add {self._core(1)}/{core_len} dev r1-r2")
        ns_ip[self.r2].append(f"addr add {self._core(2)}/{core_len} dev r2-r1")
        ns_tc[self.r1] += self._bottleneck_tc()
        # Raised buffers: no flow is ever limited by its socket's buffers; Linux's: each namespace keeps
        # the kernel's tcp_wmem and tcp_rmem (autotuned to 4 MB and 6 MB) and routes have no initrwnd;
        # Linux's on the senders: the servers keep the kernel's, the clients are raised.
        raised_send = self.plan.topology.socket_buffers == "raised"
        raised_receive = self.plan.topology.socket_buffers != "linux"
        for i, (srv, cli) in enumerate(zip(self.servers, self.clients), start=1):
            addresses = self.plan.addresses
            srv_gw, cli_gw = self._host(addresses.servers, i, 1), self._host(addresses.clients, i, 1)
            ns_ip[srv] += [f"addr add {self.server_addr(i)}/24 dev {self.host_dev}", f"route add default via {srv_gw}"]
            # On a switched LAN every pair's gateway address is on r1's one port to the switch.
            ns_ip[self.r1].append(f"addr add {srv_gw}/24 dev {'r1-lan' if self.switched else f'r1-s{i}'}")
            if raised_send:
                ns_sysctl[srv].append(f"net.ipv4.tcp_wmem=4096 65536 {SERVER_WMEM_MAX}")
            # ACK direction: r1 (or its switch) -> server, then the server's own time.
            ns, dev = self.toward_server(i)
            ns_tc[ns].append(f"qdisc add dev {dev} root handle 1: {self._delay_line(i, 'server')}")
            ns_tc[ns] += self._chain(dev, host_stages(self.host(i, "server")))
            if (nic := _nic(self.host(i, "server"))):
                # Data leaves the server at its link's rate.
                ns_tc[srv].append(f"qdisc add dev {self.host_dev} root {netem(nic, DELAY_QUEUE)}")
            elif self.plan.topology.sender_qdisc != "none":
                ns_tc[srv].append(f"qdisc add dev {self.host_dev} root {self.plan.topology.sender_qdisc}")
            ns_ip[cli] += [f"addr add {self.client_addr(i)}/24 dev {self.host_dev}",
                           f"route add default via {cli_gw}" + (f" initrwnd {CLIENT_INITRWND}" if raised_receive else "")]
            ns_ip[self.r2].append(f"addr add {cli_gw}/24 dev {'r2-lan' if self.switched else f'r2-c{i}'}")
            if raised_receive:
                ns_sysctl[cli].append(f"net.ipv4.tcp_rmem=4096 {CLIENT_RMEM_DEFAULT} {CLIENT_RMEM_MAX}")
            # Data direction: r2 (or its switch) -> client, then the client's own time.
            ns, dev = self.toward_client(i)
            ns_tc[ns].append(f"qdisc add dev {dev} root handle 1: {self._delay_line(i, 'client')}")
            ns_tc[ns] += self._chain(dev, host_stages(self.host(i, "client")))
            if (uplink := self._uplink(i)):
                # The client's ACKs leave its own interface at its link's rate and, on a hop
                # with bursts, in bursts (the uplink).
                ns_tc[cli].append(f"qdisc add dev {self.host_dev} root {uplink}")
        ns_ip[self.r1].append(f"route add {self.plan.addresses.clients} via {self._core(2)}")
        ns_ip[self.r2].append(f"route add {self.plan.addresses.servers} via {self._core(1)}")
        smp = (os.cpu_count() or 1) > 1
        for ns in every:
            if ns:
                set_sysctls(ns, dict(kv.split("=", 1) for kv in ns_sysctl[ns]))
            if smp:
                # veth hands each packet to the backlog of the CPU that sent it; a
                # sender that moves between CPUs then reorders its own flow.
                # Steering every veth's receive work to one CPU keeps links FIFO.
                # (A kernel without SMP, such as UML's, has no steering and no reordering.)
                steer = "\n".join(f"echo {RPS_CPU_MASK} > /sys/class/net/{d}/queues/rx-0/rps_cpus"
                                  for d in ns_devs[ns])
                if ns:
                    in_ns(ns, "sh", "-ec", steer)
                else:
                    sh("sh", "-ec", steer)
            run_batch("ip", ns, ns_ip[ns])
            if ns_tc[ns]:
                run_batch("tc", ns, ns_tc[ns])

    def _hop(self, direction: str) -> list[Stage]:
        """The last hop's stages @direction ("down", "up") that are on its line now, in the plan's order:
        those always on, those after the checks once add_loss has put them on; a replayed one (a
        varying delay) is set by its replay, not here."""
        stages = self.plan.bottleneck.link.down if direction == "down" else self.plan.bottleneck.link.up
        return [st for st in stages if st.when == "always" or (st.when == "after_checks" and self.with_loss)]

    def _delay_line(self, i: int, kind: str, extra_ms: float = 0.0) -> str:
        """The netem towards pair @i's server or client: half the pair's RTT (towards a client, with
        @extra_ms of a varying delay), the host's link rate, and (towards a client) the last hop's
        stages."""
        rate = _nic(self.host(i, kind))
        delay = self.one_way_delay(i, kind)
        if kind == "client" and self.delay_variation:
            # netem keeps a line's packets in order only when it has a rate (each packet is then due
            # after the one before it); a delay that falls would otherwise let later packets overtake.
            rate, delay = rate or Rate(FIFO_RATE_MBIT), Delay(delay.ms + extra_ms)
        return netem(delay, DELAY_QUEUE, rate, *(self._hop("down") if kind == "client" else []))

    def _uplink(self, i: int) -> str | None:
        """The netem on pair @i's client's own interface (its ACKs): its link's rate and the last hop's
        stages from it; None when it has none of them."""
        nic, hop = _nic(self.host(i, "client")), self._hop("up")
        return netem(DELAY_QUEUE, nic, *hop) if nic or hop else None

    def add_loss(self) -> bool:
        """Put the last hop's stages that wait for the fidelity checks (random loss) on the clients' lines
        (data) and interfaces (ACKs); False (nothing run) when the hop has none."""
        down = any(st.when == "after_checks" for st in self.plan.bottleneck.link.down)
        up = any(st.when == "after_checks" for st in self.plan.bottleneck.link.up)
        if not (down or up):
            return False
        self.with_loss = True
        per_ns: dict[str | None, list[str]] = {}
        for i in range(1, len(self.plan.pairs) + 1):
            if down:
                ns, dev = self.toward_client(i)
                # The root only: the host model's stages below it stay.
                line = self._delay_line(i, "client")
                per_ns.setdefault(ns, []).append(f"qdisc change dev {dev} root handle 1: {line}")
            if up:
                per_ns.setdefault(self.clients[i - 1], []).append(
                    f"qdisc replace dev {self.host_dev} root {self._uplink(i)}")
        for ns, lines in per_ns.items():
            run_batch("tc", ns, lines)
        return True

    @staticmethod
    def _chain(dev: str, lines: list[str]) -> list[str]:
        """tc lines hanging netem @lines, each a child of the one before, under @dev's root netem 1:."""
        return chain(dev, lines, DELAY_QUEUE)

    def one_way_delay(self, i: int, kind: str = "server") -> Delay:
        """The delay of pair @i's line towards its server (ACKs) or client (data, less what the
        bottleneck holds), less the substrate's own latency."""
        if self.plan.bottleneck.netem == "one-rtt":
            held = self.shared_delay_ms / 2     # each direction's line gives up half of what it holds
        else:
            held = self.shared_delay_ms if kind == "client" else 0.0
        rtt = self.plan.pairs[i - 1].rtt_ms
        return Delay(max(rtt / 2 - held - self.delay_offset_ms, 0))

    def set_delays(self) -> None:
        """Apply the pairs' delays again (after delay_offset_ms changed)."""
        per_ns: dict[str | None, list[str]] = {}
        for i in range(1, len(self.plan.pairs) + 1):
            for (ns, dev), kind in ((self.toward_server(i), "server"), (self.toward_client(i), "client")):
                # The root only: the host model's stages below it stay.
                per_ns.setdefault(ns, []).append(f"qdisc change dev {dev} root handle 1: {self._delay_line(i, kind)}")
        for ns, lines in per_ns.items():
            run_batch("tc", ns, lines)

    def base_rtt_ms(self, i: int, count: int = 10, interval: float = 0.2) -> float:
        """The least RTT of @count echo requests from server @i to its client over the idle path,
        as ping measures it, sent from this process (guest/echo.py: no ping process a pair)."""
        sock = self.launcher.within(self.servers[i - 1], lambda: open_echo_socket(self.client_addr(i)))
        with sock:
            return echoes(sock, count, interval).min_ms

    def bottleneck_bytes(self) -> int:
        """Bytes the bottleneck class has sent (frames, link-layer headers included)."""
        qdiscs = json.loads(sh("tc", "-n", self.r1, "-s", "-j", "qdisc", "show", "dev", self.bottleneck_dev))
        return next(q for q in qdiscs if q.get("kind") == self.shaper)["bytes"]

    def _bottleneck_tc(self) -> list[str]:
        """tc lines (in r1) that make the bottleneck."""
        bottleneck = self.plan.bottleneck
        dev, rate, buffer = self.bottleneck_dev, Rate(bottleneck.rate_mbit), Queue(bottleneck.buffer_pkts)
        if self.shaper == "netem":
            # With netem "one" (or "one-rtt") the shared delay is in this netem: a packet leaves at the later of its
            # arrival plus the delay and the previous one's departure, plus its own serialisation,
            # and the limit counts the packets still in the delay with the queued ones.
            held = self.shared_delay_ms
            return [f"qdisc add dev {dev} root handle 1: {netem(Delay(held) if held else None, rate, buffer)}"]
        return HtbShaper(rate, self.burst_bytes, buffer).tc(dev)

    def close_helpers(self) -> None:
        """End what is kept for the boot (the queue's reader, the launcher's namespace handles): a
        process in a namespace, or a handle of it, keeps it alive after it is deleted."""
        for tool in [*self.kept_tools.values(), *self.kept_captures.values()]:
            tool.close()
        self.kept_tools.clear()
        self.kept_captures.clear()
        if self._queue is not None:
            self._queue.close()
            self._queue = None
        self.launcher.close()

    def teardown(self) -> None:
        self.close_helpers()
        # -force: carry on past namespaces that are not there.  A veth goes with its namespace, and
        # its peer (a switch's port) with it; the switches are deleted after.
        run_batch("ip", None, [f"netns del {ns}" for ns in self.namespaces], force=True)
        for bridge in self.switches:
            ovs.del_bridge(bridge)

    def stop_switches(self) -> None:
        """The Open vSwitch daemons, if this dumbbell started them (after teardown)."""
        if self._ovs:
            self._ovs.stop()


    # -- measuring ------------------------------------------------------

    def bottleneck_counters(self) -> dict[str, int]:
        """Packets sent, dropped and queued at the bottleneck FIFO so far, from one `tc` process
        kept for the boot (QdiscStats): a run reads them before, during (the queue's samples) and
        after its traffic, and a `tc` start cost more than the read."""
        return self._queue_reader().read()

    def _queue_reader(self) -> QdiscStats:
        if self._queue is None:
            self._queue = QdiscStats(self.r1, self.bottleneck_dev, "netem" if self.shaper == "netem" else "pfifo")
        return self._queue

    def bottleneck_counters_and_peak(self) -> tuple[dict[str, int], dict[str, int] | None]:
        """The counters after a run's traffic, and the most packets and bytes the bottleneck's queue
        held at once during it: its netem's (our patch 0007), or under the HTB shaper its FIFO's
        (patch 0008), counted in the kernel: no reading during the run misses a peak, and none is
        taken.  That qdisc is then changed to its own settings, which starts the peak again for the
        next run, in the same `tc` batch as the counters' read.  The peak is None on a kernel
        without the patch."""
        if self.shaper == "netem":
            kind, parent, line = "netem", TC_H_ROOT, self._bottleneck_tc()[0]
        else:
            kind, parent, line = "pfifo", tc_handle(*HtbShaper.FIFO_PARENT), self._bottleneck_tc()[-1]
        peak = in_namespaces([self.r1], lambda _ns: qdisc_peak(self.bottleneck_dev, kind, parent))[self.r1]
        restart = line.replace("qdisc add ", "qdisc change ", 1) if peak is not None else None
        return self._queue_reader().read(before=restart), peak

    def tcp_counters(self, pairs: list[int]) -> dict[int, dict[str, int]]:
        """Each of @pairs' server namespace's Tcp: and TcpExt: counters (snmp, netstat), read by
        this process (netns.tcp_counters_of)."""
        counters = tcp_counters_of([self.servers[p - 1] for p in pairs])
        return {p: counters[self.servers[p - 1]] for p in pairs}


class QdiscStats:
    """`tc -s -j -batch -` in a namespace, asked for one device's qdiscs at a time (one thread at
    a time: a read is a question and its answer).

    stdbuf makes tc flush each answer (one JSON line) as it is written."""

    def __init__(self, ns: str, dev: str, kind: str):
        self.dev, self.kind = dev, kind
        self.proc = subprocess.Popen(["stdbuf", "-oL", "tc", "-n", ns, "-s", "-j", "-batch", "-"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self._lock = threading.Lock()

    def read(self, before: str | None = None) -> dict[str, int]:
        """The counters; with @before, a tc line run first in the same batch (a change prints nothing:
        the answer that follows says the batch is still there, so the line was taken)."""
        with self._lock:
            self.proc.stdin.write((f"{before}\n" if before else "") + f"qdisc show dev {self.dev}\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("tc -batch ended" + (f" (after: {before})" if before else ""))
        q = next(q for q in json.loads(line) if q.get("kind") == self.kind)
        return {"packets": q.get("packets", 0), "drops": q.get("drops", 0), "backlog_pkts": q.get("qlen", 0)}

    def close(self) -> None:
        end_batch(self.proc)


class MininetDumbbell(Dumbbell):
    """The same dumbbell, with Mininet creating the hosts and links.

    Mininet (Debian's python3 mininet, in the image) makes one host per
    namespace and a veth pair per link, without switches or controllers:
    the routers are hosts with forwarding on.  Each host's namespace is then
    given the name the configuration code uses (`ip netns attach`), so the
    addresses, routes, netem lines, bottleneck and sysctls are applied by
    exactly the same code as for the plain-namespace backend.
    """

    backend = "mininet"

    def _create_namespaces(self) -> None:
        from mininet.net import Mininet
        from mininet.node import Host, OVSBridge

        self.net = Mininet(controller=None, build=False, autoSetMacs=False, autoStaticArp=False)
        self.hosts = {ns: self.net.addHost(ns.replace(self.prefix + "-", ""), cls=Host, inNamespace=True)
                      for ns in self.namespaces}
        # Mininet's OVSBridge: an OVSSwitch in standalone mode, no controller.
        self.switch_nodes = {name: self.net.addSwitch(name, cls=OVSBridge) for name in self.switches}

    def _create_links(self) -> None:
        on_switch = {port: bridge for bridge, ports in self.switch_ports().items() for port in ports}

        def node(ns: str | None, dev: str):
            return self.hosts[ns] if ns else self.switch_nodes[on_switch[dev]]
        for ns_a, dev_a, ns_b, dev_b in self.links():
            self.net.addLink(node(ns_a, dev_a), node(ns_b, dev_b), intfName1=dev_a, intfName2=dev_b)

    def _create_switches(self) -> None:
        """Mininet starts its switches (adding their ports); ours keep their qdiscs (sslab.guest.ovs)."""
        for sw in self.switch_nodes.values():
            sw.start([])
        ovs.keep_qdiscs([port for ports in self.switch_ports().values() for port in ports])

    def build(self) -> "Dumbbell":
        self._start_switches()
        self.teardown()
        self._create_namespaces()
        self._create_links()
        self.net.build()
        self._create_switches()
        for ns, host in self.hosts.items():
            sh("ip", "netns", "attach", ns, str(host.pid))
            # Mininet configures interfaces its own way; start from a clean slate.
            for intf in host.intfList():
                if intf.name != "lo":
                    in_ns(ns, "ip", "addr", "flush", "dev", intf.name)
        self._configure()
        return self

    def teardown(self) -> None:
        self.close_helpers()
        net = getattr(self, "net", None)
        if net is not None:
            net.stop()
            self.net = None
        super().teardown()
