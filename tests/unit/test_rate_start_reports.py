"""The E8 and E9 reports' arithmetic: directions against the papers, Jain's index, the reference table."""

import pytest

from sslab.analysis.astart import jain
from sslab.analysis.blitzstart import HINTS, LINKS, SIZES, _direction, compare, reference


def test_the_blitzstart_reference_is_the_whole_table():
    ref = reference()
    assert set(ref) == {(link, size, hint) for link in LINKS for size in SIZES for hint in HINTS}
    # Spot checks against the report's Table 1 (LTE, 10 MB, 4x; DSL slow, 70 KB, 0.5x).
    assert ref[("lte", "10MB", "4x")]["fct_change_ms"] == -11300 and ref[("lte", "10MB", "4x")]["loss_change"] == 1109
    assert ref[("dsl-slow", "70KB", "0.5x")]["fct_change_ms"] == 47 and ref[("dsl-slow", "70KB", "0.5x")]["loss_change"] == -13


@pytest.mark.parametrize("ci, paper, word", [
    ([-100, -50], -664, "agrees"),
    ([20, 40], -664, "DISAGREES"),
    ([-10, 10], -664, "ours n.s."),
    ([5, 9], 0, "paper ±0"),
    (None, -664, "–"),
])
def test_direction_against_the_paper(ci, paper, word):
    diff = None if ci is None else sum(ci) / 2
    assert _direction({"diff": diff, "ci95": ci}, paper) == word


def test_compare_takes_each_hint_against_the_standard_start_of_its_link_and_size():
    def rec(start, size, fct, lost):
        return {"start": start, "size": size, "fct_s": fct, "lost": lost, "fairness": 0.5}
    records = [rec("std", "2MB", 1.2, 10), rec("std", "2MB", 1.0, 12), rec("std", "2MB", 1.1, 14),
               rec("1x", "2MB", 0.7, 100), rec("1x", "2MB", 0.8, 110), rec("1x", "2MB", 0.75, 120),
               rec("std", "70KB", 0.3, 0), rec("1x", "70KB", 0.2, 0)]
    rows = compare({"dsl-fast": ({"rtt_ms": 50.0, "rate_mbit": 50.0, "buffer_pkts": 208}, records)})
    by = {(r["size"], r["hint"]): r for r in rows}
    two = by[("2MB", "1x")]
    # FCT: 750 ms - 1100 ms = -350 ms; lost: 110 - 12 = +98.
    assert two["fct_change_ms"]["diff"] == pytest.approx(-350) and two["loss_change"]["diff"] == pytest.approx(98)
    assert two["fct_direction"] == "agrees" and two["loss_direction"] == "agrees"  # report: -664 ms, +176
    assert two["paper"]["fct_change_ms"] == -664
    # One run a side: no interval, no direction.
    assert by[("70KB", "1x")]["fct_direction"] == "–"


def test_jain_index():
    assert jain([3.0, 3.0, 3.0]) == pytest.approx(1.0)
    assert jain([1.0, 0.0]) == pytest.approx(0.5)
    assert jain([4.0, 2.0]) == pytest.approx(36 / 40)


def test_bytes_in_the_first_seconds_are_interpolated_from_the_receiver_series():
    from sslab.analysis.astart import bytes_by
    series = [[0.1, 0], [10.1, 1000], [20.1, 3000], [25.0, 3500]]
    assert bytes_by(series, 20) == 3000
    assert bytes_by(series, 15) == pytest.approx(2000)
    assert bytes_by(series, 100) == 3500  # the series ends first: all of it


def astart_setting(util: float, runs: int = 2) -> dict:
    """An E8 setting as load() gives it: every control's runs, the first flow's numbers."""
    flow = {"utilisation_pct": util, "throughput_mbit": util / 2.5, "exit_cwnd": 10.0}
    return {"bdp_frames": 100.0, "runs": {cc: [{"flows": [flow], "drops": 0}] * runs
                                         for cc in ("reno_fixed", "reno_hoe", "reno_astart", "vegas")}}


def test_the_astart_report_judges_each_paper_value_in_magnitude():
    from sslab.analysis.astart import report_md
    # Table 1 (NewReno utilisation against RTT): 90 % against the paper's 95.6 (-6 %): reproduced;
    # 60 % against 71.8 (-16 %): missed, though it falls with the RTT as the paper's does.
    text, judged = report_md({"e8-astart-rtt-20ms": astart_setting(90.0),
                              "e8-astart-rtt-50ms": astart_setting(60.0)})
    assert [(c.paper, c.reproduced) for c in judged] == [(95.6, True), (71.8, False)]
    assert text.startswith("**1 of 2 paper values reproduced within tolerance**; the rule: ")
    assert "| 20 | 90.0 | 95.6 | reproduced | – |" in text
    assert "| 50 | 60.0 | 71.8 | MISSED | agrees |" in text
    assert judged[1].difference_text() == "-12 (-16%)" and judged[1].n == 2
    # Its words about the figures are the ledger's claims (judged with CIs), not signs here.
    assert "agrees" not in text.replace("| agrees |", "") and "DISAGREES" not in text


def test_the_astart_papers_values_are_data_and_the_ledger_counts_them():
    from sslab.analysis.astart import paper_values
    from sslab.analysis.claims import load_ledger
    p = paper_values()
    values = [*p.table1_newreno_util_by_rtt.values(), *p.table2_newreno_util_by_bw.values(),
              *p.table3_vegas_exit_by_bw.values(), *p.fig12_mbit.values(), *p.jain.values()]
    assert len(values) == load_ledger("astart").paper_values.count == 19
    assert p.table1_newreno_util_by_rtt[20] == 95.6 and p.fig12_mbit["astart"] == 9.33


def test_the_blitzstart_report_judges_each_change_in_magnitude():
    def rec(start, size, fct, lost):
        return {"start": start, "size": size, "fct_s": fct, "lost": lost, "fairness": 0.5}
    records = [rec("std", "2MB", 1.2, 10), rec("std", "2MB", 1.0, 12), rec("std", "2MB", 1.1, 14),
               rec("1x", "2MB", 0.5, 170), rec("1x", "2MB", 0.4, 180), rec("1x", "2MB", 0.45, 190)]
    (row,) = compare({"dsl-fast": ({"rtt_ms": 50.0, "rate_mbit": 50.0, "buffer_pkts": 208}, records)})
    # FCT -650 ms against the report's -664 (2 % off): reproduced; lost +168 against +176 (5 % off): reproduced.
    assert row["fct_verdict"] == "reproduced" and row["loss_verdict"] == "reproduced"
    records[3:] = [rec("1x", "2MB", 0.8, 29), rec("1x", "2MB", 0.7, 30), rec("1x", "2MB", 0.75, 31)]
    (row,) = compare({"dsl-fast": ({"rtt_ms": 50.0, "rate_mbit": 50.0, "buffer_pkts": 208}, records)})
    # -350 ms and +18 lost: the report's signs, half and a tenth of its sizes: missed.
    assert row["fct_verdict"] == "MISSED" and row["loss_verdict"] == "MISSED"
    assert row["fct_direction"] == "agrees" and row["loss_direction"] == "agrees"
