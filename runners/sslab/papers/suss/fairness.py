"""E6, the SUSS paper's Fig. 15: Jain's index F of goodput over time, SUSS off and on, and the
time F takes to return to 0.95 after the fifth flow starts: E6's reading of its matrix's runs (a
record per run) and its figure, for the report experiments/fairness.yaml describes."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from ...plan_record import MatrixPlan
from ...analysis.fidelity import run_passes
from ...analysis.archive import check_controls, current_cells, runs_of, side_of
from ...analysis.pcap import analyse_pcap_ports
from ...analysis.plugins import Metric, Records
from ...analysis.stats import jain

#: Jain's index is taken over goodput in windows of this many seconds.
JAIN_WINDOW_S = 1.0
#: "Fair again": F at or above this ...
JAIN_FAIR = 0.95
#: ... for this many consecutive windows (one window above 0.95 is noise in a CUBIC sawtooth).
JAIN_HOLD_WINDOWS = 5


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
        views = analyse_pcap_ports(run_dir / run["pcap"], ports, bin_s=window_s, absolute_t0=0.0)
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


#: The incumbents of cells made before the matrix had a CCA axis: the paper's four CUBIC flows.
PAPER_INCUMBENTS = "cubic"


def setting_key(setting: dict) -> tuple[str, str, str]:
    """A row of the report: (the four incumbents' control, buffer, minRTT)."""
    return setting.get("incumbents", PAPER_INCUMBENTS), setting["buffer"], setting["rtt"]


def incumbents_label(control: str, labels: dict) -> str:
    return f"4 × {labels.get(control, control)}"


def recoveries(matrix_dir: Path, plan: MatrixPlan, cells: list[tuple] | None = None) -> tuple[list[dict], dict]:
    """Every done run's recovery (recovery()) with its setting, repetition and side; and each setting's
    Jain series, for the plot."""
    cells = current_cells(matrix_dir, plan) if cells is None else cells
    results = []
    series_by_setting: dict[tuple, list] = {}
    for cell, cdir in cells:
        key = setting_key(cell.setting)
        for run, rdir in runs_of(cdir):
            check_controls(run, rdir)
            side = side_of(plan, run)
            ser = jain_series(run, rdir)
            last = max(ser["starts"].values())
            rec = recovery(ser, last)
            results.append({"incumbents": key[0], "buffer": key[1], "rtt": key[2], "rep": cell.rep, "side": side,
                            "fifth_start_s": round(last, 3), **rec, "goodput_source": ser["source"],
                            "pcap_dropped_by_kernel": run.get("pcap_dropped_by_kernel"),
                            "fidelity_ok": run_passes(run)})
            series_by_setting.setdefault(key, []).append((side, cell.rep, ser, last))
    return results, series_by_setting


def load(matrix_dir: Path, plan: MatrixPlan) -> list[dict]:
    """E6's reading of a matrix's current cells (its report, described in experiments/fairness.yaml): a
    record per run, its setting (the incumbents as the report names them: "4 × CUBIC"), repetition and
    side, and recovery()'s quantities."""
    results, _ = recoveries(matrix_dir, plan)
    return [{**r, "control": r["incumbents"], "incumbents": incumbents_label(r["incumbents"], plan.labels)}
            for r in results]


def draw_jain(matrix_dir: Path, plan: MatrixPlan, dest: Path) -> Path | None:
    """The report's figure: F against time, off and on, a panel per setting (plot_jain)."""
    _, series_by_setting = recoveries(matrix_dir, plan)
    order = list(dict.fromkeys(setting_key(c.setting) for c in plan.cells))
    return plot_jain(series_by_setting, order, dest, plan.labels)


def plot_jain(series_by_setting: dict, order: list[tuple], dest: Path, labels: dict | None = None) -> Path | None:
    """F against time, off and on, one panel per setting (incumbents and buffers as rows, minRTTs as
    columns)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in order if k in series_by_setting]
    if not keys:
        return None
    bufs = list(dict.fromkeys(k[:2] for k in keys))
    rtts = list(dict.fromkeys(k[2] for k in keys))
    fig, axes = plt.subplots(len(bufs), len(rtts), figsize=(4.2 * len(rtts), 3.2 * len(bufs)),
                             squeeze=False, sharey=True)
    colours = {"off": "tab:blue", "on": "tab:red"}
    for key in keys:
        ax = axes[bufs.index(key[:2])][rtts.index(key[2])]
        seen = set()
        for side, rep, ser, last in sorted(series_by_setting[key], key=lambda x: (x[0], x[1])):
            label = f"SUSS {side}" if side not in seen else None
            seen.add(side)
            ax.plot(ser["t"], ser["F"], color=colours[side], lw=0.9, alpha=0.9 if rep == 0 else 0.4, label=label)
            ax.axvline(last, color=colours[side], lw=0.6, ls=":")
        ax.axhline(JAIN_FAIR, color="grey", lw=0.6, ls="--")
        ax.set_title(f"{incumbents_label(key[0], labels or {})}, buffer {key[1]}, minRTT {key[2]}", fontsize=9)
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


RECORDS = Records(
    "fairness", load,
    keys={"incumbents": ("incumbents", str), "buffer": ("buffer", str), "rtt": ("minRTT", str),
          "side": ("side", str), "rep": ("repetition", str)},
    metrics={"before": Metric("mean_F_before", "F before the fifth flow (10 s)", 3),
             "min_after": Metric("min_F_after", "min F after", 3),
             "recovery": Metric("recovery_s", f"time to F ≥ {JAIN_FAIR} (s)", 1)},
    # How long a run was watched after the fifth flow joined: the words for a run F never recovered in.
    group_fields=("observed_s",),
    over="matrix")
