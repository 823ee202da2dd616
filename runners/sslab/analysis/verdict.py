"""Whether a value of ours reproduces the paper's: decided by our 95 % CI against a tolerance band.

A paper value stands at the centre of a band: ±15 % of it for an FCT, a change between two arms or
any other quantity, ±10 points for an improvement in percent, each widened by the rounding of the
value as the paper prints it (29 % is 28.5-29.5; 0.94 s is 0.935-0.945) or implies it (a 2 BDP mean
taken back from an Average row; a change taken from two printed FCTs).  Nothing else widens it.
Our value is a mean over n repetitions with its 95 % CI (Student's t), and:

    reproduced       our CI lies inside the band
    not reproduced   our CI lies wholly outside it
    not decided      our CI straddles an edge of it: more repetitions would decide, and the
                     report says how many at the spread measured (needed_n)

With one repetition there is no CI: the mean decides, inside the band or not, and the report says
n = 1.  The paper's value inside our CI decides nothing by itself: a noisy setting whose CI spans the
band's edge is not decided, not agreed with, and a value of the wrong sign is never inside a band
around a value of the right one (a band of ±15 % never reaches zero; one of ±10 points around a
paper improvement under 10 points is cut at zero).

The tolerances were fixed before any result under this rule was seen (the earlier rule, the same
tolerances with "the paper's value inside our CI" as a second way to pass, let noise pass)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

#: An FCT (or another quantity, or a change) within this fraction of the paper's value is reproduced.
FCT_TOLERANCE = 0.15
#: An improvement within this many percentage points of the paper's is reproduced.
IMPROVEMENT_POINTS = 10.0
#: The kinds of value: relative ones (an FCT in seconds; any other quantity; a change between two
#: starts) and an improvement in percentage points.
RELATIVE = ("fct", "value", "change")
KINDS = (*RELATIVE, "improvement")
#: The three outcomes.
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_DECIDED = "not decided"
OUTCOMES = (REPRODUCED, NOT_REPRODUCED, NOT_DECIDED)
#: needed_n looks no further: a value that needs more repetitions than this is out of reach here.
NEEDED_N_MAX = 10_000
#: The rule as a record keeps it beside the verdicts (summary.json's "verdict_rule").
RULE_RECORD = {"fct_tolerance": FCT_TOLERANCE, "improvement_points": IMPROVEMENT_POINTS, "relative_kinds": list(RELATIVE),
               "outcomes": list(OUTCOMES)}
RULE = (f"reproduced when our 95 % CI lies inside ±{FCT_TOLERANCE:.0%} of the paper's value (an FCT, "
        f"a change or another quantity) or ±{IMPROVEMENT_POINTS:g} points of its improvement, each widened "
        f"by the paper's rounding; not reproduced when the CI lies wholly outside; not decided when it "
        f"straddles an edge; at n = 1 the mean decides")


def needed_n(mean: float, ci95: tuple[float, float] | None, n: int, gap: float) -> int | None:
    """How many repetitions would give a CI whose half-width is under @gap (the mean's distance to
    the edge it must clear), if the mean and the spread stayed as measured: the least n with
    t(n-1) * sd / sqrt(n) < gap, the standard deviation taken back from the CI (sd = half-width *
    sqrt(n) / t(n-1)).  None without a CI; 0 when no n up to NEEDED_N_MAX does (the mean on the edge)."""
    from .stats import t95

    if ci95 is None or n < 2:
        return None
    half = (ci95[1] - ci95[0]) / 2
    sd = half * math.sqrt(n) / t95(n - 1)
    if gap <= 0:
        return 0
    if sd == 0:
        return n
    for k in range(2, NEEDED_N_MAX + 1):
        if t95(k - 1) * sd / math.sqrt(k) < gap:
            return k
    return 0


@dataclass(frozen=True)
class Comparison:
    """One paper value beside ours."""

    where: str                  # "CUBIC 1BDP 25ms"
    what: str                   # "small flows' FCT, SUSS off"
    kind: str                   # one of KINDS: "fct" (seconds), "value", "change", "improvement" (percent)
    ours: float
    paper: float
    n: int
    ci95: tuple[float, float] | None = None
    derived: bool = False       # the paper implies it (2 BDP means from its Average rows; a change)
    rounding: float = 0.0       # ± of the paper's value as it prints or implies it
    short: str = ""             # its name in a row's list of misses ("small on")
    group: str = ""             # what the headline counts it under ("small flows' FCTs", ...)
    unit: str = ""              # of a "value" or "change" (" points": a change in percent, as the stability effect)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r}: one of {', '.join(KINDS)}")
        if self.rounding < 0:
            raise ValueError(f"rounding must not be negative, got {self.rounding}")
        if self.ci95 is not None:
            object.__setattr__(self, "ci95", tuple(self.ci95))

    @property
    def difference(self) -> float:
        return self.ours - self.paper

    @property
    def tolerance(self) -> float:
        base = FCT_TOLERANCE * abs(self.paper) if self.kind in RELATIVE else IMPROVEMENT_POINTS
        return base + self.rounding

    @property
    def band(self) -> tuple[float, float]:
        """paper ± tolerance, kept on the paper's side of zero: a value of the other sign is never
        inside (the band of an improvement under 10 points would otherwise reach past zero)."""
        lo, hi = self.paper - self.tolerance, self.paper + self.tolerance
        if self.paper > 0:
            lo = max(lo, 0.0)
        elif self.paper < 0:
            hi = min(hi, 0.0)
        return lo, hi

    @property
    def has_ci(self) -> bool:
        return self.n >= 2 and self.ci95 is not None

    @property
    def outcome(self) -> str:
        lo, hi = self.band
        if not self.has_ci:
            return REPRODUCED if lo <= self.ours <= hi else NOT_REPRODUCED
        clo, chi = self.ci95
        if lo <= clo and chi <= hi:
            return REPRODUCED
        if chi < lo or clo > hi:
            return NOT_REPRODUCED
        return NOT_DECIDED

    @property
    def reproduced(self) -> bool:
        return self.outcome == REPRODUCED

    @property
    def needed_n(self) -> int | None:
        """Not decided: the repetitions that would decide it at the spread measured, if the mean held
        (its distance to the band's nearest edge against the CI's half-width); None otherwise."""
        if self.outcome != NOT_DECIDED:
            return None
        lo, hi = self.band
        return needed_n(self.ours, self.ci95, self.n, min(abs(self.ours - lo), abs(self.ours - hi)))

    def record(self) -> dict:
        """The comparison as summary.json keeps it: its fields, and what the rule makes of them (the
        tolerance, the band, the outcome and, not decided, the n that would decide it), so that a
        script reads the verdict without the rule and a test can recompute it."""
        lo, hi = self.band
        return {**{f.name: getattr(self, f.name) for f in fields(self)},
                "ci95": list(self.ci95) if self.ci95 is not None else None,
                "tolerance": self.tolerance, "band": [lo, hi], "outcome": self.outcome, "needed_n": self.needed_n}

    @classmethod
    def from_record(cls, record: dict) -> "Comparison":
        """A comparison from its record (record()): its fields; what the rule made of them is made again."""
        return cls(**{f.name: record[f.name] for f in fields(cls) if f.name in record})

    def difference_text(self) -> str:
        if self.kind == "improvement":
            return f"{self.difference:+.0f} points"
        unit = " s" if self.kind == "fct" else self.unit
        digits = 2 if self.kind == "fct" or abs(self.paper) < 10 else 0
        rel = f" ({self.difference / abs(self.paper):+.0%})" if self.paper else ""
        return f"{self.difference:+.{digits}f}{unit}{rel}"

    def verdict_text(self) -> str:
        """The outcome as a table cell says it: n = 1 named, a not-decided value with the n that
        would decide it."""
        out = self.outcome
        if not self.has_ci:
            return f"{out} (n = {self.n}, no CI)" if self.n <= 1 else f"{out} (no CI)"
        if out == NOT_DECIDED:
            need = self.needed_n
            return (f"not decided at n = {self.n}: " +
                    (f"about n = {need} would decide it" if need else "the mean sits on an edge"))
        return out


def tally(comparisons: list[Comparison]) -> dict[str, int]:
    """How many of @comparisons have each outcome, and in all."""
    out = {o: sum(c.outcome == o for c in comparisons) for o in OUTCOMES}
    return {**out, "of": len(comparisons)}


def tally_text(t: dict[str, int]) -> str:
    """"3 reproduced, 1 not reproduced, 2 not decided of 6"."""
    return f"{t[REPRODUCED]} reproduced, {t[NOT_REPRODUCED]} not reproduced, {t[NOT_DECIDED]} not decided of {t['of']}"


def count_line(comparisons: list[Comparison]) -> str:
    """A report's first line: the outcomes over every paper value set beside ours."""
    printed = [c for c in comparisons if not c.derived]
    implied = [c for c in comparisons if c.derived]
    of = f" (printed: {tally_text(tally(printed))}; implied: {tally_text(tally(implied))})" if implied else ""
    return f"**Paper values: {tally_text(tally(comparisons))}**{of}; the rule: {RULE}."


#: A change's direction against the paper's sign (direction()).
DIRECTIONS = ("agrees", "DISAGREES", "ours n.s.", "paper ±0")


def direction(diff: float | None, ci95: tuple[float, float] | list[float] | None, paper: float | None) -> str:
    """Our change's sign against the paper's, where ours is significant (its 95 % CI leaves out 0):
    one of DIRECTIONS, or "–" without a CI of ours."""
    if ci95 is None or diff is None:
        return "–"
    lo, hi = ci95
    if lo <= 0 <= hi:
        return "ours n.s."
    if paper is None or paper == 0:
        return "paper ±0"
    return "agrees" if (diff > 0) == (paper > 0) else "DISAGREES"
