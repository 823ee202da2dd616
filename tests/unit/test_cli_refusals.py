"""Requests that cannot run are refused before anything starts, with exit status 2 and their reason."""

import os
import subprocess
import sys

import pytest

from sslab.paths import REPO_ROOT


@pytest.mark.parametrize("args, said", [
    (["wifi", "--reps", "0"], "REPS=0: at least 1"),
    (["blitzstart", "--links", "mars"], "no link mars"),
    (["fct-vs-size", "--links", "mars"], "LINKS: no link mars"),
    (["startup", "--suss-version", "2023"], "invalid choice: 2023"),
    (["startup", "--hosts", "fast"], "invalid choice: 'fast'"),
    (["matrix", "run", "table1", "--set", "CCA=vegasx"], "vegasx"),
    # every other command, each with one bad value
    (["image", "rebuild"], "invalid choice: 'rebuild'"),
    (["container", "push"], "invalid choice: 'push'"),
    (["fresh-check", "--main", "reproduce-tabel1"], "'reproduce-tabel1' is not a target of the Makefile"),
    (["vm-check", "--timeout", "0"], "0: more than 0 seconds"),
    (["run", "--timeout", "-5", "--", "true"], "-5: more than 0 seconds"),
    (["startup", "--reps", "0"], "REPS=0: at least 1"),
    (["startup", "--scenario", "topologies/e1-startpu.yaml"], "e1-startpu.yaml"),
    (["crosscheck", "--reps", "0"], "REPS=0: at least 1"),
    (["astart", "--settings", "mars"], "mars"),
    (["astart", "--jobs", "0"], "JOBS=0: at least 1"),
    (["blitzstart", "--reps", "two"], "REPS=two: a whole number"),
    (["trace", "generate", "--model", "gauss-markov", "--mean", "fast", "--cv", "0.1", "--tau", "1s",
      "--out", "/tmp/never-written.trace"], "fast"),
    (["trace", "show", "no-such.trace"], "no-such.trace"),
    (["clab", "no-such.yaml"], "no-such.yaml"),
    (["report", "no-such-run"], "no-such-run is not a run directory"),
    (["matrix", "run", "table1", "--iter", "0"], "ITER=0: at least 1"),
    (["matrix", "run-cells", "--matrix-dir", "m", "--plan", "no-plan.json", "--host", "h"], "no-plan.json"),
    (["matrix", "pack", "--matrix-dir", "m", "--plan", "no-plan.json", "--host", "h", "--out", "x.tar"],
     "no-plan.json: cannot read it"),
    (["matrix", "merge", "--matrix-dir", "m", "--tar", "no-cells.tar"], "no-cells.tar: no such tar of cells"),
    (["matrix", "report", "no-such-matrix"], "no-such-matrix"),
])
def test_refused_with_exit_2_before_anything_starts(tmp_path, args, said):
    env = {"SSLAB_RESULTS": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
           **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
    res = subprocess.run([sys.executable, "-m", "sslab", *args], capture_output=True, text=True, cwd=REPO_ROOT,
                         env=env, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert said in res.stderr
    assert not any(tmp_path.iterdir()), "something was written before the refusal"


def test_series_help_reads_the_repetitions_from_the_file(tmp_path, monkeypatch):
    from sslab import cli, paths
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    (tmp_path / "series.yaml").write_text("series: {name: x}\nscenario:\n  repetitions: 7\n")
    (tmp_path / "plain.yaml").write_text("name: y\nrepetitions: 4\n")
    (tmp_path / "none.yaml").write_text("name: z\n")
    assert cli.scenario_repetitions("series.yaml") == "7 in series.yaml"
    assert cli.scenario_repetitions("plain.yaml") == "4 in plain.yaml"
    assert cli.scenario_repetitions("none.yaml") == "none set in none.yaml"
