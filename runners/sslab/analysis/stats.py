"""Statistics for repetitions: n, median, mean and a 95% confidence interval of the mean."""

from __future__ import annotations

import functools
import math
import statistics


@functools.cache
def t95(df: int | float) -> float:
    """The two-sided 95% quantile of Student's t with @df degrees of freedom (scipy.stats.t).

    scipy.stats is imported here, on the first interval asked for, not with this module: its
    import takes 0.9 s, which every process that imports the analysis package paid (the host's
    read-out of each boot's runs, the matrix's cell runner, the command line) whether or not it
    computes an interval."""
    if df <= 0:
        return math.nan
    from scipy.stats import t as student_t
    return float(student_t.ppf(0.975, df))


def describe(values: list[float]) -> dict:
    """n, median, mean and the 95% confidence interval of the mean."""
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(vals)
    if not n:
        return {"n": 0, "median": None, "mean": None, "ci95": None}
    mean = statistics.fmean(vals)
    if n > 1:
        half = t95(n - 1) * statistics.stdev(vals) / math.sqrt(n)
        ci = [mean - half, mean + half]
    else:
        ci = None
    return {"n": n, "median": statistics.median(vals), "mean": mean, "ci95": ci, "values": vals}


def fmt_mean_ci(d: dict, digits: int) -> str:
    """mean ±half-width of the 95% CI (just the mean when n = 1)."""
    if not d or not d["n"]:
        return "–"
    if d["ci95"]:
        half = (d["ci95"][1] - d["ci95"][0]) / 2
        return f"{d['mean']:.{digits}f} ±{half:.{digits}f}"
    return f"{d['mean']:.{digits}f}"


def ci95(values: list[float]) -> tuple[float, float] | None:
    """The 95 % CI of @values' mean (describe's), or None with fewer than two."""
    d = describe(values)
    return tuple(d["ci95"]) if d["ci95"] else None


def fmt_value(v: float | None, digits: int, sign: bool = False) -> str:
    """@v to @digits (with its sign when @sign), or – without one."""
    if v is None:
        return "–"
    return f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"


def jain(xs: list[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 when all are equal, nan without a share."""
    n = len(xs)
    sq = sum(x * x for x in xs)
    if n == 0 or sq == 0:
        return math.nan
    return sum(xs) ** 2 / (n * sq)


def without_values(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "values"}


def welch_diff(a: list[float], b: list[float]) -> dict:
    """mean(b) - mean(a) with its 95% confidence interval (Welch: unequal variances).

    The interval is None with fewer than two values on a side; with no spread
    on either side it is the difference itself.
    """
    a = [v for v in a if v is not None]
    b = [v for v in b if v is not None]
    if not a or not b:
        return {"diff": None, "ci95": None}
    diff = statistics.fmean(b) - statistics.fmean(a)
    if len(a) < 2 or len(b) < 2:
        return {"diff": diff, "ci95": None}
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    if va + vb == 0:
        return {"diff": diff, "ci95": [diff, diff]}
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    half = t95(df) * math.sqrt(va + vb)
    return {"diff": diff, "ci95": [diff - half, diff + half]}


def cis_overlap(a: dict, b: dict) -> bool | None:
    """Whether two descriptions' (describe) 95% confidence intervals share a point; None when either
    has none (fewer than two values).  Overlap is no proof of equality, only no evidence against it
    at this n: said with the n beside it."""
    if not a or not b or not a.get("ci95") or not b.get("ci95"):
        return None
    return a["ci95"][0] <= b["ci95"][1] and b["ci95"][0] <= a["ci95"][1]
