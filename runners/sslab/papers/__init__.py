"""Each paper's plug-in: what of a paper's experiments needs Python of its own.

A paper's package holds its reports that are not data (Table 1's layout with the paper's
values beside ours, the Astart paper's tables, ...), its claims' extractors (what a ledger's
claim reads of an archive) and the per-paper analysis under them, and registers the reports
and the extractors with the engines (sslab.analysis.plugins) when it is imported, as a
congestion-control module registers its algorithm with the kernel.  The engines in
sslab.analysis (captures, traces, statistics, the claims, the pages) name no paper.

Importing this package registers every paper's; what reads a report by name or judges a claim
imports it first (sslab.experiment.spec, which every experiment and matrix loads; a run's own
report; the commands that write a report or judge a claim).  A new paper is a package here and
a line below.
"""

from . import astart, blitzstart, suss  # noqa: F401 (each registers its own when imported)
