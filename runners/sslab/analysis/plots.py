"""Plots of a scenario run: cwnd, in flight and acknowledged over time; goodput; delivered overlays;
every flow's goodput over a matrix cell's time.  Each figure has one time zero, named on its axis;
each variant keeps one colour and line style; windows are drawn against the BDP and BDP + buffer,
rates against the link's."""

from __future__ import annotations

from pathlib import Path

from ..ccas import recorded_suss_version, variant_label
from . import progress
from .pcap import GOODPUT_BIN_S, delivered_by_flow, delivered_series, rate_bins, stored_capture
from .setting import PathMarks
from .traces import trace_series


#: Line styles cycled with the colours, so that two variants whose lines coincide (cubic_ss and
#: cubic_hs on a flow HyStart never left) both show: one dashed over the other.
LINE_STYLES = ("-", "--", "-.", ":")


def flow_variant(flow: dict) -> str:
    """What a plot's legend calls a run record's flow: its control, a SUSS flow with its version, as the
    report's tables name it."""
    return variant_label(flow["cc"], recorded_suss_version(flow))


def variant_style(i: int) -> dict:
    """The @i-th variant's colour and line style, the same in every plot of a report."""
    return {"color": f"C{i % 10}", "ls": LINE_STYLES[i % len(LINE_STYLES)]}


def same_as(labels: list[str], series: list[tuple[list, list]]) -> list[str]:
    """@labels, each that repeats an earlier series exactly followed by "= <that one's label>": a
    legend then says why a line seems missing."""
    out = []
    for i, (label, xy) in enumerate(zip(labels, series)):
        twin = next((labels[j] for j in range(i) if series[j] == xy and xy[0]), None)
        out.append(f"{label} (= {twin.split(' (')[0]})" if twin else label)
    return out


def mark_window(ax, marks: PathMarks | None) -> None:
    """The BDP and the BDP plus the buffer across a plot of packets (a window above the second
    overflows the queue)."""
    if marks is not None:
        ax.axhline(marks.bdp_pkts, color="0.35", lw=0.7, ls="--", label=f"BDP {marks.bdp_pkts:.0f}")
        ax.axhline(marks.limit_pkts, color="0.35", lw=0.7, ls=":", label=f"BDP + buffer {marks.limit_pkts:.0f}")


def plot_dynamics(runs: list[dict], dest: Path, size: str = "20MB", rep: int = 0,
                  marks: PathMarks | None = None) -> Path | None:
    """cwnd, packets outstanding and data acknowledged against time, one column per variant, all
    from the stack's tcp_probe (sslab.analysis.traces.trace_series), which every variant writes
    alike, ours and the kernel's: one clock in the whole figure, the flow's first ACK at zero; the
    BDP and BDP + buffer (@marks) across the packet rows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chosen = runs_of_size(runs, size, rep)
    if not chosen:
        return None
    n = len(chosen)
    fig, axes = plt.subplots(3, n, figsize=(3.6 * n, 7.5), squeeze=False)
    series = []
    for r in chosen:
        flow = r["flows"][0]
        s = trace_series(r["dir"] / r["trace"], flow["port"]) if r.get("trace") else None
        series.append((r, flow, s if s and s["t"] else None))
    tmax = max([s["t"][-1] for _, _, s in series if s], default=1.0)
    keys = ("cwnd", "outstanding", "acked_mb")
    ymax = [max((max(s[k]) for _, _, s in series if s), default=1) for k in keys]
    if marks is not None:
        ymax[0] = ymax[1] = max(ymax[0], ymax[1], marks.limit_pkts)
    rows = ("cwnd (packets)", "outstanding (packets)", "acknowledged (MB)")
    for col, (r, flow, s) in enumerate(series):
        axes[0][col].set_title(f"{flow_variant(flow)}  (FCT {flow['fct_s']:.2f} s, lost {r['bottleneck']['drops']})",
                               fontsize=9)
        for row, (key, label) in enumerate(zip(keys, rows)):
            ax = axes[row][col]
            if s:
                ax.plot(s["t"], s[key], lw=0.8, color=variant_style(col)["color"])
            if row < 2:
                mark_window(ax, marks)
                if col == 0 and marks is not None:
                    ax.legend(fontsize=7, loc="upper right")
            ax.set_ylim(0, ymax[row] * 1.05)
            ax.set_xlim(0, tmax)
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label, fontsize=8)
            if row == 2:
                ax.set_xlabel("time since the flow's first ACK (s)", fontsize=8)
    fig.suptitle(f"{size} transfer, repetition {rep}: every variant measured alike (tcp_probe, per ACK)",
                 fontsize=10)
    fig.tight_layout()
    out = dest / f"dynamics-{size}.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_cwnd_rtt(runs: list[dict], dest: Path, size: str = "20MB", rep: int = 0,
                  marks: PathMarks | None = None) -> Path | None:
    """cwnd and the smoothed RTT against time, every variant on the same two axes (the SUSS paper's
    Fig. 9: how SUSS changes the growth of both), from the stack's tcp_probe; the BDP and BDP +
    buffer (@marks) across the cwnd."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = []
    for r in runs_of_size(runs, size, rep):
        s = trace_series(r["dir"] / r["trace"], r["flows"][0]["port"]) if r.get("trace") else None
        if s and s["t"]:
            series.append((r["flows"][0], s))
    if not series:
        return None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    labels = [f"{flow_variant(flow)} (FCT {flow['fct_s']:.2f} s)" for flow, _ in series]
    cwnd_labels = same_as(labels, [(s["t"], s["cwnd"]) for _, s in series])
    rtts = [[(t, v) for t, v in zip(s["t"], s["srtt_ms"]) if v is not None] for _, s in series]
    rtt_labels = same_as(labels, [([t for t, _ in r], [v for _, v in r]) for r in rtts])
    for i, ((flow, s), rtt) in enumerate(zip(series, rtts)):
        top.plot(s["t"], s["cwnd"], lw=1, label=cwnd_labels[i], **variant_style(i))
        if rtt:
            bottom.plot([t for t, _ in rtt], [v for _, v in rtt], lw=1, label=rtt_labels[i], **variant_style(i))
    mark_window(top, marks)
    top.set_ylabel("cwnd (packets), tcp_probe", fontsize=8)
    bottom.set_ylabel("smoothed RTT (ms), tcp_probe", fontsize=8)
    bottom.set_xlabel("time since the flow's first ACK (s)", fontsize=8)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{size} transfer, repetition {rep}: cwnd and RTT growth", fontsize=10)
    fig.tight_layout()
    out = dest / f"cwnd-rtt-{size}.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def runs_of_size(runs: list[dict], size: str, rep: int) -> list[dict]:
    """The runs of @runs that moved @size in repetition @rep (a variant each, in the runs' order)."""
    return [r for r in runs if r["run"].get("params", {}).get("size") == size and r["run"]["rep"] == rep]


def _line_plot(lines: list[tuple[str, list, list]], dest: Path, name: str, xlabel: str, ylabel: str,
               title: str, step: bool = False, across: tuple[float, str] | None = None) -> Path | None:
    """One axis, one line per variant: (label, x, y), each in its variant_style (a line that repeats
    another says so in the legend); @across: a value drawn across, with its label."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = [ln for ln in lines if ln[1]]
    if not lines:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4))
    labels = same_as([ln[0] for ln in lines], [(x, y) for _, x, y in lines])
    for i, (label, (_, x, y)) in enumerate(zip(labels, lines)):
        draw = ax.step if step else ax.plot
        draw(x, y, label=label, lw=1, **({"where": "post"} if step else {}), **variant_style(i))
    if across is not None:
        ax.axhline(across[0], color="0.35", lw=0.7, ls="--", label=across[1])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = dest / name
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_delivered_overlay(runs: list[dict], dest: Path, size: str = "5MB", rep: int = 0) -> Path | None:
    """Data delivered against time, one line per variant, from the capture (every variant alike)."""
    lines = []
    for r in runs_of_size(runs, size, rep):
        flow = r["flows"][0]
        if r.get("pcap"):
            t, delivered = delivered_series(stored_capture(r["dir"] / r["pcap"]), flow["port"])
            lines.append((f"{flow_variant(flow)} ({flow['fct_s']:.2f} s)", t, [b / 1e6 for b in delivered]))
    return _line_plot(lines, dest, f"delivered-{size}.png", "time since the flow's SYN at the bottleneck (s)",
                      "data delivered past the bottleneck (MB, capture)", f"{size} transfer, repetition {rep}")


def plot_goodput(runs: list[dict], dest: Path, size: str, rep: int = 0, marks: PathMarks | None = None) -> Path | None:
    """Goodput over time (new data leaving the bottleneck, from the pcap), one line per variant; the
    link's rate (@marks) across."""
    lines = []
    for r in runs_of_size(runs, size, rep):
        g = r["flows"][0].get("goodput_mbit")
        if g:
            lines.append((flow_variant(r["flows"][0]), list(g), list(g.values())))
    return _line_plot(lines, dest, f"goodput-{size}.png", "time since the flow's SYN at the bottleneck (s)",
                      f"goodput, {GOODPUT_BIN_S:g} s bins (Mbit/s)",
                      f"{size} transfer, repetition {rep}: new data leaving the bottleneck", step=True,
                      across=(marks.link_mbit, f"the link, {marks.link_mbit:g} Mbit/s") if marks else None)


#: Bins of the flows-over-time plot: wide enough to hold several of the client's samples of a
#: 50 Mbit/s flow (one per 128 KB read, about 20 ms apart), narrow enough to show a 2 MB flow's life.
FLOWS_BIN_S = 0.5


def throughput_bins(rx_series: list, bin_s: float = FLOWS_BIN_S) -> tuple[list[float], list[float]]:
    """A flow's goodput in Mbit/s per @bin_s bin from its client's [t, bytes received so far] samples
    (run.json's rx_series): each bin's start time, and the bytes that arrived in it, linearly
    shared out between two samples that straddle a bin's edge."""
    if len(rx_series) < 2:
        return [], []
    first, last = int(rx_series[0][0] // bin_s), int(rx_series[-1][0] // bin_s)
    got = [0.0] * (last - first + 1)
    for (t0, b0), (t1, b1) in zip(rx_series, rx_series[1:]):
        if b1 <= b0 or t1 <= t0:
            continue
        t = t0
        while t < t1:
            k = int(t // bin_s)
            edge = min(t1, (k + 1) * bin_s)
            if edge <= t:  # t on a bin's edge by rounding: it belongs to the next bin
                k, edge = k + 1, min(t1, (k + 2) * bin_s)
            got[min(k, last) - first] += (b1 - b0) * (edge - t) / (t1 - t0)
            t = edge
    return [(first + i) * bin_s for i in range(len(got))], [b * 8 / bin_s / 1e6 for b in got]


#: The small flows' colours by their minRTT, in order of the RTTs a figure holds (Okabe and Ito's, less
#: the blue and vermillion the verdicts use); the large flow is black.
RTT_COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#F0E442", "#999999")


def small_flow_colours(rtts) -> dict[float, str]:
    """A colour per minRTT of @rtts (the small flows', the highlighted flow's left out), in RTT order."""
    return {rtt: RTT_COLOURS[k % len(RTT_COLOURS)] for k, rtt in enumerate(sorted(set(rtts)))}


def plot_flows_grid(panels: dict[tuple[str, str], tuple[dict, Path | None, dict[int, float]]], rows: list[str],
                    cols: list[str], dest: Path, name: str, title: str, highlight: int = 0,
                    names: tuple[str, str] = ("the large flow", "the small flows"),
                    link_mbit: float | None = None) -> Path | None:
    """Small multiples of every flow's goodput against time: a panel per (row, column) of @panels (its
    run, its capture or None, each flow's minRTT by its index) on a grid of @rows x @cols, the same
    axes in all; flow @highlight thick and black, the others thin, coloured by their minRTT (the
    legend, below the panels, says which); each panel's FCTs in its corner, the link's rate across."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    measured = {}
    for key, (run, capture, rtts) in panels.items():
        bins, xlabel, what = flow_goodputs(run, capture)
        if any(t for t, _ in bins):
            measured[key] = (run, bins, rtts, xlabel, what)
    if not measured:
        return None
    colour = small_flow_colours(rtt for run, _, rtts, _, _ in measured.values()
                                for i, rtt in rtts.items() if i != highlight % len(run["flows"]))
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(3.2 * len(cols) + 1, 2.0 * len(rows) + 1.2),
                             sharex=True, sharey=True, squeeze=False)
    top = max([link_mbit or 0] + [max(m) for _, bins, _, _, _ in measured.values() for t, m in bins if t])
    for r, row in enumerate(rows):
        for c, col in enumerate(cols):
            ax = axes[r][c]
            if r == 0:
                ax.set_title(col, fontsize=8)
            if c == 0:
                ax.set_ylabel(f"{row}\nMbit/s", fontsize=8)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            if (row, col) not in measured:
                ax.text(0.5, 0.5, "not run", transform=ax.transAxes, ha="center", va="center", fontsize=8,
                        color="0.5")
                continue
            run, bins, rtts, _, _ = measured[(row, col)]
            flows = run["flows"]
            main = highlight % len(flows)
            for i, (t, mbit) in enumerate(bins):
                if t and i != main:
                    ax.step(t, mbit, where="post", lw=0.7, color=colour.get(rtts.get(i), "0.5"), alpha=0.9)
            t, mbit = bins[main]
            if t:
                ax.step(t, mbit, where="post", lw=1.6, color="black")
            if link_mbit:
                ax.axhline(link_mbit, color="0.4", lw=0.8, ls="--")
            others = [f["fct_s"] for i, f in enumerate(flows) if i != main]
            mean = f"; small {sum(others) / len(others):.2f} s" if others else ""
            ax.text(0.98, 0.96, f"large {flows[main]['fct_s']:.1f} s{mean}", transform=ax.transAxes, ha="right",
                    va="top", fontsize=6.5, bbox={"facecolor": "white", "alpha": 0.7, "lw": 0, "pad": 1})
    axes[0][0].set_ylim(0, top * 1.1 if top else 1)
    xlabel, what = next(iter(measured.values()))[3:]
    for ax in axes[-1]:
        ax.set_xlabel(xlabel, fontsize=7)
    handles = [Line2D([], [], color="black", lw=1.6, label=names[0])]
    handles += [Line2D([], [], color=c, lw=1.2, label=f"{names[1]}, minRTT {rtt:g} ms") for rtt, c in colour.items()]
    if link_mbit:
        handles.append(Line2D([], [], color="0.4", lw=0.8, ls="--", label=f"the link, {link_mbit:g} Mbit/s"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 6), fontsize=7.5, frameon=False)
    fig.suptitle(f"{title}: goodput in {FLOWS_BIN_S:g} s bins, {what}", fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    out = dest / name
    fig.savefig(out, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return out


def flow_goodputs(run: dict, capture: Path | None) -> tuple[list[tuple[list[float], list[float]]], str, str]:
    """Each flow of @run's goodput in FLOWS_BIN_S bins: from @capture (new data past the bottleneck,
    which no bin can carry faster than the link), else from each client's received bytes (which a
    filled hole releases at once: a bin can then read above the link); with the time axis's and the
    values' words."""
    if capture is not None:
        return (list(capture_bins(capture, tuple(f["port"] for f in run["flows"]))),
                "time since the first SYN at the bottleneck (s)", "new data past the bottleneck")
    return ([throughput_bins(f.get("rx_series") or []) for f in run["flows"]], "time since the first flow was due (s)",
            "received by the client")


def capture_bins(capture: Path, ports: tuple[int, ...]) -> tuple[tuple[list[float], list[float]], ...]:
    """The flows on @ports' goodput bins read from @capture once however many figures and pages of a
    report draw it (a Table 1 report's static figure and its interactive page read each capture: 0.85 s
    a capture each time, most of the report's time), or ahead by prefetch_capture_bins; callers only
    read what it gives."""
    key = (capture, ports)
    if key not in _BINS:
        _BINS[key] = _capture_bins(capture, ports)
    return _BINS[key]


def _capture_bins(capture: Path, ports: tuple[int, ...]) -> tuple[tuple[list[float], list[float]], ...]:
    return tuple(delivered_bins(ports, delivered_by_flow(capture, list(ports))))


#: capture_bins' values, by (capture, ports), read in this process or ahead in others.
_BINS: dict[tuple[Path, tuple[int, ...]], tuple] = {}


def prefetch_capture_bins(wanted: list[tuple[Path, tuple[int, ...]]]) -> None:
    """Read the captures of @wanted ((capture, ports) each) for capture_bins ahead, one process a core:
    parsing a capture is Python-bound (two thirds of a 160-cell Table 1 report's time went to it, one
    capture after another), and each is read alone, so the bins are the same whichever reads them."""
    import os
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context
    todo = [w for w in dict.fromkeys(wanted) if w not in _BINS]
    workers = min(len(todo), len(os.sched_getaffinity(0)))
    if workers < 2:
        return
    # spawn: the caller may be the matrix controller, which drives testbeds from threads.
    reading = progress.Reading(len(todo), "captures", at_least=1)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        for key, bins in zip(todo, pool.map(_capture_bins, *zip(*todo))):
            _BINS[key] = bins
            reading.step()


def delivered_bins(ports, by_port: dict) -> list[tuple[list[float], list[float]]]:
    """Each flow's goodput on @ports (a run's flows' server ports, in its order) in FLOWS_BIN_S bins from
    the first SYN on, from its data delivered past the bottleneck (@by_port: delivered_by_flow's, or the
    same read from another capture)."""
    syns = [syn for syn, _, _ in by_port.values() if syn is not None]
    origin = min(syns) if syns else min((t[0] for _, t, _ in by_port.values() if t), default=0.0)
    return [rate_bins(t, b, origin, FLOWS_BIN_S) for _, t, b in (by_port[port] for port in ports)]


def plot_flows_over_time(sides: list[tuple[str, dict, Path | None]], dest: Path, name: str, title: str,
                         highlight: int = 0, names: tuple[str, str] = ("the large flow", "the small flows"),
                         link_mbit: float | None = None) -> Path | None:
    """Every flow's goodput against time, one panel per (label, run, its capture or None) of @sides
    (SUSS off, on): flow @highlight thick (Table 1's large flow; -1: the flow that joins last, Fig.
    2's), the others thin (flow_goodputs says from what); the same time axis in every panel, the
    link's rate @link_mbit drawn across; @names label the two kinds."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [(label, run, *flow_goodputs(run, capture)) for label, run, capture in sides]
    measured = [m for m in measured if any(t for t, _ in m[2])]
    if not measured:
        return None
    fig, axes = plt.subplots(len(measured), 1, figsize=(9, 2.8 * len(measured)), sharex=True, squeeze=False)
    for ax, (label, run, bins, xlabel, what) in zip(axes[:, 0], measured):
        flows = run["flows"]
        main = highlight % len(flows)
        labelled = set()
        for i, (t, mbit) in enumerate(bins):
            if not t:
                continue
            kind = names[0] if i == main else names[1]
            ax.step(t, mbit, where="post", lw=1.6 if i == main else 0.7, color="C0" if i == main else "C1",
                    alpha=1.0 if i == main else 0.8, label=None if kind in labelled else kind)
            labelled.add(kind)
        if link_mbit:
            ax.axhline(link_mbit, color="0.4", lw=0.8, ls="--", label=f"the link, {link_mbit:g} Mbit/s")
            ax.set_ylim(0, max([link_mbit * 1.1] + [max(m) * 1.05 for t, m in bins if t]))
        others = [f["fct_s"] for i, f in enumerate(flows) if i != main]
        mean = f", {names[1]}' mean FCT {sum(others) / len(others):.2f} s" if others else ""
        ax.set_title(f"{label}: {names[0]}'s FCT {flows[main]['fct_s']:.1f} s{mean}", fontsize=9)
        ax.set_ylabel(f"goodput (Mbit/s, {FLOWS_BIN_S:g} s),\n{what}", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    axes[-1][0].set_xlabel(measured[-1][3], fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = dest / name
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return out
