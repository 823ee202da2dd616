"""The SUSS paper (SIGCOMM'24): Table 1's matrix report with the paper's values beside ours, its
calibration and comparisons (table1, table1_report, table1_compare, calibration, paper_bounds,
independence), E6's reading of its runs and its figure (fairness: its report is data, in
experiments/fairness.yaml), and the claims' extractors of E3, E4/E5, E6 and
E7 (evidence), registered with the engines."""

from ...analysis.plugins import Report, register_extractors, register_figures, register_records, register_reports
from . import fairness, table1
from .evidence import e3, e4, fairness as fairness_evidence, table1 as table1_evidence
from .table1_report import TABLE1

register_reports(
    Report("table1", "Table 1's layout (its main table described in experiments/reproduce-table1.yaml): per "
           "setting the large flow's FCT and the small flows' mean FCT, SUSS off and on, with 95 % CIs, claim checks "
           "and the paper's values beside ours; every flow's goodput over time per setting, the paper's Fig. 16 "
           "(E7)", matrix=TABLE1),
)
register_records(fairness.RECORDS, table1.RECORDS)
register_figures({"jain": fairness.draw_jain})
register_extractors({
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
    "fairness_gain_trend": fairness_evidence.fairness_gain_trend,
    "fairness_recovery_gain": fairness_evidence.fairness_recovery_gain,
    "table1_average_improvement": table1_evidence.table1_average_improvement,
    "table1_large_slowdown": table1_evidence.table1_large_slowdown,
    "table1_large_worst_setting": table1_evidence.table1_large_worst_setting,
})
