"""A link as stages: each mechanism a packet meets, one class with the tc that makes it.

Every line of the dumbbell (a device's egress) is netem: one netem holds a
delay, a line rate, bursts and a queue limit, and a packet meets them in
that order whatever the order of the arguments (netem fixes each packet's
time to send from its arrival, the delay, the previous packet's departure
and its own serialisation, then releases it in its slot).  A line's stages
are therefore joined into one netem (`netem`); what a host model adds after
its link (coalescing, the receive cost) are netems of their own, each a
child of the one before (`chain`), because a second serialisation must
follow the first, not run beside it.

    stage                     netem's arguments             where (sslab.guest.dumbbell)
    Delay(25.0)               delay 25.000ms                every pair's line, both ways; the
                                                            bottleneck's with netem "one"
    UniformDelay(5.0)         delay 5us 5us                 a host's receive jitter
    Rate(50.0)                rate 50mbit                   the bottleneck; a host's access link
    CellRate(2e8, 65535)      rate 200000000bps 0 65535     a host's receive cost (a time per packet)
    Bursts(2.0, 4.0, 64)      slot 2ms 4ms packets 64       a last hop's aggregation, either way
    BatchSlots(20.0, 8)       slot 20us 20us packets 8      a host's interrupt coalescing
    Queue(1000)               limit 1000                    every line: the bottleneck's buffer,
                                                            else far above anything in flight

The bottleneck on a varying link is HTB with a FIFO under it, not netem
(`HtbShaper`): its rate is replayed from a trace (sslab.guest.linkreplay),
and netem, which fixes each packet's departure when it is queued, would
apply a new rate only after the whole queue had drained at the old one.

A new mechanism on a path is a class here with its arguments, and the line
of sslab.guest.dumbbell that puts it there.
"""

from __future__ import annotations

from dataclasses import dataclass


class Stage:
    """One mechanism of a netem line: its arguments, in netem's own words."""

    def args(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Delay(Stage):
    """A constant one-way delay (propagation), to the microsecond."""
    ms: float

    def args(self) -> str:
        return f"delay {self.ms:.3f}ms"


@dataclass(frozen=True)
class UniformDelay(Stage):
    """A delay uniform in [0, 2 x half_us): netem's jitter with no distribution is uniform in
    [delay - jitter, delay + jitter), here with delay = jitter."""
    half_us: float

    def args(self) -> str:
        return f"delay {self.half_us:g}us {self.half_us:g}us"


@dataclass(frozen=True)
class Rate(Stage):
    """A line rate: each packet is serialised at it (its frame's bytes)."""
    mbit: float

    def args(self) -> str:
        return f"rate {self.mbit:g}mbit"


@dataclass(frozen=True)
class CellRate(Stage):
    """A rate at which every packet is one cell of @cell_bytes: the same time for each packet,
    whatever its size (a host's receive cost)."""
    bytes_per_s: int
    cell_bytes: int

    def args(self) -> str:
        return f"rate {self.bytes_per_s}bps 0 {self.cell_bytes}"


@dataclass(frozen=True)
class Bursts(Stage):
    """Frames leave together, one burst per slot, the slots uniform in [min_ms, max_ms] apart, at most
    @packets a burst: a Wi-Fi or cellular hop's aggregation (sslab.scenario.links)."""
    min_ms: float
    max_ms: float
    packets: int

    def args(self) -> str:
        return f"slot {self.min_ms:g}ms {self.max_ms:g}ms packets {self.packets}"


@dataclass(frozen=True)
class BatchSlots(Stage):
    """A host's interrupt coalescing: packets handed on together every @period_us, at most @packets."""
    period_us: float
    packets: int

    def args(self) -> str:
        return f"slot {self.period_us:g}us {self.period_us:g}us packets {self.packets}"


@dataclass(frozen=True)
class Queue(Stage):
    """The line's queue limit, in packets (netem counts the packets in its delay too)."""
    packets: int

    def args(self) -> str:
        return f"limit {self.packets}"


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

    def tc(self, dev: str) -> list[str]:
        rate, burst = self.rate.args().removeprefix("rate "), str(self.burst_bytes)
        return [f"qdisc add dev {dev} root handle 1: htb default 1",
                f"class add dev {dev} parent 1: classid 1:1 htb rate {rate} ceil {rate} burst {burst} cburst {burst}",
                f"qdisc add dev {dev} parent 1:1 handle 10: pfifo {self.queue.args()}"]
