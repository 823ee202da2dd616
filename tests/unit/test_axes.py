"""The one axis syntax (sslab.scenario.axes): case templates, series and matrices cross values alike."""

from pathlib import Path

import pytest
import yaml

from .test_matrix import chosen_of
from sslab import matrix as mx
from sslab.scenario import ScenarioError, parse_scenario
from sslab.scenario.axes import AxesError, combinations, labels_of, parse_axes
from sslab.experiment import ExperimentError, load_experiment

REPO = Path(__file__).resolve().parents[2]


def test_short_and_long_forms_cross_in_the_files_order_first_axis_slowest():
    axes = parse_axes({"cc": ["a", "b"], "size": {"values": ["1MB", "5MB", "9MB"], "option": "SIZE"}}, "t")
    got = combinations(axes)
    # 2 x 3 = 6, cc slowest.
    assert got == [{"cc": "a", "size": "1MB"}, {"cc": "a", "size": "5MB"}, {"cc": "a", "size": "9MB"},
                   {"cc": "b", "size": "1MB"}, {"cc": "b", "size": "5MB"}, {"cc": "b", "size": "9MB"}]
    assert axes["size"].option == "SIZE" and axes["cc"].option is None
    assert labels_of(axes, got[4]) == ["b", "5MB"]


def test_a_mapping_value_sets_its_parameters_and_is_named_by_its_label():
    axes = parse_axes({"start": [{"start": "std", "cc": "cubic_std"}, {"start": "1x", "cc": "cubic_blitz", "hint": "1x"}]},
                      "t")
    # The key one value sets and another does not is null in the other (a flow field left out).
    assert combinations(axes) == [{"cc": "cubic_std", "hint": None, "start": "std"},
                                  {"cc": "cubic_blitz", "hint": "1x", "start": "1x"}]
    assert axes["start"].labels("start") == ["std", "1x"]


def test_choosing_by_label_keeps_the_files_order_and_puts_new_values_after():
    axes = parse_axes({"rtt": ["25ms", "50ms", "100ms"], "b": [{"b": "x", "k": 1}, {"b": "y", "k": 2}]}, "t")
    got = combinations(axes, {"rtt": ["100ms", "30ms", "25ms"], "b": ["y"]})
    assert [c["rtt"] for c in got] == ["25ms", "100ms", "30ms"] and {c["k"] for c in got} == {2}


@pytest.mark.parametrize("raw, msg", [
    ({"s": [{"cc": "a"}]}, "a mapping value must set 's' \\(its label\\)"),
    ({"s": ["a", "b", "a"]}, "values repeat: a"),
    ({"s": []}, "at least 1 item"),
    ({"s": {"values": ["a"], "option": "lower"}}, "pattern"),
    ({}, "a mapping of axis names"),
])
def test_bad_axes_are_refused_naming_the_axis(raw, msg):
    with pytest.raises(AxesError, match=msg):
        parse_axes(raw, "cases.axes")


def test_a_case_template_and_a_series_spelled_the_old_way_are_refused_with_the_new_spelling(tmp_path):
    data = yaml.safe_load((REPO / "experiments/scenarios/e1-startup.yaml").read_text())
    data["cases"]["matrix"] = data["cases"].pop("axes")
    with pytest.raises(ScenarioError, match="cases.matrix: the axes of a case template are `cases.axes`"):
        parse_scenario(data, "t")
    e = yaml.safe_load((REPO / "experiments/astart.yaml").read_text())
    e["parts"] = [{"series": "scenarios/e8-astart.yaml"}]
    (tmp_path / "x.yaml").write_text(yaml.safe_dump(e))
    with pytest.raises(ExperimentError, match=r"a series file's settings are written in place"):
        load_experiment(tmp_path / "x.yaml")


def test_a_series_crosses_axes_and_names_each_setting_by_its_labels(tmp_path):
    """E8's series with three axes of its own: one part per combination, named by their labels in the file's order."""
    e = yaml.safe_load((REPO / "experiments/astart.yaml").read_text())
    series = e["parts"][0]
    e["parts"] = [{**series, "axes": {"rate": ["10mbit", "20mbit"], "rtt": ["50ms", "100ms"], "bdp": [1]},
                   "scenario": {**series["scenario"], "name": "x-{name}"}}]
    (tmp_path / "x.yaml").write_text(yaml.safe_dump(e, sort_keys=False))   # the axes' order is the file's
    exp = load_experiment(tmp_path / "x.yaml")
    assert [p.name for p in exp.parts] == ["10mbit-50ms-1", "10mbit-100ms-1", "20mbit-50ms-1", "20mbit-100ms-1"]
    # 20 Mbit/s x 100 ms of 1066-byte frames at 1 BDP: 20e6 * 0.1 / 8 / 1066 = 234.52, rounded: 235 packets.
    last = parse_scenario(exp.data_of(exp.parts[3]))
    assert last.name == "x-20mbit-100ms-1" and last.buffer_packets == 235


def test_a_matrix_axis_of_mappings_is_chosen_by_its_label(tmp_path):
    m = yaml.safe_load((REPO / "tests/data/matrix-tiny.yaml").read_text())
    name, axis = next((n, a) for n, a in m["matrix"]["axes"].items() if not a.get("cca"))
    # The axis's values become mappings setting the axis (its label) and nothing else the template
    # reads: the cells' scenarios are those of the scalar axis.
    scalar = mx.load_matrix(str(REPO / "tests/data/matrix-tiny.yaml"))
    axis["values"] = [{name: v, "note": f"n{i}"} for i, v in enumerate(axis["values"])]
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(m))
    mapped = mx.load_matrix(str(tmp_path / "m.yaml"))
    last = axis["values"][-1][name]
    chosen = chosen_of(mapped, {axis["option"]: last, "CCA": "cubic"})
    assert chosen == {name: [last], "large_cc": ["cubic"]}
    got = mx.settings(mapped.spec, chosen)
    want = mx.settings(scalar.spec, chosen_of(scalar, {axis["option"]: last, "CCA": "cubic"}))
    assert [{k: v for k, v in g.items() if k != "note"} for g in got] == want
    assert {g["note"] for g in got} == {f"n{len(axis['values']) - 1}"}
    assert [mapped.scenario_for(g, 0).model_dump(exclude={"name"}) for g in got] == \
           [scalar.scenario_for(w, 0).model_dump(exclude={"name"}) for w in want]


def test_a_word_names_a_label_of_the_axis_or_a_value_written_as_the_axis_writes_its_own():
    """Axis.named, by hand: case and blanks do not matter, a bare number takes the one unit every
    label is written in; a value the axis does not list keeps the axis's unit and its spelling."""
    from sslab.scenario.axes import Axis
    rtt = Axis(values=["25ms", "50ms"])
    assert [rtt.named("rtt", w) for w in ("25 MS", "50", "50.0", "30", "30MS", "30.50", "1s")] == \
        ["25ms", "50ms", "50ms", "30ms", "30ms", "30.5ms", "1s"]
    buf = Axis(values=["1BDP", "2BDP"])
    assert [buf.named("buffer", w) for w in ("2bdp", "0.5bdp", "3", "-1BDP")] == ["2BDP", "0.5BDP", "3BDP", "-1BDP"]
    # Labels in two units (or none): a number is taken as written.
    assert Axis(values=["1MB", "500KB"]).named("size", " 3 ") == "3"
    cc = Axis(values=["cubic", "bbr"], cca=True)
    assert [cc.named("cc", w) for w in ("BBR", "vegas")] == ["bbr", "vegas"]
