"""The claims ledger: its file's checks, the verdict rules on made-up numbers, and the Table 1
extractors on a made-up archive."""

import shutil
from pathlib import Path

import pytest

from sslab.analysis import claims as cl
from sslab.papers.astart import evidence as astart_evidence
from sslab.papers.suss import evidence as ev
from sslab.analysis.claims import ClaimTest, Measured, decide

from sslab.paths import REPO_ROOT
from sslab.plan_record import MatrixPlan, write_matrix_plan

from .test_matrix_report import make_cell


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    from sslab.scenario import to_plan
    return plan_record(to_plan(s))


def m(mean, n=10, ci=None):
    return Measured(mean=mean, n=n, ci95=ci, source="made up")


def test_value_claims_are_judged_by_their_ci_against_the_band():
    t = ClaimTest(rule="value", paper=32, kind="improvement")
    assert decide(t, m(23, n=1)).verdict == "reproduced"          # n = 1: 9 points under, the mean decides
    v = decide(t, m(21, n=1))
    assert v.verdict == "not reproduced" and "-11 points" in v.why   # the right sign, 11 points off
    # The paper's value inside our CI decides nothing: a CI across the band's edge (22) is not decided.
    v = decide(t, m(20, n=10, ci=(15, 33)))
    assert v.verdict == "not decided at n = 10" and "spans an edge" in v.why
    assert decide(t, m(30, n=10, ci=(23, 37))).verdict == "reproduced"      # inside [22, 42]
    assert decide(t, m(15, n=10, ci=(10, 20))).verdict == "not reproduced"  # wholly under 22
    # The paper's rounding widens the band by itself: printed 32 % (±0.5), [21.5, 42.5].
    r = ClaimTest(rule="value", paper=32, kind="improvement", rounding=0.5)
    assert decide(r, m(22, n=10, ci=(21.6, 22.4))).verdict == "reproduced"
    # A quantity: within 15 % of the paper's.
    q = ClaimTest(rule="value", paper=0.5, kind="value")
    assert decide(q, m(0.57, n=1)).verdict == "reproduced" and decide(q, m(0.58, n=1)).verdict == "not reproduced"


def test_bounds_are_decided_by_the_ci_only():
    at_least = ClaimTest(rule="at_least", bound=20, bound_reason="the paper's 20 %")
    assert decide(at_least, m(25, ci=(20.0, 30))).verdict == "reproduced"
    assert decide(at_least, m(15, ci=(10, 19.9))).verdict == "not reproduced"
    # The mean clears the bound, the CI does not: a sign is no verdict.
    assert decide(at_least, m(22, ci=(18, 26))).verdict == "not decided at n = 10"
    assert decide(at_least, m(40, n=1)).verdict == "not decided at n = 1"
    at_most = ClaimTest(rule="at_most", bound=2.6, bound_reason="the paper's largest")
    assert decide(at_most, m(1.0, ci=(-0.5, 2.6))).verdict == "reproduced"
    assert decide(at_most, m(5.0, ci=(2.7, 7.3))).verdict == "not reproduced"
    v = decide(at_most, m(1.9, n=5, ci=(-0.1, 3.9)))
    assert v.verdict == "not decided at n = 5" and "the CI spans it" in v.why


def test_a_claim_has_a_test_and_evidence_or_says_why_it_cannot():
    with pytest.raises(ValueError, match="a test needs its evidence"):
        cl.Claim(id="x", where="w", words="w", quantity="q", test=ClaimTest(rule="value", paper=1))
    with pytest.raises(ValueError, match="not both"):
        cl.Claim(id="x", where="w", words="w", quantity="q")
    with pytest.raises(ValueError, match="bound and its reason"):
        ClaimTest(rule="at_least", bound=20)
    with pytest.raises(ValueError, match="claim ids twice"):
        cl.Ledger(source="s", claims=[cl.Claim(id="a", where="w", words="w", quantity="q", untestable="why")] * 2)
    with pytest.raises(cl.LedgerError, match="no ledger 'nope' \\(known: .*suss"):
        cl.load_ledger("nope")


def test_the_suss_ledger_loads_and_names_real_extractors_and_experiments():
    from sslab.experiment.spec import experiment_files  # the make targets
    targets = {p.stem for p in experiment_files()}
    ledger = cl.load_ledger("suss")
    assert len(ledger.claims) >= 15
    for c in ledger.claims:
        if c.evidence:
            assert c.evidence.extract in (None, *cl.EXTRACTORS), c.id
            assert c.evidence.experiment in targets, c.id
    # appendix C's real paths, and §5's 40 bytes of the authors' patch
    assert sum(c.untestable is not None for c in ledger.claims) == 3


def synthetic_column(tmp_path, settings_done):
    """A Table 1 archive of the CUBIC column on a 1 x 2 grid (1BDP; 25 and 50 ms), two repetitions of
    the settings in @settings_done.  Small flows 2.0 s off and 1.5 / 1.0 s on in repetition 0 / 1 at
    25 ms, 1.0 off and 0.5 on at 50 ms; the large flow 30 s off, 30.3 on (+1 %) and 30.6 (+2 %)."""
    d = tmp_path / "table1" / "all"
    cells = []
    for rtt, small in (("25ms", [(2.0, 1.5), (2.0, 1.0)]), ("50ms", [(1.0, 0.5), (1.0, 0.5)])):
        if rtt not in settings_done:
            continue
        s = {"large_cc": "cubic", "buffer": "1BDP", "large_rtt": rtt}
        for rep, ((off, on), large_on) in enumerate(zip(small, (30.3, 30.6))):
            cells.append(make_cell(d, f"{rtt}-{rep}", s, rep, {"off": (30.0, [off, off]), "on": (large_on, [on, on])}))
    plan = MatrixPlan.model_validate({
        "matrix": "table1", "title": "E7", "report": "table1", "selection": {}, "iterations": 2,
        "image_hash": "i" * 64, "code_version": "c" * 64, "compare": {"param": "small", "off": "cubic_hs", "on": "cubic_suss"},
        "axis_values": {"large_cc": ["cubic"], "buffer": ["1BDP"], "large_rtt": ["25ms", "50ms"]}, "cells": cells})
    (d / "plans").mkdir(parents=True)
    write_matrix_plan(plan, d / "plans" / "plan-20260101T000000Z-0000.json")
    return d


def test_table1_extractors_read_the_column_as_the_papers_average_row(tmp_path):
    d = synthetic_column(tmp_path, {"25ms", "50ms"})
    # Repetition 0: 1 - (1.5 + 0.5) / (2.0 + 1.0) = 33.3 %; repetition 1: 1 - 1.5 / 3.0 = 50 %.
    imp = ev.table1.table1_average_improvement(d, "cubic")
    assert imp.n == 2 and imp.mean == pytest.approx((100 / 3 + 50) / 2)
    assert imp.ci95[0] < imp.mean < imp.ci95[1]
    # The large flow: +1 % in repetition 0, +2 % in 1, in both settings.
    slow = ev.table1.table1_large_slowdown(d, "cubic")
    assert slow.mean == pytest.approx(1.5) and slow.n == 2


def test_the_ledger_carries_table1s_headline_counts(tmp_path):
    from sslab.analysis.archive import latest_plan
    from sslab.papers.suss.table1 import table1

    vc = cl.ValueCounts(experiment="reproduce-table1", archive="table1/*", where="Table 1")
    ledger = cl.Ledger(source="SUSS", value_counts=[vc])
    assert "No archive yet: run `make reproduce-table1`." in cl.ledger_page(ledger, tmp_path)
    d = synthetic_column(tmp_path, {"25ms", "50ms"})
    page = cl.ledger_page(ledger, tmp_path)
    counts = table1(d, latest_plan(d)[1])[1]["headline"]
    # Two settings, each: two large-flow FCTs, two small-flow FCTs, one improvement, one stability effect;
    # the Average row's five values (the archive's grid, 1BDP x 25 and 50 ms, is whole).
    assert [t["of"] for t in counts.values()] == [4, 4, 2, 2, 5]
    assert "## Table 1: every paper value by outcome" in page and "(4 cells;" in page
    for group, t in counts.items():
        assert (f"- {group}: {t['reproduced']} reproduced, {t['not reproduced']} not reproduced, "
                f"{t['not decided']} not decided of {t['of']}") in page


def test_a_partial_column_is_no_evidence(tmp_path):
    d = synthetic_column(tmp_path, {"25ms"})
    with pytest.raises(cl.LedgerError, match="1 of the 2 settings of cubic"):
        ev.table1.table1_average_improvement(d, "cubic")
    claim = cl.Claim(id="c", where="w", words="w", quantity="q", test=ClaimTest(rule="value", paper=32, kind="improvement"),
                     evidence=cl.Evidence(experiment="reproduce-table1", archive="table1/all",
                                          extract="table1_average_improvement", args={"large_cc": "cubic"}))
    verdict, measured = cl.judge(claim, tmp_path)
    assert verdict.verdict == cl.NO_EVIDENCE and measured is None
    assert cl.judge(claim, tmp_path / "elsewhere")[0].why.startswith("no archive")


def test_fairness_trend_extractor_compares_the_gain_at_an_axis_ends_per_repetition(tmp_path):
    """Fig. 15's "more pronounced with longer RTTs and larger buffers", on made-up captures (the fifth flow
    fair again 3 s before @until, as above): per repetition, the gain (off - on) at 2 BDP less at 1 BDP,
    each over both minRTTs; and at 50 ms less at 25 ms, each over both buffers.  Worked by hand:
      rep 0: 1BDP gains 2 (25 ms: 13 - 11) and 1 (50 ms: 13 - 12), mean 1.5; 2BDP 3 and 4, mean 3.5
      rep 1: 1BDP 1 and 1, mean 1;                                    2BDP 2 and 2, mean 2
    buffer: 3.5 - 1.5 = 2 and 2 - 1 = 1, mean 1.5; rtt: rep 0 (2 + 3) / 2 - (1 + 4) / 2 = 0, rep 1 0."""
    from .test_matrix_report import fairness_plan, make_fairness_cell

    d = tmp_path / "fairness" / "all"
    untils = {("1BDP", "25ms", 0): (13, 11), ("1BDP", "50ms", 0): (13, 12), ("2BDP", "25ms", 0): (14, 11),
              ("2BDP", "50ms", 0): (15, 11), ("1BDP", "25ms", 1): (13, 12), ("1BDP", "50ms", 1): (13, 12),
              ("2BDP", "25ms", 1): (13, 11), ("2BDP", "50ms", 1): (14, 12)}
    cells = [make_fairness_cell(d, f"{b}-{r}-{rep}", {"incumbents": "cubic", "buffer": b, "rtt": r}, rep,
                                {"off": float(off), "on": float(on)})
             for (b, r, rep), (off, on) in untils.items()]
    plan = fairness_plan(d, cells)
    plan.axis_values = {"incumbents": ["cubic"], "buffer": ["1BDP", "2BDP"], "rtt": ["25ms", "50ms"]}
    (d / "plans").mkdir(parents=True)
    write_matrix_plan(plan, d / "plans" / "plan-20260101T000000Z-0000.json")
    assert ev.fairness.fairness_recovery_gain(d, "2BDP").mean == pytest.approx(2.75, abs=0.05)
    buffer = ev.fairness.fairness_gain_trend(d, "buffer")
    assert buffer.n == 2 and buffer.mean == pytest.approx(1.5, abs=0.05)
    rtt = ev.fairness.fairness_gain_trend(d, "rtt")
    assert rtt.n == 2 and rtt.mean == pytest.approx(0.0, abs=0.05)
    # At n = 2 neither is decided; a claim over the ends needs every setting of both ends done.
    assert decide(ClaimTest(rule="at_least", bound=0, bound_reason="grows"), buffer).verdict == "not decided at n = 2"
    for cell in cells:
        if cell.setting["buffer"] == "2BDP" and cell.setting["rtt"] == "50ms":
            shutil.rmtree(d / "cells" / cell.key)
    with pytest.raises(cl.LedgerError, match="3 of the 4 settings at the buffer axis's ends"):
        ev.fairness.fairness_gain_trend(d, "buffer")
    # Without any 2 BDP setting the archive is another selection's: not this claim's.
    for cell in cells:
        if cell.setting["buffer"] == "2BDP" and (d / "cells" / cell.key).exists():
            shutil.rmtree(d / "cells" / cell.key)
    with pytest.raises(cl.NotThisArchive, match="2 of the 4 settings"):
        ev.fairness.fairness_gain_trend(d, "buffer")
    with pytest.raises(ValueError, match="buffer or rtt"):
        ev.fairness.fairness_gain_trend(d, "incumbents")


def test_fairness_extractor_reads_the_sooner_return_per_repetition(tmp_path):
    """E6 on made-up captures (test_matrix_report's fifth flow, unfair until t = @until): fair again from
    the window ending 1 s after it, 4 s after the fifth flow's start at 13 s off and 2 s at 11 s on."""
    from .test_matrix_report import fairness_plan, make_fairness_cell

    d = tmp_path / "fairness" / "all"
    cells = []
    for rtt in ("25ms", "50ms"):
        s = {"incumbents": "cubic", "buffer": "1BDP", "rtt": rtt}
        cells += [make_fairness_cell(d, f"{rtt}-0", s, 0, {"off": 13.0, "on": 11.0}),
                  make_fairness_cell(d, f"{rtt}-1", s, 1, {"off": 13.0, "on": 12.0})]
    plan = fairness_plan(d, cells)
    plan.axis_values = {"incumbents": ["cubic"], "buffer": ["1BDP"], "rtt": ["25ms", "50ms"]}
    (d / "plans").mkdir(parents=True)
    write_matrix_plan(plan, d / "plans" / "plan-20260101T000000Z-0000.json")
    gain = ev.fairness.fairness_recovery_gain(d, "1BDP")
    # Repetition 0: 2 s sooner at both minRTTs; repetition 1: 1 s sooner.
    assert gain.n == 2 and gain.mean == pytest.approx(1.5, abs=0.05)
    assert decide(ClaimTest(rule="at_least", bound=0, bound_reason="sooner"), gain).verdict == "not decided at n = 2"
    with pytest.raises(cl.NotThisArchive, match="0 of the 2 minRTTs at 2BDP"):   # another buffer: not this archive's claim
        ev.fairness.fairness_recovery_gain(d, "2BDP")
    # Its report names the other buffers' claims once and gives the 1 BDP claim its section.
    text = cl.report_claims_md(tmp_path, d)
    assert ("Not tested by these runs (other settings of the experiment): fig15-fairness-recovers-sooner-1-5bdp, "
            "fig15-fairness-recovers-sooner-2bdp, fig15-more-pronounced-with-buffer.") in text
    # Its grid has one buffer, so the minRTT trend is this archive's (both gains 0 s, 50 ms less 25 ms).
    assert "fig15-more-pronounced-with-rtt: reproduced" in text
    assert "fig15-fairness-recovers-sooner-1bdp: not decided at n = 2" in text and text.count("### ") == 2
    # The same archive copied out of results/ (an artifact downloaded from a CI run): its plan names its
    # kind, and its report tests the same claims, naming where it now lies.
    copy = tmp_path / "elsewhere" / "artifact" / d.name
    shutil.copytree(d, copy)
    results = tmp_path / "empty-results"
    results.mkdir()
    assert cl.archive_kind(results, copy) == Path(plan.matrix) and cl.archive_kind(tmp_path, d) == d.parent.relative_to(tmp_path)
    assert cl.report_claims_md(results, copy).replace(str(copy), str(d)) == text.replace("results/", f"{tmp_path}/")
    assert cl.archive_kind(results, tmp_path / "elsewhere") is None  # no plan: no kind


def test_e4_least_improvement_is_every_link_at_once(tmp_path):
    """Made-up E4 improvements: wired 30 % [25, 35], wifi 22 % [15, 29] at 1 MB and 150 ms; the least of
    several has the CI (least lower end, least upper end), so "over 20 % in all" is not decided while
    wifi's CI spans 20, and not reproduced once any one lies below it."""
    import json

    def summary(wifi_ci):
        return {"improvements": [
            {"link": "wired", "rtt_ms": 150.0, "size": 1_000_000, "on": "cubic_suss 2024", "n": [10, 10],
             "improvement": 0.30, "improvement_ci": [0.25, 0.35]},
            {"link": "wifi", "rtt_ms": 150.0, "size": 1_000_000, "on": "cubic_suss 2024", "n": [10, 10],
             "improvement": 0.22, "improvement_ci": wifi_ci},
            # 40 ms and 10 MB are outside the claim
            {"link": "wifi", "rtt_ms": 40.0, "size": 1_000_000, "on": "cubic_suss 2024", "n": [10, 10],
             "improvement": 0.01, "improvement_ci": [0.0, 0.02]},
            {"link": "wired", "rtt_ms": 150.0, "size": 10_000_000, "on": "cubic_suss 2024", "n": [10, 10],
             "improvement": 0.02, "improvement_ci": [0.0, 0.04]}]}

    d = tmp_path / "fct-vs-size" / "reports" / "latest"
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps(summary([0.15, 0.29])))
    least = ev.e4.e4_least_improvement(d, "wired,wifi", "5", "50")
    assert least.mean == pytest.approx(22) and least.ci95 == pytest.approx((15, 29)) and least.n == 10
    over_20 = ClaimTest(rule="at_least", bound=20, bound_reason="the paper's")
    assert decide(over_20, least).verdict == "not decided at n = 10"
    (d / "summary.json").write_text(json.dumps(summary([0.12, 0.19])))
    assert decide(over_20, ev.e4.e4_least_improvement(d, "wired,wifi", "5", "50")).verdict == "not reproduced"
    with pytest.raises(cl.LedgerError, match="no cubic_suss 2024 improvement for 5g"):
        ev.e4.e4_least_improvement(d, "wired,wifi,5g", "5", "50")


def test_within_is_a_band_either_side_of_zero():
    same = ClaimTest(rule="within", bound=10, bound_reason="almost the same")
    assert decide(same, m(-3, ci=(-9.9, 4))).verdict == "reproduced"
    v = decide(same, m(-45, ci=(-60, -30)))
    assert v.verdict == "not reproduced" and "outside" in v.why       # far below: a band, not a ceiling
    assert decide(same, m(40, ci=(11, 69))).verdict == "not reproduced"
    v = decide(same, m(5, ci=(-2, 12)))
    assert v.verdict == "not decided at n = 10" and "an edge of it" in v.why
    assert decide(same, m(0, n=1)).verdict == "not decided at n = 1"


def test_e4_loss_ratio_sums_sizes_and_takes_its_ci_by_the_delta_method(tmp_path):
    """Made-up E5 rows, n = 4 (t = 3.182): off lost 10 [8, 12] at 2 MB and 30 [24, 36] at 4 MB, on 5 [4, 6]
    and 10 [7, 13].  Ratio 15 / 40 = 0.375.  Standard errors are half-widths / t, so the ratio's
    half-width is 0.375 * sqrt((1^2 + 3^2) / 15^2 + (2^2 + 6^2) / 40^2) = 0.375 * 0.2636 = 0.0988 (the t
    cancels).  40 MB off the link, 150 ms and wifi rows are outside the claim."""
    import json

    def row(cc, size, mean, ci, link="5g", rtt=40.0):
        return {"link": link, "rtt_ms": rtt, "cc": cc, "size": size, "n": 4, "lost": {"n": 4, "mean": mean, "ci95": ci}}

    d = tmp_path / "fct-vs-size" / "reports" / "x"
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"runs": [], "sizes": [
        row("cubic_hs", 2_000_000, 10, [8, 12]), row("cubic_hs", 4_000_000, 30, [24, 36]),
        row("cubic_suss 2024", 2_000_000, 5, [4, 6]), row("cubic_suss 2024", 4_000_000, 10, [7, 13]),
        row("cubic_hs", 1_000_000, 900, [0, 1800]),                       # under 2 MB
        row("cubic_hs", 2_000_000, 900, [0, 1800], rtt=150.0),            # the other RTT
        row("cubic_suss 2024", 2_000_000, 900, [0, 1800], link="wifi")]}))
    r = ev.e4.e4_loss_ratio(d, "5g", "40", "2", "40")
    assert r.mean == pytest.approx(0.375) and r.n == 4
    assert r.ci95 == pytest.approx((0.375 - 0.0988, 0.375 + 0.0988), abs=2e-4)
    assert r.options == "SELECT=cubic_hs,cubic_suss REPS=4"   # no run directory named: no setting
    assert decide(ClaimTest(rule="at_most", bound=0.5, bound_reason="half"), r).verdict == "reproduced"
    with pytest.raises(cl.LedgerError, match="no cubic_suss 2024 run on lte"):
        ev.e4.e4_loss_ratio(d, "lte", "40", "2", "40")


def scenario_run(root, cases):
    """A made-up scenario run directory: @cases maps (cc, size, rep) to (FCT s, exit cwnd)."""
    import json

    out = root / "job" / "out"
    index = []
    for i, ((cc, size, rep), (fct, cwnd)) in enumerate(sorted(cases.items())):
        tag = f"{i:03d}-{cc}-{size}-r{rep}"
        (out / "runs" / tag).mkdir(parents=True)
        (out / "runs" / tag / "run.json").write_text(json.dumps({
            "run": {"case": f"{cc}-{size}", "rep": rep, "params": {"cc": cc, "size": size}},
            "flows": [{"port": 5201, "fct_s": fct, "slow_start": {"exit_cwnd": cwnd}}]}))
        index.append({"tag": tag})
    (out / "runs.json").write_text(json.dumps(index))
    return root


def test_e3_changes_pair_the_arms_by_repetition(tmp_path):
    """Repetition 0: off 20 s / cwnd 1000, on 21 s / 1100 (+5 %, +10 %); repetition 1: off 20 / 1000, on 19 / 900
    (-5 %, -10 %); repetition 2 has no SUSS arm and is left out; the 5 MB case is another size."""
    d = scenario_run(tmp_path / "dynamics" / "latest", {
        ("cubic_hs", "100MB", 0): (20.0, 1000), ("cubic_suss", "100MB", 0): (21.0, 1100),
        ("cubic_hs", "100MB", 1): (20.0, 1000), ("cubic_suss", "100MB", 1): (19.0, 900),
        ("cubic_hs", "100MB", 2): (25.0, 2000), ("cubic_suss", "5MB", 0): (1.0, 50)})
    fct = ev.e3.e3_fct_change(d, "100MB")
    assert fct.n == 2 and fct.mean == pytest.approx(0.0) and fct.options == "REPS=2"
    cwnd = ev.e3.e3_exit_cwnd_change(d, "100MB")
    assert cwnd.n == 2 and cwnd.mean == pytest.approx(0.0)
    # t(1) = 12.71, sd 14.14 over sqrt 2: the CI is +-127 %: "almost the same" is not decided at n = 2.
    assert cwnd.ci95 == pytest.approx((-127.06, 127.06), abs=0.01)
    with pytest.raises(cl.LedgerError, match="no repetition of 20MB"):
        ev.e3.e3_fct_change(d, "20MB")


def test_judge_takes_the_archive_with_the_largest_n_and_reports_print_their_own_claims(tmp_path):
    """Two E3 archives under a glob: n = 1 and n = 2; the ledger's verdict is the n = 2 one's; a report
    written in the n = 1 archive prints its claims from that archive alone."""
    one = scenario_run(tmp_path / "dynamics" / "a", {("cubic_hs", "100MB", 0): (20.0, 1000),
                                                     ("cubic_suss", "100MB", 0): (20.0, 1000)})
    scenario_run(tmp_path / "dynamics" / "b", {
        ("cubic_hs", "100MB", 0): (20.0, 1000), ("cubic_suss", "100MB", 0): (20.2, 1000),
        ("cubic_hs", "100MB", 1): (20.0, 1000), ("cubic_suss", "100MB", 1): (20.2, 1000)})
    claim = cl.Claim(id="c", where="w", words="w", quantity="q",
                     test=ClaimTest(rule="at_most", bound=2.6, bound_reason="the paper's"),
                     evidence=cl.Evidence(experiment="dynamics", archive="dynamics/*", extract="e3_fct_change",
                                          args={"size": "100MB"}))
    verdict, got = cl.judge(claim, tmp_path)
    assert got.n == 2 and verdict.verdict == "reproduced"    # +1 % both times: a CI of zero width
    verdict, got = cl.judge(claim, tmp_path, archive=one)
    assert got.n == 1 and verdict.verdict == "not decided at n = 1"
    # The SUSS ledger's claims on E3 are found for an archive under results/dynamics/ and no other.
    found = {c.id for c, _, _ in cl.claims_for_archive(tmp_path, one)}
    assert found == {"fig9-same-exit-cwnd", "fig9-half-the-time", "fig9-rtt-unchanged", "fig10-three-times-at-2s",
                     "fig13-100mb-unaffected"}
    assert "### <a id=\"fig13-100mb-unaffected\"></a>fig13-100mb-unaffected: not decided at n = 1" in \
        cl.report_claims_md(tmp_path, one)
    assert cl.claims_for_archive(tmp_path, tmp_path / "startup" / "x") == []
    # A per-setting run of a series is not its report: E4's claims are not read from results/fct-vs-size/<setting>/.
    assert cl.claims_for_archive(tmp_path, tmp_path / "fct-vs-size" / "5g-40ms" / "20261128T000000Z-0000") == []
    assert {c.id for c, _, _ in cl.claims_for_archive(tmp_path, tmp_path / "fct-vs-size" / "reports" / "x")} == {
        "abstract-over-20pct-under-5mb", "fig12-over-20pct-to-2mb", "fig14-much-less-loss", "fig11-suss-beats-bbr",
        "fig11-suss-beats-hystart", "fig12-improvement-falls-with-size", "sec63-losses-converge"}


def test_provenance_names_machines_dates_and_commits(tmp_path):
    import json

    from sslab.analysis.conditions import provenance_of

    for name, started, commit, dirty in (("a", "2026-11-28T10:00:00Z", "abcdef123", False),
                                         ("b", "2026-11-28T11:30:00Z", "abcdef123", False),
                                         ("c", "2026-11-28T12:00:00Z", "0123456789", True)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "meta.json").write_text(json.dumps({
            "started": started, "code": {"commit": commit, "dirty": dirty},
            "host": {"cpu_model": "AMD EPYC", "cores": 2, "amx": False, "xstate_bytes": 832}}))
    p = provenance_of([tmp_path / n for n in "abc"] + [tmp_path / "missing"])
    assert p == {"machine": "AMD EPYC (2 cores, no AMX, XSAVE 832 B)",
                 "dates": "2026-11-28T10:00Z to 2026-11-28T12:00Z", "commits": "0123456+dirty, abcdef1"}
    assert provenance_of([]) == {"machine": "not recorded", "dates": "not recorded", "commits": "not recorded"}


def test_needed_n_is_the_least_n_whose_ci_clears_the_edge_at_the_measured_spread():
    """At n = 10 a CI of ±22.6 (t(9) = 2.262: sd 31.6) around -2.7 against a band of ±10 needs a half-width
    under 7.3: t(n-1) * 31.6 / sqrt(n) < 7.3 first holds at n = 75 (t(74) = 1.993: 7.27; n = 74: 7.32)."""
    same = ClaimTest(rule="within", bound=10, bound_reason="almost the same")
    got = m(-2.7, ci=(-25.3, 19.9))
    assert cl.needed_n(same, got) == 75
    assert "about n = 75 would decide it" in decide(same, got).why
    # On the edge: nothing decides it.
    assert cl.needed_n(ClaimTest(rule="at_least", bound=20, bound_reason="x"), m(20, ci=(10, 30))) == 0
    # A value test: its band's nearest edge.  1 against 1 (band [0.85, 1.15]), CI ±1 at n = 10: sd =
    # 1 * sqrt(10) / 2.2622 = 1.3979; t(k-1) * 1.3979 / sqrt(k) < 0.15 first at k = 337 (t(336) = 1.9671:
    # 0.14981; k = 336: 0.15003).  Decided already: none.
    assert cl.needed_n(ClaimTest(rule="value", paper=1), m(1, ci=(0, 2))) == 337
    assert cl.needed_n(ClaimTest(rule="value", paper=1), m(1, ci=(0.9, 1.1))) is None


def test_a_claim_over_several_points_needs_the_n_of_the_points_that_span_the_bound():
    """"At least 0 at every link and size": each point whose CI spans 0 must clear it.  At n = 10 (t(9) =
    2.2622): B, 1 [-1, 3] (sd 2 sqrt(10) / 2.2622 = 2.7958), clears once t(k-1) 2.7958 / sqrt(k) < 1:
    k = 33 (t(32) = 2.0369: 0.9913; k = 32: 1.0080); C, 0.5 [-0.2, 1.2] (sd 0.9785) once under 0.5:
    k = 18 (t(17) = 2.1098: 0.4866; k = 17: 0.5031); A, 5 [4, 6], is clear already.  Both means on the
    right side: all must clear, 33, where the extreme's own mean and CI (0.5 in the least ends, -1 to 1.2:
    sd 1.5377, under 0.5 first at k = 39, t(38) = 2.0244: 0.4985; k = 38: 0.5055) would say 39.  A point on
    the wrong side, -0.5 [-1.2, 0.2] (18), decides it alone: 18."""
    from sslab.analysis.evidence.base import Point, extreme
    every = ClaimTest(rule="at_least", bound=0, bound_reason="at every point")
    pts = [Point("A", 5, (4, 6), 10), Point("B", 1, (-1, 3), 10), Point("C", 0.5, (-0.2, 1.2), 10)]
    least, ci = extreme(pts)
    assert (least.where, ci) == ("C", (-1, 1.2))
    got = Measured(least.value, 10, ci, "x", points=tuple(pts))
    assert cl.needed_n(every, got) == 33
    assert "about n = 33 would decide it, if every point's mean held" in decide(every, got).why
    assert cl.needed_n(every, Measured(least.value, 10, ci, "x")) == 39      # the extreme's own mean alone
    wrong = (*pts, Point("D", -0.5, (-1.2, 0.2), 10))
    assert cl.needed_n(every, Measured(-0.5, 10, (-1.2, 1.2), "x", points=wrong)) == 18
    # At most: the mirror.
    most = ClaimTest(rule="at_most", bound=0, bound_reason="x")
    mirrored = tuple(Point(p.where, -p.value, (-p.ci95[1], -p.ci95[0]), p.n) for p in pts)
    assert cl.needed_n(most, Measured(-0.5, 10, (-1.2, 1), "x", points=mirrored)) == 33


def test_every_ledger_loads_and_names_real_extractors_and_experiments():
    import inspect

    from sslab.experiment.spec import experiment_files
    targets = {p.stem for p in experiment_files()}
    for path in sorted(cl.LEDGER_DIR.glob("*.yaml")):
        ledger = cl.load_ledger(path.stem)
        for c in ledger.claims:
            if c.evidence:
                assert c.evidence.extract in (None, *cl.EXTRACTORS) and c.evidence.experiment in targets, (path, c.id)
                if c.evidence.extract:
                    # its arguments are the extractor's: a misspelt one would only fail when an archive is read
                    inspect.signature(cl.EXTRACTORS[c.evidence.extract]).bind(Path("a"), **c.evidence.args)
        if ledger.paper_values:
            assert ledger.paper_values.experiment in targets, path
    assert cl.load_ledger("astart").paper_values.count == 19 and cl.load_ledger("blitzstart").paper_values.count == 120


def astart_report(root, settings):
    """An E8 report's summary.json with a record per run (papers.astart.runs) of @settings (scenario
    name -> its runs by case, each repetition's flows)."""
    import json

    records = [{"setting": name.removeprefix("e8-astart-"), "case": case, "rep": i, "flows": run["flows"]}
               for name, s in settings.items() for case, runs in s["runs"].items() for i, run in enumerate(runs)]
    root.mkdir(parents=True)
    (root / "summary.json").write_text(json.dumps({"runs": [], "records": records, "paper_values": [
        {"where": "Table 1, RTT (ms) 20", "what": "%", "kind": "value", "ours": 90.0, "paper": 95.6, "n": 2,
         "ci95": [90.0, 90.0]},
        {"where": "Table 1, RTT (ms) 50", "what": "%", "kind": "value", "ours": 50.0, "paper": 71.8, "n": 2,
         "ci95": None}]}))
    return root


def flows(*mbit, cc="x"):
    return {"flows": [{"cc": cc, "throughput_mbit": x} for x in mbit], "drops": 0}


def test_astart_margin_is_the_least_over_the_settings_per_repetition(tmp_path):
    """Capacities 10, 20, 40 Mbit/s, two repetitions.  Astart - NewReno / Hoe - NewReno: at 20, 5 and 3 (rep 0),
    4 and 6 (rep 1); at 40, 10 and 2, then 1 and 9; so the slower's margin is 3 / 4 at 20 and 2 / 1 at 40:
    the least per repetition 2 and 1.  10 Mbit/s (where NewReno leads) is below min_k."""
    def setting(astart, hoe, newreno):
        return {"runs": {"reno_astart": [flows(a) for a in astart], "reno_hoe": [flows(h) for h in hoe],
                         "reno_fixed": [flows(n) for n in newreno]}}

    d = astart_report(tmp_path / "astart" / "reports" / "latest", {
        "e8-astart-bw-10mbit": setting([5, 5], [5, 5], [9, 9]),
        "e8-astart-bw-20mbit": setting([15, 14], [13, 16], [10, 10]),
        "e8-astart-bw-40mbit": setting([30, 21], [22, 29], [20, 20])})
    got = astart_evidence.astart_least_margin(d, "bw", "reno_astart,reno_hoe", "reno_fixed", min_k="20")
    assert got.n == 2 and got.mean == pytest.approx(1.5) and got.source.endswith("the least per repetition")
    assert "(20, 40)" in got.source
    # The 40 Mbit/s setting is the RTT axis's 100 ms (as the report takes it).
    assert astart_evidence.astart_least_margin(d, "rtt", "reno_astart", "reno_fixed").mean == pytest.approx(5.5)
    with pytest.raises(cl.LedgerError, match="no run of vegas"):
        astart_evidence.astart_least_margin(d, "bw", "reno_astart", "vegas")


def test_paper_values_become_claims_judged_by_the_value_test(tmp_path):
    d = astart_report(tmp_path / "astart" / "reports" / "latest", {})
    pv = cl.PaperValues(experiment="astart", archive="astart/reports/latest", where="Tables 1-3", count=3)
    rows = cl.paper_value_claims(pv, tmp_path)
    # 90 against 95.6: within 15 %; 50 against 71.8: 30 % under; the third value has no run of ours.
    assert [(c.id, v.verdict) for c, v, _ in rows] == [
        ("table-1-rtt-ms-20", "reproduced"), ("table-1-rtt-ms-50", "not reproduced"),
        ("astart-values-not-run", cl.NO_EVIDENCE)]
    assert "1 of the paper's 3 values" in rows[2][1].why
    assert cl.paper_value_claims(pv, tmp_path / "none")[0][1].verdict == cl.NO_EVIDENCE
    page = cl.ledger_page(cl.Ledger(source="Astart", paper_values=pv), tmp_path)
    assert "**1 reproduced; 1 not reproduced; 1 no evidence yet** of 3 claims." in page
    assert "Not reproduced with no cause found or tried yet: 1 (table-1-rtt-ms-50)." in page
    # A cause for values by their ids (a pattern): it goes with the value not reproduced, and the
    # ledger no longer counts it as one without.
    why = cl.ValueCause(ids=["table-1-*"], cause="the simulator's NewReno")
    tried = cl.ValueCause(ids=["table-1-rtt-ms-50", "table-2-*"], tried=["fq: ruled out"])
    pv = pv.model_copy(update={"causes": [why, tried]})
    rows = cl.paper_value_claims(pv, tmp_path)
    assert (rows[1][0].cause, rows[1][0].tried) == ("the simulator's NewReno", ["fq: ruled out"])
    assert rows[0][0].cause == "the simulator's NewReno" and rows[0][0].tried == []
    page = cl.ledger_page(cl.Ledger(source="Astart", paper_values=pv), tmp_path)
    assert "Not reproduced with no cause" not in page and "- **Tried and ruled out**: fq: ruled out" in page
    with pytest.raises(ValueError, match="a cause or the causes tried"):
        cl.ValueCause(ids=["x"])


def test_a_cause_run_is_not_a_claims_evidence(tmp_path):
    """Two made-up E4 reports over one run each: the later has more repetitions (n = 20 against 10) but
    ran with the senders' qdisc fq (a knob set on the command line, recorded in its run's meta.json).
    The claim is judged on the other; a report judging its own archive still reads it."""
    import json

    def report(name, n, imp, qdisc):
        from sslab.scenario import parse_scenario
        from sslab.scenario.load import scenario_file_data

        run = tmp_path / "fct-vs-size" / "wired-150ms" / name
        run.mkdir(parents=True)
        data = scenario_file_data(REPO_ROOT / "tests" / "data" / "e1-smoke.yaml")
        data["topology"] = {**data.get("topology", {}), "sender_qdisc": qdisc}
        (run / "plan.json").write_text(json.dumps({"format": "sslab.plan/3", **plan_data(parse_scenario(data))}))
        (run / "meta.json").write_text(json.dumps({"substrate": "uml"}))
        d = tmp_path / "fct-vs-size" / "reports" / name
        d.mkdir(parents=True)
        (d / "summary.json").write_text(json.dumps({"runs": [str(run)], "improvements": [
            {"link": "wired", "rtt_ms": 150.0, "size": 1_000_000, "on": "cubic_suss 2024", "n": [n, n],
             "improvement": imp, "improvement_ci": [imp - 0.01, imp + 0.01]}]}))
        return run, d

    own_run, _ = report("20261128T100000Z-aaaa", 10, 0.25, "none")
    fq, fq_report = report("20261128T110000Z-bbbb", 20, 0.05, "fq")
    from sslab.analysis.conditions import departures
    assert departures([own_run]) == [] and departures([own_run, fq]) == ["sender_qdisc fq (1 run(s))"]
    claim = cl.Claim(id="x", where="Fig. 12", words="over 20 %", quantity="least improvement",
                     test=ClaimTest(rule="at_least", bound=20, bound_reason="the paper's"),
                     evidence=cl.Evidence(experiment="fct-vs-size", archive="fct-vs-size/reports/2*",
                                          extract="e4_least_improvement", args={"links": "wired", "max_mb": "5"}))
    verdict, measured = cl.judge(claim, results=tmp_path)
    assert measured.n == 10 and measured.mean == pytest.approx(25) and verdict.verdict == "reproduced"
    verdict, measured = cl.judge(claim, results=tmp_path, archive=fq_report)
    assert measured.n == 20 and verdict.verdict == "not reproduced"
    # An experiment whose own file sets the qdisc (as Table 1's sets its socket buffers) has fq as its
    # own: that archive is then its evidence, and the larger n decides.
    own = {"fct-vs-size": {"sender_qdisc": {"fq"}}}
    assert departures([fq], own["fct-vs-size"]) == [] and departures([own_run], own["fct-vs-size"]) == \
        ["sender_qdisc none (1 run(s))"]
    verdict, measured = cl.judge(claim, results=tmp_path, own=own)
    assert measured.n == 20 and verdict.verdict == "not reproduced"   # fq's is the experiment's own now
    assert cl.judge(claim, results=tmp_path, own={"fct-vs-size": {"sender_qdisc": {"none"}}})[0].verdict == "reproduced"
    # Another experiment's own settings do not apply to this one's archives.
    assert cl.judge(claim, results=tmp_path, own={"reproduce-table1": {"sender_qdisc": {"fq"}}})[1].n == 10


def test_each_experiments_own_settings_are_its_files():
    """What a run of an experiment as its file has it ran under: Table 1's file sets the socket buffers
    (linux-senders: Linux's on the servers), E1's leaves the testbed's (raised); nothing else differs."""
    from sslab.analysis.conditions import OWN_SETTINGS
    from sslab.matrix.experiments import own_settings_of
    table1, e1 = own_settings_of("reproduce-table1"), own_settings_of("startup")
    assert table1 == {**{k: {v} for k, v in OWN_SETTINGS.items()}, "socket_buffers": {"linux-senders"}}
    assert e1 == {k: {v} for k, v in OWN_SETTINGS.items()}


def test_astart_buffer_ratio_per_repetition(tmp_path):
    """Made-up E8 settings: Astart at BDP/5 carries 27 and 30 Mbit/s in two repetitions, at BDP/2 36 and
    36: ratios 0.75 and 0.8333, mean 0.7917 (Fig. 10's "robust" is at least 0.8: not decided at n = 2,
    the CI spanning it)."""
    def setting(*mbit):
        return {"runs": {"reno_astart": [{"flows": [{"throughput_mbit": x}]} for x in mbit]}}

    d = astart_report(tmp_path / "astart" / "reports" / "x", {
        "e8-astart-buf-0.2bdp": setting(27, 30), "e8-astart-buf-0.5bdp": setting(36, 36)})
    r = astart_evidence.astart_buffer_ratio(d, "reno_astart", "0.2", "0.5")
    assert r.n == 2 and r.mean == pytest.approx((0.75 + 30 / 36) / 2)
    robust = ClaimTest(rule="at_least", bound=0.8, bound_reason="robust")
    assert decide(robust, r).verdict == "not decided at n = 2"
    with pytest.raises(cl.LedgerError, match="no E8 setting at a buffer of 0.3 BDP"):
        astart_evidence.astart_buffer_ratio(d, "reno_astart", "0.3", "0.5")


def test_a_ledgers_verdicts_as_data_and_the_command_writes_them_beside_its_page(tmp_path):
    """ledger.json: the counts the page's first line has, and per claim the test, our number, the outcome
    and, not decided, the n that would decide it; `sslab claims` writes it for every ledger."""
    import json
    import os
    import subprocess
    import sys

    ev_ = cl.Evidence(experiment="fct-vs-size", archive="x/*", extract="e4_loss_ratio")
    at_least = ClaimTest(rule="at_least", bound=0, bound_reason="b")
    claims = [cl.Claim(id="held", where="w", words="w", quantity="q", test=at_least, evidence=ev_),
              cl.Claim(id="open", where="w", words="w", quantity="q", test=at_least, evidence=ev_),
              cl.Claim(id="far", where="w", words="w", quantity="q", untestable="a real Internet path")]
    ledger = cl.Ledger(source="S", claims=claims)
    # Hand-worked: 1 [-1, 3] at n = 10 against 0 needs n = 33 (test above); 5 [4, 6] clears it.
    rows = [(claims[0], decide(at_least, m(5, ci=(4, 6))), m(5, ci=(4, 6))),
            (claims[1], decide(at_least, m(1, ci=(-1, 3))), m(1, ci=(-1, 3))),
            (claims[2], cl.Verdict(cl.NOT_TESTABLE, "a real Internet path"), None)]
    record = json.loads(json.dumps(cl.ledger_record(ledger, rows)))
    assert record["counts"] == cl.ledger_counts(rows) == {"reproduced": 1, "not decided": 1, "not testable here": 1}
    held, open_, far = record["claims"]
    assert (held["outcome"], held["ours"]["ci95"], held["needed_n"]) == ("reproduced", [4, 6], None)
    assert (open_["outcome"], open_["verdict"], open_["needed_n"]) == ("not decided", "not decided at n = 10", 33)
    assert (far["outcome"], far["ours"], far["untestable"]) == ("not testable here", None, "a real Internet path")
    # The command: every ledger's page and its data, from an empty results directory (no evidence yet).
    env = {**os.environ, "SSLAB_RESULTS": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "sslab", "claims", "suss"], capture_output=True, text=True, env=env,
                         cwd=REPO_ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    data = json.loads((tmp_path / "claims" / "suss" / "ledger.json").read_text())
    assert data["format"] == "sslab.summary/1" and len(data["claims"]) == len(cl.load_ledger("suss").claims)
    assert set(data["counts"]) <= set(cl.OUTCOMES) and sum(data["counts"].values()) == len(data["claims"])
    assert {p.name for p in (tmp_path / "claims").iterdir()} == {p.stem for p in cl.LEDGER_DIR.glob("*.yaml")}


def test_a_reports_answer_counts_its_claims_by_their_ledger_tests(tmp_path):
    """The line a Table 1 report opens with after its value counts: the claims its cells test, by their
    ledgers' tests; none for cells of another start in the compared place (`_start-`), whose claims the
    ledgers do not make."""
    at_least = ClaimTest(rule="at_least", bound=0, bound_reason="b")
    ev_ = cl.Evidence(experiment="reproduce-table1", archive="table1/*", extract="table1_average_improvement")
    a, b = (cl.Claim(id=i, where="w", words="w", quantity="q", test=at_least, evidence=ev_) for i in ("a", "b"))
    rows = [(a, decide(at_least, m(5, ci=(4, 6))), None), (b, decide(at_least, m(1, ci=(-1, 3))), None),
            (b, cl.Verdict(cl.NO_EVIDENCE, "other settings", elsewhere=True), None)]
    assert cl.claims_answer_line(rows) == ("**The paper's claims these runs test**, each by its ledger's test on "
                                           "these runs alone: 1 reproduced, 1 not decided of 2 (a reproduced; "
                                           "b not decided at n = 10).")
    assert cl.claims_answer_line([]) == "" and "not read (ValueError: x)" in cl.claims_answer_line(ValueError("x"))
    other = tmp_path / "table1" / "cca-cubic_start-cubic_rapid"
    other.mkdir(parents=True)
    assert cl.claims_for_archive(tmp_path, other) == []
