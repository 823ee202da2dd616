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


def test_a_shared_boots_phases_are_shared_out_among_its_cells(tmp_path):
    # The same console, as if a second repetition's cell ("cell 01") had begun at the second run.
    text = CONSOLE.read_text().replace("   44.002 SSLAB-PHASE run 001-",
                                       "   43.000 SSLAB-PHASE cell 01 uptime=56.770\n   44.002 SSLAB-PHASE run 001-")
    assert "cell 01" in text
    (tmp_path / "job/uml").mkdir(parents=True)
    (tmp_path / "job/uml/console.log.times").write_text(text)
    # Two cells in one boot of 68.6 s: each cell's wall_s and substrate_s are halves.
    (tmp_path / "cell.json").write_text(json.dumps({"wall_s": 40.0, "substrate_s": 34.3,
                                                    "boot": {"cells": ["a", "b"], "substrate_s": 68.6}}))
    (tmp_path / "meta.json").write_text(json.dumps({"host_trace_seconds": 2.0}))
    p = cell_profile(tmp_path)
    # The boot's 68.6 s of job, halved; "cell 01" opens the next run's set-up (42.395 to 43.000 was run
    # end, 43.000 to 44.002 now set-up: 2.462 - 1.002 + ... of run end, 11.905 + 1.002 of set-up).
    job = sum(v["wall_s"] for k, v in p.items() if not k.startswith("host"))
    assert round(job, 3) == 34.3
    assert round(p["traffic"]["wall_s"], 4) == round(34.477 / 2, 4)
    assert round(p["run set-up"]["wall_s"], 4) == round((11.905 + 1.002) / 2, 4)
    assert round(p["run end"]["wall_s"], 4) == round((4.878 - 1.002) / 2, 4)
    assert round(p["host: runner, report, manifest"]["wall_s"], 3) == 3.7  # 40.0 - 34.3 - 2.0


def test_a_shared_boots_other_host_work_is_the_boots_not_each_cells_floored_at_zero(tmp_path):
    # Three cells in one boot (the console's 68.6 s of job): 100 s of wall, read-outs of 1, 1 and 20 s
    # (the third's captures checked by tshark).  The boot's other work is 100 - 68.6 - 22 = 9.4 s,
    # 3.1333 s a cell.  Cell by cell (33.3 - 22.9 - read-out) it would be 9.4, 9.4 and -9.6 floored
    # at 0: a mean of 6.27 s, twice the boot's.
    keys = ["a", "b", "c"]
    for key, trace in zip(keys, (1.0, 1.0, 20.0)):
        d = tmp_path / key
        (d / "job/uml").mkdir(parents=True)
        (d / "job/uml/console.log.times").write_text(CONSOLE.read_text())
        (d / "cell.json").write_text(json.dumps({"wall_s": 33.3, "substrate_s": 22.9, "boot": {
            "cells": keys, "wall_s": 100.0, "substrate_s": 68.6}}))
        (d / "meta.json").write_text(json.dumps({"host_trace_seconds": trace}))
    profiles = [cell_profile(tmp_path / k) for k in keys]
    assert [round(p["host: runner, report, manifest"]["wall_s"], 4) for p in profiles] == [3.1333] * 3
    assert [p["host: trace read-out"]["wall_s"] for p in profiles] == [1.0, 1.0, 20.0]
    # The table's cell is then the boot's wall time shared out: 100 / 3.
    assert "Mean over 3 cell(s): 33.3 s" in profile_table(profiles)
    # Without the boot's other cells beside it, a cell has only its own figures: 33.3 - 22.9 - 1.
    (tmp_path / "b" / "meta.json").unlink()
    assert round(cell_profile(tmp_path / "a")["host: runner, report, manifest"]["wall_s"], 4) == 9.4
