"""Experiment files run end to end on the testbed: a new experiment is one file, run by `sslab run`."""

import hashlib
import json

import pytest
import yaml

from sslab.paths import REPO_ROOT

from .helpers import sslab

pytestmark = pytest.mark.vm


def experiment(tmp_path, name: str, **fields) -> str:
    data = {"format": "sslab.experiment/1", "id": "E1", "title": name, "what": "a test",
            "reproduces": {"paper": "none", "figure": "none"}, "report": "startup", "time_here": "n/a", **fields}
    f = tmp_path / f"{name}.yaml"
    f.write_text(yaml.safe_dump(data))
    return str(f)


def runs(run_dir):
    return [json.loads(p.read_text()) for p in sorted((run_dir / "job/out/runs").glob("*/run.json"))]


def test_a_scenario_written_in_the_experiment_runs_with_its_own_rtt_and_name(tmp_path, image):
    """E1's shape at 25 ms as a single file: extends a scenario, changes the RTT and buffer, names its output."""
    f = experiment(tmp_path, "smoke-25ms", output="smoke-25ms", scenario={
        "extends": str(REPO_ROOT / "tests/data/module-smoke.yaml"), "name": "smoke-25ms",
        "bottleneck": {"buffer": {"bdp": 1, "rtt": "25ms"}}, "pairs": [{"rtt": "25ms"}],
        "cases": {"name": "{cc}", "flows": [{"pair": 1, "cc": "{cc}", "size": "1MB", "start": "0s"}],
                  "matrix": {"cc": ["cubic_hs", "cubic_suss"]}}})
    results = tmp_path / "results"
    res = sslab(["run", f], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (results / "smoke-25ms" / "latest").resolve()
    [written] = [p for p in (run_dir.parent / "scenarios").glob("*/smoke-25ms.yaml") if not p.parent.is_symlink()]
    meta = json.loads((run_dir / "meta.json").read_text())
    # The run names the self-contained scenario it ran, written down beside it.
    assert meta["scenario"]["path"] == str(written)
    assert meta["scenario"]["sha256"] == hashlib.sha256(written.read_bytes()).hexdigest()
    got = runs(run_dir)
    assert sorted(r["flows"][0]["cc_used"] for r in got) == ["cubic_hs", "cubic_suss"]
    for r in got:  # the path's measured base RTT is the experiment's, not module-smoke's 50 ms
        assert abs(r["fidelity"]["base_rtt_ms"]["1"] - 25) < 0.5 and r["flows"][0]["bytes_received"] == 1_000_000
    assert (run_dir / "report.md").is_file() and "report: " in res.stdout


def test_parts_run_as_selected_each_into_its_own_directory(tmp_path, image):
    smoke = str(REPO_ROOT / "tests/data/module-smoke.yaml")
    f = experiment(tmp_path, "two-parts", parts=[{"name": "first", "scenario": smoke, "tag": "t"},
                                                 {"name": "second", "scenario": smoke}])
    results = tmp_path / "results"
    res = sslab(["run", f, "--select", "second", "--reps", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert sorted(p.name for p in (results / "two-parts").iterdir()) == ["second"]
    run_dir = (results / "two-parts" / "second" / "latest").resolve()
    assert len(runs(run_dir)) == 4  # module-smoke's four variants, once each
