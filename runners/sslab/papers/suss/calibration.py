"""Table 1's calibration: which values of what the paper leaves unstated its own SUSS-off numbers
support.

A calibration matrix (experiments/table1-calibrate.yaml) is Table 1's grid crossed with
candidate axes (stage 3: the testbed's layout and its offloads; stage 4: the hosts' socket buffers).
Each candidate's cells are a Table 1 of their own; its distance from the paper is taken over the
SUSS-off arm only (Linux's own CUBIC and BBRv1, code not in question), by the rule fixed before the
stage's cells ran (docs/experiments.md, E7, "Calibration"):

    terms     at 1 BDP, the large flow's and the small flows' mean FCT with SUSS off, for CUBIC
              and BBRv1 at each of the four RTTs the paper prints (16); at 2 BDP, the same two
              means over the four RTTs against the means the paper's Average rows imply (4)
    distance  sqrt((SMALL_WEIGHT * S + L) / (SMALL_WEIGHT + 1)), S and L the mean of ln(ours /
              paper)^2 over the small flows' and the large flow's terms: the small flows, which
              Table 1 is about, weigh twice the large flow's ten terms, which move together (a
              factor of 1.5 weighs the same for a 1 s and a 30 s value)
    its CI    the 2.5th and 97.5th percentiles of the distance over BOOTSTRAP_DRAWS resamplings
              of each setting's repetitions (seeded: the same archive gives the same CI)
    default   the smallest distance among the candidates neither the paper's numbers (paper_bounds)
              nor the harness's own rule (HARNESS_RULES) rule out; those whose CI reaches the
              nearest's (its lower end at or below the nearest's upper end) tie with it, and among
              them the fewest choices the paper's text does not state (UNSTATED), then the smallest
              distance; without CIs (one repetition) the tie is within TIE of the smallest distance

The SUSS-on values, the improvements and the drops take no part: the chosen candidate's are the
prediction, judged by the verdict (verdict.py) like any Table 1."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ...plan_record import MatrixPlan, PlannedCell
from ...records import GRO_MERGE_SEGMENTS
from . import paper_bounds
from ...analysis.archive import current_cells
from .table1 import cells_by_setting, reference, table1
from ...analysis.verdict import Comparison

#: The paper's own axes of Table 1; any other axis of a Table 1 matrix that takes several values in a
#: plan's cells is a candidate axis (one value, E7's default layout: a setting of the testbed, no candidate).
PAPER_AXES = ("large_cc", "buffer", "large_rtt")
#: The controls the fit is over: the paper's columns whose code is Linux's own (BBRv2 ran Google's alpha).
FIT_CCAS = ("cubic", "bbr")
#: Without CIs (one repetition), candidates within this fraction of the smallest distance tie.
TIE = 0.10
#: The small flows' terms weigh this many times the large flow's in the distance.
SMALL_WEIGHT = 2
#: Resamplings of the repetitions for a distance's CI, and their seed.
BOOTSTRAP_DRAWS = 400
BOOTSTRAP_SEED = 1
#: Choices the paper's text does not state, per candidate value: thirteen pairs where it had five; a
#: netem for the delays apart from the one it names on the router; hosts whose offloads are off, or
#: whose socket buffers are raised (on any host), where its Linux hosts had Linux's defaults; a depth
#: of the routers' GRO (linux-N), which depends on NICs and drivers the paper does not name.
UNSTATED = {"small_rtts": {"spread": 1, "four": 0, "as-large": 0}, "netem": {"apart": 1, "one": 0},
            "layout": {"own-pairs": 1, "five-pairs": 0},
            "offloads": {"off": 1, "linux": 0, **{f"linux-{n}": 1 for n in GRO_MERGE_SEGMENTS}},
            "socket_buffers": {"raised": 1, "linux-senders": 1, "linux": 0}}
#: Candidate values the harness's own rule rules out, whatever their distance: a client's receive window
#: must never hold a flow back (docs/testbed.md, "The socket buffers": the reproduction is of what a sender
#: does; the SUSS authors' own code lifts the peer's window for this reason), and Linux's own receive
#: buffers do hold SUSS's x4 rounds back.
HARNESS_RULES = {"socket_buffers": {"linux": "the clients' receive windows may hold a flow back (the harness's rule)"}}
#: The FCT's timings a candidate is read with (MatrixPlan.fct_timing): the client's, and the server's
#: where the runs have its per-ACK trace.  Not a run's setting: the same cells read two ways.
TIMINGS = ("client", "server")
#: The values of a setting the prediction is judged on (Comparison.short): SUSS on, and the improvement.
PREDICTED = ("large on", "small on", "improvement")


def harness_refusals(candidate: dict[str, str]) -> list[str]:
    """Why the harness's own rule rules @candidate (axis -> value) out (HARNESS_RULES), if it does."""
    return [why for axis, value in candidate.items() if (why := HARNESS_RULES.get(axis, {}).get(value))]


def candidate_axes(plan: MatrixPlan) -> list[str]:
    return [a for a in (plan.axis_values or {}) if a not in PAPER_AXES
            and len({str(c.setting.get(a)) for c in plan.cells}) > 1]


def candidate_cells(plan: MatrixPlan) -> dict[tuple[str, ...], list[PlannedCell]]:
    """The plan's cells by candidate (their values of the candidate axes), in the file's order."""
    axes = candidate_axes(plan)
    out: dict[tuple[str, ...], list[PlannedCell]] = {}
    for cell in plan.cells:
        out.setdefault(tuple(str(cell.setting[a]) for a in axes), []).append(cell)
    return out


@dataclass
class Fit:
    """A candidate against the paper's SUSS-off values."""

    candidate: dict[str, str]
    #: (where, ours, the paper's): the distance's terms
    terms: list[tuple[str, float, float]]
    ruled_out: list[str] = field(default_factory=list)
    prediction: str = ""  # the verdict on its SUSS-on values (the count line's numbers)
    ci: tuple[float, float] | None = None  # the distance's 95 % CI (bootstrap over repetitions)

    @property
    def distance(self) -> float | None:
        return distance(self.terms)

    @property
    def unstated(self) -> int:
        return sum(UNSTATED.get(a, {}).get(v, 0) for a, v in self.candidate.items())

    @property
    def label(self) -> str:
        return ", ".join(f"{a}={v}" for a, v in self.candidate.items())


def distance(terms: list[tuple[str, float, float]]) -> float | None:
    """The rule's distance over @terms (the module docstring): the small flows' squared log ratios (a
    term named ...off_small) weighing SMALL_WEIGHT times the others' (the large flow's); a side with no
    term counts as none."""
    if not terms:
        return None
    small = [math.log(o / p) ** 2 for w, o, p in terms if w.endswith("off_small")]
    large = [math.log(o / p) ** 2 for w, o, p in terms if not w.endswith("off_small")]
    sides = [(SMALL_WEIGHT, small), (1, large)]
    present = [(weight, v) for weight, v in sides if v]
    return math.sqrt(sum(weight * statistics.fmean(v) for weight, v in present) / sum(w for w, _ in present))


def distance_ci(reps_by_setting: dict[tuple[str, str, str], list[dict]], ref: dict) -> tuple[float, float] | None:
    """The distance's 95 % CI: its 2.5th and 97.5th percentiles over BOOTSTRAP_DRAWS resamplings (with
    replacement, seeded) of each setting's repetitions; None when no setting has two."""
    import random

    if not any(len(r) > 1 for r in reps_by_setting.values()):
        return None
    rng = random.Random(BOOTSTRAP_SEED)
    draws = []
    for _ in range(BOOTSTRAP_DRAWS):
        rows = []
        for (cca, buf, rtt), reps in reps_by_setting.items():
            sample = [reps[rng.randrange(len(reps))] for _ in reps]
            rows.append({"large_cc": cca, "buffer": buf, "large_rtt": rtt,
                         **{f: {"mean": statistics.fmean(r["off"][k] for r in sample)}
                            for f, k in (("off_large", "large_fct_s"), ("off_small", "small_mean_fct_s"))}})
        d = distance(fit_terms(rows, ref))
        if d is not None:
            draws.append(d)
    if not draws:
        return None
    draws.sort()
    return draws[int(0.025 * (len(draws) - 1))], draws[int(math.ceil(0.975 * (len(draws) - 1)))]


def fit_terms(rows: list[dict], ref: dict) -> list[tuple[str, float, float]]:
    """The distance's terms from a Table 1's rows (table1()'s extra["rows"]: large_cc, buffer,
    large_rtt, off_large and off_small with their means)."""
    printed = {(r["large_cc"], r["buffer"], r["large_rtt"]): r for r in ref.get("rows", [])}
    implied = {(v.cca, v.field): v.value for v in paper_bounds.implied_2bdp(ref)}
    terms = []
    for r in rows:
        p = printed.get((r["large_cc"], r["buffer"], r["large_rtt"]))
        if r["large_cc"] in FIT_CCAS and p:
            for f in ("off_large", "off_small"):
                terms.append((f"{r['large_cc']} {r['buffer']} {r['large_rtt']} {f}", r[f]["mean"], float(p[f])))
    rtts = {r["large_rtt"] for r in ref.get("rows", [])}
    for cca in FIT_CCAS:
        two = [r for r in rows if r["large_cc"] == cca and r["buffer"] == "2BDP"]
        if not rtts or {r["large_rtt"] for r in two} != rtts or (cca, "off_large") not in implied:
            continue
        for f in ("off_large", "off_small"):
            terms.append((f"{cca} 2BDP mean {f}", statistics.fmean(r[f]["mean"] for r in two), implied[cca, f]))
    return terms


def full_terms(ref: dict) -> int:
    """How many terms a candidate has when every setting of the fit ran (20 for Table 1)."""
    rows = [r for r in ref.get("rows", []) if r["large_cc"] in FIT_CCAS and r["buffer"] == "1BDP"]
    implied = {v.cca for v in paper_bounds.implied_2bdp(ref)} & set(FIT_CCAS)
    return 2 * len(rows) + 2 * len(implied)


def choose(fits: list[Fit], terms: int) -> Fit | None:
    """The default by the rule (the module's docstring), among the candidates with all @terms: a
    distance over part of the grid chooses nothing."""
    allowed = [f for f in fits if f.distance is not None and not f.ruled_out and len(f.terms) == terms]
    if not allowed:
        return None
    nearest = min(allowed, key=lambda f: f.distance)
    if nearest.ci is not None:
        near = [f for f in allowed if f is nearest or (f.ci is not None and f.ci[0] <= nearest.ci[1])]
    else:
        near = [f for f in allowed if f.distance <= nearest.distance * (1 + TIE)]
    return min(near, key=lambda f: (f.unstated, f.distance))


def readings(matrix_dir: Path, plan: MatrixPlan) -> list[tuple[dict, MatrixPlan, dict]]:
    """A candidate's Table 1 (its plan, its extra) read with each of TIMINGS, the timing as a candidate
    value ({"fct_timing": ...}); runs without the server's trace are read the client's way alone,
    with no timing value."""
    out = []
    for timing in TIMINGS:
        sub = plan.model_copy(update={"fct_timing": timing})
        try:
            out.append(({"fct_timing": timing}, sub, table1(matrix_dir, sub)[1]))
        except ValueError:
            if timing == "client":
                raise
            return [({}, plan, table1(matrix_dir, plan)[1])]
    return out


def calibration(matrix_dir: Path, plan: MatrixPlan) -> tuple[list[str], MatrixPlan | None, dict]:
    """The calibration's section of the report, the plan of the cells its Table 1 shows (the chosen
    candidate's; before one is chosen, the nearest so far, said to be provisional), and its summary."""
    axes = candidate_axes(plan)
    ref = reference(plan)
    terms = full_terms(ref)
    fits, plans = [], {}
    for values, cells in candidate_cells(plan).items():
        for timing, sub, extra in readings(matrix_dir, plan.model_copy(update={"cells": cells})):
            candidate = dict(zip(axes, values))
            fit = Fit({**candidate, **timing}, fit_terms(extra["rows"], ref),
                      [*extra["ruled_out"], *harness_refusals(candidate)])
            reps = {k: [r for r in v if "off" in r] for k, v in
                    cells_by_setting(sub, current_cells(matrix_dir, sub)).items() if k[0] in FIT_CCAS}
            fit.ci = distance_ci({k: v for k, v in reps.items() if v}, ref)
            on = [c for c in extra["comparisons"] if c["short"] in PREDICTED]
            fit.prediction = f"{sum(Comparison.from_record(c).reproduced for c in on)} of {len(on)}" if on else "–"
            fits.append(fit)
            plans[tuple(fit.candidate.values())] = sub
    chosen = choose(fits, terms)
    lines = ["## Calibration: each candidate against the paper's SUSS-off values", "",
             f"Candidates: every combination of {', '.join(axes)}, each read with the FCT the client times "
             f"and, where the runs have the server's per-ACK trace, the one the server does (fct_timing).  Distance: "
             f"ln(ours / paper) over the SUSS-off FCTs the paper prints for "
             f"{' and '.join(plan.labels.get(c, c) for c in FIT_CCAS)} at 1 BDP and the 2 BDP means its Average "
             f"rows imply ({terms} terms when every setting ran), squared, averaged over the small flows' terms and "
             f"over the large flow's, the small flows' weighing {SMALL_WEIGHT}:1, and the root taken; its 95 % CI "
             f"by resampling each setting's repetitions ({BOOTSTRAP_DRAWS} draws).  Default: the smallest distance "
             f"among candidates neither the paper's numbers nor the harness's own rule (no receiver may hold a "
             f"flow back) rule out; those whose CI reaches its CI tie with it "
             f"(without CIs: within {TIE:.0%}), and among them the fewest choices the paper does not state, then "
             f"the smallest distance.  SUSS on is not fitted: its values are the prediction (the verdict's count "
             f"over the on-arm values and the improvements).", "",
             "| candidate | distance [95 % CI] | terms | ruled out (the paper's numbers, the harness's rule) | "
             "unstated choices | "
             "SUSS-on prediction reproduced |", "|---|---|---|---|---|---|"]
    for f in sorted(fits, key=lambda f: (f.distance is None, f.distance or 0)):
        mark = " **(chosen)**" if f is chosen else ""
        dist = f"{f.distance:.3f}" if f.distance is not None else "–"
        if f.ci:
            dist += f" [{f.ci[0]:.3f}, {f.ci[1]:.3f}]"
        lines.append(f"| {f.label}{mark} | {dist} | {len(f.terms)} of {terms} | {'; '.join(f.ruled_out) or 'no'} | "
                     f"{f.unstated} | {f.prediction} |")
    measured = [f for f in fits if f.distance is not None]
    shown = chosen or (min(measured, key=lambda f: f.distance) if measured else None)
    if chosen:
        lines += ["", f"Chosen by the rule: **{chosen.label}** (distance {chosen.distance:.3f}); the Table 1 below "
                      f"is its cells'.", ""]
    else:
        lines += ["", f"No candidate is chosen: none that the paper's numbers allow has all {terms} terms yet "
                      f"(settings still to run)."
                  + (f"  The Table 1 below is the nearest so far, **{shown.label}**, over {len(shown.terms)} of "
                     f"{terms} terms: provisional." if shown else ""), ""]
    summary = {"axes": axes, "chosen": chosen.candidate if chosen else None,
               "shown": shown.candidate if shown else None,
               "fits": [{"candidate": f.candidate, "distance": f.distance, "ci": f.ci, "terms": f.terms,
                         "ruled_out": f.ruled_out, "unstated": f.unstated, "prediction": f.prediction}
                        for f in fits]}
    return lines, (plans[tuple(shown.candidate.values())] if shown else None), summary

