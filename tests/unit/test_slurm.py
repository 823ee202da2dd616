"""The Slurm executor's own logic (sslab.matrix.slurm): tasks from boots, what squeue, sacct and
scontrol print, where the nodes look, what a user may pass.  A real one-node cluster runs it in
tests/integration/test_slurm.py."""

import subprocess
from pathlib import Path

import pytest

from sslab.matrix.slurm import (SlurmSettings, TaskState, check_shared, group_tasks, job_name, node_local,
                                parse_sacct, parse_scontrol, parse_squeue, task_script)
from sslab.matrix.spec import MatrixError


def test_a_task_is_a_boot_unless_more_cells_are_asked_for():
    boots = [["a1", "a2", "a3"], ["b1"], ["c1", "c2"], ["d1"]]
    assert group_tasks(boots, None) == boots
    # Whole boots joined until a task holds at least 3 cells: a boot is never split.
    assert group_tasks(boots, 3) == [["a1", "a2", "a3"], ["b1", "c1", "c2"], ["d1"]]
    assert group_tasks(boots, 100) == [["a1", "a2", "a3", "b1", "c1", "c2", "d1"]]
    assert group_tasks(boots, 1) == boots


def test_squeue_lines_one_task_each():
    text = "3|RUNNING|None|node7\n4|PENDING|Resources|\n5|PENDING|ReqNodeNotAvail, UnavailableNodes:node7|\n"
    got = parse_squeue(text)
    assert got[3] == TaskState("RUNNING", "", node="node7")
    assert got[4].state == "PENDING" and got[4].reason == "Resources"
    assert got[5].reason == "ReqNodeNotAvail, UnavailableNodes:node7"
    # squeue's own error for an array it no longer knows: nothing queued.
    assert parse_squeue("slurm_load_jobs error: Invalid job id specified\n") == {}


def test_sacct_keeps_the_first_word_of_a_state_and_its_exit_code():
    text = ("77_0|COMPLETED|0:0|None|n1\n77_1|CANCELLED by 1001|0:15|None|n2\n77_2|TIMEOUT|0:0|TimeLimit|n1\n"
            "77_3|NODE_FAIL|1:0|None|n3\n78_0|COMPLETED|0:0|None|n1\n")
    got = parse_sacct(text, "77")
    assert set(got) == {0, 1, 2, 3}  # another job's line is not this array's
    assert not got[0].failed()
    assert got[1].state == "CANCELLED" and got[1].exit_code == "0:15" and got[1].failed()
    assert got[2].state == "TIMEOUT" and got[2].reason == "TimeLimit" and got[2].failed()
    assert got[3].failed()
    # Completed, but the task's command exited non-zero (a cell failed): a failure too.
    assert TaskState("COMPLETED", exit_code="1:0").failed()


def test_scontrol_one_line_a_task():
    text = ("JobId=12 ArrayJobId=10 ArrayTaskId=2 JobName=sslab:t UserId=u(1001) JobState=FAILED "
            "Reason=NonZeroExitCode Dependency=(null) ExitCode=1:0 NodeList=vm BatchHost=vm\n"
            "JobId=10 ArrayJobId=10 ArrayTaskId=0 JobName=sslab:t JobState=COMPLETED Reason=None ExitCode=0:0 "
            "NodeList=vm\n")
    got = parse_scontrol(text)
    assert got[2] == TaskState("FAILED", "NonZeroExitCode", "1:0", "vm")
    assert got[0] == TaskState("COMPLETED", "", "0:0", "vm") and not got[0].failed()


def test_a_node_local_path_is_refused_unless_the_only_node_is_this_machine(tmp_path):
    assert node_local(Path("/tmp/x/cache")) == Path("/tmp")
    assert node_local(Path("/dev/shm")) == Path("/dev/shm")
    assert node_local(Path("/home/u/cache")) is None
    seen = {"the image cache": Path("/tmp/cache"), "the results": Path("/home/u/results")}
    check_shared(seen, ["vm"], "vm")  # a one-node cluster: this machine sees its own /tmp
    check_shared(seen, ["vm"], "vm.cluster.example")
    with pytest.raises(MatrixError, match=r"the image cache /tmp/cache is under /tmp.*nothing was submitted"):
        check_shared(seen, ["vm", "node2"], "vm")
    check_shared({"the results": Path("/home/u/results")}, ["vm", "node2"], "vm")


def test_settings_refuse_what_is_the_harnesss_to_set():
    s = SlurmSettings.parse("--partition=short --time=00:30:00 -c 2", 4, None)
    assert s.sbatch_args == ("--partition=short", "--time=00:30:00", "-c", "2")
    assert s.cells_per_task == 4 and s.poll_s == 30.0
    for bad in ("--array=0-3", "--output=x", "-o x", "--job-name=x", "-J x", "--wrap=true", "--chdir=/"):
        with pytest.raises(MatrixError, match="the harness's to set"):
            SlurmSettings.parse(bad, None, None)
    with pytest.raises(MatrixError, match="not a list of sbatch options"):
        SlurmSettings.parse("--comment='unclosed", None, None)
    with pytest.raises(MatrixError, match="SLURM_CELLS=0"):
        SlurmSettings.parse("", 0, None)
    with pytest.raises(MatrixError, match="SLURM_POLL"):
        SlurmSettings.parse("", None, 0)


def test_the_task_script_runs_its_own_line_of_keys(tmp_path):
    """The script as a task runs it, with run-cells replaced by echo (the python given is `echo`)."""
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("k1,k2\nk3\n")
    script = tmp_path / "task.sh"
    script.write_text(task_script(python="echo", repo=tmp_path, matrix_dir=tmp_path / "m dir",
                                  plan_path=tmp_path / "plan-1.json", tasks_file=tasks, substrate="uml",
                                  clock="real", env={"SSLAB_CACHE": "/shared/cache dir"}))
    env = {"PATH": "/usr/bin:/bin", "SLURM_ARRAY_JOB_ID": "55", "SLURM_ARRAY_TASK_ID": "1", "SLURM_CPUS_PER_TASK": "2"}
    out = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, check=True).stdout.split()
    assert out[:4] == ["-m", "sslab", "matrix", "run-cells"]
    assert out[out.index("--keys") + 1] == "k3" and out[out.index("--jobs") + 1] == "2"
    assert out[out.index("--host") + 1] == "slurm-55_1"
    env["SLURM_ARRAY_TASK_ID"] = "0"
    del env["SLURM_CPUS_PER_TASK"]
    out = subprocess.run(["sh", "-c", f". {script}; echo never"], capture_output=True, text=True, env=env).stdout
    assert "--keys k1,k2" in out and "--jobs 1" in out and "never" not in out
    # The environment the nodes need is set in the script itself, quoted.
    assert "export SSLAB_CACHE='/shared/cache dir'" in script.read_text()


def test_a_job_name_says_what_runs():
    assert job_name("table1/cca-cubic_iter-2") == "sslab:table1:cca-cubic_iter-2"
    assert len(job_name("x" * 500)) == 120
