"""Scenario specifications: YAML in, one typed model out, every backend fed from it.

A scenario says what network to build and what traffic to run over it:

    name: e1-startup
    topology: {kind: dumbbell, pairs: 1}
    bottleneck: {rate: 50mbit, buffer: {bdp: 1, rtt: 100ms}}
    pairs: [{rtt: 100ms}]
    cases:                         # one case = one run's traffic
      flows:
        - {pair: 1, cc: "{cc}", size: "{size}", start: 0s}
      axes:                        # cases = every combination, substituted (sslab.scenario.axes)
        cc: [cubic_ss, cubic_hs, cubic_hspp, cubic_suss]
        size: [5MB, 20MB]
    repetitions: 5
    order: alternate               # or: sequential, shuffled (with seed)
    capture: {pcap: true, snaplen: 96, traces: true}

`load_scenario()` (scenario.load) validates everything before anything runs; errors name the
field (`bottleneck.buffer.bdp`, `cases[3].flows[0].cc`, ...).  Sizes use SI
units (5MB = 5 000 000 bytes; MiB for powers of two); rates accept kbit,
mbit, gbit; times accept us, ms, s.

This model is the file's front end only: what runs, and what the guest and the reports read, is
the plan it is compiled into (sslab.records.Plan, by scenario.load.to_plan).  A section of the file
is a `...Spec` here (BottleneckSpec, FlowSpec, ...), the plan's record of it the plain name
(records.Bottleneck, records.Flow, ...): no class is named twice.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import math
import random
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from .. import paths
from ..records import OFFLOADS
from ..ccas import (HYSTART_NAMES, HYSTART_ROUNDS, KERNEL_MODULE_PARAMS, MODULE_PARAMS, SUSS_PINNED, SUSS_VERSIONS,
                    cc_name_refusal, param_refusal)
from .links import fill_link
from .traces import RateTrace, floor_mbit, generated_trace, trace_from_text
from .hosts import DEFAULT_HOST_MODEL, host_preset
from .units import FRAME_BYTES, frame_bytes, parse_rate_mbit, parse_seconds, parse_size


#: The line rate of a host that has none when the offloads are Linux's (TopologySpec.offloads): gigabit
#: Ethernet, as the host model 1gbe has (sslab.scenario.hosts).
OFFLOADS_NIC_MBIT = 1000.0


class ScenarioError(ValueError):
    """A scenario file that cannot run; the message names the field."""


def _canonical(v: Any, info: ValidationInfo | None) -> bool:
    """A plain number in the model's own units (seconds, Mbit/s), from a model dump."""
    return bool(info and info.context and info.context.get("canonical")) and isinstance(v, (int, float)) \
        and not isinstance(v, bool)


def _seconds(v: Any, info: ValidationInfo | None) -> float:
    """A time as written ('100ms'), or the model's own seconds from a model dump."""
    return float(v) if _canonical(v, info) else parse_seconds(v)



class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Buffer(Strict):
    """Bottleneck buffer: exactly one of packets, bytes, bdp (with the RTT it refers to), or
    time (how long the full queue takes to drain at the link's rate; its mean rate if it varies)."""

    packets: int | None = None
    bytes: int | None = None
    bdp: float | None = None
    rtt: float | None = Field(default=None, description="reference RTT for bdp, seconds")
    time: float | None = Field(default=None, description="drain time at the (mean) rate, seconds")

    @field_validator("bytes", mode="before")
    @classmethod
    def _bytes(cls, v):
        return None if v is None else parse_size(v)

    @field_validator("rtt", "time", mode="before")
    @classmethod
    def _rtt(cls, v, info: ValidationInfo):
        return None if v is None else _seconds(v, info)

    @field_validator("bdp", mode="before")
    @classmethod
    def _bdp(cls, v):
        """A number, or the form the matrices use: '1.5BDP'."""
        if isinstance(v, str):
            m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(?:bdp)?\s*", v, re.IGNORECASE)
            if not m:
                raise ValueError(f"cannot read bdp {v!r}; give a number or e.g. '2BDP'")
            return float(m[1])
        return v

    @model_validator(mode="after")
    def _one_form(self):
        given = [k for k in ("packets", "bytes", "bdp", "time") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of packets, bytes, bdp or time")
        if self.time is not None and not 0 < self.time <= 60:
            raise ValueError(f"time must be in (0, 60 s], got {self.time}")
        if self.packets is not None and self.packets < 1:
            raise ValueError(f"packets must be at least 1, got {self.packets}")
        if self.bytes is not None and self.bytes < FRAME_BYTES:
            raise ValueError(f"bytes must hold at least one {FRAME_BYTES}-byte frame, got {self.bytes}")
        if self.bdp is not None:
            if self.bdp <= 0:
                raise ValueError(f"bdp must be positive, got {self.bdp}")
            if self.rtt is None:
                raise ValueError("bdp needs the rtt it refers to (e.g. rtt: 100ms)")
        elif self.rtt is not None:
            raise ValueError("rtt is only meaningful with bdp")
        return self

    def describe(self) -> str:
        """The buffer in the words it was asked in ("1 BDP at 100 ms", "200 packets")."""
        if self.bdp is not None:
            return f"{self.bdp:g} BDP at {self.rtt * 1e3:g} ms"
        if self.packets is not None:
            return f"{self.packets} packets"
        if self.bytes is not None:
            return f"{self.bytes} bytes"
        return f"{self.time * 1e3:g} ms at the rate"

    def packets_at(self, rate_mbit: float, frame_bytes: int = FRAME_BYTES) -> int:
        """The queue limit in packets, for frames of @frame_bytes (the link's MTU + 14)."""
        if self.packets is not None:
            return self.packets
        if self.bytes is not None:
            return self.bytes // frame_bytes
        if self.time is not None:
            return max(1, round(rate_mbit * 1e6 * self.time / 8 / frame_bytes))
        return max(1, round(self.bdp * rate_mbit * 1e6 * self.rtt / 8 / frame_bytes))


class Slot(Strict):
    """netem's slot: frames leave in bursts, the bursts a uniform [min, max] apart, at most
    `packets` frames each (sslab.scenario.links)."""

    min: float
    max: float
    packets: int = Field(default=64, ge=1, le=100000)

    @field_validator("min", "max", mode="before")
    @classmethod
    def _time(cls, v, info: ValidationInfo):
        return _seconds(v, info)

    @model_validator(mode="after")
    def _order(self):
        if not 0 < self.min <= self.max <= 1:
            raise ValueError(f"need 0 < min <= max <= 1 s, got min {self.min} s, max {self.max} s")
        return self


class Aggregation(Strict):
    """Bursts of the hop: `down` for data (towards the clients), `up` for their ACKs."""

    down: Slot | None = None
    up: Slot | None = None


def _fraction(v: Any) -> Any:
    """A probability as a fraction (0.01) or a percentage ("1%")."""
    if isinstance(v, str) and v.strip().endswith("%"):
        try:
            return float(v.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"cannot read {v!r} as a percentage") from None
    return v


class LossSpec(Strict):
    """Packets a hop loses at random, independently of the queue: each with probability `rate`
    (Bernoulli), or in bursts, a two-state (Gilbert) chain that moves to its losing state with
    probability `p` per packet and back with `r`, every packet lost while it is there (a mean
    rate of p / (p + r), bursts of 1 / r packets on average).  Values as fractions or "1%"."""

    rate: float | None = Field(default=None, ge=0, le=1)
    p: float | None = Field(default=None, ge=0, le=1)
    r: float | None = Field(default=None, gt=0, le=1)

    @field_validator("rate", "p", "r", mode="before")
    @classmethod
    def _percent(cls, v):
        return _fraction(v)

    @model_validator(mode="after")
    def _one_form(self):
        if (self.rate is None) == (self.p is None) or (self.p is None) != (self.r is None):
            raise ValueError("give rate (each packet alone), or p and r (a two-state chain: into the losing "
                             "state with p, out with r)")
        return self

    @property
    def mean_rate(self) -> float:
        return self.rate if self.rate is not None else self.p / (self.p + self.r)


class HopLoss(Strict):
    """Random loss on the hop: `down` on data (towards the clients), `up` on their ACKs."""

    down: LossSpec | None = None
    up: LossSpec | None = None


class DelayVariationSpec(Strict):
    """A one-way delay that varies over time on the hop to the clients (a satellite's or a cellular
    path's oscillating RTT), changed every `bin` from each run's start: a sine, `depth` more at its peak
    than at its trough over `period`, starting at the trough; or a `trace`, a file of the extra delay
    for each bin in turn (ms, one a line, `#` comments), repeated (sslab.scenario.links)."""

    period: float | None = None
    depth: float | None = None
    trace: str | None = None
    bin: float = 0.010

    @field_validator("period", "depth", "bin", mode="before")
    @classmethod
    def _time(cls, v, info: ValidationInfo):
        return None if v is None else _seconds(v, info)

    @model_validator(mode="after")
    def _ranges(self):
        if (self.trace is None) == (self.period is None and self.depth is None) or \
                (self.trace is None and (self.period is None or self.depth is None)):
            raise ValueError("give period and depth (a sine), or trace (a file of the extra delay per bin)")
        if self.trace is not None:
            extra = self.trace_extra_ms()
            period = len(extra) * self.bin
        else:
            period = self.period
        if not 0.001 <= self.bin <= period <= 600 or abs(self.bin * 1e3 - round(self.bin * 1e3)) > 1e-9:
            raise ValueError(f"need a whole number of ms for bin, 1 ms <= bin <= period <= 600 s; got bin "
                             f"{self.bin} s, period {period} s")
        if self.depth is not None and not 0 < self.depth <= 5:
            raise ValueError(f"depth must be in (0, 5 s], got {self.depth} s")
        return self

    def trace_extra_ms(self) -> list[float]:
        """The trace file's values (ms), each checked: at least one, each in [0, 5000]."""
        path = resolve_trace_file(self.trace)
        if not path.is_file():
            raise ValueError(f"no delay trace {self.trace!r} (looked in the working directory and topologies/)")
        out = []
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            try:
                v = float(text)
            except ValueError:
                raise ValueError(f"{self.trace}:{n}: {text!r} is not a delay in ms") from None
            if not 0 <= v <= 5000:
                raise ValueError(f"{self.trace}:{n}: {v:g} ms: an extra delay is 0 to 5000 ms")
            out.append(round(v, 3))
        if not out:
            raise ValueError(f"{self.trace}: no delay in it")
        return out

    def extra_ms(self) -> list[float]:
        """One period's extra delay at each bin's start, in ms: the trace's, or the sine's,
        depth x (1 - cos(2 pi t / period)) / 2."""
        if self.trace is not None:
            return self.trace_extra_ms()
        n = max(1, round(self.period / self.bin))
        return [round(self.depth * 1e3 * (1 - math.cos(2 * math.pi * k / n)) / 2, 3) for k in range(n)]


class TraceModel(Strict):
    """A generated rate trace (sslab.scenario.traces); its mean is the bottleneck's rate."""

    model: Literal["gauss-markov", "lognormal-markov"]
    seed: int = Field(default=1, ge=0, lt=2**63)
    cv: float = Field(ge=0, le=3)
    tau: float
    duration: float = 60.0

    @field_validator("tau", "duration", mode="before")
    @classmethod
    def _time(cls, v, info: ValidationInfo):
        return _seconds(v, info)

    @model_validator(mode="after")
    def _ranges(self):
        if not 0 < self.tau <= 600:
            raise ValueError(f"tau must be in (0, 600 s], got {self.tau}")
        if not 1 <= self.duration <= 3600:
            raise ValueError(f"duration must be in [1 s, 1 h], got {self.duration}")
        return self


def resolve_trace_file(name: str) -> Path:
    """A trace file: absolute, or relative to the working directory, or to topologies/."""
    p = Path(name)
    if p.is_absolute() or p.exists():
        return p
    return paths.REPO_ROOT / "topologies" / name


class Link(Strict):
    """The bottleneck's link model (sslab.scenario.links has the presets and their sources)."""

    kind: Literal["wired", "wifi", "cellular", "satellite"] = "wired"
    preset: str | None = None
    #: None: a constant rate; a mahimahi file; or a generated trace.
    trace: str | TraceModel | None = None
    #: The replay's bin: the rate changes at most this often.
    bin: float = 0.010
    aggregation: Aggregation = Aggregation()
    loss: HopLoss = HopLoss()
    delay_variation: DelayVariationSpec | None = None
    #: Fidelity: while the queue is never empty over a bin, the link must deliver what the
    #: trace allows to within this fraction, summed over the run's busy bins.
    rate_tolerance: float = Field(default=0.02, gt=0, le=1)

    @field_validator("bin", mode="before")
    @classmethod
    def _bin(cls, v, info: ValidationInfo):
        b = _seconds(v, info)
        if not 0.001 <= b <= 1 or abs(b * 1e3 - round(b * 1e3)) > 1e-9:
            raise ValueError(f"bin must be a whole number of ms in [1 ms, 1 s], got {v!r}")
        return b

    @field_validator("trace")
    @classmethod
    def _trace_file(cls, v):
        if isinstance(v, str) and not resolve_trace_file(v).is_file():
            raise ValueError(f"no trace file {v!r} (looked in the working directory and topologies/)")
        return v

    @model_validator(mode="after")
    def _readable(self):
        if isinstance(self.trace, str):
            _file_trace(str(resolve_trace_file(self.trace)), self.bin_ms)  # its errors name the line
        return self

    @property
    def bin_ms(self) -> int:
        return round(self.bin * 1e3)

    def rate_trace(self, mean_mbit: float | None) -> RateTrace | None:
        """The trace as replayed, scaled to @mean_mbit (None: a file's own mean)."""
        if self.trace is None:
            return None
        if isinstance(self.trace, str):
            base = _file_trace(str(resolve_trace_file(self.trace)), self.bin_ms)
        else:
            t = self.trace
            base = _model_trace(t.model, t.seed, mean_mbit, t.duration, t.cv, t.tau, self.bin_ms)
        if mean_mbit is None or abs(base.mean_mbit - mean_mbit) <= 1e-6 * mean_mbit:
            return base
        scale = mean_mbit / base.mean_mbit
        floor = floor_mbit(base.bin_ms)
        return RateTrace(base.bin_ms, base.period_ms,
                         tuple(round(max(r * scale, floor), 6) for r in base.rates_mbit),
                         f"{base.source} scaled x{scale:.6g}", base.sha256)


@functools.lru_cache(maxsize=32)
def _file_trace(path: str, bin_ms: int) -> RateTrace:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ValueError(f"cannot read trace {path}: {e.strerror}") from None
    return trace_from_text(text, f"file:{path}", bin_ms)


@functools.lru_cache(maxsize=32)
def _model_trace(model: str, seed: int, mean: float, duration: float, cv: float, tau: float,
                 bin_ms: int) -> RateTrace:
    return generated_trace(model, seed, mean, duration, cv, tau, bin_ms)[1]


class BottleneckSpec(Strict):
    """The shared link.  `rate`: a wired link's rate, or a varying link's mean (a generated
    trace is made with it; a file's trace is scaled to it); a link preset supplies it (and the
    buffer) when they are left out."""

    rate_mbit: float = Field(alias="rate")
    buffer: Buffer
    link: Link = Link()
    #: Where the paths' delay sits against the bottleneck's queue (sslab.guest.dumbbell):
    #: "apart", the bottleneck netem holds the rate and the buffer and every delay is on the pairs'
    #: own lines; "one", the bottleneck netem also holds the data direction's delay every pair
    #: shares (half the smallest pair's RTT), so the buffer's limit counts the packets in it too;
    #: "one-rtt", it holds the whole of the smallest pair's RTT (a router's netem given the path's
    #: RTT as one delay, the ACKs' half of it too), each pair's lines the rest of theirs, halved.
    netem: Literal["apart", "one", "one-rtt"] = "apart"

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _one_netem_needs_netem(self):
        if self.netem != "apart" and self.link.trace is not None:
            raise ValueError(f"netem: {self.netem} needs a constant-rate link (a rate trace is shaped by HTB, not netem)")
        return self

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data):
        if not isinstance(data, dict) or not isinstance(data.get("link"), dict):
            return data
        link, defaults = fill_link(data["link"])
        data = {**data, "link": link}
        if defaults is not None:
            data.setdefault("buffer", defaults["buffer"])
            if "rate" not in data and "rate_mbit" not in data:
                if not isinstance(link.get("trace"), str):
                    data["rate"] = defaults["mean"]
        if "rate" not in data and "rate_mbit" not in data and isinstance(link.get("trace"), str):
            # A file's own mean (a bad file or bin is reported by the link's own fields).
            try:
                bin_ms = round(Link.model_validate({"bin": link.get("bin", "10ms")}).bin * 1e3)
                data["rate"] = f"{_file_trace(str(resolve_trace_file(link['trace'])), bin_ms).mean_mbit:.6f}mbit"
            except (ValueError, ValidationError):
                pass
        return data

    @field_validator("rate_mbit", mode="before")
    @classmethod
    def _rate(cls, v, info: ValidationInfo):
        rate = float(v) if _canonical(v, info) else parse_rate_mbit(v)
        if rate <= 0:
            raise ValueError(f"rate must be positive, got {v!r}")
        return rate

    def rate_trace(self) -> RateTrace | None:
        return self.link.rate_trace(self.rate_mbit)


class RxBatchSpec(Strict):
    """Interrupt coalescing: packets handed to the host at most `packets` every `period`."""

    period: float
    packets: int = Field(default=64, ge=1, le=100000)

    @field_validator("period", mode="before")
    @classmethod
    def _time(cls, v, info: ValidationInfo):
        period = _seconds(v, info)
        if not 0 < period <= 0.1:
            raise ValueError(f"period must be in (0, 100 ms], got {v!r}")
        return period


class HostParams(Strict):
    """What a host costs (sslab.scenario.hosts): its access link's line rate, its receive cost per
    packet, a seeded extra wait per packet, interrupt coalescing.  Nothing set: an ideal host."""

    nic_mbit: float | None = Field(default=None, alias="nic")
    rx_cost: float = 0.0
    rx_jitter: float = 0.0
    rx_batch: RxBatchSpec | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("nic_mbit", mode="before")
    @classmethod
    def _nic(cls, v, info: ValidationInfo):
        if v is None or (isinstance(v, str) and v.strip().lower() == "none"):
            return None
        rate = float(v) if _canonical(v, info) else parse_rate_mbit(v)
        if not 1 <= rate <= 1e6:
            raise ValueError(f"nic must be between 1mbit and 1000gbit, got {v!r}")
        return rate

    @field_validator("rx_cost", "rx_jitter", mode="before")
    @classmethod
    def _time(cls, v, info: ValidationInfo):
        value = float(v) if _canonical(v, info) or v == 0 else parse_seconds(v)
        if not 0 <= value <= 0.01:
            raise ValueError(f"{info.field_name} must be in [0, 10 ms], got {v!r}")
        return value

    def plan(self) -> dict:
        """Plain numbers for the guest."""
        return {"nic_mbit": self.nic_mbit, "rx_cost_us": round(self.rx_cost * 1e6, 3),
                "rx_jitter_us": round(self.rx_jitter * 1e6, 3),
                "rx_batch": None if self.rx_batch is None else
                {"period_us": round(self.rx_batch.period * 1e6, 3), "packets": self.rx_batch.packets}}

    @property
    def ideal(self) -> bool:
        return self.nic_mbit is None and not self.rx_cost and not self.rx_jitter and self.rx_batch is None


class HostsSpec(Strict):
    """The host model: a preset (sslab.scenario.hosts) and, per kind of host, fields over it."""

    model: str = DEFAULT_HOST_MODEL
    servers: HostParams = HostParams()
    clients: HostParams = HostParams()

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data):
        if not isinstance(data, dict):
            return data
        preset = host_preset(str(data.get("model", DEFAULT_HOST_MODEL)))
        out = dict(data)
        for kind in ("servers", "clients"):
            given = data.get(kind) or {}
            if not isinstance(given, dict):
                return data  # the field's own error
            out[kind] = {**preset.get(kind, {}), **given}
        return out

    def describe(self) -> str:
        """One line for reports."""
        def one(p: HostParams) -> str:
            if p.ideal:
                return "ideal"
            parts = [f"NIC {p.nic_mbit:g} Mbit/s" if p.nic_mbit else "no NIC serialisation",
                     f"receive {p.rx_cost * 1e6:g} us/packet"]
            if p.rx_jitter:
                parts.append(f"+ up to {p.rx_jitter * 1e6:g} us")
            if p.rx_batch:
                parts.append(f"batches of {p.rx_batch.packets} every {p.rx_batch.period * 1e6:g} us")
            return ", ".join(parts)
        return f"{self.model}: servers {one(self.servers)}; clients {one(self.clients)}"


class PairSpec(Strict):
    rtt: float
    #: This pair's server or client, over the scenario's host model (any of HostParams' fields).
    server: dict[str, Any] | None = None
    client: dict[str, Any] | None = None

    @field_validator("server", "client")
    @classmethod
    def _host(cls, v):
        if v is not None:
            HostParams.model_validate(v)  # its errors, named
        return v

    @field_validator("rtt", mode="before")
    @classmethod
    def _rtt(cls, v, info: ValidationInfo):
        rtt = _seconds(v, info)
        if not 0 < rtt <= 10:
            raise ValueError(f"rtt must be in (0, 10 s], got {v!r}")
        return rtt


class AddressPlan(Strict):
    servers: ipaddress.IPv4Network = ipaddress.IPv4Network("10.1.0.0/16")
    clients: ipaddress.IPv4Network = ipaddress.IPv4Network("10.2.0.0/16")
    core: ipaddress.IPv4Network = ipaddress.IPv4Network("10.0.0.0/30")

    @model_validator(mode="after")
    def _disjoint(self):
        nets = {"servers": self.servers, "clients": self.clients, "core": self.core}
        for (a, na), (b, nb) in itertools.combinations(nets.items(), 2):
            if na.overlaps(nb):
                raise ValueError(f"{a} ({na}) and {b} ({nb}) overlap")
        if self.core.num_addresses < 4:
            raise ValueError(f"core ({self.core}) needs at least a /30")
        return self


class TopologySpec(Strict):
    kind: Literal["dumbbell", "single-path"] = "dumbbell"
    #: Who builds it: Mininet (in the VM), plain network namespaces (native
    #: hosts, which need no Mininet), containerlab (Docker containers, one per
    #: node), or auto: Mininet in the VM, netns natively.
    backend: Literal["auto", "mininet", "netns", "containerlab"] = "auto"
    pairs: int = Field(default=1, ge=1, le=64)
    addresses: AddressPlan = AddressPlan()
    #: Every link's MTU, bytes (IP packet); TCP's MSS is 52 less (IP, TCP and
    #: timestamp headers).  The Astart paper's 1000-byte packets: 1052.
    mtu: int = Field(default=1500, ge=576, le=9000)
    #: Each side's hosts: "veth", each on a point-to-point link of its own to its router; "ovs",
    #: all on one Open vSwitch switch (standalone, no controller) on the router by one link, as
    #: the SUSS group's testbed had switches between hosts and routers (sslab.guest.ovs).
    lans: Literal["veth", "ovs"] = "veth"
    #: The senders' own qdisc: "none", the veth's default (no queue; TCP paces only where the
    #: congestion control asks, as BBR does); "fq", which paces every flow at the rate TCP sets
    #: (CUBIC's too); "fq_codel", a distribution's usual default, which on a link that never backs
    #: up holds nothing.
    sender_qdisc: Literal["none", "fq", "fq_codel"] = "none"
    #: The hosts' segmentation offloads: "off", one segment per packet everywhere (every link's
    #: gso_max_segs 1); "linux", as Linux has them by default: the senders hand TSO/GSO segments of up
    #: to 64 KB to their link, which arrive at the routers and clients whole, as GRO merges a line-rate
    #: burst, and the bottleneck's netem counts each as one packet in its limit and its bytes in its
    #: rate.  A host with no line rate gets one of OFFLOADS_NIC_MBIT (sslab.guest.dumbbell).
    #: "linux-N" (N in records.GRO_MERGE_SEGMENTS): Linux's, with at most N segments a packet, as a
    #: router's GRO merges at most the N frames of a line-rate burst its NIC hands it in one poll.
    offloads: str = "off"
    #: The hosts' TCP socket buffers: "raised", the testbed's own (servers' send buffers and clients'
    #: receive buffers up to 64 MB, clients advertising a large initial window), so no flow is ever
    #: limited by a buffer; "linux", what a Linux host has unless someone sets them (tcp_wmem's and
    #: tcp_rmem's defaults: autotuned up to 4 MB to send and 6 MB to receive, counted in the memory
    #: the packets take, not their payload), as a testbed of stock hosts has them; "linux-senders",
    #: Linux's on the servers alone (what limits a sender) and the clients' raised (what limits a
    #: receiver's window), to tell the two apart.
    socket_buffers: Literal["raised", "linux", "linux-senders"] = "raised"

    @field_validator("offloads", mode="before")
    @classmethod
    def _offloads_off(cls, v):
        """YAML reads a bare `off` as false: it means "off" here."""
        v = "off" if v is False else v
        if v not in OFFLOADS:
            raise ValueError(f"{v!r} is not an offload setting: one of {', '.join(OFFLOADS)}")
        return v

    @model_validator(mode="after")
    def _fits(self):
        for side in ("servers", "clients"):
            net = getattr(self.addresses, side)
            # one /24 per pair inside the side's network
            if net.prefixlen > 16 and self.pairs > 1:
                raise ValueError(f"addresses.{side} ({net}) must be a /16 or larger for {self.pairs} pairs")
        if self.kind == "single-path" and self.pairs != 1:
            raise ValueError("a single-path topology has exactly 1 pair")
        return self


class FlowSpec(Strict):
    pair: int = Field(ge=1)
    cc: str
    #: transfer: our FCT-accurate tool (congestion control set before any
    #: client connects); iperf3: JSON report, for long timed flows (it sets
    #: the congestion control only after connect, so the default's init runs first).
    tool: Literal["transfer", "iperf3"] = "transfer"
    size: int | None = None
    duration: float | None = None
    start: float = 0.0
    #: Blitzstart's bandwidth hint (cubic_blitz only): a rate ("25mbit") or a
    #: multiple of the bottleneck's rate ("1.5x"); kept as "<mbit>mbit" or "<f>x".
    hint: str | None = None
    #: cubic_suss only: the SUSS version this flow runs (2024, 2025, 0 = ours), whatever the run's
    #: suss_version module parameter; the plan gives the flow the name pinned to it.
    suss_version: int | None = None

    @field_validator("hint", mode="before")
    @classmethod
    def _hint(cls, v):
        if v is None:
            return None
        text = str(v).strip().lower()
        if text.endswith("x"):
            try:
                factor = float(text[:-1])
            except ValueError:
                raise ValueError(f"cannot read hint {v!r}: a rate (25mbit) or a multiple of the bottleneck (1.5x)")
            if not factor > 0:
                raise ValueError(f"hint must be positive, got {v!r}")
            return f"{factor:g}x"
        rate = parse_rate_mbit(v)
        if not rate > 0:
            raise ValueError(f"hint must be positive, got {v!r}")
        return f"{rate:g}mbit"

    def hint_mbit(self, bottleneck_mbit: float) -> float | None:
        """The hint as a rate, resolving a multiple against @bottleneck_mbit."""
        if self.hint is None:
            return None
        if self.hint.endswith("x"):
            return float(self.hint[:-1]) * bottleneck_mbit
        return float(self.hint[:-4])

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v):
        return None if v is None else parse_size(v)

    @field_validator("duration", "start", mode="before")
    @classmethod
    def _time(cls, v, info: ValidationInfo):
        return None if v is None else _seconds(v, info)

    @field_validator("cc")
    @classmethod
    def _cc(cls, v):
        if (why := cc_name_refusal(v)) is not None:
            raise ValueError(why)
        return v

    @model_validator(mode="after")
    def _amount(self):
        if (self.size is None) == (self.duration is None):
            raise ValueError("give exactly one of size or duration")
        if self.size is not None and self.size <= 0:
            raise ValueError(f"size must be positive, got {self.size}")
        if self.duration is not None and self.duration <= 0:
            raise ValueError(f"duration must be positive, got {self.duration}")
        if self.start < 0:
            raise ValueError(f"start must not be negative, got {self.start}")
        if self.tool == "iperf3" and self.duration is None:
            raise ValueError("iperf3 flows are timed: give a duration, not a size")
        if self.hint is not None and self.cc != "cubic_blitz":
            raise ValueError(f"a hint is read only by cubic_blitz (Blitzstart), not by {self.cc}")
        if self.hint is not None and self.tool != "transfer":
            raise ValueError("a hint needs the transfer tool (it sets SO_MAX_PACING_RATE before listening)")
        if self.suss_version is not None:
            if self.cc != "cubic_suss":
                raise ValueError(f"suss_version is for cubic_suss flows (the other SUSS names pin one), not {self.cc}")
            if self.suss_version not in SUSS_VERSIONS:
                raise ValueError(f"suss_version {self.suss_version}: one of {', '.join(map(str, SUSS_VERSIONS))}")
        return self

    @property
    def cc_to_run(self) -> str:
        """The congestion-control name the flow's socket gets (a SUSS version asked for: its pinned name)."""
        return SUSS_PINNED[self.suss_version] if self.suss_version is not None else self.cc


def _module_params(v: dict) -> dict:
    unknown = sorted(set(v) - set(MODULE_PARAMS) - set(KERNEL_MODULE_PARAMS))
    if unknown:
        raise ValueError(f"unknown module parameter(s) {', '.join(unknown)}; known: {', '.join(MODULE_PARAMS)} "
                         f"(ours) and {', '.join(KERNEL_MODULE_PARAMS)} (the kernel's cubic)")
    bad = [k for k, x in v.items() if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 2**32]
    if bad:
        raise ValueError(f"module parameters are unsigned 32-bit integers: {', '.join(bad)}")
    if "hs_round_fix" in v and v["hs_round_fix"] not in HYSTART_ROUNDS:
        raise ValueError(f"hs_round_fix {v['hs_round_fix']}: 0 ({HYSTART_NAMES[0]}) or 1 ({HYSTART_NAMES[1]})")
    if "suss_version" in v and v["suss_version"] not in SUSS_VERSIONS:
        raise ValueError(f"suss_version {v['suss_version']}: one of {', '.join(map(str, SUSS_VERSIONS))} "
                         f"({'; '.join(f'{k}: {n}' for k, n in SUSS_VERSIONS.items())})")
    # Every other of ours by the kind its declaration gives it (kernel/core/<start>.h).
    refused = [why for k, x in v.items() if k in MODULE_PARAMS and (why := param_refusal(k, x))]
    if refused:
        raise ValueError("; ".join(refused))
    return v


class Case(Strict):
    """One run's traffic."""

    name: str
    flows: list[FlowSpec] = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    #: Our module's parameters for this run, over the scenario's (kernel/README.md lists them).
    module_params: dict[str, int] = Field(default_factory=dict)

    @field_validator("module_params")
    @classmethod
    def _module(cls, v):
        return _module_params(v)


class CaptureSpec(Strict):
    """What is recorded.  Observers shift a chaotic run's trajectory (their clock reads take
    guest time): compare only runs recorded with the same capture settings."""

    pcap: bool = True
    snaplen: int = Field(default=96, ge=64, le=65535)
    traces: bool = True
    #: Which kernel events: "all" (the stack's tcp_probe, our module's per-ACK view and events), or
    #: "stack" (tcp_probe alone, which every congestion control has: runs of ours and of the kernel's
    #: then have the same observers; the oracle's).
    trace_events: Literal["all", "stack"] = "all"
    #: A second capture in the bottleneck's router, on every interface it has (tcpdump -i any): each
    #: packet as it reaches the router and again as it leaves past the bottleneck, from which
    #: `sslab queue-check` counts the bottleneck's queue packet by packet (the qdisc's own count
    #: checked).  One observer more: for a check's run, not one to compare with runs without it.
    router: bool = False

    @model_validator(mode="after")
    def _router_beside_the_bottleneck(self):
        if self.router and not self.pcap:
            raise ValueError("router: the router's capture is checked against the bottleneck's: it needs pcap: true")
        return self


class Variation(Strict):
    """What repetitions vary on purpose.

    A virtual-time testbed repeats a run exactly: the same seed gives the
    same bytes.  Repetitions are worth having only if each varies what a
    real testbed varies, on purpose and on record:

    start_offset  each flow starts this much later than its nominal start,
                  drawn uniformly per run and flow from the seed: "rtt" (up
                  to the flow's pair's base RTT, the default), a time, or 0;
    entropy       the guest's random numbers (TCP's initial sequence numbers,
                  ephemeral ports, hash seeds, netem's slot draws) come from
                  the seed (UML); off, every boot draws the same ones;
    trace_offset  where in a varying link's rate trace each run begins:
                  "random" (whole bins, uniform over the trace's period, one
                  draw per repetition from the seed: repetitions meet the
                  channel in different states, as a real client does, and
                  the cases of one repetition meet the same) or a time
                  into the trace.
    """

    start_offset: float | Literal["rtt"] = "rtt"
    entropy: bool = True
    trace_offset: float | Literal["random"] = "random"

    @field_validator("start_offset", "trace_offset", mode="before")
    @classmethod
    def _offset(cls, v, info: ValidationInfo):
        """The field's keyword (its default: "rtt", "random"), or a time that is not negative."""
        keyword = cls.model_fields[info.field_name].default
        if v == keyword or v is None:
            return keyword
        value = float(v) if _canonical(v, info) or v == 0 else parse_seconds(v)
        if value < 0:
            raise ValueError(f"{info.field_name} must not be negative, got {v!r}")
        return value


class Scenario(Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    topology: TopologySpec = TopologySpec()
    bottleneck: BottleneckSpec
    pairs: list[PairSpec] = Field(min_length=1)
    cases: list[Case] = Field(min_length=1)
    repetitions: int = Field(default=1, ge=1, le=1000)
    order: Literal["alternate", "sequential", "shuffled"] = "alternate"
    #: The run's seed: the shuffled order, the start offsets and (UML) the guest's entropy.
    seed: int = Field(default=1, ge=0, lt=2**63)
    capture: CaptureSpec = CaptureSpec()
    variation: Variation = Variation()
    #: Our module's parameters for every run (a case's own override them; the rest keep the module's defaults).
    module_params: dict[str, int] = Field(default_factory=dict)
    #: The time hosts take (sslab.scenario.hosts; default: ideal hosts).
    hosts: HostsSpec = HostsSpec()

    @field_validator("module_params")
    @classmethod
    def _module(cls, v):
        return _module_params(v)

    def host_params(self, pair: int, kind: str) -> HostParams:
        """Pair @pair's (1-based) server or client: the host model's for its kind, the pair's own over it;
        with offloads, a line rate where neither gives one (a segmentation offload's burst leaves at
        some line rate: at none it would arrive whole in no time)."""
        base = self.hosts.servers if kind == "server" else self.hosts.clients
        own = getattr(self.pairs[pair - 1], kind)
        if own:
            given = HostParams.model_validate(own)
            base = base.model_copy(update={name: getattr(given, name) for name, f in HostParams.model_fields.items()
                                           if (f.alias or name) in own})
        if self.topology.offloads != "off" and base.nic_mbit is None:
            base = base.model_copy(update={"nic_mbit": OFFLOADS_NIC_MBIT})
        return base

    @model_validator(mode="after")
    def _consistent(self):
        if len(self.pairs) != self.topology.pairs:
            raise ValueError(f"topology.pairs is {self.topology.pairs} but {len(self.pairs)} pairs are described")
        for ci, case in enumerate(self.cases):
            for fi, flow in enumerate(case.flows):
                if flow.pair > len(self.pairs):
                    raise ValueError(f"cases[{ci}].flows[{fi}].pair is {flow.pair}, "
                                     f"but there are {len(self.pairs)} pairs")
        if self.topology.sender_qdisc != "none":
            lined = [i for i in range(1, len(self.pairs) + 1) if self.host_params(i, "server").nic_mbit]
            if lined:
                raise ValueError(f"topology.sender_qdisc {self.topology.sender_qdisc} with a host model that gives "
                                 f"server(s) {lined} a link rate: that rate is a netem on the same interface; "
                                 f"use one or the other")
        names = [c.name for c in self.cases]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"case names repeat: {sorted(dup)}")
        return self

    @property
    def buffer_packets(self) -> int:
        return self.bottleneck.buffer.packets_at(self.bottleneck.rate_mbit, frame_bytes(self.topology.mtu))

    def congestion_controls(self) -> set[str]:
        """Every congestion-control name a socket of this scenario asks the kernel for."""
        return {f.cc_to_run for c in self.cases for f in c.flows}

    def run_order(self) -> list[tuple[int, Case]]:
        """(repetition, case) in the order they run.

        alternate: every case once per repetition, so variants interleave
        and drift in the substrate affects them alike; sequential: all
        repetitions of one case, then the next; shuffled: a seeded
        permutation of everything.
        """
        if self.order == "sequential":
            return [(r, c) for c in self.cases for r in range(self.repetitions)]
        runs = [(r, c) for r in range(self.repetitions) for c in self.cases]
        if self.order == "shuffled":
            random.Random(self.seed).shuffle(runs)
        return runs
