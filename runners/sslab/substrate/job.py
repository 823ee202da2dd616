"""A job: one command run on a substrate (the testbed VM or the native host).

The host writes ``job.json`` into a fresh job directory; the substrate runs
the command with the agent (runners/sslab/substrate/agent.py) and leaves ``out/`` in the
same directory.  Job directories are never reused: a run that would write
into an existing, non-empty directory is refused, so nothing recorded earlier
is overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..records import RecordFormatError, check, stamped


class JobError(RuntimeError):
    pass


@dataclass(frozen=True)
class JobSpec:
    argv: list[str]
    timeout_s: float
    name: str = "job"
    env: dict[str, str] = field(default_factory=dict)
    #: Input files written next to job.json (name -> text), e.g. a run plan.
    files: dict[str, str] = field(default_factory=dict)
    #: The guest's entropy seed, on substrates that can fix it (UML); recorded in job.json.
    seed: int | None = None
    #: Host programs the job needs that the image does not carry (name -> host path), placed in
    #: the job directory's tools/ (hard-linked when the filesystem allows) and first on the
    #: job's PATH; removed again by remove_tools() when the job is over, so that results keep
    #: only their record (containerlab, built when a containerlab run first needs it).
    tools: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.argv or not all(isinstance(a, str) and a for a in self.argv):
            raise JobError("job argv must be a non-empty list of non-empty strings")
        if not self.timeout_s > 0:
            raise JobError(f"job timeout_s must be positive, got {self.timeout_s!r}")

    def write(self, job_dir: Path) -> None:
        job_dir.mkdir(parents=True, exist_ok=True)
        if any(job_dir.iterdir()):
            raise JobError(f"job directory {job_dir} is not empty; refusing to overwrite earlier results")
        spec = asdict(self)
        files = spec.pop("files")
        for name, text in files.items():
            if "/" in name or name in ("job.json", "out", "vm"):
                raise JobError(f"job input file name {name!r} is not allowed")
            (job_dir / name).write_text(text)
        for name, source in self.tools.items():
            if "/" in name or not name:
                raise JobError(f"job tool name {name!r} is not allowed")
            place_tool(Path(source), job_dir / TOOLS_DIR / name)
        (job_dir / "job.json").write_text(json.dumps(stamped("sslab.job", spec), indent=2, sort_keys=True))


#: The job directory's folder of host programs (JobSpec.tools); the agent puts it first on PATH.
TOOLS_DIR = "tools"


def place_tool(source: Path, dest: Path) -> None:
    """@source at @dest, executable: a hard link where one filesystem holds both, else a copy."""
    if not source.is_file():
        raise JobError(f"job tool {source} does not exist")
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)
    dest.chmod(0o755)


def remove_tools(job_dir: Path) -> None:
    """Take the job's tools away again (their record stays in job.json and the run's meta)."""
    shutil.rmtree(job_dir / TOOLS_DIR, ignore_errors=True)


@dataclass
class JobResult:
    job_dir: Path
    exit_code: int | None
    timed_out: bool
    substrate: str
    accelerator: str | None = None
    seconds_to_userspace: float | None = None
    seconds_total: float | None = None
    status: dict = field(default_factory=dict)
    #: The clock the job ran under: uml/inf-cpu, qemu/icount, qemu/mttcg, kvm or native.
    clock: str | None = None
    seed: int | None = None
    #: Guest seconds from the shares being mounted to the agent's exit (virtual-time substrates).
    guest_seconds: float | None = None
    #: The host core the substrate was pinned to.
    cpu: int | None = None

    @property
    def out_dir(self) -> Path:
        return self.job_dir / "out"

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def stdout(self) -> str:
        p = self.out_dir / "stdout.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def stderr(self) -> str:
        p = self.out_dir / "stderr.log"
        return p.read_text(errors="replace") if p.exists() else ""


def read_status(job_dir: Path) -> dict:
    p = job_dir / "out" / "status.json"
    if not p.exists():
        raise JobError(f"the job left no status ({p} missing)")
    try:
        return check("sslab.status", json.loads(p.read_text()), str(p))
    except (ValueError, RecordFormatError) as e:
        raise JobError(f"the job's status cannot be read: {e}") from None
