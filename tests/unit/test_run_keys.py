"""A series' scenario runs are keyed (sslab.experiment.keys.scenario_key) and found again by key."""

import pytest

from sslab import paths
from sslab.experiment import series
from sslab.experiment.keys import scenario_key

BASE = dict(plan={"name": "s", "seed": 2, "asked": {"description": "the file's words"}}, image_hash="img",
            code_version="code", clock="uml/inf-cpu", substrate="uml")


def test_the_key_follows_each_input_and_only_them():
    key = scenario_key(**BASE)
    assert key == scenario_key(**BASE) and len(key) == 20
    assert scenario_key(**{**BASE, "plan": {"seed": 2, "name": "s", "asked": {}}}) == key  # order, words: no input
    assert scenario_key(**{**BASE, "plan": {"seed": 2, "name": "s"}}) == key
    for change in ({"plan": {"name": "s", "seed": 3}}, {"image_hash": "other"}, {"image_hash": None},
                   {"code_version": "code2"}, {"clock": "qemu/mttcg"}, {"substrate": "vm"}):
        assert scenario_key(**{**BASE, **change}) != key, change


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    return tmp_path


def test_a_key_names_a_run_only_once_its_manifest_is_written(results):
    run_dir = results / "wifi" / "20261126T000000Z-abcd"
    run_dir.mkdir(parents=True)
    series.record_finished("wifi", "k1", run_dir)
    link = results / "wifi" / "keys" / "k1"
    assert link.is_symlink() and not link.readlink().is_absolute()   # the results tree can move
    assert series.finished_run("wifi", "k1") is None                 # no manifest: not finished
    (run_dir / "manifest.json").write_text("{}")
    assert series.finished_run("wifi", "k1") == run_dir.resolve()
    assert series.finished_run("wifi", "k2") is None and series.finished_run("startup", "k1") is None
    # a newer run of the same key replaces the link in one rename
    newer = results / "wifi" / "20261127T000000Z-ef01"
    newer.mkdir()
    (newer / "manifest.json").write_text("{}")
    series.record_finished("wifi", "k1", newer)
    assert series.finished_run("wifi", "k1") == newer.resolve()
    assert sorted(p.name for p in (results / "wifi" / "keys").iterdir()) == ["k1"]
