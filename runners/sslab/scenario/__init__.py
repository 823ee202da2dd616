"""Scenarios: the YAML a person writes, validated into one typed model.

    units   sizes, rates and times as written ('5MB', '50mbit', '100ms')
    model   the pydantic model of the file (Scenario, BottleneckSpec, Link, FlowSpec, ...): its front end
            only; what runs is the plan (sslab.records.Plan), no class named twice
    links   link models' presets (wired, Wi-Fi, cellular) and where their values come from
    hosts   host models' presets (ideal, 1gbe, logging): NIC line rate, receive cost per packet
    traces  rate traces: mahimahi's format in and out, seeded generators
    load    YAML files (`extends:`), case templates, the plan for a substrate
    series  a scenario template and the axes that fill it, one scenario per setting
    knobs   the settings a command line asks over any scenario (SUSS_VERSION=, HOSTS=, LANS=), one
            table row each
    sets    NAME=value on any experiment, one meaning: a knob, an axis, a declared name or a field
    overrides  a field set by its path in a scenario's plain data, before validation

May import: the standard library, pydantic, PyYAML, and the leaves
sslab.ccas and sslab.paths.  Nothing else of sslab: every backend and
report is fed from here, never the other way round.
"""

from ..ccas import KERNEL_CCAS, KNOWN_CCAS, OUR_CCAS
from .load import expand_cases, load_scenario, parse_scenario, scenario_from_dump, substitute, to_plan
from .hosts import HOST_PRESETS
from .model import (AddressPlan, BottleneckSpec, Buffer, CaptureSpec, Case, FlowSpec, HostParams, HostsSpec,
                    PairSpec, Scenario, ScenarioError, TopologySpec)
from .units import FRAME_BYTES, parse_rate_mbit, parse_seconds, parse_size

__all__ = ["KERNEL_CCAS", "KNOWN_CCAS", "OUR_CCAS", "expand_cases", "load_scenario", "parse_scenario",
           "scenario_from_dump", "substitute", "to_plan", "AddressPlan", "BottleneckSpec", "Buffer", "CaptureSpec",
           "Case", "FlowSpec", "HOST_PRESETS", "HostParams", "HostsSpec", "PairSpec", "Scenario", "ScenarioError",
           "TopologySpec",
           "FRAME_BYTES", "parse_rate_mbit",
           "parse_seconds", "parse_size"]
