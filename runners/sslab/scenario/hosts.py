"""Host models: the time real hosts take, as data.

Under `uml/inf-cpu` a host costs no time: packets that arrive together are
handled in the same microsecond, and veths serialise nothing.  Slow-start
algorithms measure exactly that spacing (HyStart's ACK-train test, SUSS's
blue-train dtB), so a testbed with infinitely fast hosts is a model, and
this module makes it a named choice among others:

  nic        the access link's line rate (each host's link to its router,
             both directions): every frame is serialised at it, at the
             sender's end of the link.  A 1514-byte frame takes 12.1 us at
             1 Gbit/s; a burst arriving from an aggregating hop is spread
             out by it.
  rx_cost    the receiving host's processing per packet: packets that
             arrive together are handled one after another, rx_cost apart.
  rx_jitter  an extra, uniform [0, rx_jitter] wait per packet (seeded: the
             guest's entropy seed decides it, so runs repeat).
  rx_batch   interrupt coalescing: arriving packets are handed to the host
             in batches, at most `packets` every `period` (the CPU then
             walks each batch rx_cost per packet).

Each stage is a netem qdisc of its own (sslab.guest.dumbbell): the link
rate on the host's egress and, for the other direction, after the delay
line on the router's egress towards the host, followed by the batching and
the receive cost, so each host has its own queue of work: hosts do not
share one imaginary CPU (in one UML every namespace shares one CPU, which
costs no time under inf-cpu; charging guest time to it would make a busy
server delay its client's receive path).  Routers are modelled as
forwarding in no time.

Presets (`hosts: {model: NAME}`; any field given overrides the preset's):

  ideal      infinitely fast hosts, no serialisation: the testbed as it
             was (the default).
  1gbe       1 Gbit/s access links and the receive cost of a Linux host
             per packet, as measured (RX_COST_MEASURED_US; see below).  The
             rate is our assumption: none of the papers states its hosts'
             NICs (the Blitzstart report calls gigabit Ethernet what is
             typically deployed within a home).
  logging    `1gbe`, with the SUSS authors' sender: in their published
             per-ACK log, ACKs processed back to back are at least about
             10 us apart, usually about 20 us (they printed a line per
             ACK): 10 us per packet on the servers.

RX_COST_MEASURED_US: measured by runners/rxcost.py (`make bench
BENCH=rxcost`) on this project's machine: a 2-core AMD EPYC VM, Linux
6.18.44, two network namespaces joined by a veth, GRO/GSO/TSO off, the
receiver acknowledging every segment, trains of 60 back-to-back
1448-byte segments.  From a segment entering the receiver's stack to its
ACK leaving: median 1.40-1.41 us (10th-90th percentile 1.25-1.73 us) in
three runs of 30 trains (1800 segments each), 24 Nov 2026.  A veth has no
driver, interrupt or DMA work, so a host with a real NIC costs at least
this; the whole loop (sender's transmit, receiver, the ACK back) took
2.46-2.49 us per packet.
"""

from __future__ import annotations

import copy
from typing import Any

#: Linux's receive cost per 1500-byte TCP packet, us: the median of the measurement in the
#: module docstring (runners/rxcost.py), rounded to 0.1 us.
RX_COST_MEASURED_US = 1.4

HOST_PRESETS: dict[str, dict[str, Any]] = {
    "ideal": {"servers": {}, "clients": {}},
    "1gbe": {"servers": {"nic": "1gbit", "rx_cost": f"{RX_COST_MEASURED_US:g}us"},
             "clients": {"nic": "1gbit", "rx_cost": f"{RX_COST_MEASURED_US:g}us"}},
    "logging": {"servers": {"nic": "1gbit", "rx_cost": "10us"},
                "clients": {"nic": "1gbit", "rx_cost": f"{RX_COST_MEASURED_US:g}us"}},
}
DEFAULT_HOST_MODEL = "ideal"


def host_preset(name: str) -> dict[str, Any]:
    if name not in HOST_PRESETS:
        raise ValueError(f"unknown host model {name!r}; known: {', '.join(HOST_PRESETS)}")
    return copy.deepcopy(HOST_PRESETS[name])
