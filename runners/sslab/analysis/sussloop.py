"""SUSS 2024 in closed loop beside its authors' log, round by round (`sslab suss-loop`).

The golden replay (kernel/tests/replay_suss.c) feeds the authors' logged ACKs
to our core: open loop, it checks decisions on their inputs.  Here our
module runs on their own path in the testbed (kernel/tests/suss/
closed-loop.yaml) and makes its own ACKs, and each round's decisions are put
beside the log's: the blue train (dtB), the growth factor, the pacing plan
(red packets, duration, rate, guard, limit), where the cap is set and where
slow start stops.  The targets (a decision must be the log's; a measured time
within 10 %; the cap within 5 % of cwnd 392 / cap 608; the stop within 5 % of
609, by the cap) are what a conformant sender on this path should meet: the
path is not theirs to the microsecond, so times differ a little.

The log (tests/data/suss-authors-log/suss-on/: acks.csv and events.csv, its
README says what each column is) is read here; our side from the run's
record (the module's events) and its trace (sslab_ack: per-ACK round and
HyStart's round minimum RTT).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from ..ccas import parse_trace_declarations
from ..paths import REPO_ROOT
from .traces import flow_records, read_trace

AUTHORS_LOG = REPO_ROOT / "tests" / "data" / "suss-authors-log" / "suss-on"
#: Their path in our testbed, one SUSS 2024 flow then one SUSS 2025 flow.
SCENARIO = REPO_ROOT / "kernel" / "tests" / "suss" / "closed-loop.yaml"
#: The SUSS state numbers of a stop (their "type"): 3 the cap, 4 HyStart's delay test.
STOP_TYPES = {3: "cap", 4: "delay"}
#: Our exit causes (their numbers in the module's trace, as SUSS's and HyStart's headers declare them)
#: as their stop types.
_CAUSE = {x.ident: x.number for x in parse_trace_declarations()[0]}
OUR_EXITS = {_CAUSE["SUSS_CAP"]: 3, _CAUSE["DELAY"]: 4, _CAUSE["ACK_TRAIN"]: 1}


@dataclass
class Rounds:
    """One side's decisions, by round: {round: {quantity: value}} and the cap and the stop."""

    rounds: dict[int, dict] = field(default_factory=dict)
    cap: dict | None = None
    stop: dict | None = None
    #: HyStart's round minimum RTT at each ACK of a round: {round: [us, ...]}.
    round_min_rtt: dict[int, list[int]] = field(default_factory=dict)


def _int(v: str | None) -> int | None:
    return int(v) if v not in (None, "") else None


def their_rounds(log_dir: Path = AUTHORS_LOG) -> Rounds:
    """The authors' decisions, from their log."""
    with open(log_dir / "acks.csv") as f:
        acks = list(csv.DictReader(f))
    with open(log_dir / "events.csv") as f:
        events = list(csv.DictReader(f))
    out = Rounds()
    by_row: dict[int, list[dict]] = {}
    for e in events:
        by_row.setdefault(int(e["after_ack"]), []).append(e)
    for e in events:
        name = e["event"]
        if name.startswith("Blue ACK train"):
            rnd = int(e["numbers_in_text"].split()[0])
            r = out.rounds.setdefault(rnd, {})
            r["dtB_us"] = _int(e["dtB"])
            # Round 2's G is not printed: a pacing plan after its train means G = 4.
            same = by_row[int(e["after_ack"])]
            g = next((_int(x["G"]) for x in same if x["event"].startswith("Growth factor")), None)
            planned = any(x["event"].startswith("Total amount") for x in same)
            r["G"] = g if g is not None else (4 if planned else 2)
            for x in same:
                if x["event"].startswith("Total amount"):
                    red, duration, rate = (int(v) for v in x["numbers_in_text"].split()[:3])
                    r.update(red_packets=red, duration_us=duration, rate_Bps=rate,
                             guard_us=_int(x["gap"]) // 1000, limit=_int(x["limit"]))
        elif name.startswith("Cap is set"):
            row = int(e["after_ack"])
            out.cap = {"round": int(acks[row - 1]["round"]), "cwnd": _int(e["c"]), "cap": _int(e["cap"])}
        elif name.startswith("Stop exponential growth"):
            out.stop = {"cwnd": _int(e["c"]), "type": _int(e["type"])}
    for a in acks:
        rmin = int(a["round_min_rtt_us"])
        out.round_min_rtt.setdefault(int(a["round"]), []).append(None if rmin == 0xFFFFFFFF else rmin)
    return out


def our_rounds(run: dict, trace: Path | None) -> Rounds:
    """Our decisions, from a run's record (its first flow's events) and its trace."""
    flow = run["flows"][0]
    out = Rounds()
    for e in flow.get("events") or []:
        kind, a, b, c = e["type"], int(e["a"]), int(e["b"]), int(e["c"])
        if kind == "blue_train":
            out.rounds.setdefault(a, {})["dtB_us"] = b
        elif kind == "growth":
            out.rounds.setdefault(a, {})["G"] = b
            out.rounds[a]["why_not"] = c
        elif kind == "pacing":
            rnd = max(out.rounds) if out.rounds else 0
            out.rounds.setdefault(rnd, {}).update(
                red_packets=int(e["pkts"]), duration_us=int(e["duration_us"]), rate_Bps=int(e["rate"]),
                guard_us=int(e["guard_us"]), limit=int(e["limit"]))
        elif kind == "cap":
            out.cap = {"round": None, "cwnd": b, "cap": a, "ts": e.get("time_us")}
        elif kind == "exit":
            out.stop = {"cwnd": b, "type": OUR_EXITS.get(a, a)}
    if trace is not None and trace.exists():
        acks = [r for r in flow_records(read_trace(trace), flow["port"]) if r.event == "sslab_ack"]
        for r in acks:
            rmin = r.int("round_min_rtt_us")
            out.round_min_rtt.setdefault(r.int("round"), []).append(None if rmin == 0xFFFFFFFF else rmin)
        if out.cap is not None and out.cap.get("ts") is not None:
            t = int(out.cap["ts"])
            at = [r for r in acks if r.int("time_us") <= t]
            out.cap["round"] = at[-1].int("round") if at else None
    return out


#: What each quantity is held to: "equal", a relative tolerance, or None (shown only).
TARGETS = {"G": "equal", "dtB_us": 0.10, "guard_us": 0.10, "red_packets": None, "duration_us": None,
           "rate_Bps": None, "limit": None}
CAP_TOLERANCE = 0.05
STOP_TOLERANCE = 0.05


def _within(theirs, ours, target) -> bool | None:
    if target is None or theirs is None:
        return None
    if ours is None:
        return False
    if target == "equal":
        return theirs == ours
    return abs(ours - theirs) <= target * abs(theirs)


def _target_text(target) -> str:
    return "–" if target is None else ("=" if target == "equal" else f"±{target:.0%}")


def conformance(theirs: Rounds, ours: Rounds) -> tuple[list[dict], bool]:
    """The per-round table's rows (round, quantity, theirs, ours, target, within) and whether every
    held row is within its target."""
    rows = []
    for rnd in sorted(set(theirs.rounds) | set(ours.rounds)):
        t, o = theirs.rounds.get(rnd, {}), ours.rounds.get(rnd, {})
        for q in ("dtB_us", "G", "red_packets", "duration_us", "rate_Bps", "guard_us", "limit"):
            if q not in t and q not in o:
                continue
            target = TARGETS[q]
            rows.append({"round": rnd, "quantity": q, "theirs": t.get(q), "ours": o.get(q), "target": _target_text(target),
                         "within": _within(t.get(q), o.get(q), target)})
    tc, oc = theirs.cap or {}, ours.cap or {}
    rows += [{"round": "cap", "quantity": "round", "theirs": tc.get("round"), "ours": oc.get("round"), "target": "=",
              "within": _within(tc.get("round"), oc.get("round"), "equal")}]
    rows += [{"round": "cap", "quantity": q, "theirs": tc.get(q), "ours": oc.get(q), "target": f"±{CAP_TOLERANCE:.0%}",
              "within": _within(tc.get(q), oc.get(q), CAP_TOLERANCE)} for q in ("cwnd", "cap")]
    ts, os_ = theirs.stop or {}, ours.stop or {}
    rows += [{"round": "stop", "quantity": "cwnd", "theirs": ts.get("cwnd"), "ours": os_.get("cwnd"),
              "target": f"±{STOP_TOLERANCE:.0%}", "within": _within(ts.get("cwnd"), os_.get("cwnd"), STOP_TOLERANCE)},
             {"round": "stop", "quantity": "type", "theirs": STOP_TYPES.get(ts.get("type"), ts.get("type")),
              "ours": STOP_TYPES.get(os_.get("type"), os_.get("type")), "target": "=",
              "within": ts.get("type") == os_.get("type")}]
    return rows, all(r["within"] is not False for r in rows)


def conformance_table(rows: list[dict]) -> str:
    lines = ["| round | quantity | their log (5.19 code) | ours, closed loop | target | within |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        mark = {True: "yes", False: "**NO**", None: "–"}[r["within"]]
        lines.append(f"| {r['round']} | {r['quantity']} | {'–' if r['theirs'] is None else r['theirs']} | "
                     f"{'–' if r['ours'] is None else r['ours']} | {r['target']} | {mark} |")
    return "\n".join(lines)


def round_min_table(theirs: Rounds, ours: Rounds, rnd: int = 3) -> str:
    """HyStart's round minimum RTT at each ACK of round @rnd, the log's beside ours (us; – none yet)."""
    t, o = theirs.round_min_rtt.get(rnd, []), ours.round_min_rtt.get(rnd, [])
    lines = [f"| round {rnd}, ACK | their round_min_rtt_us | ours |", "|---|---|---|"]
    for i in range(max(len(t), len(o))):
        tv = t[i] if i < len(t) else None
        ov = o[i] if i < len(o) else None
        lines.append(f"| {i + 1} | {'–' if tv is None else tv} | {'–' if ov is None else ov} |")
    return "\n".join(lines)


def write_conformance(run_dir: Path) -> tuple[str, bool]:
    """The closed-loop run in @run_dir (`make suss-loop`: cubic_suss24 and cubic_suss25 on the authors'
    path) beside the authors' log: conformance.md written there; its text, and whether every target
    was met."""
    from ..records import read_record, read_runs_index
    out = run_dir / "job" / "out"
    runs = {}
    for entry in read_runs_index(out / "runs.json"):
        rdir = out / "runs" / entry["tag"]
        run = read_record(rdir / "run.json", "sslab.run")
        runs[run["flows"][0]["cc"]] = our_rounds(run, rdir / run["trace"] if run.get("trace") else None)
    theirs = their_rounds()
    rows, ok = conformance(theirs, runs["cubic_suss24"])
    beside, _ = conformance(theirs, runs["cubic_suss25"])
    text = "\n".join([
        "# SUSS 2024 in closed loop on its authors' path, beside their log", "",
        f"- run: {run_dir}", f"- every target met: {'yes' if ok else 'NO'}", "",
        "## SUSS 2024, ours, against their log (held to the targets)", "", conformance_table(rows), "",
        "## SUSS 2025, ours, beside their 2024 log (no log of theirs to hold it to)", "",
        conformance_table([{**r, "target": "–", "within": None} for r in beside]), "",
        "## Round 3: HyStart's round minimum RTT at each ACK (us)", "",
        round_min_table(theirs, runs["cubic_suss24"], 3), ""])
    (run_dir / "conformance.md").write_text(text)
    return text, ok
