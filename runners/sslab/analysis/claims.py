"""The claims ledger: each quantitative claim of a paper, what decides it here, and our verdict.

A ledger is a data file (experiments/claims/<name>.yaml): per claim its words, where the paper makes
it, the quantity it is about, the test that decides it (stated before any result is read) and the
evidence that feeds the test (an experiment's archive and a named extractor), or why nothing here
can test it.  `sslab claims` reads the archives and writes the ledger page.

The tests, on our value's mean and its 95 % CI over the repetitions (n):

    value      the paper prints a number: the Table 1 rule (sslab.analysis.verdict): within ±15 %
               (a quantity) or ±10 points (an improvement), or at n >= 10 inside our CI:
               reproduced; otherwise not reproduced.  Decided at any n.
    at_least   "over 20 %": our CI wholly at or above the threshold: reproduced; wholly below it:
               not reproduced; across it, or no CI (n < 2): not decided at this n.
    at_most    "no noticeable negative impact", made precise as a bound: our CI wholly at or below
               it: reproduced; wholly above: not reproduced; across it or no CI: not decided.

A sign alone is never a verdict: an at_least claim whose mean clears the threshold while its CI does
not is "not decided", and a value claim of the right sign and the wrong size is "not reproduced".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .. import paths
from .stats import describe
from .verdict import CI_MIN_N, Comparison

#: The ledgers, one file a paper.
LEDGER_DIR = paths.REPO_ROOT / "experiments" / "claims"

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable here"
NO_EVIDENCE = "no evidence yet"


class ClaimTest(BaseModel):
    """How a claim is decided (module docstring)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    rule: Literal["value", "at_least", "at_most"]
    #: value: the paper's number, and whether it is an improvement in percent or another quantity.
    paper: float | None = None
    kind: Literal["improvement", "value", "fct", "change"] = "value"
    #: at_least / at_most: the bound, and where it comes from (a claim's words made precise).
    bound: float | None = None
    bound_reason: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> "ClaimTest":
        if self.rule == "value" and self.paper is None:
            raise ValueError("a value test needs the paper's value (paper:)")
        if self.rule != "value" and (self.bound is None or not self.bound_reason):
            raise ValueError(f"an {self.rule} test needs a bound and its reason (bound:, bound_reason:)")
        return self


class Evidence(BaseModel):
    """Where the numbers come from: an experiment (its make target), the archive under results/ it
    writes, and the extractor that reads the claim's quantity from it, with its arguments."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    experiment: str
    archive: str | None = None
    extract: str | None = None
    args: dict[str, str] = Field(default_factory=dict)


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    where: str              # "§6.5, Table 1 (a)"
    words: str              # the claim as the paper words it (short)
    quantity: str           # what is measured, precisely
    test: ClaimTest | None = None
    evidence: Evidence | None = None
    #: Why nothing here can test it (a real Internet path, a device we do not have, ...).
    untestable: str | None = None

    @model_validator(mode="after")
    def _decidable_or_why_not(self) -> "Claim":
        if (self.untestable is None) == (self.test is None):
            raise ValueError(f"{self.id}: a claim has a test (and evidence) or says why it is untestable, not both")
        if self.test is not None and self.evidence is None:
            raise ValueError(f"{self.id}: a test needs its evidence (experiment, archive, extract)")
        return self


class Ledger(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    claims: list[Claim] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "Ledger":
        ids = [c.id for c in self.claims]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"claim ids twice: {', '.join(dup)}")
        return self


class LedgerError(ValueError):
    pass


def load_ledger(name_or_path: str) -> Ledger:
    path = Path(name_or_path)
    if not path.suffix:
        path = LEDGER_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in LEDGER_DIR.glob("*.yaml")))
        raise LedgerError(f"no ledger {name_or_path!r} (known: {known})")
    try:
        return Ledger.model_validate(yaml.safe_load(path.read_text()))
    except ValueError as e:
        raise LedgerError(f"{path}: {e}") from e


# --------------------------------------------------------------------------
# The tests


@dataclass(frozen=True)
class Measured:
    """A claim's quantity as we measured it: its mean and 95 % CI over n repetitions."""
    mean: float
    n: int
    ci95: tuple[float, float] | None
    source: str             # the archive and what of it was read


@dataclass(frozen=True)
class Verdict:
    verdict: str            # REPRODUCED, NOT_REPRODUCED, "not decided at n = K", NOT_TESTABLE, NO_EVIDENCE
    why: str


def decide(test: ClaimTest, m: Measured) -> Verdict:
    """The verdict of @test on @m (the module docstring's rules)."""
    if test.rule == "value":
        c = Comparison(where="", what="", kind=test.kind, ours=m.mean, paper=test.paper, n=m.n, ci95=m.ci95)
        how = ("inside our CI" if c.inside_ci and abs(c.difference) > c.tolerance
               else f"{c.difference_text()}, tolerance ±{c.tolerance:.3g}")
        return Verdict(REPRODUCED if c.reproduced else NOT_REPRODUCED, f"ours {m.mean:.3g} against {test.paper:g}: {how}")
    bound = test.bound
    if m.ci95 is None:
        return Verdict(f"not decided at n = {m.n}", f"ours {m.mean:.3g} (no CI at n = {m.n}) against the bound {bound:g}")
    lo, hi = m.ci95
    ci = f"ours {m.mean:.3g} [{lo:.3g}, {hi:.3g}] against the bound {bound:g}"
    if test.rule == "at_least":
        if lo >= bound:
            return Verdict(REPRODUCED, f"{ci}: the CI is at or above it")
        if hi < bound:
            return Verdict(NOT_REPRODUCED, f"{ci}: the CI is below it")
    else:
        if hi <= bound:
            return Verdict(REPRODUCED, f"{ci}: the CI is at or below it")
        if lo > bound:
            return Verdict(NOT_REPRODUCED, f"{ci}: the CI is above it")
    more = "" if m.n >= CI_MIN_N else f" (n < {CI_MIN_N})"
    return Verdict(f"not decided at n = {m.n}", f"{ci}: the CI spans it{more}")


# --------------------------------------------------------------------------
# The extractors: an archive's numbers for a claim's quantity


def measured(vals: list[float], source: str) -> Measured:
    """@vals, one a repetition, as a Measured: their mean and its 95 % CI (stats.describe)."""
    d = describe(vals)
    return Measured(d["mean"], d["n"], tuple(d["ci95"]) if d["ci95"] else None, source)


def _table1_columns(archive: Path, large_cc: str) -> list[list[dict]]:
    """The column @large_cc of a Table 1 archive, its settings on the paper's grid: each setting's
    repetitions with both arms."""
    from .archive import latest_plan
    from .table1 import on_paper_grid
    from .table1_compare import repetitions

    _, plan = latest_plan(archive)
    reps = repetitions(archive)
    column = [r for (cca, buf, rtt), r in sorted(reps.items())
              if cca == large_cc and on_paper_grid(plan, {"large_cc": cca, "buffer": buf, "large_rtt": rtt})]
    grid = plan.axis_values or {}
    need = len(grid.get("buffer", [])) * len(grid.get("large_rtt", []))
    if not column or len(column) < need:
        # The paper's Average is over every buffer and minRTT of its table: so is ours.
        raise LedgerError(f"{archive}: {len(column)} of the {need} settings of {large_cc} on the paper's grid have "
                          f"both arms done; the claim is over all of them")
    return column


def _per_repetition(column: list[list[dict]], value: Callable[[list[dict]], float]) -> list[float]:
    """@value of the column's k-th repetitions, one number per k up to the fewest any setting has."""
    k = min(len(reps) for reps in column)
    return [value([reps[i] for reps in column]) for i in range(k)]


def table1_average_improvement(archive: Path, large_cc: str) -> Measured:
    """The small flows' improvement over the column's settings, as the paper's Average row takes it:
    1 - (mean small FCT with SUSS) / (mean without), over the settings; its CI over repetitions."""
    column = _table1_columns(archive, large_cc)

    def improvement(row: list[dict]) -> float:
        on = statistics.fmean(r["on"]["small_mean_fct_s"] for r in row)
        off = statistics.fmean(r["off"]["small_mean_fct_s"] for r in row)
        return (1 - on / off) * 100

    vals = _per_repetition(column, improvement)
    return measured(vals, f"{archive}: {large_cc}, {len(column)} settings, improvement of the means per repetition")


def table1_large_slowdown(archive: Path, large_cc: str) -> Measured:
    """The large flow's FCT change with SUSS in percent (positive: slower), the mean over the
    column's settings; its CI over repetitions."""
    column = _table1_columns(archive, large_cc)
    vals = _per_repetition(column, lambda row: statistics.fmean(
        (r["on"]["large_fct_s"] / r["off"]["large_fct_s"] - 1) * 100 for r in row))
    return measured(vals, f"{archive}: {large_cc}, {len(column)} settings, the large flow's mean change per repetition")


def fairness_recovery_gain(archive: Path, buffer: str, incumbents: str = "cubic") -> Measured:
    """How much sooner fairness returns with SUSS (E6): the time to F >= 0.95 after the fifth flow's
    start, SUSS off less SUSS on, in seconds, the mean over the buffer's minRTTs; its CI over the
    repetitions.  A run never back within its observation counts as back at its end, which understates
    that arm's time (so a gain, when SUSS on never recovers, is overstated: said in the verdict's source)."""
    from .archive import latest_plan
    from .fairness import recoveries

    _, plan = latest_plan(archive)
    runs, _ = recoveries(archive, plan)
    mine = [r for r in runs if r["buffer"] == buffer and r["incumbents"] == incumbents]
    rtts = (plan.axis_values or {}).get("rtt", [])
    by: dict[tuple[str, int], dict] = {}
    censored = 0
    for r in mine:
        t = r["recovery_s"]
        if t is None:
            t, censored = r["observed_s"], censored + 1
        by.setdefault((r["rtt"], r["rep"]), {})[r["side"]] = t
    done = {rtt for (rtt, _), sides in by.items() if len(sides) == 2}
    if not rtts or not set(rtts) <= done:
        raise LedgerError(f"{archive}: {len(done)} of the {len(rtts)} minRTTs at {buffer} have both arms done; "
                          f"the claim is over all of them (`make fairness BUF={buffer}`)")
    column = [[sides["off"] - sides["on"] for (rtt2, _), sides in sorted(by.items()) if rtt2 == rtt and len(sides) == 2]
              for rtt in rtts]
    k = min(len(c) for c in column)
    vals = [statistics.fmean(c[i] for c in column) for i in range(k)]
    note = f"; {censored} run(s) never back within the observation, counted as back at its end" if censored else ""
    return measured(vals,
                    f"{archive}: {incumbents} incumbents at {buffer}, {len(rtts)} minRTTs{note}")


def e4_least_improvement(archive: Path, links: str, max_mb: str, min_rtt_ms: str = "50",
                         on: str = "cubic_suss 2024") -> Measured:
    """The least FCT improvement with SUSS (in percent) over E4's @links (comma-separated) and its sizes
    under @max_mb at RTTs over @min_rtt_ms, from the report's summary (E4's `improvements`: (off - on) /
    off of the mean FCT, Welch's CI).  A claim over all of them ("in all") is the least of several:
    its CI runs from the least lower end to the least upper end, so that `at_least` calls it
    reproduced only when every one clears the bound and not reproduced when any one falls short."""
    import json

    summary = archive / "summary.json"
    if not summary.is_file():
        raise LedgerError(f"{archive}: no summary.json (an E4 report: `make fct-vs-size`)")
    want = [x for x in links.split(",") if x]
    imps = [i for i in json.loads(summary.read_text()).get("improvements", [])
            if i["link"] in want and i["size"] < float(max_mb) * 1e6 and i["rtt_ms"] > float(min_rtt_ms)
            and i["on"] == on]
    missing = [x for x in want if x not in {i["link"] for i in imps}]
    if missing:
        raise LedgerError(f"{archive}: no {on} improvement for {', '.join(missing)} under {max_mb} MB over "
                          f"{min_rtt_ms} ms (`make fct-vs-size LINKS=...` runs it)")
    least = min(imps, key=lambda i: i["improvement"])
    cis = [i.get("improvement_ci") for i in imps]
    ci = None if any(c is None for c in cis) else (min(c[0] for c in cis) * 100, min(c[1] for c in cis) * 100)
    n = min(min(i["n"]) for i in imps)
    return Measured(least["improvement"] * 100, n, ci,
                    f"{archive}: {len(imps)} link x size points; the least, {least['link']} at "
                    f"{least['size'] / 1e6:g} MB and {least['rtt_ms']:g} ms")


EXTRACTORS: dict[str, Callable[..., Measured]] = {
    "e4_least_improvement": e4_least_improvement,
    "fairness_recovery_gain": fairness_recovery_gain,
    "table1_average_improvement": table1_average_improvement,
    "table1_large_slowdown": table1_large_slowdown,
}


def judge(claim: Claim, results: Path = paths.RESULTS_DIR) -> tuple[Verdict, Measured | None]:
    """A claim's verdict from the archives under @results."""
    if claim.untestable:
        return Verdict(NOT_TESTABLE, claim.untestable), None
    ev = claim.evidence
    if not ev.extract or not ev.archive:
        return Verdict(NO_EVIDENCE, f"nothing reads it yet from `make {ev.experiment}`"), None
    archive = results / ev.archive
    if not archive.is_dir():
        return Verdict(NO_EVIDENCE, f"no archive {archive}: run `make {ev.experiment}`"), None
    try:
        m = EXTRACTORS[ev.extract](archive, **ev.args)
    except (LedgerError, ValueError) as e:  # ArchiveError is a ValueError: a matrix directory without a plan
        return Verdict(NO_EVIDENCE, str(e)), None
    return decide(claim.test, m), m


def ledger_page(ledger: Ledger, results: Path = paths.RESULTS_DIR) -> str:
    """The ledger as markdown: the claims down the side, our verdict and evidence across."""
    rows = [judge(c, results) + (c,) for c in ledger.claims]
    counts = {}
    for v, _, _ in rows:
        key = "not decided" if v.verdict.startswith("not decided") else v.verdict
        counts[key] = counts.get(key, 0) + 1
    lines = [f"# Claims of {ledger.source}", "",
             "**" + "; ".join(f"{n} {k}" for k, n in counts.items()) + f"** of {len(rows)} claims.", "",
             "| claim | where | the paper's words | quantity | test | verdict | why | n |", "|---|---|---|---|---|---|---|---|"]
    for v, m, c in rows:
        test = "–" if c.test is None else (
            f"value {c.test.paper:g}" if c.test.rule == "value" else
            f"{c.test.rule.replace('_', ' ')} {c.test.bound:g} ({c.test.bound_reason})")
        lines.append(f"| {c.id} | {c.where} | {c.words} | {c.quantity} | {test} | **{v.verdict}** | {v.why} | "
                     f"{m.n if m else '–'} |")
    return "\n".join(lines) + "\n"
