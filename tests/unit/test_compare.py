"""Two sets of results side by side (sslab.analysis.compare), on hand-made tables with worked numbers."""

import pytest

from sslab.analysis.compare import CompareError, compare_rows, split_columns, write_compare


def rows(cc, size, fcts, rtt=100.0):
    return [{"cc": cc, "size_bytes": size, "rtt_ms": rtt, "fct_s": f, "server_fct_s": f - 0.01, "exit_cwnd": ""}
            for f in fcts]


def test_a_difference_beyond_the_cis_and_one_within_and_one_never_measured_twice():
    a = rows("cubic_hs", 2_000_000, [1.0, 1.1, 0.9]) + rows("cubic_hs", 5_000_000, [3.0, 3.2, 2.8]) \
        + rows("cubic_hs", 9_000_000, [7.0])
    b = rows("cubic_hs", 2_000_000, [2.0, 2.1, 1.9]) + rows("cubic_hs", 5_000_000, [3.1, 2.9, 3.0]) \
        + rows("cubic_hs", 9_000_000, [6.0])
    columns, found, only = compare_rows(a, b)
    assert columns == ["size_bytes"]  # cc and rtt_ms are the same throughout: nothing to group by
    fct = {c.group: c for c in found if c.metric == "fct_s"}
    # 2 MB: means 1.0 and 2.0, each sd 0.1 over 3: Welch's half-width t(4) x sqrt(2 x 0.01/3) = 0.227.
    two = fct[("2000000",)]
    assert two.diff["diff"] == pytest.approx(1.0) and two.diff["ci95"] == pytest.approx([1.0 - 0.2267, 1.0 + 0.2267],
                                                                                         abs=1e-3)
    assert two.verdict == "B higher, beyond the CIs"
    assert fct[("5000000",)].verdict == "same within the CIs"
    assert fct[("9000000",)].verdict == "n = 1 (no CI)"
    assert "exit_cwnd" not in {c.metric for c in found}  # measured on neither side: not compared
    assert only == {"a": [], "b": [], "differ": {}}


def test_what_differs_throughout_is_what_is_compared_and_unmatched_groups_are_listed():
    a = rows("cubic_hs", 2_000_000, [1.0, 1.2]) + rows("cubic_hs", 5_000_000, [3.0, 3.2])
    b = rows("cubic_mine", 2_000_000, [0.8, 0.9])
    group, differ = split_columns(a, b)
    assert group == ["size_bytes"] and differ == {"cc": ("cubic_hs", "cubic_mine")}
    columns, found, only = compare_rows(a, b)
    assert {c.group for c in found} == {("2000000",)} and only["a"] == [("5000000",)] and only["b"] == []


def test_the_report_and_its_table(tmp_path):
    a = rows("cubic_hs", 2_000_000, [1.0, 1.1, 0.9])
    b = rows("cubic_suss", 2_000_000, [0.5, 0.6, 0.4])
    summary = write_compare("before", a, "after", b, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "**2 B lower, beyond the CIs** of 2 comparisons." in text
    assert "`cc` A cubic_hs, B cubic_suss" in text
    assert (tmp_path / "compare.csv").read_text().splitlines()[0].startswith("metric,a_n,a_mean")
    assert (tmp_path / "compare-fct_s.png").stat().st_size > 5000
    assert summary["verdicts"] == {"B lower, beyond the CIs": 2} and summary["differ"] == {"cc": ["cubic_hs", "cubic_suss"]}
    with pytest.raises(CompareError, match="side B has no flows"):
        compare_rows(a, [])
