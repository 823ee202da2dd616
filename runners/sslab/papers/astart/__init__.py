"""The Astart paper (E8): its runs read as records for the report experiments/astart.yaml describes
(its tables and figures beside ours), and its claims' extractors (evidence), registered with the
engines."""

from ...analysis.plugins import register_extractors, register_records
from . import evidence, runs

register_records(runs.RECORDS)
register_extractors({
    "astart_least_margin": evidence.astart_least_margin,
    "astart_newreno_share": evidence.astart_newreno_share,
    "astart_buffer_ratio": evidence.astart_buffer_ratio,
})
