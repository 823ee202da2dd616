"""The settings section (sslab.analysis.settings_table): rows of settings beside the paper's, and means
over settings, with hand-worked numbers on a reading made up here."""

import math

import pytest

from sslab.analysis.plugins import Metric, Records
from sslab.analysis.verdict import NOT_DECIDED
from sslab.analysis.settings_table import (Settings, SettingsGrid, kernels_text, mean_rows, reproduced_cell,
                                           setting_rows, settings_text)

READING = Records(
    "made up", lambda *a: [], {"cc": ("start", str), "rtt": ("RTT", str)},
    {"off": Metric("off", "FCT off", 2), "on": Metric("on", "FCT on", 2),
     "gain": Metric("gain", "gain", 0, of_means=lambda m: (1 - m["on"] / m["off"]) * 100, means_of=("on", "off"))},
    over="matrix", implied_means={"doubled": lambda ref: {"a": {"off": (4.0, 0.1), "on": (2.0, 0.1),
                                                                "gain": (50.0, 1.0)}}})

SPEC = Settings.model_validate({
    "show": "settings", "rows": ["cc", "rtt"], "paper": "rows",
    "columns": [{"metric": "off", "heading": "off (s)", "kind": "fct", "rounding": 0.005, "what": "FCT {on} off",
                 "short": "off", "group": "FCTs"},
                {"metric": "gain", "heading": "gain", "kind": "improvement", "rounding": 0.5, "suffix": "%",
                 "what": "gain", "short": "gain", "group": "gains"}],
    "means": [{"per": "cc", "paper": "averages", "cells": ["average ({rtt})"], "where_text": "{label} Average",
               "about": {"rtt": "average"}, "group": "means"},
              {"per": "cc", "implied": "doubled", "where": {"rtt": "20ms"}, "cells": ["{rtt} implied"],
               "where_text": "{label} implied", "about": {"rtt": "implied"}, "group": "means"}]})

REF = {"rows": [{"cc": "a", "rtt": "10ms", "off": 2.0, "gain": 50}, {"cc": "a", "rtt": "20ms", "off": 4.0, "gain": 40}],
       "averages": [{"cc": "a", "off": 3.0, "gain": 45}]}


def run(cc, rtt, off, on):
    return {"cc": cc, "rtt": rtt, "off": off, "on": on, "gain": (1 - on / off) * 100}


RUNS = [run("a", "10ms", 2.0, 1.0), run("a", "10ms", 2.2, 1.0),
        run("a", "20ms", 4.0, 3.0), run("a", "20ms", 4.4, 2.6)]
GRID = SettingsGrid([{"cc": "a", "rtt": "10ms"}, {"cc": "a", "rtt": "20ms"}, {"cc": "b", "rtt": "10ms"}],
                    {"cc": ["a", "b"], "rtt": ["10ms", "20ms"]}, {"a": "Start A"})


def test_a_settings_row_is_the_mean_of_its_runs_and_a_gain_of_their_means():
    rows = setting_rows(SPEC, RUNS, READING, REF, GRID, {"on": "X"})
    a10 = rows[0]
    assert a10.ours["off"] == pytest.approx(2.1)
    # The gain of the means: 1 - 1.0 / 2.1 = 52.38 %, not the mean of the runs' own (50 and 54.55).
    assert a10.ours["gain"] == pytest.approx((1 - 1.0 / 2.1) * 100)
    # Its CI over the runs' own gains: sd of (50, 54.545) = 3.2141, / sqrt 2, t(1) 12.706: ± 28.88.
    lo, hi = a10.stats["gain"]["ci95"]
    assert (hi - lo) / 2 == pytest.approx(12.7062 * 3.21412 / math.sqrt(2), rel=1e-4)
    assert [c.what for c in a10.comparisons] == ["FCT X off", "gain"]
    # Two runs: CIs wider than the bands (2.00 ±15 % and ±0.005; 50 ±10 points and ±0.5), so undecided.
    assert a10.comparisons[0].where == "Start A 10ms" and a10.verdict == "0 of 2 reproduced"
    assert {c.outcome for c in a10.comparisons} == {NOT_DECIDED}
    # b at 10 ms was planned and did not run: a row without runs, in the plan's order.
    assert [r.setting for r in rows] == GRID.planned and rows[2].records == []


def test_the_average_row_is_the_mean_of_the_settings_means_its_ci_over_repetitions():
    rows = setting_rows(SPEC, RUNS, READING, REF, GRID, {"on": "X"})
    avg, implied = mean_rows(SPEC, rows, READING, REF, GRID, {"on": "X"})
    # off: settings' means 2.1 and 4.2 -> 3.15; on: 1.0 and 2.8 -> 1.9; gain 1 - 1.9 / 3.15 = 39.68 %.
    assert avg.ours["off"] == pytest.approx(3.15) and avg.ours["gain"] == pytest.approx((1 - 1.9 / 3.15) * 100)
    # Per repetition k over the settings: off (2.0 + 4.0) / 2 = 3.0 and (2.2 + 4.4) / 2 = 3.3; n = 2.
    off = avg.comparisons[0]
    assert off.n == 2 and off.ci95 == pytest.approx((3.15 - 12.7062 * 0.15, 3.15 + 12.7062 * 0.15), rel=1e-4)
    assert off.where == "Start A Average" and off.group == "means" and not off.derived
    assert avg.about == {"cc": "a", "rtt": "average"}
    # The implied row: the 20 ms setting alone, beside what the reading implies, marked derived.
    assert [s.setting["rtt"] for s in implied.settings] == ["20ms"] and implied.comparisons[0].derived
    assert implied.comparisons[0].paper == 4.0 and implied.comparisons[0].rounding == 0.1
    text = settings_text(SPEC, rows, [avg, implied], READING, GRID).splitlines()
    assert text[0] == "| start | RTT | n | off (s) | paper | gain | paper | paper values reproduced |"
    assert text[2] == "| Start A | 10ms | 2 | 2.10 ±1.27 | 2.00 | 52% [23%, 81%] | 50% | 0 of 2 reproduced |"
    assert text[4] == "| b | 10ms | 0 | not run yet |  |  |  |  |"
    assert text[5].startswith("| Start A | average (10ms, 20ms) | 4 | 3.15 | 3.00 | 40% | 45% | ")
    assert text[6].startswith("| Start A | 20ms implied | 2 | 4.20 | 4.00 (implied) | 33% | 50% (implied) | ")


def test_a_mean_over_a_grid_not_all_run_is_not_judged():
    rows = setting_rows(SPEC, RUNS[:2], READING, REF, GRID, {"on": "X"})
    (avg,) = mean_rows(SPEC, rows, READING, REF, GRID, {"on": "X"})
    assert avg.comparisons == [] and avg.verdict.startswith("not judged: the paper's mean is over settings")


def test_a_row_beside_anothers_paper_values_is_shown_not_judged():
    grid = SettingsGrid([{"cc": "c", "rtt": "10ms"}], None, {"a": "Start A"}, beside={"c": "a"})
    (row,) = setting_rows(SPEC, [run("c", "10ms", 2.0, 1.0)], READING, REF, grid, {"on": "X"})
    assert row.paper == REF["rows"][0] and row.comparisons == []
    assert row.verdict == "not judged: beside Start A, another algorithm"


def test_kernels_side_by_side_each_fcts_ci_against_the_first_kernels():
    first = setting_rows(SPEC, RUNS, READING, {}, GRID, {})
    # Another kernel: a 10 ms off 2.0, 2.0 (CI [2.0, 2.0], inside the first's 2.1 ± 1.27); 20 ms off 9.0, 9.2
    # (sd 0.1414, / sqrt 2, t(1) 12.706: 9.1 ± 1.27, [7.83, 10.37], beyond the first's 4.2 ± 2.54, [1.66, 6.74]);
    # its gains 66.67 and 67.39 % (of the means 1 - 3 / 9.1 = 67.0 %, CI 67.03 ± 4.60: [62, 72]).
    other = setting_rows(SPEC, [run("a", "10ms", 2.0, 1.0), run("a", "10ms", 2.0, 1.0),
                                run("a", "20ms", 9.0, 3.0), run("a", "20ms", 9.2, 3.0)], READING, {}, GRID, {})
    once = setting_rows(SPEC, [run("a", "10ms", 2.0, 1.0)], READING, {}, GRID, {})
    text = kernels_text(SPEC, READING, [("6.1", first), ("7.3", other), ("one", once)], GRID.labels)
    assert text[2] == "| start | RTT | kernel | n | off (s) | gain | off overlaps 6.1 |"
    assert "| Start A | 10ms | 6.1 | 2 | 2.10 ±1.27 | 52% [23%, 81%] | (the first) |" in text
    assert "| Start A | 10ms | 7.3 | 2 | 2.00 ±0.00 | 50% [50%, 50%] | yes |" in text
    assert "| Start A | 20ms | 7.3 | 2 | 9.10 ±1.27 | 67% [62%, 72%] | NO |" in text
    assert "| Start A | 10ms | one | 1 | 2.00 | 50% | – |" in text          # n = 1: no CI to compare
    assert "| Start A | 20ms | one | 0 | not run | | |" in text
    assert "| b | 10ms | 6.1 | 0 | not run | | |" in text                   # planned, run by none
    assert "- 7.3: the CIs overlap 6.1's, in settings with n ≥ 2 on both: off 1 of 2" in text
    assert "- one: the CIs overlap 6.1's, in settings with n ≥ 2 on both: off 0 of 0" in text


def test_a_rows_record_lists_what_it_missed():
    rows = setting_rows(SPEC, [run("a", "10ms", 3.0, 1.5)], READING, REF, GRID, {"on": "X"})
    assert reproduced_cell(rows[0].comparisons) == "1 of 2 reproduced; off +1.00 s (+50%) (not)"


def test_a_matrix_report_described_with_a_settings_section_judges_its_values(tmp_path, monkeypatch):
    """Any matrix's described report with a settings section gets its headline, every value and the causes'
    list, as Table 1's does (sslab.analysis.matrix_described)."""
    from sslab.analysis.matrix_described import DescribedMatrixReport
    from sslab.analysis.plugins import RECORDS
    from sslab.analysis.runs_report import RunsReport
    from sslab.plan_record import MatrixPlan, PlannedCell
    reading = Records("made up over a matrix", lambda d, plan: RUNS, READING.keys, READING.metrics, over="matrix")
    monkeypatch.setitem(RECORDS, reading.name, reading)
    ref = tmp_path / "ref.yaml"
    # (YAML reads a bare off as false: quoted.)
    ref.write_text('rows:\n  - {cc: a, rtt: 10ms, "off": 2.1, gain: 52}\n  - {cc: a, rtt: 20ms, "off": 9.0, gain: 40}\n')
    monkeypatch.setattr("sslab.paths.REPO_ROOT", tmp_path)
    spec = RunsReport.model_validate({
        "name": "m", "what": "w", "title": "t", "records": reading.name, "reference": {"file": "ref.yaml"},
        "flows": {"figure": "Fig. 1", "highlight": 0, "names": ["big", "small"]},
        "sections": [{**SPEC.model_dump(exclude={"means"}), "means": [], "heading": "The paper's table",
                      "values_called": "Table 9's values"}]})
    plan = MatrixPlan(matrix="m", title="t", report="m", selection={}, iterations=2, image_hash="i" * 64,
                      code_version="c" * 64, defaults={}, labels={"a": "Start A"}, compare={"off": "x", "on": "y"},
                      cells=[PlannedCell(key=f"k{i}", setting=st, rep=0, name=f"c{i}", scenario={})
                             for i, st in enumerate(GRID.planned[:2])])
    tables = DescribedMatrixReport.of(spec).tables(tmp_path, plan, tmp_path)
    assert tables.table.startswith("## The paper's table\n\n| start | RTT | n |")
    # 20 ms: off 4.2 ±2.54 (t(1) 12.706 x 0.2) against 9.0 ±15 %: the whole CI below the band, not reproduced.
    assert tables.extra["verdict"][:4] == ["**Table 9's values under the verdict at n = 2:**", "",
                                           "- FCTs: 0 reproduced, 1 not reproduced, 1 not decided of 2",
                                           "- gains: 0 reproduced, 0 not reproduced, 2 not decided of 2"]
    assert tables.extra["headline"]["FCTs"]["of"] == 2 and len(tables.extra["comparisons"]) == 4
    assert "| a 20ms |" not in tables.extra["comparisons_md"] and "| Start A 20ms | FCT y off | 4.20 s [" in \
        tables.extra["comparisons_md"]


def test_a_headline_order_that_leaves_out_a_group_is_refused():
    from pydantic import ValidationError
    with pytest.raises(ValidationError, match=r"group 'gains': not one of groups \['FCTs', 'means'\]"):
        Settings.model_validate({**SPEC.model_dump(), "groups": ["FCTs", "means"]})
    assert Settings.model_validate({**SPEC.model_dump(), "groups": ["means", "gains", "FCTs"]}).group_order() == \
        ["means", "gains", "FCTs"]
    assert SPEC.group_order() == ["FCTs", "gains", "means"]
