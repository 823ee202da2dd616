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
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .. import paths
from ..scenario.knobs import KNOBS
from .archive import ArchiveError, latest_plan
from .conditions import departures
from .evidence import LedgerError, Measured, NotThisArchive
from .plugins import EXTRACTORS, matrix_report_of
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
class Verdict:
    verdict: str            # REPRODUCED, NOT_REPRODUCED, "not decided at n = K", NOT_TESTABLE, NO_EVIDENCE
    why: str
    #: (NO_EVIDENCE) every archive read holds none of the claim's settings (NotThisArchive)
    elsewhere: bool = False

    @property
    def outcome(self) -> str:
        """The verdict as the counts count it: "not decided at n = K" is "not decided"."""
        return "not decided" if self.verdict.startswith("not decided") else self.verdict


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
    held = "if every point's mean held" if m.points else "if the mean held"
    hint = (f"; at this spread about n = {need} would decide it, {held}" if need else
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
    if m.points and test.rule in ("at_least", "at_most"):
        return points_needed_n(test, m.points)
    gap = abs(b - abs(m.mean)) if test.rule == "within" else abs(m.mean - b)
    return verdict_needed_n(m.mean, m.ci95, m.n, gap)


def points_needed_n(test: ClaimTest, points) -> int | None:
    """A claim over several points (every one must clear the bound): the n that would decide it if every
    point's mean and spread held, not the n of the extreme's own mean, which moves towards the bound as
    n grows (the least of noisy means lies below the least true mean).  Among the points whose CI spans
    the bound, one whose mean is on the wrong side decides it (not reproduced) once its own CI clears:
    the least such n; with every such mean on the right side, all must clear: the largest.  None when a
    spanning point has no CI; 0 when one's mean sits on the bound."""
    b = test.bound
    right = (lambda v: v >= b) if test.rule == "at_least" else (lambda v: v <= b)
    spanning = [p for p in points if p.ci95 is None or p.ci95[0] < b < p.ci95[1]]
    if any(p.ci95 is None for p in spanning):
        return None
    need = [(p, verdict_needed_n(p.value, p.ci95, p.n, abs(p.value - b))) for p in spanning]
    wrong = [n for p, n in need if not right(p.value)]
    if wrong:
        return min(wrong)
    return 0 if any(n == 0 for _, n in need) else max((n for _, n in need), default=None)


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
    extra = matrix_report_of(plan.report).summary_fields(a, plan)
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


def judge(claim: Claim, results: Path = paths.RESULTS_DIR, archive: Path | None = None,
          own: Mapping[str, Mapping[str, Collection]] | None = None) -> tuple[Verdict, Measured | None]:
    """A claim's verdict from the archives under @results (or from @archive alone: a report printing
    its own claims).  Where the evidence names several archives, the one that gives the claim's
    quantity at the largest n decides (a tie: the last in name order), a rule fixed before any
    result: more repetitions, a narrower CI.  An archive run under a knob (a cause run) is passed
    over: one whose settings depart from its experiment's own (@own: experiment -> each knob's values
    its file gives, sslab.matrix.experiments.own_settings_of; an experiment not in it: the testbed's
    defaults, conditions.OWN_SETTINGS)."""
    if claim.untestable:
        return Verdict(NOT_TESTABLE, claim.untestable), None
    ev = claim.evidence
    if not ev.extract or not ev.archive:
        return Verdict(NO_EVIDENCE, f"nothing reads it yet from `make {ev.experiment}`"), None
    if ev.extract not in EXTRACTORS:
        # A programming error, not a verdict: the extractor's paper was not imported (sslab.papers).
        raise KeyError(f"claim {claim.id}: no paper registers the extractor {ev.extract!r} "
                       f"(registered: {len(EXTRACTORS)}; sslab.papers registers every paper's)")
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
        if archive is None and (away := departures(list(m.runs), (own or {}).get(ev.experiment))):
            # A cause run (a knob set on the command line) is not the claim's evidence: the claim is
            # about the experiment as its file has it.  A report judging its own archive still says.
            errors.append(f"{a}: ran under {', '.join(away)}, not the experiment's own settings")
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
    # Cells of another start in the compared place (VARIANTS=: `_start-cubic_rapid`) test no claim: the
    # ledgers' claims are about the starts their papers ran.
    if where is None or "_start-" in archive.resolve().name or "_start-" in archive.resolve().parent.name:
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


def report_claims(results: Path, archive: Path) -> list[tuple[Claim, Verdict, Measured | None]] | Exception:
    """claims_for_archive, or the failure that stopped it (a report is never lost to its claims: the
    failure is printed in it)."""
    try:
        return claims_for_archive(results, archive)
    except Exception as e:  # noqa: BLE001 - said in the report
        return e


def claims_answer_line(rows: list[tuple[Claim, Verdict, Measured | None]] | Exception) -> str:
    """A report's answer about the paper's claims its runs test, for its first lines: the outcomes by each
    claim's ledger test on these runs alone, counted, each claim named with its own ("" when they test
    none)."""
    if isinstance(rows, Exception):
        return f"**The paper's claims these runs test**: not read ({type(rows).__name__}: {rows})."
    rows = [r for r in rows if not r[1].elsewhere]
    if not rows:
        return ""
    counts = ledger_counts(rows)
    each = "; ".join(f"{c.id} {v.verdict}" for c, v, _ in rows)
    return (f"**The paper's claims these runs test**, each by its ledger's test on these runs alone: "
            f"{', '.join(f'{n} {k}' for k, n in counts.items())} of {len(rows)} ({each}).")


def report_claims_md(results: Path, archive: Path,
                     rows: list[tuple[Claim, Verdict, Measured | None]] | Exception | None = None) -> str:
    """The section a report appends for the paper claims its archive tests ("" when it tests none);
    @rows: report_claims(@results, @archive) when the caller has it already."""
    rows = report_claims(results, archive) if rows is None else rows
    if isinstance(rows, Exception):
        return f"\n## The paper's claims these runs test\n\nNot read: {type(rows).__name__}: {rows}\n"
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


def ledger_rows(ledger: Ledger, results: Path = paths.RESULTS_DIR,
                own: Mapping[str, Mapping[str, Collection]] | None = None) -> list[tuple[Claim, Verdict, Measured | None]]:
    """Every claim of @ledger with its verdict and our number from the archives under @results (its
    paper values, when it names a report that sets them beside ours, one claim each); @own: judge's."""
    rows = [(c, *judge(c, results, own=own)) for c in ledger.claims]
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
        counts[v.outcome] += 1
    return {k: n for k, n in counts.items() if n}


def ledger_record(ledger: Ledger, rows: list[tuple[Claim, Verdict, Measured | None]]) -> dict:
    """@ledger's verdicts as data (ledger.json beside its page): its counts as the page's first line
    has them, and per claim what was tested, how, our number with its CI and n, the outcome, the n that
    would decide it (not decided) and the cause found or the causes tried (not reproduced)."""
    claims = []
    for c, v, m in rows:
        outcome = v.outcome
        claims.append({
            "id": c.id, "where": c.where, "words": c.words, "quantity": c.quantity,
            "test": c.test.model_dump(mode="json") if c.test else None, "judged_on": c.judged_on,
            "outcome": outcome, "verdict": v.verdict, "why": v.why,
            "ours": None if m is None else {"mean": m.mean, "ci95": list(m.ci95) if m.ci95 else None, "n": m.n,
                                            "source": m.source},
            "needed_n": needed_n(c.test, m) if (m is not None and c.test and outcome == "not decided") else None,
            "cause": c.cause, "tried": list(c.tried), "untestable": c.untestable})
    return {"source": ledger.source, "counts": ledger_counts(rows), "uncaused": uncaused(rows), "claims": claims}


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
