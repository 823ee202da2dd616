"""A matrix's boots as one Slurm job array, submitted and followed from a login node (`SLURM=1`).

The testbed is a User-Mode Linux kernel, a plain program: it needs no root, no container engine and
no network namespace on the host, so a cluster's compute nodes can run its cells as the user who
submits them.  What a node needs is what a fleet host needs, seen on a path every node shares: the
tree (this checkout and its Python), the image cache (SSLAB_CACHE) and the results (SSLAB_RESULTS).

    the plan's boots still to run --grouped--> array tasks (tasks-<stamp>.txt: a line of keys each)
    sbatch --array=0-(n-1)  --each task-->  sslab matrix run-cells --host slurm-<job>_<task> --keys ...
                                            (cells land in the matrix directory, as a local host's)
    squeue every SLURM_POLL s, or as soon as every cell is home (states, reasons)
                                                 --the array gone-->  sacct, else scontrol: each
    task's final state, exit code and reason; each new cell checked against its manifest

A task is one boot (up to BOOT_SHARE cells) unless SLURM_CELLS= asks for more cells a task; it runs
its boots on the CPUs Slurm gives it (--cpus-per-task in SLURM_ARGS; one by default).  A task that
fails, times out, is cancelled or loses its node is reported with its Slurm state and reason; its
cells are not done, and the same command submits only what is missing.  Ctrl-C (or SIGTERM, SIGHUP)
cancels the array (scancel); a cell in progress stays a .partial directory, which never counts, and
is removed once the array has ended.  Nothing finished is lost.

Refused before anything is submitted (exit 2): no sbatch on the PATH; options Slurm refuses (a
partition it does not have: `sbatch --test-only`); a path the nodes cannot see (the tree, the cache
or the results under a node-local directory such as /tmp while the partition has nodes other than
this machine); an array of this matrix still queued or running (wait for it or scancel it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from .spec import MatrixError
from .stopping import interrupt_exit_status, stop_signals_interrupt
from .store import CellStore
from .transfer import set_aside_damaged

#: Seconds between looks at the queue: a cell lasts tens of seconds and a task minutes, so a look
#: every half minute reports progress in time without loading the controller (sites ask for this).
POLL_S = 30.0
#: Seconds to wait, after scancel, for the array's tasks to leave the queue (Slurm's KillWait is 30 s
#: by default: SIGTERM, then SIGKILL after it).
CANCEL_WAIT_S = 120.0
#: Directories a node keeps to itself, by convention on every Linux cluster.
NODE_LOCAL = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/run"))
#: Slurm's states of a task that has ended well; any other final state is a failure to report.
COMPLETED = "COMPLETED"
#: Where this matrix's last array is recorded (the job id, to refuse a second one while it runs).
RECORD = "slurm.json"


@dataclass(frozen=True)
class SlurmSettings:
    """What the user asked of Slurm: sbatch's own options (SLURM_ARGS=, passed through as written),
    cells a task (SLURM_CELLS=; None: a boot a task) and seconds between looks (SLURM_POLL=)."""
    sbatch_args: tuple[str, ...] = ()
    cells_per_task: int | None = None
    poll_s: float = POLL_S

    @classmethod
    def parse(cls, args: str | None, cells: int | None, poll_s: float | None) -> "SlurmSettings":
        try:
            words = tuple(shlex.split(args or ""))
        except ValueError as e:
            raise MatrixError(f"SLURM_ARGS={args!r}: not a list of sbatch options ({e})") from None
        for w in words:
            if re.match(r"--(array|wrap|output|error|parsable|job-name|chdir)\b|-[aoeJD]$", w):
                raise MatrixError(f"SLURM_ARGS: {w} is the harness's to set (the array, its logs, its name); "
                                  f"give the partition, time, account, QOS, CPUs and memory there")
        if cells is not None and cells < 1:
            raise MatrixError(f"SLURM_CELLS={cells}: at least 1")
        if poll_s is not None and poll_s <= 0:
            raise MatrixError(f"SLURM_POLL={poll_s}: seconds, more than 0")
        return cls(words, cells, POLL_S if poll_s is None else poll_s)


@dataclass
class TaskState:
    """One array task as Slurm last said: its state, why (a pending reason, or why it ended) and, once
    ended, its exit code ("1:0": status 1, no signal)."""
    state: str
    reason: str = ""
    exit_code: str = ""
    node: str = ""

    def failed(self) -> bool:
        return self.state != COMPLETED or self.exit_code not in ("", "0:0")


# -- the tasks ----------------------------------------------------------------


def group_tasks(boots: list[list[str]], cells_per_task: int | None) -> list[list[str]]:
    """The array's tasks, each the keys of whole boots in the plan's order: a boot a task, or (with
    @cells_per_task) boots joined until a task holds at least that many cells."""
    if cells_per_task is None:
        return [list(b) for b in boots if b]
    tasks: list[list[str]] = []
    current: list[str] = []
    for boot in boots:
        current.extend(boot)
        if len(current) >= cells_per_task:
            tasks.append(current)
            current = []
    if current:
        tasks.append(current)
    return tasks


def task_script(*, python: str, repo: Path, matrix_dir: Path, plan_path: Path, tasks_file: Path,
                substrate: str, clock: str, env: dict[str, str]) -> str:
    """The batch script every task runs: its line of @tasks_file (SLURM_ARRAY_TASK_ID + 1) is its keys;
    the cells run by `sslab matrix run-cells` as a host named after the task, on the CPUs Slurm gave it."""
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(env.items()))
    return (
        "#!/bin/sh\n"
        f"# slowstart-lab: the cells of {matrix_dir.name} ({plan_path.name}); task N runs line N+1 of\n"
        f"# {tasks_file.name}.  Written by `sslab run ... --slurm`; kept as the record of what ran.\n"
        "set -eu\n"
        f"{exports}"
        f"keys=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {shlex.quote(str(tasks_file))})\n"
        f"cd {shlex.quote(str(repo))}\n"
        f"exec {shlex.quote(python)} -m sslab matrix run-cells --matrix-dir {shlex.quote(str(matrix_dir))} "
        f"--plan {shlex.quote(str(plan_path))} --host \"slurm-${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}\" "
        f"--keys \"$keys\" --substrate {shlex.quote(substrate)} --clock {shlex.quote(clock)} "
        "--jobs \"${SLURM_CPUS_PER_TASK:-1}\"\n")


def job_name(matrix_rel: str) -> str:
    """What squeue shows: the harness and the matrix (its selection), within Slurm's limits."""
    return ("sslab:" + matrix_rel.replace("/", ":"))[:120]


# -- what Slurm says ----------------------------------------------------------


def parse_squeue(text: str) -> dict[int, TaskState]:
    """`squeue -h -r -o '%K|%T|%r|%N'` lines: task id, state, reason, node(s)."""
    out = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        out[int(parts[0])] = TaskState(parts[1], "" if parts[2] in ("None", "(null)") else parts[2],
                                       node=parts[3] if len(parts) > 3 else "")
    return out


def parse_sacct(text: str, job: str) -> dict[int, TaskState]:
    """`sacct -n -P -X -o JobID,State,ExitCode,Reason,NodeList` lines of array @job (JobID `<job>_<task>`;
    a state such as 'CANCELLED by 1001' keeps its first word)."""
    out = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        m = re.fullmatch(rf"{re.escape(job)}_(\d+)", parts[0]) if parts else None
        if not m or len(parts) < 3:
            continue
        reason = parts[3] if len(parts) > 3 and parts[3] not in ("None", "(null)") else ""
        out[int(m.group(1))] = TaskState(parts[1].split()[0], reason, parts[2],
                                         parts[4] if len(parts) > 4 else "")
    return out


def parse_scontrol(text: str) -> dict[int, TaskState]:
    """`scontrol -o show job <job>`: a line a task, words `Key=value`; read where accounting is off
    (sacct has nothing), for as long as the controller keeps ended jobs (MinJobAge)."""
    out = {}
    for line in text.splitlines():
        fields = dict(w.split("=", 1) for w in line.split() if "=" in w)
        task = fields.get("ArrayTaskId", "")
        if not task.isdigit():
            continue
        reason = fields.get("Reason", "")
        out[int(task)] = TaskState(fields.get("JobState", "UNKNOWN"), "" if reason == "None" else reason,
                                   fields.get("ExitCode", ""), fields.get("NodeList", ""))
    return out


# -- where the nodes look -----------------------------------------------------


def node_local(path: Path) -> Path | None:
    """The node-local directory @path is under (NODE_LOCAL), if any."""
    p = Path(os.path.realpath(path))
    return next((d for d in NODE_LOCAL if p == d or d in p.parents), None)


def check_shared(paths_seen: dict[str, Path], nodes: list[str], here: str) -> None:
    """Every path a task reads or writes must be one the nodes see: a node-local one is refused unless
    every node of the partition is this machine (a one-node cluster)."""
    if all(n == here or n == here.split(".")[0] for n in nodes):
        return
    for what, path in paths_seen.items():
        if (d := node_local(path)) is not None:
            raise MatrixError(f"SLURM=1: {what} {path} is under {d}, which each node keeps to itself, and the "
                              f"partition's nodes are {', '.join(nodes[:5])}{' ...' if len(nodes) > 5 else ''}: "
                              f"put it on the cluster's shared filesystem (SSLAB_CACHE=, SSLAB_RESULTS=, the "
                              f"checkout itself); nothing was submitted")


# -- the array ----------------------------------------------------------------


def _slurm(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if check and res.returncode != 0:
        raise MatrixError(f"{' '.join(cmd[:2])}: {(res.stderr or res.stdout).strip()[-400:]}")
    return res


def require_commands() -> None:
    lacking = [c for c in ("sbatch", "squeue", "scancel", "sinfo", "scontrol") if shutil.which(c) is None]
    if lacking:
        raise MatrixError(f"SLURM=1: no {', '.join(lacking)} on the PATH: run from a login node of the cluster "
                          f"(Slurm's client commands); nothing was submitted")


def check_cluster(settings: SlurmSettings, matrix_dir: Path) -> None:
    """What the cluster can refuse, refused now (exit 2), before anything is built or submitted (Slurm's
    commands are there: require_commands): an array of this matrix still in the queue, the options
    Slurm refuses, a path the nodes cannot see."""
    refuse_if_running(matrix_dir)
    test = _slurm(["sbatch", "--test-only", "--array=0-0", *settings.sbatch_args, "--wrap", "true"], check=False)
    if test.returncode != 0:
        raise MatrixError(f"SLURM_ARGS={' '.join(settings.sbatch_args)!r}: Slurm refuses the array: "
                          f"{(test.stderr or test.stdout).strip()[-400:]}; nothing was submitted")
    check_shared({"the tree": paths.REPO_ROOT, "its Python": Path(sys.executable),
                  "the image cache": paths.cache_dir(), "the results": matrix_dir},
                 partition_nodes(settings), socket.gethostname())


def partition_nodes(settings: SlurmSettings) -> list[str]:
    """The nodes of the partition the array would go to (SLURM_ARGS' --partition, else the default)."""
    args = list(settings.sbatch_args)
    part = next((a.split("=", 1)[1] for a in args if a.startswith("--partition=")), None)
    for flag in ("--partition", "-p"):
        if flag in args and args.index(flag) + 1 < len(args):
            part = args[args.index(flag) + 1]
    res = _slurm(["sinfo", "-h", "-N", "-o", "%N|%P"] + (["-p", part] if part else []))
    nodes = []
    for line in res.stdout.splitlines():
        node, _, partition = line.partition("|")
        if part or partition.endswith("*"):
            nodes.append(node.strip())
    return sorted(set(nodes))


def queued_tasks(job: str) -> dict[int, TaskState]:
    """Array @job's tasks still in the queue (pending or running), as squeue says; none once it has gone."""
    return parse_squeue(_slurm(["squeue", "-h", "-r", "-j", str(job), "-o", "%K|%T|%r|%N"], check=False).stdout)


def refuse_if_running(matrix_dir: Path) -> None:
    record = matrix_dir / RECORD
    if not record.is_file():
        return
    job = json.loads(record.read_text()).get("job")
    if job and queued_tasks(job):
        raise MatrixError(f"Slurm job {job} is still running cells of {matrix_dir}: wait for it (`squeue -j "
                          f"{job}`) or cancel it (`scancel {job}`), then run this again; nothing was submitted")


@dataclass
class SlurmArray:
    """One matrix's boots as one job array (see the module doc)."""
    settings: SlurmSettings
    matrix_dir: Path
    matrix_rel: str
    plan_path: Path
    boots: list[list[str]]
    substrate: str
    #: The clock as asked (--clock real|virtual), which the tasks' run-cells takes.
    clock: str
    log: object = print
    #: What the tasks' environment must hold besides the paths (the kernel under test: KernelChanges.env).
    env: dict[str, str] = field(default_factory=dict)
    tasks: list[list[str]] = field(default_factory=list)
    job: str | None = None
    states: dict[int, TaskState] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tasks = group_tasks(self.boots, self.settings.cells_per_task)
        self.stamp = self.plan_path.stem.removeprefix("plan-")
        self.logs = self.matrix_dir / "logs" / f"slurm-{self.stamp}"
        self.store = CellStore(self.matrix_dir)
        #: Cells of the array seen home (a cell home stays home while the array runs).
        self._home: set[str] = set()

    # -- submitting and following --

    def submit(self) -> str:
        self.logs.mkdir(parents=True, exist_ok=True)
        tasks_file = self.logs / "tasks.txt"
        tasks_file.write_text("".join(",".join(t) + "\n" for t in self.tasks))
        env = {**self.env, "SSLAB_RESULTS": str(paths.RESULTS_DIR), "SSLAB_CACHE": str(paths.cache_dir()),
               "PYTHONUNBUFFERED": "1"}
        script = self.logs / "task.sh"
        script.write_text(task_script(python=sys.executable, repo=paths.REPO_ROOT, matrix_dir=self.matrix_dir,
                                      plan_path=self.plan_path, tasks_file=tasks_file, substrate=self.substrate,
                                      clock=self.clock, env=env))
        script.chmod(0o755)
        cmd = ["sbatch", "--parsable", f"--array=0-{len(self.tasks) - 1}", f"--job-name={job_name(self.matrix_rel)}",
               f"--output={self.logs}/%A_%a.out", f"--chdir={paths.REPO_ROOT}", *self.settings.sbatch_args,
               str(script)]
        self.job = _slurm(cmd).stdout.strip().split(";")[0]
        self._record()
        self.log(f"  Slurm job {self.job}: {len(self.tasks)} task(s) ({sum(map(len, self.tasks))} cells), "
                 f"logs {self.logs}/{self.job}_<task>.out; followed every {self.settings.poll_s:.0f} s")
        return self.job

    @property
    def keys(self) -> list[str]:
        """Every cell of the array, in its tasks' order."""
        return [k for t in self.tasks for k in t]

    def home(self) -> int:
        """How many of the array's cells are home, asking the filesystem about those not seen home yet
        (a cell home stays home while the array runs)."""
        self._home |= {k for k in self.keys if k not in self._home and self.store.done(k)}
        return len(self._home)

    def ended(self) -> dict[int, TaskState]:
        """Each task's final state: from accounting (sacct) where the cluster keeps it, else from the
        controller's memory of ended jobs (scontrol)."""
        res = _slurm(["sacct", "-n", "-P", "-X", "-j", str(self.job), "-o", "JobID,State,ExitCode,Reason,NodeList"],
                     check=False) if shutil.which("sacct") else None
        states = parse_sacct(res.stdout, str(self.job)) if res is not None and res.returncode == 0 else {}
        if len(states) < len(self.tasks):
            states = {**parse_scontrol(_slurm(["scontrol", "-o", "show", "job", str(self.job)], check=False).stdout),
                      **states}
        return states

    def follow(self) -> int:
        """Wait for the array, saying what changes; then every task's end.  0 if every cell is home."""
        said = None
        while True:
            queue = queued_tasks(self.job)
            self.states.update(queue)
            home = self.home()
            counts = {s: sum(t.state == s for t in queue.values()) for s in ("PENDING", "RUNNING")}
            pending_why = sorted({t.reason for t in queue.values() if t.state == "PENDING" and t.reason})
            line = (f"  Slurm job {self.job}: {counts['RUNNING']} running, {counts['PENDING']} pending"
                    f"{' (' + ', '.join(pending_why) + ')' if pending_why else ''}, "
                    f"{len(self.tasks) - len(queue)} ended; {home} of {len(self.keys)} cells home")
            if line != said:
                self.log(line)
                said = line
            if not queue:
                break
            self._until_next_look()
        return self.finish()

    def _until_next_look(self) -> None:
        """SLURM_POLL seconds, or less once every cell of the array is home (its last tasks are ending, and
        the report should not wait a whole poll for them): cells are counted on the filesystem each second,
        the cells not yet seen home only, which asks nothing of Slurm's controller."""
        deadline = time.monotonic() + self.settings.poll_s
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            if self.home() == len(self.keys):
                return

    def finish(self) -> int:
        """Each task's end as Slurm records it; failures reported with their state and reason; the new
        cells checked against their manifests (a damaged one set aside, to run again); partial cells of
        the array removed."""
        self.states.update(self.ended())
        damaged = set_aside_damaged(self.store, self.keys)
        if damaged:
            self.log(f"  {len(damaged)} cell(s) did not match their manifests: set aside under {self.store.failed}, "
                     f"run again by the same command")
        for i, task in enumerate(self.tasks):
            st = self.states.get(i)
            missing = [k for k in task if not self.store.done(k)]
            if st is None:
                self.log(f"  task {i}: Slurm has no record of it any more; {len(missing)} of its cells not home")
            elif st.failed() or missing:
                self.log(f"  task {i} ({len(task)} cell(s), {len(missing)} not home): {st.state}"
                         f"{', exit ' + st.exit_code if st.exit_code else ''}"
                         f"{', ' + st.reason if st.reason else ''}{' on ' + st.node if st.node else ''}; "
                         f"log {self.logs}/{self.job}_{i}.out")
        self._remove_partials()
        self._record()
        return 0 if all(self.store.done(k) for k in self.keys) else 1

    def cancel(self) -> None:
        """scancel the array and wait for its tasks to leave the queue (they unwind on SIGTERM)."""
        if self.job is None:
            return
        _slurm(["scancel", str(self.job)], check=False)
        self.log(f"  scancel {self.job}: waiting for its tasks to end")
        deadline = time.monotonic() + CANCEL_WAIT_S
        while (left := queued_tasks(self.job)) and time.monotonic() < deadline:
            time.sleep(2)
        if left:
            self.log(f"  {len(left)} task(s) of job {self.job} still in the queue after {CANCEL_WAIT_S:.0f} s: "
                     f"their partial cells are left, and never count")
        else:
            self.finish()

    def run(self) -> int:
        """Submit, follow, and on Ctrl-C (SIGINT, SIGTERM, SIGHUP) cancel: 128 + the signal then (130, 143,
        129), as a controller of hosts exits."""
        with stop_signals_interrupt():
            try:
                self.submit()
                return self.follow()
            except KeyboardInterrupt as e:
                self.log(f"\ninterrupted ({e.args[0] if e.args else 'SIGINT'}): cancelling the array (finished cells "
                         f"are kept, partial ones discarded)")
                self.cancel()
                return interrupt_exit_status(e)

    def _remove_partials(self) -> None:
        """Partial cells of this array's keys, once none of its tasks runs: they never count."""
        keys = set(self.keys)
        for p in self.store.stale_partials():
            if any(p.name.startswith(f".partial-{k}-") for k in keys):
                shutil.rmtree(p, ignore_errors=True)

    def _record(self) -> None:
        """slurm.json (the newest array, to refuse another while it runs) and the array's own record."""
        record = {"job": self.job, "plan": self.plan_path.name, "sbatch_args": list(self.settings.sbatch_args),
                  "tasks": self.tasks, "logs": str(self.logs),
                  "states": {str(i): vars(s) for i, s in sorted(self.states.items())}}
        paths.write_json_atomic(self.matrix_dir / RECORD, record)
        (self.logs / "array.json").write_text(json.dumps(record, indent=1))
