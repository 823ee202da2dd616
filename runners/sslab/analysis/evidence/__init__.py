"""The evidence a claim's test reads: per experiment, the extractors that take an archive's numbers for a
claim's quantity, each named in a ledger (experiments/claims/<paper>.yaml: `evidence: {extract: NAME}`)
and registered here.  A new claim over a new quantity is a function in its experiment's module and a line
below; the ledger model and its tests (sslab.analysis.claims) need no change.
"""

from __future__ import annotations

from typing import Callable

from . import astart, e3, e4, fairness, table1
from .base import LedgerError, Measured, NotThisArchive, Point, extreme, measured

EXTRACTORS: dict[str, Callable[..., Measured]] = {
    "astart_least_margin": astart.astart_least_margin,
    "astart_newreno_share": astart.astart_newreno_share,
    "astart_buffer_ratio": astart.astart_buffer_ratio,
    "e3_delivered_ratio": e3.e3_delivered_ratio,
    "e3_exit_cwnd_change": e3.e3_exit_cwnd_change,
    "e3_fct_change": e3.e3_fct_change,
    "e3_slow_start_rtt_change": e3.e3_slow_start_rtt_change,
    "e3_time_to_cwnd_ratio": e3.e3_time_to_cwnd_ratio,
    "e4_improvement_fall": e4.e4_improvement_fall,
    "e4_least_gain_over": e4.e4_least_gain_over,
    "e4_least_improvement": e4.e4_least_improvement,
    "e4_loss_gap_change": e4.e4_loss_gap_change,
    "e4_loss_ratio": e4.e4_loss_ratio,
    "fairness_gain_trend": fairness.fairness_gain_trend,
    "fairness_recovery_gain": fairness.fairness_recovery_gain,
    "table1_average_improvement": table1.table1_average_improvement,
    "table1_large_slowdown": table1.table1_large_slowdown,
    "table1_large_worst_setting": table1.table1_large_worst_setting,
}

__all__ = ["EXTRACTORS", "LedgerError", "Measured", "NotThisArchive", "Point", "extreme", "measured"]
