"""Experiment files run end to end on the testbed: a new experiment is one file, run by `sslab run`."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from sslab.paths import REPO_ROOT

from .helpers import experiment, keyed, processes_matching, sslab

pytestmark = pytest.mark.vm


def runs(run_dir):
    return [json.loads(p.read_text()) for p in sorted((run_dir / "job/out/runs").glob("*/run.json"))]


def test_a_scenario_written_in_the_experiment_runs_with_its_own_rtt_and_name(tmp_path, image):
    """E1's shape at 25 ms as a single file: extends a scenario, changes the RTT and buffer, names its output."""
    f = experiment(tmp_path, "smoke-25ms", output="smoke-25ms", scenario={
        "extends": str(REPO_ROOT / "tests/data/module-smoke.yaml"), "name": "smoke-25ms",
        "bottleneck": {"buffer": {"bdp": 1, "rtt": "25ms"}}, "pairs": [{"rtt": "25ms"}],
        "cases": {"name": "{cc}", "flows": [{"pair": 1, "cc": "{cc}", "size": "1MB", "start": "0s"}],
                  "axes": {"cc": ["cubic_hs", "cubic_suss"]}}})
    results = tmp_path / "results"
    res = sslab(["run", f], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (results / "smoke-25ms" / "latest").resolve()
    meta = json.loads((run_dir / "meta.json").read_text())
    # The run names the file its words are in (the experiment's, with its hash) and its part; the scenario
    # as it ran is its plan.json and meta.json's model, and no scenario file is written beside the runs.
    assert {k: meta["scenario"][k] for k in ("path", "sha256", "experiment", "part")} == {
        "path": f, "sha256": hashlib.sha256(Path(f).read_bytes()).hexdigest(), "experiment": f, "part": "smoke-25ms"}
    assert meta["scenario"]["model"]["name"] == "smoke-25ms" and not list(results.rglob("*.yaml"))
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
    # Only the part chosen ran: the other has no directory of its own (the store's cells are the runs).
    assert "first" not in {p.name for p in (results / "two-parts").iterdir()} and len(cells(results, "two-parts")) == 1
    run_dir = (results / "two-parts" / "second" / "latest").resolve()
    assert run_dir in cells(results, "two-parts")
    assert len(runs(run_dir)) == 4  # module-smoke's four variants, once each


def test_a_start_the_file_does_not_list_runs_beside_its_own_and_apart(tmp_path, image):
    """`VARIANTS=cubic_hs,cubic_suss25` on an experiment that lists cubic_hs and cubic_suss: SUSS 2025
    (pinned by its name) runs beside cubic_hs with no file edited, its runs under their own directory."""
    f = experiment(tmp_path, "two-starts", output="two-starts", scenario={
        "extends": str(REPO_ROOT / "tests/data/module-smoke.yaml"), "name": "two-starts",
        "cases": {"name": "{cc}", "flows": [{"pair": 1, "cc": "{cc}", "size": "1MB", "start": "0s"}],
                  "axes": {"cc": ["cubic_hs", "cubic_suss"]}}})
    results = tmp_path / "results"
    res = sslab(["run", f, "--select", "cubic_hs,cubic_suss25", "--reps", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # Nothing goes to the experiment's own directory (no scenario is written out: the plan is the record).
    assert sorted(p.name for p in results.iterdir() if p.name.startswith("two-starts")) == \
        ["two-starts_start-cubic_suss25"]
    got = runs((results / "two-starts_start-cubic_suss25" / "latest").resolve())
    assert sorted(r["flows"][0]["cc_used"] for r in got) == ["cubic_hs", "cubic_suss25"]
    [suss] = [r["flows"][0] for r in got if r["flows"][0]["cc_used"] == "cubic_suss25"]
    assert suss["version"] == "2025" and suss["bytes_received"] == 1_000_000
    res = sslab(["run", f, "--select", "cubic_nope", "--reps", "1"], results)
    assert res.returncode == 2 and "nothing named cubic_nope" in res.stderr


def cells(results, store: str) -> list:
    """The finished cells of results/<store>/ (an experiment's parts, run through the controller)."""
    d = results / store / "cells"
    return sorted(p for p in d.iterdir() if not p.name.startswith(".")) if d.is_dir() else []


def partial_cells(results, store: str) -> list:
    d = results / store / "cells"
    return sorted(d.glob(".partial-*")) if d.is_dir() else []


def test_a_series_reruns_only_what_has_not_finished(tmp_path, image):
    """Each part is a cell, keyed; two parts of one scenario are one cell, run once and linked for both; a
    rerun of the same experiment runs none again, and one whose key is gone (or that never finished)
    runs again."""
    smoke = str(REPO_ROOT / "tests/data/module-smoke.yaml")
    f = experiment(tmp_path, "keyed", parts=[{"name": "first", "scenario": smoke}, {"name": "second", "scenario": smoke}])
    results = tmp_path / "results"
    res = sslab(["run", f, "--jobs", "2"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    first, second = keyed(results, "keyed/first"), keyed(results, "keyed/second")
    assert len(first) == 1 and first == second   # one scenario: one cell, one run, named by both parts' keys
    assert list(first.values()) == cells(results, "keyed")
    assert all((d / "manifest.json").is_file() for d in first.values())
    assert "2 part(s) in 1 cell(s), 0 already run, 1 to run on 1 host(s) (localhost)" in res.stdout, \
        res.stdout[-3000:]
    # Again: nothing runs, and the report is the same runs'.
    res = sslab(["run", f, "--jobs", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stdout.count("already run, key") == 1 and " to run on " not in res.stdout, res.stdout[-3000:]
    assert cells(results, "keyed") == list(first.values())
    # Another repetition count is another run.
    res = sslab(["run", f, "--jobs", "1", "--select", "first", "--reps", "2"], results)
    assert res.returncode == 0 and "already run, key" not in res.stdout, res.stdout[-3000:]
    assert len(keyed(results, "keyed/first")) == 2 and len(cells(results, "keyed")) == 2


def test_ctrl_c_in_a_series_keeps_the_finished_runs_and_the_rerun_runs_the_rest(tmp_path, image):
    smoke = str(REPO_ROOT / "tests/data/module-smoke.yaml")
    longer = tmp_path / "longer.yaml"   # module-smoke with 200 MB flows: its four runs take some 10 s here
    longer.write_text(yaml.safe_dump({"extends": smoke, "name": "module-smoke-200mb", "cases": {
        "name": "{cc}", "flows": [{"pair": 1, "cc": "{cc}", "size": "200MB", "start": "0s"}],
        "axes": {"cc": ["cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss"]}}}))
    f = experiment(tmp_path, "stopped", parts=[{"name": "first", "scenario": smoke},
                                               {"name": "second", "scenario": str(longer)}])
    results = tmp_path / "results"
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    # As a terminal's Ctrl-C: SIGINT to the command's process group, once the first scenario has finished.
    proc = subprocess.Popen([sys.executable, "-m", "sslab", "run", f, "--jobs", "1"], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.monotonic() + 600
    while not cells(results, "stopped") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    # ... and the second's first run has begun (the guest makes its directory as it starts it)
    while not list(results.glob("stopped/cells/.partial-*/job/out/runs/000-*")) and time.monotonic() < deadline \
            and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, proc.stdout.read()[-3000:]
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out[-3000:]
    [kept] = keyed(results, "stopped/first").values()
    assert keyed(results, "stopped/second") == {} and cells(results, "stopped") == [kept]
    # The run stopped part-way never counts: its partial cell is removed with the runner's stop.
    assert "1 partial cell(s) removed" in out and partial_cells(results, "stopped") == [], out[-3000:]
    assert not processes_matching(str(results)), "a testbed of the stopped run is still running"
    # The rerun runs only the second scenario, into a new directory; the first's run is untouched.
    manifest = (kept / "manifest.json").read_bytes()
    res = sslab(["run", f, "--jobs", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stdout.count("already run, key") == 1, res.stdout[-3000:]
    assert keyed(results, "stopped/first") == {k: kept for k in keyed(results, "stopped/first")}
    assert (kept / "manifest.json").read_bytes() == manifest
    [done] = keyed(results, "stopped/second").values()
    assert (done / "manifest.json").is_file() and cells(results, "stopped") == sorted([kept, done])


def test_a_one_scenario_experiment_is_keyed_too_and_again_runs_it_anew(tmp_path, image):
    f = experiment(tmp_path, "single", scenario=str(REPO_ROOT / "tests/data/module-smoke.yaml"))
    results = tmp_path / "results"
    res = sslab(["run", f], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [(key, first)] = keyed(results, "single").items()
    res = sslab(["run", f], results)
    assert res.returncode == 0 and res.stdout.count("already run, key") == 1, res.stdout[-3000:]
    assert f"report: {first / 'report.md'}" in res.stdout and cells(results, "single") == [first]
    before = runs(first)
    res = sslab(["run", f, "--again"], results)
    assert res.returncode == 0 and "already run, key" not in res.stdout, res.stdout[-3000:]
    # The first run set aside, kept whole; its key names the new one, in the cell's place.
    [aside] = (results / "single" / "failed").glob(f"{key}-*-set-aside")
    assert "run again (AGAIN=1)" in (aside / "error.txt").read_text() and (aside / "manifest.json").is_file()
    assert keyed(results, "single") == {key: first} and runs(aside) == before
    # under virtual time the key's two runs are the same runs
    assert [r["flows"][0]["fct_s"] for r in before] == [r["flows"][0]["fct_s"] for r in runs(first)]


def test_parts_run_as_cells_on_an_inventorys_hosts_with_the_bytes_of_a_run_here(tmp_path, image):
    """INVENTORY= on a series: each part a cell dealt to the hosts through Ansible, keyed as a run here
    alone is (a rerun, here or there, runs neither again), and with the bytes a run here gives."""
    from sslab.analysis.oracle import compare_runs
    smoke = str(REPO_ROOT / "tests/data/module-smoke.yaml")
    for name, rtt, ccs in (("a", "50ms", ["cubic_hs", "cubic_suss"]), ("b", "25ms", ["cubic_hs"])):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({
            "extends": smoke, "name": f"parts-{name}", "pairs": [{"rtt": rtt}],
            "bottleneck": {"buffer": {"bdp": 1, "rtt": rtt}}, "capture": {"pcap": True, "traces": True},
            "cases": {"name": "{cc}", "flows": [{"pair": 1, "cc": "{cc}", "size": "1MB", "start": "0s"}],
                      "axes": {"cc": ccs}}}))
    f = experiment(tmp_path, "fleet-parts", parts=[{"name": "a", "scenario": str(tmp_path / "a.yaml")},
                                                   {"name": "b", "scenario": str(tmp_path / "b.yaml")}])
    results = tmp_path / "results"
    inventory = str(REPO_ROOT / "playbooks/inventory/localhost-twice.ini")
    res = sslab(["run", f, "--inventory", inventory], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "2 part(s) in 2 cell(s), 0 already run, 2 to run on 2 host(s) (a, b)" in res.stdout, res.stdout[-3000:]
    cells = results / "fleet-parts" / "cells"
    [(key_a, run_a)] = keyed(results, "fleet-parts/a").items()
    [(key_b, run_b)] = keyed(results, "fleet-parts/b").items()
    assert {run_a, run_b} == {cells / key_a, cells / key_b} and key_a != key_b
    # A part run on a host is a run directory like any other: its run report too (a matrix's cells have none).
    assert all((d / "manifest.json").is_file() and (d / "cell.json").is_file() and (d / "report.md").is_file()
               for d in (run_a, run_b))
    # Again, on the hosts or here: nothing runs.
    res = sslab(["run", f, "--inventory", inventory], results)
    assert res.returncode == 0 and res.stdout.count("already run, key") == 2, res.stdout[-3000:]
    res = sslab(["run", f], results)
    assert res.returncode == 0 and res.stdout.count("already run, key") == 2, res.stdout[-3000:]
    assert sorted(p.name for p in cells.iterdir() if not p.name.startswith(".")) == sorted([key_a, key_b])
    # Part a run here anyway: the same bytes as the cell the hosts ran, flow by flow, ACK by ACK, packet by packet.
    res = sslab(["run", f, "--select", "a", "--again"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "to run on 1 host(s) (localhost)" in res.stdout, res.stdout[-3000:]
    [(_, here)] = keyed(results, "fleet-parts/a").items()
    [there] = (results / "fleet-parts" / "failed").glob(f"{key_a}-*-set-aside")
    assert here == run_a and json.loads((here / "cell.json").read_text())["host"] == "localhost"
    rows = compare_runs(there, here)
    assert len(rows) == 2 and all(r.identical for r in rows), rows
