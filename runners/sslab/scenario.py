"""Scenario specifications: YAML in, one typed model out, every backend fed from it.

A scenario says what network to build and what traffic to run over it:

    name: e1-startup
    topology: {kind: dumbbell, pairs: 1}
    bottleneck: {rate: 50mbit, buffer: {bdp: 1, rtt: 100ms}}
    pairs: [{rtt: 100ms}]
    cases:                         # one case = one run's traffic
      flows:
        - {pair: 1, cc: "{cc}", size: "{size}", start: 0s}
      matrix:                      # cases = every combination, substituted
        cc: [cubic_ss, cubic_hs, cubic_hspp, cubic_suss]
        size: [5MB, 20MB]
    repetitions: 5
    order: alternate               # or: sequential, shuffled (with seed)
    capture: {pcap: true, snaplen: 96, traces: true}

`load_scenario()` validates everything before anything runs; errors name the
field (`bottleneck.buffer.bdp`, `cases[3].flows[0].cc`, ...).  Sizes use SI
units (5MB = 5 000 000 bytes; MiB for powers of two); rates accept kbit,
mbit, gbit; times accept us, ms, s.
"""

from __future__ import annotations

import ipaddress
import itertools
import random
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

FRAME_BYTES = 1514  # a full-sized Ethernet frame carrying a 1500-byte IP packet

#: Our module's congestion controls.
OUR_CCAS = ("cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss")
#: The kernel's own, as built into or shipped as modules with Debian's 6.1 kernel.
KERNEL_CCAS = ("reno", "cubic", "bbr", "bic", "cdg", "dctcp", "highspeed", "htcp", "hybla",
               "illinois", "lp", "nv", "scalable", "vegas", "veno", "westwood", "yeah")
KNOWN_CCAS = OUR_CCAS + KERNEL_CCAS


class ScenarioError(ValueError):
    """A scenario file that cannot run; the message names the field."""


# --------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------

_NUM = r"(?P<n>[0-9]+(?:\.[0-9]+)?)\s*"
_SIZE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_RATE_UNITS = {"bit": 1e-6, "kbit": 1e-3, "mbit": 1.0, "gbit": 1e3}
_TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def _parse(value: Any, units: dict[str, float], what: str, default_unit: str | None = None) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if default_unit is None:
            raise ValueError(f"{what} needs a unit ({', '.join(units)}), got {value!r}")
        return float(value) * units[default_unit]
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string like '50mbit', got {value!r}")
    m = re.fullmatch(_NUM + r"(?P<u>[a-zA-Z]+)", value.strip())
    if not m or m["u"].lower() not in units:
        raise ValueError(f"cannot read {what} {value!r}; units: {', '.join(units)}")
    return float(m["n"]) * units[m["u"].lower()]


def _canonical(v: Any, info: ValidationInfo | None) -> bool:
    """A plain number in the model's own units (seconds, Mbit/s), from a model dump."""
    return bool(info and info.context and info.context.get("canonical")) and isinstance(v, (int, float)) \
        and not isinstance(v, bool)


def parse_size(value: Any) -> int:
    """Bytes from '5MB', '64KiB', or a plain integer number of bytes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(round(_parse(value, _SIZE_UNITS, "size")))


def parse_rate_mbit(value: Any) -> float:
    return _parse(value, _RATE_UNITS, "rate")


def parse_seconds(value: Any) -> float:
    return _parse(value, _TIME_UNITS, "time")


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Buffer(Strict):
    """Bottleneck buffer: exactly one of packets, bytes, or bdp (with the RTT it refers to)."""

    packets: int | None = None
    bytes: int | None = None
    bdp: float | None = None
    rtt: float | None = Field(default=None, description="reference RTT for bdp, seconds")

    @field_validator("bytes", mode="before")
    @classmethod
    def _bytes(cls, v):
        return None if v is None else parse_size(v)

    @field_validator("rtt", mode="before")
    @classmethod
    def _rtt(cls, v, info: ValidationInfo):
        return None if v is None else float(v) if _canonical(v, info) else parse_seconds(v)

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
        given = [k for k in ("packets", "bytes", "bdp") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of packets, bytes or bdp")
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

    def packets_at(self, rate_mbit: float) -> int:
        if self.packets is not None:
            return self.packets
        if self.bytes is not None:
            return self.bytes // FRAME_BYTES
        return max(1, round(self.bdp * rate_mbit * 1e6 * self.rtt / 8 / FRAME_BYTES))


class Bottleneck(Strict):
    rate_mbit: float = Field(alias="rate")
    buffer: Buffer

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("rate_mbit", mode="before")
    @classmethod
    def _rate(cls, v, info: ValidationInfo):
        rate = float(v) if _canonical(v, info) else parse_rate_mbit(v)
        if rate <= 0:
            raise ValueError(f"rate must be positive, got {v!r}")
        return rate


class Pair(Strict):
    rtt: float

    @field_validator("rtt", mode="before")
    @classmethod
    def _rtt(cls, v, info: ValidationInfo):
        rtt = float(v) if _canonical(v, info) else parse_seconds(v)
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


class Topology(Strict):
    kind: Literal["dumbbell", "single-path"] = "dumbbell"
    #: Who builds it: Mininet (in the VM), plain network namespaces (native
    #: hosts, which need no Mininet), or auto: Mininet in the VM, netns natively.
    backend: Literal["auto", "mininet", "netns"] = "auto"
    pairs: int = Field(default=1, ge=1, le=64)
    addresses: AddressPlan = AddressPlan()

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


class Flow(Strict):
    pair: int = Field(ge=1)
    cc: str
    #: transfer: our FCT-accurate tool (congestion control set before any
    #: client connects); iperf3: JSON report, for long timed flows (it sets
    #: the congestion control only after connect, so the default's init runs first).
    tool: Literal["transfer", "iperf3"] = "transfer"
    size: int | None = None
    duration: float | None = None
    start: float = 0.0

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v):
        return None if v is None else parse_size(v)

    @field_validator("duration", "start", mode="before")
    @classmethod
    def _time(cls, v, info: ValidationInfo):
        return None if v is None else float(v) if _canonical(v, info) else parse_seconds(v)

    @field_validator("cc")
    @classmethod
    def _cc(cls, v):
        if v not in KNOWN_CCAS:
            raise ValueError(f"unknown congestion control {v!r}; known: {', '.join(KNOWN_CCAS)}")
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
        return self


class Case(Strict):
    """One run's traffic."""

    name: str
    flows: list[Flow] = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class Capture(Strict):
    pcap: bool = True
    snaplen: int = Field(default=96, ge=64, le=65535)
    traces: bool = True


class Scenario(Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    topology: Topology = Topology()
    bottleneck: Bottleneck
    pairs: list[Pair] = Field(min_length=1)
    cases: list[Case] = Field(min_length=1)
    repetitions: int = Field(default=1, ge=1, le=1000)
    order: Literal["alternate", "sequential", "shuffled"] = "alternate"
    seed: int = 1
    capture: Capture = Capture()

    @model_validator(mode="after")
    def _consistent(self):
        if len(self.pairs) != self.topology.pairs:
            raise ValueError(f"topology.pairs is {self.topology.pairs} but {len(self.pairs)} pairs are described")
        for ci, case in enumerate(self.cases):
            for fi, flow in enumerate(case.flows):
                if flow.pair > len(self.pairs):
                    raise ValueError(f"cases[{ci}].flows[{fi}].pair is {flow.pair}, "
                                     f"but there are {len(self.pairs)} pairs")
        names = [c.name for c in self.cases]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"case names repeat: {sorted(dup)}")
        return self

    @property
    def buffer_packets(self) -> int:
        return self.bottleneck.buffer.packets_at(self.bottleneck.rate_mbit)

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


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _substitute(value: Any, params: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole and whole[1] in params:
            return params[whole[1]]
        return _PLACEHOLDER.sub(lambda m: str(params.get(m[1], m[0])), value)
    if isinstance(value, list):
        return [_substitute(v, params) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, params) for k, v in value.items()}
    return value


def expand_cases(raw: Any) -> list[dict]:
    """`cases` may be a list of cases, or one template with a `matrix`."""
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, dict):
        raise ScenarioError("cases: must be a list of cases or a template with a matrix")
    matrix = raw.get("matrix") or {}
    extra = set(raw) - {"flows", "matrix", "name"}
    if extra:
        raise ScenarioError(f"cases: unknown keys {sorted(extra)}")
    if not isinstance(matrix, dict) or not all(isinstance(v, list) and v for v in matrix.values()):
        raise ScenarioError("cases.matrix: each entry must be a non-empty list")
    keys = list(matrix)
    out = []
    for combo in itertools.product(*(matrix[k] for k in keys)):
        params = dict(zip(keys, combo))
        name = raw.get("name") or "-".join(str(params[k]) for k in keys) or "case"
        out.append({"name": _substitute(name, params), "flows": _substitute(raw.get("flows"), params),
                    "params": params})
    return out


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a mapping of fields")
    data = dict(data)
    if "cases" in data:
        data["cases"] = expand_cases(data["cases"])
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        lines = []
        for err in e.errors():
            where = _loc(err["loc"]) or "(top level)"
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown field"
            lines.append(f"  {where}: {msg}")
        raise ScenarioError(f"{source}: invalid scenario\n" + "\n".join(lines)) from None


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    """Read a scenario file, following `extends: other.yaml` (relative to it)."""
    if path.resolve() in seen:
        raise ScenarioError(f"{path}: extends itself (through {', '.join(map(str, seen))})")
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping of fields")
    parent = data.pop("extends", None)
    if parent is None:
        return data
    return _merge(_read_yaml(path.parent / parent, seen + (path.resolve(),)), data)


def scenario_from_dump(data: dict) -> Scenario:
    """A Scenario from its own model_dump (numbers already in seconds and Mbit/s)."""
    return Scenario.model_validate(data, context={"canonical": True})


def load_scenario(path: Path | str) -> Scenario:
    path = Path(path)
    return parse_scenario(_read_yaml(path), str(path))


def to_plan(s: Scenario) -> dict:
    """The scenario as plain data for the substrate (no pydantic there)."""
    return {
        "name": s.name,
        "topology": {"kind": s.topology.kind, "pairs": s.topology.pairs, "backend": s.topology.backend},
        "bottleneck": {"rate_mbit": s.bottleneck.rate_mbit, "buffer_pkts": s.buffer_packets},
        "pairs": [{"rtt_ms": p.rtt * 1e3} for p in s.pairs],
        "addresses": {k: str(v) for k, v in s.topology.addresses.model_dump().items()},
        "capture": s.capture.model_dump(),
        "runs": [
            {"index": i, "rep": rep, "case": case.name, "params": case.params,
             "flows": [f.model_dump() for f in case.flows]}
            for i, (rep, case) in enumerate(s.run_order())
        ],
    }
