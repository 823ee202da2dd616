"""Behaviour checks of our congestion controls on real stacks (runs on the substrate).

What the kernel-module issue asks to show, on a one-pair dumbbell:

  hs-vs-cubic  50 Mbit/s, 100 ms, 1 BDP: cubic_hs against the kernel's
               cubic, one 20 MB flow, runs alternated; slow-start exit cwnd
               and FCT of each run;
  overshoot    same path: cubic_ss (losses at the bottleneck expected) and
               cubic_hspp (CSS expected before its exit);
  suss         50 Mbit/s, 50 ms, 1 BDP: cubic_suss and cubic_hs alternated;
               SUSS's per-round events.

Writes $SSLAB_OUT_DIR/ccbehaviour.json and the traces.  The arguments pick
parts and repetitions:  python3 -m sslab.guest.ccbehaviour [--reps N] [--parts a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from .dumbbell import Dumbbell, DumbbellSpec, PairSpec, bdp_packets
from .flows import MAX_FLOWS, SERVER_PORT, run_flow
from .ftrace import Ftrace

#: One tracer for the job: events are enabled once (see Ftrace).
TRACER = Ftrace()

MB = 1_000_000


def path(rate: float, rtt: float) -> Dumbbell:
    return Dumbbell(DumbbellSpec(rate_mbit=rate, buffer_pkts=bdp_packets(rate, rtt),
                                 pairs=[PairSpec(rtt_ms=rtt)])).build()


def alternate(db: Dumbbell, ccs: list[str], reps: int, nbytes: int, out: Path, part: str) -> list[dict]:
    runs = []
    for rep in range(reps):
        for cc in ccs:
            r = run_flow(db, 1, cc, nbytes, out / "traces", f"{part}-{cc}-{rep}", tracer=TRACER)
            r["rep"] = rep
            runs.append(r)
            ss = r["slow_start"] or {}
            c = r["tcp_counters"]
            print(f"{part} {cc} rep {rep}: fct {r['fct_s']:.3f} s, exit cwnd {ss.get('exit_cwnd')}, "
                  f"undone {ss.get('undone_reductions')}, drops {r['bottleneck_drops']}, "
                  f"retrans {r['retrans_segs']}, reorder {c['TCPSACKReorder'] + c['TCPTSReorder']}, "
                  f"dsack {c['TCPDSACKRecv']}", flush=True)
    return runs


def medians(runs: list[dict], cc: str) -> dict:
    mine = [r for r in runs if r["cc"] == cc]
    exits = [r["slow_start"]["exit_cwnd"] for r in mine if r["slow_start"]]
    return {
        "runs": len(mine),
        "fct_s_median": statistics.median(r["fct_s"] for r in mine),
        "exit_cwnd_median": statistics.median(exits) if exits else None,
        "drops_median": statistics.median(r["bottleneck_drops"] for r in mine),
        "retrans_median": statistics.median(r["retrans_segs"] for r in mine),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--parts", default="hs-vs-cubic,overshoot,suss")
    ap.add_argument("--bytes", type=int, default=20 * MB)
    a = ap.parse_args(argv)
    out = Path(os.environ.get("SSLAB_OUT_DIR", "."))
    subprocess.run(["modprobe", "tcp_sslab"], check=True)
    TRACER.setup(SERVER_PORT, SERVER_PORT + MAX_FLOWS - 1)
    parts = a.parts.split(",")
    result: dict = {"kernel_release": os.uname().release, "bytes": a.bytes, "parts": {}}

    if "hs-vs-cubic" in parts or "overshoot" in parts:
        db = path(50, 100)
        spec = {"rate_mbit": 50, "rtt_ms": 100, "buffer_pkts": db.spec.buffer_pkts}
        if "hs-vs-cubic" in parts:
            runs = alternate(db, ["cubic", "cubic_hs"], a.reps, a.bytes, out, "hs-vs-cubic")
            result["parts"]["hs-vs-cubic"] = {"path": spec, "runs": runs,
                                              "cubic": medians(runs, "cubic"),
                                              "cubic_hs": medians(runs, "cubic_hs")}
        if "overshoot" in parts:
            runs = alternate(db, ["cubic_ss", "cubic_hs", "cubic_hspp"], 1, a.bytes, out, "overshoot")
            result["parts"]["overshoot"] = {"path": spec, "runs": runs}
        db.teardown()

    if "smoke" in parts:
        # A quick look at every variant (the integration tests use it).
        db = path(50, 50)
        spec = {"rate_mbit": 50, "rtt_ms": 50, "buffer_pkts": db.spec.buffer_pkts}
        runs = alternate(db, ["cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss"], 1, 3 * MB, out, "smoke")
        result["parts"]["smoke"] = {"path": spec, "runs": runs}
        db.teardown()

    if "suss" in parts:
        db = path(50, 50)
        spec = {"rate_mbit": 50, "rtt_ms": 50, "buffer_pkts": db.spec.buffer_pkts}
        runs = alternate(db, ["cubic_suss", "cubic_hs"], max(1, a.reps // 2 + 1), a.bytes, out, "suss")
        result["parts"]["suss"] = {"path": spec, "runs": runs,
                                   "cubic_suss": medians(runs, "cubic_suss"),
                                   "cubic_hs": medians(runs, "cubic_hs")}
        db.teardown()

    (out / "ccbehaviour.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
