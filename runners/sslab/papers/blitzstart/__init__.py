"""The Blitzstart report (E9): its runs read as records for the report experiments/blitzstart.yaml
describes (its Table 1 beside ours), registered with the engines."""

from ...analysis.plugins import register_records
from . import runs

register_records(runs.RECORDS)
