"""Plots of a scenario run: cwnd, in flight and delivered over time; goodput; delivered overlays."""

from __future__ import annotations

from pathlib import Path

from .pcap import GOODPUT_BIN_S
from .traces import trace_series


def plot_dynamics(runs: list[dict], dest: Path, size: str = "20MB", rep: int = 0) -> Path | None:
    """cwnd, packets in flight and data delivered against time, one column per variant."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chosen = _chosen(runs, size, rep)
    if not chosen:
        return None
    n = len(chosen)
    fig, axes = plt.subplots(3, n, figsize=(3.6 * n, 7.5), sharex=True, squeeze=False)
    tmax = 0.0
    series = []
    for r in chosen:
        flow = r["flows"][0]
        s = trace_series(r["dir"] / r["trace"], flow["port"]) if r.get("trace") else None
        series.append((r, flow, s))
        if s and s["t"]:
            tmax = max(tmax, s["t"][-1])
    ymax = [max((max(s[k]) for _, _, s in series if s and s[k]), default=1)
            for k in ("cwnd", "in_flight", "delivered_mb")]
    for col, (r, flow, s) in enumerate(series):
        title = f"{flow['cc']}  (FCT {flow['fct_s']:.2f} s, lost {r['bottleneck']['drops']})"
        axes[0][col].set_title(title, fontsize=9)
        if not s or not s["t"]:
            continue
        for row, (key, label) in enumerate((("cwnd", "cwnd (packets)"), ("in_flight", "in flight (packets)"),
                                            ("delivered_mb", "delivered (MB)"))):
            ax = axes[row][col]
            ax.plot(s["in_flight_t"] if key == "in_flight" else s["t"], s[key], lw=0.8)
            ax.set_ylim(0, ymax[row] * 1.05)
            ax.set_xlim(0, tmax)
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label)
            if row == 2:
                ax.set_xlabel("time since first ACK (s)")
    fig.suptitle(f"{size} transfer, repetition {rep}", fontsize=10)
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
    """Data delivered against time, one line per variant."""
    lines = []
    for r in _chosen(runs, size, rep):
        flow = r["flows"][0]
        s = trace_series(r["dir"] / r["trace"], flow["port"]) if r.get("trace") else None
        if s:
            lines.append((f"{flow['cc']} ({flow['fct_s']:.2f} s)", s["t"], s["delivered_mb"]))
    return _line_plot(lines, dest, f"delivered-{size}.png", "time since first ACK (s)", "data delivered (MB)",
                      f"{size} transfer, repetition {rep}")


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
