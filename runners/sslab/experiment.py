"""Run a scenario end to end and write its report: `sslab startup`, `sslab report`.

    scenario YAML --validate--> Scenario --to_plan--> plan.json
        --substrate (VM or native)--> job/out/ (fidelity, runs, pcaps, traces)
        --analysis--> summary.json, report.md, plots --> manifest.json

The run directory is new for every run (results/<kind>/<run-id>/) and
`results/<kind>/latest` points at it.  `sslab report DIR` rebuilds the
tables and plots from DIR's archive into a new directory under DIR.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from . import analysis, paths
from .image import sha256_file as sha256
from .scenario import Scenario, load_scenario, scenario_from_dump, to_plan


def code_version() -> dict:
    def git(*args: str) -> str:
        res = subprocess.run(["git", "-C", str(paths.REPO_ROOT), *args], capture_output=True, text=True)
        return res.stdout.strip() if res.returncode == 0 else ""
    return {"commit": git("rev-parse", "HEAD") or "unknown", "dirty": bool(git("status", "--porcelain"))}


#: Reading the per-ACK trace out of the guest costs about this much per MB a
#: run moves (measured under TCG: an E7 run, 174 MB, spent ~44 s past its
#: last byte, mostly formatting and parsing the trace).
TRACE_S_PER_MB = 0.25


def estimate_seconds(s: Scenario) -> float:
    """A generous guess of the substrate time (TCG here), for the timeout and the ETA."""
    rate_bps = s.bottleneck.rate_mbit * 1e6
    per_run = 0.0
    for _, case in s.run_order():
        longest = max((f.start + (f.duration or f.size * 8 / rate_bps * 1.3)) for f in case.flows)
        moved_mb = sum((f.size or f.duration * rate_bps / 8 / len(case.flows)) for f in case.flows) / 1e6
        per_run += longest + 9.0  # servers, captures under TCG
        if s.capture.traces:
            per_run += TRACE_S_PER_MB * moved_mb
    return 60.0 + per_run


def run_scenario(scenario_path: Path, kind: str, substrate, reps: int | None = None) -> Path:
    """`sslab startup`: run a scenario file into a new results/<kind>/<run-id>/."""
    from .cli import new_run_dir

    s = load_scenario(scenario_path)
    if reps is not None:
        s = scenario_from_dump({**s.model_dump(by_alias=True), "repetitions": reps})
    print(f"{s.name}: {len(s.run_order())} runs on {substrate.name}; expected about "
          f"{estimate_seconds(s) / 60:.0f} min", flush=True)
    run_dir = new_run_dir(kind)
    run_scenario_into(s, run_dir, substrate,
                      source={"path": str(scenario_path), "sha256": sha256(Path(scenario_path))})
    write_manifest(run_dir)
    return run_dir


def run_scenario_into(s: Scenario, run_dir: Path, substrate, source: dict) -> None:
    """Run @s on @substrate into the (new, empty) @run_dir and write its report."""
    from .job import JobError, JobSpec

    plan = to_plan(s)
    if plan["topology"]["backend"] == "auto":
        plan["topology"]["backend"] = "mininet" if substrate.name == "vm" else "netns"
    eta = estimate_seconds(s)
    meta = {"scenario": {**source, "model": s.model_dump(mode="json", by_alias=True)},
            "code": code_version(), "substrate": substrate.name,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "run_order": [f"{r['index']:03d}-{r['case']}-r{r['rep']}" for r in plan["runs"]]}
    if substrate.name == "vm":
        m = substrate.image.manifest()
        meta["image"] = {"hash": m["image_hash"], "kernel": m["kernel"], "module": m["module"]}
    (run_dir / "plan.json").write_text(json.dumps(plan, indent=1))
    job = JobSpec(argv=["python3", "-m", "sslab.guest.scenario_run"], timeout_s=eta * 2 + 300,
                  name=s.name, files={"plan.json": json.dumps(plan)})
    t0 = time.monotonic()
    res = substrate.run(job, run_dir / "job")
    meta.update(accelerator=res.accelerator, seconds_to_userspace=res.seconds_to_userspace,
                substrate_seconds=round(time.monotonic() - t0, 1), job_exit_code=res.exit_code,
                job_timed_out=res.timed_out)
    if substrate.name == "vm":
        meta["accel_probe"] = substrate.accel_probe
    (run_dir / "meta.json").write_text(json.dumps(meta, indent=1))
    if not res.ok:
        raise JobError(f"the scenario job failed (exit {res.exit_code}, timed out {res.timed_out}); "
                       f"see {res.out_dir}/stderr.log:\n{res.stderr()[-2000:]}")
    write_report(run_dir, run_dir)


def write_report(run_dir: Path, dest: Path) -> dict:
    """summary.json, report.md and plots in @dest, from @run_dir's archive only."""
    out = run_dir / "job" / "out"
    meta = json.loads((run_dir / "meta.json").read_text())
    fidelity = json.loads((out / "fidelity.json").read_text())
    runs = analysis.load_runs(out)
    cases = analysis.summarise(runs)
    small, large = analysis.matrix_sizes(cases)
    rows, table = analysis.startup_table(cases) if small else ([], analysis.case_table(cases))
    plots = [p for p in (analysis.plot_dynamics(runs, dest, large), analysis.plot_goodput(runs, dest, large),
                         analysis.plot_delivered_overlay(runs, dest, small),
                         analysis.plot_dynamics(runs, dest, small)) if p] if small else []
    summary = {"scenario": meta["scenario"]["model"]["name"], "cases": cases, "startup": rows,
               "startup_table_md": table,
               "fidelity": fidelity,
               "runs": [{"tag": r["dir"].name, "fct_s": r["flows"][0]["fct_s"], "lost": r["bottleneck"]["drops"],
                         "fidelity": r["fidelity"]} for r in runs]}
    for c in summary["cases"].values():
        for v in c.values():
            if isinstance(v, dict):
                v.pop("values", None)
    (dest / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    s = meta["scenario"]["model"]
    rtt = fidelity["rtt"]
    buf = s["bottleneck"]["buffer"]
    buf_text = (f"{buf['bdp']:g} BDP at {buf['rtt'] * 1e3:g} ms" if buf.get("bdp") is not None
                else f"{buf['packets']} packets" if buf.get("packets") is not None else f"{buf['bytes']} bytes")
    rtts = ", ".join(f"{v:.2f}" for v in rtt["measured_ms"].values())
    pair_rtts = ", ".join(f"{p['rtt'] * 1e3:g}" for p in s["pairs"])
    lines = [
        f"# {s['name']}",
        "",
        s.get("description", ""),
        "",
        f"- bottleneck {s['bottleneck']['rate']:g} Mbit/s, buffer {buf_text}"
        f" = {json.loads((run_dir / 'plan.json').read_text())['bottleneck']['buffer_pkts']} packets;"
        f" pair RTTs {pair_rtts} ms",
        f"- {s['repetitions']} repetitions, order {s['order']}; substrate {meta['substrate']}"
        f" ({meta.get('accelerator') or 'native'}), topology built with {fidelity.get('backend', 'netns')}; kernel {meta.get('image', {}).get('kernel', {}).get('release', '?')};"
        f" image {meta.get('image', {}).get('hash', '?')[:12]}; code {meta['code']['commit'][:12]}"
        f"{' (dirty)' if meta['code']['dirty'] else ''}",
        f"- fidelity: idle base RTT per pair {rtts} ms after calibration (the substrate added"
        f" {rtt['substrate_excess_ms']} ms, taken off the delay lines: {rtt['delay_offset_ms']} ms each way);"
        f" saturating rate"
        f" {fidelity['rate']['measured_mbit']} Mbit/s of {fidelity['rate']['configured_mbit']:g}"
        f" ({'ok' if fidelity['rate']['ok'] else 'OFF BY MORE THAN 1%'})",
        "",
        "Median [95% CI of the mean, Student t; lower ends below zero shown as 0] over repetitions.",
        "",
        table,
        "",
        "FCT (app): client, connect() to last byte. FCT (pcap): at the bottleneck, client SYN to the last new"
        " data segment. Lost: packets dropped at the bottleneck queue. Exit cwnd: largest cwnd while ssthresh"
        " was infinite (tcp:tcp_probe). A run passes fidelity when its measured base RTT is within 0.5 ms of"
        " the configured one and the saturating rate within 1%. In-flight plots: the kernel's packets in"
        " flight from our module's trace (sslab_ack) for our congestion controls.",
        "",
    ]
    for p in plots:
        lines += [f"![{p.stem}]({p.name})", ""]
    lines += ["## Runs", "",
              "| run | FCT (s) | lost | max queue (pkts) | base RTT (ms) | receiver-limited ACKs | fidelity |",
              "|---|---|---|---|---|---|---|"]
    for r in runs:
        fid = r["fidelity"]
        ok = fid["base_rtt_ok"] and fid["rate_ok"]
        rwnd = sum(f["receiver_limited_acks"] for f in r["flows"])
        qmax = max((b[1] for b in r.get("bottleneck_backlog") or []), default=None)
        lines.append(f"| {r['dir'].name} | {r['flows'][0]['fct_s']:.3f} | {r['bottleneck']['drops']} | "
                     f"{'–' if qmax is None else qmax} | "
                     f"{', '.join(f'{v:.2f}' for v in fid['base_rtt_ms'].values())} | "
                     f"{rwnd if rwnd else 0}{' (FLAGGED)' if rwnd else ''} | {'ok' if ok else 'FLAGGED'} |")
    (dest / "report.md").write_text("\n".join(lines) + "\n")
    return summary


def write_manifest(run_dir: Path) -> Path:
    meta = json.loads((run_dir / "meta.json").read_text())
    files = {}
    for p in sorted(run_dir.rglob("*")):
        if p.is_file() and p.name != "manifest.json" and not p.is_symlink():
            files[str(p.relative_to(run_dir))] = sha256(p)
    manifest = {**meta, "artifacts": files}
    path = run_dir / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return path


def rebuild_report(run_dir: Path) -> Path:
    dest = run_dir / f"rebuilt-{paths.stamp()}"
    dest.mkdir()
    write_report(run_dir, dest)
    return dest


def print_table(run_dir: Path) -> None:
    summary = json.loads((run_dir / "summary.json").read_text())
    print(summary["startup_table_md"])
    sys.stdout.flush()
