#!/usr/bin/env python3
"""Run one job and record how it ended.  Standard library only.

The same code runs in two places:

- inside the testbed VM, started by the image's init (``sslab-init``) with
  the job directory shared from the host at /sslab/job;
- on the host itself in native mode, called by the harness.

A job directory holds ``job.json`` (what to run) and receives ``out/``:
``stdout.log``, ``stderr.log`` and ``status.json``.  The job runs in its own
process group so that a job past its timeout is stopped with everything it
started (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

#: Seconds between SIGTERM and SIGKILL for a job past its timeout.
KILL_GRACE_S = 5.0


def kill_group(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


#: The record format of status.json (sslab.records' "sslab.status"; a unit test holds them equal: the
#: agent runs from its own file in the guest and imports nothing of the harness).
STATUS_FORMAT = "sslab.status/1"


def run_job(job_dir: str, extra_env: dict | None = None) -> dict:
    """Run the job described by ``job_dir/job.json``; return and record its status."""
    with open(os.path.join(job_dir, "job.json")) as f:
        job = json.load(f)
    out = os.path.join(job_dir, "out")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    env.update(extra_env or {})
    env.update(job.get("env", {}))
    env["SSLAB_JOB_DIR"] = job_dir
    env["SSLAB_OUT_DIR"] = out
    # Host programs the job brought along (JobSpec.tools), ahead of the image's own.
    tools = os.path.join(job_dir, "tools")
    if os.path.isdir(tools):
        env["PATH"] = tools + os.pathsep + env.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    timeout = float(job["timeout_s"])
    status = {"format": STATUS_FORMAT, "name": job.get("name", ""), "argv": job["argv"], "timeout_s": timeout,
              "kernel_release": os.uname().release}
    started = time.monotonic()
    with open(os.path.join(out, "stdout.log"), "wb") as so, open(os.path.join(out, "stderr.log"), "wb") as se:
        try:
            proc = subprocess.Popen(job["argv"], cwd=out, env=env, stdout=so, stderr=se,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            status.update(exit_code=None, timed_out=False, error=f"cannot start job: {e}", seconds=0.0)
            _write_status(out, status)
            return status
        try:
            code = proc.wait(timeout=timeout)
            status.update(exit_code=code, timed_out=False)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            status.update(exit_code=proc.returncode, timed_out=True,
                          error=f"job exceeded its timeout of {timeout:g} s and was killed")
    status["seconds"] = round(time.monotonic() - started, 3)
    _write_status(out, status)
    return status


def _write_status(out: str, status: dict) -> None:
    tmp = os.path.join(out, ".status.json.tmp")
    with open(tmp, "w") as f:
        json.dump(status, f, indent=2, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(out, "status.json"))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: agent.py JOB_DIR", file=sys.stderr)
        return 2
    # In the VM the harness sources are shared read-only at /sslab/src.
    extra = {}
    if os.path.isdir("/sslab/src/runners"):
        extra["PYTHONPATH"] = "/sslab/src/runners"
    status = run_job(argv[1], extra)
    if status.get("timed_out"):
        return 124
    code = status.get("exit_code")
    return code if isinstance(code, int) and code >= 0 else 125


if __name__ == "__main__":
    sys.exit(main(sys.argv))
