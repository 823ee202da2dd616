"""Experiment files (experiments/*.yaml): loading, selection, refusals, the make targets and the README's table."""

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from sslab.experiment import ExperimentError, experiment_files, experiments_table, load_experiment
from sslab.paths import REPO_ROOT
from sslab.substrate.freshcheck import make_targets

E1 = REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml"


def write(tmp_path, name: str, **fields) -> str:
    data = {"format": "sslab.experiment/1", "id": "E1", "title": "t", "reproduces": {"paper": "p", "figure": "f"},
            "what": "w", "report": "startup", "time_here": "not measured yet", **fields}
    f = tmp_path / f"{name}.yaml"
    f.write_text(yaml.safe_dump(data))
    return str(f)


def test_every_experiment_file_loads_and_names_a_target_of_its_own():
    names = [f.stem for f in experiment_files()]
    assert {"startup", "wifi", "fct-vs-size", "fairness", "reproduce-table1", "astart", "blitzstart"} <= set(names)
    for name in names:
        e = load_experiment(name)
        assert e.target == name and e.spec.id.startswith("E")
    # A file named like one of the Makefile's own rules would override its recipe.
    own_rules = make_targets() - set(names)
    assert "test" in own_rules and "startup" not in own_rules
    for name in names:
        assert name not in own_rules


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_tables_of_experiments_are_the_generated_one(page):
    text = (REPO_ROOT / page).read_text()
    block = re.search(r"<!-- experiments: .*? -->\n(.*?)<!-- /experiments -->", text, re.S)
    assert block, f"{page} has no generated table of experiments"
    assert block[1] == experiments_table(), "regenerate it: python -m sslab experiments --markdown"


def test_parts_are_chosen_by_name_tag_or_setting_value():
    e = load_experiment("fct-vs-size")
    # The file's default: the paper's four last hops (its claims are over all four), both RTTs.
    assert [p.name for p in e.choose(None)] == ["wired-40ms", "wired-150ms", "wifi-40ms", "wifi-150ms",
                                                "lte-40ms", "lte-150ms", "5g-40ms", "5g-150ms"]
    assert [p.name for p in e.choose(["150ms"])] == ["wired-150ms", "wifi-150ms", "lte-150ms", "5g-150ms"]
    assert [p.name for p in e.choose(["5g", "wired-40ms"])] == ["wired-40ms", "5g-40ms", "5g-150ms"]
    with pytest.raises(ExperimentError, match=r"nothing named mars \(parts: wired-40ms, .*also by .*lte"):
        e.choose(["wired", "mars"])
    a = load_experiment("astart")
    assert [p.name for p in a.choose(["extras"])] == ["liw", "fairness"]
    assert len(a.choose(["series"])) == len(a.parts) - 2
    assert a.kind_of(a.parts[-1]) == "astart/fairness"


def case_names(part) -> list[str]:
    from sslab.scenario import load_scenario, parse_scenario
    s = parse_scenario(part.data) if part.data is not None else load_scenario(part.path)
    return [c.name for c in s.cases]


def test_a_word_naming_a_case_narrows_that_case_axis_in_every_part_chosen():
    from sslab.scenario import parse_scenario
    from sslab.scenario.load import scenario_file_data
    # E1 lists Rapid Start; its default (the file's select) runs the paper's four, keyed as the file
    # without it: the same model, case for case.
    e1 = load_experiment("startup")
    [default] = e1.choose(None)
    assert case_names(default) == [f"{cc}-{size}" for cc in ("cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss")
                                   for size in ("5MB", "20MB")]
    data = scenario_file_data(E1)
    data["cases"]["axes"]["cc"] = ["cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss"]
    assert parse_scenario(default.data).model_dump() == parse_scenario(data).model_dump()
    [asked] = e1.choose(["cubic_hspp", "cubic_rapid"])
    assert case_names(asked) == ["cubic_hspp-5MB", "cubic_hspp-20MB", "cubic_rapid-5MB", "cubic_rapid-20MB"]
    # E4: variants narrow the cases of the default links; a link word keeps the default variants.
    e4 = load_experiment("fct-vs-size")
    parts = e4.choose(["cubic_rapid"])
    assert [p.name for p in parts] == [p.name for p in e4.choose(None)]
    assert all({n.split("-")[0] for n in case_names(p)} == {"cubic_rapid"} for p in parts)
    five_g = e4.choose(["5g"])
    assert [p.name for p in five_g] == ["5g-40ms", "5g-150ms"]
    assert {n.split("-")[0] for n in case_names(five_g[0])} == {"bbr", "cubic_hs", "cubic_suss"}
    # E2: a variant is a part (a series setting), chosen as parts are.
    e2 = load_experiment("wifi")
    assert [p.name for p in e2.choose(None)] == ["cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss"]
    assert [p.name for p in e2.choose(["cubic_rapid"])] == ["cubic_rapid"]
    with pytest.raises(ExperimentError, match=r"nothing named cubic_bogus .*cases by .*cubic_rapid"):
        e1.choose(["cubic_bogus"])


def test_a_start_no_file_lists_runs_beside_the_listed_ones_as_a_file_listing_it_would(tmp_path):
    """VARIANTS= may name any start the harness knows: offering a start edits no experiment file.  E1
    and E4 add it to their case axis of starts, E2 to its axis of starts (a part of its own);
    the scenarios are those of a file that lists it."""
    from sslab.scenario import parse_scenario
    from sslab.scenario.load import scenario_file_data
    e1 = load_experiment("startup")
    [asked] = e1.choose(["cubic_hs", "cubic_suss25"])
    data = scenario_file_data(E1)
    data["cases"]["axes"]["cc"] = ["cubic_hs", "cubic_suss25"]
    assert parse_scenario(asked.data).model_dump() == parse_scenario(data).model_dump()
    # Its runs go apart from the experiment's own, which the ledger and the docs read.
    assert e1.kind_of(asked) == "startup_start-cubic_suss25" and e1.kind_of(e1.choose(["cubic_hs"])[0]) == "startup"
    e4 = load_experiment("fct-vs-size")
    assert {n.split("-")[0] for p in e4.choose(["5g", "cubic_blitz"]) for n in case_names(p)} == {"cubic_blitz"}
    e2 = load_experiment("wifi")
    hs, new = e2.choose(["cubic_hs", "cubic_suss25"])
    assert (hs.name, new.name) == ("cubic_hs", "cubic_suss25") and case_names(new)[0] == "cubic_suss25-100KB"
    # E2's file listing it: its scenario over axes, the axis of starts with cubic_suss25 in it.
    listed = yaml.safe_load(e2.path.read_text())
    listed["axes"]["cc"].append("cubic_suss25")
    [same] = load_experiment(write(tmp_path, "wifi-listed", **listed)).choose(["cubic_suss25"])
    assert new.data == same.data and e2.kind_of(new) == "wifi/cubic_suss25_start-cubic_suss25"
    assert [p.name for p in e2.choose(["cubic_suss25"])] == ["cubic_suss25"]
    # A name the harness does not know names nothing; an experiment whose starts set other parameters
    # with them (E9's hints) takes none it does not list.
    with pytest.raises(ExperimentError, match=r"nothing named cubic_nope .*or beside them any start the harness "
                                              r"knows: .*cubic_suss25"):
        e2.choose(["cubic_nope"])
    with pytest.raises(ExperimentError, match="nothing named cubic_suss"):
        load_experiment("blitzstart").choose(["cubic_suss"])


def test_narrowing_cases_keeps_mapping_values_and_the_axes_none_names():
    from sslab.scenario.load import case_labels, narrow_cases
    data = {"cases": {"name": "{start}-{size}", "flows": [],
                      "axes": {"start": [{"start": "std", "cc": "cubic_std"},
                                         {"start": "1x", "cc": "cubic_blitz", "hint": "1x"}],
                               "size": {"values": ["1MB", "5MB"]}}}}
    assert case_labels(data) == {"start": ["std", "1x"], "size": ["1MB", "5MB"]}
    narrowed = narrow_cases(data, {"1x"})
    assert narrowed["cases"]["axes"] == {"start": [{"start": "1x", "cc": "cubic_blitz", "hint": "1x"}],
                                         "size": {"values": ["1MB", "5MB"]}}
    assert narrow_cases(data, {"5MB"})["cases"]["axes"]["size"] == {"values": ["5MB"]}
    # Every value named, or none: the data itself (the part runs as its file).
    assert narrow_cases(data, {"std", "1x"}) is data
    assert narrow_cases(data, {"nothing"}) is data
    assert case_labels({"cases": [{"name": "a", "flows": []}]}) == {}


def test_one_scenario_runs_into_the_output_itself_and_a_matrix_under_its_own_name():
    s = load_experiment("startup")
    assert s.kind == "scenario" and s.kind_of(s.parts[0]) == "startup" and s.repetitions() == [5]
    t = load_experiment("reproduce-table1")
    assert t.kind == "matrix" and t.output == "table1" and t.parts == []
    assert load_experiment("blitzstart").repetitions() == [3]  # the file's quick default over the scenarios' 30


def test_a_scenario_written_in_the_experiment_extends_files_relative_to_it(tmp_path):
    (tmp_path / "sub").mkdir()
    f = write(tmp_path / "sub", "e1-25ms", scenario={
        "extends": str(E1), "name": "e1-25ms", "pairs": [{"rtt": "25ms"}] * 5,
        "bottleneck": {"buffer": {"bdp": 1, "rtt": "25ms"}}})
    e = load_experiment(f)
    assert e.target == "e1-25ms" and e.kind == "scenario" and e.parts[0].path is None
    data = e.parts[0].data
    assert data["name"] == "e1-25ms" and data["repetitions"] == 5 and data["pairs"][0] == {"rtt": "25ms"}
    assert data["cases"]["axes"]["cc"] == ["cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss", "cubic_rapid",
                                          "cubic_search", "cubic_search4"]
    # relative to the experiment file's own directory
    (tmp_path / "base.yaml").write_text(E1.read_text().replace("extends: ../../topologies/dumbbell5.yaml",
                                                               f"extends: {REPO_ROOT}/topologies/dumbbell5.yaml"))
    g = write(tmp_path / "sub", "rel", scenario={"extends": "../base.yaml", "name": "rel"})
    assert load_experiment(g).parts[0].data["bottleneck"]["rate"] == "50mbit"


def test_every_cause_run_file_loads_and_reports_as_its_experiment_does():
    """experiments/causes/ holds runs of an experiment with one candidate cause changed (not make targets): each
    loads, and `report: fct-vs-size` is the report E4's file describes (none of the registry has that name)."""
    files = [f for f in sorted((REPO_ROOT / "experiments" / "causes").glob("*.yaml"))
             if str(yaml.safe_load(f.read_text()).get("format", "")).startswith("sslab.experiment/")]
    assert [f.name for f in files] == ["e4-under-5mb.yaml"]
    e = load_experiment(files[0])
    assert e.spec.report == load_experiment("fct-vs-size").spec.report and e.output == "e4-causes"
    assert [p.name for p in e.choose(None)] == ["wired-150ms", "wifi-150ms", "lte-150ms", "5g-150ms"]


def test_a_scenario_over_axes_is_one_part_per_combination_named_by_its_labels(tmp_path):
    """A series written in the experiment's file: its scenario a template, each combination of its axes'
    values a part, named by the labels joined by "-", tagged by its text values, its words the file's."""
    f = write(tmp_path, "grid", report="astart", scenario={
        "extends": str(E1), "name": "grid-{name}", "pairs": [{"rtt": "{rtt}"}] * 5,
        "bottleneck": {"buffer": {"bdp": "{bdp}", "rtt": "{rtt}"}}}, axes={"bdp": [1, 2], "rtt": ["25ms", "40ms"]})
    e = load_experiment(f)
    assert e.kind == "parts" and [p.name for p in e.parts] == ["1-25ms", "1-40ms", "2-25ms", "2-40ms"]
    assert [p.name for p in e.choose(["40ms"])] == ["1-40ms", "2-40ms"] and e.kind_of(e.parts[0]) == "grid/1-25ms"
    assert e.parts[3].data["name"] == "grid-2-40ms" and e.parts[3].data["bottleneck"]["buffer"] == {"bdp": 2,
                                                                                                    "rtt": "40ms"}
    assert e.parts[3].defined_in == Path(f) and e.parts[3].path is None


@pytest.mark.parametrize("fields, said", [
    ({"scenario": str(E1), "matrix": "x.yaml"}, "exactly one of scenario, parts or matrix (this one: scenario, matrix)"),
    ({}, "exactly one of scenario, parts or matrix (this one: none)"),
    ({"scenario": str(E1), "report": "table9"}, "report 'table9': no such report (known: startup, table1), or describe one"),
    ({"scenario": str(E1), "report": "astart"}, "report 'astart' is written over several runs: the experiment runs parts"),
    ({"scenario": str(E1), "report": "table1"}, "report 'table1' is a matrix's"),
    ({"matrix": str(REPO_ROOT / "experiments/scenarios/smoke.yaml"), "report": "startup"},
     "report 'startup' is not a matrix's"),
    ({"matrix": str(REPO_ROOT / "experiments/scenarios/smoke.yaml"), "report": "fairness"},
     "report 'fairness', but its matrix"),
    ({"matrix": {"name": "m", "iterations": 1}, "report": "table1", "scenario": {"name": "x"}},
     "a matrix written in place runs the file's scenario (a template written here) over its axes: give both"),
    ({"matrix": str(REPO_ROOT / "experiments/scenarios/smoke.yaml"), "report": "table1", "scenario": {"name": "x"},
      "axes": {"a": [1]}}, "exactly one of scenario, parts or matrix (this one: scenario, matrix)"),
    ({"scenario": str(E1), "format": "sslab.experiment/9"}, "sslab.experiment format 9, newer than this harness"),
    ({"scenario": "no-such.yaml"}, "no-such.yaml: no such file"),
    ({"scenario": str(E1), "select": ["x"]}, "nothing named x"),
    ({"parts": [{"scenario": str(E1)}]}, "needs a name"),
    ({"parts": [{"name": "a", "scenario": str(E1)}, {"name": "a", "scenario": str(E1)}]}, "part names repeat: a"),
    ({"scenario": {"extends": str(E1), "repetitions": 0}}, "repetitions"),
    ({"parts": [{"scenario": {"extends": str(E1), "name": "x-{rtt}"}, "axes": {"rtt": ["25ms"]}},
                {"scenario": {"extends": str(E1), "name": "y-{rtt}"}, "axes": {"rtt": ["25ms"]}, "tag": "again"}]},
     "part names repeat"),
    ({"parts": [{"name": "a", "scenario": str(E1), "axes": {"rtt": ["25ms"]}}]}, "give it a tag, not a name"),
    ({"parts": [{"series": "x.yaml"}]}, "a series file's settings are written in place"),
    ({"scenario": str(E1), "reps": 3}, "reps"),
    ({"parts": [{"name": "a", "scenario": str(E1)}], "axes": {"rtt": ["25ms"]}}, "axes fill a scenario template"),
    ({"scenario": {"extends": str(E1), "name": "x-{rtt}", "pairs": [{"rtt": "{rtt}"}] * 5}, "report": "astart",
      "axes": {"rtt": ["25ms", "fast"]}}, "setting fast"),
    ({"scenario": {"extends": str(E1), "name": "x"}, "report": "astart", "axes": {"rtt": ["25ms", "40ms"]}},
     "two parts run a scenario named x"),
])
def test_a_bad_experiment_file_is_refused_naming_what(tmp_path, fields, said):
    with pytest.raises(ExperimentError) as e:
        load_experiment(write(tmp_path, "bad", **fields))
    assert said in str(e.value)


def test_a_new_file_is_a_new_make_target(tmp_path):
    """The Makefile makes a target of every experiments/*.yaml: copy it beside a new file and ask make."""
    (tmp_path / "experiments").mkdir()
    (tmp_path / "Makefile").write_text((REPO_ROOT / "Makefile").read_text())
    (tmp_path / "experiments" / "my-idea.yaml").write_text("")
    (tmp_path / "pyproject.toml").write_text("")
    res = subprocess.run(["make", "-s", "-n", "-C", str(tmp_path), "my-idea", "REPS=2", "LINKS=wired", "CCA=cubic"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    cmd = next(ln for ln in res.stdout.splitlines() if "-m sslab run" in ln).split()
    assert cmd[:5] == [".venv/bin/python", "-m", "sslab", "run", "experiments/my-idea.yaml"]
    assert {"--reps", "2", "--select", "wired", "--set", "CCA=cubic"} <= set(cmd)
    assert "my-idea" in make_targets(tmp_path / "Makefile")


def test_two_parts_whose_runs_would_read_alike_are_refused(tmp_path):
    """A series whose scenario name ignores its settings would give every part's runs one name."""
    smoke = yaml.safe_load((REPO_ROOT / "tests/data/module-smoke.yaml").read_text())
    part = {"scenario": {**smoke, "name": "same", "pairs": [{"rtt": "{rtt}"}]},
            "axes": {"name": [{"name": "a", "rtt": "20ms"}, {"name": "b", "rtt": "40ms"}]}}
    with pytest.raises(ExperimentError, match="two parts run a scenario named same"):
        load_experiment(write(tmp_path, "x", report="astart", parts=[part]))


def test_a_key_held_by_another_command_is_waited_for_and_ctrl_c_still_stops_the_wait(tmp_path, monkeypatch):
    import fcntl
    import threading
    from sslab import paths
    from sslab.experiment.series import Stopping, key_lock
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    lock = tmp_path / "startup" / "keys" / ".k1.lock"
    lock.parent.mkdir(parents=True)
    said = []
    with open(lock, "a+") as other:  # another command's hold (flock: per open file, so it conflicts)
        fcntl.flock(other, fcntl.LOCK_EX)
        other.write("4242")
        other.flush()
        stop = threading.Event()
        threading.Timer(0.3, stop.set).start()
        with pytest.raises(Stopping):
            with key_lock("startup", "k1", "e1", stop, lambda m, **_: said.append(m)):
                pass
        assert said == ["startup: e1: another command (pid 4242) is running it (key k1); waiting for it"]
        release = threading.Timer(0.3, lambda: fcntl.flock(other, fcntl.LOCK_UN))
        release.start()
        with key_lock("startup", "k1", "e1", threading.Event(), lambda m, **_: said.append(m)) as waited:
            assert waited and lock.read_text() == str(__import__("os").getpid())
    with key_lock("startup", "k1", "e1", threading.Event(), print) as waited:
        assert not waited


def test_a_part_the_command_line_leaves_as_it_is_is_not_validated_again(monkeypatch):
    """The file's check at load validated each part; compiling one that nothing changed reuses that, to the plan
    a fresh validation gives, and one the command line changes (its repetitions) is validated anew."""
    from sslab.experiment import compile as compile_module
    from sslab.experiment.compile import compile_parts
    from sslab.records import plan_record
    from sslab.scenario import parse_scenario, to_plan
    e = load_experiment("astart")
    parts = e.choose(["bw-10mbit", "liw"])
    calls = []
    real = compile_module.parse_scenario
    monkeypatch.setattr(compile_module, "parse_scenario", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    kept = compile_parts(e, parts)
    assert calls == []
    assert [plan_record(c.compiled.plan) for c in kept] == [plan_record(to_plan(parse_scenario(e.data_of(p))))
                                                           for p in parts]
    again = compile_parts(e, parts, reps=3)
    assert calls == ["astart.yaml: bw-10mbit", "astart.yaml: liw"]
    assert [c.compiled.plan.asked.repetitions for c in again] == [3, 3]
