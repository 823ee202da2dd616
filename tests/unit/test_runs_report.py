"""A report over runs as an experiment file describes it (sslab.analysis.runs_report): its tables,
rankings and refusals, on hand-worked numbers."""

import pytest
import yaml
from pydantic import ValidationError

from sslab.analysis import lastmile
from sslab.analysis.runs_report import Ranking, RunsReport, Table, headline_text, ranking, ranking_text, table_text
from sslab.experiment import ExperimentError, load_experiment
from sslab.paths import REPO_ROOT


def rec(link, rtt, cc, size, fct, lost, sent=100):
    return {"link": link, "rtt_ms": rtt, "cc": cc, "size": size, "fct_s": fct, "lost": lost,
            "loss_rate": lost / (sent + lost), "retrans": lost, "fidelity_ok": True}


RECORDS = [rec("wired", 150, "cubic_hs", 1_000_000, 1.0, 0), rec("wired", 150, "cubic_hs", 1_000_000, 1.2, 2),
           rec("wired", 150, "cubic_suss 2024", 1_000_000, 0.5, 4),
           rec("wired", 150, "cubic_hs", 4_000_000, 2.0, 10),
           rec("lte", 40, "cubic_hs", 1_000_000, 3.0, 25)]


def test_a_table_per_group_a_row_per_size_a_column_per_variant_and_metric():
    spec = Table(show="table", heading="{link} at {rtt_ms} ms", per=["link", "rtt_ms"], rows=["size"],
                 metrics=["fct", "lost"])
    out = table_text(spec, lastmile.size_rows(RECORDS), ["cubic_hs", "cubic_suss 2024"])
    # The wired link first, whatever the names' order.
    assert [values for values, _ in out] == [{"link": "wired", "rtt_ms": "150"}, {"link": "lte", "rtt_ms": "40"}]
    wired = out[0][1].splitlines()
    assert wired[0] == "| size | cubic_hs: FCT (s) | cubic_hs: lost | cubic_suss 2024: FCT (s) | cubic_suss 2024: lost |"
    assert wired[1] == "|---|---|---|---|---|"
    # 1.0 and 1.2: mean 1.1, sd 0.1414, t(1) = 12.706: half-width 1.2706; one run: its value alone; none: a dash.
    assert wired[2] == "| 1 MB | 1.100 ±1.271 | 1.0 ±12.7 | 0.500 | 4.0 |"
    assert wired[3] == "| 4 MB | 2.000 | 10.0 | – | – |"


def test_one_metric_is_a_column_per_variant_and_a_scale_shows_a_fraction_as_percent():
    spec = Table(show="table", heading="Loss", rows=["link", "rtt_ms", "size"], metrics=["loss_rate"])
    [(values, text)] = table_text(spec, lastmile.size_rows(RECORDS), ["cubic_hs"])
    lines = text.splitlines()
    assert values == {} and lines[0] == "| link | RTT (ms) | size | cubic_hs |"
    # 0 of 100 and 2 of 102 offered: mean 0.980 %, half-width 12.706 x 1.961 % / 2 = 12.457 %; 25 of 125: 20 %.
    assert lines[2:] == ["| wired | 150 | 1 MB | 0.980 ±12.457 |", "| wired | 150 | 4 MB | 9.091 |",
                         "| lte | 40 | 1 MB | 20.000 |"]


def test_a_ranking_orders_variants_by_their_mean_over_the_sizes_chosen():
    spec = Ranking(show="ranking", heading="h", lines=[
        {"text": "Most lost", "metric": "lost", "order": "most first", "key": "lost"},
        {"text": "Fastest up to 1 MB", "metric": "fct", "order": "least first", "sizes_up_to": "1MB", "key": "f"}])
    ccs = ["cubic_hs", "cubic_suss 2024"]
    most = ranking(spec.lines[0], RECORDS, ccs)
    # cubic_hs: (0 + 2 + 10 + 25) / 4 = 9.25; SUSS 4.
    assert list(most.items()) == [("cubic_hs", 9.25), ("cubic_suss 2024", 4.0)]
    fast = ranking(spec.lines[1], RECORDS, ccs)
    assert list(fast) == ["cubic_suss 2024", "cubic_hs"] and fast["cubic_hs"] == pytest.approx(5.2 / 3)
    assert ranking_text(spec.lines[1], fast) == "Fastest up to 1 MB: cubic_suss 2024 0.500 s, cubic_hs 1.733 s."
    assert ranking_text(spec.lines[0], most) == "Most lost: cubic_hs 9.2, cubic_suss 2024 4.0."
    # Runs without the quantity (an exit class of a flow that never left slow start) are left out, and a
    # variant with none at all has no place.
    near = Ranking(show="ranking", heading="h", lines=[
        {"text": "Near", "metric": "exit_near", "order": "most first", "key": "n"}]).lines[0]
    runs = [dict(r, exit_near=v) for r, v in zip(RECORDS, (1.0, None, None, 0.0, 0.0))]
    assert ranking(near, runs, ccs) == {"cubic_hs": pytest.approx(1 / 3)}
    # A share is printed as the metric shows it, in percent.
    assert ranking_text(near, {"cubic_hs": 1 / 3}) == "Near: cubic_hs 33."


def test_the_headline_words_follow_its_bound():
    spec = RunsReport.model_validate(yaml.safe_load("""
name: x
what: w
title: t
intro: "{baseline} against the rest"
sections:
  - {show: headline, heading: h, at_least: 0.25, sizes_under: 2MB, rtt_over_ms: 50}
  - {show: improvement, heading: i, baseline: cubic_hs, against: cubic_suss}
"""))
    text = headline_text(spec.sections[0], [])
    assert "CI above 25 %" in text and "| sizes under 2 MB |" in text and "at or under 25% |" in text
    assert text.endswith("|---|---|---|---|---|---|---|---|---|")


#: A change section over E9's records that loads (each refusal below breaks one thing of it).
E9_CHANGE = {"show": "change", "heading": "{link}: {rate_mbit} Mbit/s", "per": ["link"], "rows": ["size"],
             "of": "start", "baseline": "std", "metrics": [{"metric": "fct"}]}


#: A sides section over E6's records and its flows' plots, which load (E6's report).
E6_SIDES = {"show": "sides", "heading": "h", "rows": ["incumbents", "buffer", "rtt"], "side": "side",
            "sides": ["off", "on"], "pair_by": "rep", "metrics": [{"metric": "recovery", "difference": True}]}
E6_FLOWS = {"figure": "Fig. 2", "highlight": -1, "names": ["the new flow", "the running flows"]}


def test_e6s_report_over_its_matrix_loads():
    spec = RunsReport.model_validate({"name": "x", "what": "w", "title": "t", "intro": "off = {off}", "records": "fairness",
                                      "flows": E6_FLOWS, "figure": "jain", "sections": [E6_SIDES]})
    assert spec.flows.highlight == -1


#: A values section over E8's records that loads (E8's fairness table).
E8_VALUES = {"show": "values", "heading": "Fairness ({seconds} s)", "where": {"setting": "fairness"}, "rows": "case",
             "metric": "jain", "paper": "jain", "rounding": 0.00005, "comparison": "fairness, {row}", "what": "Jain"}
E8_REF = {"file": "results/reference/astart.yaml"}


#: Table 1's settings section as its experiment file describes it, and its reference.
T1_SETTINGS = yaml.safe_load((REPO_ROOT / "experiments" / "reproduce-table1.yaml").read_text())["report"]["sections"][0]
T1_REF = {"file": "results/reference/table1.yaml"}


def test_table1s_main_table_loads_from_its_file():
    spec = RunsReport.model_validate({"name": "x", "what": "w", "title": "t", "records": "table1", "flows": E6_FLOWS,
                                      "reference": T1_REF, "sections": [T1_SETTINGS]})
    assert [c.short for c in spec.sections[0].columns] == ["small off", "small on", "improvement", "large off",
                                                           "large on", "stability"]


def test_a_values_section_over_e8s_records_loads():
    spec = RunsReport.model_validate({"name": "x", "what": "w", "title": "t", "intro": "i", "records": "astart",
                                      "sections": [E8_VALUES], "reference": E8_REF})
    assert spec.sections[0].paper == "jain"


def test_a_change_section_over_e9s_records_loads():
    spec = RunsReport.model_validate({"name": "x", "what": "w", "title": "t", "intro": "i", "records": "blitzstart",
                                      "sections": [E9_CHANGE]})
    assert spec.sections[0].of == "start" and spec.plots == []


@pytest.mark.parametrize("report, why", [
    ({"sections": [{"show": "table", "heading": "h", "rows": ["size"], "metrics": ["goodput"]}]},
     "metric 'goodput': one of fct, lost"),
    ({"sections": [{"show": "table", "heading": "{link}", "rows": ["size"], "metrics": ["fct"]}]},
     "heading '{link}' names 'link', not one of per"),
    ({"sections": [{"show": "table", "heading": "h", "rows": ["colour"], "metrics": ["fct"]}]},
     "'colour': group by one of link, rtt_ms, size"),
    ({"sections": [{"show": "headline", "heading": "h", "at_least": 0.2, "sizes_under": "5MB",
                    "rtt_over_ms": 50}]}, "needs an improvement section"),
    ({"sections": [{"show": "headline", "heading": "h", "at_least": 20, "sizes_under": "5MB", "rtt_over_ms": 50},
                   {"show": "improvement", "heading": "i", "baseline": "a", "against": "b"}]}, "less than 1"),
    ({"sections": [{"show": "table", "heading": "h", "rows": ["size"], "metrics": ["fct"]}], "intro": "{who}"},
     "intro names 'who'"),
    ({"sections": [{"show": "pie", "heading": "h"}]}, "does not match any of the expected tags"),
    ({"records": "quic", "sections": [{"show": "link traits", "heading": "h"}]},
     "records 'quic': one of astart, blitzstart, fairness, last hop, table1"),
    ({"records": "blitzstart", "sections": [{"show": "link traits", "heading": "h"}]},
     "link traits: a section or plot over records 'last hop' only, not 'blitzstart'"),
    ({"records": "blitzstart", "sections": [{**E9_CHANGE, "rows": ["rtt"]}]},
     "'rtt': records 'blitzstart' group by one of link, size, start"),
    ({"records": "blitzstart", "sections": [{**E9_CHANGE, "metrics": [{"metric": "goodput"}]}]},
     "metric 'goodput': records 'blitzstart' have fct, lost, fairness"),
    ({"records": "blitzstart", "sections": [{**E9_CHANGE, "heading": "{link} at {rate}"}]},
     "heading '{link} at {rate}' names 'rate'"),
    ({"records": "blitzstart", "sections": [{**E9_CHANGE, "metrics": [{"metric": "fct", "paper": "fct_change_ms"}]}]},
     "names the paper's 'fct_change_ms': the report needs a reference"),
    ({"records": "blitzstart", "sections": [E9_CHANGE],
      "reference": {"file": "results/reference/blitzstart.yaml", "keys": {"hint": "hint"}}},
     r"reference keys \['hint'\]: not all of the section's"),
    ({"records": "blitzstart", "sections": [E9_CHANGE], "reference": {"file": "results/reference/quic.yaml",
                                                                       "keys": {"start": "hint"}}},
     "reference 'results/reference/quic.yaml': no such file"),
    ({"records": "blitzstart", "sections": [{**E9_CHANGE, "metrics": [{"metric": "fct", "paper": "fct_change_ms"}]}],
      "reference": {"file": "results/reference/blitzstart.yaml"}},
     "a change section's paper values are rows of the reference: give its keys"),
    ({"records": "astart", "sections": [{**E8_VALUES, "paper": "table9"}], "reference": E8_REF},
     "values 'table9': not a mapping of results/reference/astart.yaml"),
    ({"records": "astart", "sections": [E8_VALUES]}, "values 'jain': the report needs a reference"),
    ({"records": "astart", "sections": [{**E8_VALUES, "where": {"colour": "red"}}], "reference": E8_REF},
     "where 'colour': records 'astart' have setting, case"),
    ({"records": "astart", "sections": [{**E8_VALUES, "comparison": "fairness, {case}"}], "reference": E8_REF},
     "comparison 'fairness, {case}' names 'case': it may name {row}"),
    ({"records": "astart", "sections": [{"show": "means", "heading": "h", "rows": "rtt_ms", "columns": "cc",
                                         "metrics": ["throughput"]}]},
     "'cc': records 'astart' group by one of setting, case"),
    ({"records": "fairness", "sections": [E6_SIDES]}, "records 'fairness' are a matrix's: its report says how its flows"),
    ({"records": "blitzstart", "flows": E6_FLOWS, "sections": [E9_CHANGE]},
     "flows and figure are a matrix's report's"),
    ({"records": "fairness", "flows": E6_FLOWS, "figure": "pie", "sections": [E6_SIDES]}, "figure 'pie': one of jain"),
    ({"records": "fairness", "flows": E6_FLOWS, "sections": [{**E6_SIDES, "pair_by": "seed"}]},
     "'seed': records 'fairness' group by one of incumbents"),
    ({"records": "fairness", "flows": E6_FLOWS,
      "sections": [{**E6_SIDES, "metrics": [{"metric": "recovery", "missing": "not within {watched} s"}]}]},
     "missing 'not within {watched} s' names 'watched'"),
    ({"records": "fairness", "flows": E6_FLOWS,
      "sections": [{**E6_SIDES, "metrics": [{"metric": "recovery", "together": True, "difference": True}]}]},
     "a metric's difference needs its sides in columns of their own"),
    ({"records": "fairness", "flows": E6_FLOWS, "sections": [E6_SIDES], "intro": "{fifth}"},
     r"intro names 'fifth': it may name \{suss_legend\}, \{baseline\}, \{off\}, \{on\}"),
    ({"records": "table1", "flows": E6_FLOWS, "sections": [T1_SETTINGS]},
     "a settings section sets the paper's values beside ours: the report needs a reference"),
    ({"records": "table1", "flows": E6_FLOWS, "sections": [{**T1_SETTINGS, "paper": "table9"}], "reference": T1_REF},
     "paper 'table9': the reference results/reference/table1.yaml lists averages, rows"),
    ({"records": "table1", "flows": E6_FLOWS, "reference": T1_REF,
      "sections": [{**T1_SETTINGS, "columns": [{**T1_SETTINGS["columns"][0], "implied": "wobble"}]}]},
     "implied 'wobble': records 'table1' imply stability"),
    ({"records": "table1", "flows": E6_FLOWS, "reference": T1_REF,
      "sections": [{**T1_SETTINGS, "means": [{**T1_SETTINGS["means"][0], "implied": "2BDP mean"}]}]},
     "means per large_cc: give the paper's list"),
    ({"records": "table1", "flows": E6_FLOWS, "reference": T1_REF,
      "sections": [{**T1_SETTINGS, "rows": ["large_cc", "flavour"]}]},
     "'flavour': records 'table1' group by one of large_cc, buffer, large_rtt"),
    ({"records": "astart", "reference": E8_REF, "sections": [T1_SETTINGS]},
     "'large_cc': records 'astart' group by one of"),
])
def test_a_description_that_cannot_be_written_is_refused(report, why):
    with pytest.raises(ValidationError, match=why):
        RunsReport.model_validate({"name": "x", "what": "w", "title": "t", "intro": "i", **report})


def test_a_bad_report_in_an_experiment_file_is_refused_when_it_loads(tmp_path):
    wifi = yaml.safe_load(load_experiment("wifi").path.read_text())
    # YAML reads off: and on: as booleans: the improvement's words are baseline and against.
    wifi["report"]["sections"].append({"show": "improvement", "heading": "i", False: "cubic_hs", True: "cubic_suss"})
    f = tmp_path / "wifi2.yaml"
    f.write_text(yaml.safe_dump(wifi, allow_unicode=True))
    with pytest.raises(ExperimentError, match="baseline: Field required"):
        load_experiment(str(f))


def test_e2_and_e4_describe_their_reports():
    e2, e4 = load_experiment("wifi").spec.report_of, load_experiment("fct-vs-size").spec.report_of
    assert (e2.name, e4.name) == ("wifi", "fct-vs-size") and e2.write and e4.write and not e2.matrix


def test_the_docs_example_is_a_report_that_loads():
    """docs/experiments.md's example of a report written in an experiment file is one this harness reads."""
    import re

    from sslab.paths import REPO_ROOT
    text = (REPO_ROOT / "docs" / "experiments.md").read_text()
    section = text.split("## A report over runs, written in the experiment file", 1)[1]
    example, e9, e8, e6 = re.findall(r"```yaml\n(.*?)```", section, re.S)[:4]
    spec = RunsReport.model_validate(yaml.safe_load(example)["report"])
    assert [s.show for s in spec.sections] == ["table", "table", "link traits"] and spec.plots[0].metric == "retrans"
    # E9's, abridged (its words left out), is E9's file's section.
    spec = RunsReport.model_validate({"what": "w", "title": "t", "intro": "i", **yaml.safe_load(e9)["report"]})
    (change,) = spec.sections
    (theirs,) = load_experiment("blitzstart").spec.report.sections
    assert change.model_dump(exclude={"order"}) == theirs.model_dump(exclude={"order"})
    # E8's Table 1 line is E8's file's.
    (table1,) = yaml.safe_load(e8)
    assert table1 == next(s.model_dump(exclude_defaults=True) for s in load_experiment("astart").spec.report.sections
                          if s.heading.startswith("Table 1"))
    # E6's, abridged (its min F after left out), reads its file's records, flows and figure.
    spec = RunsReport.model_validate({"what": "w", "title": "t", **yaml.safe_load(e6)["report"]})
    e6_file = yaml.safe_load(load_experiment("fairness").path.read_text())["report"]
    assert (spec.records, spec.flows.model_dump(exclude_none=True), spec.figure) == (
        e6_file["records"], e6_file["flows"], e6_file["figure"])
    assert [m.metric for m in spec.sections[0].metrics] == ["before", "recovery"]


def test_a_report_over_a_papers_reading_is_written_with_its_comparisons_and_records(tmp_path, monkeypatch):
    """write() over a reading of two made-up runs at 20 ms (NewReno's utilisation 95.6 and 95.6 %, the
    paper's 95.6: reproduced) and 50 ms (60.0 and 62.0 %: mean 61.0, its CI ± t(1) x 1 = ± 12.7; the
    paper's 71.8 ± (15 % + its rounding 0.05) is [60.98, 82.62], which the CI straddles: not decided)."""
    import json

    from sslab.analysis import runs_report
    from sslab.analysis.plugins import RECORDS, Metric, Records

    def load(run_dir):
        rtt = float(run_dir.name)
        utils = {20.0: [95.6, 95.6], 50.0: [60.0, 62.0]}[rtt]
        return [{"setting": f"rtt-{rtt:g}ms", "case": "reno_fixed", "rtt_ms": rtt, "rep": i, "seconds": 20,
                 "utilisation_pct": u} for i, u in enumerate(utils)]

    monkeypatch.setitem(RECORDS, "made-up", Records("made-up", load, {"rtt_ms": ("RTT (ms)", lambda v: f"{v:g}"),
                                                                       "case": ("start", str)},
                                                    {"utilisation": Metric("utilisation_pct", "utilisation", 1, unit="%")},
                                                    group_fields=("seconds",)))
    spec = RunsReport.model_validate({
        "name": "x", "what": "w", "title": "T", "intro": "I", "records": "made-up", "notes": "N",
        "reference": {"file": "results/reference/astart.yaml"},
        "sections": [{"show": "values", "heading": "Table 1 over {seconds} s", "where": {"case": "reno_fixed"},
                      "rows": "rtt_ms", "metric": "utilisation", "paper": "table1_newreno_util_by_rtt",
                      "rounding": 0.05, "comparison": "Table 1, RTT (ms) {row}", "what": "%"}]})
    runs = [tmp_path / "20", tmp_path / "50"]
    dest = tmp_path / "report"
    dest.mkdir()
    runs_report.write(spec, runs, dest)
    text = (dest / "report.md").read_text()
    assert text.startswith("# T\n\n**Paper values: 1 reproduced, 0 not reproduced, 1 not decided of 2**")
    assert "## Table 1 over 20 s" in text and "| 20 | 95.6 | 95.6 | reproduced |" in text and text.endswith("\nN\n")
    summary = json.loads((dest / "summary.json").read_text())
    assert [c["where"] for c in summary["paper_values"]] == ["Table 1, RTT (ms) 20", "Table 1, RTT (ms) 50"]
    assert [r["row"] for r in summary["paper_tables"]["table1_newreno_util_by_rtt"]] == ["20", "50", "100", "150", "200"]
    assert len(summary["records"]) == 4 and "sizes" not in summary
