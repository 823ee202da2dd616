"""What the reports over last hops compute (E2 `make wifi`, E4/E5 `make fct-vs-size`): per-run
records, FCT and loss against flow size, SUSS's improvement, the link's traits, and their plots.

The experiment files say which of these a report shows, grouped how, under which headings, in
which order (sslab.analysis.runs_report); this module holds the computations.  Input: scenario run
directories (one per setting of a series), each an ordinary scenario run.  Nothing here needs the
substrate: `sslab run wifi --report DIR...` rebuilds a report from the archives.

Definitions (per run, the one flow):
  FCT           the client's: just before connect() to the last byte.
  lost          frames the bottleneck dropped; loss rate = lost / data
                frames the sender offered the bottleneck (sent + lost).
  improvement   (mean FCT with SUSS off - with it on) / off, per size: the
                SUSS paper's Fig. 12; off and on are variants the report names
                (E4: off = cubic_hs, CUBIC with HyStart as the paper's stock
                CUBIC; on = cubic_suss in each SUSS version run, labelled by
                version: ccas.variant_label).
  link traits   per run, from sslab.analysis.link: bursts reaching the
                client, the rate delivered against the trace over the
                bottleneck's busy bins, the queue at every bin boundary.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from ..ccas import SUSS_VERSIONS, recorded_suss_version, suss_tag, variant_label
from . import exits
from .evidence.base import Measured, Point, extreme
from .link import rate_series, replay_fidelity
from .plugins import Metric
from .setting import setting_of
from .startup import load_runs
from .fidelity import run_passes
from .stats import describe, welch_diff

#: What the reports call the SUSS versions (their labels: ccas.variant_label).
SUSS_LEGEND = "; ".join(f"cubic_suss {suss_tag(v)}: {name}" for v, name in SUSS_VERSIONS.items())


#: The quantities per run (load_setting's fields) that size_rows describes per group; a report names them.
METRICS: dict[str, Metric] = {
    "fct": Metric("fct_s", "FCT (s)", 3, unit="s"),
    "lost": Metric("lost", "lost", 1),
    "loss_rate": Metric("loss_rate", "loss rate (%)", 3, scale=100.0),
    "retrans": Metric("retrans", "retransmitted segments", 1),
    # The most the bottleneck's queue held at once, as its qdisc counted (None on a kernel that does not).
    "queue_peak": Metric("queue_peak_pkts", "queue's peak (pkts)", 0),
    # Where slow start ended against the chokepoint (sslab.analysis.exits), each a share of the runs (%).
    "exit_early": Metric("exit_early", "% early", 0, scale=100.0),
    "exit_near": Metric("exit_near", "% near", 0, scale=100.0),
    "exit_after_loss": Metric("exit_after_loss", "% after, with loss", 0, scale=100.0),
    "exit_cwnd_bdp": Metric("exit_cwnd_bdp", "exit cwnd / BDP", 2),
}


def load_setting(run_dir: Path) -> list[dict]:
    """One record per run of a scenario run directory."""
    setting = setting_of(run_dir)
    label, rtt_ms = setting.link, round(setting.pair_rtts_ms[0], 3)
    bdp = exits.bdp_frames(setting.rate_mbit, setting.pair_rtts_ms[0], setting.mtu)
    out = []
    for r in load_runs(run_dir / "job" / "out"):
        f = r["flows"][0]
        sent = f.get("pcap_data_segments")
        lost = r["bottleneck"]["drops"]
        # The link's fidelity as this code judges it (the archive keeps the guest's rows).
        link_fid = replay_fidelity(r["link_replay"]) if r.get("link_replay") else None
        where = exits.exit_class(f, bdp, setting.buffer_pkts)
        exit_cwnd = (f.get("slow_start") or {}).get("exit_cwnd")
        out.append({
            "setting": setting.name, "link": label, "rtt_ms": rtt_ms,
            "cc": variant_label(f["cc"], recorded_suss_version(f)), "size": f["size"],
            "size_label": r["run"]["params"].get("size"), "rep": r["run"]["rep"], "fct_s": f["fct_s"],
            "lost": lost, "loss_rate": lost / (sent + lost) if sent else None,
            "queue_peak_pkts": r["bottleneck"].get("peak_pkts"),
            "retrans": sum(c["RetransSegs"] for c in r["tcp_counters"].values()),
            "fidelity_ok": run_passes(r) and (link_fid is None or link_fid["ok"]),
            "bursts": r.get("link_bursts"), "link_fidelity": link_fid,
            "trace_offset_s": r["run"].get("trace_offset_s"), "run": r,
            **{field: None if where is None else float(where == c) for c, field in exits.CLASSES.items()},
            "exit_cwnd_bdp": exit_cwnd / bdp if exit_cwnd is not None and where is not None else None,
        })
    return out


def group(records: list[dict], *keys: str) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for rec in records:
        out.setdefault(tuple(rec[k] for k in keys), []).append(rec)
    return out


def size_text(size: int) -> str:
    """A size in MB as tables print it ("0.25 MB")."""
    return f"{size / 1e6:g} MB"


def _sd(vals: list[float]) -> float:
    return statistics.stdev(vals) if len(vals) > 1 else 0.0


def size_rows(records: list[dict]) -> list[dict]:
    """Per (link, RTT, variant, size): every metric of METRICS described (mean, 95% CI), the FCT's sd."""
    rows = []
    for (link, rtt, cc, size), rs in sorted(group(records, "link", "rtt_ms", "cc", "size").items()):
        row = {"link": link, "rtt_ms": rtt, "cc": cc, "size": size, "n": len(rs),
               "fct_sd": _sd([r["fct_s"] for r in rs]), "fidelity_ok": sum(r["fidelity_ok"] for r in rs)}
        for name, m in METRICS.items():
            row[name] = describe([r.get(m.field) for r in rs])
        rows.append(row)
    return rows


def improvements(records: list[dict], off: str, on: str) -> list[dict]:
    """(off - on) / off of the mean FCT per (link, RTT, size) and each variant whose label starts
    with @on (each SUSS version run: "cubic_suss 2024", ...), against the variant @off, with Welch's
    CI on the difference."""
    out = []
    ons = sorted({r["cc"] for r in records if r["cc"].startswith(on)})
    for (link, rtt, size), rs in sorted(group(records, "link", "rtt_ms", "size").items()):
        fct_off = [r["fct_s"] for r in rs if r["cc"] == off]
        for label in ons:
            fct_on = [r["fct_s"] for r in rs if r["cc"] == label]
            if not fct_off or not fct_on:
                continue
            d = welch_diff(fct_off, fct_on)  # on - off
            m_off = statistics.fmean(fct_off)
            ci = d["ci95"]
            out.append({"link": link, "rtt_ms": rtt, "size": size, "on": label, "n": (len(fct_off), len(fct_on)),
                        "fct_off": m_off, "fct_on": statistics.fmean(fct_on), "improvement": -d["diff"] / m_off,
                        "improvement_ci": None if ci is None else [-ci[1] / m_off, -ci[0] / m_off],
                        "significant": ci is not None and (ci[0] > 0 or ci[1] < 0)})
    return out


def headline(imps: list[dict], at_least: float, sizes_under: int, rtt_over_ms: float) -> list[dict]:
    """A claim of the SUSS paper's kind, per link and RTT over @rtt_over_ms: every size under
    @sizes_under bytes improves by over @at_least (a fraction; the paper: 20 % under 5 MB over 50 ms).
    Its verdict by the claims ledger's at_least rule (sslab.analysis.claims) on the least of the sizes,
    whose CI runs from the least lower end to the least upper end: reproduced when every size's CI
    clears the bound, not reproduced when any one lies wholly under it, else not decided at this n."""
    from .claims import ClaimTest, decide

    bound = ClaimTest(rule="at_least", bound=at_least * 100, bound_reason=f"the paper's {at_least * 100:g} %")
    out = []
    for (link, rtt, on), rs in sorted(group(imps, "link", "rtt_ms", "on").items()):
        if rtt <= rtt_over_ms:
            continue
        small = [r for r in rs if r["size"] < sizes_under]
        if not small:
            continue
        least = least_improvement(small)
        out.append({"link": link, "rtt_ms": rtt, "on": on, "sizes": [r["size"] for r in small],
                    "least": least.mean / 100, "least_ci": least.ci95 and [x / 100 for x in least.ci95],
                    "n": least.n, "mean": statistics.fmean(r["improvement"] for r in small),
                    "short_of_20pct": [r["size"] for r in small if r["improvement"] <= at_least],
                    "verdict": decide(bound, least).verdict})
    return out


def link_traits(records: list[dict]) -> list[dict]:
    """Per link (and RTT): the bursts seen at the client, rate against the trace, queue depth."""
    out = []
    for (link, rtt), rs in sorted(group(records, "link", "rtt_ms").items()):
        b = [r["bursts"] for r in rs if r["bursts"] and r["bursts"].get("bursts")]
        lf = [r["link_fidelity"] for r in rs if r["link_fidelity"]]
        peaks = [r["queue_peak_pkts"] for r in rs]
        ratios = [x["delivered_over_allowed"] for x in lf if x["delivered_over_allowed"] is not None]
        out.append({
            "link": link, "rtt_ms": rtt, "runs": len(rs),
            "burst_mean": statistics.fmean(x["mean"] for x in b) if b else None,
            "burst_p90": statistics.median(x["p90"] for x in b) if b else None,
            "burst_max": max(x["max"] for x in b) if b else None,
            "rate_ratio_min": min(ratios) if ratios else None, "rate_ratio_max": max(ratios) if ratios else None,
            "bin_error_p95_frames": max((x["bin_error_frames_p95_abs"] for x in lf
                                         if x["bin_error_frames_p95_abs"] is not None), default=None),
            "queue_max": max((x["queue_max_pkts"] for x in lf), default=None),
            "queue_mean": statistics.fmean(x["queue_mean_pkts"] for x in lf) if lf else None,
            # The qdisc's own count, when every run has one (a kernel without our patches has none).
            "queue_peak": None if None in peaks else max(peaks),
            "link_ok": sum(1 for x in lf if x["ok"]), "link_checked": len(lf),
            "fidelity_ok": sum(r["fidelity_ok"] for r in rs)})
    return out


# -- tables ----------------------------------------------------------------

def mean_pm(d: dict, digits: int, scale: float = 1.0) -> str:
    """A described value (stats.describe) as "mean ±half-width of its 95 % CI" (the mean alone at n = 1),
    times @scale; a dash for none."""
    if not d or not d["n"]:
        return "–"
    if d["ci95"]:
        return f"{d['mean'] * scale:.{digits}f} ±{(d['ci95'][1] - d['ci95'][0]) / 2 * scale:.{digits}f}"
    return f"{d['mean'] * scale:.{digits}f}"


def traits_table(traits: list[dict]) -> str:
    lines = ["| link | RTT (ms) | runs | burst at the client: mean / p90 / max (segments) | delivered / trace "
             "(busy bins), min–max | per-bin error p95 (frames) | queue at the bins' ends: mean / largest "
             "(frames) | queue's peak (pkts) | link fidelity ok | all fidelity ok |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def f(x, d=2):
        return "–" if x is None else f"{x:.{d}f}"
    for t in traits:
        lines.append(f"| {t['link']} | {t['rtt_ms']:g} | {t['runs']} | {f(t['burst_mean'], 1)} / "
                     f"{f(t['burst_p90'], 0)} / {f(t['burst_max'], 0)} | "
                     + ("–" if t["rate_ratio_min"] is None else
                        f"{f(t['rate_ratio_min'], 4)}–{f(t['rate_ratio_max'], 4)}")
                     + f" | {f(t['bin_error_p95_frames'])} | {f(t['queue_mean'], 0)} / "
                     f"{f(t['queue_max'], 0)} | {f(t.get('queue_peak'), 0)} | {t['link_ok']}/{t['link_checked']} | "
                     f"{t['fidelity_ok']}/{t['runs']} |")
    return "\n".join(lines)


def improvement_table(imps: list[dict]) -> str:
    lines = ["| link | RTT (ms) | on | size | n (off/on) | FCT off → on (s) | improvement (off − on) / off | 95% CI |",
             "|---|---|---|---|---|---|---|---|"]
    for r in imps:
        ci = r["improvement_ci"]
        lines.append(f"| {r['link']} | {r['rtt_ms']:g} | {r['on']} | {size_text(r['size'])} | {r['n'][0]}/{r['n'][1]} | "
                     f"{r['fct_off']:.3f} → {r['fct_on']:.3f} | {r['improvement'] * 100:+.1f}% | "
                     + (f"{ci[0] * 100:+.1f}% .. {ci[1] * 100:+.1f}%" if ci else "–")
                     + ("" if r["significant"] else " (n.s.)") + " |")
    return "\n".join(lines)


# -- plots -----------------------------------------------------------------

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _by_size(rows: list[dict], link: str, rtt: float, cc: str) -> list[dict]:
    """One variant's rows of one link and RTT, smallest flow first."""
    return sorted((r for r in rows if r["link"] == link and r["rtt_ms"] == rtt and r["cc"] == cc),
                  key=lambda r: r["size"])


def plot_against_size(rows: list[dict], dest: Path, name: str, metric: str, ylabel: str, title: str,
                      panels: list[tuple[str, float]], ccs: list[str]) -> Path | None:
    """One panel per (link, RTT): @metric's mean against size per variant, the sd shaded."""
    if not rows or not panels:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (link, rtt) in zip(axes[0], panels):
        for cc in ccs:
            rs = _by_size(rows, link, rtt, cc)
            if not rs:
                continue
            x = [r["size"] / 1e6 for r in rs]
            vals = [r[metric]["values"] for r in rs]
            mean = [statistics.fmean(v) if v else float("nan") for v in vals]
            sd = [statistics.stdev(v) if len(v) > 1 else 0.0 for v in vals]
            scale = METRICS[metric].scale
            ax.plot(x, [m * scale for m in mean], marker="o", ms=3, lw=1, label=cc)
            ax.fill_between(x, [(m - s) * scale for m, s in zip(mean, sd)],
                            [(m + s) * scale for m, s in zip(mean, sd)], alpha=0.2)
        ax.set_xscale("log")
        ax.set_xlabel("flow size (MB)")
        ax.set_title(f"{link}, {rtt:g} ms", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = dest / name
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_link_figure(rows: list[dict], imps: list[dict], dest: Path, link: str, ccs: list[str],
                     mark: float | None) -> Path | None:
    """The SUSS paper's layout for one link type (Figs. 11, 12): FCT against size per RTT (mean, sd
    shaded) over the improvement per size, a bar over @mark (a fraction: the claim's bound) in green
    and a line there."""
    rtts = sorted({r["rtt_ms"] for r in rows if r["link"] == link})
    if not rtts:
        return None
    plt = _plt()
    fig, axes = plt.subplots(2, len(rtts), figsize=(4.4 * len(rtts), 6.4), squeeze=False)
    for col, rtt in enumerate(rtts):
        ax = axes[0][col]
        for cc in ccs:
            rs = _by_size(rows, link, rtt, cc)
            if not rs:
                continue
            x = [r["size"] / 1e6 for r in rs]
            mean = [r["fct"]["mean"] for r in rs]
            ax.plot(x, mean, marker="o", ms=3, lw=1, label=cc)
            ax.fill_between(x, [m - r["fct_sd"] for m, r in zip(mean, rs)],
                            [m + r["fct_sd"] for m, r in zip(mean, rs)], alpha=0.2)
        ax.set_title(f"{link}, base RTT {rtt:g} ms", fontsize=9)
        ax.set_xlabel("flow size (MB)")
        ax.grid(alpha=0.3)
        if col == 0:
            ax.set_ylabel("FCT (s), mean ± sd")
            ax.legend(fontsize=8)
        ax = axes[1][col]
        # The bars: the first SUSS version run (the paper's code when it was run).
        first_on = min((r["on"] for r in imps), default=None)
        ir = sorted((r for r in imps if r["link"] == link and r["rtt_ms"] == rtt and r["on"] == first_on),
                    key=lambda r: r["size"])
        ax.bar([size_text(r["size"]) for r in ir], [r["improvement"] * 100 for r in ir],
               color=["tab:green" if mark is not None and r["improvement"] > mark else "tab:gray" for r in ir])
        if mark is not None:
            ax.axhline(mark * 100, ls="--", lw=0.8, color="k")
        ax.set_ylabel("FCT improvement by SUSS (%)" if col == 0 else "")
        ax.tick_params(axis="x", labelsize=7, rotation=45)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    out = dest / f"fct-{link}.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_link_run(records: list[dict], dest: Path, name: str) -> Path | None:
    """One run per variant: the trace's rate, the rate delivered and the queue, over time."""
    chosen = [r for r in records if r["run"].get("link_replay")]
    if not chosen:
        return None
    plt = _plt()
    fig, axes = plt.subplots(len(chosen), 1, figsize=(8, 2.4 * len(chosen)), squeeze=False, sharex=True)
    for ax, rec in zip(axes[:, 0], chosen):
        s = rate_series(rec["run"]["link_replay"])
        t = [x[0] for x in s]
        ax.step(t, [x[1] for x in s], where="post", lw=0.8, label="trace")
        ax.step(t, [x[2] for x in s], where="post", lw=0.8, label="delivered", alpha=0.8)
        ax.set_ylabel("Mbit/s")
        ax2 = ax.twinx()
        ax2.plot(t, [x[3] for x in s], color="tab:red", lw=0.7, label="queue")
        ax2.set_ylabel("queue (frames)", color="tab:red")
        ax.set_title(f"{rec['setting']} {rec['size_label']} rep {rec['rep']}: FCT {rec['fct_s']:.2f} s, "
                     f"lost {rec['lost']}, trace from {rec['trace_offset_s']} s", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    axes[-1][0].set_xlabel("time since the run began (s)")
    fig.tight_layout()
    out = dest / name
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def least_improvement(imps: list[dict]) -> Measured:
    """The least of E4's improvements (lastmile.improvements: fractions, Welch's CI, n per arm) in
    percent, for a claim over all of them ("in all"): its CI runs from the least lower end to the least
    upper end, so that `at_least` calls it reproduced only when every one clears the bound and not
    reproduced when any one lies wholly below it."""
    points = [Point("", i["improvement"] * 100, i.get("improvement_ci") and
                    (i["improvement_ci"][0] * 100, i["improvement_ci"][1] * 100), min(i["n"])) for i in imps]
    least, ci = extreme(points)
    return Measured(least.value, min(min(i["n"]) for i in imps), ci, "", points=tuple(points))
