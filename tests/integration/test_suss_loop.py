"""SUSS 2024 in closed loop on its authors' own path (`sslab suss-loop`): our module's decisions, on
ACKs of its own making, round by round beside their log's, within the targets."""

import os
import re
import subprocess
import sys

import pytest

from sslab.paths import REPO_ROOT

pytestmark = pytest.mark.vm


def test_suss_2024_takes_their_decisions_in_closed_loop(tmp_path):
    env = {**os.environ, "SSLAB_RESULTS": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "sslab", "suss-loop"], capture_output=True, text=True,
                         cwd=REPO_ROOT, env=env, timeout=1800)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-3000:]
    text = (next((tmp_path / "suss-loop").glob("2*")) / "conformance.md").read_text()
    held = text.split("## SUSS 2025")[0]
    cells = ([c.strip() for c in line.strip().strip("|").split("|")] for line in held.splitlines()
             if re.match(r"\| (\d|cap|stop) ", line))
    rows = {(r[0], r[1]): r[2:] for r in cells}
    # G as their log in rounds 2, 3 and 4; the cap in round 5; the stop by the cap.
    assert [rows[(str(r), "G")][:2] for r in (2, 3, 4)] == [["4", "4"], ["4", "4"], ["2", "2"]]
    assert rows[("cap", "round")][:2] == ["5", "5"] and rows[("stop", "type")][:2] == ["cap", "cap"]
    assert "**NO**" not in held
    # The stop's cwnd within 5 % of their 609.
    assert abs(int(rows[("stop", "cwnd")][1]) - 609) <= 0.05 * 609
