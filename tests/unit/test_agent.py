"""The agent runs a job, stops it at its timeout, and records how it ended."""

import json
import time
from pathlib import Path

import pytest

from sslab.substrate import agent
from sslab.substrate.job import JobError, JobSpec


def run(tmp_path: Path, argv, timeout=10.0):
    job_dir = tmp_path / "job"
    JobSpec(argv=argv, timeout_s=timeout).write(job_dir)
    status = agent.run_job(str(job_dir))
    assert json.loads((job_dir / "out/status.json").read_text()) == status
    return job_dir, status


def test_exit_status_and_output_come_back(tmp_path):
    job_dir, status = run(tmp_path, ["sh", "-c", "echo hello; echo oops >&2; exit 7"])
    assert status["exit_code"] == 7 and status["timed_out"] is False
    assert (job_dir / "out/stdout.log").read_text() == "hello\n"
    assert (job_dir / "out/stderr.log").read_text() == "oops\n"


def test_job_past_its_timeout_is_killed_with_its_children(tmp_path):
    # The job starts a background child that would outlive a naive kill.
    script = "sleep 300 & echo $! > child.pid; sleep 300"
    t0 = time.monotonic()
    job_dir, status = run(tmp_path, ["sh", "-c", script], timeout=1.0)
    elapsed = time.monotonic() - t0
    assert status["timed_out"] is True
    assert "timeout of 1 s" in status["error"]
    assert elapsed < 1.0 + agent.KILL_GRACE_S + 2
    child = int((job_dir / "out/child.pid").read_text())
    time.sleep(0.2)
    assert not alive(child), "the job's background child survived the timeout"


def alive(pid: int) -> bool:
    """True if pid runs (a zombie waiting for its new parent to reap it is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_term_ignoring_job_gets_sigkill(tmp_path, monkeypatch):
    monkeypatch.setattr(agent, "KILL_GRACE_S", 0.5)
    _, status = run(tmp_path, ["sh", "-c", "trap '' TERM; sleep 300"], timeout=0.5)
    assert status["timed_out"] is True and status["exit_code"] == -9


def test_missing_program_is_reported(tmp_path):
    _, status = run(tmp_path, ["/nonexistent/program"])
    assert status["exit_code"] is None and "cannot start job" in status["error"]


def test_job_dir_is_never_reused(tmp_path):
    job_dir, _ = run(tmp_path, ["true"])
    with pytest.raises(JobError, match="not empty"):
        JobSpec(argv=["true"], timeout_s=1).write(job_dir)


@pytest.mark.parametrize("argv,timeout", [([], 1), (["x"], 0), (["x"], -1), ([""], 1)])
def test_bad_job_specs_are_refused(argv, timeout):
    with pytest.raises(JobError):
        JobSpec(argv=argv, timeout_s=timeout)


def test_a_jobs_tools_come_first_on_its_path_and_leave_with_it(tmp_path):
    from sslab.substrate.job import remove_tools
    tool = tmp_path / "bin/containerlab"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho brought-along \"$@\"\n")
    tool.chmod(0o755)
    job_dir = tmp_path / "job"
    JobSpec(argv=["containerlab", "version"], timeout_s=10, tools={"containerlab": str(tool)}).write(job_dir)
    placed = job_dir / "tools/containerlab"
    assert placed.stat().st_ino == tool.stat().st_ino      # hard-linked, not copied (one filesystem)
    status = agent.run_job(str(job_dir))
    assert status["exit_code"] == 0 and (job_dir / "out/stdout.log").read_text() == "brought-along version\n"
    remove_tools(job_dir)
    assert not (job_dir / "tools").exists() and tool.exists()
    with pytest.raises(JobError, match="does not exist"):
        JobSpec(argv=["true"], timeout_s=1, tools={"x": str(tmp_path / "nothing")}).write(tmp_path / "j2")
