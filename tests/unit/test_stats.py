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


def test_cis_overlap_when_they_share_a_point_and_says_nothing_below_two_values():
    from sslab.analysis.stats import cis_overlap, describe
    # [1, 3]: mean 2, sd 1.414, t(1) = 12.706: 2 ±12.7.  [20, 20]: the point 20, outside; [14, 14]: inside.
    wide = describe([1.0, 3.0])
    assert cis_overlap(wide, describe([14.0, 14.0])) is True
    assert cis_overlap(wide, describe([20.0, 20.0])) is False
    # Touching ends share a point.
    assert cis_overlap(describe([2.0, 2.0]), {"ci95": [2.0, 5.0]}) is True
    assert cis_overlap(wide, describe([5.0])) is None and cis_overlap(wide, describe([])) is None


def test_independence_of_repetitions_by_hand():
    from sslab.papers.suss.independence import check
    # Two groups of three that differ as wholes: means 2 and 5, each with variance 1.  F = 3 * var(2, 5)
    # / 1 = 3 * 4.5 = 13.5; each group's CI, mean +/- t(2) * 1 / sqrt(3) = +/- 2.484, misses the other's mean.
    c = check([1, 2, 3, 4, 5, 6], 3, "x")
    assert (c.groups, c.per_group, c.covered) == (2, 3, 0) and c.f == pytest.approx(13.5)
    assert c.p == pytest.approx(0.0213, abs=1e-3)     # F(1, 4) beyond 13.5
    # Interleaved, the groups agree: means 3 and 4, each variance 4: F = 3 * 0.5 / 4 = 0.375; both CIs hold
    # the other mean.
    c = check([1, 3, 5, 2, 4, 6], 3)
    assert c.covered == 2 and c.f == pytest.approx(3 * 0.5 / 4)
    # A last, shorter group is left out; one group is no check.
    assert check([1, 2, 3, 4, 5, 6, 7], 3).groups == 2
    with pytest.raises(ValueError):
        check([1, 2, 3, 4], 3)
