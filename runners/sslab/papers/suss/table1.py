"""E7, the SUSS paper's Table 1: per setting, the large flow's FCT and the small flows' mean FCT,
SUSS (or the start compared in its place) off and on, the improvement, 95% CIs over repetitions, claim
checks, and the paper's values beside ours (results/reference/table1.yaml), each judged by our 95 % CI
against a band around it (verdict.py: reproduced, not reproduced, not decided), the 2 BDP means its
Average rows imply and the stability effect its two large-flow FCTs imply among them, counted apart in
the headline, and what its numbers allow of our unstated choices (paper_bounds.py).

The main table is a settings section (sslab.analysis.settings_table) and the table of checks beside it
a checks section (sslab.analysis.checks_table), both described in Table 1's experiment file, over this
module's reading of a matrix (RECORDS: a record per cell whose two sides ran, and the checks it offers);
the notes of its own (a start in SUSS's place, the order of the arms), the bounds and the headline are
this module's; what ran and the captures' line are every matrix report's (sslab.analysis.plan_notes)."""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path
from typing import TypeVar

import yaml

from ... import paths
from ...ccas import SUSS_CCAS, recorded_suss_version
from ...plan_record import MatrixPlan
from ...analysis import progress
from . import paper_bounds
from ...analysis.causes import causes_md, load_causes
from ...analysis.fidelity import run_passes
from ...analysis.archive import (CELL_RECORD, cell_timing, check_controls, current_cells, overhead_table, run_summaries_of,
                      side_of, written_as)
from ...analysis.checks_table import Checks, checks_text
from ...analysis.matrix_described import described_in, settings_grid
from ...analysis.plugins import Metric, Records
from ...analysis.settings_table import (Settings, comparison_table, headline, headline_counts, judged, mean_rows,
                                        repetitions, reproduced_cell, setting_rows, settings_text)
from ...analysis.stats import ci95, describe, without_values
from ...analysis.verdict import RULE, RULE_RECORD, tally

REFERENCE_DIR = paths.REPO_ROOT / "results" / "reference"
#: Table 1's experiment file, whose report describes the main table.
MATRIX_FILE = "experiments/reproduce-table1.yaml"
S = TypeVar("S")
#: The two sides of a repetition, in the order the checks show them.
SIDES = ("off", "on")
#: A side's numbers a repetition's record carries as <name>_off and <name>_on, for the checks.
SIDE_FIELDS = ("drops", "queue_peak_pkts", "small_rwnd_limited", "small_handshake_retrans", "fidelity_ok")


def flow_fct(flow: dict, timing: str, where: Path) -> float:
    """A flow's FCT as @timing reads it (MatrixPlan.fct_timing): its client's, or its server's trace's."""
    if timing == "client":
        return flow["fct_s"]
    fct = flow.get("server_fct_s")
    if fct is None:
        raise ValueError(f"{where}: the server's FCT needs the flow's per-ACK trace, and this run has none for "
                         f"port {flow.get('port')}")
    return fct


#: table1_cell's numbers, by what they are read from: Table 1's report reads every cell's numbers ten
#: times (its table, each claim's test, the comparisons and checks beside them), and each reading parsed
#: the cell's run records again, megabytes of JSON: half the report's time.  A cell's key holds its
#: record's identity (inode, size, time), so a cell run again is read again.
_CELL_NUMBERS: dict[tuple, dict] = {}


def table1_cell(plan: MatrixPlan, cell_dir: Path) -> dict:
    """One cell's numbers: large FCT and mean small FCT for off and on (a copy: the caller's to keep)."""
    written = written_as(Path(cell_dir) / CELL_RECORD)
    if written is None:
        return _table1_cell(plan, cell_dir)
    key = (str(cell_dir), written, plan.fct_timing, json.dumps(plan.compare, sort_keys=True))
    if key not in _CELL_NUMBERS:
        _CELL_NUMBERS[key] = _table1_cell(plan, cell_dir)
    return copy.deepcopy(_CELL_NUMBERS[key])


def _table1_cell(plan: MatrixPlan, cell_dir: Path) -> dict:
    """table1_cell's numbers, read from the cell's run records."""
    out: dict = {"buffer_pkts": buffer_pkts_of(cell_dir)}
    for run, _ in run_summaries_of(cell_dir):
        check_controls(run, cell_dir)
        out.setdefault("first", side_of(plan, run))  # which arm ran first in the boot
        fcts = [flow_fct(f, plan.fct_timing, cell_dir) for f in run["flows"]]
        flows = run["flows"]
        out[side_of(plan, run)] = {
            "large_fct_s": fcts[0],
            "small_mean_fct_s": statistics.fmean(fcts[1:]),
            "small_fct_s": fcts[1:],
            "fidelity_ok": run_passes(run),
            # what tshark's reading of the capture said (the report's line on captures)
            "capture": {"tag": run["tag"], "pcap": run.get("pcap"), "capture_check": run.get("capture_check")},
            "drops": run["bottleneck"]["drops"],
            # the most the bottleneck's queue held at once (None: a kernel without our patches 0007 and 0008)
            "queue_peak_pkts": run["bottleneck"].get("peak_pkts"),
            # small flows whose sender was held by the receiver's advertised window (per-ACK trace)
            "small_rwnd_limited": sum(1 for f in flows[1:] if f.get("receiver_limited_acks")),
            # small flows whose SYN or SYN-ACK was sent again (a loss in the handshake: a second or more
            # inside the client's FCT, none in the server's); None: runs from before it was recorded
            "small_handshake_retrans": handshake_retransmitted(flows[1:]),
            "small_count": len(flows) - 1,
            "suss_versions": sorted({v for f in flows if (v := recorded_suss_version(f)) is not None}),
        }
    return out


def handshake_retransmitted(flows: list[dict]) -> int | None:
    """How many of @flows had their SYN or SYN-ACK sent again; None when a run did not record it."""
    if any(f.get("syn_retransmits") is None or f.get("synack_retransmits") is None for f in flows):
        return None
    return sum(1 for f in flows if f["syn_retransmits"] or f["synack_retransmits"])


def handshakes(records: list[dict], paper: dict | None = None) -> str:
    """The small flows with a SYN or SYN-ACK sent again, off / on, of how many ("0 / 2 of 120"); – for
    runs that did not record it."""
    counts = [handshakes_resent(records, s) for s in SIDES]
    return " / ".join("–" if c is None else str(c) for c in counts) + f" of {n_small(records)}"


def handshakes_resent(records: list[dict], side: str) -> int | None:
    """The small flows on @side with a SYN or SYN-ACK sent again, over @records; None where a run did
    not record it."""
    counts = [r[f"small_handshake_retrans_{side}"] for r in records]
    return None if None in counts else sum(counts)


def buffer_pkts_of(cell_dir: Path) -> int | None:
    """The bottleneck's buffer in packets, as the cell's plan resolved it (None: no plan kept, or one
    that does not say)."""
    plan_file = cell_dir / "plan.json"
    return json.loads(plan_file.read_text()).get("bottleneck", {}).get("buffer_pkts") if plan_file.is_file() else None


def mean_queue_peak(records: list[dict], side: str) -> float | None:
    """The most the bottleneck's queue held at once on @side ("off", "on"), mean over @records; None
    where a run's kernel does not count it (no patches 0007 and 0008)."""
    peaks = [r[f"queue_peak_pkts_{side}"] for r in records]
    return None if None in peaks else statistics.fmean(peaks)


def queue_peaks(records: list[dict], paper: dict | None = None) -> str:
    """mean_queue_peak off / on, and of what buffer: "413 / 413 of 413"; – where it is None."""
    off, on = (mean_queue_peak(records, s) for s in SIDES)
    buffers = {r.get("buffer_pkts") for r in records} - {None}
    return " / ".join("–" if v is None else f"{v:.0f}" for v in (off, on)) + \
        (f" of {buffers.pop()}" if len(buffers) == 1 else "")


def cells_by_setting(plan: MatrixPlan, cells: list[tuple]) -> dict[tuple[str, str, str], list[dict]]:
    """Each done cell's numbers (table1_cell), by its setting (large_cc, buffer, large_rtt); how far the
    reading is, once it takes time (sslab.analysis.progress)."""
    out: dict[tuple[str, str, str], list[dict]] = {}
    reading = progress.Reading(len(cells), "cells")
    for cell, cdir in cells:
        s = cell.setting
        out.setdefault((s["large_cc"], s["buffer"], s["large_rtt"]), []).append(table1_cell(plan, cdir))
        reading.step()
    return out


def n_small(records: list[dict]) -> int:
    """Small flows per side over the repetitions."""
    return sum(r["small_count"] for r in records)


def reference(plan: MatrixPlan) -> dict:
    """The paper's values @plan's matrix is compared with (its own name's, or the one it names)."""
    p = REFERENCE_DIR / f"{plan.reference or plan.matrix}.yaml"
    return yaml.safe_load(p.read_text()) if p.exists() else {}


def _claims(off_small: list[float], on_small: list[float], off_large: list[float],
            on_large: list[float]) -> dict:
    n = len(off_small)
    diffs = [a - b for a, b in zip(off_small, on_small)]
    dd = describe(diffs)
    if n >= 2 and dd["ci95"]:
        lo, hi = dd["ci95"]
        small = "yes" if lo > 0 else ("NO: slower" if hi < 0 else "not significant")
    else:
        small = "yes (n=1)" if dd["mean"] > 0 else "NO (n=1)"
    dl = describe(off_large)
    change = (statistics.fmean(on_large) / statistics.fmean(off_large) - 1) * 100
    if n >= 2 and dl["ci95"]:
        inside = dl["ci95"][0] <= statistics.fmean(on_large) <= dl["ci95"][1]
        large = f"{'yes' if inside else 'NO'} ({change:+.1f}%)"
    else:
        large = f"n=1: {change:+.1f}%"
    return {"small_faster": small, "large_within_ci": large, "small_diff_s": without_values(dd),
            "large_change_pct": round(change, 2)}


#: Each field's values over a setting's repetitions (a repetition: its off and on sides).
FIELD_VALUES = {"off_large": lambda r: r["off"]["large_fct_s"], "off_small": lambda r: r["off"]["small_mean_fct_s"],
                "on_large": lambda r: r["on"]["large_fct_s"], "on_small": lambda r: r["on"]["small_mean_fct_s"],
                "improvement_pct": lambda r: (1 - r["on"]["small_mean_fct_s"] / r["off"]["small_mean_fct_s"]) * 100}


def large_change_pct(r: dict) -> float:
    """A repetition's large-flow change with the compared start, in percent of its FCT without."""
    return (r["on"]["large_fct_s"] / r["off"]["large_fct_s"] - 1) * 100


def paper_change(p: dict) -> tuple[float, float]:
    """The large flow's change the paper's two FCTs imply, in percent, and its ± from their printed
    rounding (each ±0.05 s): d(on/off) = 0.05 / off + 0.05 * on / off^2."""
    off, on = float(p["off_large"]), float(p["on_large"])
    return (on / off - 1) * 100, 100 * 0.05 * (1 / off + on / off ** 2)


def _improvement(means: dict[str, float]) -> float:
    """The small flows' improvement of means: 1 - mean FCT on / mean FCT off, in percent."""
    return (1 - means["on_small"] / means["off_small"]) * 100


def record_of(setting: tuple[str, str, str], rep: dict) -> dict:
    """A repetition of a setting (a cell whose two sides ran) as the reading's record."""
    return {"large_cc": setting[0], "buffer": setting[1], "large_rtt": setting[2],
            **{field: value(rep) for field, value in FIELD_VALUES.items()},
            "large_change_pct": large_change_pct(rep),
            **{f"{name}_{side}": rep[side].get(name) for side in SIDES for name in SIDE_FIELDS},
            "small_count": rep["off"].get("small_count"), "buffer_pkts": rep.get("buffer_pkts")}


def records_of(by_setting: dict[tuple[str, str, str], list[dict]]) -> list[dict]:
    """Every setting's repetitions with both sides (cells_by_setting's), as records, in its order."""
    return [record_of(key, r) for key, reps in by_setting.items() for r in reps if "off" in r and "on" in r]


def _load(matrix_dir: Path, plan: MatrixPlan) -> list[dict]:
    return records_of(cells_by_setting(plan, current_cells(matrix_dir, plan)))


def _implied_2bdp(ref: dict) -> dict[str, dict[str, tuple[float, float]]]:
    """The 2 BDP means the paper's Average rows imply (paper_bounds.implied_2bdp), per control and field."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for v in paper_bounds.implied_2bdp(ref):
        out.setdefault(v.cca, {})[v.field] = (v.value, v.rounding)
    return out


def claims_of(records: list[dict]) -> dict:
    """The per-setting checks of the paper's words over a setting's repetitions (_claims)."""
    return _claims(*([r[f] for r in records] for f in ("off_small", "on_small", "off_large", "on_large")))


def small_faster(records: list[dict], paper: dict | None = None) -> str:
    """Whether the small flows were faster with the compared start: the paired difference off - on."""
    return claims_of(records)["small_faster"]


def large_within_ci(records: list[dict], paper: dict | None = None) -> str:
    """Whether the large flow's mean FCT with the compared start is inside the 95 % CI of its FCT without."""
    return claims_of(records)["large_within_ci"]


def large_change(records: list[dict], paper: dict | None = None) -> str:
    """The large flow's change with the compared start, ours / the one the paper's two FCTs imply."""
    return f"{claims_of(records)['large_change_pct']:+.1f}% / " + \
        (f"{paper_change(paper)[0]:+.1f}%" if paper else "–")


def drops(records: list[dict], paper: dict | None = None) -> str:
    """The bottleneck's drops a run, off / on, mean over the repetitions."""
    return " / ".join(f"{mean_drops(records, s):.0f}" for s in SIDES)


def mean_drops(records: list[dict], side: str) -> float:
    """The bottleneck's drops a run on @side, mean over @records."""
    return statistics.fmean(r[f"drops_{side}"] for r in records)


def rwnd_limited(records: list[dict], paper: dict | None = None) -> str:
    """The small flows held by their receiver's window at least once, off / on, of how many."""
    return " / ".join(str(sum(r[f"small_rwnd_limited_{s}"] for r in records)) for s in SIDES) + \
        f" of {n_small(records)}"


def runs_passing(records: list[dict]) -> int:
    """The runs (two a repetition) that passed their fidelity checks."""
    return sum(r[f"fidelity_ok_{s}"] for r in records for s in SIDES)


def fidelity(records: list[dict], paper: dict | None = None) -> str:
    """The runs that passed their fidelity checks, of how many."""
    return f"{runs_passing(records)}/{2 * len(records)}"


def drops_raised(records: list[dict], paper: dict | None = None) -> str:
    """Whether the compared start raised the bottleneck's drops: the paired difference on - off."""
    d = describe([r["drops_on"] - r["drops_off"] for r in records])
    if d["ci95"]:
        lo, hi = d["ci95"]
        if lo == hi == 0:
            return "no change"
        return "yes" if lo > 0 else ("no: fewer" if hi < 0 else "not significant")
    return "yes (n=1)" if d["mean"] > 0 else "no (n=1)"


#: Table 1's reading of a matrix: a record per cell whose two sides ran (a repetition of a setting).
RECORDS = Records(
    "table1", _load,
    {"large_cc": ("large CCA", str), "buffer": ("buffer", str), "large_rtt": ("minRTT", str)},
    {"off_small": Metric("off_small", "small flows' mean FCT, off", 2, unit="s"),
     "on_small": Metric("on_small", "small flows' mean FCT, on", 2, unit="s"),
     "improvement_pct": Metric("improvement_pct", "small-flow improvement", 0, unit="%",
                               of_means=_improvement, means_of=("on_small", "off_small")),
     "off_large": Metric("off_large", "large flow's FCT, off", 1, unit="s"),
     "on_large": Metric("on_large", "large flow's FCT, on", 1, unit="s"),
     "large_change_pct": Metric("large_change_pct", "large flow's change", 1, unit="%"),
     "drops_off": Metric("drops_off", "drops at the bottleneck, off", 0),
     "drops_on": Metric("drops_on", "drops at the bottleneck, on", 0)},
    over="matrix", implied={"stability": paper_change}, implied_means={"2BDP mean": _implied_2bdp},
    checks={"small_faster": small_faster, "large_within_ci": large_within_ci, "large_change": large_change,
            "drops": drops, "drops_raised": drops_raised, "queue_peaks": queue_peaks, "rwnd_limited": rwnd_limited,
            "handshakes": handshakes, "fidelity": fidelity})


def described_section(plan: MatrixPlan, kind: type[S]) -> S:
    """The section of @kind that the plan's matrix file describes, or (a file that only names Table 1's
    report, or a plan from before plans named their file) Table 1's own file's."""
    for name in (plan.matrix_file, MATRIX_FILE):
        spec = described_in(name) if name else None
        section = spec.section(kind) if spec else None
        if section is not None:
            return section  # type: ignore[return-value]
    raise ValueError(f"{plan.matrix_file or MATRIX_FILE}: no {kind.__name__.lower()} section in its report")


def main_table(plan: MatrixPlan) -> Settings:
    """The main table's description: the settings section of the plan's matrix file (or Table 1's)."""
    return described_section(plan, Settings)


def order_effect(reps: list[dict]) -> dict:
    """The small flows' improvement (%) in the repetitions where SUSS off ran first and in those where
    it ran second (the cases alternate with the repetition): their means, n each, and the difference;
    None where either order has no repetition."""
    improvement = FIELD_VALUES["improvement_pct"]
    by = {first: [improvement(r) for r in reps if r.get("first") == first and "on" in r and "off" in r]
          for first in ("off", "on")}
    means = {k: statistics.fmean(v) if v else None for k, v in by.items()}
    return {"off_first_pct": means["off"], "on_first_pct": means["on"], "n_off_first": len(by["off"]),
            "n_on_first": len(by["on"]),
            "difference_pts": None if None in means.values() else means["off"] - means["on"]}


def choices_of(cells: list[tuple]) -> paper_bounds.Choices | None:
    """Our unstated choices as the first done cell's plan records them."""
    for _, cdir in cells:
        plan_file = cdir / "plan.json"
        if plan_file.exists():
            return paper_bounds.Choices.of_plan(json.loads(plan_file.read_text()))
    return None


def compared_name(plan: MatrixPlan) -> str:
    """What the report calls the start on the compared side: SUSS (any of its names), else its name
    (cubic_rapid, run in SUSS's place: Matrix.compared)."""
    on = plan.compare["on"]
    return "SUSS" if on in SUSS_CCAS else on


def table1(matrix_dir: Path, plan: MatrixPlan) -> tuple[str, dict]:
    ref = reference(plan)  # the paper's values belong to the paper's matrix only
    ref_avg = {r["large_cc"]: r for r in ref.get("averages", [])}
    labels = plan.labels
    cells = current_cells(matrix_dir, plan)
    by_setting = cells_by_setting(plan, cells)
    walls = [cell_timing(cell, cdir) for cell, cdir in cells]
    rows: list[dict] = []
    # The main table (a row per setting, then its means: the experiment file's settings section), then
    # a table of what each setting shows beyond its FCTs (the signs, drops, receive windows, fidelity).
    spec = main_table(plan)
    start = compared_name(plan)
    matrix = settings_grid(plan)
    records = records_of(by_setting)
    settings = setting_rows(spec, records, RECORDS, ref, matrix, {"on": start})
    means = mean_rows(spec, settings, RECORDS, ref, matrix, {"on": start})
    lines = ([f"## {spec.heading}", ""] if spec.heading else []) + \
        settings_text(spec, settings, means, RECORDS, matrix).splitlines()
    # Each comparison with the setting it is about, for the causes tried (analysis.causes).
    about = judged(settings, means)
    comparisons = [c for _, c in about]
    per_cca: dict[str, list[dict]] = {}
    for srow in settings:
        # The setting's repetitions with both sides, as the reading's records.
        reps = srow.records
        if not reps:
            continue
        cca, buf, rtt = (srow.setting[k] for k in ("large_cc", "buffer", "large_rtt"))
        vals = {f: [r[f] for r in reps] for f in paper_bounds.FCT_FIELDS}
        d = {k: describe(v) for k, v in vals.items()}
        impr = srow.ours["improvement_pct"]
        # Its 95 % CI over the repetitions' own improvements, as the verdict judges it.
        impr_ci = srow.stats["improvement_pct"]["ci95"]
        # The large flow's paired change with the start (%), what the claims ledger holds each setting to
        # (table1_large_worst_setting).
        changes = [r["large_change_pct"] for r in reps]
        sign = reproduced_cell(srow.comparisons) if srow.comparisons else srow.verdict
        row = {"large_cc": cca, "buffer": buf, "large_rtt": rtt, "n": len(reps), "on_paper_grid": srow.on_grid,
               **{k: without_values(v) for k, v in d.items()}, "improvement_pct": round(impr, 2),
               "improvement_ci95": [round(x, 2) for x in impr_ci] if impr_ci else None, "claims": claims_of(reps),
               "large_change": {"mean": statistics.fmean(changes), "ci95": ci95(changes)},
               "paper": srow.paper, "paper_values_reproduced": sign, "runs_passing_fidelity": runs_passing(reps),
               "runs": 2 * len(reps), "comparisons": [c.record() for c in srow.comparisons],
               "drops_raised": drops_raised(reps),
               **{f"drops_{s}": mean_drops(reps, s) for s in SIDES},
               **{f"queue_peak_pkts_{s}": mean_queue_peak(reps, s) for s in SIDES},
               **{f"small_handshake_retrans_{s}": handshakes_resent(reps, s) for s in SIDES},
               "buffer_pkts": reps[0]["buffer_pkts"]}
        rows.append(row)
        per_cca.setdefault(cca, []).append(row)
    # The checks beside the main table: the experiment file's checks section, over the same records.
    checks = checks_text(described_section(plan, Checks), records, RECORDS, ref, matrix,
                         {"off": plan.compare.get("off", ""), "on": start})
    # What ran, the captures' line, the settings off the grid: every matrix report's (analysis.plan_notes).
    notes = []
    if compared_name(plan) != "SUSS":
        notes.append(f"- On = {plan.compare['on']}, in SUSS's place: the paper's on and improvement columns "
                     f"are SUSS's (the paper compared SUSS with HyStart), beside ours for reference; the sign "
                     f"column compares ours with SUSS's.")
    order = {cca: order_effect([r for (c, _, _), reps in by_setting.items() if c == cca for r in reps])
             for cca in per_cca}
    for cca, effect in order.items():
        if effect["difference_pts"] is not None:
            notes.append(f"- {labels.get(cca, cca)}, the order of the arms: the small flows' improvement "
                         f"{effect['off_first_pct']:.1f}% where SUSS off ran first (n={effect['n_off_first']}) and "
                         f"{effect['on_first_pct']:.1f}% where it ran second (n={effect['n_on_first']}): "
                         f"{effect['difference_pts']:+.1f} points, over every setting shown.")
    choices = choices_of(cells)
    found = paper_bounds.bounds(ref, choices) if choices and ref else []
    bound_lines = [f"- {b.line(labels)}" for b in found]
    # The paper's claims are judged by their ledger's tests (the report's answer line, matrix_report);
    # the per-setting checks (small flows faster? large flow inside its CI?) stay in the table, a check
    # each, never a claim's verdict.
    verdict = [*headline(spec, comparisons, repetitions(settings))] if comparisons else \
        ["No paper value to judge here (none printed or implied for these settings)."]
    overhead = overhead_table(walls)
    versions = sorted({v for reps in by_setting.values() for r in reps for v in r.get("on", {}).get("suss_versions", [])})
    if checks:
        lines += ["", *checks.splitlines()]
    return "\n".join(lines), {"rows": rows, "unavailable": [u.model_dump() for u in plan.unavailable], "notes": notes,
                              "overhead_md": overhead, "cells_done": len(cells), "cells_planned": len(plan.cells),
                              "order_effect": order,
                              "suss_versions": versions,
                              "verdict": verdict, "verdict_rule": {**RULE_RECORD, "text": RULE},
                              "comparisons": [c.record() for c in comparisons],
                              "comparisons_md": comparison_table(comparisons) if comparisons else "",
                              "causes_md": causes_md(load_causes(plan.reference or plan.matrix), about),
                              "paper_outcomes": tally(comparisons), "headline": headline_counts(spec, comparisons),
                              "bounds": bound_lines,
                              "ruled_out": [b.parameter for b in found if b.ruled_out],
                              "paper_averages": {c: r["improvement_pct"] for c, r in ref_avg.items()}}
