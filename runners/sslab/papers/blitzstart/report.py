"""E9, the Blitzstart report's Table 1, rebuilt from archived runs beside the report's numbers.

Input: run directories of the four links' parts (experiments/blitzstart.yaml, one per link),
each written by `sslab run blitzstart`; several directories of one link
pool their repetitions.  Output: report.md and summary.json in a new directory.

Per link, transfer size and hint, against the standard start (cubic_std) of the same
link and size:
  FCT change    mean FCT of the measured flow (client: connect() to the last byte)
                with the hint, minus without; 95% CI by Welch's t.
  loss change   the same for its lost packets, counted as its segments that crossed
                the bottleneck more than once (a drop at the bottleneck is seen
                after it only as the retransmission; spurious retransmissions
                would count too).
  marks         "n.s." when the CI contains 0 (the report's grey circle); "same RTT"
                when the FCT change is smaller than one base RTT (its orange marks).
  direction     our significant change against the report's sign: agrees or
                DISAGREES; not compared when ours is not significant.
  verdict       the change in magnitude (verdict.py): reproduced when our CI lies
                within 15 % of the report's change (widened by its printed rounding),
                not reproduced when it lies wholly outside, not decided across an edge.
  fairness      the measured flow's new bytes over the long flow's, both counted at
                the bottleneck from the measured flow's SYN to its last new data
                (the report's ratio; 1 = equal shares).
"""

from __future__ import annotations

import json
import re
import statistics
import time
from pathlib import Path

import yaml

from ...records import read_record, stamped
from ... import paths
from ...analysis.archive import runs_of
from ...analysis.conditions import conditions_of
from ...analysis.pcap import analyse_pcap_ports, new_bytes_between
from ...analysis.stats import welch_diff
from ...analysis.verdict import Comparison, count_line

REFERENCE = paths.REPO_ROOT / "results" / "reference" / "blitzstart.yaml"
LINKS = ("dsl-slow", "dsl-fast", "3g", "lte")
SIZES = ("70KB", "2MB", "10MB")
HINTS = ("0.5x", "1x", "1.5x", "3x", "4x")
BASELINE = "std"
_SCENARIO = re.compile(r"^e9-blitzstart-(?P<link>[a-z0-9-]+)$")


def reference() -> dict[tuple[str, str, str], dict]:
    rows = yaml.safe_load(REFERENCE.read_text())["rows"]
    return {(r["link"], r["size"], r["hint"]): r for r in rows}


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


def load_link(run_dir: Path) -> tuple[str, dict, list[dict]]:
    """(link, its parameters, one record per run) of one run directory."""
    plan = read_record(run_dir / "plan.json", "sslab.plan")
    m = _SCENARIO.match(plan["name"])
    if not m:
        raise ValueError(f"{run_dir}: not an E9 run (scenario {plan['name']!r})")
    records = []
    for run, rdir in runs_of(run_dir):
        params = run["run"]["params"]
        records.append({"start": params["start"], "size": params["size"], "rep": run["run"]["rep"],
                        **_measured_run(rdir, run)})
    link = {"rate_mbit": plan["bottleneck"]["rate_mbit"], "buffer_pkts": plan["bottleneck"]["buffer_pkts"],
            "rtt_ms": plan["pairs"][1]["rtt_ms"]}
    return m["link"], link, records


def _direction(ours: dict, paper: float | None) -> str:
    if ours["ci95"] is None:
        return "–"
    lo, hi = ours["ci95"]
    if lo <= 0 <= hi:
        return "ours n.s."
    if paper is None or paper == 0:
        return "paper ±0"
    return "agrees" if (ours["diff"] > 0) == (paper > 0) else "DISAGREES"


def printed_rounding(what: str, paper: float) -> float:
    """± of the report's printed change: FCT changes in whole ms ("+47ms"), from a second on in tenths
    of a second ("-1.9s"); lost packets whole."""
    if what.startswith("FCT"):
        return 50.0 if abs(paper) >= 1000 else 0.5
    return 0.5


def change_comparison(where: str, what: str, ours: dict, paper: float | None, n: int) -> Comparison | None:
    """The report's change beside ours (Welch's difference with its CI), or None when either is missing."""
    if paper is None or ours["diff"] is None:
        return None
    return Comparison(where, what, "change", ours["diff"], float(paper), n,
                      tuple(ours["ci95"]) if ours["ci95"] else None,
                      rounding=printed_rounding(what, float(paper)))


def _mark(d: dict, rtt_ms: float | None = None) -> str:
    if d["ci95"] is None:
        return ""
    lo, hi = d["ci95"]
    marks = []
    if lo <= 0 <= hi:
        marks.append("n.s.")
    if rtt_ms is not None and abs(d["diff"]) < rtt_ms:
        marks.append("same RTT")
    return f" ({', '.join(marks)})" if marks else ""


def _mean(vals: list) -> float | None:
    vals = [v for v in vals if v is not None]
    return statistics.fmean(vals) if vals else None


def compare(links: dict[str, tuple[dict, list[dict]]]) -> list[dict]:
    """One row per link x size x hint present in @links: ours against the report's."""
    ref = reference()
    rows = []
    for link in [k for k in LINKS if k in links] + sorted(set(links) - set(LINKS)):
        params, records = links[link]
        sizes = [s for s in SIZES if any(r["size"] == s for r in records)] + \
            sorted({r["size"] for r in records} - set(SIZES))
        for size in sizes:
            base = [r for r in records if r["size"] == size and r["start"] == BASELINE]
            starts = sorted({r["start"] for r in records if r["size"] == size} - {BASELINE},
                            key=lambda h: float(h.rstrip("x")))
            for hint in starts:
                runs = [r for r in records if r["size"] == size and r["start"] == hint]
                fct = welch_diff([r["fct_s"] * 1e3 for r in base], [r["fct_s"] * 1e3 for r in runs])
                loss = welch_diff([r["lost"] for r in base], [r["lost"] for r in runs])
                paper = ref.get((link, size, hint))
                n = min(len(base), len(runs))
                judged = {what: change_comparison(f"{link} {size} {hint}", what, ours, paper and paper[field], n)
                          for what, ours, field in (("FCT change (ms)", fct, "fct_change_ms"),
                                                    ("loss change", loss, "loss_change"))}
                rows.append({
                    "link": link, "size": size, "hint": hint, "n_std": len(base), "n_hint": len(runs),
                    "rtt_ms": params["rtt_ms"],
                    "fct_std_s": _mean([r["fct_s"] for r in base]), "fct_hint_s": _mean([r["fct_s"] for r in runs]),
                    "fct_change_ms": fct, "loss_std": _mean([r["lost"] for r in base]),
                    "loss_hint": _mean([r["lost"] for r in runs]), "loss_change": loss,
                    "fairness_std": _mean([r["fairness"] for r in base]),
                    "fairness_hint": _mean([r["fairness"] for r in runs]),
                    "paper": paper,
                    "fct_direction": _direction(fct, paper["fct_change_ms"] if paper else None),
                    "loss_direction": _direction(loss, paper["loss_change"] if paper else None),
                    "fct_verdict": _verdict(judged["FCT change (ms)"]),
                    "loss_verdict": _verdict(judged["loss change"]),
                    "comparisons": [c.record() for c in judged.values() if c is not None],
                })
    return rows


def _verdict(c: Comparison | None) -> str:
    return "–" if c is None else c.verdict_text()


def _num(v: float | None, digits: int = 0, sign: bool = False) -> str:
    if v is None:
        return "–"
    return f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"


def table_md(rows: list[dict], links: dict[str, tuple[dict, list[dict]]]) -> str:
    out = []
    for link in dict.fromkeys(r["link"] for r in rows):
        p = links[link][0]
        out.append(f"\n### {link}: {p['rate_mbit']:g} Mbit/s, base RTT {p['rtt_ms']:g} ms, "
                   f"buffer {p['buffer_pkts']} packets\n")
        out.append("| size | hint | n (std/hint) | FCT std → hint (s) | FCT change, ms (ours) | paper | direction "
                   "| verdict | lost std → hint | loss change (ours) | paper | direction | verdict | fairness std → hint |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in (r for r in rows if r["link"] == link):
            paper = r["paper"] or {}
            f, lo = r["fct_change_ms"], r["loss_change"]
            out.append(
                f"| {r['size']} | {r['hint']} | {r['n_std']}/{r['n_hint']} "
                f"| {_num(r['fct_std_s'], 3)} → {_num(r['fct_hint_s'], 3)} "
                f"| {_num(f['diff'], 0, True)}{_mark(f, r['rtt_ms'])} "
                f"| {_num(paper.get('fct_change_ms'), 0, True)} | {r['fct_direction']} | {r['fct_verdict']} "
                f"| {_num(r['loss_std'], 1)} → {_num(r['loss_hint'], 1)} "
                f"| {_num(lo['diff'], 1, True)}{_mark(lo)} | {_num(paper.get('loss_change'), 0, True)} "
                f"| {r['loss_direction']} | {r['loss_verdict']} "
                f"| {_num(r['fairness_std'], 2)} → {_num(r['fairness_hint'], 2)} |")
    return "\n".join(out) + "\n"


SETTING_NOTES = """\
Where our setting differs from the report's, and how that could move a result:
- TCP, not QUIC.  Our standard start is Linux TCP's CUBIC with HyStart, an
  initial window of 32 and a paced socket: Linux paces a connection's first
  10 segments not at all and the rest at 2 x cwnd / RTT in slow start, which
  is the report's "10 at once, the rest over half an RTT".  Linux's receiver
  advertises 64 KB first; Blitzstart's first 3 rounds ignore the peer's
  window (kernel/README.md), QUIC had no such limit.  After its first window
  Blitzstart is Linux's CUBIC in congestion avoidance, whose epoch starts at
  the first window (W_max = cwnd: the convex part of the curve), which may
  not be how QUIC's CUBIC carried on.
- Losses are the measured flow's segments seen twice after the bottleneck
  (the report counted QUIC's lost packets).
- Virtual time (uml/inf-cpu): hosts are infinitely fast, so only the
  network shapes the results; the report's Mininet ran on real CPUs.
- The long flow's 4 s head start and length are ours (the report: the link
  is fully used first).
"""


def write_report(run_dirs: list[Path], dest: Path | None = None) -> Path:
    links: dict[str, tuple[dict, list[dict]]] = {}
    for d in run_dirs:
        link, params, records = load_link(Path(d))
        if link in links:
            links[link][1].extend(records)
        else:
            links[link] = (params, records)
    rows = compare(links)
    dest = dest or paths.new_run_dir("blitzstart/reports")
    disagree = [r for r in rows if "DISAGREES" in (r["fct_direction"], r["loss_direction"])]
    compared = [r for r in rows if r["paper"]]
    judged = [Comparison.from_record(c) for r in rows for c in r["comparisons"]]
    text = (f"# E9: Blitzstart against the standard start (the Blitzstart report's Table 1)\n\n"
            f"{count_line(judged) if judged else 'No value of the report to judge here.'}\n\n"
            f"Runs: {', '.join(str(d) for d in run_dirs)}\n\n"
            f"Ran under: {conditions_of(run_dirs)}\n\n"
            "Change = mean with the hint - mean with the standard start (cubic_std), per link and size; "
            "95% CI by Welch's t; n.s. = the CI contains 0; same RTT = the FCT change is under one base "
            "RTT.  The report's numbers (30 runs) beside ours; direction compares signs where ours is "
            "significant; verdict judges the change's size (the rule is the first line).\n"
            + table_md(rows, links)
            + f"\nSettings compared with the report: {len(compared)}; FCT directions: "
            + ", ".join(f"{k} {sum(r['fct_direction'] == k for r in compared)}"
                        for k in ("agrees", "DISAGREES", "ours n.s."))
            + "; loss directions: "
            + ", ".join(f"{k} {sum(r['loss_direction'] == k for r in compared)}"
                        for k in ("agrees", "DISAGREES", "ours n.s.", "paper ±0"))
            + ".\n"
            + ("\nDisagreeing cells: " + "; ".join(f"{r['link']} {r['size']} {r['hint']}"
                                                  f" ({'FCT' if r['fct_direction'] == 'DISAGREES' else ''}"
                                                  f"{' ' if 'DISAGREES' == r['fct_direction'] == r['loss_direction'] else ''}"
                                                  f"{'loss' if r['loss_direction'] == 'DISAGREES' else ''})"
                                                  for r in disagree) + ".\n" if disagree else "")
            + "\n" + SETTING_NOTES)
    (dest / "report.md").write_text(text)
    (dest / "summary.json").write_text(json.dumps(
        stamped("sslab.summary", {"runs": [str(d) for d in run_dirs], "rows": rows,
                                  "paper_values": [c.record() for c in judged],
                                          "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}),
        indent=1, default=str))
    return dest
