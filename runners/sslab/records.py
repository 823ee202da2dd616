"""Record formats: every JSON record the harness writes names its kind and format version.

A record is one JSON object in a file (a scenario plan, a run's run.json, a
run directory's meta.json, a matrix cell's cell.json, a report's
summary.json, a matrix plan, a job's job.json and status.json, the guest's
index of runs runs.json) or an experiment file (experiments/*.yaml).  Each
carries

    "format": "<kind>/<version>"        e.g. "sslab.run/1"

so that a reader can tell, before it reads a field, whether it knows the
record: the same version is read; an older one is read as well (readers
keep the fields they have always had; a record written before formats
existed has no "format" and counts as version 0); a newer one is refused by
name, with the path, the version found and the version this harness reads,
never half-read.  Bump a kind's version when a field changes meaning or
goes away, not when one is added.

The plan record, typed (below): what the host hands the guest.
Host and guest share this definition, so neither can drift from the other
in silence: the host compiles each scenario into a Plan
(sslab.scenario.to_plan, validated as it is made), keeps it as one (a
matrix cell's record of it is read back with read_plan) and writes it with
plan_record; the guest reads its plan through read_plan
(sslab.guest.scenario_run); either refuses a plan with a missing, unknown
or mistyped field by its path ("runs[3].flows[0].cc: ...").  A field whose
default is None and whose value is None is left out of the file (a flow's
hint_bytes_per_s, version; a run's trace_offset_s): its default says
"not this run".  A plan of format 2 (a matrix cell's, an archive's
plan.json) is read as well: its flows' suss_version, hystart and search
become the one version (_flows_of_format_2).

    Plan
      name, seed
      topology     Topology       kind, pairs, backend, mtu, lans, sender_qdisc, offloads,
                                    socket_buffers
      bottleneck   Bottleneck     rate_mbit, buffer_pkts, netem, link: LinkModel
                                    kind, preset, shaper, trace: Trace | None, rate_tolerance,
                                    down, up: [a stage: Bursts | Loss | DelayVariation]
      pairs        [Pair]         rtt_ms
      addresses    Addresses      servers, clients, core (CIDR text)
      capture      Capture        pcap, snaplen, traces, immediate, trace_events, router
      hosts        Hosts          model, describe, pairs: [HostPair(server, client: Host)]
      fidelity     Fidelity       clock, calibrate, rtt_tolerance_ms, ping_count, pairs_together
      runs         [Run]          index, rep, case, params, module_params, flows: [Flow],
                                  trace_offset_s (with a rate trace only)
      asked        Asked          description, buffer, repetitions, order, module_params: the
                                  file's words, for the reports (the guest reads none of it)
      entropy_seed                the boot's random numbers' seed (the host's, for the job)

A leaf module, standard library only: the guest imports it too.  The typed
plan lives here, not in a module of its own, because under UML's virtual
time every module file the guest opens costs guest time before the first
run: a plan module of its own shifted every run's timeline (E1 with the same
seeds: all 120 recorded files differed, and SUSS 2024's bimodal 20 MB exit
flipped), while the same code in this file, which the guest reads anyway,
left every byte as it was.  Its annotations stay text (`from __future__
import annotations`); _value reads them as written.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Clocks under which time is the guest's own (virtual): a path's RTT is its configured delay
#: exactly and timers fire when due, whatever the host does.
VIRTUAL_CLOCKS = ("uml/inf-cpu",)

#: kind -> the version this harness writes and reads up to.
FORMATS: dict[str, int] = {
    "sslab.plan": 3,      # a scenario's plan, host -> guest (sslab.experiment.plan); 2: the link's stages;
                          # 3: a flow's start's version in one field, `version`
    "sslab.run": 2,       # one run's record, guest -> host (sslab.guest.scenario_run); 2: a flow's `version`
    "sslab.meta": 1,      # a run directory's conditions (sslab.experiment.run)
    "sslab.manifest": 1,  # a run directory's artifacts with their sha256
    "sslab.cell": 1,      # a matrix cell's record (sslab.matrix.cells)
    "sslab.matrix-plan": 1,  # a matrix's expanded cells (sslab.matrix.orchestrate)
    "sslab.summary": 1,   # a report's figures (sslab.analysis)
    "sslab.experiment": 1,  # an experiment file, experiments/*.yaml (sslab.experiment.spec)
    "sslab.job": 1,       # a job directory's job.json, host -> agent (sslab.substrate.job)
    "sslab.status": 1,    # the agent's out/status.json, agent -> host (sslab.substrate.agent)
    "sslab.runs": 1,      # the guest's index of runs, out/runs.json (sslab.guest.scenario_run)
    "sslab.oracle": 1,    # our runs against the kernel's, flow by flow (sslab.experiment.oracle)
    "sslab.verify": 1,    # an artifact's cells run again, each against its archive (sslab.matrix.verify)
}


class RecordFormatError(ValueError):
    """A record this harness cannot read (a newer format, or another kind)."""


def format_of(kind: str) -> str:
    """The "format" value this harness writes for @kind."""
    return f"{kind}/{FORMATS[kind]}"


def stamped(kind: str, record: dict) -> dict:
    """@record with its "format" first (a new dict; @record is not changed)."""
    return {"format": format_of(kind), **{k: v for k, v in record.items() if k != "format"}}


def check(kind: str, record: Any, where: str = "record") -> dict:
    """@record if this harness can read it as @kind; RecordFormatError naming @where if not."""
    if not isinstance(record, dict):
        raise RecordFormatError(f"{where}: not a {kind} record (a JSON object), got {type(record).__name__}")
    fmt = record.get("format")
    if fmt is None:
        return record  # written before record formats: version 0
    got_kind, _, version = str(fmt).rpartition("/")
    if got_kind != kind or not version.isdigit():
        raise RecordFormatError(f"{where}: a {fmt!r} record where a {kind} record belongs")
    if int(version) > FORMATS[kind]:
        raise RecordFormatError(
            f"{where}: {kind} format {version}, newer than this harness reads ({FORMATS[kind]}); "
            f"it was written by a newer slowstart-lab: update this checkout (git pull) to read it")
    return record


def runs_index(runs: list[dict]) -> dict:
    """The record of a job's index of runs (out/runs.json): {"format", "runs": [...]}."""
    return stamped("sslab.runs", {"runs": runs})


def read_runs_index(path: Path) -> list[dict]:
    """The runs listed in an out/runs.json: a record (version 1) or, written before formats, a bare list."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise RecordFormatError(f"{path}: not JSON ({e})") from None
    except OSError as e:
        raise RecordFormatError(f"{path}: cannot read it ({e.strerror})") from None
    if isinstance(data, list):
        return data  # version 0
    return check("sslab.runs", data, str(path))["runs"]


def read_record(path: Path, kind: str) -> dict:
    """The @kind record in @path, checked (see check())."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise RecordFormatError(f"{path}: not JSON ({e})") from None
    except OSError as e:
        raise RecordFormatError(f"{path}: cannot read it ({e.strerror})") from None
    return check(kind, data, str(path))


# ---- The plan record, typed ----------------------------------------------------------------

class PlanError(ValueError):
    """A plan that does not match this definition; the message names the field's path."""


@dataclass(frozen=True)
class Topology:
    kind: str
    pairs: int
    backend: str
    mtu: int
    #: Each side's hosts: "veth" (a link each to the router) or "ovs" (one Open vSwitch switch).
    lans: str = "veth"
    #: The senders' own qdisc: "none", "fq" or "fq_codel".
    sender_qdisc: str = "none"
    #: The hosts' segmentation offloads: "off" (one segment per packet), "linux" (TSO/GSO whole) or
    #: "linux-N" (TSO/GSO, at most N segments a packet: the merge depth of the routers' GRO).
    offloads: str = "off"
    #: The hosts' TCP socket buffers: "raised" (the testbed's, no flow window-limited), "linux" (Linux's
    #: defaults on every host) or "linux-senders" (Linux's on the servers, the clients' raised).
    socket_buffers: str = "raised"

    @property
    def segments_a_packet(self) -> int | None:
        """The most TCP segments one packet carries on every link (each veth's gso_max_segs): 1 with
        the offloads off, N with "linux-N", None (no cap but TSO's 64 KB) with Linux's own."""
        return offload_segments(self.offloads)


#: The merge depths "linux-N" may name: how many line-rate frames of one flow a router's GRO hands on
#: as one packet, from a NIC that interrupts every 2 frames to one that holds 32 (a 1 GbE NIC under
#: its driver's default interrupt moderation delivers about 4-20 frames of a line-rate burst a poll).
GRO_MERGE_SEGMENTS = (2, 4, 8, 16, 32)
#: Every value of Topology.offloads.
OFFLOADS = ("off", "linux", *(f"linux-{n}" for n in GRO_MERGE_SEGMENTS))


def offload_segments(offloads: str) -> int | None:
    """Topology.offloads as the most segments a packet carries: 1, N, or None for no cap (64 KB)."""
    if offloads not in OFFLOADS:
        raise PlanError(f"topology.offloads is {offloads!r}: one of {', '.join(OFFLOADS)}")
    if offloads == "off":
        return 1
    return int(offloads.removeprefix("linux-")) if offloads.startswith("linux-") else None


# ---- A link as stages ----------------------------------------------------------------------
#
# Each mechanism a packet meets on a line of the dumbbell, one class with its netem words; the
# guest (sslab.guest.dumbbell) joins a line's stages into one netem.  The plan names the stages of
# the last hop in each direction (LinkModel.down: the line towards each client; up: each client's
# own interface, its ACKs), in the order a packet meets them; the rest the guest makes from the
# plan's numbers (the pairs' delays, the bottleneck's rate and buffer, the host model).
#
# Every line of the dumbbell (a device's egress) is netem: one netem holds a delay, a line rate,
# bursts, loss and a queue limit, and a packet meets them in that order whatever the order of the
# arguments (netem fixes each packet's time to send from its arrival, the delay, the previous
# packet's departure and its own serialisation, then releases it in its slot).  What a host model
# adds after its link (coalescing, the receive cost) are netems of their own, each a child of the
# one before, because a second serialisation must follow the first, not run beside it.
#
#     stage                     netem's arguments             where
#     Delay(25.0)               delay 25.000ms                every pair's line, both ways; the
#                                                             bottleneck's with netem "one"
#     UniformDelay(5.0)         delay 5us 5us                 a host's receive jitter
#     Rate(50.0)                rate 50mbit                   the bottleneck; a host's access link
#     CellRate(2e8, 65535)      rate 200000000bps 0 65535     a host's receive cost (a time per packet)
#     Bursts(2.0, 4.0, 64)      slot 2ms 4ms packets 64       a last hop's aggregation (plan), either way
#     BatchSlots(20.0, 8)       slot 20us 20us packets 8      a host's interrupt coalescing
#     Loss(1.0) / Loss(1, 25)   loss random 1% /              a last hop's random loss (plan), either way,
#                               loss gemodel 1% 25%           once the fidelity checks are done
#     DelayVariation(10, [..])  (none: replayed)              a last hop's varying delay (plan), towards
#                                                             the clients: each bin's extra set on the
#                                                             line during a run (sslab.guest.linkreplay)
#     Queue(1000)               limit 1000                    every line: the bottleneck's buffer,
#                                                             else far above anything in flight
#
# A new mechanism on a last hop is a class here (with `stage`, its name in the plan, its netem words
# and, if not "always", `when` it is on), its place in STAGES, the scenario's field that asks for it
# (sslab.scenario.model) and its line of sslab.scenario.load.link_plan; the guest puts it on the
# hop's line in the plan's order with no code of its own.  These classes live in this file, which the guest reads
# anyway, not in a module of their own: every module the guest opens before its first run costs
# guest time under UML and moves every run's bytes (docs/testbed.md).


class Stage:
    """One mechanism of a netem line: its arguments, in netem's own words.  A stage the plan lists
    says when it is on its line (`when`): "always"; "after_checks", once the fidelity checks are
    done (they measure the path without it); "replayed", changed over each run by a replay."""
    when = "always"

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
    stage: str = "bursts"

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
class Loss(Stage):
    """Random loss, in percent: each packet alone with @p_percent, or (@r_percent given) netem's
    two-state chain (gemodel): into its losing state with p, out with r, every packet lost in it."""
    p_percent: float
    r_percent: float | None = None
    stage: str = "loss"
    when = "after_checks"

    def args(self) -> str:
        if self.r_percent is None:
            return f"loss random {self.p_percent:g}%"
        return f"loss gemodel {self.p_percent:g}% {self.r_percent:g}%"


@dataclass(frozen=True)
class DelayVariation(Stage):
    """A delay that varies over time: the extra one-way delay at each bin of one period (ms), from each
    run's start, set on the line by a replay (no netem words of its own: the line keeps its packets in
    order by a rate, sslab.guest.dumbbell)."""
    bin_ms: int
    extra_ms: list[float]
    stage: str = "delay_variation"
    when = "replayed"

    def args(self) -> str:
        return ""


@dataclass(frozen=True)
class Queue(Stage):
    """The line's queue limit, in packets (netem counts the packets in its delay too)."""
    packets: int

    def args(self) -> str:
        return f"limit {self.packets}"


#: The stages a plan's link may list, by the name each carries in the plan (its `stage`).
STAGES = {"bursts": Bursts, "loss": Loss, "delay_variation": DelayVariation}


@dataclass(frozen=True)
class Trace:
    source: str
    sha256: str
    bin_ms: int
    period_ms: int
    mean_mbit: float
    rates_mbit: list[float]


@dataclass(frozen=True)
class LinkModel:
    kind: str
    preset: str | None
    shaper: str
    trace: Trace | None
    rate_tolerance: float
    #: The last hop's stages towards each client (data) and from it (ACKs), in the order packets meet them.
    down: list[Stage]
    up: list[Stage]


@dataclass(frozen=True)
class Bottleneck:
    rate_mbit: float
    buffer_pkts: int
    link: LinkModel
    #: "apart", "one" or "one-rtt": where the paths' delay sits against the queue (sslab.guest.dumbbell).
    netem: str = "apart"


@dataclass(frozen=True)
class Pair:
    rtt_ms: float


@dataclass(frozen=True)
class Addresses:
    servers: str
    clients: str
    core: str


@dataclass(frozen=True)
class Capture:
    pcap: bool
    snaplen: int
    traces: bool
    #: Whether the capture wakes for every packet: the substrate's clock decides (None until then).
    immediate: bool | None
    #: "all": the stack's tcp_probe and our module's events; "stack": tcp_probe alone (the oracle's).
    trace_events: str = "all"
    #: A second capture in the bottleneck's router, every interface (sslab.analysis.queuecheck).
    router: bool = False


@dataclass(frozen=True)
class RxBatch:
    period_us: float
    packets: int


@dataclass(frozen=True)
class Host:
    """A receiving host's costs (sslab.scenario.hosts): NIC line rate, per-packet receive cost."""
    nic_mbit: float | None
    rx_cost_us: float
    rx_jitter_us: float
    rx_batch: RxBatch | None


@dataclass(frozen=True)
class HostPair:
    server: Host
    client: Host


@dataclass(frozen=True)
class Hosts:
    model: str
    describe: str
    pairs: list[HostPair]


@dataclass(frozen=True)
class Fidelity:
    """What the guest holds a run to (sslab.experiment.plan.fidelity_rules)."""
    clock: str
    calibrate: bool
    rtt_tolerance_ms: float
    ping_count: int
    pairs_together: bool


@dataclass(frozen=True)
class Flow:
    pair: int
    #: The name the kernel knows (a SUSS version asked for: the name that pins it).
    cc: str
    tool: str
    size: int | None
    duration: float | None
    start: float
    hint: str | None
    start_offset_s: float
    #: Blitzstart's hint in bytes per second (written only for a hinted flow).
    hint_bytes_per_s: int | None = None
    #: The version of its slow start the flow runs, in that start's own words (sslab.ccas.start_version_of:
    #: SUSS "2024", "2025", "ours"; SEARCH "3.0", "4.0"; cubic_hs's HyStart "Linux 5.19", "Linux 6.1.192");
    #: written only for a start the module has in several versions.  run.json and the reports take it
    #: from here (a record of format 1 said suss_version, hystart and search: sslab.ccas.recorded_*).
    version: str | None = None


def run_tag(index: int, case: str, rep: int) -> str:
    """A run's name, in its job's out/runs/<tag>/ and in every index and report: its place in the
    plan, its case and its repetition (000-cubic_hs-20MB-r0)."""
    return f"{index:03d}-{case}-r{rep}"


@dataclass(frozen=True)
class Run:
    index: int
    rep: int
    case: str
    params: dict[str, Any]
    module_params: dict[str, int]
    flows: list[Flow]
    #: Where in the rate trace this repetition starts (written only with a trace).
    trace_offset_s: float | None = None

    @property
    def tag(self) -> str:
        return run_tag(self.index, self.case, self.rep)


@dataclass(frozen=True)
class Asked:
    """What the scenario file asked, in its own words, where the reports print them beside what the
    plan resolved: the guest reads none of it."""
    description: str
    #: The buffer as asked ("1 BDP at 100 ms", "200 packets"); the bottleneck's buffer_pkts is what ran.
    buffer: str
    repetitions: int
    order: str
    #: The scenario's own module parameters (its file's and the command line's knobs), before any case's.
    module_params: dict[str, int]


@dataclass(frozen=True)
class Plan:
    name: str
    seed: int
    topology: Topology
    bottleneck: Bottleneck
    pairs: list[Pair]
    addresses: Addresses
    capture: Capture
    hosts: Hosts
    #: None in a scenario's compiled plan (sslab.scenario.to_plan); the substrate's clock sets it
    #: (sslab.experiment.plan.for_substrate) before the plan is handed to a guest.
    fidelity: Fidelity | None
    runs: list[Run]
    #: Written since 29 Nov 2026 (plans before have none: their reports read meta.json's scenario).
    asked: Asked | None = None
    #: The seed of the boot's random numbers (its entropy): the scenario's seed, or 0 with the
    #: scenario's variation.entropy off (every boot draws the same); the host's, for the job.
    entropy_seed: int | None = None


def plan_record(plan: Plan) -> dict:
    """@plan as its file (plan.json, a matrix cell's plan) holds it: stamped, every field by its name,
    but an optional field left at its default None left out (a flow's HyStart is written only for
    cubic_hs, a run's trace offset only with a trace); read_plan reads it back the same."""
    return stamped("sslab.plan", _plain(plan))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (getattr(value, f.name) is None and f.default is None)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def read_plan(record: Any, where: str = "plan") -> Plan:
    """@record (a parsed plan.json) as a Plan: its format checked (sslab.records), every field present
    and of its type, none unknown; PlanError names the first field that is not."""
    record = dict(check("sslab.plan", record, where))
    fmt = record.pop("format", None)
    if fmt is not None and int(str(fmt).rpartition("/")[2]) == 2:
        record["runs"] = [{**r, "flows": _flows_of_format_2(r["flows"])} if isinstance(r, dict)
                          and isinstance(r.get("flows"), list) else r for r in record.get("runs", [])]
    return _build(Plan, record, "")


def _flows_of_format_2(flows: list) -> list:
    """A format 2 plan's flows as format 3 has them: a SUSS flow's suss_version (0: "ours"), a
    cubic_hs flow's hystart or a SEARCH flow's search, whichever it has, as its `version`."""
    out = []
    for f in flows:
        if not isinstance(f, dict):
            out.append(f)
            continue
        f = dict(f)
        suss, hystart, search = f.pop("suss_version", None), f.pop("hystart", None), f.pop("search", None)
        version = ("ours" if suss == 0 else str(suss)) if isinstance(suss, int) else (hystart or search)
        out.append({**f, **({"version": version} if version is not None else {})})
    return out


#: The scalar types a field may name, with what counts as one (a bool is no int; an int is a float).
_SCALARS = {"bool": lambda v: isinstance(v, bool),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "str": lambda v: isinstance(v, str),
            "Any": lambda v: True}


def _build(cls, data: Any, path: str):
    if not isinstance(data, dict):
        raise PlanError(f"{path or 'plan'}: a mapping of fields, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise PlanError(f"{path or 'plan'}: unknown field(s) {', '.join(unknown)}")
    values = {}
    for name, f in fields.items():
        where = f"{path}.{name}" if path else name
        if name not in data:
            if f.default is dataclasses.MISSING:
                raise PlanError(f"{where}: missing")
            continue
        values[name] = _value(f.type, data[name], where)
    return cls(**values)


def _value(tp: str, value: Any, where: str):
    """@value checked against the annotation @tp as written here ("int", "Slot | None",
    "list[Flow]", "dict[str, int]")."""
    options = [t.strip() for t in tp.split("|")]
    if "None" in options:
        if value is None:
            return None
        options.remove("None")
    (tp,) = options
    if tp.startswith("list[") and tp.endswith("]"):
        if not isinstance(value, list):
            raise PlanError(f"{where}: a list, got {type(value).__name__}")
        return [_value(tp[5:-1], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if tp.startswith("dict[") and tp.endswith("]"):
        if not isinstance(value, dict):
            raise PlanError(f"{where}: a mapping, got {type(value).__name__}")
        inner = tp[5:-1].split(",", 1)[1].strip()
        return {k: _value(inner, v, f"{where}.{k}") for k, v in value.items()}
    if tp in _SCALARS:
        if not _SCALARS[tp](value):
            raise PlanError(f"{where}: {tp} expected, got {value!r}")
        return value
    if tp == "Stage":
        # One of the stages a plan may list, named by its `stage`.
        name = value.get("stage") if isinstance(value, dict) else None
        if name not in STAGES:
            raise PlanError(f"{where}.stage: one of {', '.join(STAGES)}, got {name!r}")
        return _build(STAGES[name], value, where)
    return _build(globals()[tp], value, where)
