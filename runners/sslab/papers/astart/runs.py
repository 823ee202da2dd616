"""E8's runs as records, for the report its experiment file describes (experiments/astart.yaml).

Input: run directories of the e8-astart parts (one single-flow scenario per setting of capacity, RTT
and buffer, experiments/astart.yaml), of its Fig. 12 part (e8-astart-liw.yaml) and of its fairness
part (e8-astart-fairness.yaml).  One record per run, of its first flow unless said:
  throughput   the data bytes the client received in the flow's duration after its handshake (20 s:
               the paper's "first 20 seconds"), Mbit/s of payload.
  utilisation  the link's share the flow's frames used: throughput x frame / MSS over the link rate
               (1000-byte segments in 1066-byte frames; the paper's ns-2 packets had no separate
               headers).
  exit / BDP   the largest cwnd while ssthresh was still infinite (tcp_probe), over the BDP in frames
               (Vegas, Table 3).
  Jain         (sum x)^2 / (n sum x^2) over every flow's throughput (the fairness runs' ten).
  drops        the bottleneck's.
The tables, the paper's values beside ours and their verdicts are the engines' (sslab.analysis.
value_table); this module only reads the runs.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...analysis.archive import runs_of
from ...analysis.plugins import Metric, Records
from ...analysis.stats import jain
from ...records import read_record

_SCENARIO = re.compile(r"^e8-astart-(?P<setting>.+)$")


def bytes_by(rx_series: list[list[float]], seconds: float) -> float:
    """Bytes the client had received @seconds after its connect() returned (the series' first
    sample), interpolated between the samples around it."""
    t0 = rx_series[0][0]
    prev = rx_series[0]
    for t, b in rx_series:
        if t - t0 >= seconds:
            if t == prev[0]:
                return b
            return prev[1] + (b - prev[1]) * (t0 + seconds - prev[0]) / (t - prev[0])
        prev = (t, b)
    return prev[1]


def _flow(f: dict, mss: int, frame: int, rate_mbit: float) -> dict:
    secs = f.get("duration") or f.get("fct_s")
    # What arrived in the first @secs after the handshake (the paper's "first 20 s"), not what was sent
    # in them: the queue and the pipe drain after the sender stops.
    mbit = bytes_by(f["rx_series"], secs) * 8 / secs / 1e6
    return {"cc": f["cc"], "throughput_mbit": mbit, "seconds": secs,
            "utilisation_pct": 100 * mbit * frame / mss / rate_mbit,
            "exit_cwnd": (f.get("slow_start") or {}).get("exit_cwnd")}


def load(run_dir: Path) -> list[dict]:
    """One record per run of one E8 part's run directory."""
    plan = read_record(run_dir / "plan.json", "sslab.plan")
    m = _SCENARIO.match(plan["name"])
    if not m:
        raise ValueError(f"{run_dir}: not an E8 run (scenario {plan['name']!r})")
    mtu = plan["topology"].get("mtu", 1500)
    rate, rtt = plan["bottleneck"]["rate_mbit"], plan["pairs"][0]["rtt_ms"]
    bdp = rate * 1e6 * rtt / 1e3 / 8 / (mtu + 14)
    setting = {"setting": m["setting"], "rate_mbit": rate, "rtt_ms": rtt, "mtu": mtu,
               "buffer_bdp": round(plan["bottleneck"]["buffer_pkts"] / bdp, 2)}
    out = []
    for run, _ in runs_of(run_dir):
        flows = [_flow(f, mtu - 52, mtu + 14, rate) for f in run["flows"]]
        first = flows[0]
        out.append({**setting, "case": run["run"]["case"], "rep": run["run"]["rep"],
                    "seconds": round(first["seconds"]), "throughput_mbit": first["throughput_mbit"],
                    "utilisation_pct": first["utilisation_pct"],
                    "exit_bdp": None if first["exit_cwnd"] is None else first["exit_cwnd"] / bdp,
                    "drops": run["bottleneck"]["drops"], "jain": jain([f["throughput_mbit"] for f in flows]),
                    "flows": [{"cc": f["cc"], "throughput_mbit": f["throughput_mbit"]} for f in flows]})
    return out


def _g(v) -> str:
    return f"{v:g}"


RECORDS = Records(
    "astart", load,
    keys={"setting": ("setting", str), "case": ("start", str), "rate_mbit": ("Mbit/s", _g),
          "rtt_ms": ("RTT (ms)", _g), "buffer_bdp": ("buffer (BDP)", _g)},
    metrics={"throughput": Metric("throughput_mbit", "throughput", 2, unit="Mbit/s"),
             "utilisation": Metric("utilisation_pct", "utilisation", 1, unit="%"),
             "exit": Metric("exit_bdp", "exit window / BDP", 3, unit="ratio"),
             "drops": Metric("drops", "drops", 0),
             "jain": Metric("jain", "Jain's index", 4)},
    group_fields=("seconds",))
