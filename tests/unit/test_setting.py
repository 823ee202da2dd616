"""A run's setting as the reports print it (sslab.analysis.setting): read from its plan, and the
same words from the meta.json scenario copy of an archive written before plans carried them."""

import json

import pytest
import yaml

from sslab.analysis.setting import from_model, from_plan, setting_of
from sslab.paths import REPO_ROOT
from sslab.scenario import load_scenario, parse_scenario, to_plan
from sslab.scenario.load import scenario_file_data

SCENARIOS = sorted([*(REPO_ROOT / "experiments" / "scenarios").glob("*.yaml"),
                    *(REPO_ROOT / "tests" / "data").glob("*.yaml")])


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    return plan_record(to_plan(s))


def scenario_files():
    """Every scenario file of the repository: not a series or a matrix file (a `series` or `matrix`
    section beside its scenario template), nor a fragment others extend (no name of its own)."""
    return [f for f in SCENARIOS if not {"series", "matrix"} & set(yaml.safe_load(f.read_text()))
            and "name" in scenario_file_data(f)]


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_the_plan_and_the_scenario_copy_give_the_same_setting(path):
    s = load_scenario(path)
    plan = plan_data(s)
    assert from_plan(plan) == from_model(s.model_dump(mode="json", by_alias=True), plan["bottleneck"]["buffer_pkts"])


def experiment_parts():
    """Every part of every experiment that is not a matrix, as it compiles (a scenario over axes, a series
    setting, a scenario file): (id, data)."""
    from sslab.experiment.spec import experiment_files, load_experiment
    return [(f"{f.stem}/{p.name}", load_experiment(f).data_of(p)) for f in experiment_files()
            for p in load_experiment(f).parts]


@pytest.mark.parametrize("data", [d for _, d in experiment_parts()], ids=[i for i, _ in experiment_parts()])
def test_an_experiment_parts_plan_and_scenario_copy_give_the_same_setting(data):
    s = parse_scenario(data)
    plan = plan_data(s)
    assert from_plan(plan) == from_model(s.model_dump(mode="json", by_alias=True), plan["bottleneck"]["buffer_pkts"])


def test_there_are_scenario_files_to_compare():
    assert len(scenario_files()) >= 25


def test_the_settings_words_hand_read():
    data = scenario_file_data(REPO_ROOT / "tests" / "data" / "e1-smoke.yaml")
    data.update(description="a test", hosts={"model": "1gbe"}, module_params={"suss_version": 2025},
                repetitions=3, order="sequential")
    data["bottleneck"] = {**data["bottleneck"], "rate": "20mbit", "buffer": {"packets": 77}}
    s = from_plan(plan_data(parse_scenario(data)))
    assert (s.description, s.rate_mbit, s.buffer, s.buffer_pkts, s.repetitions, s.order) == (
        "a test", 20.0, "77 packets", 77, 3, "sequential")
    assert (s.hosts_model, s.suss_version, s.link, s.lans, s.sender_qdisc) == ("1gbe", 2025, "wired", "veth", "none")
    assert s.hosts.startswith("1gbe")
    data["bottleneck"]["buffer"] = {"bdp": "1.5BDP", "rtt": "40ms"}
    assert from_plan(plan_data(parse_scenario(data))).buffer == "1.5 BDP at 40 ms"
    data["bottleneck"]["buffer"] = {"time": "20ms"}
    assert from_plan(plan_data(parse_scenario(data))).buffer == "20 ms at the rate"


def test_the_path_marks_hand_worked():
    data = scenario_file_data(REPO_ROOT / "tests" / "data" / "e1-smoke.yaml")
    data["bottleneck"] = {**data["bottleneck"], "rate": "50mbit", "buffer": {"packets": 100}}
    data["pairs"] = [{"rtt": "40ms"}, {"rtt": "25ms"}]
    data["topology"] = {**(data.get("topology") or {}), "pairs": 2}
    m = from_plan(plan_data(parse_scenario(data))).marks
    # The shortest pair's BDP: 50e6 b/s x 0.025 s / 8 = 156,250 B in frames of 1500 + 14 B: 103.2.
    assert m.bdp_pkts == pytest.approx(156_250 / 1514)
    assert m.limit_pkts == pytest.approx(156_250 / 1514 + 100) and m.link_mbit == 50.0


def test_a_run_directory_is_read_from_its_plan_or_from_before(tmp_path):
    s = load_scenario(REPO_ROOT / "tests" / "data" / "e1-smoke.yaml")
    plan = {"format": "sslab.plan/3", **plan_data(s)}
    model = s.model_dump(mode="json", by_alias=True)
    (tmp_path / "meta.json").write_text(json.dumps({"format": "sslab.meta/1", "scenario": {"model": {
        **model, "description": "the meta copy"}}}))
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    assert setting_of(tmp_path).description == s.description
    # Written before the plan carried the file's words: the meta copy is read.
    del plan["asked"]
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    assert setting_of(tmp_path).description == "the meta copy"
