"""The Blitzstart report (E9): its Table 1 beside ours (report), registered with the engines."""

from ...analysis.plugins import Report, register_reports
from . import report

register_reports(Report("blitzstart", "the Blitzstart report's Table 1 beside ours (E9)", report.write_report))
