"""The verdict on a paper value beside ours (analysis.verdict), with hand-worked numbers.

Each tolerance is pinned from both sides: a CI just inside its edge is reproduced, a CI just outside
it is not, so loosening (or tightening) any tolerance fails a test here."""

import math

import pytest

from sslab.papers.suss import table1 as t1
from sslab.analysis.verdict import (FCT_TOLERANCE, IMPROVEMENT_POINTS, NOT_DECIDED, NOT_REPRODUCED, REPRODUCED,
                                    Comparison, count_line, needed_n, tally)


def fct(ours, paper=1.0, n=10, ci=None, **kw):
    return Comparison("x", "y", "fct", ours, paper, n, ci, **kw)


def improvement(ours, paper, n=10, ci=None, **kw):
    return Comparison("x", "y", "improvement", ours, paper, n, ci, **kw)


def test_the_tolerances_are_the_ones_fixed_before_the_results():
    assert (FCT_TOLERANCE, IMPROVEMENT_POINTS) == (0.15, 10.0)


def test_an_fct_ci_inside_fifteen_percent_is_reproduced_and_one_past_it_is_not():
    # paper 1.0 s: the band is [0.85, 1.15].
    assert fct(1.0, ci=(0.851, 1.149)).outcome == REPRODUCED
    assert fct(1.0, ci=(0.85, 1.15)).outcome == REPRODUCED          # the edges belong to the band
    # Wholly between 15 % and 16 % above: not reproduced (a tolerance of 16 % would pass it).
    assert fct(1.155, ci=(1.151, 1.159)).outcome == NOT_REPRODUCED
    # ... and between 14 % and 15 % below: reproduced (a tolerance of 14 % would not).
    assert fct(0.855, ci=(0.851, 0.859)).outcome == REPRODUCED
    assert fct(0.845, ci=(0.841, 0.849)).outcome == NOT_REPRODUCED


def test_an_improvement_ci_within_ten_points_is_reproduced_and_one_past_it_is_not():
    # paper 29 %, no rounding given: the band is [19, 39].
    assert improvement(34, 29, ci=(19.1, 38.9)).outcome == REPRODUCED
    assert improvement(39.5, 29, ci=(39.1, 39.9)).outcome == NOT_REPRODUCED    # 10.1-10.9 points over
    assert improvement(18.5, 29, ci=(18.1, 18.9)).outcome == NOT_REPRODUCED
    assert improvement(19.5, 29, ci=(19.1, 19.9)).outcome == REPRODUCED       # 9.1-9.9 points under


def test_the_printed_rounding_widens_the_band_by_exactly_itself():
    # 29 % printed in whole percent: 28.5-29.5, so the band is [18.5, 39.5].
    assert improvement(39.45, 29, ci=(39.4, 39.5), rounding=0.5).outcome == REPRODUCED
    assert improvement(39.55, 29, ci=(39.51, 39.6), rounding=0.5).outcome == NOT_REPRODUCED
    assert improvement(39.5, 29, ci=(39.4, 39.6), rounding=0.5).outcome == NOT_DECIDED
    # An FCT printed to 0.01 s: 0.94 -> tolerance 0.141 + 0.005 = 0.146, the band [0.794, 1.086].
    c = fct(1.0, paper=0.94, ci=(0.795, 1.085), rounding=0.005)
    assert c.tolerance == pytest.approx(0.146) and c.outcome == REPRODUCED
    assert fct(1.09, paper=0.94, ci=(1.087, 1.093), rounding=0.005).outcome == NOT_REPRODUCED
    with pytest.raises(ValueError):
        fct(1.0, rounding=-0.1)


def test_a_mean_inside_the_band_with_a_ci_over_its_edge_is_not_decided():
    c = fct(1.10, ci=(1.0, 1.2))
    assert c.outcome == NOT_DECIDED and not c.reproduced
    # sd = 0.1 * sqrt(10) / t(9) = 0.1 * 3.1623 / 2.2622 = 0.13979; the mean is 0.05 from the edge:
    # the least k with t(k-1) * 0.13979 / sqrt(k) < 0.05 is 33 (k = 32: 2.0395 * 0.13979 / 5.657 = 0.0504).
    assert c.needed_n == 33
    assert c.verdict_text() == "not decided at n = 10: about n = 33 would decide it"
    # A mean outside the band whose CI reaches into it: not decided either (not "missed").
    assert fct(1.2, ci=(1.1, 1.3)).outcome == NOT_DECIDED


def test_the_papers_value_inside_our_ci_decides_nothing_by_itself():
    # The old rule's case: -3 % against the paper's 13 %, CI (-20, 14) holds 13: not reproduced now ...
    c = improvement(-3, 13, ci=(-20, 14))
    assert c.ci95[0] <= c.paper <= c.ci95[1] and not c.reproduced
    # ... not decided, since the CI reaches into the band [3, 23] and out of it.
    assert c.outcome == NOT_DECIDED
    # The wider the CI, the less it says: noise never makes a value reproduced.
    assert fct(1.0, ci=(0.5, 1.5)).outcome == NOT_DECIDED


def test_a_wrong_signed_value_is_never_reproduced():
    # An improvement under 10 points: the band [-6, 14] around 4 % is cut at zero.
    c = improvement(-1, 4, ci=(-1.5, -0.5))
    assert c.band == (0.0, 14.0) and c.outcome == NOT_REPRODUCED
    assert improvement(-0.5, 4, n=1).outcome == NOT_REPRODUCED
    assert improvement(2, 4, ci=(-1, 5)).outcome == NOT_DECIDED              # across zero: undecided
    # Negative paper values keep their side too (a change of -6.1 % with a wide rounding).
    neg = Comparison("x", "y", "change", 0.5, -0.5, 1, rounding=2.0)
    assert neg.band == (-0.5 - 2.075, 0.0) and neg.outcome == NOT_REPRODUCED
    # A paper value of zero has no side: the band is its rounding either way.
    assert Comparison("x", "y", "change", 0.3, 0.0, 1, rounding=0.5).outcome == REPRODUCED


def test_with_one_repetition_the_mean_decides_and_says_n_1():
    assert fct(1.15, n=1).outcome == REPRODUCED and fct(1.151, n=1).outcome == NOT_REPRODUCED
    assert fct(1.1, n=1).verdict_text() == "reproduced (n = 1, no CI)"
    # A CI given with n = 1 is ignored (there is none).
    assert fct(1.1, n=1, ci=(0.0, 5.0)).outcome == REPRODUCED


def test_needed_n_from_the_ci_and_the_gap():
    assert needed_n(1.1, (1.0, 1.2), 10, 0.05) == 33
    assert needed_n(1.1, None, 1, 0.05) is None
    assert needed_n(1.15, (1.05, 1.25), 10, 0.0) == 0       # on the edge: no n decides it
    assert needed_n(1.1, (1.1, 1.1), 5, 0.05) == 5          # no spread: decided already


def test_tally_and_the_count_line():
    cs = [fct(1.0, n=1), fct(2.0, n=1), fct(1.1, ci=(1.0, 1.2)),
          Comparison("a", "b", "fct", 1.0, 1.0, 1, derived=True, rounding=0.01)]
    assert tally(cs) == {REPRODUCED: 2, NOT_REPRODUCED: 1, NOT_DECIDED: 1, "of": 4}
    assert count_line(cs).startswith("**Paper values: 2 reproduced, 1 not reproduced, 1 not decided of 4** "
                                      "(printed: 1 reproduced, 1 not reproduced, 1 not decided of 3; implied: "
                                      "1 reproduced, 0 not reproduced, 0 not decided of 1); the rule: ")


# -- Table 1's values under it ------------------------------------------------------------------

PAPER_CUBIC_25 = {"off_large": 30.4, "off_small": 1.33, "on_large": 31.2, "on_small": 0.94, "improvement_pct": 29}


def rep(off_large, off_small, on_large, on_small):
    return {"off": {"large_fct_s": off_large, "small_mean_fct_s": off_small, "drops": 0},
            "on": {"large_fct_s": on_large, "small_mean_fct_s": on_small, "drops": 0}}


LARGE, SMALL, IMPROVEMENT, STABILITY = ("the large flow's FCTs", "the small flows' FCTs",
                                        "the small flows' improvements", "the stability effect")
MEANS = "the Average rows and the 2 BDP means they imply"


def table1_settings():
    """Table 1's main table as its experiment file describes it."""
    from sslab.analysis.matrix_described import described_in
    from sslab.analysis.settings_table import Settings
    return described_in(t1.MATRIX_FILE).section(Settings)


def setting_comparisons(reps: list[dict], paper: dict) -> list:
    """Table 1's comparisons of one setting (CUBIC, 1 BDP, 25 ms) as its experiment file describes its main
    table (the settings section over the Table 1 reading)."""
    from sslab.analysis.settings_table import SettingsGrid, setting_rows
    spec = table1_settings()
    setting = ("cubic", "1BDP", "25ms")
    records = [t1.record_of(setting, r) for r in reps]
    ref = {"rows": [{"large_cc": "cubic", "buffer": "1BDP", "large_rtt": "25ms", **paper}]}
    matrix = SettingsGrid([dict(zip(("large_cc", "buffer", "large_rtt"), setting))], labels={"cubic": "CUBIC"})
    (row,) = setting_rows(spec, records, t1.RECORDS, ref, matrix, {"on": "SUSS"})
    assert all(c.where == "CUBIC 1BDP 25ms" for c in row.comparisons)
    return row.comparisons


def test_the_stability_effect_the_papers_two_fcts_imply():
    # 31.2 / 30.4 - 1 = +2.632 %; each FCT printed to 0.1 s: 100 * 0.05 * (1/30.4 + 31.2/30.4^2) = 0.3333.
    change, rounding = t1.paper_change(PAPER_CUBIC_25)
    assert change == pytest.approx(2.6316, abs=1e-4) and rounding == pytest.approx(0.33328, abs=1e-5)
    # Its band: 2.6316 ± (0.15 * 2.6316 + 0.3333) = ± 0.7280, so [1.9036, 3.3596].  Ours +8.2 %: not
    # reproduced, though both FCTs (+/-15 % each) pass.
    reps = [rep(30.4, 1.8, 32.9, 1.0), rep(30.4, 1.8, 32.9, 1.0)]
    cs = {c.short: c for c in setting_comparisons(reps, PAPER_CUBIC_25)}
    st = cs["stability"]
    assert st.group == STABILITY and st.derived and st.kind == "change"
    assert st.ours == pytest.approx((32.9 / 30.4 - 1) * 100) and st.outcome == NOT_REPRODUCED
    assert cs["large off"].reproduced and cs["large on"].reproduced
    assert st.band == pytest.approx((2.6316 - 0.7280, 2.6316 + 0.7280), abs=1e-3)


def test_table1s_values_carry_the_papers_printed_rounding_and_their_group():
    reps = [rep(30.0, 1.3, 31.0, 0.95), rep(31.0, 1.4, 31.5, 0.93)]
    cs = {c.short: c for c in setting_comparisons(reps, PAPER_CUBIC_25)}
    assert {k: c.rounding for k, c in cs.items() if k != "stability"} == \
        {"large off": 0.05, "small off": 0.005, "large on": 0.05, "small on": 0.005, "improvement": 0.5}
    assert {k: c.group for k, c in cs.items()} == {
        "large off": LARGE, "large on": LARGE, "small off": SMALL, "small on": SMALL,
        "improvement": IMPROVEMENT, "stability": STABILITY}
    # The improvement: of the means, 1 - 0.94 / 1.35 = 30.37 %; its CI over the two repetitions' own
    # improvements (26.92 % and 33.57 %): sd 6.6484 / sqrt(2) = 4.7011, t(1) = 12.706.
    imp = cs["improvement"]
    assert imp.ours == pytest.approx((1 - 0.94 / 1.35) * 100)
    assert imp.ci95[1] - imp.ci95[0] == pytest.approx(2 * 12.7062 * 4.7011 / math.sqrt(2), rel=1e-4)
    assert imp.outcome == NOT_DECIDED


def test_the_headline_counts_each_group_apart():
    reps = [rep(30.4, 1.33, 31.2, 0.94)]
    cs = setting_comparisons(reps, PAPER_CUBIC_25)
    from sslab.analysis.settings_table import headline, headline_counts
    spec = table1_settings()
    # The headline's lines in the file's order of groups: the large flow's first, the means last.
    assert spec.groups == [LARGE, SMALL, IMPROVEMENT, STABILITY, MEANS]
    lines = headline(spec, cs, n=1)
    assert lines[0] == "**Table 1's values under the verdict at n = 1 (one repetition: the means decide, no CI):**"
    assert "- the large flow's FCTs: 2 reproduced, 0 not reproduced, 0 not decided of 2" in lines
    assert "- the small flows' FCTs: 2 reproduced, 0 not reproduced, 0 not decided of 2" in lines
    assert "- the stability effect: 1 reproduced, 0 not reproduced, 0 not decided of 1" in lines
    assert [ln.split(":")[0] for ln in lines if ln.startswith("- ")] == [f"- {g}" for g in (LARGE, SMALL,
                                                                                          IMPROVEMENT, STABILITY)]
    counts = headline_counts(spec, cs)
    assert counts[IMPROVEMENT] == {REPRODUCED: 1, NOT_REPRODUCED: 0, NOT_DECIDED: 0, "of": 1}
    assert MEANS not in counts


def recomputed(record: dict, rule: dict) -> str:
    """A value's outcome worked out again from its record alone, as a script reading summary.json would:
    the band from the paper's value, the kind, the rounding and the rule's tolerances; then our CI (or,
    at n = 1, our mean) against it."""
    paper = record["paper"]
    if record["kind"] in rule["relative_kinds"]:
        tol = rule["fct_tolerance"] * abs(paper) + record["rounding"]
    else:
        tol = rule["improvement_points"] + record["rounding"]
    lo, hi = paper - tol, paper + tol
    lo, hi = (max(lo, 0.0), hi) if paper > 0 else (lo, min(hi, 0.0)) if paper < 0 else (lo, hi)
    if record["n"] < 2 or record["ci95"] is None:
        return "reproduced" if lo <= record["ours"] <= hi else "not reproduced"
    clo, chi = record["ci95"]
    if lo <= clo and chi <= hi:
        return "reproduced"
    return "not reproduced" if chi < lo or clo > hi else "not decided"


def test_a_comparisons_record_carries_its_verdict_and_a_script_recomputes_it():
    """summary.json keeps each paper value with its band, outcome and needed_n (Comparison.record): read
    back through JSON, every outcome is what the values and the rule give, hand-worked here."""
    import json

    from sslab.analysis.verdict import RULE_RECORD
    values = [fct(1.0, ci=(0.9, 1.1)),                                    # inside [0.85, 1.15]
              fct(1.3, ci=(1.2, 1.4)),                                    # wholly above
              fct(1.1, ci=(1.0, 1.2)),                                    # over the upper edge
              improvement(-3, 13, ci=(-20, 14)),                          # wrong sign, CI over the band's edge
              improvement(41.4, 29, n=1, rounding=0.5),                   # n = 1: the mean, outside [18.5, 39.5]
              Comparison("x", "large change", "change", 4.7, 2.6, 5, (1.9, 3.3), derived=True, rounding=0.1,
                         unit=" points")]
    records = json.loads(json.dumps({"verdict_rule": RULE_RECORD, "comparisons": [c.record() for c in values]}))
    rule = records["verdict_rule"]
    outcomes = [r["outcome"] for r in records["comparisons"]]
    assert outcomes == [REPRODUCED, NOT_REPRODUCED, NOT_DECIDED, NOT_DECIDED, NOT_REPRODUCED, NOT_DECIDED]
    assert [recomputed(r, rule) for r in records["comparisons"]] == outcomes
    assert records["comparisons"][0]["band"] == pytest.approx([0.85, 1.15])
    assert records["comparisons"][4]["band"] == pytest.approx([18.5, 39.5])
    # Not decided: the n that would decide it at the spread measured; decided: none.
    assert records["comparisons"][2]["needed_n"] > 10 and records["comparisons"][0]["needed_n"] is None
    # A record reads back as the comparison it was.
    assert [Comparison.from_record(r) for r in records["comparisons"]] == values


def test_the_answers_plot_puts_each_value_where_its_record_says():
    """ours-vs-paper.svg: each value a point of its own (id value-<n>), coloured by its verdict; a value
    changed moves its point, and only its point."""
    import re

    from sslab.analysis.answer_plots import COLOURS, ours_against_paper

    def points(tmp, records):
        svg = ours_against_paper(records, tmp).read_text()
        out = {}
        for m in re.finditer(r'<g id="(value-\d+)">(.*?)</g>\s*</g>', svg, re.S):
            use = re.search(r'<use [^>]*x="([\d.]+)" y="([\d.]+)" style="fill: (#[0-9a-f]+)', m[2])
            out[m[1]] = (float(use[1]), float(use[2]), use[3])
        return out

    import tempfile
    from pathlib import Path
    records = [fct(1.83, paper=1.33, ci=(1.80, 1.86), group="the small flows' FCTs").record(),
               fct(30.0, paper=30.4, ci=(29.5, 30.5), group="the large flow's FCTs").record(),
               improvement(47, 29, ci=(45, 50), group="the small flows' improvements").record()]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        before = points(Path(a), records)
        assert set(before) == {"value-0", "value-1", "value-2"}
        assert before["value-0"][2] == COLOURS[NOT_REPRODUCED].lower() and before["value-1"][2] == COLOURS[REPRODUCED].lower()
        moved = [dict(records[0], ours=1.40, ci95=[1.37, 1.43], outcome=REPRODUCED), *records[1:]]
        after = points(Path(b), moved)
        # Setting by setting: the improvement (and a stability effect, had there been one) as points.
        from sslab.analysis.answer_plots import per_setting
        svg = per_setting(records, Path(a)).read_text()
        assert re.findall(r'<g id="(value-\d+)">', svg) == ["value-2"]
        assert per_setting(records[:2], Path(a)) is None
        # Against the claims' bound: every setting of a column the bounds name, coloured as the claim judges
        # one (CI at or below 2.6: reproduced; wholly above: not; across: not decided); others left out.
        from sslab.analysis.answer_plots import against_bound
        rows = [{"large_cc": "cubic", "buffer": "1BDP", "large_rtt": "25ms", "large_change": {"mean": 1.0, "ci95": [0.5, 1.5]}},
                {"large_cc": "cubic", "buffer": "2BDP", "large_rtt": "25ms", "large_change": {"mean": 21.0, "ci95": [18.0, 24.8]}},
                {"large_cc": "cubic", "buffer": "2BDP", "large_rtt": "50ms", "large_change": {"mean": 2.0, "ci95": [0.0, 4.0]}},
                {"large_cc": "bbr3", "buffer": "1BDP", "large_rtt": "25ms", "large_change": {"mean": 9.0, "ci95": [8.0, 10.0]}}]
        svg = against_bound(rows, {"cubic": 2.6}, Path(a)).read_text()
        fills = dict(re.findall(r'<g id="(setting-\d)">.*?fill: (#[0-9a-f]+)', svg, re.S))
        assert fills == {"setting-0": COLOURS[REPRODUCED].lower(), "setting-1": COLOURS[NOT_REPRODUCED].lower(),
                         "setting-2": COLOURS[NOT_DECIDED].lower()}
        assert against_bound(rows[3:], {"cubic": 2.6}, Path(a)) is None
        # The answer and the three plots in one PDF: a page of text, then a page a plot; the plots' SVGs
        # drawn again for it are the same bytes.
        from sslab.analysis.answer_plots import summary_pdf
        svgs = {p.name: p.read_bytes() for p in Path(a).glob("*.svg")}
        pdf = summary_pdf("E7 stability", ["**Table 1's values:**", "- the small flows' FCTs: 1 reproduced"],
                          records, rows, {"cubic": 2.6}, Path(a)).read_bytes()
        assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type /Page\b", pdf)) == 4
        assert {p.name: p.read_bytes() for p in Path(a).glob("*.svg")} == svgs
        # Without a date in it: the same records, the same file.
        assert summary_pdf("E7 stability", ["**Table 1's values:**", "- the small flows' FCTs: 1 reproduced"],
                           records, rows, {"cubic": 2.6}, Path(a)).read_bytes() == pdf
    # Its y moved (down: a smaller FCT), its x (the paper's) did not; it is reproduced now; the others stay.
    assert after["value-0"][0] == before["value-0"][0] and after["value-0"][1] > before["value-0"][1]
    assert after["value-0"][2] == COLOURS[REPRODUCED].lower()
    assert after["value-1"] == before["value-1"] and after["value-2"] == before["value-2"]
