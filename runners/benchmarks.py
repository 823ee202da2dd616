#!/usr/bin/env python3
"""Wall-clock benchmarks of the default substrate (UML, virtual time): `make bench`.

Not a test: timings depend on the machine.  Each benchmark runs the real
command a researcher runs and reports wall time against guest time, read
from the archives the runs leave:

  startup   `make startup REPS=5` (E1, 40 runs): wall / guest of the whole job
  e7cell    one E7 cell (CUBIC, 1 BDP, 100 ms: 13 pairs, 150 MB + 12 x 2 MB,
            SUSS off and on, pcaps and traces on): wall / guest
  table1    `make reproduce-table1 CCA=cubic ITER=2` (16 cells), serial
            (JOBS=1) and parallel (JOBS=<cores>), each into its own results tree
  profile   where a Table 1 cell's wall time goes, by phase (sslab.analysis.profile):
            `make reproduce-table1 CCA=cubic ITER=1` (8 cells, JOBS=<cores>) into its
            own results tree, or the cells of --matrix DIR as they are
  cell      a Table 1 cell's wall time by phase, before against after: the four columns at one
            setting (1 BDP, 100 ms, ITER=2: 8 cells, JOBS=1, so each phase's wall time is one
            core's), run by the tree at --base (a git worktree of it, this tree's Python
            environment) and then by this tree, one after the other; each phase's mean per
            cell both ways and their ratio, and the share that is not traffic
  umlperf   where a UML testbed's host CPU goes during traffic (sslab.analysis.hostperf):
            one E7 cell (experiments/scenarios/e7-cell.yaml), `perf record -a -g` over its
            first run's traffic (its console's marks), split into guest kernel work (from
            the UML kernel's System.map), the host kernel's work for UML (ptrace,
            stops, file I/O) and user code; needs `perf` (Debian: linux-perf; root)
  syscalls  what each guest process of one E7 cell (or --scenario FILE) costs UML's ptrace:
            system calls by kind, page faults, signals, per process and per run
            (sslab.analysis.syscount), the job run under sslab-syscount
            (images/tools/sslab-syscount.c, built here with gcc -static); an observer,
            so its runs are this benchmark's only
  vmboot    the QEMU substrate's warm boot: `make vm-check SUBSTRATE=vm` five times, one
            after the other; each boot's seconds from QEMU's start to the guest's userspace,
            their median and largest, against the 15 s a warm boot under TCG is meant to
            stay under (a real clock: run it on an otherwise idle machine)
  rxcost    not the testbed: this machine's own kernel's receive cost per TCP
            packet (runners/rxcost.py; root; asked for by name only), the
            number behind the host models' rx_cost

    python3 runners/benchmarks.py [startup] [e7cell] [table1] [profile] [cell] [umlperf] [syscalls] [vmboot] [rxcost]
                                  [--results DIR] [--matrix DIR] [--scenario FILE] [--base REV]

Prints one JSON object per benchmark and writes them to DIR/benchmarks.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from sslab.analysis.profile import cell_profile, mean_profile, profile_table
from sslab.records import read_runs_index

REPO = Path(__file__).resolve().parents[1]
PY = str(REPO / ".venv" / "bin" / "python")


def sslab(args: list[str], results: Path, extra_env: dict | None = None, tree: Path = REPO) -> tuple[float, str]:
    """`python -m sslab ARGS` as @tree's code (this tree's Python environment), results into @results."""
    env = {**os.environ, "SSLAB_RESULTS": str(results), **(extra_env or {})}
    if tree != REPO:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree / "runners"), env.get("PYTHONPATH")) if p)
    t0 = time.monotonic()
    res = subprocess.run([PY, "-m", "sslab", *args], cwd=tree, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if res.returncode != 0:
        raise SystemExit(f"sslab {' '.join(args)} failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    return wall, res.stdout


def run_record(run_dir: Path) -> dict:
    meta = json.loads((run_dir / "meta.json").read_text())
    runs = read_runs_index(run_dir / "job/out/runs.json")
    traffic = sum(json.loads((run_dir / "job/out/runs" / r["tag"] / "run.json").read_text())["seconds"]
                  for r in runs)
    return {"guest_s": meta.get("guest_seconds"), "substrate_wall_s": meta.get("substrate_seconds"),
            "host_trace_s": meta.get("host_trace_seconds"), "runs": len(runs), "runs_guest_s": round(traffic, 1),
            "clock": meta.get("clock")}


def bench_startup(results: Path) -> dict:
    wall, _ = sslab(["startup", "--reps", "5"], results)
    rec = run_record((results / "startup" / "latest").resolve())
    return {"benchmark": "make startup REPS=5", "wall_s": round(wall, 1), **rec,
            "wall_per_guest": round(wall / rec["guest_s"], 3)}


def bench_e7cell(results: Path) -> dict:
    wall, _ = sslab(["startup", "--kind", "e7cell", "--scenario", str(REPO / "experiments/scenarios/e7-cell.yaml")], results)
    rec = run_record((results / "e7cell" / "latest").resolve())
    return {"benchmark": "one E7 cell (experiments/scenarios/e7-cell.yaml), pcaps and traces on", "wall_s": round(wall, 1),
            **rec, "wall_per_guest": round(wall / rec["guest_s"], 3)}


def bench_table1(results: Path) -> list[dict]:
    out = []
    for jobs in (1, len(os.sched_getaffinity(0))):
        tree = results / f"table1-jobs{jobs}"
        wall, stdout = sslab(["matrix", "run", "table1", "--set", "CCA=cubic", "--iter", "2", "--jobs", str(jobs)],
                             tree)
        cells = list((tree / "table1" / "cca-cubic" / "cells").glob("*/cell.json"))
        guest = sum(json.loads((c.parent / "meta.json").read_text()).get("guest_seconds") or 0 for c in cells)
        out.append({"benchmark": f"make reproduce-table1 CCA=cubic ITER=2 JOBS={jobs}", "wall_s": round(wall, 1),
                    "cells": len(cells), "guest_s": round(guest, 1),
                    "wall_per_guest": round(wall / guest, 3) if guest else None})
    return out


def bench_profile(results: Path, matrix: Path | None, by: str | None = None) -> dict:
    wall = None
    if matrix is None:
        jobs = len(os.sched_getaffinity(0))
        tree = results / "profile"
        wall, _ = sslab(["matrix", "run", "table1", "--set", "CCA=cubic", "--iter", "1", "--jobs", str(jobs)], tree)
        matrix = tree / "table1" / "cca-cubic"
    cells = sorted(c.parent for c in matrix.glob("cells/*/cell.json"))
    table = profile_table([cell_profile(c) for c in cells])
    if by:
        # One table per value of the axis @by (Table 1's large_cc: a column each).
        groups: dict[str, list[Path]] = {}
        for c in cells:
            groups.setdefault(json.loads((c / "cell.json").read_text())["setting"].get(by, "?"), []).append(c)
        table += "".join(f"\n\n{by} = {v} ({len(cs)} cells):\n\n" + profile_table([cell_profile(c) for c in cs])
                         for v, cs in sorted(groups.items()))
    (results / "profile.md").write_text(f"Cells of {matrix}\n\n{table}\n")
    print(table, file=sys.stderr)
    return {"benchmark": f"profile of {len(cells)} cell(s) of {matrix}", "matrix_wall_s": wall and round(wall, 1),
            "table": str(results / "profile.md")}


#: BENCH=cell's matrix: Table 1's four columns at one setting, two repetitions, one cell at a time.
CELL_MATRIX = ["matrix", "run", "table1", "--set", "CCA=cubic,bbr,bbr2,bbr3", "--set", "BUF=1BDP",
               "--set", "RTT=100ms", "--iter", "2", "--jobs", "1"]
#: The phases that are the traffic itself; every other phase is what a cell costs besides it.
TRAFFIC_PHASES = ("traffic",)


def _matrix_profile(tree: Path, results: Path) -> tuple[float, dict[str, float]]:
    """Run CELL_MATRIX as @tree's code into @results: make's wall time and each phase's mean wall
    seconds per cell."""
    wall, _ = sslab(CELL_MATRIX, results, tree=tree)
    cells = sorted(c.parent for c in results.glob("table1/*/cells/*/cell.json"))
    if not cells:
        raise SystemExit(f"{results}: the matrix left no cells")
    return wall, mean_profile([cell_profile(c) for c in cells])


def cell_comparison(before: dict[str, float], after: dict[str, float]) -> tuple[str, dict]:
    """Markdown of two per-phase profiles side by side (seconds per cell, after / before) and the record:
    each side's total and the share of it that is not traffic."""
    lines = ["| phase | before (s / cell) | after (s / cell) | after / before |", "|---|---|---|---|"]
    for phase in before:
        b, a = before[phase], after.get(phase, 0.0)
        lines.append(f"| {phase} | {b:.2f} | {a:.2f} | {a / b:.2f} |" if b > 0 else f"| {phase} | {b:.2f} | {a:.2f} | – |")
    record = {}
    for side, p in (("before", before), ("after", after)):
        total = sum(p.values())
        other = total - sum(p.get(k, 0.0) for k in TRAFFIC_PHASES)
        record[side] = {"s_per_cell": round(total, 2), "not_traffic_share": round(other / total, 3) if total else None}
    lines.append(f"| all | {record['before']['s_per_cell']:.2f} | {record['after']['s_per_cell']:.2f} | "
                 f"{record['after']['s_per_cell'] / record['before']['s_per_cell']:.2f} |")
    lines += ["", "Not traffic: " + ", ".join(f"{side} {r['not_traffic_share']:.0%}" for side, r in record.items())]
    return "\n".join(lines), record


def bench_cell(results: Path, base: str) -> dict:
    """BENCH=cell: CELL_MATRIX by the tree at @base, then by this one, one after the other."""
    worktree = results / "base-tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), base], check=True,
                   capture_output=True, text=True)
    try:
        wall_before, before = _matrix_profile(worktree, results / "before")
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)], capture_output=True)
    wall_after, after = _matrix_profile(REPO, results / "after")
    table, record = cell_comparison(before, after)
    (results / "cell.md").write_text(f"{' '.join(CELL_MATRIX)}: before = {base}, after = this tree\n\n{table}\n")
    print(table, file=sys.stderr)
    return {"benchmark": f"BENCH=cell, {' '.join(CELL_MATRIX)}", "base": base, **record,
            "matrix_wall_s": {"before": round(wall_before, 1), "after": round(wall_after, 1)},
            "table": str(results / "cell.md")}


#: The perf sampling event: the CPU clock works in VMs without hardware counters.
PERF_EVENT = "cpu-clock"
#: The console's marks of a run's traffic (sslab.guest.phases): sampling starts at the first run's
#: first and stops at its second, so nothing after it (the run's end, the host reading the run
#: out, tshark) is in the profile.  A fixed window had been: on 30 Nov 2026 the E7 cell's first
#: run's traffic took 1.9 s of wall time, and tshark was 23 % of a 6 s window.
TRAFFIC_MARK = "SSLAB-PHASE flow traffic"
TRAFFIC_DONE_MARK = "SSLAB-PHASE flow traffic-done"


def _wait_for_mark(tree: Path, proc: subprocess.Popen, mark: str, timeout_s: float = 600.0) -> Path:
    """The running job's console.log.times, once it shows @mark (polled every 20 ms)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if proc.poll() is not None:
            raise SystemExit(f"the cell ended (exit {proc.returncode}) before {mark!r} was seen")
        for times in tree.glob("umlperf/*/job/uml/console.log.times"):
            if mark in times.read_text(errors="replace"):
                return times
        time.sleep(0.02)
    raise SystemExit(f"no {mark!r} within {timeout_s:.0f} s")


def _uml_kernel_of(meta: dict) -> tuple[Path, Path]:
    """(the UML binary the job ran, its build's System.map), from the run's meta.json: its image
    and the UML kernel build that image names (manifest `uml.uml_hash`), both in the cache."""
    from sslab import paths
    from sslab.substrate.image import Image
    from sslab.substrate.umlkernel import UMLKernel
    kernel = UMLKernel(paths.cache_dir() / "uml" / meta["image"]["uml"]["uml_hash"])
    if not kernel.is_complete():
        raise SystemExit(f"the UML kernel build {kernel.root} is not in the cache")
    return Image(paths.cache_dir() / "images" / meta["image"]["hash"]).uml_binary, kernel.tree / "System.map"


def bench_umlperf(results: Path) -> dict:
    from sslab.analysis.hostperf import UmlBinary, parse_perf_script, split, split_table
    if shutil.which("perf") is None:
        raise SystemExit("umlperf needs perf (Debian: apt-get install linux-perf)")
    tree = results / "umlperf-results"
    env = {**os.environ, "SSLAB_RESULTS": str(tree)}
    proc = subprocess.Popen([PY, "-m", "sslab", "startup", "--kind", "umlperf", "--scenario",
                             str(REPO / "experiments/scenarios/e7-cell.yaml")], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_for_mark(tree, proc, TRAFFIC_MARK)
    data = results / "perf.data"
    t0 = time.monotonic()
    rec = subprocess.Popen(["perf", "record", "-e", PERF_EVENT, "-a", "-g", "-o", str(data)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_mark(tree, proc, TRAFFIC_DONE_MARK)
    finally:
        rec.send_signal(signal.SIGINT)   # perf writes its data and exits on ^C
        _, rec_err = rec.communicate()
    sampled = time.monotonic() - t0
    out, _ = proc.communicate()
    if rec.returncode not in (0, -signal.SIGINT):
        raise SystemExit(f"perf record failed ({rec.returncode}): {rec_err[-1000:]}")
    if proc.returncode != 0:
        raise SystemExit(f"the cell failed ({proc.returncode}):\n{out[-2000:]}")
    run_dir = (tree / "umlperf" / "latest").resolve()
    binary, system_map = _uml_kernel_of(json.loads((run_dir / "meta.json").read_text()))
    script = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,pid,tid,ip,sym,dso"],
                            capture_output=True, text=True, check=True).stdout
    cats, syms = split(parse_perf_script(script), UmlBinary.load(binary, system_map))
    table = split_table(cats, syms)
    (results / "umlperf.md").write_text(
        f"Host CPU of {run_dir} during its first run's traffic, {sampled:.1f} s of wall time "
        f"(`perf record -e {PERF_EVENT} -a -g`)\n\n{table}\n")
    print(table, file=sys.stderr)
    return {"benchmark": f"host CPU during an E7 cell's first run's traffic ({sampled:.1f} s sampled)", "run": str(run_dir),
            "samples": sum(cats.values()), "shares": {c: round(n / sum(cats.values()), 4) for c, n in cats.items()},
            "table": str(results / "umlperf.md")}


def bench_syscalls(results: Path, scenario: Path | None) -> dict:
    from sslab.analysis.syscount import by_role, cost_table, read_counts
    from sslab.experiment.run import SYSCOUNT_FILE, Compiled, run_scenarios_in_one_boot, scenario_as_run
    from sslab.substrate import make_substrate
    from sslab.substrate.image import SYSCOUNT_PROGRAM, ImageError, compile_on_host, sha256_file
    from sslab.substrate.preflight import preflight
    scenario = scenario or REPO / "experiments/scenarios/e7-cell.yaml"
    try:
        binary = compile_on_host(REPO / SYSCOUNT_PROGRAM, results / "sslab-syscount")
    except ImageError as e:
        raise SystemExit(str(e)) from None
    substrate = make_substrate("uml")
    preflight(substrate, log=lambda m: print(m, file=sys.stderr, flush=True))
    s = Compiled.of(scenario_as_run(scenario))
    run_dir = results / "syscalls-run"
    run_dir.mkdir()
    t0 = time.monotonic()
    run_scenarios_in_one_boot([s], [run_dir], substrate, [{"path": str(scenario), "sha256": sha256_file(scenario)}],
                              syscount=binary)
    wall = time.monotonic() - t0
    runs = len(read_runs_index(run_dir / "job/out/runs.json"))
    costs = by_role(read_counts(run_dir / "job/out" / SYSCOUNT_FILE))
    table = cost_table(costs, runs)
    (results / "syscalls.md").write_text(f"Guest processes of {run_dir} ({s.name}, {runs} runs; counted under "
                                         f"sslab-syscount, {wall:.0f} s of wall time)\n\n{table}\n")
    print(table, file=sys.stderr)
    return {"benchmark": f"system calls, faults and signals per guest process of {scenario.name}", "run": str(run_dir),
            "runs": runs, "wall_s": round(wall, 1),
            "per_run": {c.role: {"starts": c.images / runs, "syscalls": c.total_syscalls / runs,
                                 "faults": (c.minflt + c.majflt) / runs, "signals": c.total_signals / runs}
                        for c in costs},
            "table": str(results / "syscalls.md")}


VM_WARM_BOOT_TARGET_S = 15.0   # what a warm QEMU/TCG boot to userspace is meant to stay under
VM_BOOTS = 5


def bench_vmboot(results: Path) -> dict:
    """BENCH=vmboot: VM_BOOTS warm boots of the QEMU substrate (vm-check), one after the other."""
    boots = []
    for _ in range(VM_BOOTS):
        _, stdout = sslab(["vm-check", "--substrate", "vm"], results)
        boots.append(json.loads(stdout.strip().splitlines()[-1]))
    to_userspace = sorted(b["seconds_to_userspace"] for b in boots)
    return {"benchmark": f"make vm-check SUBSTRATE=vm, {VM_BOOTS} warm boots", "accelerator": boots[0]["accelerator"],
            "clock": boots[0]["clock"], "host_cpu": boots[0]["host"]["cpu_model"],
            "seconds_to_userspace": to_userspace, "median_s": to_userspace[len(to_userspace) // 2],
            "largest_s": to_userspace[-1], "target_s": VM_WARM_BOOT_TARGET_S,
            "all_under_target": to_userspace[-1] < VM_WARM_BOOT_TARGET_S}


def bench_rxcost(results: Path) -> dict:
    res = subprocess.run([PY, str(REPO / "runners" / "rxcost.py"), "--out", str(results / "rxcost.json")],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"rxcost failed ({res.returncode}): {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("which", nargs="*", default=["startup", "e7cell", "table1"],
                    choices=["startup", "e7cell", "table1", "profile", "cell", "umlperf", "syscalls", "vmboot",
                             "rxcost"])
    ap.add_argument("--base", default="HEAD", help="cell: the git revision whose tree runs the matrix first")
    ap.add_argument("--matrix", type=Path, help="profile: the cells of this matrix tree, run before")
    ap.add_argument("--by", help="profile: a table per value of this axis too (large_cc: Table 1's columns)")
    ap.add_argument("--scenario", type=Path, help="syscalls: this scenario file instead of one E7 cell")
    ap.add_argument("--results", default=str(REPO / "results" / "benchmarks" / time.strftime("%Y%m%dT%H%M%SZ",
                                                                                             time.gmtime())))
    a = ap.parse_args()
    if "cell" in a.which and subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet",
                                             f"{a.base}^{{commit}}"], capture_output=True).returncode != 0:
        print(f"error: BASE={a.base}: not a commit of this repository (BENCH=cell runs its tree first)", file=sys.stderr)
        return 2
    results = Path(a.results)
    results.mkdir(parents=True, exist_ok=True)
    found = []
    for name in a.which:
        fn = {"startup": bench_startup, "e7cell": bench_e7cell, "table1": bench_table1,
              "profile": lambda r: bench_profile(r, a.matrix, a.by), "cell": lambda r: bench_cell(r, a.base),
              "umlperf": bench_umlperf,
              "syscalls": lambda r: bench_syscalls(r, a.scenario),
              "vmboot": bench_vmboot, "rxcost": bench_rxcost}[name]
        got = fn(results)
        for r in (got if isinstance(got, list) else [got]):
            print(json.dumps(r), flush=True)
            found.append(r)
    (results / "benchmarks.json").write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
