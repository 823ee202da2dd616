"""A cell's wall time by phase, from its console's phase marks (sslab.analysis.profile)."""

import json

import pytest

from sslab.analysis.profile import cell_profile, job_phases, parse_console_times, profile_table
from sslab.paths import REPO_ROOT

# A Table 1 cell's console (CUBIC-SUSS and CUBIC-HyStart runs beside a BBRv3 flow, 2 BDP, 100 ms).
CONSOLE = REPO_ROOT / "tests/data/profile/table1-cell.console.log.times"


def test_marks_are_read_with_their_wall_and_guest_times_and_other_lines_skipped():
    marks = parse_console_times(CONSOLE.read_text() + "   70.000 [  93.5] a kernel line\n")
    assert len(marks) == 18
    assert (marks[0].wall_s, marks[0].label, marks[0].guest_s) == (0.359, "userspace substrate=uml", 0.0)
    assert (marks[7].label, marks[7].guest_s) == ("run 000-suss-cubic_suss-r0", 20.034)


def test_phases_of_a_cell_by_hand():
    phases = job_phases(parse_console_times(CONSOLE.read_text()), end_wall_s=68.6)
    wall = {k: round(v["wall_s"], 3) for k, v in phases.items()}
    # boot: to userspace; init: to topology (3.725 - 0.359); fidelity: 7.042 to the first run at
    # 16.920 (its saturating flow included); set-up: run mark to traffic, twice (6.063 + 5.842);
    # traffic: 18.557 + 15.920; run end: traffic-done to the next run or teardown (2.462 + 2.416);
    # teardown: 68.180 to the job's end at 68.6.
    assert wall == {"boot": 0.359, "init": 3.366, "topology": 3.317, "fidelity": 9.878, "run set-up": 11.905,
                    "traffic": 34.477, "run end": 4.878, "teardown": 0.42}
    assert round(sum(wall.values()), 3) == 68.6
    # Guest seconds: the two traffic phases 30.525 + 30.433.
    assert round(phases["traffic"]["guest_s"], 3) == 60.958
    assert round(phases["init"]["guest_s"], 3) == 2.001  # init's sleep 2 (free under virtual time)


def test_an_unknown_mark_is_an_error_not_a_silent_phase():
    with pytest.raises(ValueError, match="unknown phase mark"):
        job_phases(parse_console_times("1.0 SSLAB-PHASE sideways uptime=1.0\n2.0 SSLAB:poweroff uptime=2\n"))


def test_a_cells_host_share_is_what_its_job_and_trace_read_out_leave(tmp_path):
    (tmp_path / "job/uml").mkdir(parents=True)
    (tmp_path / "job/uml/console.log.times").write_text(CONSOLE.read_text())
    (tmp_path / "cell.json").write_text(json.dumps({"wall_s": 97.7, "substrate_s": 68.6}))
    (tmp_path / "meta.json").write_text(json.dumps({"host_trace_seconds": 20.7}))
    p = cell_profile(tmp_path)
    assert p["host: trace read-out"]["wall_s"] == 20.7
    assert round(p["host: runner, report, manifest"]["wall_s"], 3) == 8.4  # 97.7 - 68.6 - 20.7
    table = profile_table([p, p])
    assert "Mean over 2 cell(s): 97.7 s" in table
    # 34.477 s of 97.7 (35 %), 60.958 guest s: 0.566 wall s per guest s.
    assert "| traffic | 34.48 | 35% | 60.96 | 0.566 |" in table
