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
