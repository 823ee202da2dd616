"""Requests that cannot run are refused before anything starts, with exit status 2 and their reason."""

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
])
def test_refused_with_exit_2_before_anything_starts(tmp_path, args, said):
    res = subprocess.run([sys.executable, "-m", "sslab", *args], capture_output=True, text=True, cwd=REPO_ROOT,
                         env={"SSLAB_RESULTS": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, timeout=120)
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
