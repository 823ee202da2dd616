"""Settings a command line asks over an experiment's scenarios, each declared once.

A knob is a row of KNOBS: its name, the make variable and the command-line
option that set it, the values it takes, the scenario field it sets, and the
name it gives what it changed.  Everything else is made from the table:

    make VAR=value ... -> Makefile's KNOB_ARGS, as --set VAR=value (make_line();
                          a unit test holds the Makefile to it)
    --option value     -> add_options(parser), given(args)
    the scenario       -> apply(data, values): a scenario's plain data, or a
                          matrix's template, with the values set
    the store          -> dir_suffix(values): a matrix whose cells ran with
                          another value is another matrix, archived apart
                          (`table1/..._suss-2025`); a scenario's runs record
                          their scenario, values included

Adding a knob: its row here, the model field it sets, the plan's field
(to_plan, sslab.records.Plan), the guest code that acts on it, and a test.

A scenario's cases keep what they set themselves: a knob sets the scenario's
own field (module parameters merge into the scenario-level ones, and a case's
own still win).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable

from ..ccas import SUSS_VERSIONS
from ..records import OFFLOADS
from .hosts import HOST_PRESETS


def _set_module_param(name: str) -> Callable[[dict, Any], dict]:
    def setter(data: dict, value: Any) -> dict:
        return {**data, "module_params": {**(data.get("module_params") or {}), name: value}}
    return setter


def _set_host_model(data: dict, value: Any) -> dict:
    """The host model instead of the scenario's, for every host: a pair's own server or client
    model (what the file set for one host) gives way too."""
    pairs = data.get("pairs")
    if isinstance(pairs, list):
        pairs = [{**p, **{k: None for k in ("server", "client") if k in p}} if isinstance(p, dict) else p
                 for p in pairs]
        data = {**data, "pairs": pairs}
    return {**data, "hosts": {"model": value}}


def _set_topology(field: str) -> Callable[[dict, Any], dict]:
    def setter(data: dict, value: Any) -> dict:
        return {**data, "topology": {**(data.get("topology") or {}), field: value}}
    return setter


@dataclass(frozen=True)
class Knob:
    """One setting: where it is given (make variable, option), what it takes, what it sets."""
    name: str                                  # the options' dest and the values' key
    make_var: str                              # make VAR=...
    option: str                                # --option ...
    field: str                                 # the scenario field it sets, as a person reads it
    choices: tuple                             # the values it takes
    type: Callable[[str], Any]
    help: str
    suffix: str                                # a matrix directory's `_<suffix>-<value>`
    set: Callable[[dict, Any], dict]           # scenario data -> the data with the value


KNOBS: tuple[Knob, ...] = (
    Knob("suss_version", "SUSS_VERSION", "--suss-version", "module_params.suss_version",
         tuple(SUSS_VERSIONS), int,
         "the SUSS version cubic_suss runs: " + "; ".join(f"{k}: {v}" for k, v in SUSS_VERSIONS.items())
         + " (default: the scenario's, else 2024)",
         "suss", _set_module_param("suss_version")),
    Knob("hosts", "HOSTS", "--hosts", "hosts.model",
         tuple(HOST_PRESETS), str,
         "the host model (sslab.scenario.hosts): ideal (infinitely fast hosts), 1gbe, logging "
         "(default: the scenario's, else ideal)",
         "hosts", _set_host_model),
    Knob("lans", "LANS", "--lans", "topology.lans",
         ("veth", "ovs"), str,
         "each side's hosts: veth, a link each to the router; ovs, on one Open vSwitch switch "
         "(standalone, no controller) (default: the scenario's, else veth)",
         "lans", _set_topology("lans")),
    Knob("sender_qdisc", "SENDER_QDISC", "--sender-qdisc", "topology.sender_qdisc",
         ("none", "fq", "fq_codel"), str,
         "the senders' own qdisc: none, the veth's default; fq, pacing every flow at TCP's rate; fq_codel "
         "(default: the scenario's, else none)",
         "qdisc", _set_topology("sender_qdisc")),
    Knob("offloads", "OFFLOADS", "--offloads", "topology.offloads",
         OFFLOADS, str,
         "the hosts' segmentation offloads: off, one segment per packet; linux, TSO/GSO on the senders, whole "
         "at the routers and clients as GRO merges a burst, and a 1 Gbit/s link on a host without one; "
         "linux-N, the same with at most N segments a packet, a router's GRO merging N frames a poll "
         "(default: the scenario's, else off)",
         "offloads", _set_topology("offloads")),
    Knob("socket_buffers", "SOCKET_BUFFERS", "--socket-buffers", "topology.socket_buffers",
         ("raised", "linux", "linux-senders"), str,
         "the hosts' TCP socket buffers: raised, large enough that no flow is limited by one; linux, Linux's "
         "defaults (autotuned up to 4 MB to send, 6 MB to receive); linux-senders, Linux's on the servers, "
         "the clients' raised (default: the scenario's, else raised)",
         "sockbuf", _set_topology("socket_buffers")),
)
BY_NAME = {k.name: k for k in KNOBS}
#: A knob by what else names it: its scenario field's path (SET=topology.sender_qdisc=fq) or its make
#: variable (SET=SENDER_QDISC=fq); either is the knob, archived under the knob's name
#: (sslab.scenario.sets resolves them).
BY_ALIAS = {**{k.field: k for k in KNOBS}, **{k.make_var: k for k in KNOBS}}


def add_options(parser: argparse.ArgumentParser) -> None:
    """Every knob's option on @parser (what each experiment command takes over its scenarios)."""
    for k in KNOBS:
        parser.add_argument(k.option, dest=k.name, type=k.type, choices=k.choices, help=k.help)


def given(args: argparse.Namespace) -> dict[str, Any]:
    """The knobs @args set (by name), in the table's order; {} when none."""
    return {k.name: getattr(args, k.name) for k in KNOBS if getattr(args, k.name, None) is not None}


def apply(data: dict, values: dict[str, Any] | None) -> dict:
    """@data (a scenario's plain data, or a template) with each knob in @values set."""
    for name, value in (values or {}).items():
        data = BY_NAME[name].set(data, value)
    return data


def dir_suffix(values: dict[str, Any] | None) -> str:
    """What a matrix directory's name adds for @values: `_<suffix>-<value>` each, in the table's order."""
    values = values or {}
    return "".join(f"_{k.suffix}-{values[k.name]}" for k in KNOBS if values.get(k.name) is not None)


def make_line() -> str:
    """The Makefile's KNOB_ARGS definition: each knob's variable passed as NAME=value when set, to the one
    resolver (sslab.scenario.sets), where a matrix sweeping the knob's field narrows that axis by it."""
    return "KNOB_ARGS = " + " ".join(f"$(if $({k.make_var}),--set {k.make_var}=$({k.make_var}))" for k in KNOBS)
