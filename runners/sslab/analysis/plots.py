"""Plots of a scenario run: cwnd, in flight and delivered over time; goodput; delivered overlays."""

from __future__ import annotations

from pathlib import Path

from .pcap import GOODPUT_BIN_S, delivered_series, stored_capture
from .traces import trace_series


def plot_dynamics(runs: list[dict], dest: Path, size: str = "20MB", rep: int = 0) -> Path | None:
    """cwnd, packets outstanding and data delivered against time, one column per variant.

    Every variant is measured the same way, ours and the kernel's: cwnd and the packets outstanding
    from the stack's tcp_probe (sslab.analysis.traces.trace_series), the data delivered from the
    capture (new bytes past the bottleneck: sslab.analysis.pcap.delivered_series)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chosen = _chosen(runs, size, rep)
    if not chosen:
        return None
    n = len(chosen)
    fig, axes = plt.subplots(3, n, figsize=(3.6 * n, 7.5), squeeze=False)
    series = []
    for r in chosen:
        flow = r["flows"][0]
        s = trace_series(r["dir"] / r["trace"], flow["port"]) if r.get("trace") else None
        d = delivered_series(stored_capture(r["dir"] / r["pcap"]), flow["port"]) if r.get("pcap") else ([], [])
        series.append((r, flow, s, d))
    tmax = max([s["t"][-1] for _, _, s, _ in series if s and s["t"]] +
               [d[0][-1] for _, _, _, d in series if d[0]], default=1.0)
    ymax = [max((max(s[k]) for _, _, s, _ in series if s and s[k]), default=1) for k in ("cwnd", "outstanding")]
    ymax.append(max((d[1][-1] / 1e6 for _, _, _, d in series if d[1]), default=1))
    rows = (("cwnd (packets), tcp_probe", "time since the first ACK (s)"),
            ("outstanding (packets), tcp_probe", "time since the first ACK (s)"),
            ("delivered (MB), capture", "time since the SYN at the bottleneck (s)"))
    for col, (r, flow, s, d) in enumerate(series):
        title = f"{flow['cc']}  (FCT {flow['fct_s']:.2f} s, lost {r['bottleneck']['drops']})"
        axes[0][col].set_title(title, fontsize=9)
        lines = [(s["t"], s["cwnd"]) if s else ([], []), (s["t"], s["outstanding"]) if s else ([], []),
                 (d[0], [b / 1e6 for b in d[1]])]
        for row, ((x, y), (label, xlabel)) in enumerate(zip(lines, rows)):
            ax = axes[row][col]
            if x:
                ax.plot(x, y, lw=0.8)
            ax.set_ylim(0, ymax[row] * 1.05)
            ax.set_xlim(0, tmax)
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label, fontsize=8)
            if row >= 1:
                ax.set_xlabel(xlabel, fontsize=8)
    fig.suptitle(f"{size} transfer, repetition {rep}: every variant measured alike (tcp_probe; the capture)",
                 fontsize=10)
    fig.tight_layout()
    out = dest / f"dynamics-{size}.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_cwnd_rtt(runs: list[dict], dest: Path, size: str = "20MB", rep: int = 0) -> Path | None:
    """cwnd and the smoothed RTT against time, every variant on the same two axes (the SUSS paper's
    Fig. 9: how SUSS changes the growth of both), from the stack's tcp_probe."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = []
    for r in _chosen(runs, size, rep):
        s = trace_series(r["dir"] / r["trace"], r["flows"][0]["port"]) if r.get("trace") else None
        if s and s["t"]:
            series.append((r["flows"][0], s))
    if not series:
        return None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for flow, s in series:
        label = f"{flow['cc']} (FCT {flow['fct_s']:.2f} s)"
        top.plot(s["t"], s["cwnd"], lw=1, label=label)
        rtt = [(t, v) for t, v in zip(s["t"], s["srtt_ms"]) if v is not None]
        if rtt:
            bottom.plot([t for t, _ in rtt], [v for _, v in rtt], lw=1, label=label)
    top.set_ylabel("cwnd (packets), tcp_probe", fontsize=8)
    bottom.set_ylabel("smoothed RTT (ms), tcp_probe", fontsize=8)
    bottom.set_xlabel("time since the first ACK (s)", fontsize=8)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{size} transfer, repetition {rep}: cwnd and RTT growth", fontsize=10)
    fig.tight_layout()
    out = dest / f"cwnd-rtt-{size}.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _chosen(runs: list[dict], size: str, rep: int) -> list[dict]:
    return [r for r in runs if r["run"].get("params", {}).get("size") == size and r["run"]["rep"] == rep]


def _line_plot(lines: list[tuple[str, list, list]], dest: Path, name: str, xlabel: str, ylabel: str,
               title: str, step: bool = False) -> Path | None:
    """One axis, one line per variant: (label, x, y)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = [ln for ln in lines if ln[1]]
    if not lines:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label, x, y in lines:
        (ax.step(x, y, where="post", label=label, lw=1) if step else ax.plot(x, y, label=label, lw=1))
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
    for r in _chosen(runs, size, rep):
        flow = r["flows"][0]
        if r.get("pcap"):
            t, delivered = delivered_series(stored_capture(r["dir"] / r["pcap"]), flow["port"])
            lines.append((f"{flow['cc']} ({flow['fct_s']:.2f} s)", t, [b / 1e6 for b in delivered]))
    return _line_plot(lines, dest, f"delivered-{size}.png", "time since the SYN at the bottleneck (s)",
                      "data delivered past the bottleneck (MB, capture)", f"{size} transfer, repetition {rep}")


def plot_goodput(runs: list[dict], dest: Path, size: str, rep: int = 0) -> Path | None:
    """Goodput over time (new data leaving the bottleneck, from the pcap), one line per variant."""
    lines = []
    for r in _chosen(runs, size, rep):
        g = r["flows"][0].get("goodput_mbit")
        if g:
            lines.append((r["flows"][0]["cc"], list(g), list(g.values())))
    return _line_plot(lines, dest, f"goodput-{size}.png", "time since the client's SYN at the bottleneck (s)",
                      f"goodput, {GOODPUT_BIN_S:g} s bins (Mbit/s)",
                      f"{size} transfer, repetition {rep}: new data leaving the bottleneck", step=True)


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


def plot_flows_over_time(sides: list[tuple[str, dict]], dest: Path, name: str, title: str, highlight: int = 0,
                         names: tuple[str, str] = ("the large flow", "the small flows")) -> Path | None:
    """Every flow's goodput against time, one panel per (label, run) of @sides (SUSS off, on): flow
    @highlight thick (Table 1's large flow; -1: the flow that joins last, Fig. 2's), the others thin,
    each from its client's received-bytes samples; the same time axis in every panel; @names label
    the two kinds."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sides = [(label, run) for label, run in sides if any(f.get("rx_series") for f in run["flows"])]
    if not sides:
        return None
    fig, axes = plt.subplots(len(sides), 1, figsize=(9, 2.8 * len(sides)), sharex=True, squeeze=False)
    for ax, (label, run) in zip(axes[:, 0], sides):
        flows = run["flows"]
        main = highlight % len(flows)
        labelled = set()
        for i, f in enumerate(flows):
            t, mbit = throughput_bins(f.get("rx_series") or [])
            if not t:
                continue
            kind = names[0] if i == main else names[1]
            ax.step(t, mbit, where="post", lw=1.6 if i == main else 0.7, color="C0" if i == main else "C1",
                    alpha=1.0 if i == main else 0.8, label=None if kind in labelled else kind)
            labelled.add(kind)
        others = [f["fct_s"] for i, f in enumerate(flows) if i != main]
        mean = f", {names[1]}' mean FCT {sum(others) / len(others):.2f} s" if others else ""
        ax.set_title(f"{label}: {names[0]}'s FCT {flows[main]['fct_s']:.1f} s{mean}", fontsize=9)
        ax.set_ylabel(f"goodput (Mbit/s, {FLOWS_BIN_S:g} s)", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    axes[-1][0].set_xlabel("time since the first flow was due (s)", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = dest / name
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return out
