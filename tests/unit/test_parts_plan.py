"""An experiment's parts planned as cells for an inventory's hosts (sslab.matrix.parts.plan_parts)."""

from sslab import paths
from sslab.experiment.keys import scenario_key
from sslab.experiment.run import Compiled, scenario_as_run
from sslab.matrix.parts import cell_key_of, plan_parts
from sslab.records import plan_record
from sslab.scenario import scenario_from_dump

E1 = paths.REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml"


def test_a_part_is_one_cell_keyed_as_its_run_here_alone():
    s = scenario_as_run(E1, reps=2)
    other = scenario_as_run(E1, reps=3)
    plan = plan_parts("startup", "E1", "startup", [("a", Compiled.of(s)), ("b", Compiled.of(s)),
                                                   ("c", Compiled.of(other))], "img", ["cubic"], "code",
                      "uml", "uml/inf-cpu")
    # The same scenario under two parts' names is one cell; another repetition count is another.
    assert [c.setting for c in plan.cells] == [{"part": "a"}, {"part": "c"}]
    here_alone = scenario_key(plan_record(Compiled.of(s).plan), "img", "code", "uml/inf-cpu", "uml")
    assert plan.cells[0].key == here_alone == cell_key_of(plan, Compiled.of(s)) != plan.cells[1].key
    # A cell's scenario holds all its repetitions (one boot), and reads back as the scenario run.
    cell = plan.cells[0]
    assert cell.rep == 0 and cell.scenario["repetitions"] == 2
    assert scenario_from_dump(cell.scenario) == s
    assert plan.image_hash == "img" and plan.clock == "uml/inf-cpu" and plan.selection == {"part": ["a", "b", "c"]}


def test_a_one_scenario_experiment_is_a_matrix_with_no_axes():
    s = scenario_as_run(E1, reps=2)
    plan = plan_parts("startup", "E1", "startup", [("startup", Compiled.of(s))], None, [], "code", "uml",
                      "uml/inf-cpu", series=False)
    # One cell, no axis and no setting: its key is the one its run has alone (a native host's: no image).
    assert plan.selection == {} and [c.setting for c in plan.cells] == [{}]
    assert plan.cells[0].key == scenario_key(plan_record(Compiled.of(s).plan), None, "code", "uml/inf-cpu", "uml")
    # The cell carries the plan its testbed runs: the scenario compiled once, every run of it (two
    # repetitions of the file's seven starts at two sizes).
    assert plan.cells[0].plan["name"] == s.name and len(plan.cells[0].plan["runs"]) == len(s.run_order()) == 2 * 7 * 2
