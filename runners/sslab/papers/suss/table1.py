"""E7, the SUSS paper's Table 1: per setting, the large flow's FCT and the small flows' mean FCT,
SUSS (or the start compared in its place) off and on, the improvement, 95% CIs over repetitions, claim checks, and the paper's values
beside ours (results/reference/table1.yaml), each judged by our 95 % CI against a band around it (verdict.py:
reproduced, not reproduced, not decided), the 2 BDP means its Average rows imply and the stability effect its
two large-flow FCTs imply among them, counted apart in the headline, and what its numbers allow of our unstated choices
(paper_bounds.py)."""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path

import yaml

from ... import paths
from ...ccas import CC_LABELS, SUSS_CCAS, recorded_suss_version
from ...plan_record import MatrixPlan
from ...analysis import progress
from . import paper_bounds
from ...analysis.capturecheck import agreement_line
from ...analysis.causes import causes_md, load_causes
from ...analysis.fidelity import run_passes
from ...analysis.archive import (CELL_RECORD, cell_timing, check_controls, current_cells, overhead_table, run_summaries_of,
                      side_of, written_as)
from ...analysis.stats import without_values, fmt_mean_ci, describe
from ...analysis.verdict import NOT_DECIDED, NOT_REPRODUCED, RULE, RULE_RECORD, Comparison, tally, tally_text

REFERENCE_DIR = paths.REPO_ROOT / "results" / "reference"


def on_paper_grid(plan: MatrixPlan, setting: dict) -> bool:
    """Whether every value of @setting is one of the matrix file's own (the paper's grid).
    Plans from before axis values were recorded hold only the file's values."""
    values = plan.axis_values
    return values is None or all(v in values.get(a, [v]) for a, v in setting.items())


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


def handshakes(reps: list[dict]) -> str:
    """The small flows with a SYN or SYN-ACK sent again, off / on, of how many ("0 / 2 of 120"); – for
    runs that did not record it."""
    counts = [[r[s].get("small_handshake_retrans") for r in reps] for s in ("off", "on")]
    return " / ".join("–" if None in c else str(sum(c)) for c in counts) + f" of {n_small(reps)}"


def buffer_pkts_of(cell_dir: Path) -> int | None:
    """The bottleneck's buffer in packets, as the cell's plan resolved it (None: no plan kept, or one
    that does not say)."""
    plan_file = cell_dir / "plan.json"
    return json.loads(plan_file.read_text()).get("bottleneck", {}).get("buffer_pkts") if plan_file.is_file() else None


def mean_queue_peak(reps: list[dict], side: str) -> float | None:
    """The most the bottleneck's queue held at once on @side ("off", "on"), mean over @reps; None
    where a run's kernel does not count it (no patches 0007 and 0008)."""
    peaks = [r[side].get("queue_peak_pkts") for r in reps]
    return None if None in peaks else statistics.fmean(peaks)


def queue_peaks(reps: list[dict]) -> str:
    """mean_queue_peak off / on, and of what buffer: "413 / 413 of 413"; – where it is None."""
    off, on = (mean_queue_peak(reps, s) for s in ("off", "on"))
    buffers = {r.get("buffer_pkts") for r in reps} - {None}
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


def n_small(reps: list[dict]) -> int:
    """Small flows per side over the repetitions."""
    return sum(r["off"]["small_count"] for r in reps)


#: The main table's quantities, one a column pair (ours, the paper's), the small flows first (Table 1 is about
#: them): a row's and the paper's key, and the digits.
MAIN_COLUMNS = (("small off (s)", "off_small", 2), ("small on (s)", "on_small", 2),
                ("small-flow improvement", "improvement_pct", None), ("large off (s)", "off_large", 1),
                ("large on (s)", "on_large", 1))
NO_PAPER = ("–",) * len(MAIN_COLUMNS)


def _paper_cells(p: dict) -> tuple[str, ...]:
    """The paper's cells of MAIN_COLUMNS, in the digits the paper prints."""
    return tuple(f"{p[key]}%" if digits is None else f"{p[key]:.{digits}f}" for _, key, digits in MAIN_COLUMNS)


def _main_row(head: str, ours: tuple[str, ...], paper: tuple[str, ...], sign: str) -> str:
    """A row of the main table: @head's cells, then each quantity's ours beside the paper's, then the verdict."""
    return f"| {head} | " + " | ".join(f"{o} | {q}" for o, q in zip(ours, paper)) + f" | {sign} |"


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


# What the headline counts apart (verdict.tally): each per-setting value is one of these.
LARGE, SMALL, IMPROVEMENT, STABILITY = ("the large flow's FCTs", "the small flows' FCTs",
                                        "the small flows' improvements", "the stability effect")
#: The Average rows and the 2 BDP means they imply: counted on a line of their own.
MEANS = "the Average rows and the 2 BDP means they imply"
GROUPS = (LARGE, SMALL, IMPROVEMENT, STABILITY, MEANS)

#: Table 1's values, by the reference file's field: what each is, its kind for the verdict, its short
#: name in a row's list, the ± of the paper's printed digits (large FCTs to 0.1 s, small to 0.01 s,
#: improvements in whole percent), and its group in the headline.
PAPER_FIELDS = {"off_large": ("large flow's FCT, {start} off", "fct", "large off", 0.05, LARGE),
                "off_small": ("small flows' mean FCT, {start} off", "fct", "small off", 0.005, SMALL),
                "on_large": ("large flow's FCT, {start} on", "fct", "large on", 0.05, LARGE),
                "on_small": ("small flows' mean FCT, {start} on", "fct", "small on", 0.005, SMALL),
                "improvement_pct": ("small-flow improvement", "improvement", "improvement", 0.5, IMPROVEMENT)}
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


def _ci(values: list[float]) -> tuple[float, float] | None:
    d = describe(values)
    return tuple(d["ci95"]) if d["ci95"] else None


def setting_comparisons(where: str, reps: list[dict], paper: dict, start: str) -> list[Comparison]:
    """The paper's five values of a setting beside ours, and the stability effect its two large-flow
    FCTs imply (the large flow's change with @start) beside our paired change.  The improvement: ours
    of the means, its CI over the repetitions' own improvements."""
    out = []
    for field, (what, kind, short, rounding, group) in PAPER_FIELDS.items():
        values = [FIELD_VALUES[field](r) for r in reps]
        ours = (1 - statistics.fmean(FIELD_VALUES["on_small"](r) for r in reps)
                / statistics.fmean(FIELD_VALUES["off_small"](r) for r in reps)) * 100 \
            if field == "improvement_pct" else statistics.fmean(values)
        out.append(Comparison(where, what.format(start=start), kind, ours, float(paper[field]), len(reps),
                              _ci(values), rounding=rounding, short=short, group=group))
    change, rounding = paper_change(paper)
    changes = [large_change_pct(r) for r in reps]
    out.append(Comparison(where, f"large flow's change with {start} (%)", "change", statistics.fmean(changes),
                          change, len(reps), _ci(changes), derived=True, rounding=rounding, short="stability",
                          group=STABILITY, unit=" points"))
    return out


def per_repetition_means(settings: list[list[dict]]) -> list[dict[str, float]]:
    """Over several settings' repetitions (@settings: each setting's list), one mean per k-th
    repetition up to the fewest any setting has: each FCT's mean over the settings, and the
    improvement of those means.  The settings differ, so a mean's spread is over repetitions, not
    over settings: what a CI on the paper's Average row measures."""
    out = []
    for i in range(min(len(reps) for reps in settings)):
        row = [reps[i] for reps in settings]
        means = {f: statistics.fmean(FIELD_VALUES[f](r) for r in row) for f in paper_bounds.FCT_FIELDS}
        out.append({**means, "improvement_pct": (1 - means["on_small"] / means["off_small"]) * 100})
    return out


def mean_comparisons(where: str, settings: list[list[dict]], paper: list[paper_bounds.PaperValue] | dict,
                     start: str) -> list[Comparison]:
    """The paper's mean over several settings (an Average row, or the 2 BDP mean it implies) beside
    ours over the same settings: the mean of the settings' means (the improvement of those means),
    its CI over the repetitions (per_repetition_means)."""
    per_setting = [{f: statistics.fmean(FIELD_VALUES[f](r) for r in reps) for f in paper_bounds.FCT_FIELDS}
                   for reps in settings]
    ours = {f: statistics.fmean(m[f] for m in per_setting) for f in paper_bounds.FCT_FIELDS}
    ours["improvement_pct"] = (1 - ours["on_small"] / ours["off_small"]) * 100
    per = per_repetition_means(settings)
    values = [(f, float(paper[f]), rounding, False) for f, (*_, rounding, _) in PAPER_FIELDS.items()] \
        if isinstance(paper, dict) else [(v.field, v.value, v.rounding, True) for v in paper]
    out = []
    for field, value, rounding, derived in values:
        what, kind, short, _, _ = PAPER_FIELDS[field]
        out.append(Comparison(where, what.format(start=start), kind, ours[field], value, len(per),
                              _ci([r[field] for r in per]), derived=derived, rounding=rounding, short=short,
                              group=MEANS))
    return out


def reproduced_cell(comparisons: list[Comparison]) -> str:
    """A row's record: how many of its paper values ours reproduce (reproduced_count), and the others with
    their outcome."""
    rest = [c for c in comparisons if not c.reproduced]
    words = {NOT_REPRODUCED: "not", NOT_DECIDED: "undecided"}
    return reproduced_count(comparisons) + (
        "; " + ", ".join(f"{c.short or c.what} {c.difference_text()} ({words[c.outcome]})" for c in rest) if rest else "")


def reproduced_count(comparisons: list[Comparison]) -> str:
    """A row's cell in the main table: how many of its paper values ours reproduce, one quantity (the others'
    outcomes are in the table of every value and the causes' list)."""
    return f"{sum(c.reproduced for c in comparisons)} of {len(comparisons)} reproduced"


def headline(comparisons: list[Comparison], n: int | None = None) -> list[str]:
    """The report's first lines: per group (GROUPS) its outcomes, then the rule; @n the repetitions
    when every setting has the same (at n = 1 the means decide, and the line says so)."""
    at = "" if n is None else (f" at n = {n}" + (" (one repetition: the means decide, no CI)" if n == 1 else ""))
    lines = [f"**Table 1's values under the verdict{at}:**", ""]
    lines += [f"- {group}: {tally_text(tally(mine))}" for group in GROUPS
              if (mine := [c for c in comparisons if c.group == group])]
    return lines + ["", f"The rule: {RULE}."]


def headline_counts(comparisons: list[Comparison]) -> dict[str, dict[str, int]]:
    """The headline as data: each group's tally (summary.json, the claims ledger)."""
    return {g: tally(mine) for g in GROUPS if (mine := [c for c in comparisons if c.group == g])}


def comparison_table(comparisons: list[Comparison]) -> str:
    """Every paper value beside ours, with the verdict on each."""
    lines = ["| setting | value | ours [95 % CI] | paper | band | difference | verdict |",
             "|---|---|---|---|---|---|---|"]
    for c in comparisons:
        # The band one digit finer than the values: its edges are what the CI is held to.
        fmt, edge = {"fct": (lambda v: f"{v:.2f} s", lambda v: f"{v:.3f} s"),
                     "change": (lambda v: f"{v:+.1f}%", lambda v: f"{v:+.2f}%")}.get(
            c.kind, (lambda v: f"{v:.0f}%", lambda v: f"{v:.1f}%"))
        paper = fmt(c.paper) + (" (implied)" if c.derived else "")
        ci = f" [{fmt(c.ci95[0])}, {fmt(c.ci95[1])}]" if c.has_ci else ""
        lo, hi = c.band
        lines.append(f"| {c.where} | {c.what} | {fmt(c.ours)}{ci} | {paper} | {edge(lo)} to {edge(hi)} | "
                     f"{c.difference_text()} | {c.verdict_text()} |")
    return "\n".join(lines)


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


def drops_raised(reps: list[dict]) -> str:
    """Whether the compared start raised the bottleneck's drops: the paired difference on - off."""
    d = describe([r["on"]["drops"] - r["off"]["drops"] for r in reps])
    if d["ci95"]:
        lo, hi = d["ci95"]
        if lo == hi == 0:
            return "no change"
        return "yes" if lo > 0 else ("no: fewer" if hi < 0 else "not significant")
    return "yes (n=1)" if d["mean"] > 0 else "no (n=1)"


def choices_of(cells: list[tuple]) -> paper_bounds.Choices | None:
    """Our unstated choices as the first done cell's plan records them."""
    for _, cdir in cells:
        plan_file = cdir / "plan.json"
        if plan_file.exists():
            return paper_bounds.Choices.of_plan(json.loads(plan_file.read_text()))
    return None


def unavailable_notes(unavailable: list, labels: dict[str, str]) -> list[str]:
    """A note per control and reason the plan could not run, not one per setting: "BBRv2 (8 settings:
    buffer 1BDP, 2BDP; large_rtt 25ms, 50ms, 100ms, 200ms): **unavailable** ... : the reason."."""
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    for u in unavailable:
        groups.setdefault((u.setting.get("large_cc", ""), u.reason), []).append(u.setting)
    notes = []
    for (cca, reason), settings in groups.items():
        axes = [a for a in dict.fromkeys(k for st in settings for k in st) if a != "large_cc"]
        values = "; ".join(f"{a} {', '.join(dict.fromkeys(st[a] for st in settings if a in st))}" for a in axes)
        where = f"{len(settings)} setting{'s' if len(settings) != 1 else ''}" + (f": {values}" if values else "")
        notes.append(f"- {labels.get(cca, cca)} ({where}): **unavailable**, not run and not substituted: {reason}.")
    return notes


def compared_name(plan: MatrixPlan) -> str:
    """What the report calls the start on the compared side: SUSS (any of its names), else its name
    (cubic_rapid, run in SUSS's place: Matrix.compared)."""
    on = plan.compare["on"]
    return "SUSS" if on in SUSS_CCAS else on


def table1(matrix_dir: Path, plan: MatrixPlan) -> tuple[str, dict]:
    ref = reference(plan)  # the paper's values belong to the paper's matrix only
    ref_rows = {(r["large_cc"], r["buffer"], r["large_rtt"]): r for r in ref.get("rows", [])}
    ref_avg = {r["large_cc"]: r for r in ref.get("averages", [])}
    labels = plan.labels
    beside = plan.paper_beside  # e.g. bbr3 beside the paper's BBRv2: another algorithm
    cells = current_cells(matrix_dir, plan)
    by_setting = cells_by_setting(plan, cells)
    walls = [cell_timing(cell, cdir) for cell, cdir in cells]
    order = [(c.setting["large_cc"], c.setting["buffer"], c.setting["large_rtt"]) for c in plan.cells]
    order = list(dict.fromkeys(order))
    rows, lines = [], []
    # Two tables of one row per setting: the FCTs, ours beside the paper's quantity by quantity, with the
    # verdict; then what each setting shows beyond them (the signs, drops, receive windows, fidelity).
    lines += ["| large CCA | buffer | minRTT | n | " + " | ".join(f"{name} | paper" for name, _, _ in MAIN_COLUMNS)
              + " | paper values reproduced |", "|---" * (5 + 2 * len(MAIN_COLUMNS)) + "|"]
    checks = [f"| large CCA | buffer | minRTT | small flows faster with {compared_name(plan)}? | "
              f"large flow within its CI? | large flow with {compared_name(plan)}: ours / paper | drops off / on | "
              f"{compared_name(plan)} raised drops? | queue's peak off / on (pkts) | small flows rwnd-limited off / on | "
              f"small flows with a SYN or SYN-ACK sent again off / on | runs passing fidelity |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    start = compared_name(plan)
    comparisons: list[Comparison] = []
    # Each comparison with the setting it is about, for the causes tried (analysis.causes).
    about: list[tuple[dict[str, str], Comparison]] = []
    per_cca: dict[str, list[dict]] = {}
    reps_of: dict[tuple[str, str, str], list[dict]] = {}
    for key in order:
        reps = reps_of[key] = [r for r in by_setting.get(key, []) if "off" in r and "on" in r]
        cca, buf, rtt = key
        label = labels.get(cca, cca)
        if not reps:
            lines.append(_main_row(f"{label} | {buf} | {rtt} | 0", ("not run yet",) + ("",) * (len(MAIN_COLUMNS) - 1),
                                   ("",) * len(MAIN_COLUMNS), ""))
            continue
        vals = {f"{side}_{what}": [r[side][f"{what}_fct_s" if what == "large" else "small_mean_fct_s"]
                                   for r in reps]
                for side in ("off", "on") for what in ("large", "small")}
        d = {k: describe(v) for k, v in vals.items()}
        impr = (1 - d["on_small"]["mean"] / d["off_small"]["mean"]) * 100
        # Its 95 % CI over the repetitions' own improvements, as the verdict judges it.
        impr_ci = _ci([FIELD_VALUES["improvement_pct"](r) for r in reps])
        impr_text = f"{impr:.0f}%" + (f" [{impr_ci[0]:.0f}%, {impr_ci[1]:.0f}%]" if impr_ci else "")
        # The large flow's paired change with the start (%), what the claims ledger holds each setting to
        # (table1_large_worst_setting).
        changes = [large_change_pct(r) for r in reps]
        claims = _claims(vals["off_small"], vals["on_small"], vals["off_large"], vals["on_large"])
        paper_cca = beside[cca]["column"] if cca in beside else cca
        p = ref_rows.get((paper_cca, buf, rtt))
        on_grid = on_paper_grid(plan, {"large_cc": cca, "buffer": buf, "large_rtt": rtt})
        row_cmp: list[Comparison] = []
        if p:
            paper = _paper_cells(p)
            change_text = f"{paper_change(p)[0]:+.1f}%"
            if cca in beside:
                sign = shown = f"not judged: beside {labels.get(paper_cca, paper_cca)}, another algorithm"
            else:
                row_cmp = setting_comparisons(f"{label} {buf} {rtt}", reps, p, start)
                comparisons += row_cmp
                about += [({"large_cc": cca, "buffer": buf, "large_rtt": rtt}, c) for c in row_cmp]
                sign = reproduced_cell(row_cmp)
                shown = reproduced_count(row_cmp)
        else:
            sign = shown = "no paper value" if on_grid else "no paper value (beside the paper's grid)"
            paper, change_text = NO_PAPER, "–"
        fid = sum(r[s]["fidelity_ok"] for r in reps for s in ("off", "on"))
        drops = " / ".join(f"{statistics.fmean(r[s]['drops'] for r in reps):.0f}" for s in ("off", "on"))
        rwnd = " / ".join(f"{sum(r[s]['small_rwnd_limited'] for r in reps)}" for s in ("off", "on"))
        row = {"large_cc": cca, "buffer": buf, "large_rtt": rtt, "n": len(reps), "on_paper_grid": on_grid,
               **{k: without_values(v) for k, v in d.items()}, "improvement_pct": round(impr, 2),
               "improvement_ci95": [round(x, 2) for x in impr_ci] if impr_ci else None, "claims": claims,
               "large_change": {"mean": statistics.fmean(changes), "ci95": _ci(changes)},
               "paper": p, "paper_values_reproduced": sign, "runs_passing_fidelity": fid, "runs": 2 * len(reps),
               "comparisons": [c.record() for c in row_cmp], "drops_raised": drops_raised(reps),
               **{f"drops_{s}": statistics.fmean(r[s]["drops"] for r in reps) for s in ("off", "on")},
               **{f"queue_peak_pkts_{s}": mean_queue_peak(reps, s) for s in ("off", "on")},
               **{f"small_handshake_retrans_{s}": None if None in (v := [r[s].get("small_handshake_retrans")
                                                                         for r in reps]) else sum(v)
                  for s in ("off", "on")},
               "buffer_pkts": reps[0].get("buffer_pkts")}
        rows.append(row)
        per_cca.setdefault(cca, []).append(row)
        ours = {"improvement_pct": impr_text, **{key: fmt_mean_ci(d[key], digits)
                                                  for _, key, digits in MAIN_COLUMNS if digits is not None}}
        lines.append(_main_row(f"{label} | {buf} | {rtt} | {len(reps)}", tuple(ours[key] for _, key, _ in MAIN_COLUMNS),
                               paper, shown))
        checks.append(f"| {label} | {buf} | {rtt} | {claims['small_faster']} | {claims['large_within_ci']} | "
                      f"{claims['large_change_pct']:+.1f}% / {change_text} | {drops} | {row['drops_raised']} | "
                      f"{queue_peaks(reps)} | {rwnd} of {n_small(reps)} | {handshakes(reps)} | {fid}/{2 * len(reps)} |")
    for cca, every in per_cca.items():
        # The average is the paper's: over its grid only (cells beside it have no paper value).
        rs = [r for r in every if r["on_paper_grid"]]
        if not rs:
            continue
        m = {k: statistics.fmean(r[k]["mean"] for r in rs) for k in ("off_large", "off_small", "on_large", "on_small")}
        impr = (1 - m["on_small"] / m["off_small"]) * 100
        paper_cca = beside[cca]["column"] if cca in beside else cca
        p = ref_avg.get(paper_cca)
        paper = _paper_cells(p) if p else NO_PAPER
        bufs = sorted({r["buffer"] for r in rs})
        grid = {(b, t) for b in (plan.axis_values or {}).get("buffer", []) for t in (plan.axis_values or {}).get("large_rtt", [])}
        whole = bool(grid) and grid <= {(r["buffer"], r["large_rtt"]) for r in rs}
        label = labels.get(cca, cca)
        if not p:
            sign = "no paper value"
        elif cca in beside:
            sign = f"not judged: beside {labels.get(paper_cca, paper_cca)}, another algorithm"
        elif not whole:
            sign = "not judged: the paper's Average is over both buffers and four RTTs, not all run here"
        else:
            avg_cmp = mean_comparisons(f"{label} Average", [reps_of[cca, r["buffer"], r["large_rtt"]] for r in rs],
                                       p, start)
            comparisons += avg_cmp
            about += [({"large_cc": cca, "buffer": "average", "large_rtt": "average"}, c) for c in avg_cmp]
            sign = reproduced_count(avg_cmp)
        ours = {"improvement_pct": f"{impr:.0f}%", **{key: f"{m[key]:.{digits}f}" for _, key, digits in MAIN_COLUMNS
                                                      if digits is not None}}
        lines.append(_main_row(f"{label} | average ({', '.join(bufs)}) | {len(rs)} settings | {sum(r['n'] for r in rs)}",
                               tuple(ours[key] for _, key, _ in MAIN_COLUMNS), paper, sign))
        # The 2 BDP mean the paper's Average implies, beside ours over the four 2 BDP settings.
        implied = [v for v in paper_bounds.implied_2bdp(ref) if v.cca == paper_cca]
        two = [r for r in rs if r["buffer"] == "2BDP"]
        rtts = set((plan.axis_values or {}).get("large_rtt", []))
        if implied and cca not in beside and rtts and rtts <= {r["large_rtt"] for r in two}:
            two_cmp = mean_comparisons(f"{label} 2BDP mean", [reps_of[cca, r["buffer"], r["large_rtt"]] for r in two],
                                       implied, start)
            comparisons += two_cmp
            about += [({"large_cc": cca, "buffer": "2BDP", "large_rtt": "mean"}, c) for c in two_cmp]
            mt = {f: statistics.fmean(r[f]["mean"] for r in two) for f in paper_bounds.FCT_FIELDS}
            pv = {v.field: v.value for v in implied}
            lines.append(f"| {label} | 2BDP (mean of {len(two)}) | {len(two)} settings | {sum(r['n'] for r in two)} | "
                         f"{mt['off_large']:.1f} / {mt['off_small']:.2f} | "
                         f"{pv['off_large']:.1f} / {pv['off_small']:.2f} (implied) | "
                         f"{mt['on_large']:.1f} / {mt['on_small']:.2f} | "
                         f"{pv['on_large']:.1f} / {pv['on_small']:.2f} (implied) | "
                         f"{(1 - mt['on_small'] / mt['off_small']) * 100:.0f}% | {pv['improvement_pct']:.0f}% (implied) | "
                         f"{reproduced_count(two_cmp)} |")
    notes = unavailable_notes(plan.unavailable, labels)
    notes += [f"- {labels.get(cca, cca)} ran `{plan.runs_as.get(cca, cca)}`"
              + (f", {CC_LABELS[plan.runs_as.get(cca, cca)]}" if plan.runs_as.get(cca, cca) in CC_LABELS else "")
              + "." for cca in per_cca]
    notes += [f"- {labels.get(cca, cca)} is shown beside the paper's {labels.get(b['column'], b['column'])} values: "
              f"{b['note']}" for cca, b in beside.items() if cca in per_cca]
    if compared_name(plan) != "SUSS":
        notes.append(f"- On = {plan.compare['on']}, in SUSS's place: the paper's on and improvement columns "
                     f"are SUSS's (the paper compared SUSS with HyStart), beside ours for reference; the sign "
                     f"column compares ours with SUSS's.")
    off_grid = [r for r in rows if not r["on_paper_grid"]]
    if off_grid:
        notes.append(f"- {len(off_grid)} setting(s) beside the paper's grid (a value the matrix file does not list): "
                     f"no paper value, and left out of the averages.")
    order = {cca: order_effect([r for (c, _, _), reps in by_setting.items() if c == cca for r in reps])
             for cca in per_cca}
    for cca, effect in order.items():
        if effect["difference_pts"] is not None:
            notes.append(f"- {labels.get(cca, cca)}, the order of the arms: the small flows' improvement "
                         f"{effect['off_first_pct']:.1f}% where SUSS off ran first (n={effect['n_off_first']}) and "
                         f"{effect['on_first_pct']:.1f}% where it ran second (n={effect['n_on_first']}): "
                         f"{effect['difference_pts']:+.1f} points, over every setting shown.")
    notes.append(agreement_line([r[s]["capture"] for reps in by_setting.values() for r in reps for s in ("off", "on")
                                 if s in r], "outside the sample of cells: the matrix file's capture_check_every and "
                                 "capture_check_per_setting"))
    choices = choices_of(cells)
    found = paper_bounds.bounds(ref, choices) if choices and ref else []
    bound_lines = [f"- {b.line(labels)}" for b in found]
    ns = {len(reps) for reps in reps_of.values() if reps}
    # The paper's claims are judged by their ledger's tests (the report's answer line, matrix_report);
    # the per-setting checks (small flows faster? large flow inside its CI?) stay in the table, a check
    # each, never a claim's verdict.
    verdict = [*headline(comparisons, ns.pop() if len(ns) == 1 else None)] if comparisons else \
        ["No paper value to judge here (none printed or implied for these settings)."]
    overhead = overhead_table(walls)
    versions = sorted({v for reps in by_setting.values() for r in reps for v in r.get("on", {}).get("suss_versions", [])})
    if len(checks) > 2:
        lines += ["", "What each setting shows besides its FCTs: the signs the paper's words claim, the large flow's "
                      "change beside the paper's, the drops at the bottleneck, the most its queue held at once "
                      "(counted by the qdisc, mean over the repetitions, of the buffer in packets), the small flows' "
                      "receive windows, their handshakes' losses (a SYN or SYN-ACK sent again, as the kernel counts "
                      "it: a second or more inside the client's FCT) and the runs' fidelity.", "", *checks]
    return "\n".join(lines), {"rows": rows, "unavailable": [u.model_dump() for u in plan.unavailable], "notes": notes,
                              "overhead_md": overhead, "cells_done": len(cells), "cells_planned": len(plan.cells),
                              "order_effect": order,
                              "suss_versions": versions,
                              "verdict": verdict, "verdict_rule": {**RULE_RECORD, "text": RULE},
                              "comparisons": [c.record() for c in comparisons],
                              "comparisons_md": comparison_table(comparisons) if comparisons else "",
                              "causes_md": causes_md(load_causes(plan.reference or plan.matrix), about),
                              "paper_outcomes": tally(comparisons), "headline": headline_counts(comparisons),
                              "bounds": bound_lines,
                              "ruled_out": [b.parameter for b in found if b.ruled_out],
                              "paper_averages": {c: r["improvement_pct"] for c, r in ref_avg.items()}}
