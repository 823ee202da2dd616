"""Welch's difference of means, worked by hand."""

import pytest

from sslab.analysis.stats import welch_diff


def test_welch_difference_of_means():
    # a = 1, 2, 3 and b = 4, 5, 6: difference 3; each side's variance of the mean 1/3,
    # so the standard error is sqrt(2/3) = 0.8165; Welch's df = (2/3)^2 / (2 x (1/3)^2 / 2) = 4;
    # t(0.975, 4) = 2.7764: half-width 2.2670.
    d = welch_diff([1, 2, 3], [4, 5, 6])
    assert d["diff"] == pytest.approx(3)
    assert d["ci95"] == pytest.approx([3 - 2.2670, 3 + 2.2670], abs=1e-3)
    # No spread: the interval is the difference; one value on a side: no interval.
    assert welch_diff([2, 2], [5, 5]) == {"diff": 3, "ci95": [3, 3]}
    assert welch_diff([2], [5, 6])["ci95"] is None
    assert welch_diff([], [1])["diff"] is None
