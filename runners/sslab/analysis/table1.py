"""E7, the SUSS paper's Table 1: per setting, the large flow's FCT and the small flows' mean FCT,
SUSS (or the start compared in its place) off and on, the improvement, 95% CIs over repetitions, claim checks, and the paper's values
beside ours (results/reference/table1.yaml)."""

from __future__ import annotations

import statistics
from pathlib import Path

import yaml

from .. import paths
from ..ccas import SUSS_CCAS
from ..plan_record import MatrixPlan
from .capturecheck import agreement_line
from .fidelity import run_passes
from .archive import cell_timing, check_controls, current_cells, overhead_table, runs_of, side_of
from .stats import without_values, fmt_mean_ci, describe

REFERENCE_DIR = paths.REPO_ROOT / "results" / "reference"


def on_paper_grid(plan: MatrixPlan, setting: dict) -> bool:
    """Whether every value of @setting is one of the matrix file's own (the paper's grid).
    Plans from before axis values were recorded hold only the file's values."""
    values = plan.axis_values
    return values is None or all(v in values.get(a, [v]) for a, v in setting.items())


def table1_cell(plan: MatrixPlan, cell_dir: Path) -> dict:
    """One cell's numbers: large FCT and mean small FCT for off and on."""
    out = {}
    for run, _ in runs_of(cell_dir):
        check_controls(run, cell_dir)
        flows = run["flows"]
        out[side_of(plan, run)] = {
            "large_fct_s": flows[0]["fct_s"],
            "small_mean_fct_s": statistics.fmean(f["fct_s"] for f in flows[1:]),
            "small_fct_s": [f["fct_s"] for f in flows[1:]],
            "fidelity_ok": run_passes(run),
            # what tshark's reading of the capture said (the report's line on captures)
            "capture": {"tag": run["tag"], "pcap": run.get("pcap"), "capture_check": run.get("capture_check")},
            "drops": run["bottleneck"]["drops"],
            # small flows whose sender was held by the receiver's advertised window (per-ACK trace)
            "small_rwnd_limited": sum(1 for f in flows[1:] if f.get("receiver_limited_acks")),
            "small_count": len(flows) - 1,
            "suss_versions": sorted({f["suss_version"] for f in flows if f.get("suss_version") is not None}),
        }
    return out


def n_small(reps: list[dict]) -> int:
    """Small flows per side over the repetitions."""
    return sum(r["off"]["small_count"] for r in reps)


def _paper_cells(p: dict) -> tuple[str, str, str]:
    """The paper's off, on and improvement cells, in the digits the paper prints."""
    return (f"{p['off_large']:.1f} / {p['off_small']:.2f}", f"{p['on_large']:.1f} / {p['on_small']:.2f}",
            f"{p['improvement_pct']}%")


def _reference(name: str) -> dict:
    p = REFERENCE_DIR / f"{name}.yaml"
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


def compared_name(plan: MatrixPlan) -> str:
    """What the report calls the start on the compared side: SUSS (any of its names), else its name
    (cubic_rapid, run in SUSS's place: Matrix.compared)."""
    on = plan.compare["on"]
    return "SUSS" if on in SUSS_CCAS else on


def table1(matrix_dir: Path, plan: MatrixPlan) -> tuple[str, dict]:
    ref = _reference(plan.matrix)  # the paper's values belong to the paper's matrix only
    ref_rows = {(r["large_cc"], r["buffer"], r["large_rtt"]): r for r in ref.get("rows", [])}
    ref_avg = {r["large_cc"]: r for r in ref.get("averages", [])}
    labels = plan.labels
    beside = plan.paper_beside  # e.g. bbr3 beside the paper's BBRv2: another algorithm
    cells = current_cells(matrix_dir, plan)
    by_setting: dict[tuple, list[dict]] = {}
    walls = []
    for cell, cdir in cells:
        s = cell.setting
        key = (s["large_cc"], s["buffer"], s["large_rtt"])
        by_setting.setdefault(key, []).append(table1_cell(plan, cdir))
        walls.append(cell_timing(cell, cdir))
    order = [(c.setting["large_cc"], c.setting["buffer"], c.setting["large_rtt"]) for c in plan.cells]
    order = list(dict.fromkeys(order))
    rows, lines = [], []
    lines += ["| large CCA | buffer | minRTT | n | off: large / small (s) | on: large / small (s) | "
              "small-flow improvement | paper off: large / small | paper on: large / small | paper improvement | "
              f"small flows faster with {compared_name(plan)}? | large flow within its CI? | sign vs paper | "
              "drops off / on | small flows rwnd-limited off / on | runs passing fidelity |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    per_cca: dict[str, list[dict]] = {}
    for key in order:
        reps = [r for r in by_setting.get(key, []) if "off" in r and "on" in r]
        cca, buf, rtt = key
        label = labels.get(cca, cca)
        if not reps:
            lines.append(f"| {label} | {buf} | {rtt} | 0 | not run yet | | | | | | | | | | | |")
            continue
        vals = {f"{side}_{what}": [r[side][f"{what}_fct_s" if what == "large" else "small_mean_fct_s"]
                                   for r in reps]
                for side in ("off", "on") for what in ("large", "small")}
        d = {k: describe(v) for k, v in vals.items()}
        impr = (1 - d["on_small"]["mean"] / d["off_small"]["mean"]) * 100
        claims = _claims(vals["off_small"], vals["on_small"], vals["off_large"], vals["on_large"])
        paper_cca = beside[cca]["column"] if cca in beside else cca
        p = ref_rows.get((paper_cca, buf, rtt))
        on_grid = on_paper_grid(plan, {"large_cc": cca, "buffer": buf, "large_rtt": rtt})
        if p:
            sign = "agrees" if (impr > 0) == (p["improvement_pct"] > 0) else "DISAGREES"
            if cca in beside:
                sign += f" (beside {labels.get(paper_cca, paper_cca)}: another algorithm)"
            paper = _paper_cells(p)
        else:
            sign = "no paper value" if on_grid else "no paper value (beside the paper's grid)"
            paper = ("–", "–", "–")
        fid = sum(r[s]["fidelity_ok"] for r in reps for s in ("off", "on"))
        drops = " / ".join(f"{statistics.fmean(r[s]['drops'] for r in reps):.0f}" for s in ("off", "on"))
        rwnd = " / ".join(f"{sum(r[s]['small_rwnd_limited'] for r in reps)}" for s in ("off", "on"))
        row = {"large_cc": cca, "buffer": buf, "large_rtt": rtt, "n": len(reps), "on_paper_grid": on_grid,
               **{k: without_values(v) for k, v in d.items()}, "improvement_pct": round(impr, 2), "claims": claims,
               "paper": p, "sign_vs_paper": sign, "runs_passing_fidelity": fid, "runs": 2 * len(reps),
               **{f"drops_{s}": statistics.fmean(r[s]["drops"] for r in reps) for s in ("off", "on")}}
        rows.append(row)
        per_cca.setdefault(cca, []).append(row)
        lines.append(f"| {label} | {buf} | {rtt} | {len(reps)} | {fmt_mean_ci(d['off_large'], 1)} / {fmt_mean_ci(d['off_small'], 2)} | "
                     f"{fmt_mean_ci(d['on_large'], 1)} / {fmt_mean_ci(d['on_small'], 2)} | {impr:.0f}% | {paper[0]} | {paper[1]} | "
                     f"{paper[2]} | {claims['small_faster']} | {claims['large_within_ci']} | {sign} | {drops} | "
                     f"{rwnd} of {n_small(reps)} | "
                     f"{fid}/{2 * len(reps)} |")
    for cca, every in per_cca.items():
        # The average is the paper's: over its grid only (cells beside it have no paper value).
        rs = [r for r in every if r["on_paper_grid"]]
        if not rs:
            continue
        m = {k: statistics.fmean(r[k]["mean"] for r in rs) for k in ("off_large", "off_small", "on_large", "on_small")}
        impr = (1 - m["on_small"] / m["off_small"]) * 100
        paper_cca = beside[cca]["column"] if cca in beside else cca
        p = ref_avg.get(paper_cca)
        paper = _paper_cells(p) if p else ("–", "–", "–")
        sign = ("agrees" if (impr > 0) == (p["improvement_pct"] > 0) else "DISAGREES") if p else "no paper value"
        if p and cca in beside:
            sign += f" (beside {labels.get(paper_cca, paper_cca)}: another algorithm)"
        bufs = sorted({r["buffer"] for r in rs})
        lines.append(f"| {labels.get(cca, cca)} | average ({', '.join(bufs)}) | {len(rs)} settings | "
                     f"{sum(r['n'] for r in rs)} | {m['off_large']:.1f} / {m['off_small']:.2f} | "
                     f"{m['on_large']:.1f} / {m['on_small']:.2f} | {impr:.0f}% | {paper[0]} | {paper[1]} | "
                     f"{paper[2]} | | | {sign} | | | |")
    notes = [f"- {labels.get(u.setting.get('large_cc'), u.setting.get('large_cc'))} "
             f"({', '.join(f'{k}={v}' for k, v in u.setting.items())}): **unavailable**, not run and not "
             f"substituted: {u.reason}." for u in plan.unavailable]
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
    notes.append(agreement_line([r[s]["capture"] for reps in by_setting.values() for r in reps for s in ("off", "on")
                                 if s in r], "outside the sample of cells: the matrix file's capture_check_every"))
    overhead = overhead_table(walls)
    versions = sorted({v for reps in by_setting.values() for r in reps for v in r.get("on", {}).get("suss_versions", [])})
    return "\n".join(lines), {"rows": rows, "unavailable": [u.model_dump() for u in plan.unavailable], "notes": notes,
                              "overhead_md": overhead, "cells_done": len(cells), "cells_planned": len(plan.cells),
                              "suss_versions": versions,
                              "paper_averages": {c: r["improvement_pct"] for c, r in ref_avg.items()}}
