"""The evidence a claim's test reads: what every extractor returns and raises (base).

An extractor takes an archive's numbers for a claim's quantity; each is named in a ledger
(experiments/claims/<paper>.yaml: `evidence: {extract: NAME}`) and registered by its paper's
package (sslab.papers.<paper>, sslab.analysis.plugins.register_extractors).  A new claim over a
new quantity is a function in its paper's package and a line of its registration; the ledger
model and its tests (sslab.analysis.claims) need no change.
"""

from __future__ import annotations

from .base import LedgerError, Measured, NotThisArchive, Point, extreme, measured

__all__ = ["LedgerError", "Measured", "NotThisArchive", "Point", "extreme", "measured"]
