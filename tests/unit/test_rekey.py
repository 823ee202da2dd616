"""Keys made the old way (the scenario's model and the front end's source) linked under the keys runs
have now (the compiled plan and the code that runs it): sslab.matrix.rekey."""

import json
import os

import pytest

from .test_matrix import chosen_of
from sslab import matrix as mx
from sslab import paths
from sslab.experiment.keys import (LEGACY_TRAFFIC_CODE, cell_key, legacy_cell_key, scenario_key,
                                   traffic_code_version)
from sslab.matrix.rekey import rekey
from sslab.plan_record import write_matrix_plan

KERNEL = {"cubic": "built in", "bbr": "module tcp_bbr", "cubic_hs": "module tcp_sslab",
          "cubic_suss": "module tcp_sslab"}


@pytest.fixture
def old_store(tmp_path):
    """A Table 1 store as the old keys made it: two cells of this tree's code (old definition), both
    finished, and one cell of other code, finished too."""
    m = mx.load_matrix("table1")
    legacy = traffic_code_version(paths.REPO_ROOT, LEGACY_TRAFFIC_CODE)
    plan = mx.plan_matrix(m, chosen_of(m, {"CCA": "cubic", "BUF": "1BDP", "RTT": "25ms,50ms"}), 1,
                          "img", KERNEL, legacy, substrate="uml", clock="uml/inf-cpu")
    for c in plan.cells:
        c.key = legacy_cell_key(c.scenario, c.rep, "img", legacy, "uml/inf-cpu", c.boot)
    store = tmp_path / "table1" / "m"
    for c in plan.cells:
        (store / "cells" / c.key).mkdir(parents=True)
        (store / "cells" / c.key / "cell.json").write_text(json.dumps({"key": c.key}))
    (store / "plans").mkdir()
    write_matrix_plan(plan, store / "plans" / "plan-20261201T000000Z-aaaa.json")
    other = plan.model_copy(deep=True)
    other.code_version = "another tree"
    for c in other.cells:
        c.key = legacy_cell_key(c.scenario, c.rep, "img", "another tree", "uml/inf-cpu", c.boot)
        (store / "cells" / c.key).mkdir()
        (store / "cells" / c.key / "cell.json").write_text(json.dumps({"key": c.key}))
    write_matrix_plan(other, store / "plans" / "plan-20261201T000001Z-bbbb.json")
    return store, plan


def test_a_cell_of_this_trees_code_is_linked_under_its_new_key_and_nothing_else_moves(old_store, tmp_path):
    store, plan = old_store
    before = sorted(p.name for p in (store / "cells").iterdir())
    code = traffic_code_version()
    done = rekey(tmp_path)
    assert len(done.linked) == 2 and done.other_code == 2 and done.already == 0
    for c in plan.cells:
        new = store / "cells" / cell_key(c.plan, c.rep, "img", code, "uml/inf-cpu", c.boot)
        assert new.is_symlink() and os.readlink(new) == c.key             # relative: the tree can move
        assert json.loads((new / "cell.json").read_text()) == {"key": c.key}
        # What a plan made now calls the cell is that new key: the matrix finds it done.
    now = mx.plan_matrix(mx.load_matrix("table1"), chosen_of(
        mx.load_matrix("table1"), {"CCA": "cubic", "BUF": "1BDP", "RTT": "25ms,50ms"}), 1, "img", KERNEL, code,
        substrate="uml", clock="uml/inf-cpu")
    assert all((store / "cells" / c.key / "cell.json").is_file() for c in now.cells)
    # Every old directory is where it was; a second pass links nothing again.
    assert set(before) <= {p.name for p in (store / "cells").iterdir()}
    again = rekey(tmp_path)
    assert again.linked == [] and again.already == 2


def test_a_dry_run_links_nothing(old_store, tmp_path):
    store, _ = old_store
    before = sorted(p.name for p in (store / "cells").iterdir())
    assert len(rekey(tmp_path, dry_run=True).linked) == 2
    assert sorted(p.name for p in (store / "cells").iterdir()) == before


def test_the_words_of_the_file_are_not_in_a_key():
    plan = {"name": "s", "seed": 1, "runs": [], "asked": {"description": "one"}}
    assert scenario_key(plan, "i", "c", "uml/inf-cpu", "uml") == \
        scenario_key({**plan, "asked": {"description": "two"}}, "i", "c", "uml/inf-cpu", "uml")
    assert cell_key(plan, 0, "i", "c") == cell_key({**plan, "asked": None}, 0, "i", "c") != \
        cell_key({**plan, "seed": 2}, 0, "i", "c")


def test_a_series_run_of_this_trees_code_is_linked_under_its_new_key(tmp_path, monkeypatch):
    from sslab.experiment import series
    from sslab.experiment.keys import legacy_scenario_key
    from sslab.experiment.run import Compiled, scenario_as_run
    from sslab.records import plan_record
    s = scenario_as_run(paths.REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml", reps=1)
    model = s.model_dump(mode="json", by_alias=True)
    legacy = traffic_code_version(paths.REPO_ROOT, LEGACY_TRAFFIC_CODE)
    runs = {}
    for name, code in (("ours", legacy), ("theirs", "another tree")):
        run = tmp_path / "startup" / f"2026120{len(runs) + 1}T000000Z-{name}"
        run.mkdir(parents=True)
        (run / "manifest.json").write_text("{}")
        (run / "meta.json").write_text(json.dumps({"scenario": {"model": model}, "image": {"hash": "img"},
                                                   "clock": "uml/inf-cpu", "substrate": "uml"}))
        keys = tmp_path / "startup" / "keys"
        keys.mkdir(exist_ok=True)
        old = legacy_scenario_key(model, "img", code, "uml/inf-cpu", "uml")
        os.symlink(os.path.relpath(run, keys), keys / old)
        runs[name] = run
    done = rekey(tmp_path)
    assert len(done.linked) == 1 and done.other_code == 1
    new = scenario_key(plan_record(Compiled.of(s).plan), "img", traffic_code_version(), "uml/inf-cpu", "uml")
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    assert series.finished_run("startup", new) == runs["ours"].resolve()
