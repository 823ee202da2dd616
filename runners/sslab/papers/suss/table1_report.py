"""Table 1's matrix report (E7; `report: table1`): per setting the large flow's FCT and the small flows'
mean FCT, SUSS off and on, the improvement, 95 % CIs over repetitions, claim checks and the paper's
values beside ours (sslab.papers.suss.table1); a calibration matrix's candidates first; after the plots,
every SUSS version run on the selection side by side; on several kernels, its settings section's
columns, a row per setting and kernel (sslab.analysis.matrix_described.kernels_table)."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from ...ccas import SUSS_VERSIONS
from ...plan_record import MatrixPlan
from ...analysis.answer_plots import against_bound, ours_against_paper, per_setting, summary_pdf
from ...analysis.archive import ArchiveError, latest_plan
from .calibration import calibration, candidate_axes
from ...analysis.matrix_kind import MatrixReport, Tables
from ...analysis.plugins import Records
from ...analysis.settings_table import Settings
from .table1 import RECORDS, compared_name, main_table, table1


def large_flow_bounds() -> dict[str, float]:
    """Each column's bound on the large flow's change with SUSS, as the SUSS ledger's per-column claims
    hold it (table1_large_worst_setting's `at_most`), by large_cc."""
    from ...analysis.claims import load_ledger
    out = {}
    for c in load_ledger("suss").claims:
        ev = c.evidence
        if ev and ev.extract == "table1_large_worst_setting" and c.test and "," not in ev.args.get("large_cc", ","):
            out[ev.args["large_cc"]] = c.test.bound
    return out


class Table1Report(MatrixReport):

    def tables(self, matrix_dir: Path, plan: MatrixPlan, dest: Path) -> Tables:
        calibrated: list[str] = []
        if candidate_axes(plan):
            # A calibration matrix: each candidate's distance, then one candidate's Table 1 (the chosen
            # one, or the nearest so far): never the candidates' cells pooled.
            calibrated, shown, fits = calibration(matrix_dir, plan)
            report_plan = shown or plan
        else:
            report_plan, fits = plan, None
        table, extra = table1(matrix_dir, report_plan)
        # The answer's plots, drawn from the verdicts' records and the rows the tables hold.
        records = extra.get("comparisons", [])
        extra["answer_plots"] = [(alt, plot.name) for alt, plot in (
            ("every value beside the paper's", ours_against_paper(records, dest)),
            ("the improvement and the large flow's change, setting by setting", per_setting(records, dest)),
            ("the large flow against its claim's bound, setting by setting",
             against_bound(extra.get("rows", []), large_flow_bounds(), dest)))
            if plot is not None]
        if fits is not None:
            extra["calibration"] = fits
        on = plan.compare["on"]
        if compared_name(plan) == "SUSS":
            versions = "; ".join(SUSS_VERSIONS[v] for v in extra["suss_versions"]) or \
                "not recorded: cells from before SUSS versions, which ran ours from the paper's text"
            sides = f"SUSS off = cubic_hs (CUBIC's default HyStart), on = {on}, which ran {versions}"
        else:
            sides = (f"off = cubic_hs (CUBIC's default HyStart), on = {on} in SUSS's place (docs/starts.md says "
                     f"which draft it follows)")
        timing = {"client": "FCT from the client (connect() to last byte)",
                  "server": "FCT from the server's per-ACK trace (its first segment to the last ACK that "
                            "advanced snd_una)"}[report_plan.fct_timing]
        intro = (f"Mean ±95% CI half-width (Student t) over repetitions; {sides}; {timing}. Improvement = 1 − "
                 "mean small FCT on / off. *Small flows faster*: the paired difference off − on, with its CI. "
                 "*Large flow within its CI*: the on mean inside the off 95% CI. *Paper values reproduced*: of the "
                 "paper's five values of a setting, how many ours reproduce in magnitude (the rule is the report's "
                 "first line; every value is in the last table).")
        return Tables(table, extra, intro, before=calibrated, claims=not calibrated)

    def after_plots(self, matrix_dir: Path, extra: dict) -> list[str]:
        return suss_versions_side_by_side(matrix_dir, extra)

    def summary(self, title: str, lines: list[str], extra: dict, dest: Path) -> Path | None:
        if not extra.get("answer_plots"):
            return None
        return summary_pdf(title, lines, extra.get("comparisons", []), extra.get("rows", []), large_flow_bounds(),
                           dest)

    def summary_fields(self, matrix_dir: Path, plan: MatrixPlan) -> dict:
        return table1(matrix_dir, plan)[1]

    def settings(self, plan: MatrixPlan) -> tuple[Settings, Records]:
        return main_table(plan), RECORDS


TABLE1 = Table1Report("table1", "Fig. 16", 0, ("the large flow", "the small flows"),
                      flows_grid=("large_cc", "large_rtt", "buffer"))


_SUSS_SUFFIX = re.compile(r"_suss-(\d+)")


def _average_improvement(rows: list[dict]) -> float | None:
    """The paper's average: 1 - mean of the on means / mean of the off means, over its grid."""
    rs = [r for r in rows if r["on_paper_grid"]]
    if not rs:
        return None
    return (1 - statistics.fmean(r["on_small"]["mean"] for r in rs)
            / statistics.fmean(r["off_small"]["mean"] for r in rs)) * 100


def suss_versions_side_by_side(matrix_dir: Path, extra: dict) -> list[str]:
    """Table 1's small-flow improvement per setting for every SUSS version run on this selection
    (the sibling directories that differ only by `_suss-N`), beside the paper's: the paper's numbers
    came from one version, and a later fix may move them.  Empty when one version was run."""
    base = _SUSS_SUFFIX.sub("", matrix_dir.name)
    runs: list[tuple[str, dict]] = []
    for sib in sorted(matrix_dir.parent.iterdir()):
        if not sib.is_dir() or _SUSS_SUFFIX.sub("", sib.name) != base or not (sib / "plans").is_dir():
            continue
        if sib == matrix_dir:
            sib_extra = extra
        else:
            try:
                _, sib_plan = latest_plan(sib)
                _, sib_extra = table1(sib, sib_plan)
            except (ArchiveError, KeyError, ValueError):
                continue
        if not sib_extra["rows"]:
            continue
        versions = sib_extra["suss_versions"]
        name = " + ".join(SUSS_VERSIONS[v].split(" (")[0] for v in versions) if versions else \
            "ours (not recorded)"
        runs.append((f"{name} ({sib.name})", sib_extra))
    if len(runs) < 2:
        return []
    keys = list(dict.fromkeys((r["large_cc"], r["buffer"], r["large_rtt"]) for _, e in runs for r in e["rows"]))
    by = [{(r["large_cc"], r["buffer"], r["large_rtt"]): r for r in e["rows"]} for _, e in runs]
    paper = {k: r["paper"] for b in by for k, r in b.items() if r.get("paper")}
    out = ["## SUSS versions side by side", "",
           "Small-flow improvement (1 − mean small FCT on / off) per setting, for each SUSS version run on this "
           "selection (directory in brackets), beside the paper's; n = repetitions.", "",
           "| large CCA | buffer | minRTT | paper | " + " | ".join(name for name, _ in runs) + " |",
           "|---|---|---|---|" + "---|" * len(runs)]
    for key in keys:
        cells = [f"{b[key]['improvement_pct']:.0f}% (n={b[key]['n']})" if key in b else "–" for b in by]
        p = paper.get(key)
        paper_text = f"{p['improvement_pct']:.0f}%" if p else "–"
        out.append(f"| {' | '.join(key)} | {paper_text} | " + " | ".join(cells) + " |")
    ccas = list(dict.fromkeys(k[0] for k in keys))
    for cca in ccas:
        avgs = [_average_improvement([r for r in e["rows"] if r["large_cc"] == cca]) for _, e in runs]
        p = extra.get("paper_averages", {}).get(cca)
        out.append(f"| {cca} | average | paper's grid | {f'{p:.0f}%' if p is not None else '–'} | "
                   + " | ".join(f"{a:.0f}%" if a is not None else "–" for a in avgs) + " |")
    return out + [""]


