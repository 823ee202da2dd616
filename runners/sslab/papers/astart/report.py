"""E8, the Astart paper's tables and claims, rebuilt from archived runs beside the paper's numbers.

Input: run directories of the e8-astart series (one single-flow scenario per
setting, experiments/astart.yaml), of e8-astart-liw.yaml and of
e8-astart-fairness.yaml.  Output: report.md and summary.json.

Definitions:
  throughput   the flow's data bytes the client received in its duration after its
               handshake (20 s: the paper's "first 20 seconds"), Mbit/s of payload.
  utilisation  the link's share the flow's frames used: throughput x
               frame / MSS over the link rate (1000-byte segments in 1066-byte
               frames; the paper's ns-2 packets had no separate headers).
  exit window  the largest cwnd while ssthresh was still infinite (tcp_probe),
               over the BDP in frames (Vegas, Table 3).
  Jain         (sum x)^2 / (n sum x^2) over the flows' throughputs.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict

from ...records import read_record, stamped
from ... import paths
from ...analysis.archive import runs_of
from ...analysis.conditions import conditions_of
from ...analysis.stats import describe
from ...analysis.verdict import Comparison, count_line

CCAS = ("reno_fixed", "reno_hoe", "reno_astart", "vegas")
LABEL = {"reno_fixed": "NewReno", "reno_hoe": "Hoe", "reno_astart": "Astart", "vegas": "Vegas"}

#: The paper's numbers (Tables 1-3, Fig. 12, Section V.E), as data: results/reference/astart.yaml.
PAPER_VALUES = paths.REPO_ROOT / "results" / "reference" / "astart.yaml"


class AstartPaper(BaseModel):
    """The Astart paper's printed numbers (the file's comments say each one's setting)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    table1_newreno_util_by_rtt: dict[int, float]
    table2_newreno_util_by_bw: dict[int, float]
    table3_vegas_exit_by_bw: dict[int, float]
    fig12_mbit: dict[Literal["liw", "astart"], float]
    jain: dict[str, float]


def paper_values(path: Path = PAPER_VALUES) -> AstartPaper:
    return AstartPaper.model_validate(yaml.safe_load(path.read_text()))

_SERIES = re.compile(r"^e8-astart-(?P<setting>.+)$")


def bytes_by(rx_series: list[list[float]], seconds: float) -> float:
    """Bytes the client had received @seconds after its connect() returned (the
    series' first sample), interpolated between the samples around it."""
    t0 = rx_series[0][0]
    prev = rx_series[0]
    for t, b in rx_series:
        if t - t0 >= seconds:
            if t == prev[0]:
                return b
            return prev[1] + (b - prev[1]) * (t0 + seconds - prev[0]) / (t - prev[0])
        prev = (t, b)
    return prev[1]


def _flow_numbers(run: dict, mtu: int, rate_mbit: float) -> list[dict]:
    mss, frame = mtu - 52, mtu + 14
    out = []
    for f in run["flows"]:
        secs = f.get("duration") or f.get("fct_s")
        # What arrived in the first @secs after the handshake (the paper's "first 20 s"), not
        # what was sent in them: the queue and the pipe drain after the sender stops.
        mbit = bytes_by(f["rx_series"], secs) * 8 / secs / 1e6
        out.append({"cc": f["cc"], "throughput_mbit": mbit, "seconds": secs,
                    "utilisation_pct": 100 * mbit * frame / mss / rate_mbit,
                    "exit_cwnd": (f.get("slow_start") or {}).get("exit_cwnd")})
    return out


def load(run_dirs: list[Path]) -> dict[str, dict]:
    """scenario name -> {params, runs: case -> [per-repetition flow lists]}."""
    out: dict[str, dict] = {}
    for d in run_dirs:
        d = Path(d)
        plan = read_record(d / "plan.json", "sslab.plan")
        if not _SERIES.match(plan["name"]):
            raise ValueError(f"{d}: not an E8 run (scenario {plan['name']!r})")
        mtu = plan["topology"].get("mtu", 1500)
        rate = plan["bottleneck"]["rate_mbit"]
        rtt = plan["pairs"][0]["rtt_ms"]
        entry = out.setdefault(plan["name"], {"rate_mbit": rate, "rtt_ms": rtt, "mtu": mtu,
                                              "buffer_pkts": plan["bottleneck"]["buffer_pkts"],
                                              "bdp_frames": rate * 1e6 * rtt / 1e3 / 8 / (mtu + 14),
                                              "runs": {}, "dirs": []})
        entry["dirs"].append(str(d))
        for run, _ in runs_of(d):
            flows = _flow_numbers(run, mtu, rate)
            entry["runs"].setdefault(run["run"]["case"], []).append(
                {"flows": flows, "drops": run["bottleneck"]["drops"]})
    return out


def _mean(xs: list[float | None]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def _values(data: dict, setting: str, cc: str, key: str) -> list[float]:
    """The first flow's @key in each repetition of @cc at @setting (none missing)."""
    s = data.get(f"e8-astart-{setting}")
    if not s or cc not in s["runs"]:
        return []
    return [v for r in s["runs"][cc] if (v := r["flows"][0][key]) is not None]


def _single(data: dict, setting: str, cc: str, key: str) -> float | None:
    return _mean(_values(data, setting, cc, key))


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else float("nan")


def _period(data: dict, names: list[str]) -> str:
    """How long the flows of scenarios @names ran, as a heading says it ("20 s", the paper's period; a
    SET= may change it, and the throughput is then over that period)."""
    secs = sorted({round(f["seconds"]) for n in names if n in data
                   for reps in data[n]["runs"].values() for r in reps for f in r["flows"]})
    return "–" if not secs else f"{secs[0]} s" if len(secs) == 1 else f"{secs[0]}-{secs[-1]} s"


def _f(v: float | None, digits: int) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _claim(ok: bool | None) -> str:
    return "–" if ok is None else ("agrees" if ok else "DISAGREES")


def report_md(data: dict) -> tuple[str, list[Comparison]]:
    """The report's tables and every paper value judged against ours (the report opens with their
    count)."""
    lines: list[str] = []
    judged: list[Comparison] = []
    paper = paper_values()

    def verdict(where: str, what: str, values: list[float], paper: float | None, rounding: float) -> str:
        """The verdict on one paper value (printed to ±@rounding) beside ours over the repetitions
        @values, noted for the count (– when either is missing)."""
        d = describe(values)
        if d["mean"] is None or paper is None:
            return "–"
        judged.append(Comparison(where, what, "value", d["mean"], paper, d["n"],
                                 tuple(d["ci95"]) if d["ci95"] else None, rounding=rounding))
        return judged[-1].verdict_text()

    bw = {int(re.match(r"bw-(\d+)mbit", n.removeprefix("e8-astart-"))[1]): n.removeprefix("e8-astart-")
          for n in data if re.match(r"e8-astart-bw-\d+mbit$", n)}
    rtt = {int(re.match(r"rtt-(\d+)ms", n.removeprefix("e8-astart-"))[1]): n.removeprefix("e8-astart-")
           for n in data if re.match(r"e8-astart-rtt-\d+ms$", n)}
    if 40 in bw:
        rtt.setdefault(100, bw[40])
    buf = {float(re.match(r"buf-([\d.]+)bdp", n.removeprefix("e8-astart-"))[1]): n.removeprefix("e8-astart-")
           for n in data if re.match(r"e8-astart-buf-[\d.]+bdp$", n)}
    if 40 in bw:
        buf.setdefault(1.0, bw[40])

    def row_table(title: str, axis: str, keys: dict, paper: dict, cc: str, key: str, digits: int, unit: str,
                  printed: int):
        lines.append(f"\n### {title}\n")
        lines.append(f"| {axis} | ours ({unit}) | paper | reproduced? | direction of change along the axis |")
        lines.append("|---|---|---|---|---|")
        prev = None
        for k in sorted(set(keys) | set(paper)):
            values = _values(data, keys[k], cc, key) if k in keys else []
            if key == "exit_cwnd":
                values = [v / data[f"e8-astart-{keys[k]}"]["bdp_frames"] for v in values]
            ours = _mean(values)
            trend = "–"
            if prev is not None and ours is not None and k in paper and prev[1] in paper:
                if round(ours, digits) == round(prev[0], digits) and paper[k] != paper[prev[1]]:
                    trend = "ours flat"
                else:
                    trend = _claim((ours < prev[0]) == (paper[k] < paper[prev[1]]))
            judged_here = verdict(f"{title.split(':')[0]}, {axis} {k}", unit, values, paper.get(k), 0.5 * 10 ** -printed)
            lines.append(f"| {k} | {_f(ours, digits)} | {paper.get(k, '–')} | {judged_here} | {trend} |")
            if ours is not None:
                prev = (ours, k)

    def period(keys: dict) -> str:
        return _period(data, [f"e8-astart-{n}" for n in keys.values()])

    row_table(f"Table 1: NewReno utilisation in the first {period(rtt)} against RTT (40 Mbit/s, buffer = BDP)",
              "RTT (ms)", rtt, paper.table1_newreno_util_by_rtt, "reno_fixed", "utilisation_pct", 1, "%", 1)
    row_table(f"Table 2: NewReno utilisation in the first {period(bw)} against capacity (100 ms, buffer = BDP)",
              "Mbit/s", bw, paper.table2_newreno_util_by_bw, "reno_fixed", "utilisation_pct", 1, "%", 1)
    row_table("Table 3: Vegas's slow-start exit window over the BDP (100 ms, buffer = BDP)",
              "Mbit/s", bw, paper.table3_vegas_exit_by_bw, "vegas", "exit_cwnd", 3, "ratio", 3)

    def sweep(title: str, axis: str, keys: dict):
        lines.append(f"\n### {title}\n")
        lines.append(f"| {axis} | " + " | ".join(f"{LABEL[c]} (Mbit/s, util. %)" for c in CCAS) + " | drops (" +
                     ", ".join(LABEL[c] for c in CCAS) + ") |")
        lines.append("|---|" + "---|" * (len(CCAS) + 1))
        for k in sorted(keys):
            cells = []
            for c in CCAS:
                t, u = _single(data, keys[k], c, "throughput_mbit"), _single(data, keys[k], c, "utilisation_pct")
                cells.append(f"{_f(t, 2)} ({_f(u, 0)})")
            s = data[f"e8-astart-{keys[k]}"]
            drops = [_mean([r["drops"] for r in s["runs"].get(c, [])]) for c in CCAS]
            lines.append(f"| {k} | " + " | ".join(cells) + " | " + ", ".join(_f(x, 0) for x in drops) + " |")

    sweep(f"Fig. 9: throughput in the first {period(bw)} against capacity (100 ms, buffer = BDP)", "Mbit/s", bw)
    sweep("Fig. 10: against the buffer (40 Mbit/s, 100 ms; BDP/5 .. BDP/2, and BDP)", "buffer (BDP)", buf)
    sweep("Fig. 11: against RTT (40 Mbit/s, buffer = BDP)", "RTT (ms)", rtt)

    # The paper's words about its figures are claims of its ledger (experiments/claims/astart.yaml),
    # judged with CIs and printed after this report (analysis.claims), not by a sign here.
    liw = data.get("e8-astart-liw")
    if liw:
        lines.append("\n### Fig. 12: a 64 KB initial window (slow start skipped) against Astart "
                     f"(10 Mbit/s, 500 ms, buffer = BDP, {_period(data, ['e8-astart-liw'])})\n")
        lines.append("| start | ours (Mbit/s) | paper (Mbit/s) | reproduced? |")
        lines.append("|---|---|---|---|")
        ours = {c: [r["flows"][0]["throughput_mbit"] for r in liw["runs"].get(c, [])] for c in paper.fig12_mbit}
        for c, theirs in paper.fig12_mbit.items():
            name = 'LIW (reno_fixed, iw = ssthresh = 64)' if c == 'liw' else 'Astart'
            # The paper prints these to 0.01 Mbit/s.
            lines.append(f"| {name} | {_f(_mean(ours[c]), 2)} | {theirs} | "
                         f"{verdict(f'Fig. 12, {name}', 'Mbit/s', ours[c], theirs, 0.005)} |")

    fair = data.get("e8-astart-fairness")
    if fair:
        lines.append("\n### Fairness and friendliness (10 flows, 50 Mbit/s, 70 ms, buffer = BDP, 30 s)\n")
        lines.append("| case | Jain's index (ours) | paper | reproduced? | throughput per flow (Mbit/s) |")
        lines.append("|---|---|---|---|---|")
        for case in ("all-astart", "all-newreno", "mixed"):
            reps = fair["runs"].get(case, [])
            if not reps:
                continue
            js = [jain([f["throughput_mbit"] for f in r["flows"]]) for r in reps]
            j = _mean(js)
            per = " ".join(f"{_mean([r['flows'][i]['throughput_mbit'] for r in reps]):.1f}"
                           for i in range(len(reps[0]["flows"])))
            lines.append(f"| {case} | {_f(j, 4)} | {paper.jain.get(case, '–')} | "
                         f"{verdict(f'fairness, {case}', 'Jain', js, paper.jain.get(case), 0.00005)} | {per} |")
        mixed = fair["runs"].get("mixed", [])
        if mixed:
            a = _mean([sum(f["throughput_mbit"] for f in r["flows"] if f["cc"] == "reno_astart") for r in mixed])
            n = _mean([sum(f["throughput_mbit"] for f in r["flows"] if f["cc"] == "reno_fixed") for r in mixed])
            lines.append(f"\nMixed: the five Astart flows carried {a:.1f} Mbit/s, the five NewReno flows "
                         f"{n:.1f} Mbit/s (Astart's share {a / (a + n):.1%}; the paper shows cwnd plots only).")
    head = [count_line(judged) if judged else "No paper value to judge here.", ""]
    return "\n".join(head + lines) + "\n", judged


SETTING_NOTES = """\
Where our setting differs from the paper's, and how that could move a result:
- ns-2's idealised links and hosts against real Linux TCP in virtual time:
  Linux's initial window is 10 segments (ns-2's was probably 1 or 2: the paper
  does not say), receivers acknowledge every segment at first and then
  delay ACKs, and Linux's NewReno halves cwnd (not FlightSize).  The earlier
  slow-start exits of the fixed-ssthresh NewReno leave it in congestion
  avoidance, where ns-2 and Linux grow alike (one segment per RTT).
- Vegas is the kernel's tcp_vegas: it doubles every RTT in slow start and
  checks once an RTT, with the smallest RTT of the last round (the paper's
  Vegas doubled every other RTT).  A queue that drains within each round
  never shows in a round's smallest RTT, so its delay test sees nothing
  until the buffer overflows: an exit window above BDP + buffer (2 BDP here)
  says it left slow start by loss, not by its test.
- Astart's filter constant and sampling details are ours (kernel/README.md);
  the paper's Astart ran in TCP Westwood's code, whose loss response
  (ssthresh = ERE x RTTmin) ours replaces with NewReno's halving.
- Utilisation counts the flow's frames (1066 bytes for 1000 of payload).
"""


def write_report(run_dirs: list[Path], dest: Path | None = None) -> Path:
    data = load(run_dirs)
    table, judged = report_md(data)
    dest = dest or paths.new_run_dir("astart/reports")
    text = ("# E8: Astart, NewReno, Hoe and Vegas (the Astart paper) beside the paper's numbers\n\n"
            + "Runs: " + ", ".join(str(d) for d in run_dirs) + "\n\n"
            + f"Ran under: {conditions_of(run_dirs)}\n" + table + "\n" + SETTING_NOTES)
    (dest / "report.md").write_text(text)
    (dest / "summary.json").write_text(json.dumps(
        stamped("sslab.summary", {"runs": [str(d) for d in run_dirs], "settings": data,
                                  "paper_values": [c.record() for c in judged],
                                  "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}),
        indent=1, default=str))
    return dest
