"""A run directory's setting as its reports print it, read from its plan.

The plan (plan.json, sslab.records.Plan) holds every quantity as it ran (the rate, the buffer in
packets, each pair's RTT, the host model, the LANs) and, under `asked`, what the scenario file
said in its own words (its description, the buffer as asked, repetitions, order, its module
parameters).  Every report reads a run's setting here and nowhere else.  A run directory written
before the plan carried `asked` (29 Nov 2026) is read from its meta.json's copy of the scenario,
as the reports read it then: the same words either way (tests/unit/test_setting.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..ccas import param_default
from ..records import read_record
from ..scenario.model import Buffer, HostsSpec
from ..scenario.units import frame_bytes


@dataclass(frozen=True)
class Setting:
    name: str
    description: str
    rate_mbit: float
    #: The buffer as asked ("1 BDP at 100 ms"); buffer_pkts is what ran.
    buffer: str
    buffer_pkts: int
    pair_rtts_ms: list[float]
    repetitions: int
    order: str
    #: The bottleneck's link by its preset, else its kind ("wifi", "lte", "wired").
    link: str
    hosts_model: str
    #: The host model in one line (servers and clients).
    hosts: str
    lans: str
    sender_qdisc: str
    #: The scenario's own SUSS version (its module parameter; a case may set another).
    suss_version: int
    #: Every link's MTU (the IP packet's bytes).
    mtu: int = 1500
    #: The hosts' segmentation offloads ("off", "linux", "linux-N"; runs from before they were chosen: off).
    offloads: str = "off"
    #: The hosts' TCP socket buffers ("raised", "linux", "linux-senders"; runs from before they were
    #: chosen: raised).
    socket_buffers: str = "raised"

    @property
    def bdp_pkts(self) -> float:
        """The bandwidth-delay product of the shortest pair's path, in full-sized frames."""
        return self.rate_mbit * 1e6 * min(self.pair_rtts_ms) / 1e3 / 8 / frame_bytes(self.mtu)

    @property
    def marks(self) -> "PathMarks":
        """What plots of this setting draw across: its BDP, BDP plus buffer, and its link's rate."""
        return PathMarks(self.bdp_pkts, self.bdp_pkts + self.buffer_pkts, self.rate_mbit)


@dataclass(frozen=True)
class PathMarks:
    """A path's quantities a plot draws across: the BDP and the BDP plus the buffer (packets; a
    window above the second overflows the queue), the link's rate (Mbit/s)."""
    bdp_pkts: float
    limit_pkts: float
    link_mbit: float


def setting_of(run_dir: Path) -> Setting:
    """@run_dir's setting: from its plan.json, or (written before plans carried the file's words)
    from its meta.json's scenario with the plan's buffer in packets."""
    plan = read_record(Path(run_dir) / "plan.json", "sslab.plan")
    if plan.get("asked") is not None:
        return from_plan(plan)
    return from_model(read_record(Path(run_dir) / "meta.json", "sslab.meta")["scenario"]["model"],
                      plan["bottleneck"]["buffer_pkts"])


def from_plan(plan: dict) -> Setting:
    asked, bottleneck, topology, hosts = plan["asked"], plan["bottleneck"], plan["topology"], plan["hosts"]
    link = bottleneck["link"]
    return Setting(name=plan["name"], description=asked["description"], rate_mbit=bottleneck["rate_mbit"],
                   buffer=asked["buffer"], buffer_pkts=bottleneck["buffer_pkts"],
                   pair_rtts_ms=[p["rtt_ms"] for p in plan["pairs"]], repetitions=asked["repetitions"],
                   order=asked["order"], link=link.get("preset") or link.get("kind", "wired"),
                   hosts_model=hosts["model"], hosts=hosts["describe"], lans=topology["lans"],
                   sender_qdisc=topology["sender_qdisc"],
                   suss_version=asked["module_params"].get("suss_version", param_default("suss_version")),
                   mtu=topology["mtu"], offloads=topology.get("offloads", "off"),
                   socket_buffers=topology.get("socket_buffers", "raised"))


def from_model(model: dict, buffer_pkts: int) -> Setting:
    """The setting from a scenario's model dump (meta.json's copy): archives from before."""
    topology = model.get("topology") or {}
    link = model["bottleneck"].get("link") or {"kind": "wired"}
    return Setting(name=model["name"], description=model.get("description", ""),
                   rate_mbit=model["bottleneck"]["rate"],
                   buffer=Buffer.model_validate(model["bottleneck"]["buffer"], context={"canonical": True}).describe(),
                   buffer_pkts=buffer_pkts, pair_rtts_ms=[p["rtt"] * 1e3 for p in model["pairs"]],
                   repetitions=model["repetitions"], order=model["order"],
                   link=link.get("preset") or link.get("kind", "wired"),
                   hosts_model=(model.get("hosts") or {}).get("model", "ideal"), hosts=host_model_text(model),
                   lans=topology.get("lans", "veth"), sender_qdisc=topology.get("sender_qdisc", "none"),
                   suss_version=(model.get("module_params") or {}).get("suss_version", param_default("suss_version")),
                   mtu=topology.get("mtu", 1500), offloads=topology.get("offloads", "off"),
                   socket_buffers=topology.get("socket_buffers", "raised"))


def host_model_text(model: dict) -> str:
    """The host model a scenario (its model dump) ran with, in one line: runs from before host models
    were recorded had ideal hosts."""
    if "hosts" not in model:
        return "ideal (not recorded: before host models)"
    return HostsSpec.model_validate(model["hosts"], context={"canonical": True}).describe()
