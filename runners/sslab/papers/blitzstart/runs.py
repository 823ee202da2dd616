"""E9's runs as records, for the report its experiment file describes (experiments/blitzstart.yaml).

Input: run directories of the four links' parts (one per link), each written by `sslab run blitzstart`;
several directories of one link pool their repetitions.  One record per run, of its measured flow
(pair 2, the one started beside the long flow):
  fct_s      the client's: connect() to the last byte.
  lost       its segments that crossed the bottleneck more than once (a drop at the bottleneck is seen
             after it only as the retransmission; spurious retransmissions would count too).
  fairness   its new bytes over the long flow's, both counted at the bottleneck from its SYN to its
             last new data (the report's ratio; 1 = equal shares).
The report's changes against the standard start, its numbers beside ours and their verdicts are the
engine's (sslab.analysis.change_table): this module only reads the runs.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...analysis.archive import runs_of
from ...analysis.pcap import analyse_pcap_ports, new_bytes_between
from ...analysis.plugins import Metric, Records
from ...records import read_record

_SCENARIO = re.compile(r"^e9-blitzstart-(?P<link>[a-z0-9-]+)$")


def _measured_run(rdir: Path, run: dict) -> dict:
    """One run's measured flow (pair 2): FCT, losses and the fairness ratio."""
    long_flow, short = run["flows"][0], run["flows"][1]
    pcap = rdir / run["pcap"]
    views = analyse_pcap_ports(pcap, [long_flow["port"], short["port"]])
    sv = views[short["port"]]
    fairness = None
    if sv.syn_ts is not None and sv.last_new_data_ts is not None:
        got = new_bytes_between(pcap, [long_flow["port"], short["port"]], sv.syn_ts, sv.last_new_data_ts)
        fairness = got[short["port"]] / got[long_flow["port"]] if got[long_flow["port"]] else None
    return {"fct_s": short["fct_s"], "lost": sv.retransmitted_segments, "fairness": fairness,
            "hint_bytes_per_s": short.get("hint_bytes_per_s"), "cc": short.get("cc_used")}


def load_link(run_dir: Path) -> list[dict]:
    """One record per run of one link's run directory: its link's name and traits, the run's start
    (`std` or a hint: "0.5x") and size, and its measured flow's quantities."""
    plan = read_record(run_dir / "plan.json", "sslab.plan")
    m = _SCENARIO.match(plan["name"])
    if not m:
        raise ValueError(f"{run_dir}: not an E9 run (scenario {plan['name']!r})")
    link = {"link": m["link"], "rate_mbit": plan["bottleneck"]["rate_mbit"],
            "buffer_pkts": plan["bottleneck"]["buffer_pkts"], "rtt_ms": plan["pairs"][1]["rtt_ms"]}
    records = []
    for run, rdir in runs_of(run_dir):
        params = run["run"]["params"]
        records.append({**link, "start": params["start"], "size": params["size"], "rep": run["run"]["rep"],
                        **_measured_run(rdir, run)})
    return records


RECORDS = Records(
    "blitzstart", load_link,
    keys={"link": ("link", str), "size": ("size", str), "start": ("hint", str)},
    metrics={"fct": Metric("fct_s", "FCT", 3, unit="s"), "lost": Metric("lost", "lost", 1),
             "fairness": Metric("fairness", "fairness", 2)},
    group_fields=("rate_mbit", "rtt_ms", "buffer_pkts"))
