"""The claims ledger's extractors for the SUSS paper's figures and Table 1's per-setting test, on
made-up archives whose numbers are worked by hand in each test's docstring."""

import gzip
import json

import pytest

from sslab.analysis import claims as cl
from sslab.papers.suss import evidence as ev
from sslab.analysis.claims import ClaimTest, decide
from sslab.plan_record import MatrixPlan, write_matrix_plan

from .test_matrix_report import make_cell

AT_MOST_2_6 = ClaimTest(rule="at_most", bound=2.6, bound_reason="the paper's largest, 1 BDP 25 ms")


def column(tmp_path, changes):
    """A Table 1 archive of the CUBIC column on a 1 x 2 grid (1BDP; 25 and 50 ms): @changes maps the
    minRTT to the large flow's change with SUSS in percent, one per repetition (its FCT 30 s off)."""
    d = tmp_path / "table1" / "all"
    cells = []
    for rtt, pcts in changes.items():
        s = {"large_cc": "cubic", "buffer": "1BDP", "large_rtt": rtt}
        for rep, pct in enumerate(pcts):
            cells.append(make_cell(d, f"{rtt}-{rep}", s, rep, {"off": (30.0, [2.0]), "on": (30.0 * (1 + pct / 100), [1.5])}))
    plan = MatrixPlan.model_validate({
        "matrix": "table1", "title": "E7", "report": "table1", "selection": {}, "iterations": 3,
        "image_hash": "i" * 64, "code_version": "c" * 64, "compare": {"param": "small", "off": "cubic_hs", "on": "cubic_suss"},
        "axis_values": {"large_cc": ["cubic"], "buffer": ["1BDP"], "large_rtt": list(changes)}, "cells": cells})
    (d / "plans").mkdir(parents=True)
    write_matrix_plan(plan, d / "plans" / "plan-20260101T000000Z-0000.json")
    return d


def test_the_large_flows_bound_holds_of_each_setting_not_of_the_mean(tmp_path):
    """25 ms: +5, +6, +7 % (mean 6, sd 1, t(2) = 4.303: half-width 4.303 / sqrt 3 = 2.484, CI [3.516,
    8.484]); 50 ms: -5, -6, -7 % (CI [-8.484, -3.516]).  The column's mean is 0 in every repetition, so
    the mean's test passes; the slowest setting's CI lies wholly above 2.6: not reproduced."""
    d = column(tmp_path, {"25ms": [5, 6, 7], "50ms": [-5, -6, -7]})
    mean = ev.table1.table1_large_slowdown(d, "cubic")
    assert mean.mean == pytest.approx(0, abs=1e-9) and decide(AT_MOST_2_6, mean).verdict == "reproduced"
    worst = ev.table1.table1_large_worst_setting(d, "cubic")
    assert worst.mean == pytest.approx(6) and worst.n == 3
    assert worst.ci95 == pytest.approx((3.516, 8.484), abs=1e-3)
    assert "1BDP 25ms" in worst.source
    assert decide(AT_MOST_2_6, worst).verdict == "not reproduced"


def test_the_per_setting_bound_passes_only_when_every_settings_ci_is_under_it(tmp_path):
    """25 ms: +1, +1.5, +2 % (CI 1.5 +- 4.303 * 0.5 / sqrt 3 = [0.258, 2.742]); 50 ms: 0, 0.5, 1 % (CI
    [-0.742, 1.742]).  The largest CI runs [0.258, 2.742]: across 2.6, not decided; with 25 ms at +1,
    +1.2, +1.4 (CI [0.703, 1.697]) every setting's CI is under 2.6: reproduced."""
    d = column(tmp_path / "a", {"25ms": [1, 1.5, 2], "50ms": [0, 0.5, 1]})
    worst = ev.table1.table1_large_worst_setting(d, "cubic")
    assert worst.ci95 == pytest.approx((0.258, 2.742), abs=1e-3)
    assert decide(AT_MOST_2_6, worst).verdict == "not decided at n = 3"
    d = column(tmp_path / "b", {"25ms": [1, 1.2, 1.4], "50ms": [0, 0.5, 1]})
    assert decide(AT_MOST_2_6, ev.table1.table1_large_worst_setting(d, "cubic")).verdict == "reproduced"
    with pytest.raises(cl.NotThisArchive):
        ev.table1.table1_large_worst_setting(d, "cubic,bbr")        # a column the archive does not hold


def trace_text(rows, port=5201):
    """ftrace's text of tcp_probe records: (time s, cwnd, bytes acked so far, srtt ms) a row."""
    lines = []
    for t, cwnd, acked, srtt_ms in rows:
        una = 1000 + acked
        lines.append(f"iperf-1 [000] ..s1. {100 + t:.6f}: tcp_probe: family=AF_INET src=10.0.1.2:{port} "
                     f"dest=10.0.2.2:40000 mark=0x0 data_len=0 snd_nxt={una + 14480:#x} snd_una={una:#x} "
                     f"snd_cwnd={cwnd} ssthresh=2147483647 snd_wnd=10000000 srtt={int(srtt_ms * 1000)} rcv_wnd=65535")
    return "\n".join(lines) + "\n"


def e3_run(root, arms):
    """A made-up E3 run directory of the 100 MB case: @arms maps (cc, rep) to (exit cwnd, exit time s,
    trace rows)."""
    out = root / "job" / "out"
    index = []
    for i, ((cc, rep), (exit_cwnd, exit_s, rows)) in enumerate(sorted(arms.items())):
        tag = f"{i:03d}-{cc}-100MB-r{rep}"
        (out / "runs" / tag).mkdir(parents=True)
        with gzip.open(out / "runs" / tag / "flow.trace.gz", "wt") as f:
            f.write(trace_text(rows))
        (out / "runs" / tag / "run.json").write_text(json.dumps({
            "run": {"case": f"{cc}-100MB", "rep": rep, "params": {"cc": cc, "size": "100MB"}}, "trace": "flow.trace.gz",
            "flows": [{"port": 5201, "fct_s": 20.0,
                       "slow_start": {"exit_cwnd": exit_cwnd, "exit_time_s": exit_s}}]}))
        index.append({"tag": tag})
    (out / "runs.json").write_text(json.dumps(index))
    return root


#: HyStart: cwnd 10, 100, 500, 1000 at 0-3 s after its first ACK (the handshake's RTT 200 ms before
#: it), 0, 1, 2.5, 5 MB acknowledged, srtt 200, 210, 220, 260 ms; slow start ends at 1000, 3 s in.
OFF = (1000, 3.0, [(0, 10, 0, 200), (1, 100, 1_000_000, 210), (2, 500, 2_500_000, 220), (3, 1000, 5_000_000, 260)])
#: SUSS: cwnd 10, 400, 900, 1200; 0, 3, 6, 9 MB; srtt 200, 230, 250, 400 ms; slow start ends at 900, 2 s in.
ON = (900, 2.0, [(0, 10, 0, 200), (1, 400, 3_000_000, 230), (2, 900, 6_000_000, 250), (3, 1200, 9_000_000, 400)])


def test_fig9_and_fig10_on_e3_read_the_traces_paired_by_repetition(tmp_path):
    """The smaller exit cwnd is 900: SUSS reaches it at 2 s after its first ACK, HyStart at 3 s (its
    cwnd 1000); from establishment (+0.2 s) 2.2 / 3.2 = 0.6875.  The largest srtt up to each arm's exit:
    250 ms (SUSS: its 400 ms comes after) against 260: 250 / 260 - 1 = -3.846 %.  Delivered 2 s after
    establishment (first-ACK times 0.2, 1.2, 2.2, ...): 3 MB against 1 MB, 3.0.  Two repetitions alike:
    a CI of zero width."""
    d = e3_run(tmp_path / "dynamics" / "x", {("cubic_hs", 0): OFF, ("cubic_suss", 0): ON,
                                             ("cubic_hs", 1): OFF, ("cubic_suss", 1): ON})
    t = ev.e3.e3_time_to_cwnd_ratio(d, "100MB")
    assert t.n == 2 and t.mean == pytest.approx(2.2 / 3.2)
    half = ClaimTest(rule="value", paper=0.5, kind="value", rounding=0.05)    # band [0.375, 0.625]
    assert decide(half, t).verdict == "not reproduced"
    rtt = ev.e3.e3_slow_start_rtt_change(d, "100MB")
    assert rtt.mean == pytest.approx((250 / 260 - 1) * 100)
    assert decide(ClaimTest(rule="within", bound=10, bound_reason="almost"), rtt).verdict == "reproduced"
    got = ev.e3.e3_delivered_ratio(d, "100MB", "2")
    assert got.mean == pytest.approx(3.0) and "1.00 MB" in got.source
    assert decide(ClaimTest(rule="value", paper=3, kind="value", rounding=0.5), got).verdict == "reproduced"
    # At 1 s nothing but the first ACK's 0 MB has come back without SUSS: no ratio to take.
    with pytest.raises(cl.LedgerError, match="delivered anything by 1 s"):
        ev.e3.e3_delivered_ratio(d, "100MB", "1")


def test_a_claim_judged_on_our_model_says_so_in_its_verdict(tmp_path):
    d = e3_run(tmp_path / "dynamics" / "x", {("cubic_hs", 0): OFF, ("cubic_suss", 0): ON,
                                             ("cubic_hs", 1): OFF, ("cubic_suss", 1): ON})
    claim = cl.Claim(id="c", where="w", words="w", quantity="q", judged_on="our LTE model",
                     test=ClaimTest(rule="value", paper=3, kind="value", rounding=0.5),
                     evidence=cl.Evidence(experiment="dynamics", archive="dynamics/*", extract="e3_delivered_ratio",
                                          args={"size": "100MB"}))
    v, _ = cl.judge(claim, tmp_path)
    assert v.verdict == "reproduced" and v.why.startswith("on our LTE model: ")
    page = cl.ledger_page(cl.Ledger(source="x", claims=[claim]), tmp_path)
    assert "| **reproduced**, on our model |" in page and "reproduced: on our LTE model: ours 3" in page


def e4_summary(tmp_path, sizes=(), improvements=()):
    d = tmp_path / "fct-vs-size" / "reports" / "x"
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"runs": [], "sizes": list(sizes), "improvements": list(improvements)}))
    return d


def described(mean, half, n=4):
    return {"n": n, "mean": mean, "ci95": [mean - half, mean + half]}


def test_suss_against_bbr_is_the_least_gain_over_every_link_and_size(tmp_path):
    """n = 4, t(3) = 3.182; every half-width 0.3182 s, a standard error of 0.1 s.  Wired 1 MB: BBR 2.0 s,
    SUSS 1.5: gain 0.5 +- 3.182 * sqrt(0.02) = 0.45, of BBR's 2.0: 25 % [2.5, 47.5].  Wi-Fi 1 MB: BBR 1.0,
    SUSS 1.1: -10 % [-55, 35].  The least: -10, its CI [-55, 35]: at least 0 is not decided.  40 ms and
    20 MB are outside the claim."""
    def row(link, cc, size, fct, rtt=150.0):
        return {"link": link, "rtt_ms": rtt, "cc": cc, "size": size, "n": 4, "fct": described(fct, 0.3182)}

    d = e4_summary(tmp_path, sizes=[
        row("wired", "bbr", 1_000_000, 2.0), row("wired", "cubic_suss 2024", 1_000_000, 1.5),
        row("wifi", "bbr", 1_000_000, 1.0), row("wifi", "cubic_suss 2024", 1_000_000, 1.1),
        row("wifi", "bbr", 1_000_000, 9.0, rtt=40.0), row("wifi", "cubic_suss 2024", 1_000_000, 1.0, rtt=40.0),
        row("wired", "bbr", 20_000_000, 1.0), row("wired", "cubic_suss 2024", 20_000_000, 9.0)])
    g = ev.e4.e4_least_gain_over(d, "wired,wifi", "bbr", "12", "100")
    assert g.mean == pytest.approx(-10) and g.n == 4
    assert g.ci95 == pytest.approx((-55, 35), abs=0.01)
    assert decide(ClaimTest(rule="at_least", bound=0, bound_reason="outperforms"), g).verdict == "not decided at n = 4"
    only_wired = ev.e4.e4_least_gain_over(d, "wired", "bbr", "12", "100")
    assert only_wired.ci95 == pytest.approx((2.5, 47.5), abs=0.01)
    with pytest.raises(cl.LedgerError, match="on lte"):
        ev.e4.e4_least_gain_over(d, "wired,lte", "bbr", "12", "100")


def test_the_improvements_fall_with_size_on_every_link_or_the_claim_is_not_shown(tmp_path):
    """n = 4; each improvement's half-width 5 points, a standard error of 5 / 3.182.  Wired: 25 % at 2 MB,
    5 % at 12 MB: -20 +- 3.182 * sqrt(2) * 5 / 3.182 = 7.071, [-27.07, -12.93].  Wi-Fi: 20 % at 2 MB, 22 %
    at 8 MB (its largest up to 12): +2 [-5.07, 9.07].  The largest change: +2 with the CI [-5.07, 9.07]:
    at most 0 is not decided; wired alone is reproduced."""
    def imp(link, size, pct, rtt=150.0):
        return {"link": link, "rtt_ms": rtt, "size": size, "on": "cubic_suss 2024", "n": [4, 4],
                "improvement": pct / 100, "improvement_ci": [(pct - 5) / 100, (pct + 5) / 100]}

    d = e4_summary(tmp_path, improvements=[
        imp("wired", 2_000_000, 25), imp("wired", 12_000_000, 5), imp("wired", 40_000_000, 90),
        imp("wifi", 2_000_000, 20), imp("wifi", 8_000_000, 22), imp("wifi", 8_000_000, 60, rtt=40.0)])
    fall = ev.e4.e4_improvement_fall(d, "wired,wifi", "2", "12", "100")
    assert fall.mean == pytest.approx(2) and fall.ci95 == pytest.approx((-5.071, 9.071), abs=1e-3)
    falls = ClaimTest(rule="at_most", bound=0, bound_reason="diminishes")
    assert decide(falls, fall).verdict == "not decided at n = 4"
    wired = ev.e4.e4_improvement_fall(d, "wired", "2", "12", "100")
    assert wired.ci95 == pytest.approx((-27.071, -12.929), abs=1e-3)
    assert decide(falls, wired).verdict == "reproduced"


def test_the_loss_rates_converge_when_their_gap_narrows_from_the_smallest_size_to_the_largest(tmp_path):
    """Loss rates (fractions; n = 4): without SUSS 2 % +- 0.5 points at 2 MB and 1.2 % +- 0.2 at 40 MB,
    with SUSS 1 % +- 0.5 and 1.1 % +- 0.2: gaps 1.0 and 0.1 points, a change of -0.9 +- sqrt(0.25 + 0.25 +
    0.04 + 0.04) = 0.7616 (each half-width over t(3) is its standard error; t(3) again): [-1.662, -0.138],
    at most 0: reproduced.  The 4 MB row in between takes no part."""
    def row(cc, size, rate, half):
        return {"link": "5g", "rtt_ms": 40.0, "cc": cc, "size": size, "n": 4, "loss_rate": described(rate, half)}

    d = e4_summary(tmp_path, sizes=[
        row("cubic_hs", 2_000_000, 0.02, 0.005), row("cubic_suss 2024", 2_000_000, 0.01, 0.005),
        row("cubic_hs", 4_000_000, 0.5, 0.005), row("cubic_suss 2024", 4_000_000, 0.0, 0.005),
        row("cubic_hs", 40_000_000, 0.012, 0.002), row("cubic_suss 2024", 40_000_000, 0.011, 0.002)])
    c = ev.e4.e4_loss_gap_change(d, "5g", "40", "2", "40")
    assert c.mean == pytest.approx(-0.9) and c.ci95 == pytest.approx((-1.6616, -0.1384), abs=1e-3)
    assert decide(ClaimTest(rule="at_most", bound=0, bound_reason="converge"), c).verdict == "reproduced"
    with pytest.raises(cl.LedgerError, match="fewer than two sizes"):
        ev.e4.e4_loss_gap_change(d, "5g", "40", "30", "40")


def test_a_ledgers_counts_line_names_each_outcome_once_in_order():
    """Five claims: two reproduced, one not decided at n = 3 and one at n = 5 (one outcome), one without
    evidence; the outcomes none has are left out."""
    ledger = cl.Ledger(source="P", claims=[cl.Claim(id="u", where="w", words="w", quantity="q", untestable="why")])
    rows = [(None, cl.Verdict(v, ""), None) for v in
            ("reproduced", "not decided at n = 3", "reproduced", "no evidence yet", "not decided at n = 5")]
    assert cl.ledger_counts(rows) == {"reproduced": 2, "not decided": 2, "no evidence yet": 1}
    assert cl.counts_line(ledger, rows) == "P: 2 reproduced; 2 not decided; 1 no evidence yet of 5 claims"


def test_a_claim_not_reproduced_says_its_cause_what_was_tried_or_that_nothing_was():
    """Three claims not reproduced: one with a cause, one with two causes tried, one with neither; the
    ledger's head and its counts line name only the last."""
    def claim(cid, **why):
        return cl.Claim(id=cid, where="w", words="w", quantity="q", untestable="x", **why)

    with_cause, tried, bare = (claim("a", cause="the qdisc"), claim("b", tried=["fq: ruled out", "1 GbE: ruled out"]),
                               claim("c"))
    rows = [(c, cl.Verdict("not reproduced", "far"), None) for c in (with_cause, tried, bare)]
    assert cl.uncaused(rows) == ["c"]
    ledger = cl.Ledger(source="P", claims=[with_cause])
    assert cl.counts_line(ledger, rows).endswith("of 3 claims (1 not reproduced with no cause tried yet)")
    page = cl.ledger_page(ledger, rows=rows)
    assert "Not reproduced with no cause found or tried yet: 1 (c)." in page
    assert "- **Tried and ruled out**: 1 GbE: ruled out" in page and "- **Why, as far as we found**: the qdisc" in page
    assert page.count("- **Why**: no cause tested yet") == 1
