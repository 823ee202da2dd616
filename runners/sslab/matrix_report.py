"""Matrix reports, from a matrix directory's archive alone.

    table1    E7: per setting, the large flow's FCT and the mean FCT of the
              small flows, SUSS off and on, the improvement, 95% CIs over
              repetitions, claim checks, and the paper's values beside ours
              (results/reference/table1.yaml).
    fairness  E6: Jain's index F of goodput over time, SUSS off and on; the
              time F takes to return to 0.95 after the fifth flow starts.

Inputs are the cells' run.json files and compressed pcaps; outputs go to a
new reports/<stamp>/ directory.  The tables are a pure function of the
archive (no clock, no host facts), so `sslab matrix report DIR` rebuilds
them byte for byte.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import yaml

from . import analysis, paths
from .analysis import describe
from .matrix import current_cells, latest_plan

REFERENCE_DIR = paths.REPO_ROOT / "results" / "reference"
#: Jain's index is taken over goodput in windows of this many seconds.
JAIN_WINDOW_S = 1.0
#: "Fair again": F at or above this ...
JAIN_FAIR = 0.95
#: ... for this many consecutive windows (one window above 0.95 is noise in a CUBIC sawtooth).
JAIN_HOLD_WINDOWS = 5


def _runs_of(cell_dir: Path) -> list[tuple[dict, Path]]:
    out = cell_dir / "job" / "out"
    index = json.loads((out / "runs.json").read_text())
    return [(json.loads((out / "runs" / e["tag"] / "run.json").read_text()), out / "runs" / e["tag"])
            for e in index]


def _side(plan: dict, run: dict) -> str:
    """'off' or 'on': which side of the comparison a run is."""
    cmp = plan["compare"]
    v = run["run"]["params"][cmp["param"]]
    if v == cmp["off"]:
        return "off"
    if v == cmp["on"]:
        return "on"
    raise ValueError(f"run {run['tag']}: {cmp['param']}={v} is neither side of the comparison")


def _pm(d: dict, digits: int) -> str:
    """mean ±half-width of the 95% CI (just the mean when n = 1)."""
    if not d or not d["n"]:
        return "–"
    if d["ci95"]:
        half = (d["ci95"][1] - d["ci95"][0]) / 2
        return f"{d['mean']:.{digits}f} ±{half:.{digits}f}"
    return f"{d['mean']:.{digits}f}"


def _clean(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "values"}


# --------------------------------------------------------------------------
# E7: Table 1
# --------------------------------------------------------------------------


def table1_cell(plan: dict, cell_dir: Path) -> dict:
    """One cell's numbers: large FCT and mean small FCT for off and on."""
    out = {}
    for run, _ in _runs_of(cell_dir):
        flows = run["flows"]
        for f in flows:
            if f["cc_used"] != f["cc"]:
                raise ValueError(f"{cell_dir}: flow on port {f['port']} asked for {f['cc']} but ran {f['cc_used']}")
        out[_side(plan, run)] = {
            "large_fct_s": flows[0]["fct_s"],
            "small_mean_fct_s": statistics.fmean(f["fct_s"] for f in flows[1:]),
            "small_fct_s": [f["fct_s"] for f in flows[1:]],
            "fidelity_ok": bool(run["fidelity"]["base_rtt_ok"] and run["fidelity"]["rate_ok"]),
            "drops": run["bottleneck"]["drops"],
            # small flows whose sender was held by the receiver's advertised window (per-ACK trace)
            "small_rwnd_limited": sum(1 for f in flows[1:] if f.get("receiver_limited_acks")),
            "small_count": len(flows) - 1,
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
    return {"small_faster": small, "large_within_ci": large, "small_diff_s": _clean(dd),
            "large_change_pct": round(change, 2)}


def table1(matrix_dir: Path, plan: dict) -> tuple[str, dict]:
    ref = _reference(plan["matrix"])  # the paper's values belong to the paper's matrix only
    ref_rows = {(r["large_cc"], r["buffer"], r["large_rtt"]): r for r in ref.get("rows", [])}
    ref_avg = {r["large_cc"]: r for r in ref.get("averages", [])}
    labels = plan.get("labels", {})
    cells = current_cells(matrix_dir, plan)
    by_setting: dict[tuple, list[dict]] = {}
    walls = []
    for cell, cdir in cells:
        s = cell["setting"]
        key = (s["large_cc"], s["buffer"], s["large_rtt"])
        by_setting.setdefault(key, []).append(table1_cell(plan, cdir))
        walls.append(cell_timing(cell, cdir))
    order = [(c["setting"]["large_cc"], c["setting"]["buffer"], c["setting"]["large_rtt"])
             for c in plan["cells"]]
    order = list(dict.fromkeys(order))
    rows, lines = [], []
    lines += ["| large CCA | buffer | minRTT | n | off: large / small (s) | on: large / small (s) | "
              "small-flow improvement | paper off: large / small | paper on: large / small | paper improvement | "
              "small flows faster with SUSS? | large flow within its CI? | sign vs paper | "
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
        p = ref_rows.get(key)
        if p:
            sign = "agrees" if (impr > 0) == (p["improvement_pct"] > 0) else "DISAGREES"
            paper = _paper_cells(p)
        else:
            sign, paper = "no paper value", ("–", "–", "–")
        fid = sum(r[s]["fidelity_ok"] for r in reps for s in ("off", "on"))
        drops = " / ".join(f"{statistics.fmean(r[s]['drops'] for r in reps):.0f}" for s in ("off", "on"))
        rwnd = " / ".join(f"{sum(r[s]['small_rwnd_limited'] for r in reps)}" for s in ("off", "on"))
        row = {"large_cc": cca, "buffer": buf, "large_rtt": rtt, "n": len(reps),
               **{k: _clean(v) for k, v in d.items()}, "improvement_pct": round(impr, 2), "claims": claims,
               "paper": p, "sign_vs_paper": sign, "runs_passing_fidelity": fid, "runs": 2 * len(reps)}
        rows.append(row)
        per_cca.setdefault(cca, []).append(row)
        lines.append(f"| {label} | {buf} | {rtt} | {len(reps)} | {_pm(d['off_large'], 1)} / {_pm(d['off_small'], 2)} | "
                     f"{_pm(d['on_large'], 1)} / {_pm(d['on_small'], 2)} | {impr:.0f}% | {paper[0]} | {paper[1]} | "
                     f"{paper[2]} | {claims['small_faster']} | {claims['large_within_ci']} | {sign} | {drops} | "
                     f"{rwnd} of {n_small(reps)} | "
                     f"{fid}/{2 * len(reps)} |")
    for cca, rs in per_cca.items():
        m = {k: statistics.fmean(r[k]["mean"] for r in rs) for k in ("off_large", "off_small", "on_large", "on_small")}
        impr = (1 - m["on_small"] / m["off_small"]) * 100
        p = ref_avg.get(cca)
        paper = _paper_cells(p) if p else ("–", "–", "–")
        sign = ("agrees" if (impr > 0) == (p["improvement_pct"] > 0) else "DISAGREES") if p else "no paper value"
        bufs = sorted({r["buffer"] for r in rs})
        lines.append(f"| {labels.get(cca, cca)} | average ({', '.join(bufs)}) | {len(rs)} settings | "
                     f"{sum(r['n'] for r in rs)} | {m['off_large']:.1f} / {m['off_small']:.2f} | "
                     f"{m['on_large']:.1f} / {m['on_small']:.2f} | {impr:.0f}% | {paper[0]} | {paper[1]} | "
                     f"{paper[2]} | | | {sign} | | | |")
    notes = [f"- {labels.get(u['setting'].get('large_cc'), u['setting'].get('large_cc'))} "
             f"({', '.join(f'{k}={v}' for k, v in u['setting'].items())}): **unavailable**, not run and not "
             f"substituted: {u['reason']}." for u in plan.get("unavailable", [])]
    overhead = _overhead_table(walls)
    return "\n".join(lines), {"rows": rows, "unavailable": plan.get("unavailable", []), "notes": notes,
                              "overhead_md": overhead, "cells_done": len(cells), "cells_planned": len(plan["cells"])}


def cell_timing(cell: dict, cell_dir: Path) -> tuple:
    """(name, rep, host, wall s, runs s, traffic s) of a finished cell.

    wall: the host's time for the whole cell (boot, fidelity checks, runs,
    analysis, archiving); runs: the guest's time inside run_case (servers,
    captures and trace read-out included); traffic: time on the wire, each
    run's first flow start to its last flow's last byte.
    """
    info = json.loads((cell_dir / "cell.json").read_text())
    wire = sum(max(f.get("started_s", 0.0) + f["fct_s"] for f in run["flows"]) for run, _ in _runs_of(cell_dir))
    return cell["name"], cell["rep"], info["host"], info["wall_s"], info["traffic_s"], wire


def _overhead_table(walls: list[tuple]) -> str:
    if not walls:
        return ""
    lines = ["| cell | rep | host | wall (s) | runs in the guest (s) | traffic on the wire (s) | overhead: wall − traffic (s) | wall / traffic |",
             "|---|---|---|---|---|---|---|---|"]
    for name, rep, host, wall, runs, wire in walls:
        lines.append(f"| {name} | {rep} | {host} | {wall:.0f} | {runs:.0f} | {wire:.0f} | {wall - wire:.0f} | "
                     f"{wall / wire:.2f} |")
    tw, tr, tt = (sum(w[i] for w in walls) for i in (3, 4, 5))
    lines.append(f"| all {len(walls)} cells | | | {tw:.0f} | {tr:.0f} | {tt:.0f} | {tw - tt:.0f} | {tw / tt:.2f} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# E6: fairness
# --------------------------------------------------------------------------


def jain(xs: list[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 when all are equal."""
    n = len(xs)
    sq = sum(x * x for x in xs)
    if n == 0 or sq == 0:
        return math.nan
    return sum(xs) ** 2 / (n * sq)


def _bytes_at(series: list, t: float) -> float:
    """Bytes received by time @t, interpolated between the client's samples."""
    if t <= series[0][0]:
        return 0.0
    for (t0, b0), (t1, b1) in zip(series, series[1:]):
        if t <= t1:
            return b0 + (b1 - b0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return float(series[-1][1])


def jain_series(run: dict, run_dir: Path, window_s: float = JAIN_WINDOW_S) -> dict:
    """F over time for one run.

    Goodput per flow and window comes from the client's received-bytes
    series (run.json, rx_series; time 0 = when the first flow was due), or,
    for runs recorded without it, from the bottleneck capture (time 0 = the
    first flow's SYN).  A flow takes part in a window when it had connected
    before the window began and was still receiving after it ended.
    """
    ports = [f["port"] for f in run["flows"]]
    if all(f.get("rx_series") for f in run["flows"]):
        series = {f["port"]: f["rx_series"] for f in run["flows"]}
        starts = {p: series[p][0][0] for p in ports}
        ends = {p: series[p][-1][0] for p in ports}

        def goodput(p: int, lo: float, hi: float) -> float:
            return _bytes_at(series[p], hi) - _bytes_at(series[p], lo)
        offset, source = 0.0, "client"
    else:
        views = analysis.analyse_pcap_ports(run_dir / run["pcap"], ports, bin_s=window_s, absolute_t0=0.0)
        t0 = views[ports[0]].syn_ts
        starts = {p: views[p].syn_ts - t0 for p in ports}
        ends = {p: views[p].last_new_data_ts - t0 for p in ports}
        # The capture's bins are on absolute capture time; t0 sits this far into its bin.
        base_bin = int(math.floor(t0 / window_s))
        offset = t0 - base_bin * window_s
        binned = {p: {b - base_bin: v for b, v in views[p].new_bytes_by_bin.items()} for p in ports}

        def goodput(p: int, lo: float, hi: float) -> float:
            return binned[p].get(int(round((lo + offset) / window_s)), 0)
        source = "pcap"
    n_bins = int(max(ends.values()) / window_s) + 1
    t, f, n = [], [], []
    for b in range(n_bins):
        lo, hi = b * window_s - offset, (b + 1) * window_s - offset
        active = [p for p in ports if starts[p] <= lo and ends[p] >= hi]
        if not active:
            continue
        t.append(round(hi, 3))
        f.append(jain([goodput(p, lo, hi) * 8 / window_s / 1e6 for p in active]))
        n.append(len(active))
    return {"t": t, "F": f, "n": n, "starts": starts, "ends": ends, "source": source}


def recovery(series: dict, start: float) -> dict:
    """From @start (the last flow's SYN): the first window that begins a run of
    JAIN_HOLD_WINDOWS windows with F >= JAIN_FAIR (None if none), F's minimum
    after @start, and F's mean over the 10 s before @start."""
    pts = [(t, f, n) for t, f, n in zip(series["t"], series["F"], series["n"])]
    after = [(t, f) for t, f, n in pts if t - JAIN_WINDOW_S >= start and n == max(series["n"])]
    before = [f for t, f, _ in pts if start - 10 <= t - JAIN_WINDOW_S and t <= start]
    rec = None
    for i in range(len(after) - JAIN_HOLD_WINDOWS + 1):
        if all(f >= JAIN_FAIR for _, f in after[i:i + JAIN_HOLD_WINDOWS]):
            rec = after[i][0] - start
            break
    return {"recovery_s": None if rec is None else round(rec, 2),
            "observed_s": round(after[-1][0] - start, 2) if after else 0.0,
            "min_F_after": round(min((f for _, f in after), default=math.nan), 4),
            "mean_F_before": round(statistics.fmean(before), 4) if before else None}


def fairness(matrix_dir: Path, plan: dict, dest: Path) -> tuple[str, dict]:
    cells = current_cells(matrix_dir, plan)
    results = []
    series_by_setting: dict[tuple, list] = {}
    for cell, cdir in cells:
        s = cell["setting"]
        for run, rdir in _runs_of(cdir):
            side = _side(plan, run)
            ser = jain_series(run, rdir)
            last = max(ser["starts"].values())
            rec = recovery(ser, last)
            results.append({"buffer": s["buffer"], "rtt": s["rtt"], "rep": cell["rep"], "side": side,
                            "fifth_start_s": round(last, 3), **rec, "goodput_source": ser["source"],
                            "pcap_dropped_by_kernel": run.get("pcap_dropped_by_kernel"),
                            "fidelity_ok": bool(run["fidelity"]["base_rtt_ok"] and run["fidelity"]["rate_ok"])})
            series_by_setting.setdefault((s["buffer"], s["rtt"]), []).append((side, cell["rep"], ser, last))
    order = list(dict.fromkeys((c["setting"]["buffer"], c["setting"]["rtt"]) for c in plan["cells"]))
    lines = ["| buffer | minRTT | n | F before the fifth flow (10 s), off / on | min F after, off / on | "
             "time to F ≥ 0.95 (s), off | on | on − off (s) |", "|---|---|---|---|---|---|---|---|"]

    def fmt_rec(vals: list, observed: list) -> str:
        got = [v for v in vals if v is not None]
        miss = len(vals) - len(got)
        text = _pm(describe(got), 1) if got else ""
        if miss:
            text += f"{' + ' if got else ''}{miss}× not within {min(observed):.0f} s"
        return text

    summary_rows = []
    for key in order:
        rs = [r for r in results if (r["buffer"], r["rtt"]) == key]
        if not rs:
            lines.append(f"| {key[0]} | {key[1]} | 0 | not run yet | | | | |")
            continue
        off = [r for r in rs if r["side"] == "off"]
        on = [r for r in rs if r["side"] == "on"]
        before = " / ".join(_pm(describe([r["mean_F_before"] for r in x if r["mean_F_before"] is not None]), 3)
                            for x in (off, on))
        mins = " / ".join(_pm(describe([r["min_F_after"] for r in x]), 3) for x in (off, on))
        pairs = {(r["rep"]): {} for r in rs}
        for r in rs:
            pairs[r["rep"]][r["side"]] = r["recovery_s"]
        diffs = [p["on"] - p["off"] for p in pairs.values()
                 if p.get("on") is not None and p.get("off") is not None]
        lines.append(f"| {key[0]} | {key[1]} | {len(pairs)} | {before} | {mins} | "
                     f"{fmt_rec([r['recovery_s'] for r in off], [r['observed_s'] for r in off])} | "
                     f"{fmt_rec([r['recovery_s'] for r in on], [r['observed_s'] for r in on])} | "
                     f"{_pm(describe(diffs), 1) if diffs else '–'} |")
        summary_rows.append({"buffer": key[0], "rtt": key[1], "runs": rs, "on_minus_off_s": diffs})
    plot = plot_jain(series_by_setting, order, dest)
    walls = [cell_timing(cell, cdir) for cell, cdir in cells]
    return "\n".join(lines), {"rows": summary_rows, "plot": plot.name if plot else None,
                               "overhead_md": _overhead_table(walls)}


def plot_jain(series_by_setting: dict, order: list[tuple], dest: Path) -> Path | None:
    """F against time, off and on, one panel per setting (buffers as rows, minRTTs as columns)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in order if k in series_by_setting]
    if not keys:
        return None
    bufs = list(dict.fromkeys(k[0] for k in keys))
    rtts = list(dict.fromkeys(k[1] for k in keys))
    fig, axes = plt.subplots(len(bufs), len(rtts), figsize=(4.2 * len(rtts), 3.2 * len(bufs)),
                             squeeze=False, sharey=True)
    colours = {"off": "tab:blue", "on": "tab:red"}
    for key in keys:
        ax = axes[bufs.index(key[0])][rtts.index(key[1])]
        seen = set()
        for side, rep, ser, last in sorted(series_by_setting[key], key=lambda x: (x[0], x[1])):
            label = f"SUSS {side}" if side not in seen else None
            seen.add(side)
            ax.plot(ser["t"], ser["F"], color=colours[side], lw=0.9, alpha=0.9 if rep == 0 else 0.4, label=label)
            ax.axvline(last, color=colours[side], lw=0.6, ls=":")
        ax.axhline(JAIN_FAIR, color="grey", lw=0.6, ls="--")
        ax.set_title(f"buffer {key[0]}, minRTT {key[1]}", fontsize=9)
        ax.set_ylim(0.5, 1.02)
        ax.grid(alpha=0.3)
        ax.set_xlabel("time since the first flow was due (s)" if ser["source"] == "client"
                      else "time since the first flow's SYN (s)")
        ax.set_ylabel(f"Jain's F ({JAIN_WINDOW_S:g} s goodput)")
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    out = dest / "jain.png"
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return out


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------


def write_matrix_report(matrix_dir: Path) -> Path:
    """Tables and plots of the matrix's current cells, into a new reports/<stamp>/."""
    matrix_dir = Path(matrix_dir)
    plan_path, plan = latest_plan(matrix_dir)
    dest = matrix_dir / "reports" / paths.stamp()
    dest.mkdir(parents=True)
    if plan["report"] == "table1":
        table, extra = table1(matrix_dir, plan)
        intro = ("Mean ±95% CI half-width (Student t) over repetitions; SUSS off = cubic_hs (CUBIC's default "
                 "HyStart), on = cubic_suss; FCT from the client (connect() to last byte). Improvement = 1 − "
                 "mean small FCT on / off. *Small flows faster*: the paired difference off − on, with its CI. "
                 "*Large flow within its CI*: the on mean inside the off 95% CI. *Sign vs paper*: whether our "
                 "improvement has the paper's sign.")
    else:
        table, extra = fairness(matrix_dir, plan, dest)
        intro = (f"Jain's index F over {JAIN_WINDOW_S:g} s windows of goodput (the bytes each client received, "
                 f"from its own byte counts; the packet capture cannot keep up at this rate under TCG) among "
                 f"the flows receiving throughout the window. Time to F ≥ {JAIN_FAIR}: from the fifth flow's "
                 f"start to the end of the first of {JAIN_HOLD_WINDOWS} consecutive windows with F ≥ {JAIN_FAIR}. "
                 f"Mean ±95% CI half-width over repetitions.")
    done = len(current_cells(matrix_dir, plan))
    lines = [f"# {plan['title']}", "",
             f"Matrix {plan['matrix']} ({plan['matrix_file']}), selection "
             f"{json.dumps(plan['selection'], sort_keys=True)}, {plan['iterations']} iteration(s): "
             f"{done} of {len(plan['cells'])} cells done. Image {plan['image_hash'][:12]}, traffic code "
             f"{plan['code_version'][:12]}; plan {plan_path.name}.", "",
             "Parameters the paper leaves unstated, as chosen here:", ""]
    lines += [f"- {k}: {v}" for k, v in plan["defaults"].items()]
    lines += ["", intro, "", table, ""]
    if extra.get("notes"):
        lines += extra["notes"] + [""]
    if extra.get("plot"):
        lines += [f"![Jain's index]({extra['plot']})", ""]
    if extra.get("overhead_md"):
        lines += ["## Wall time per cell against its traffic time", "", extra["overhead_md"], ""]
    (dest / "table.md").write_text("\n".join(lines))
    (dest / "summary.json").write_text(json.dumps({"plan": plan_path.name, **extra}, indent=1, sort_keys=True,
                                                  default=str))
    paths.point_latest(dest)
    return dest
