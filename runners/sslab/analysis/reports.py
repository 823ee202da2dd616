"""Reports by name: what an experiment file's `report:` may say.

A report is either written per run (the scenario run's own report.md and
summary.json, written as the run finishes: `startup`), or combines the run
directories of an experiment's parts into a new directory (`wifi`,
`fct-vs-size`, `astart`, `blitzstart`), or is a matrix's own (`matrix`: the
matrix file's `report:` chooses table1 or fairness).  A new report is one
writer in this package and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import astart, blitzstart, lastmile


@dataclass(frozen=True)
class Report:
    name: str
    #: What it is, for `sslab experiments` and the errors.
    what: str
    #: For a report over several runs: write(run_dirs, dest) -> dest.  None: per run or per matrix.
    write: Callable[[list[Path], Path], Path] | None = None
    #: The experiment is a matrix (the matrix file's own report).
    matrix: bool = False


REPORTS: dict[str, Report] = {r.name: r for r in (
    Report("startup", "each scenario run's own tables and plots (FCT, loss, cwnd against time)"),
    Report("wifi", "FCT and loss against size per variant over a Wi-Fi last hop (E2)", lastmile.write_wifi_report),
    Report("fct-vs-size", "FCT and loss against size per link and RTT, SUSS's improvement (E4/E5)",
           lastmile.write_fct_report),
    Report("astart", "the Astart paper's tables and figures beside ours (E8)", astart.write_report),
    Report("blitzstart", "the Blitzstart report's Table 1 beside ours (E9)", blitzstart.write_report),
    Report("matrix", "the matrix's own report (its file's report: table1 or fairness)", matrix=True),
)}
