"""What a run takes: the generous guesses a job's timeout and the expected times are made from."""

from __future__ import annotations

from ..scenario import Scenario
from ..substrate.kinds import kind_of


#: Reading the per-ACK trace out of a TCG guest cost about this much per MB a
#: run moves (an E7 run, 174 MB, spent ~44 s past its last byte).
TRACE_S_PER_MB = 0.25
#: Wall time per guest second under UML with blocking traffic tools, capture
#: and traces (an upper end of what `make bench` measured), and the per-boot cost.
UML_WALL_PER_GUEST = 0.35
UML_BOOT_S = 3.0


def guest_seconds(s: Scenario) -> float:
    """A generous guess of the guest time a scenario takes: its runs and the fidelity checks."""
    rate_bps = s.bottleneck.rate_mbit * 1e6
    total = 30.0  # topology, RTT and rate checks
    for _, case in s.run_order():
        total += max((f.start + (f.duration or f.size * 8 / rate_bps * 1.3)) for f in case.flows) + 3.0
    return total


def estimate_seconds(s: Scenario, substrate: str = "vm") -> float:
    """A generous guess of the wall time a scenario takes on @substrate (for ETAs)."""
    if kind_of(substrate).virtual_time:
        return UML_BOOT_S + UML_WALL_PER_GUEST * guest_seconds(s)
    rate_bps = s.bottleneck.rate_mbit * 1e6
    per_run = 0.0
    for _, case in s.run_order():
        longest = max((f.start + (f.duration or f.size * 8 / rate_bps * 1.3)) for f in case.flows)
        moved_mb = sum((f.size or f.duration * rate_bps / 8 / len(case.flows)) for f in case.flows) / 1e6
        per_run += longest + 9.0  # servers, captures under TCG
        if s.capture.traces:
            per_run += TRACE_S_PER_MB * moved_mb
    return 60.0 + per_run
