"""Statistics for repetitions: n, median, mean and a 95% confidence interval of the mean."""

from __future__ import annotations

import math
import statistics

from scipy.stats import t as student_t


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with @df degrees of freedom (scipy.stats.t)."""
    if df <= 0:
        return math.nan
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


def without_values(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "values"}
