"""The report of a scenario run (E1 `make startup` and any scenario), from its archive alone.

Input: a run directory written by `sslab startup` (or any scenario run):
job/out/fidelity.json, job/out/runs/<tag>/run.json, <tag>/flow.pcap and
<tag>/flow.trace.gz.  Output: summary.json, report.md and PNG plots in the
run directory.  Nothing here needs the substrate, so `sslab report DIR`
rebuilds every table and plot from the archive, into a new directory.

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

import json
import sys
from pathlib import Path

from ..records import read_record, read_runs_index, stamped
from .. import paths
from ..ccas import recorded_hystart, recorded_suss_version, suss_tag, variant_label
from ..scenario import parse_size
from ..substrate import spinguard
from ..substrate.spinguard import Charge
from .capturecheck import agreement_line
from .fidelity import run_passes
from .conditions import run_conditions
from .setting import setting_of
from .html import write_html
from .interactive import append_fct_page, dynamics_page
from .plots import plot_cwnd_rtt, plot_delivered_overlay, plot_dynamics, plot_goodput
from .pcap import GOODPUT_BIN_S, analyse_pcap_ports
from .stats import describe
from .tidy import write_flows_table
from .traces import trace_series
from .claims import append_report_claims


def load_runs(out_dir: Path) -> list[dict]:
    index = read_runs_index(out_dir / "runs.json")
    runs = []
    for entry in index:
        rdir = out_dir / "runs" / entry["tag"]
        run = read_record(rdir / "run.json", "sslab.run")
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
        versions = sorted({v for f in first if (v := recorded_suss_version(f)) is not None})
        cases[name] = {
            "params": rs[0]["run"].get("params", {}),
            # The SUSS version the case's flow ran (its run records'), when it is a SUSS flow.
            "suss_version": versions[0] if len(versions) == 1 else (versions or None),
            # The HyStart a cubic_hs flow ran (its rounds: Linux 5.19's or 6.1.192's).
            **({"hystart": h} if first and (h := recorded_hystart(first[0])) else {}),
            "fct_app_s": describe([f["fct_s"] for f in first]),
            "fct_pcap_s": describe([f.get("fct_pcap_s") for f in first]),
            "lost_packets": describe([r["bottleneck"]["drops"] for r in rs]),
            "retransmissions": describe([sum(c["RetransSegs"] for c in r["tcp_counters"].values()) for r in rs]),
            "slow_start_exit_cwnd": describe([(f["slow_start"] or {}).get("exit_cwnd") for f in first]),
            "receiver_limited_runs": sum(1 for f in first if f["receiver_limited_acks"]),
            "fidelity_ok_runs": sum(1 for r in rs if run_passes(r)),
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


def matrix_sizes(cases: dict) -> tuple[str | None, str | None]:
    """The smallest and largest transfer sizes among the cases (E1: 5MB, 20MB)."""
    sizes = sorted({c["params"]["size"] for c in cases.values() if "size" in c["params"]}, key=parse_size)
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
        version = next((c["suss_version"] for c in (small, large) if c and c.get("suss_version") is not None), None)
        rows.append({"cc": cc, "label": variant_label(cc, version if isinstance(version, int) else None),
                     "suss_version": version, "small_size": small_size, "large_size": large_size,
                     "fct_small": small and small["fct_app_s"], "fct_small_pcap": small and small["fct_pcap_s"],
                     "lost_large": large and large["lost_packets"], "retrans_large": large and large["retransmissions"],
                     "exit_cwnd_large": large and large["slow_start_exit_cwnd"], "fidelity_ok": ok, "runs": n})
    lines = [f"| variant | FCT {small_size}, s (app) | FCT {small_size}, s (pcap) | lost packets, {large_size} | "
             f"retransmissions, {large_size} | slow-start exit cwnd, {large_size} | runs passing fidelity |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['label']} | {_fmt(r['fct_small'], digits=3)} | {_fmt(r['fct_small_pcap'], digits=3)} | "
                     f"{_fmt(r['lost_large'], digits=0)} | {_fmt(r['retrans_large'], digits=0)} | "
                     f"{_fmt(r['exit_cwnd_large'], digits=0)} | {r['fidelity_ok']}/{r['runs']} |")
    return rows, "\n".join(lines)


def case_table(cases: dict) -> str:
    """A per-case table, for scenarios that are not a size x variant matrix."""
    lines = ["| case | FCT, s (app, first flow) | FCT, s (pcap) | lost packets | retransmissions | "
             "slow-start exit cwnd | runs receiver-limited | runs passing fidelity |",
             "|---|---|---|---|---|---|---|---|"]
    for name, c in cases.items():
        if isinstance(c.get("suss_version"), int):
            name = f"{name} (SUSS {suss_tag(c['suss_version'])})"
        lines.append(f"| {name} | {_fmt(c['fct_app_s'], digits=3)} | {_fmt(c['fct_pcap_s'], digits=3)} | "
                     f"{_fmt(c['lost_packets'], digits=0)} | {_fmt(c['retransmissions'], digits=0)} | "
                     f"{_fmt(c['slow_start_exit_cwnd'], digits=0)} | {c['receiver_limited_runs']}/{c['runs']} | "
                     f"{c['fidelity_ok_runs']}/{c['runs']} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# the report of a run
# --------------------------------------------------------------------------


def lans_text(fidelity: dict) -> str:
    """How each side's hosts reached their router, from the topology's fidelity record."""
    if fidelity.get("lans") != "ovs":
        return ""
    version = (fidelity.get("backend_versions") or {}).get("openvswitch", "?")
    modes = sorted(set((fidelity.get("switches") or {}).values()))
    return f", each side's hosts on an Open vSwitch {version} switch ({'; '.join(modes) or '?'})"


def shared_boot_line(boot: dict) -> str:
    """What a run record of a shared boot (meta.json's "boot") says of it."""
    where = (f"- shared boot: repetition {boot['position'] + 1} of {boot['shared_by']} run in one boot "
             f"(the boot's entropy seed {boot['entropy_seed']}, the first's), one topology and fidelity check; ")
    if boot["same_as_alone"]:
        return where + "the first, so these runs are the ones this scenario gives alone"
    return where + ("after the repetitions before it: its start offsets and case order are its own seed's, the "
                    "guest's random numbers and clock went on from those before, so its bytes are not the "
                    "ones it gives alone")


def spin_guard_line(meta: dict, found: list[Charge], runs: list[dict]) -> str | None:
    """What the UML spin guard did in this job (@found: its charges in the boot), or None without one."""
    if not spinguard.ran_guarded(meta):
        return None
    head = f"- spin guard ({spinguard.INTERVAL_MS} ms of host CPU in user mode): "
    if not found:
        return head + "never charged a tick: every run is the one its seed gives on any host"
    charged = [r for r in runs if r["fidelity"].get("spin_guard_charges")]
    in_runs = sum(r["fidelity"]["spin_guard_charges"] for r in charged)
    tasks = ", ".join(sorted({c.task for c in found}))
    return head + (f"charged {len(found)} tick(s) in the boot ({tasks}), {in_runs} of them during the traffic of "
                   f"{len(charged)} of {len(runs)} runs: a run during or after a charge is not its seed's alone, for "
                   f"how much a guard interval holds depends on the host's speed (images/uml/README.md, \"The spin "
                   f"guard\")")


def write_report(run_dir: Path, dest: Path) -> dict:
    """summary.json, report.md and plots in @dest, from @run_dir's archive only."""
    out = run_dir / "job" / "out"
    meta = read_record(run_dir / "meta.json", "sslab.meta")
    fidelity = json.loads((out / "fidelity.json").read_text())
    runs = load_runs(out)
    cases = summarise(runs)
    small, large = matrix_sizes(cases)
    rows, table = startup_table(cases) if small else ([], case_table(cases))
    if not rows:
        # Cases that are not variants (no `cc` parameter): one row per case.
        table = case_table(cases)
    setting = setting_of(run_dir)
    marks = setting.marks
    plots = [p for p in (plot_dynamics(runs, dest, large, marks=marks), plot_cwnd_rtt(runs, dest, large, marks=marks),
                         plot_goodput(runs, dest, large, marks=marks),
                         plot_delivered_overlay(runs, dest, small),
                         plot_dynamics(runs, dest, small, marks=marks)) if p] if small else []
    summary = {"scenario": setting.name, "cases": cases, "startup": rows,
               "startup_table_md": table,
               "fidelity": fidelity,
               "runs": [{"tag": r["dir"].name, "fct_s": r["flows"][0]["fct_s"], "lost": r["bottleneck"]["drops"],
                         "fidelity": r["fidelity"]} for r in runs]}
    for c in summary["cases"].values():
        for v in c.values():
            if isinstance(v, dict):
                v.pop("values", None)
    (dest / "summary.json").write_text(json.dumps(stamped("sslab.summary", summary), indent=1,
                                                  sort_keys=True))
    rtt = fidelity["rtt"]
    rtts = ", ".join(f"{v:.2f}" for v in rtt["measured_ms"].values())
    pair_rtts = ", ".join(f"{r:g}" for r in setting.pair_rtts_ms)
    lines = [
        f"# {setting.name}",
        "",
        setting.description,
        "",
        f"- bottleneck {setting.rate_mbit:g} Mbit/s, buffer {setting.buffer} = {setting.buffer_pkts} packets;"
        f" pair RTTs {pair_rtts} ms; BDP {marks.bdp_pkts:.0f} packets at {min(setting.pair_rtts_ms):g} ms, BDP +"
        f" buffer {marks.limit_pkts:.0f} (a window above it overflows the queue)",
        f"- {setting.repetitions} repetition{'' if setting.repetitions == 1 else 's'}, order {setting.order}; substrate {meta['substrate']}"
        f" ({meta.get('accelerator') or 'native'}), topology built with {fidelity.get('backend', 'netns')}"
        # The kernel that ran is in "ran under" below (the image's own Debian kernel boots QEMU, not UML).
        f"{lans_text(fidelity)}; image {meta.get('image', {}).get('hash', '?')[:12]}; code {meta['code']['commit'][:12]}"
        f"{' (dirty)' if meta['code']['dirty'] else ''}",
        f"- fidelity: idle base RTT per pair {rtts} ms after calibration (the substrate added"
        f" {rtt['substrate_excess_ms']} ms, taken off the delay lines: {rtt['delay_offset_ms']} ms each way);"
        f" saturating rate"
        f" {fidelity['rate']['measured_mbit']} Mbit/s of {fidelity['rate']['configured_mbit']:g}"
        f" ({'ok' if fidelity['rate']['ok'] else 'OFF BY MORE THAN 1%'})",
        "",
        agreement_line(runs),
        f"- ran under: {run_conditions(meta, setting, list(cases.values()), runs)}",
        *([shared_boot_line(meta["boot"])] if meta.get("boot") else []),
        *([line] if (line := spin_guard_line(meta, spinguard.console_charges(out.parent), runs)) else []),
        "",
        repetitions_line(cases),
        "",
        table,
        "",
        "FCT (app): client, connect() to last byte. FCT (pcap): at the bottleneck, client SYN to the last new"
        " data segment. Lost: packets dropped at the bottleneck queue. Exit cwnd: largest cwnd while ssthresh"
        " was infinite (tcp:tcp_probe). A run passes fidelity when its measured base RTT is within 0.5 ms of"
        " the configured one, the saturating rate within 1%, and tshark reads every flow of its capture as our"
        " parser does (when checked). Plots measure every variant alike, ours and the kernel's: cwnd and the"
        " packets outstanding (snd_nxt - snd_una) and the data acknowledged from tcp:tcp_probe, on one clock"
        " (the flow's first ACK at zero), the data delivered past the bottleneck and the goodput from the"
        " capture (the flow's SYN there at zero).",
        "",
    ]
    for p in plots:
        lines += [f"![{p.stem}]({p.name})", ""]
    pages = [p for p in (dynamics_page(runs, dest, large, marks=marks), dynamics_page(runs, dest, small, marks=marks))
             if p] if small else []
    if pages:
        lines += ["To explore (zoom and pan, values on hover, a click on a variant hides it; offline): "
                  + ", ".join(f"[{p.stem}]({p.name})" for p in pages) + ".", ""]
    lines += ["## Runs", "",
              "The queue's peak is the most packets the bottleneck's queue held at once in the run, as the "
              "qdisc itself counted them at every packet it queued (our kernel patches 0007 and 0008; – on a kernel "
              "without it).  The queue is also read every 0.5 s during a run, which misses a peak between "
              "two readings (a 1 s flow has one reading): the next column gives the largest reading and how "
              "many there were.  The peak of the packets outstanding (tcp_probe, every ACK) is the queue plus "
              f"what is on the path's lines: above the BDP ({marks.bdp_pkts:.0f}) it is queued or lost.", "",
              "| run | FCT (s) | lost | queue's peak (pkts) | queue (pkts): largest reading (readings) | "
              "peak outstanding (pkts) | base RTT (ms) | receiver-limited ACKs | fidelity |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        fid = r["fidelity"]
        ok = run_passes(r)
        rwnd = sum(f["receiver_limited_acks"] for f in r["flows"])
        readings = r.get("bottleneck_backlog") or []
        qmax = max((b[1] for b in readings), default=None)
        peak = peak_outstanding(r)
        qpeak = r["bottleneck"].get("peak_pkts")
        lines.append(f"| {r['dir'].name} | {r['flows'][0]['fct_s']:.3f} | {r['bottleneck']['drops']} | "
                     f"{'–' if qpeak is None else qpeak} | "
                     f"{'–' if qmax is None else f'{qmax} ({len(readings)})'} | "
                     f"{'–' if peak is None else f'{peak:.0f}'} | "
                     f"{', '.join(f'{v:.2f}' for v in fid['base_rtt_ms'].values())} | "
                     f"{rwnd if rwnd else 0}{' (FLAGGED)' if rwnd else ''} | "
                     f"{'ok' if ok else 'FLAGGED'}{' (tshark differs)' if fid.get('capture_ok') is False else ''}"
                     f"{f' (spin guard: {n} tick(s))' if (n := fid.get('spin_guard_charges')) else ''} |")
    (dest / "report.md").write_text("\n".join(lines) + "\n")
    append_report_claims(dest / "report.md", run_dir)
    write_flows_table(dest, [run_dir])
    append_fct_page(dest / "report.md", f"{setting.name}: FCT over repetitions")
    write_html(dest / "report.md", [run_dir])
    return summary


def repetitions_line(cases: dict) -> str:
    """What the table's numbers are: medians with a CI where a case ran more than once; a single
    run's own values, said so, where none did."""
    if all(c["runs"] == 1 for c in cases.values()):
        return "One repetition: each value is that run's own; no CI (one needs two repetitions or more)."
    return ("Median [95% CI of the mean, Student t; lower ends below zero shown as 0] over repetitions "
            "(a value without brackets: a case that ran once).")


def peak_outstanding(run: dict) -> float | None:
    """The most packets the first flow had outstanding at any ACK (tcp_probe), or None without a trace."""
    if not run.get("trace"):
        return None
    s = trace_series(run["dir"] / run["trace"], run["flows"][0]["port"])
    return max(s["outstanding"], default=None)


def rebuild_report(run_dir: Path) -> Path:
    """The report of @run_dir written again from its archive, into a new rebuilt-<stamp>/ of it that
    appears whole or not at all (paths.filled_whole); nothing recorded is touched."""
    dest = run_dir / f"rebuilt-{paths.stamp()}"
    with paths.filled_whole(dest) as part:
        write_report(run_dir, part)
    return dest


def print_table(run_dir: Path) -> None:
    summary = read_record(run_dir / "summary.json", "sslab.summary")
    print(summary["startup_table_md"])
    sys.stdout.flush()
