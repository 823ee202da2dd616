"""What every extractor shares: the measured quantity (its mean and 95 % CI over the repetitions), the
errors an archive without the claim's numbers raises, and the helpers over points, matrix cells and
report summaries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..stats import describe


class LedgerError(ValueError):
    pass


class NotThisArchive(LedgerError):
    """The archive holds none of the settings the claim is about (E6 at another buffer, Table 1's other
    column): a report over it does not list the claim as one it tests."""


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
    #: A claim over several points (every setting, link or size; extreme()): each point, for the n that
    #: would decide it (claims.needed_n).  Empty: the quantity is one mean.
    points: tuple["Point", ...] = ()


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


def cell_dirs(archive: Path, **setting: str) -> tuple[list[Path], str]:
    """The finished cells of a matrix archive whose setting has @setting's values, and the make
    options its plan was asked with."""
    from ..archive import current_cells, latest_plan
    _, plan = latest_plan(archive)
    cells = [d for c, d in current_cells(archive, plan)
             if all(c.setting.get(k) == v for k, v in setting.items())]
    return cells, matrix_options(plan)


def report_summary(archive: Path, what: str) -> dict:
    """The summary.json of a report directory (@what: which report and its make target, for the error)."""
    import json

    summary = archive / "summary.json"
    if not summary.is_file():
        raise LedgerError(f"{archive}: no summary.json ({what})")
    return json.loads(summary.read_text())


def standard_error(d: dict) -> float:
    """The standard error of a described mean (stats.describe: mean, n, ci95), taken back from its CI."""
    from ..stats import t95
    if not d.get("ci95") or d["n"] < 2:
        raise LedgerError("a mean without a CI (n < 2): no difference can be judged")
    return (d["ci95"][1] - d["ci95"][0]) / 2 / t95(d["n"] - 1)


def difference(terms: list[tuple[float, dict]], n: int) -> tuple[float, tuple[float, float]]:
    """sum(sign * mean) over @terms (sign, a described mean) of independent runs, and its 95 % CI from
    their standard errors (Student's t at the fewest repetitions less one, @n - 1): an approximation
    that is said with the verdict."""
    import math

    from ..stats import t95
    value = sum(k * d["mean"] for k, d in terms)
    half = t95(n - 1) * math.sqrt(sum((k * standard_error(d)) ** 2 for k, d in terms))
    return value, (value - half, value + half)
