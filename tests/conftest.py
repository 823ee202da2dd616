"""Every test sees the papers' reports and claim extractors registered, as the command line does
(sslab.papers: a paper's package registers its own when imported)."""

import sslab.papers  # noqa: F401
