"""Analysis of a scenario run, from its archived artifacts alone.

Input: a run directory written by `sslab startup` (or any scenario run):
job/out/fidelity.json, job/out/runs/<tag>/run.json, <tag>/flow.pcap and
<tag>/flow.trace.gz.  Output: summary.json, report.md and PNG plots in the
run directory.  Nothing here needs the substrate, so `sslab report DIR`
rebuilds every table and plot from the archive.

Definitions:
  FCT (app)   client: just before connect() to the last byte received.
  FCT (pcap)  at the bottleneck: the client's SYN to the last new data
              segment of the flow leaving r1 (the rest of the path, about
              RTT/2 plus the client's processing, is not in it).
  lost        packets dropped by the bottleneck queue during the run.
  retrans     the sender's retransmitted segments (kernel counter).
  cwnd, in flight, delivered   per ACK from tcp:tcp_probe (packets of
              TRACE_MSS bytes; delivered = bytes cumulatively acked).
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

import dpkt

from .guest.ftrace import parse as parse_trace

TRACE_MSS = 1448  # payload of a full frame with TCP timestamps
GOODPUT_BIN_S = 0.1

#: Two-sided 95% Student t quantiles by degrees of freedom (standard table).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
        18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t95(df: int) -> float:
    if df <= 0:
        return math.nan
    for k in sorted(_T95):
        if df <= k:
            return _T95[k]
    return 1.960


def describe(values: list[float]) -> dict:
    """n, median, mean and the 95% confidence interval of the mean."""
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(vals)
    if not n:
        return {"n": 0, "median": None, "mean": None, "ci95": None}
    mean = statistics.fmean(vals)
    if n > 1:
        half = t95(n - 1) * statistics.stdev(vals) / math.sqrt(n)
        ci = [mean - half, mean + half]
    else:
        ci = None
    return {"n": n, "median": statistics.median(vals), "mean": mean, "ci95": ci, "values": vals}


# --------------------------------------------------------------------------
# pcap
# --------------------------------------------------------------------------


@dataclass
class PcapFlow:
    syn_ts: float | None = None
    first_data_ts: float | None = None
    last_new_data_ts: float | None = None
    data_segments: int = 0
    retransmitted_segments: int = 0
    new_bytes_by_bin: dict | None = None


def _u32_ahead(a: int, b: int) -> bool:
    return ((a - b) & 0xFFFFFFFF) < 0x80000000 and a != b


def open_pcap(path: Path):
    """A pcap file, or its gzip-compressed archive copy (path + '.gz')."""
    path = Path(path)
    if not path.exists() and path.with_name(path.name + ".gz").exists():
        path = path.with_name(path.name + ".gz")
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def analyse_pcap_ports(path: Path, server_ports: list[int], bin_s: float = GOODPUT_BIN_S,
                       absolute_t0: float | None = None) -> dict[int, PcapFlow]:
    """Every listed flow's view at the bottleneck, in one pass over the capture.

    A flow is the data from a server port and the SYN towards it.  New bytes
    are binned by @bin_s seconds from the flow's own SYN, or from
    @absolute_t0 (one clock for all flows, for fairness over time).
    """
    flows = {p: PcapFlow(new_bytes_by_bin={}) for p in server_ports}
    highest: dict[int, int] = {}
    with open_pcap(path) as f:
        for ts, buf in dpkt.pcap.Reader(f):
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            tcp = ip.data
            if tcp.flags & dpkt.tcp.TH_SYN and not tcp.flags & dpkt.tcp.TH_ACK:
                flow = flows.get(tcp.dport)
                if flow is not None and flow.syn_ts is None:
                    flow.syn_ts = ts
                continue
            flow = flows.get(tcp.sport)
            if flow is None:
                continue
            payload = ip.len - ip.hl * 4 - tcp.off * 4
            if payload <= 0:
                continue
            end = (tcp.seq + payload) & 0xFFFFFFFF
            flow.data_segments += 1
            if flow.first_data_ts is None:
                flow.first_data_ts = ts
            top = highest.get(tcp.sport)
            if top is None or _u32_ahead(end, top):
                new = payload if top is None else min(payload, (end - top) & 0xFFFFFFFF)
                highest[tcp.sport] = end
                flow.last_new_data_ts = ts
                origin = absolute_t0 if absolute_t0 is not None else (flow.syn_ts or ts)
                b = int((ts - origin) / bin_s)
                flow.new_bytes_by_bin[b] = flow.new_bytes_by_bin.get(b, 0) + new
            else:
                flow.retransmitted_segments += 1
    return flows


def analyse_pcap(path: Path, server_port: int) -> PcapFlow:
    """One flow's view at the bottleneck (data from @server_port, SYN towards it)."""
    return analyse_pcap_ports(path, [server_port])[server_port]


# --------------------------------------------------------------------------
# traces
# --------------------------------------------------------------------------


def trace_series(path: Path, port: int) -> dict:
    """Per-ACK time series of one flow.

    cwnd and delivered come from tcp:tcp_probe (any congestion control).
    Packets in flight come from our module's sslab_ack (the kernel's
    packets_in_flight: outstanding less SACKed and lost, plus retransmitted)
    when the flow used one of our controls; otherwise `in_flight_source` is
    "outstanding" and the series is snd_nxt - snd_una, which in recovery
    also counts SACKed and lost packets.
    """
    with gzip.open(path, "rt") as f:
        records = parse_trace(f.read())
    probes = [r for r in records if r.event == "tcp_probe" and r.fields.get("src", "").endswith(f":{port}")]
    acks = [r for r in records if r.event == "sslab_ack" and r.fields.get("sport") == str(port)]
    out = {"t": [], "cwnd": [], "delivered_mb": [], "in_flight_t": [], "in_flight": [],
           "in_flight_source": "sslab_ack" if acks else "outstanding"}
    if not probes:
        return out
    t0, una0 = probes[0].ts, probes[0].int("snd_una")
    for r in probes:
        out["t"].append(r.ts - t0)
        out["cwnd"].append(r.int("snd_cwnd"))
        out["delivered_mb"].append(((r.int("snd_una") - una0) & 0xFFFFFFFF) / 1e6)
    if acks:
        out["in_flight_t"] = [r.ts - t0 for r in acks]
        out["in_flight"] = [r.int("in_flight") for r in acks]
    else:
        out["in_flight_t"] = out["t"]
        out["in_flight"] = [((r.int("snd_nxt") - r.int("snd_una")) & 0xFFFFFFFF) / TRACE_MSS for r in probes]
    return out


# --------------------------------------------------------------------------
# a whole run directory
# --------------------------------------------------------------------------


def load_runs(out_dir: Path) -> list[dict]:
    index = json.loads((out_dir / "runs.json").read_text())
    runs = []
    for entry in index:
        rdir = out_dir / "runs" / entry["tag"]
        run = json.loads((rdir / "run.json").read_text())
        run["dir"] = rdir
        views = analyse_pcap_ports(rdir / run["pcap"], [f["port"] for f in run["flows"]]) if run.get("pcap") else {}
        for flow in run["flows"]:
            if run.get("pcap"):
                pf = views[flow["port"]]
                flow["fct_pcap_s"] = (pf.last_new_data_ts - pf.syn_ts
                                      if pf.syn_ts and pf.last_new_data_ts else None)
                flow["pcap_retransmitted_segments"] = pf.retransmitted_segments
                flow["pcap_data_segments"] = pf.data_segments
                flow["goodput_mbit"] = {k * GOODPUT_BIN_S: v * 8 / GOODPUT_BIN_S / 1e6
                                        for k, v in sorted(pf.new_bytes_by_bin.items())}
        runs.append(run)
    return runs


def summarise(runs: list[dict]) -> dict:
    by_case: dict[str, list[dict]] = {}
    for run in runs:
        by_case.setdefault(run["run"]["case"], []).append(run)
    cases = {}
    for name, rs in by_case.items():
        first = [r["flows"][0] for r in rs]
        cases[name] = {
            "params": rs[0]["run"].get("params", {}),
            "fct_app_s": describe([f["fct_s"] for f in first]),
            "fct_pcap_s": describe([f.get("fct_pcap_s") for f in first]),
            "lost_packets": describe([r["bottleneck"]["drops"] for r in rs]),
            "retransmissions": describe([sum(c["RetransSegs"] for c in r["tcp_counters"].values()) for r in rs]),
            "slow_start_exit_cwnd": describe([(f["slow_start"] or {}).get("exit_cwnd") for f in first]),
            "receiver_limited_runs": sum(1 for f in first if f["receiver_limited_acks"]),
            "fidelity_ok_runs": sum(1 for r in rs if r["fidelity"]["base_rtt_ok"] and r["fidelity"]["rate_ok"]),
            "runs": len(rs),
        }
    return cases


def _fmt(d: dict, scale: float = 1.0, digits: int = 2) -> str:
    """median [CI], the CI's lower end shown no lower than 0: every metric here is non-negative
    (a symmetric t interval on a skewed count can reach below zero)."""
    if not d or d["n"] == 0:
        return "–"
    med = f"{d['median'] * scale:.{digits}f}"
    if d["ci95"]:
        lo, hi = (x * scale for x in d["ci95"])
        lo = max(lo, 0.0)
        return f"{med} [{lo:.{digits}f}, {hi:.{digits}f}]"
    return med


def _size_bytes(label: str) -> int:
    from .scenario import parse_size
    return parse_size(label)


def matrix_sizes(cases: dict) -> tuple[str | None, str | None]:
    """The smallest and largest transfer sizes among the cases (E1: 5MB, 20MB)."""
    sizes = sorted({c["params"]["size"] for c in cases.values() if "size" in c["params"]}, key=_size_bytes)
    return (sizes[0], sizes[-1]) if sizes else (None, None)


def startup_table(cases: dict) -> tuple[list[dict], str]:
    """E1's table: per variant, FCT of the small transfer and packets lost in the large one."""
    small_size, large_size = matrix_sizes(cases)
    rows = []
    variants = []
    for c in cases.values():
        cc = c["params"].get("cc")
        if cc and cc not in variants:
            variants.append(cc)
    for cc in variants:
        small = next((c for c in cases.values() if c["params"] == {"cc": cc, "size": small_size}), None)
        large = next((c for c in cases.values() if c["params"] == {"cc": cc, "size": large_size}), None)
        ok = sum(c["fidelity_ok_runs"] for c in (small, large) if c)
        n = sum(c["runs"] for c in (small, large) if c)
        rows.append({"cc": cc, "small_size": small_size, "large_size": large_size,
                     "fct_small": small and small["fct_app_s"], "fct_small_pcap": small and small["fct_pcap_s"],
                     "lost_large": large and large["lost_packets"], "retrans_large": large and large["retransmissions"],
                     "exit_cwnd_large": large and large["slow_start_exit_cwnd"], "fidelity_ok": ok, "runs": n})
    lines = [f"| variant | FCT {small_size}, s (app) | FCT {small_size}, s (pcap) | lost packets, {large_size} | "
             f"retransmissions, {large_size} | slow-start exit cwnd, {large_size} | runs passing fidelity |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['cc']} | {_fmt(r['fct_small'], digits=3)} | {_fmt(r['fct_small_pcap'], digits=3)} | "
                     f"{_fmt(r['lost_large'], digits=0)} | {_fmt(r['retrans_large'], digits=0)} | "
                     f"{_fmt(r['exit_cwnd_large'], digits=0)} | {r['fidelity_ok']}/{r['runs']} |")
    return rows, "\n".join(lines)


def case_table(cases: dict) -> str:
    """A per-case table, for scenarios that are not a size x variant matrix."""
    lines = ["| case | FCT, s (app, first flow) | FCT, s (pcap) | lost packets | retransmissions | runs passing fidelity |",
             "|---|---|---|---|---|---|"]
    for name, c in cases.items():
        lines.append(f"| {name} | {_fmt(c['fct_app_s'], digits=3)} | {_fmt(c['fct_pcap_s'], digits=3)} | "
                     f"{_fmt(c['lost_packets'], digits=0)} | {_fmt(c['retransmissions'], digits=0)} | "
                     f"{c['fidelity_ok_runs']}/{c['runs']} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------


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
