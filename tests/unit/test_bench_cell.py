"""BENCH=cell's arithmetic: two per-phase profiles side by side (runners/benchmarks.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "runners"))
benchmarks = pytest.importorskip("benchmarks")


def test_two_profiles_side_by_side_with_the_share_that_is_not_traffic():
    before = {"run set-up": 0.6, "traffic": 3.4, "host: trace read-out": 2.0}
    after = {"run set-up": 0.3, "traffic": 3.4, "host: trace read-out": 0.3}
    table, record = benchmarks.cell_comparison(before, after)
    # 6.0 s a cell before, 2.6 of it not traffic (43 %); 4.0 s after, 0.6 of it (15 %).
    assert record == {"before": {"s_per_cell": 6.0, "not_traffic_share": 0.433},
                      "after": {"s_per_cell": 4.0, "not_traffic_share": 0.15}}
    assert "| run set-up | 0.60 | 0.30 | 0.50 |" in table and "| traffic | 3.40 | 3.40 | 1.00 |" in table
    assert "| all | 6.00 | 4.00 | 0.67 |" in table and table.endswith("Not traffic: before 43%, after 15%")


def test_a_base_that_is_no_commit_is_refused_before_anything_runs(tmp_path):
    res = subprocess.run([sys.executable, str(REPO / "runners" / "benchmarks.py"), "cell", "--base", "no-such-rev",
                          "--results", str(tmp_path / "r")], capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO / "runners"), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 2 and "BASE=no-such-rev: not a commit" in res.stderr
    assert not (tmp_path / "r").exists()
