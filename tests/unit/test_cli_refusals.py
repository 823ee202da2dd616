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
