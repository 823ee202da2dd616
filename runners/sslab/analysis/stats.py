"""Statistics for repetitions: n, median, mean and a 95% confidence interval of the mean."""

from __future__ import annotations

import math
import statistics

#: Two-sided 95% Student t quantiles by degrees of freedom (standard table).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
        18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t95(df: int) -> float:
    if df <= 0:
        return math.nan
    for k in sorted(_T95):
        if df <= k:
            return _T95[k]
    return 1.960


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
