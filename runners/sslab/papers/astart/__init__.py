"""The Astart paper (E8): its tables and figures beside ours (report), and its claims' extractors
(evidence), registered with the engines."""

from ...analysis.plugins import Report, register_extractors, register_reports
from . import evidence, report

register_reports(Report("astart", "the Astart paper's tables and figures beside ours (E8)", report.write_report))
register_extractors({
    "astart_least_margin": evidence.astart_least_margin,
    "astart_newreno_share": evidence.astart_newreno_share,
    "astart_buffer_ratio": evidence.astart_buffer_ratio,
})
