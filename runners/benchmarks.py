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
  rxcost    not the testbed: this machine's own kernel's receive cost per TCP
            packet (runners/rxcost.py; root; asked for by name only), the
            number behind the host models' rx_cost

    python3 runners/benchmarks.py [startup] [e7cell] [table1] [profile] [rxcost] [--results DIR]
                                  [--matrix DIR]

Prints one JSON object per benchmark and writes them to DIR/benchmarks.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from sslab.analysis.profile import cell_profile, profile_table
from sslab.records import read_runs_index

REPO = Path(__file__).resolve().parents[1]
PY = str(REPO / ".venv" / "bin" / "python")


def sslab(args: list[str], results: Path, extra_env: dict | None = None) -> tuple[float, str]:
    env = {**os.environ, "SSLAB_RESULTS": str(results), **(extra_env or {})}
    t0 = time.monotonic()
    res = subprocess.run([PY, "-m", "sslab", *args], cwd=REPO, env=env, capture_output=True, text=True)
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
    wall, _ = sslab(["startup", "--kind", "e7cell", "--scenario", str(REPO / "topologies/e7-cell.yaml")], results)
    rec = run_record((results / "e7cell" / "latest").resolve())
    return {"benchmark": "one E7 cell (topologies/e7-cell.yaml), pcaps and traces on", "wall_s": round(wall, 1),
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


def bench_profile(results: Path, matrix: Path | None) -> dict:
    wall = None
    if matrix is None:
        jobs = len(os.sched_getaffinity(0))
        tree = results / "profile"
        wall, _ = sslab(["matrix", "run", "table1", "--set", "CCA=cubic", "--iter", "1", "--jobs", str(jobs)], tree)
        matrix = tree / "table1" / "cca-cubic"
    cells = sorted(c.parent for c in matrix.glob("cells/*/cell.json"))
    table = profile_table([cell_profile(c) for c in cells])
    (results / "profile.md").write_text(f"Cells of {matrix}\n\n{table}\n")
    print(table, file=sys.stderr)
    return {"benchmark": f"profile of {len(cells)} cell(s) of {matrix}", "matrix_wall_s": wall and round(wall, 1),
            "table": str(results / "profile.md")}


def bench_rxcost(results: Path) -> dict:
    res = subprocess.run([PY, str(REPO / "runners" / "rxcost.py"), "--out", str(results / "rxcost.json")],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"rxcost failed ({res.returncode}): {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("which", nargs="*", default=["startup", "e7cell", "table1"],
                    choices=["startup", "e7cell", "table1", "profile", "rxcost"])
    ap.add_argument("--matrix", type=Path, help="profile: the cells of this matrix tree, run before")
    ap.add_argument("--results", default=str(REPO / "results" / "benchmarks" / time.strftime("%Y%m%dT%H%M%SZ",
                                                                                             time.gmtime())))
    a = ap.parse_args()
    results = Path(a.results)
    results.mkdir(parents=True, exist_ok=True)
    found = []
    for name in a.which:
        fn = {"startup": bench_startup, "e7cell": bench_e7cell, "table1": bench_table1,
              "profile": lambda r: bench_profile(r, a.matrix), "rxcost": bench_rxcost}[name]
        got = fn(results)
        for r in (got if isinstance(got, list) else [got]):
            print(json.dumps(r), flush=True)
            found.append(r)
    (results / "benchmarks.json").write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
