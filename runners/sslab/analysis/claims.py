"""The claims ledger: each quantitative claim of a paper, what decides it here, and our verdict.

A ledger is a data file (experiments/claims/<name>.yaml): per claim its words, where the paper makes
it, the quantity it is about, the test that decides it (stated before any result is read) and the
evidence that feeds the test (an experiment's archive and a named extractor), or why nothing here
can test it.  `sslab claims` reads the archives and writes the ledger page.

The tests, on our value's mean and its 95 % CI over the repetitions (n):

    value      the paper prints a number: the Table 1 rule (sslab.analysis.verdict): our CI inside
               ±15 % of it (a quantity) or ±10 points (an improvement): reproduced; wholly outside:
               not reproduced; across an edge: not decided at this n.  At n = 1 the mean decides.
    at_least   "over 20 %": our CI wholly at or above the threshold: reproduced; wholly below it:
               not reproduced; across it, or no CI (n < 2): not decided at this n.
    at_most    "no noticeable negative impact", made precise as a bound: our CI wholly at or below
               it: reproduced; wholly above: not reproduced; across it or no CI: not decided.
    within     "almost the same", made precise as a band -bound..+bound around zero: our CI wholly
               inside it: reproduced; wholly outside it (above +bound or below -bound): not
               reproduced; across an edge or no CI: not decided.

A sign alone is never a verdict: an at_least claim whose mean clears the threshold while its CI does
not is "not decided", and a value claim of the right sign and the wrong size is "not reproduced".
"""

from __future__ import annotations

import fnmatch
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .. import paths
from ..scenario.knobs import KNOBS
from .archive import ArchiveError, latest_plan
from .conditions import departures
from .stats import describe
from .verdict import NOT_DECIDED, NOT_REPRODUCED, REPRODUCED, Comparison
from .verdict import needed_n as verdict_needed_n

#: The ledgers, one file a paper.
LEDGER_DIR = paths.REPO_ROOT / "experiments" / "claims"

NOT_TESTABLE = "not testable here"
NO_EVIDENCE = "no evidence yet"


class ClaimTest(BaseModel):
    """How a claim is decided (module docstring)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    rule: Literal["value", "at_least", "at_most", "within"]
    #: value: the paper's number, and whether it is an improvement in percent or another quantity.
    paper: float | None = None
    kind: Literal["improvement", "value", "fct", "change"] = "value"
    #: value: ± of the paper's number as it prints it (29 %: 0.5), which widens the band (verdict.py).
    rounding: float = Field(default=0.0, ge=0)
    #: at_least / at_most / within: the bound, and where it comes from (a claim's words made precise).
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
    #: Where the claim fails here: what runs that change one candidate cause at a time found, and where
    #: they are recorded (docs/notebook/).  Shown beside a "not reproduced" verdict.
    cause: str | None = None
    #: Candidate causes tried and ruled out, one a line (what changed, what it did, where it is
    #: recorded): shown beside a "not reproduced" verdict, with the cause when one was found.
    tried: list[str] = Field(default_factory=list)
    #: The model of ours the verdict is judged on where the paper's own path is not stated or not
    #: reproducible ("our LTE link model behind 200 ms"): the verdict says so, whatever it is.
    judged_on: str | None = None

    @model_validator(mode="after")
    def _decidable_or_why_not(self) -> "Claim":
        if (self.untestable is None) == (self.test is None):
            raise ValueError(f"{self.id}: a claim has a test (and evidence) or says why it is untestable, not both")
        if self.test is not None and self.evidence is None:
            raise ValueError(f"{self.id}: a test needs its evidence (experiment, archive, extract)")
        return self


class ValueCause(BaseModel):
    """Why some of the paper values a report sets beside ours differ (those whose claim id matches one
    of @ids, shell patterns such as "table-3-*"): a cause found, or causes tried, as a claim's."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    ids: list[str] = Field(min_length=1)
    cause: str | None = None
    tried: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _says_something(self) -> "ValueCause":
        if not self.cause and not self.tried:
            raise ValueError(f"{', '.join(self.ids)}: a cause or the causes tried")
        return self


class PaperValues(BaseModel):
    """Every value a paper prints that an experiment's report sets beside ours (the report's summary
    holds each as a comparison: where, what, the paper's number, ours, n, CI), each a claim of the
    value test: the Astart paper's Tables 1-3, the Blitzstart report's Table 1.  The numbers live with
    the report's reference data; the ledger names where to read them."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    experiment: str
    archive: str
    where: str              # "Astart, Tables 1-3, Fig. 12 and the fairness runs"
    #: How many values the paper prints there: a report that sets fewer beside ours says so.
    count: int = Field(ge=1)
    #: Why the values not reproduced differ, by their claim ids.
    causes: list[ValueCause] = Field(default_factory=list)


class ValueCounts(BaseModel):
    """A matrix's paper values counted by outcome, per group, as its report's headline counts them (Table
    1's: the large flow's FCTs, the small flows' FCTs, the improvements, the stability effect, the
    means): the ledger carries the same counts, from the archive (of those @archive names) with the most
    cells done."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    experiment: str
    archive: str            # a path or glob under results/ ("table1/*")
    where: str              # "Table 1, every value"


class Ledger(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    claims: list[Claim] = Field(default_factory=list)
    paper_values: PaperValues | None = None
    value_counts: list[ValueCounts] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> "Ledger":
        if not self.claims and self.paper_values is None and not self.value_counts:
            raise ValueError("a ledger has claims, or the paper values a report sets beside ours, or both")
        ids = [c.id for c in self.claims]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"claim ids twice: {', '.join(dup)}")
        return self


class LedgerError(ValueError):
    pass


class NotThisArchive(LedgerError):
    """The archive holds none of the settings the claim is about (E6 at another buffer, Table 1's other
    column): a report over it does not list the claim as one it tests."""


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
    #: The run directories (scenario runs, a matrix's cells) the numbers came from: their provenance.
    runs: tuple[Path, ...] = ()
    #: The make target's options that made the archive, as the archive records them ("BUF=2BDP ITER=10").
    options: str = ""


@dataclass(frozen=True)
class Verdict:
    verdict: str            # REPRODUCED, NOT_REPRODUCED, "not decided at n = K", NOT_TESTABLE, NO_EVIDENCE
    why: str
    #: (NO_EVIDENCE) every archive read holds none of the claim's settings (NotThisArchive)
    elsewhere: bool = False


def decide(test: ClaimTest, m: Measured) -> Verdict:
    """The verdict of @test on @m (the module docstring's rules)."""
    if test.rule == "value":
        c = value_comparison(test, m)
        lo, hi = c.band
        where = "no CI: the mean decides" if not c.has_ci else {
            REPRODUCED: "the CI is inside it", NOT_REPRODUCED: "the CI is outside it",
            NOT_DECIDED: "the CI spans an edge of it"}[c.outcome]
        ours = _ci_text(m) if c.has_ci else f"{m.mean:.3g}"
        why = f"ours {ours} against {test.paper:g} ({c.difference_text()}), the band [{lo:.3g}, {hi:.3g}]: {where}"
        if c.outcome == NOT_DECIDED:
            need = c.needed_n
            why += (f"; at this spread about n = {need} would decide it, if the mean held" if need else
                    "; the mean sits on an edge: no n decides it at this spread")
        return Verdict(f"not decided at n = {m.n}" if c.outcome == NOT_DECIDED else c.outcome, why)
    bound = test.bound
    if m.ci95 is None:
        return Verdict(f"not decided at n = {m.n}", f"ours {m.mean:.3g} (no CI at n = {m.n}) against the bound {bound:g}")
    lo, hi = m.ci95
    ci = f"ours {m.mean:.3g} [{lo:.3g}, {hi:.3g}] against the bound {bound:g}"
    if test.rule == "within":
        ci = f"ours {m.mean:.3g} [{lo:.3g}, {hi:.3g}] against the band ±{bound:g}"
        if -bound <= lo and hi <= bound:
            return Verdict(REPRODUCED, f"{ci}: the CI is inside it")
        if lo > bound or hi < -bound:
            return Verdict(NOT_REPRODUCED, f"{ci}: the CI is outside it")
    elif test.rule == "at_least":
        if lo >= bound:
            return Verdict(REPRODUCED, f"{ci}: the CI is at or above it")
        if hi < bound:
            return Verdict(NOT_REPRODUCED, f"{ci}: the CI is below it")
    else:
        if hi <= bound:
            return Verdict(REPRODUCED, f"{ci}: the CI is at or below it")
        if lo > bound:
            return Verdict(NOT_REPRODUCED, f"{ci}: the CI is above it")
    edge = "an edge of " if test.rule == "within" else ""
    need = needed_n(test, m)
    hint = (f"; at this spread about n = {need} would decide it, if the mean held" if need else
            "; the mean sits on the bound: no n decides it at this spread" if need == 0 else "")
    return Verdict(f"not decided at n = {m.n}", f"{ci}: the CI spans {edge}it{hint}")


def value_comparison(test: ClaimTest, m: Measured) -> Comparison:
    """A value test's number beside ours, as Table 1's verdict compares them."""
    return Comparison(where="", what="", kind=test.kind, ours=m.mean, paper=test.paper, n=m.n, ci95=m.ci95,
                      rounding=test.rounding)


def needed_n(test: ClaimTest, m: Measured) -> int | None:
    """How many repetitions would give a CI clear of @test's bound (a value test: of its band's nearest
    edge), if the mean and the spread stayed as @m measured them (verdict.needed_n).  None without a
    CI, or for a value test already decided; 0 when the mean sits on the edge."""
    if test.rule == "value":
        return value_comparison(test, m).needed_n
    b = test.bound
    gap = abs(b - abs(m.mean)) if test.rule == "within" else abs(m.mean - b)
    return verdict_needed_n(m.mean, m.ci95, m.n, gap)


# --------------------------------------------------------------------------
# The extractors: an archive's numbers for a claim's quantity


def measured(vals: list[float], source: str, runs: list[Path] = (), options: str = "") -> Measured:
    """@vals, one a repetition, as a Measured: their mean and its 95 % CI (stats.describe)."""
    d = describe(vals)
    return Measured(d["mean"], d["n"], tuple(d["ci95"]) if d["ci95"] else None, source, tuple(runs), options)


@dataclass(frozen=True)
class Point:
    """One of the points a claim over several (every setting, link or size) is judged on."""
    where: str
    value: float
    ci95: tuple[float, float] | None
    n: int


def extreme(points: list[Point], largest: bool = False) -> tuple[Point, tuple[float, float] | None]:
    """The least of @points (@largest: the largest), and the CI a claim over all of them is judged on:
    from the least lower end to the least upper end (the largest: the largest ends), so that a bound
    is cleared only when every point's CI clears it and missed when any one lies wholly on its wrong
    side; None when a point has no CI."""
    pick = max if largest else min
    top = pick(points, key=lambda x: x.value)
    cis = [x.ci95 for x in points]
    return top, None if any(c is None for c in cis) else (pick(c[0] for c in cis), pick(c[1] for c in cis))


def matrix_options(plan) -> str:
    """The make options a matrix archive's plan was asked with: its selection by the axes' option
    names (CCA=, BUF=, RTT=) and ITER=."""
    sel = [f"{plan.axes.get(axis, axis)}={','.join(vals)}" for axis, vals in sorted(plan.selection.items())]
    return " ".join(sel + [f"ITER={plan.iterations}"])


def _cell_dirs(archive: Path, **setting: str) -> tuple[list[Path], str]:
    """The finished cells of a matrix archive whose setting has @setting's values, and the make
    options its plan was asked with."""
    from .archive import current_cells, latest_plan
    _, plan = latest_plan(archive)
    cells = [d for c, d in current_cells(archive, plan)
             if all(c.setting.get(k) == v for k, v in setting.items())]
    return cells, matrix_options(plan)


def _table1_columns(archive: Path, large_cc: str) -> list[list[dict]]:
    """The column @large_cc of a Table 1 archive, its settings on the paper's grid: each setting's
    repetitions with both arms."""
    return [reps for _, reps in _table1_settings(archive, large_cc)]


def _table1_settings(archive: Path, large_cc: str) -> list[tuple[tuple[str, str, str], list[dict]]]:
    """_table1_columns with each setting's (large_cc, buffer, large_rtt)."""
    from .archive import latest_plan
    from .table1 import on_paper_grid
    from .table1_compare import repetitions

    _, plan = latest_plan(archive)
    reps = repetitions(archive)
    column = [((cca, buf, rtt), r) for (cca, buf, rtt), r in sorted(reps.items())
              if cca == large_cc and on_paper_grid(plan, {"large_cc": cca, "buffer": buf, "large_rtt": rtt})]
    grid = plan.axis_values or {}
    need = len(grid.get("buffer", [])) * len(grid.get("large_rtt", []))
    if not column or len(column) < need:
        # The paper's Average is over every buffer and minRTT of its table: so is ours.
        raise (LedgerError if column else NotThisArchive)(
            f"{archive}: {len(column)} of the {need} settings of {large_cc} on the paper's grid have both arms "
            f"done; the claim is over all of them")
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
    return measured(vals, f"{archive}: {large_cc}, {len(column)} settings, improvement of the means per repetition",
                    *_cell_dirs(archive, large_cc=large_cc))


def table1_large_slowdown(archive: Path, large_cc: str) -> Measured:
    """The large flow's FCT change with SUSS in percent (positive: slower), the mean over the
    column's settings; its CI over repetitions."""
    column = _table1_columns(archive, large_cc)
    from .table1 import large_change_pct
    vals = _per_repetition(column, lambda row: statistics.fmean(large_change_pct(r) for r in row))
    return measured(vals, f"{archive}: {large_cc}, {len(column)} settings, the large flow's mean change per repetition",
                    *_cell_dirs(archive, large_cc=large_cc))


def table1_large_worst_setting(archive: Path, large_cc: str) -> Measured:
    """The large flow's FCT change with SUSS in percent (positive: slower) in the setting where it is
    largest, over every setting of the columns @large_cc names (comma-separated), each setting's mean
    and 95 % CI over its repetitions.  The CI runs from the largest lower end to the largest upper end
    (least_improvement's mirror), so that `at_most` calls it reproduced only when every setting's CI
    lies at or below the bound, and not reproduced when any one lies wholly above it: a claim that
    holds of each setting ("without compromising"), which one slow setting in a fine mean fails."""
    from .table1 import large_change_pct

    ccs = [x for x in large_cc.split(",") if x]
    points = [Point(" ".join(key), d["mean"], d["ci95"] and tuple(d["ci95"]), d["n"])
              for cc in ccs for key, d in ((k, describe([large_change_pct(r) for r in reps]))
                                           for k, reps in _table1_settings(archive, cc))]
    worst, ci = extreme(points, largest=True)
    slower = sum(1 for p in points if p.ci95 and p.ci95[0] > 0)
    cells, options = [], ""
    for cc in ccs:
        c, options = _cell_dirs(archive, large_cc=cc)
        cells += c
    return Measured(worst.value, min(p.n for p in points), ci,
                    f"{archive}: {large_cc}, {len(points)} settings; the slowest, {worst.where}, {worst.value:+.2f} %; "
                    f"{slower} of them slower with SUSS beyond their CI", tuple(cells), options)


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
        raise (LedgerError if done else NotThisArchive)(
            f"{archive}: {len(done)} of the {len(rtts)} minRTTs at {buffer} have both arms done; the claim is "
            f"over all of them (`make fairness BUF={buffer}`)")
    column = [[sides["off"] - sides["on"] for (rtt2, _), sides in sorted(by.items()) if rtt2 == rtt and len(sides) == 2]
              for rtt in rtts]
    k = min(len(c) for c in column)
    vals = [statistics.fmean(c[i] for c in column) for i in range(k)]
    note = f"; {censored} run(s) never back within the observation, counted as back at its end" if censored else ""
    return measured(vals, f"{archive}: {incumbents} incumbents at {buffer}, {len(rtts)} minRTTs{note}",
                    *_cell_dirs(archive, buffer=buffer))


def _report_summary(archive: Path, what: str) -> dict:
    """The summary.json of a report directory (@what: which report and its make target, for the error)."""
    import json

    summary = archive / "summary.json"
    if not summary.is_file():
        raise LedgerError(f"{archive}: no summary.json ({what})")
    return json.loads(summary.read_text())


def _e4_summary(archive: Path) -> tuple[dict, list[Path], str]:
    """An E4 report's summary, the scenario runs it was written over, and the make options that ran
    them (LINKS= the links, REPS= the fewest repetitions any size has)."""
    s = _report_summary(archive, "an E4 report: `make fct-vs-size`")
    runs = [Path(r) for r in s.get("runs", [])]
    # The settings (each run directory lies in results/fct-vs-size/<setting>/) and the variants run
    # ("cubic_suss 2024" ran as cubic_suss): the SELECT= that runs this archive again.
    settings = sorted({r.parent.name for r in runs})
    variants = sorted({r["cc"].split()[0] for r in s.get("sizes", [])})
    reps = min((r["n"] for r in s.get("sizes", [])), default=0)
    return s, runs, f"SELECT={','.join(settings + variants)} REPS={reps}"


def e4_least_improvement(archive: Path, links: str, max_mb: str, min_rtt_ms: str = "50",
                         on: str = "cubic_suss 2024") -> Measured:
    """The least FCT improvement with SUSS (in percent) over E4's @links (comma-separated) and its sizes
    under @max_mb at RTTs over @min_rtt_ms, from the report's summary (E4's `improvements`: (off - on) /
    off of the mean FCT, Welch's CI), as least_improvement takes it."""
    s, runs, options = _e4_summary(archive)
    want = [x for x in links.split(",") if x]
    imps = [i for i in s.get("improvements", [])
            if i["link"] in want and i["size"] < float(max_mb) * 1e6 and i["rtt_ms"] > float(min_rtt_ms)
            and i["on"] == on]
    missing = [x for x in want if x not in {i["link"] for i in imps}]
    if missing:
        raise LedgerError(f"{archive}: no {on} improvement for {', '.join(missing)} under {max_mb} MB over "
                          f"{min_rtt_ms} ms (`make fct-vs-size LINKS=...` runs it)")
    least = min(imps, key=lambda i: i["improvement"])
    m = least_improvement(imps)
    return Measured(m.mean, m.n, m.ci95, f"{archive}: {len(imps)} link x size points; the least, {least['link']} at "
                    f"{least['size'] / 1e6:g} MB and {least['rtt_ms']:g} ms", tuple(runs), options)


def least_improvement(imps: list[dict]) -> Measured:
    """The least of E4's improvements (lastmile.improvements: fractions, Welch's CI, n per arm) in
    percent, for a claim over all of them ("in all"): its CI runs from the least lower end to the least
    upper end, so that `at_least` calls it reproduced only when every one clears the bound and not
    reproduced when any one lies wholly below it."""
    least, ci = extreme([Point("", i["improvement"] * 100, i.get("improvement_ci") and
                               (i["improvement_ci"][0] * 100, i["improvement_ci"][1] * 100), min(i["n"])) for i in imps])
    return Measured(least.value, min(min(i["n"]) for i in imps), ci, "")


def e4_loss_ratio(archive: Path, link: str, rtt_ms: str, min_mb: str, max_mb: str,
                  on: str = "cubic_suss 2024", off: str = "cubic_hs") -> Measured:
    """Packets lost with SUSS over packets lost without (E5): the bottleneck's drops summed over E4's
    sizes from @min_mb to @max_mb MB on @link at @rtt_ms, each size's mean per run, on over off.  Its
    CI by the delta method from each size's mean and standard error (the sum's variance is the sum of
    the sizes'; the ratio's relative variance the sum of the two sums' relative variances), Student's t
    at the fewest repetitions any size has, less one: an approximation that is said with the verdict."""
    import math

    from .stats import t95

    s, runs, options = _e4_summary(archive)
    lo, hi = float(min_mb) * 1e6, float(max_mb) * 1e6
    rows = [r for r in s.get("sizes", []) if r["link"] == link and abs(r["rtt_ms"] - float(rtt_ms)) < 1e-6
            and lo <= r["size"] <= hi]
    sums = {}
    for side in (on, off):
        mine = [r for r in rows if r["cc"] == side and r["lost"]["n"]]
        if not mine:
            raise LedgerError(f"{archive}: no {side} run on {link} at {rtt_ms} ms between {min_mb} and {max_mb} MB "
                              f"(`make fct-vs-size LINKS={link}` runs it)")
        var = 0.0
        for r in mine:
            d = r["lost"]
            if d["ci95"] is not None and d["n"] > 1:
                var += _se(d) ** 2
        sums[side] = (sum(r["lost"]["mean"] for r in mine), var, min(r["lost"]["n"] for r in mine), len(mine))
    (m_on, v_on, n_on, k_on), (m_off, v_off, n_off, k_off) = sums[on], sums[off]
    n = min(n_on, n_off)
    if m_off == 0:
        raise LedgerError(f"{archive}: {off} lost nothing on {link} at {rtt_ms} ms: no ratio")
    ratio = m_on / m_off
    # Each size's own ratio beside the sum (Fig. 14 shows them size by size).
    mean_of = {(r["cc"], r["size"]): r["lost"]["mean"] for r in rows if r["lost"]["n"]}
    per_size = ", ".join(f"{z / 1e6:g} MB {mean_of[(on, z)] / mean_of[(off, z)]:.2f}" if mean_of[(off, z)] else
                         f"{z / 1e6:g} MB -" for z in sorted({z for _, z in mean_of})
                         if (on, z) in mean_of and (off, z) in mean_of)
    ci = None
    if n > 1:
        rel = (v_on / m_on ** 2 if m_on else 0.0) + v_off / m_off ** 2
        half = t95(n - 1) * ratio * math.sqrt(rel)
        ci = (ratio - half, ratio + half)
    return Measured(ratio, n, ci,
                    f"{archive}: {link} at {rtt_ms} ms, {min(k_on, k_off)} sizes {min_mb}-{max_mb} MB: {m_on:.1f} "
                    f"lost on against {m_off:.1f} off (mean per run, summed over sizes); CI by the delta method; "
                    f"per size, on over off: {per_size}",
                    tuple(runs), options)


def _se(d: dict) -> float:
    """The standard error of a described mean (stats.describe: mean, n, ci95), taken back from its CI."""
    from .stats import t95
    if not d.get("ci95") or d["n"] < 2:
        raise LedgerError("a mean without a CI (n < 2): no difference can be judged")
    return (d["ci95"][1] - d["ci95"][0]) / 2 / t95(d["n"] - 1)


def _difference(terms: list[tuple[float, dict]], n: int) -> tuple[float, tuple[float, float]]:
    """sum(sign * mean) over @terms (sign, a described mean) of independent runs, and its 95 % CI from
    their standard errors (Student's t at the fewest repetitions less one, @n - 1): an approximation
    that is said with the verdict."""
    import math

    from .stats import t95
    value = sum(k * d["mean"] for k, d in terms)
    half = t95(n - 1) * math.sqrt(sum((k * _se(d)) ** 2 for k, d in terms))
    return value, (value - half, value + half)


def _e4_rows(s: dict, link: str, rtt_ms: float, cc: str) -> dict[int, dict]:
    """An E4 summary's size rows of @cc on @link at @rtt_ms, by size."""
    return {r["size"]: r for r in s.get("sizes", [])
            if r["link"] == link and abs(r["rtt_ms"] - rtt_ms) < 1e-6 and r["cc"] == cc}


def _e4_long_rtts(s: dict, link: str, min_rtt_ms: float) -> list[float]:
    return sorted({r["rtt_ms"] for r in s.get("sizes", []) if r["link"] == link and r["rtt_ms"] > min_rtt_ms})


def e4_least_gain_over(archive: Path, links: str, other: str = "bbr", max_mb: str = "12",
                       min_rtt_ms: str = "100", on: str = "cubic_suss 2024") -> Measured:
    """SUSS's FCT gain over @other (percent of @other's mean FCT: positive, SUSS finishes sooner), the
    least over E4's @links at RTTs over @min_rtt_ms and sizes up to @max_mb (Fig. 11: "consistently
    outperforms the other two schemes").  Each point's CI from the two arms' standard errors; the
    least's CI from the least lower end to the least upper end (least_improvement): every point must
    clear the bound, and any one wholly below it fails the claim."""
    s, runs, options = _e4_summary(archive)
    points = []
    for link in [x for x in links.split(",") if x]:
        found = False
        for rtt in _e4_long_rtts(s, link, float(min_rtt_ms)):
            mine, theirs = _e4_rows(s, link, rtt, on), _e4_rows(s, link, rtt, other)
            for size in sorted(set(mine) & set(theirs)):
                if size > float(max_mb) * 1e6:
                    continue
                a, b = theirs[size]["fct"], mine[size]["fct"]
                n = min(a["n"], b["n"])
                diff, ci = _difference([(1, a), (-1, b)], n)
                points.append(Point(f"{link} at {size / 1e6:g} MB and {rtt:g} ms", 100 * diff / a["mean"],
                                    (100 * ci[0] / a["mean"], 100 * ci[1] / a["mean"]), n))
                found = True
        if not found:
            raise LedgerError(f"{archive}: no {on} and {other} runs of the same size on {link} over {min_rtt_ms} ms "
                              f"(`make fct-vs-size` runs them)")
    least, ci = extreme(points)
    return Measured(least.value, min(p.n for p in points), ci,
                    f"{archive}: {len(points)} link x size points against {other}; the least, {least.where}; CIs from "
                    f"each arm's standard error", tuple(runs), options)


def e4_improvement_fall(archive: Path, links: str, small_mb: str = "2", max_mb: str = "12",
                        min_rtt_ms: str = "100", on: str = "cubic_suss 2024") -> Measured:
    """How much SUSS's improvement changes from @small_mb to the largest size up to @max_mb, in
    points (negative: it falls as the flow grows; Fig. 12), the largest over @links at RTTs over
    @min_rtt_ms: the CI of each link's change from the two improvements' CIs (independent runs),
    the largest's from the largest lower end to the largest upper end, so that `at_most 0` holds
    only when it falls on every link."""
    s, runs, options = _e4_summary(archive)
    imps = [i for i in s.get("improvements", []) if i["on"] == on and i["rtt_ms"] > float(min_rtt_ms)]
    points = []
    for link in [x for x in links.split(",") if x]:
        for rtt in sorted({i["rtt_ms"] for i in imps if i["link"] == link}):
            by = {i["size"]: i for i in imps if i["link"] == link and i["rtt_ms"] == rtt}
            small = by.get(int(float(small_mb) * 1e6))
            large = max((z for z in by if z <= float(max_mb) * 1e6), default=None)
            if small is None or large is None or large <= small["size"]:
                continue
            n = min(*small["n"], *by[large]["n"])
            terms = []
            for k, i in ((1, by[large]), (-1, small)):
                if i["improvement_ci"] is None:
                    raise LedgerError(f"{archive}: {link} at {i['size'] / 1e6:g} MB has no CI on its improvement")
                half = (i["improvement_ci"][1] - i["improvement_ci"][0]) / 2 * 100
                terms.append((k, {"mean": i["improvement"] * 100, "n": n,
                                  "ci95": [i["improvement"] * 100 - half, i["improvement"] * 100 + half]}))
            # Each improvement's half-width is already Welch's: its standard error at t(n - 1) stands in.
            diff, ci = _difference(terms, n)
            points.append(Point(f"{link} ({large / 1e6:g} MB, {rtt:g} ms)", diff, ci, n))
        if not any(p.where.startswith(f"{link} (") for p in points):
            raise LedgerError(f"{archive}: no {on} improvement at {small_mb} MB and a larger size on {link} "
                              f"over {min_rtt_ms} ms (`make fct-vs-size` runs them)")
    top, ci = extreme(points, largest=True)
    return Measured(top.value, min(p.n for p in points), ci,
                    f"{archive}: {len(points)} links; the change from {small_mb} MB to the largest size, the least fall on "
                    f"{top.where}; CIs from the two improvements' CIs", tuple(runs), options)


def e4_loss_gap_change(archive: Path, link: str, rtt_ms: str, min_mb: str, max_mb: str,
                       on: str = "cubic_suss 2024", off: str = "cubic_hs") -> Measured:
    """How the loss rates with and without SUSS come together as the flow grows (§6.3, Fig. 14: "converge
    when the flow size increases"): the gap (off - on, percentage points of the packets sent) at the
    largest size up to @max_mb less the gap at the smallest from @min_mb, on @link at @rtt_ms; its CI
    from the four means' standard errors.  Negative: the gap narrows."""
    s, runs, options = _e4_summary(archive)
    a, b = _e4_rows(s, link, float(rtt_ms), on), _e4_rows(s, link, float(rtt_ms), off)
    sizes = sorted(z for z in set(a) & set(b) if float(min_mb) * 1e6 <= z <= float(max_mb) * 1e6)
    if len(sizes) < 2:
        raise LedgerError(f"{archive}: fewer than two sizes with both {off} and {on} on {link} at {rtt_ms} ms "
                          f"between {min_mb} and {max_mb} MB (`make fct-vs-size LINKS={link}` runs them)")
    lo, hi = sizes[0], sizes[-1]

    def pts(d: dict) -> dict:
        return {"mean": d["mean"] * 100, "n": d["n"], "ci95": d["ci95"] and [x * 100 for x in d["ci95"]]}

    terms = [(1, pts(b[hi]["loss_rate"])), (-1, pts(a[hi]["loss_rate"])),
             (-1, pts(b[lo]["loss_rate"])), (1, pts(a[lo]["loss_rate"]))]
    n = min(d["n"] for _, d in terms)
    diff, ci = _difference(terms, n)
    gaps = {z: (b[z]["loss_rate"]["mean"] - a[z]["loss_rate"]["mean"]) * 100 for z in (lo, hi)}
    return Measured(diff, n, ci, f"{archive}: {link} at {rtt_ms} ms, the loss rate's gap off - on {gaps[lo]:.3g} points "
                                 f"at {lo / 1e6:g} MB and {gaps[hi]:.3g} at {hi / 1e6:g} MB; CI from the four means' "
                                 f"standard errors", tuple(runs), options)


def _arm_pairs(archive: Path, size: str, on: str = "cubic_suss",
               off: str = "cubic_hs") -> list[tuple[tuple[dict, Path], tuple[dict, Path]]]:
    """The repetitions of a scenario run's @size case with both arms done: per repetition, (run
    record, run directory) of @on and of @off, paired by repetition (the same seed and link trace
    position: the scenario's order alternates them within a repetition)."""
    from .archive import runs_of

    if not (archive / "job" / "out" / "runs.json").is_file():
        raise LedgerError(f"{archive}: no runs (job/out/runs.json): not a scenario run directory")
    by: dict[int, dict[str, tuple[dict, Path]]] = {}
    for run, d in runs_of(archive):
        params = run["run"].get("params", {})
        if params.get("size") == size and params.get("cc") in (on, off):
            by.setdefault(run["run"]["rep"], {})[params["cc"]] = (run, d)
    pairs = [(sides[on], sides[off]) for _, sides in sorted(by.items()) if len(sides) == 2]
    if not pairs:
        raise LedgerError(f"{archive}: no repetition of {size} with both {off} and {on} done")
    return pairs


def _paired_change(archive: Path, size: str, value: Callable[[dict], float | None], what: str,
                   on: str = "cubic_suss", off: str = "cubic_hs") -> Measured:
    """(on / off - 1) x 100 of @value of the first flow, per repetition of the @size case, the two
    arms paired by repetition (_arm_pairs)."""
    pairs = [(value(a[0]["flows"][0]), value(b[0]["flows"][0])) for a, b in _arm_pairs(archive, size, on, off)]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not pairs:
        raise LedgerError(f"{archive}: no repetition of {size} has {what} in both arms")
    vals = [(a / b - 1) * 100 for a, b in pairs]
    return measured(vals, f"{archive}: {size}, {what} with {on} over {off}, paired by repetition",
                    [archive], f"REPS={len(pairs)}")


def e3_exit_cwnd_change(archive: Path, size: str) -> Measured:
    """Slow start's exit cwnd with SUSS over that without, less one, in percent (E3: Fig. 9)."""
    return _paired_change(archive, size, lambda f: (f.get("slow_start") or {}).get("exit_cwnd"),
                          "slow start's exit cwnd")


def e3_fct_change(archive: Path, size: str) -> Measured:
    """The flow's FCT with SUSS over that without, less one, in percent (positive: slower; E3: Fig. 13)."""
    return _paired_change(archive, size, lambda f: f.get("fct_s"), "FCT")


def _series(run: dict, run_dir: Path) -> dict:
    """The first flow's per-ACK series (traces.trace_series), its times moved to count from the
    connection's establishment at the server (the first ACK's time less the handshake's RTT sample
    it prints, as ProbeFacts times the server's FCT); shift_s: by how much."""
    from .traces import trace_series

    if not run.get("trace"):
        raise LedgerError(f"{run_dir}: no kernel trace (capture.traces): no per-ACK series")
    s = trace_series(run_dir / run["trace"], run["flows"][0]["port"])
    if not s["t"]:
        raise LedgerError(f"{run_dir}: the trace holds no tcp_probe record of the flow")
    shift = (s["srtt_ms"][0] or 0.0) / 1000
    return {**s, "t": [t + shift for t in s["t"]], "shift_s": shift}


def _first_time_at(s: dict, cwnd: int) -> float | None:
    """When @s's cwnd first reached @cwnd (None: never)."""
    return next((t for t, c in zip(s["t"], s["cwnd"]) if c >= cwnd), None)


def e3_time_to_cwnd_ratio(archive: Path, size: str) -> Measured:
    """How long SUSS takes to reach the cwnd at which both arms' slow start ends, over how long
    HyStart takes (Fig. 9: "roughly half the time to reach 1300 packets", the cwnd where both left
    exponential growth there): per repetition the smaller of the two arms' slow-start exit cwnd,
    and each arm's time from its establishment to its first cwnd at or above it, SUSS's over
    HyStart's."""
    vals = []
    for (a, da), (b, db) in _arm_pairs(archive, size):
        ea, eb = ((r["flows"][0].get("slow_start") or {}).get("exit_cwnd") for r in (a, b))
        if ea is None or eb is None:
            continue
        target = min(ea, eb)
        ta, tb = _first_time_at(_series(a, da), target), _first_time_at(_series(b, db), target)
        if ta is not None and tb:
            vals.append(ta / tb)
    if not vals:
        raise LedgerError(f"{archive}: no repetition of {size} has a slow-start exit in both arms")
    return measured(vals, f"{archive}: {size}, the time to the smaller exit cwnd with cubic_suss over cubic_hs, "
                          f"paired by repetition", [archive], f"REPS={len(vals)}")


def _slow_start_peak_srtt_ms(run: dict, run_dir: Path) -> float | None:
    """The largest smoothed RTT the flow's trace shows up to its slow start's end (ms; None: no end)."""
    ss = run["flows"][0].get("slow_start") or {}
    if ss.get("exit_time_s") is None:
        return None
    s = _series(run, run_dir)
    # exit_time_s counts from the first ACK, as the trace's own times do.
    during = [r for t, r in zip(s["t"], s["srtt_ms"]) if r is not None and t - s["shift_s"] <= ss["exit_time_s"]]
    return max(during) if during else None


def e3_slow_start_rtt_change(archive: Path, size: str) -> Measured:
    """The largest smoothed RTT during slow start with SUSS over that without, less one, in percent,
    paired by repetition (Fig. 9: "RTT in SUSS remains almost unchanged in the early rounds before
    stopping exponential growth": the extra delay SUSS's faster growth would add)."""
    vals = []
    for (a, da), (b, db) in _arm_pairs(archive, size):
        ra, rb = _slow_start_peak_srtt_ms(a, da), _slow_start_peak_srtt_ms(b, db)
        if ra is not None and rb:
            vals.append((ra / rb - 1) * 100)
    if not vals:
        raise LedgerError(f"{archive}: no repetition of {size} has a slow-start exit in both arms")
    return measured(vals, f"{archive}: {size}, the largest srtt in slow start with cubic_suss over cubic_hs, "
                          f"paired by repetition", [archive], f"REPS={len(vals)}")


def _acked_by(s: dict, at_s: float) -> float:
    """The data acknowledged in order (MB) by @at_s after establishment (0 before the first ACK)."""
    got = 0.0
    for t, mb in zip(s["t"], s["acked_mb"]):
        if t > at_s:
            break
        got = mb
    return got


def e3_delivered_ratio(archive: Path, size: str, at_s: str = "2") -> Measured:
    """The data delivered (acknowledged in order) @at_s seconds after the connection is established,
    with SUSS over without, paired by repetition (Fig. 10: 2 MB without SUSS at 2 s, three times that
    with it)."""
    vals, off_mb = [], []
    for (a, da), (b, db) in _arm_pairs(archive, size):
        on, off = _acked_by(_series(a, da), float(at_s)), _acked_by(_series(b, db), float(at_s))
        if off > 0:
            vals.append(on / off)
            off_mb.append(off)
    if not vals:
        raise LedgerError(f"{archive}: no repetition of {size} delivered anything by {at_s} s without SUSS")
    return measured(vals, f"{archive}: {size}, data delivered {at_s} s after establishment with cubic_suss over "
                          f"cubic_hs, paired by repetition (without SUSS {statistics.fmean(off_mb):.2f} MB on "
                          f"average)", [archive], f"REPS={len(vals)}")


def _astart_settings(archive: Path) -> tuple[dict, list[Path]]:
    """An E8 report's settings (scenario name -> its runs by case, each repetition's flows' throughput)
    and the scenario runs it was written over."""
    s = _report_summary(archive, "an E8 report: `make astart`")
    return s.get("settings", {}), [Path(r) for r in s.get("runs", [])]


def _astart_axis(settings: dict, axis: str) -> dict[float, str]:
    """The E8 settings along @axis (bw: Mbit/s, rtt: ms, buf: BDP, liw: the one Fig. 12 setting), as
    the report takes them: the 40 Mbit/s setting is also the 100 ms RTT's and the 1 BDP buffer's."""
    import re

    pattern = {"bw": r"e8-astart-bw-(\d+)mbit$", "rtt": r"e8-astart-rtt-(\d+)ms$",
               "buf": r"e8-astart-buf-([\d.]+)bdp$", "liw": r"e8-astart-(liw)$"}[axis]
    out = {}
    for name in settings:
        if m := re.match(pattern, name):
            out[0.0 if axis == "liw" else float(m[1])] = name
    if "e8-astart-bw-40mbit" in settings:
        out.setdefault({"rtt": 100.0, "buf": 1.0}.get(axis, -1.0), "e8-astart-bw-40mbit")
    out.pop(-1.0, None)
    return out


def astart_least_margin(archive: Path, axis: str, above: str, below: str, min_k: str = "-inf",
                        max_k: str = "inf") -> Measured:
    """How far the slower of @above's cases (comma-separated: Astart and Hoe) stays above @below's
    (NewReno, Vegas) in the first 20 s's throughput (Mbit/s), the least over the E8 settings along
    @axis from @min_k to @max_k (its unit: Mbit/s, ms, BDP), per repetition; its CI over repetitions.
    Above everywhere: the CI over zero."""
    settings, runs = _astart_settings(archive)
    keys = {k: n for k, n in _astart_axis(settings, axis).items() if float(min_k) <= k <= float(max_k)}
    if not keys:
        raise LedgerError(f"{archive}: no E8 setting along {axis} from {min_k} to {max_k} (`make astart`)")
    ups = [x for x in above.split(",") if x]
    per_setting = []
    for k, name in sorted(keys.items()):
        cases = settings[name]["runs"]
        missing = [c for c in (*ups, below) if c not in cases]
        if missing:
            raise LedgerError(f"{archive}: {name} has no run of {', '.join(missing)}")
        reps = min(len(cases[c]) for c in (*ups, below))
        per_setting.append([min(cases[u][i]["flows"][0]["throughput_mbit"] for u in ups)
                            - cases[below][i]["flows"][0]["throughput_mbit"] for i in range(reps)])
    k = min(len(v) for v in per_setting)
    vals = [min(v[i] for v in per_setting) for i in range(k)]
    return measured(vals, f"{archive}: {len(keys)} settings along {axis} ({', '.join(f'{x:g}' for x in sorted(keys))}); "
                          f"min({above}) - {below}, the least per repetition", runs, f"REPS={k}")


def astart_buffer_ratio(archive: Path, cc: str, small: str, ref: str) -> Measured:
    """@cc's first-20-s throughput at the buffer of @small BDP over its throughput at @ref BDP (E8's
    Fig. 10 settings), per repetition."""
    settings, runs = _astart_settings(archive)
    keys = _astart_axis(settings, "buf")
    missing = [b for b in (small, ref) if float(b) not in keys]
    if missing:
        raise LedgerError(f"{archive}: no E8 setting at a buffer of {', '.join(missing)} BDP (`make astart`)")
    a, b = (settings[keys[float(x)]]["runs"].get(cc, []) for x in (small, ref))
    if not a or not b:
        raise LedgerError(f"{archive}: no {cc} run at {small} and {ref} BDP")
    vals = [x["flows"][0]["throughput_mbit"] / y["flows"][0]["throughput_mbit"] for x, y in zip(a, b)]
    return measured(vals, f"{archive}: {cc} at {small} BDP over {ref} BDP", runs, f"REPS={len(vals)}")


def astart_newreno_share(archive: Path) -> Measured:
    """The five NewReno flows' share of the throughput beside five Astart flows (E8's mixed fairness
    case), per repetition."""
    settings, runs = _astart_settings(archive)
    fair = settings.get("e8-astart-fairness", {}).get("runs", {}).get("mixed")
    if not fair:
        raise LedgerError(f"{archive}: no mixed fairness run (`make astart`)")
    vals = []
    for r in fair:
        a = sum(f["throughput_mbit"] for f in r["flows"] if f["cc"] == "reno_astart")
        n = sum(f["throughput_mbit"] for f in r["flows"] if f["cc"] == "reno_fixed")
        vals.append(n / (a + n))
    return measured(vals, f"{archive}: the mixed case's NewReno share", runs, f"REPS={len(vals)}")


EXTRACTORS: dict[str, Callable[..., Measured]] = {
    "astart_least_margin": astart_least_margin,
    "astart_newreno_share": astart_newreno_share,
    "astart_buffer_ratio": astart_buffer_ratio,
    "e3_delivered_ratio": e3_delivered_ratio,
    "e3_exit_cwnd_change": e3_exit_cwnd_change,
    "e3_fct_change": e3_fct_change,
    "e3_slow_start_rtt_change": e3_slow_start_rtt_change,
    "e3_time_to_cwnd_ratio": e3_time_to_cwnd_ratio,
    "e4_improvement_fall": e4_improvement_fall,
    "e4_least_gain_over": e4_least_gain_over,
    "e4_least_improvement": e4_least_improvement,
    "e4_loss_gap_change": e4_loss_gap_change,
    "e4_loss_ratio": e4_loss_ratio,
    "fairness_recovery_gain": fairness_recovery_gain,
    "table1_average_improvement": table1_average_improvement,
    "table1_large_slowdown": table1_large_slowdown,
    "table1_large_worst_setting": table1_large_worst_setting,
}


def _slug(text: str) -> str:
    import re
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def paper_value_claims(pv: PaperValues, results: Path = paths.RESULTS_DIR,
                       archive: Path | None = None) -> list[tuple[Claim, Verdict, Measured | None]]:
    """@pv's values as claims, each judged by the value test on the report's own comparison (ours,
    n, CI); one "no evidence yet" row when no report has been written, and one for the values the
    paper prints that the report does not set beside ours."""
    import json

    a = archive or results / pv.archive
    summary = a / "summary.json"
    head = dict(where=pv.where, words=f"the {pv.count} values the paper prints there", quantity="each value, ours beside it")
    if not summary.is_file():
        c = Claim(id=_slug(f"{pv.experiment}-values"), **head, untestable="no report yet")
        return [(c, Verdict(NO_EVIDENCE, f"no report at {a}: run `make {pv.experiment}`"), None)]
    s = json.loads(summary.read_text())
    rows = s.get("paper_values") or []
    runs = [Path(r) for r in s.get("runs", [])]
    out = []
    for r in rows:
        test = ClaimTest(rule="value", paper=r["paper"], kind=r["kind"], rounding=r.get("rounding", 0.0))
        cid = _slug(f"{r['where']} {r['what']}")
        why = [v for v in pv.causes if any(fnmatch.fnmatchcase(cid, pattern) for pattern in v.ids)]
        c = Claim(id=cid, where=r["where"], words=f"{r['what']}: {r['paper']:g}",
                  quantity=r["what"], test=test, evidence=Evidence(experiment=pv.experiment, archive=pv.archive),
                  cause="; ".join(v.cause for v in why if v.cause) or None, tried=[t for v in why for t in v.tried])
        ci = tuple(r["ci95"]) if r.get("ci95") else None
        m = Measured(r["ours"], r["n"], ci, f"{a}: the report's comparison", tuple(runs), f"REPS={r['n']}")
        out.append((c, decide(test, m), m))
    if len(rows) < pv.count:
        c = Claim(id=_slug(f"{pv.experiment}-values-not-run"), **head, untestable="no run of ours beside them")
        out.append((c, Verdict(NO_EVIDENCE, f"{pv.count - len(rows)} of the paper's {pv.count} values have no run "
                                            f"of ours beside them in {a}"), None))
    return out


def value_counts_md(vc: ValueCounts, results: Path = paths.RESULTS_DIR) -> list[str]:
    """@vc's counts as the ledger page shows them: the archive's report headline, recomputed from the
    archive (of those @vc names, the one with the most cells done; a tie: the last in name order)."""
    from .archive import current_cells
    from .table1 import headline_counts, table1

    head = f"## {vc.where}: every paper value by outcome"
    best: tuple[int, Path, object] | None = None
    for a in _candidates(results, vc.archive):
        try:
            _, plan = latest_plan(a)
        except (ArchiveError, OSError):
            continue
        done = len(current_cells(a, plan))
        if done and (best is None or done >= best[0]):
            best = (done, a, plan)
    if best is None:
        return [head, "", f"No archive yet: run `make {vc.experiment}`.", ""]
    done, a, plan = best
    extra = table1(a, plan)[1]
    counts = extra.get("headline") or {}
    lines = [head, "", f"From {a} ({done} cells; the report's headline, the same rule as every value test here):", ""]
    lines += [f"- {group}: {t['reproduced']} reproduced, {t['not reproduced']} not reproduced, "
              f"{t['not decided']} not decided of {t['of']}" for group, t in counts.items()]
    return lines + ([""] if counts else ["No paper value in it to judge.", ""])


def _candidates(results: Path, pattern: str) -> list[Path]:
    """The archives an evidence's `archive:` names: one path under @results, or a glob over several
    (the selections of one matrix: results/fairness/buf-2bdp, results/fairness/all, ...)."""
    if any(ch in pattern for ch in "*?["):
        return sorted(p for p in results.glob(pattern) if p.is_dir() and not p.is_symlink() and not _apart(p))
    return [results / pattern] if (results / pattern).is_dir() else []


#: What a matrix directory's name adds for cells that are not the experiment as its file has it
#: (sslab.matrix.orchestrate.matrix_rel_of): a field set (SET=), a backend, another start compared, a
#: researcher's kernel, a knob's value.
APART_MARKS = ("_set-", "_backend-", "_start-", "_kernel-") + tuple(f"_{k.suffix}-" for k in KNOBS)


def _apart(path: Path) -> bool:
    """A matrix directory of cells run apart from the experiment's own (a cause run): never a claim's
    evidence by a glob."""
    return any(mark in path.name for mark in APART_MARKS)


def judge(claim: Claim, results: Path = paths.RESULTS_DIR,
          archive: Path | None = None) -> tuple[Verdict, Measured | None]:
    """A claim's verdict from the archives under @results (or from @archive alone: a report printing
    its own claims).  Where the evidence names several archives, the one that gives the claim's
    quantity at the largest n decides (a tie: the last in name order), a rule fixed before any
    result: more repetitions, a narrower CI."""
    if claim.untestable:
        return Verdict(NOT_TESTABLE, claim.untestable), None
    ev = claim.evidence
    if not ev.extract or not ev.archive:
        return Verdict(NO_EVIDENCE, f"nothing reads it yet from `make {ev.experiment}`"), None
    archives = [archive] if archive is not None else _candidates(results, ev.archive)
    if not archives:
        return Verdict(NO_EVIDENCE, f"no archive {results / ev.archive}: run `make {ev.experiment}`"), None
    found: list[Measured] = []
    errors: list[str] = []
    elsewhere = 0
    for a in archives:
        try:
            m = EXTRACTORS[ev.extract](a, **ev.args)
        except (LedgerError, ValueError) as e:  # ArchiveError is a ValueError: a matrix directory without a plan
            errors.append(str(e))
            elsewhere += isinstance(e, NotThisArchive)
            continue
        if archive is None and (away := departures(list(m.runs))):
            # A cause run (a knob set on the command line) is not the claim's evidence: the claim is
            # about the experiment as its file has it.  A report judging its own archive still says.
            errors.append(f"{a}: ran under {', '.join(away)}, not the testbed's own settings")
            continue
        found.append(m)
    if not found:
        return Verdict(NO_EVIDENCE, "; ".join(errors), elsewhere=elsewhere == len(errors) > 0), None
    m = max(found, key=lambda x: x.n)  # max() keeps the first of equals: take the last instead
    m = [x for x in found if x.n == m.n][-1]
    v = decide(claim.test, m)
    if claim.judged_on:
        v = Verdict(v.verdict, f"on {claim.judged_on}: {v.why}")
    return v, m


def _on_model(c: Claim, m: Measured | None) -> str:
    """The ledger table's note after a verdict judged on a model of ours (Claim.judged_on, which the
    claim's section and its verdict name in full)."""
    return ", on our model" if c.judged_on and m is not None else ""


def _test_text(t: ClaimTest) -> str:
    if t.rule == "value":
        tol = "±10 points" if t.kind == "improvement" else "±15 %"
        rounding = f" + {t.rounding:g} rounding" if t.rounding else ""
        return f"value {t.paper:g} ({tol}{rounding}, our CI inside the band; Table 1's rule)"
    bound = f"±{t.bound:g}" if t.rule == "within" else f"{t.bound:g}"
    return f"{t.rule.replace('_', ' ')} {bound} ({t.bound_reason})"


def _ci_text(m: Measured) -> str:
    return f"{m.mean:.3g} [{m.ci95[0]:.3g}, {m.ci95[1]:.3g}]" if m.ci95 else f"{m.mean:.3g} (no CI)"


def claim_section(claim: Claim, verdict: Verdict, m: Measured | None, level: str = "##") -> list[str]:
    """One claim's verdict with its evidence: the paper's words, the quantity and the test, our number
    with its CI and n, and the runs' provenance (command, machine, dates, commits, conditions)."""
    from .conditions import conditions_of, provenance_of

    lines = [f'{level} <a id="{claim.id}"></a>{claim.id}: {verdict.verdict}', "", f"- **The paper** ({claim.where}): \"{claim.words}\"",
             f"- **Quantity**: {claim.quantity}"]
    if claim.test is not None:
        lines.append(f"- **Test**: {_test_text(claim.test)}")
    lines.append(f"- **Verdict**: {verdict.verdict}: {verdict.why}")
    if verdict.verdict == NOT_REPRODUCED:
        if claim.cause:
            lines.append(f"- **Why, as far as we found**: {claim.cause}")
        lines += [f"- **Tried and ruled out**: {t}" for t in claim.tried]
        if not claim.cause and not claim.tried:
            lines.append("- **Why**: no cause tested yet")
    if m is not None:
        p = provenance_of(list(m.runs))
        cmd = " ".join(x for x in ("make", claim.evidence.experiment, m.options) if x)
        lines += [f"- **Ours**: {_ci_text(m)}, n = {m.n} ({m.source})",
                  f"- **Command**: `{cmd}`",
                  f"- **Ran on**: {p['machine']}; {p['dates']}; commit {p['commits']}; "
                  f"{len(m.runs)} run director{'y' if len(m.runs) == 1 else 'ies'} (a matrix's cells, a series' settings)",
                  f"- **Under**: {conditions_of(list(m.runs))}"]
    return lines + [""]


def archive_kind(results: Path, archive: Path) -> Path | None:
    """Where under results/ an archive of @archive's kind lies (`table1` for results/table1/cca-cubic):
    its directory there; for a matrix's archive elsewhere (an artifact downloaded from a CI run, a copy)
    the name its plan gives it; None when neither says."""
    try:
        return archive.resolve().relative_to(results.resolve()).parent
    except ValueError:
        pass
    try:
        _, plan = latest_plan(archive)
    except (ArchiveError, OSError):
        return None
    return Path(plan.matrix)


def claims_for_archive(results: Path, archive: Path) -> list[tuple[Claim, Verdict, Measured | None]]:
    """Every ledger's claims whose evidence is an archive of @archive's kind (the directory the
    ledger's `archive:` names, less its last part, is @archive's: `dynamics/latest` and a run in
    results/dynamics/; `table1/*` and a matrix in results/table1/; not the per-setting runs under
    results/fct-vs-size/<setting>/ for `fct-vs-size/reports/latest`), judged on @archive alone: what a
    report prints for its own claims."""
    where = archive_kind(results, archive)
    if where is None:
        return []
    out = []
    for path in sorted(LEDGER_DIR.glob("*.yaml")):
        for c in load_ledger(str(path)).claims:
            ev = c.evidence
            if ev and ev.extract and ev.archive and Path(ev.archive).parent == where:
                out.append((c, *judge(c, results, archive)))
    return out


def append_report_claims(md: Path, archive: Path, results: Path = paths.RESULTS_DIR) -> None:
    """Append to the report @md the claims its @archive tests, with their verdicts (nothing when it
    tests none, or lies outside @results)."""
    text = report_claims_md(results, archive)
    if text:
        with md.open("a") as f:
            f.write(text + "\n")


def report_claims_md(results: Path, archive: Path) -> str:
    """The section a report appends for the paper claims its archive tests ("" when it tests none)."""
    try:
        rows = claims_for_archive(results, archive)
    except Exception as e:  # a report is never lost to its claims section: the failure is printed in it
        return f"\n## The paper's claims these runs test\n\nNot read: {type(e).__name__}: {e}\n"
    if not rows:
        return ""
    # A claim about settings this archive did not run (E6 at another buffer) is not one it tests:
    # named once, not given a section of its own.
    elsewhere = [c.id for c, v, _ in rows if v.elsewhere]
    rows = [r for r in rows if not r[1].elsewhere]
    lines = ["", "## The paper's claims these runs test", "",
             "Each claim's test is fixed in its ledger (experiments/claims/); the verdict is from this archive "
             "alone.  `make claims` gathers every claim over all archives.", ""]
    if not rows:
        lines.append("None: these runs hold none of the settings the paper's claims are about.")
    if elsewhere:
        lines += [f"Not tested by these runs (other settings of the experiment): {', '.join(elsewhere)}.", ""]
    for c, v, m in rows:
        lines += claim_section(c, v, m, level="###")
    return _short_paths("\n".join(lines), results)


def ledger_rows(ledger: Ledger, results: Path = paths.RESULTS_DIR) -> list[tuple[Claim, Verdict, Measured | None]]:
    """Every claim of @ledger with its verdict and our number from the archives under @results (its
    paper values, when it names a report that sets them beside ours, one claim each)."""
    rows = [(c, *judge(c, results)) for c in ledger.claims]
    if ledger.paper_values is not None:
        rows += paper_value_claims(ledger.paper_values, results)
    return rows


#: A ledger's outcomes in the order its counts print them.
OUTCOMES = (REPRODUCED, NOT_REPRODUCED, "not decided", NOT_TESTABLE, NO_EVIDENCE)


def ledger_counts(rows: list[tuple[Claim, Verdict, Measured | None]]) -> dict[str, int]:
    """How many of @rows have each outcome ("not decided at n = K" counted as "not decided"), in
    OUTCOMES' order, those with none left out."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for _, v, _ in rows:
        counts["not decided" if v.verdict.startswith("not decided") else v.verdict] += 1
    return {k: n for k, n in counts.items() if n}


def uncaused(rows: list[tuple[Claim, Verdict, Measured | None]]) -> list[str]:
    """The ids of @rows not reproduced whose claim names neither a cause nor a cause tried."""
    return [c.id for c, v, _ in rows if v.verdict == NOT_REPRODUCED and not c.cause and not c.tried]


def counts_line(ledger: Ledger, rows: list[tuple[Claim, Verdict, Measured | None]]) -> str:
    """One ledger's counts in a line: "SUSS (SIGCOMM'24): 5 reproduced; 4 not reproduced; ... of 25 claims"."""
    counts = ledger_counts(rows)
    bare = len(uncaused(rows))
    return (f"{ledger.source}: " + "; ".join(f"{n} {k}" for k, n in counts.items()) + f" of {len(rows)} claims"
            + (f" ({bare} not reproduced with no cause tried yet)" if bare else ""))


def ledger_page(ledger: Ledger, results: Path = paths.RESULTS_DIR,
                rows: list[tuple[Claim, Verdict, Measured | None]] | None = None) -> str:
    """The ledger as markdown: the claims down the side, our verdict and evidence across; then each
    claim with its evidence's provenance.  @rows: ledger_rows, when already judged."""
    rows = ledger_rows(ledger, results) if rows is None else rows
    counts = ledger_counts(rows)
    unexplained = uncaused(rows)
    lines = [f"# Claims of {ledger.source}", "",
             "**" + "; ".join(f"{n} {k}" for k, n in counts.items()) + f"** of {len(rows)} claims.", "",
             *([f"Not reproduced with no cause found or tried yet: {len(unexplained)} "
                f"({', '.join(unexplained[:12])}{', ...' if len(unexplained) > 12 else ''}).", ""] if unexplained else []),
             "The tests and their rules: docs/claims.md.  Ours: the mean and its 95 % CI over n repetitions.", "",
             "| claim | where | test | ours | n | verdict |", "|---|---|---|---|---|---|"]
    for c, v, m in rows:
        test = "–" if c.test is None else _test_text(c.test).split(" (")[0]
        lines.append(f"| [{c.id}](#{c.id}) | {c.where} | {test} | {_ci_text(m) if m else '–'} | "
                     f"{m.n if m else '–'} | **{v.verdict}**{_on_model(c, m)} |")
    lines += ["", *repetitions_md(rows), ""]
    for vc in ledger.value_counts:
        lines += value_counts_md(vc, results)
    for c, v, m in rows:
        lines += claim_section(c, v, m)
    return _short_paths("\n".join(lines), results)


def repetitions_md(rows: list[tuple[Claim, Verdict, Measured | None]]) -> list[str]:
    """Per experiment, the repetitions each of its claims needs for a verdict at the spread measured
    (needed_n): what its make target's default should give."""
    by: dict[str, list[str]] = {}
    for c, v, m in rows:
        if m is None or c.test is None:
            continue
        need = needed_n(c.test, m)
        text = ("decided at this n" if need is None and m.ci95 is not None else
                "no CI at this n" if need is None else
                "none at this spread (the mean sits on an edge)" if not need else f"n = {need}")
        by.setdefault(c.evidence.experiment, []).append(f"| `make {c.evidence.experiment}` | {c.id} | {m.n} | "
                                                         f"{text} |")
    if not by:
        return []
    return ["## Repetitions that decide", "",
            "The least n whose 95 % CI would clear each claim's bound (a value test: its band's nearest edge) if "
            "the mean and spread stayed as measured.  Each target's default repetitions, and the time they cost, are "
            "in docs/claims.md.", "",
            "| target | claim | n run | n that decides |", "|---|---|---|---|", *[r for rs in by.values() for r in rs]]


def _short_paths(text: str, results: Path) -> str:
    """Archive paths as results/... (where they lie in any clone), not this machine's absolute path."""
    return text.replace(f"{results}/", "results/")
