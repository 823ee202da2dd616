"""The checks section (sslab.analysis.checks_table): a row per setting, a column per check its reading
registers, on a reading made up here; and what a report described with one refuses."""

import pytest
from pydantic import ValidationError

from sslab.analysis.checks_table import Checks, checks_text
from sslab.analysis import plugins
from sslab.analysis.plugins import Metric, Records
from sslab.analysis.runs_report import RunsReport
from sslab.analysis.settings_table import SettingsGrid


def faster(runs: list[dict], paper: dict | None) -> str:
    """How many runs were faster on than off, of how many."""
    return f"{sum(r['on'] < r['off'] for r in runs)} of {len(runs)}"


def beside_paper(runs: list[dict], paper: dict | None) -> str:
    """Our mean off beside the paper's."""
    ours = sum(r["off"] for r in runs) / len(runs)
    return f"{ours:.1f} / {paper['off']:.1f}" if paper else f"{ours:.1f} / –"


READING = Records("checks made up", lambda *a: [], {"cc": ("start", str), "rtt": ("RTT", str)},
                  {"off": Metric("off", "FCT off", 2)}, over="matrix",
                  checks={"faster": faster, "beside paper": beside_paper})

SPEC = Checks.model_validate({
    "show": "checks", "intro": "Checks of {on} against {off}.", "rows": ["cc", "rtt"], "paper": "rows",
    "columns": [{"check": "faster", "heading": "faster with {on}?"}, {"check": "beside paper", "heading": "off: ours / paper"}]})

REF = {"rows": [{"cc": "a", "rtt": "10ms", "off": 2.5}, {"cc": "a", "rtt": "20ms", "off": 4.0}]}


def run(cc, rtt, off, on):
    return {"cc": cc, "rtt": rtt, "off": off, "on": on}


def test_a_row_per_setting_in_the_plans_order_a_column_per_check():
    """Settings in the plan's order (not the records'), one without runs left out, a value in its words;
    a value beside another's paper column reads that column's paper row."""
    runs = [run("b", "10ms", 3.0, 3.5), run("a", "10ms", 2.0, 1.0), run("a", "10ms", 2.2, 2.4)]
    grid = SettingsGrid(planned=[{"cc": "a", "rtt": "10ms"}, {"cc": "a", "rtt": "20ms"}, {"cc": "b", "rtt": "10ms"}],
                        labels={"a": "Alpha", "b": "Beta"}, beside={"b": "a"})
    text = checks_text(SPEC, runs, READING, REF, grid, {"off": "x", "on": "y"})
    assert text.splitlines() == [
        "Checks of y against x.", "",
        "| start | RTT | faster with y? | off: ours / paper |",
        "|---|---|---|---|",
        "| Alpha | 10ms | 1 of 2 | 2.1 / 2.5 |",   # (2.0 + 2.2) / 2
        "| Beta | 10ms | 0 of 1 | 3.0 / 2.5 |"]    # beside a's paper row


def test_no_setting_with_runs_is_no_section():
    grid = SettingsGrid(planned=[{"cc": "a", "rtt": "10ms"}])
    assert checks_text(SPEC, [], READING, REF, grid, {"off": "x", "on": "y"}) == ""


def test_a_check_the_reading_does_not_offer_or_a_heading_naming_another_field_is_refused(monkeypatch):
    monkeypatch.setitem(plugins.RECORDS, READING.name, READING)
    report = {"name": "made-up", "what": "w", "title": "t", "records": READING.name,
              "reference": {"file": "results/reference/table1.yaml"},
              "flows": {"figure": "Fig. 1", "highlight": 0, "names": ["a", "b"]}}
    good = {"show": "checks", "rows": ["cc", "rtt"], "columns": [{"check": "faster", "heading": "faster with {on}?"}]}
    RunsReport.model_validate({**report, "sections": [good]})
    with pytest.raises(ValidationError, match=r"check 'slower': records 'checks made up' check faster, beside paper"):
        RunsReport.model_validate({**report, "sections": [{**good, "columns": [{"check": "slower", "heading": "h"}]}]})
    with pytest.raises(ValidationError, match=r"heading 'faster than \{base\}\?' names 'base'"):
        RunsReport.model_validate({**report, "sections": [{**good, "columns": [
            {"check": "faster", "heading": "faster than {base}?"}]}]})
    with pytest.raises(ValidationError, match=r"paper 'lines': the reference results/reference/table1.yaml lists"):
        RunsReport.model_validate({**report, "sections": [{**good, "paper": "lines"}]})
