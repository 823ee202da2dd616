"""Experiments: one scenario run end to end on a substrate, and its run record.

    run     scenario -> plan -> job on the substrate -> archive (meta.json,
            job/out/, report via analysis) -> manifest.json with every
            artifact's sha256
    series  several scenario files, each into its own run directory, in
            parallel under UML

May import: scenario, substrate, analysis and the leaves (paths, ccas).
Not matrix or cli.
"""

from .archive import gzip_in_place
from .run import code_version, estimate_seconds, run_scenario, run_scenario_into, sha256, write_manifest
from .series import run_series

__all__ = ["code_version", "gzip_in_place", "estimate_seconds", "run_scenario", "run_scenario_into", "run_series", "sha256",
           "write_manifest"]
