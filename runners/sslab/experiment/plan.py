"""The plan a substrate runs: the scenario's plan with what the substrate's clock decides.

This module is part of the traffic code (matrix cell keys cover it): what
it sets changes what runs on the wire.
"""

from __future__ import annotations

from dataclasses import replace

from ..records import VIRTUAL_CLOCKS, Fidelity, Plan
from ..scenario import Scenario, to_plan
from ..substrate.kinds import kind_of


def fidelity_rules(clock: str) -> dict:
    """What the guest's fidelity check holds a run to, by the substrate's clock.

    On a real clock the substrate's own latency is measured and taken off
    the delay lines, and 0.5 ms of RTT error is tolerated (ping jitter under
    TCG).  Under virtual time nothing is taken off: the RTT must be the
    configured delay within ping's resolution (1 us, printed to 3 decimals
    of a millisecond), and a run that strays is flagged and kept.
    """
    if clock in VIRTUAL_CLOCKS:
        # Every ping after the first is the same: three give the minimum.
        return {"clock": clock, "calibrate": False, "rtt_tolerance_ms": 0.002, "ping_count": 3,
                "pairs_together": False}
    return {"clock": clock, "calibrate": True, "rtt_tolerance_ms": 0.5, "ping_count": 10, "pairs_together": True}


def plan_for(s: Scenario, substrate: str = "uml", clock: str = "uml/inf-cpu") -> Plan:
    """The plan of @s as a job on @substrate under @clock runs it (for_substrate)."""
    return for_substrate(to_plan(s), substrate, clock)


def for_substrate(compiled: Plan, substrate: str, clock: str) -> Plan:
    """A scenario's compiled plan (scenario.to_plan, as a matrix cell keeps it) with what the
    substrate and its clock decide: the fidelity rules, how captures wake, the topology's backend."""
    backend = compiled.topology.backend
    return replace(
        compiled, fidelity=Fidelity(**fidelity_rules(clock)),
        # Packet capture: one wake-up per packet on real clocks (nothing lost at stop), ring
        # blocks under virtual time (draining them costs guest time only).  See guest/flows.Pcap.
        capture=replace(compiled.capture, immediate=clock not in VIRTUAL_CLOCKS),
        # Mininet in the QEMU VM; plain namespaces (batched ip/tc, few processes) elsewhere.
        topology=replace(compiled.topology,
                         backend=kind_of(substrate).topology_backend if backend == "auto" else backend))
