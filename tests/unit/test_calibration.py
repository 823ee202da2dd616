"""Table 1's calibration (sslab.papers.suss.calibration) on a synthetic archive: each candidate's distance from
the paper's SUSS-off values, the rule's choice, and the calibration matrix file's candidates."""

import json
import math

import pytest

from sslab.analysis import matrix_report as mr
from sslab.papers.suss.calibration import UNSTATED, Fit, calibration, choose, full_terms
from sslab.matrix.spec import load_matrix, settings
from sslab.plan_record import MatrixPlan, write_matrix_plan

from .test_matrix_report import make_cell

#: The paper's SUSS-off values at CUBIC 1 BDP: 25 ms 30.4 / 1.33, 50 ms 37.9 / 1.18.
PAPER = {"25ms": (30.4, 1.33), "50ms": (37.9, 1.18)}


def candidate(d, tag, size, rtts, factor, large_bytes=None):
    """A candidate's two cells, every SUSS-off FCT the paper's times @factor (SUSS on the same)."""
    cells = []
    for rtt, (large, small) in PAPER.items():
        s = {"large_cc": "cubic", "buffer": "1BDP", "large_rtt": rtt, "large_size": size, "small_rtts": rtts}
        side = (large * factor, [small * factor] * 2)
        cell = make_cell(d, f"{tag}{rtt}", s, 0, {"off": side, "on": side})
        if large_bytes:  # the cell's plan, from which the paper's bounds are read
            (d / "cells" / cell.key / "plan.json").write_text(json.dumps({
                "bottleneck": {"rate_mbit": 50.0}, "topology": {"mtu": 1500},
                "pairs": [{"rtt_ms": 25.0}] + [{"rtt_ms": 100.0}] * 2,
                "runs": [{"flows": [{"pair": 1, "size": large_bytes, "start": 0.0},
                                    {"pair": 2, "size": 2_000_000, "start": 2.0},
                                    {"pair": 3, "size": 2_000_000, "start": 4.0}]}]}))
        cells.append(cell)
    return cells


@pytest.fixture(autouse=True)
def two_setting_fit(monkeypatch):
    """These archives hold two settings of the fit's grid (CUBIC 1 BDP at 25 and 50 ms): their full fit
    is those 4 terms, not the 20 of the whole grid (test_table1s_fit_has_twenty_terms)."""
    monkeypatch.setattr("sslab.papers.suss.calibration.full_terms", lambda ref: 4)


def calibration_plan(tmp_path, ruled_out_c=False):
    d = tmp_path / "table1-calibrate" / "all"
    cells = (candidate(d, "a", "140MB", "four", 1.10) + candidate(d, "b", "140MB", "spread", 1.05)
             + candidate(d, "c", "125MB", "as-large", 1.052, 150_000_000 if ruled_out_c else 125_000_000))
    plan = MatrixPlan.model_validate({
        "matrix": "table1-calibrate", "reference": "table1", "title": "E7 calibration", "report": "table1",
        "selection": {}, "iterations": 1, "image_hash": "i" * 64, "code_version": "c" * 64,
        "labels": {"cubic": "CUBIC"}, "compare": {"param": "small", "off": "cubic_hs", "on": "cubic_suss"},
        "axis_values": {"large_cc": ["cubic"], "buffer": ["1BDP", "2BDP"], "large_rtt": ["25ms", "50ms", "100ms", "200ms"],
                        "large_size": ["140MB", "125MB"], "small_rtts": ["spread", "four", "as-large"]},
        "cells": cells})
    (d / "plans").mkdir(parents=True)
    write_matrix_plan(plan, d / "plans" / "plan-20260101T000000Z-0000.json")
    return d, plan


def test_each_candidates_distance_and_the_rules_choice(tmp_path):
    d, plan = calibration_plan(tmp_path)
    lines, chosen, summary = calibration(d, plan)
    fits = {tuple(f["candidate"].values()): f for f in summary["fits"]}
    # Four terms each (two settings, large and small flows): every ratio the candidate's factor.
    assert fits["140MB", "four"]["distance"] == pytest.approx(math.log(1.10))
    assert fits["140MB", "spread"]["distance"] == pytest.approx(math.log(1.05))
    assert len(fits["140MB", "spread"]["terms"]) == 4
    # spread is the nearest (0.0488), but it states a choice the paper does not (13 pairs); as-large,
    # 0.0507, is within 10 % of it (0.0537) and states none: the rule takes as-large.  four (0.0953) is not near.
    assert summary["chosen"] == {"large_size": "125MB", "small_rtts": "as-large"}
    assert [c.key for c in chosen.cells] == ["c25ms", "c50ms"]
    # The prediction: SUSS on equals SUSS off here, 1.052 x the paper's off values against its on values:
    # the large flow's 31.98 (31.2) and 39.87 s (35.6) within 15 %; the small flows' 1.40 (0.94) and
    # 1.24 s (0.98) and both improvements (0 against 29 and 17 %) missed.
    assert "| large_size=125MB, small_rtts=as-large **(chosen)** | 0.051 | 4 of 4 | no | 0 | 2 of 6 |" in lines
    assert "| large_size=140MB, small_rtts=four | 0.095 | 4 of 4 | no | 0 | 1 of 6 |" in lines  # 41.69 s: +17 %


def test_a_candidate_the_papers_numbers_rule_out_is_never_chosen(tmp_path):
    d, plan = calibration_plan(tmp_path, ruled_out_c=True)
    _, _, summary = calibration(d, plan)
    fits = {tuple(f["candidate"].values()): f for f in summary["fits"]}
    assert fits["125MB", "as-large"]["ruled_out"] == ["large flow size at the bottleneck rate"]
    assert summary["chosen"] == {"large_size": "140MB", "small_rtts": "spread"}


def test_the_report_of_a_calibration_matrix_is_the_chosen_candidates_table1(tmp_path):
    d, _ = calibration_plan(tmp_path)
    text = (mr.write_matrix_report(d) / "table.md").read_text()
    assert "## Calibration: each candidate against the paper's SUSS-off values" in text
    assert "Chosen by the rule: **large_size=125MB, small_rtts=as-large** (distance 0.051); the Table 1 below" in text
    # The verdict and table are the chosen candidate's: its two settings, each n = 1.
    assert text.count("| CUBIC | 1BDP | 25ms | 1 |") == 1 and "31.98 / 1.40" not in text


def test_no_choice_without_every_term():
    assert choose([Fit({"a": "x"}, [])], 1) is None
    assert choose([Fit({"a": "x"}, [("t", 2.0, 1.0)], ruled_out=["size"])], 1) is None
    # A distance over part of the grid chooses nothing: two terms of three.
    assert choose([Fit({"a": "x"}, [("t", 2.0, 1.0)] * 2)], 3) is None
    assert choose([Fit({"a": "x"}, [("t", 2.0, 1.0)] * 3)], 3) is not None


def test_table1s_fit_has_twenty_terms():
    import yaml
    from sslab.papers.suss import calibration as cal
    from sslab.paths import REPO_ROOT
    ref = yaml.safe_load((REPO_ROOT / "results/reference/table1.yaml").read_text())
    # CUBIC and BBRv1: four 1 BDP rows x (large, small) + the implied 2 BDP means (large, small).
    assert full_terms is not cal.full_terms  # the fixture's stand-in; the module's own is imported above
    assert full_terms(ref) == 2 * (4 * 2 + 2) == 20


def test_a_partial_fit_chooses_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr("sslab.papers.suss.calibration.full_terms", lambda ref: 20)
    d, plan = calibration_plan(tmp_path)
    lines, shown, summary = calibration(d, plan)
    assert summary["chosen"] is None
    assert "| large_size=140MB, small_rtts=spread | 0.049 | 4 of 20 | no | 1 | 2 of 6 |" in lines
    # The table shown is the nearest candidate's, said to be provisional; never the candidates pooled.
    assert summary["shown"] == {"large_size": "140MB", "small_rtts": "spread"}
    assert [c.key for c in shown.cells] == ["b25ms", "b50ms"]
    assert any(ln.startswith("No candidate is chosen: none that the paper's numbers allow has all 20 terms yet")
               and "**large_size=140MB, small_rtts=spread**, over 4 of 20 terms: provisional" in ln for ln in lines)


def test_the_calibration_files_candidates():
    m = load_matrix("table1-calibrate")
    assert m.spec.reference == "table1"
    # Stage 5 by default: stage 4's choice (125 MB, four, one netem, five pairs, Linux's buffers on the
    # servers), the offloads off or with the routers' GRO merging at most 4, 8 or 16 segments.
    stage5 = settings(m.spec, {})
    assert len(stage5) == 2 * 2 * 4 * 4
    assert {(s["large_size"], s["small_rtts"], s["netem"], s["layout"], s["socket_buffers"]) for s in stage5} == \
        {("125MB", "four", "one", "five-pairs", "linux-senders")}
    assert {s["offloads"] for s in stage5} == {"off", "linux-4", "linux-8", "linux-16"}
    eight = m.scenario_for(next(s for s in stage5 if s["offloads"] == "linux-8"), 0)
    assert eight.topology.offloads == "linux-8" and eight.host_params(1, "server").nic_mbit == 1000.0
    # Each depth is a choice the paper does not state, as offloads off is: the nearest decides.
    assert {UNSTATED["offloads"][v] for v in ("off", "linux-4", "linux-8", "linux-16")} == {1}
    assert UNSTATED["offloads"]["linux"] == 0
    # Stage 4 again by its options: stage 3's choice (offloads off), the socket buffers.
    stage4 = settings(m.spec, {"offloads": ["off"], "socket_buffers": ["raised", "linux-senders", "linux"]})
    assert len(stage4) == 2 * 2 * 4 * 3
    assert {(s["large_size"], s["small_rtts"], s["netem"], s["layout"], s["offloads"]) for s in stage4} == \
        {("125MB", "four", "one", "five-pairs", "off")}
    assert {s["socket_buffers"] for s in stage4} == {"raised", "linux-senders", "linux"}
    assert {m.scenario_for(s, 0).topology.socket_buffers for s in stage4[:3]} == {"raised", "linux-senders", "linux"}
    # Stage 3 again by its options: the layouts and the offloads, the buffers raised.
    stage3 = settings(m.spec, {"layout": ["own-pairs", "five-pairs"], "offloads": ["off", "linux"],
                               "socket_buffers": ["raised"]})
    assert len(stage3) == 2 * 2 * 4 * 2 * 2
    assert {(s["large_size"], s["small_rtts"], s["netem"]) for s in stage3} == {("125MB", "four", "one")}
    assert {(s["layout"], s["offloads"]) for s in stage3} == {("own-pairs", "off"), ("own-pairs", "linux"),
                                                              ("five-pairs", "off"), ("five-pairs", "linux")}
    five = m.scenario_for(next(s for s in stage3 if s["layout"] == "five-pairs" and s["offloads"] == "linux"), 0)
    assert five.topology.pairs == 5 and five.topology.offloads == "linux"
    assert [round(p.rtt * 1000) for p in five.pairs] == [25, 25, 50, 100, 200]
    # Stages 1-2's candidates stay runnable by their options.
    every = settings(m.spec, {"large_size": ["150MB", "140MB", "125MB", "100MB"], "small_rtts": ["spread", "four", "as-large"],
                              "netem": ["apart", "one"], "layout": ["own-pairs"], "offloads": ["off"],
                              "socket_buffers": ["raised"]})
    assert len(every) == 2 * 2 * 4 * 4 * 3 * 2
    def pairs(rtts, large_rtt="200ms", netem="apart"):
        s = next(x for x in every if x["small_rtts"] == rtts and x["large_rtt"] == large_rtt
                 and x["large_size"] == "140MB" and x["netem"] == netem)
        sc = m.scenario_for(s, 0)
        assert sc.cases[0].flows[0].size == 140_000_000 and sc.bottleneck.netem == netem
        return [round(p.rtt * 1000) for p in sc.pairs]
    assert pairs("four", netem="one") == [200] + [25, 50, 100, 200] * 3
    assert pairs("spread") == [200] + list(range(25, 301, 25))
    assert pairs("four") == [200] + [25, 50, 100, 200] * 3
    assert pairs("as-large") == [200] * 13
    assert pairs("as-large", "25ms") == [25] * 13


def test_runs_with_the_servers_trace_are_read_both_ways(tmp_path):
    """Where the runs carry the server's FCT (the per-ACK trace's), each candidate is read with the
    client's FCT and the server's, two candidates: here the server's reads every SUSS-off FCT at the
    paper's value exactly (the client's / 1.10), distance 0, and is chosen."""
    d, plan = calibration_plan(tmp_path)
    for path in d.glob("cells/a*/job/out/runs/*/run.json"):
        run = json.loads(path.read_text())
        for f in run["flows"]:
            f["server_fct_s"] = f["fct_s"] / 1.10
        path.write_text(json.dumps(run))
    lines, chosen, summary = calibration(d, plan)
    fits = {tuple(f["candidate"].values()): f for f in summary["fits"]}
    assert fits["140MB", "four", "client"]["distance"] == pytest.approx(math.log(1.10))
    assert fits["140MB", "four", "server"]["distance"] == pytest.approx(0.0)
    assert ("140MB", "spread") in fits and ("140MB", "spread", "server") not in fits  # no trace: one way
    assert summary["chosen"] == {"large_size": "140MB", "small_rtts": "four", "fct_timing": "server"}
    assert chosen.fct_timing == "server" and [c.key for c in chosen.cells] == ["a25ms", "a50ms"]
    assert "| large_size=140MB, small_rtts=four, fct_timing=server **(chosen)** | 0.000 | 4 of 4 | no | 0 |" \
        in "\n".join(lines)
    # The report's Table 1 is the chosen candidate's, and says which FCT it reads.
    text = (mr.write_matrix_report(d) / "table.md").read_text()
    assert "FCT from the server's per-ACK trace (its first segment to the last ACK" in text
    assert "FCT from the client" not in text



def test_an_axis_with_one_value_in_the_plan_is_a_setting_not_a_candidate(tmp_path):
    from sslab.papers.suss.calibration import candidate_axes
    _, plan = calibration_plan(tmp_path)
    assert candidate_axes(plan) == ["large_size", "small_rtts"]
    # Only the 140 MB candidates: the size is a setting of them all, the minRTTs still candidates.
    one = plan.model_copy(update={"cells": [c for c in plan.cells if c.setting["large_size"] == "140MB"]})
    assert candidate_axes(one) == ["small_rtts"]
    # E7's own file: its layout and first start take one value unless asked; the report is a Table 1.
    e7 = plan.model_copy(update={"axis_values": {**plan.axis_values, "layout": ["own-pairs", "five-pairs"]},
                                 "cells": [c.model_copy(update={"setting": {**c.setting, "layout": "own-pairs"}})
                                           for c in one.cells]})
    assert candidate_axes(e7) == ["small_rtts"]


def test_the_small_flows_weigh_twice_the_large_flows_terms():
    from sslab.papers.suss.calibration import distance
    e = math.e
    # Small flows off by e (ln 1 = 1 squared), the large flow exact: sqrt((2 * 1 + 1 * 0) / 3) = 0.8165,
    # where equal weights would give sqrt(1/2) = 0.7071; the other way round, sqrt(1/3) = 0.5774.
    assert distance([("a off_small", e, 1.0), ("a off_large", 1.0, 1.0)]) == pytest.approx(math.sqrt(2 / 3))
    assert distance([("a off_small", 1.0, 1.0), ("a off_large", e, 1.0)]) == pytest.approx(math.sqrt(1 / 3))
    # Ten large-flow terms against two small ones weigh as one side each, whatever their number.
    assert distance([("s off_small", e, 1.0)] * 2 + [("l off_large", 1.0, 1.0)] * 10) == pytest.approx(math.sqrt(2 / 3))


def test_candidates_tie_when_their_distance_cis_meet():
    a = Fit({"layout": "own-pairs"}, [("t off_small", 1.2, 1.0)], ci=(0.15, 0.22))
    b = Fit({"layout": "five-pairs"}, [("t off_small", 1.25, 1.0)], ci=(0.21, 0.26))
    assert a.distance < b.distance and (a.unstated, b.unstated) == (1, 0)
    assert choose([a, b], 1) is b            # b's CI reaches a's: a tie, b states no choice the paper does not
    b.ci = (0.23, 0.26)
    assert choose([a, b], 1) is a            # apart: the nearer
    a.ci = b.ci = None                       # one repetition: within 10 % of the nearest
    assert choose([a, b], 1) is (b if b.distance <= a.distance * 1.1 else a)


def test_a_distances_ci_resamples_each_settings_repetitions():
    from sslab.papers.suss.calibration import distance_ci
    from sslab.papers.suss.table1 import reference
    ref = reference(MatrixPlan.model_validate({"matrix": "table1", "title": "t", "report": "table1", "selection": {},
                                               "iterations": 1, "image_hash": "i", "code_version": "c",
                                               "compare": {"param": "s", "off": "a", "on": "b"}, "cells": []}))

    def rep(large, small):
        return {"off": {"large_fct_s": large, "small_mean_fct_s": small}}
    same = {("cubic", "1BDP", "25ms"): [rep(30.4, 1.33 * math.e)] * 3}
    lo, hi = distance_ci(same, ref)
    assert lo == pytest.approx(math.sqrt(2 / 3)) and hi == pytest.approx(math.sqrt(2 / 3))
    spread = {("cubic", "1BDP", "25ms"): [rep(30.4, 1.33), rep(30.4, 2.66), rep(30.4, 1.9)]}
    lo, hi = distance_ci(spread, ref)
    assert lo < hi and distance_ci(spread, ref) == (lo, hi)    # seeded: the same archive, the same CI
    assert distance_ci({("cubic", "1BDP", "25ms"): [rep(30.4, 1.33)]}, ref) is None


def test_a_candidate_whose_receivers_may_hold_a_flow_back_is_ruled_out():
    from sslab.papers.suss.calibration import harness_refusals
    assert harness_refusals({"socket_buffers": "linux", "layout": "five-pairs"}) == \
        ["the clients' receive windows may hold a flow back (the harness's rule)"]
    assert harness_refusals({"socket_buffers": "linux-senders"}) == harness_refusals({"socket_buffers": "raised"}) == []
    # Ruled out whatever its distance: the farther candidate is chosen.
    near = Fit({"socket_buffers": "linux"}, [("t", 1.0, 1.0)], ruled_out=harness_refusals({"socket_buffers": "linux"}))
    far = Fit({"socket_buffers": "linux-senders"}, [("t", 2.0, 1.0)])
    assert choose([near, far], 1) is far
