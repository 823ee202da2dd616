"""The default substrate: a job runs in a fresh boot of the image's User-Mode Linux kernel, in virtual time.

How a run goes:

  1. the host writes job.json into a fresh job directory, and next to it a
     directory `uml/` holding three symbolic links: `root` (the image's
     read-only rootfs), `job` (the job directory) and `src` (the source tree);
  2. the UML kernel, a host program, starts with `uml/` as its working
     directory and `hostfs=.`, so every host path it opens is one of those
     links: the kernel command line is the same for every run of an image
     (Linux mixes its command line into the guest's random pool, so a run
     id or an output path on it would change the results);
  3. the guest clock is virtual (`time-travel=inf-cpu`): it advances only
     when the guest waits for a timer, CPU work takes no guest time, and
     the host's load cannot bend it;
  4. the guest's entropy comes from the job's seed (SSLAB_ENTROPY_SEED, read
     by the recipe's own os_getrandom patch), never from the host, so one
     seed gives one run, byte for byte;
  5. init mounts the shares, sleeps 2 s of guest time (free; ping ignores
     -i in the first second of uptime), runs the agent, powers off.

Each UML is pinned to one host core: unpinned, every hand-off between its
host processes woke an idle core and a run took 4x the wall time.  Phases
have wall-clock deadlines as under QEMU; a UML that misses one is killed
with all its host processes and the console log is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from .. import paths
from .console import FileReader, VMError, follow_phases, job_phases, stop_process
from .image import Image
from .job import JobError, JobResult, JobSpec, read_status
from .kernelchanges import RESEARCHER_MODULES_ENV, researcher_modules

#: The clock this substrate gives experiments (recorded with every run).
CLOCK = "uml/inf-cpu"
#: Wall-clock deadlines.  A UML boots to init in about half a second.
BOOT_TIMEOUT_S = 60.0
SHARES_TIMEOUT_S = 30.0
POWEROFF_TIMEOUT_S = 30.0
JOB_GRACE_S = 45.0
#: Guest memory.  UML backs it with a sparse file in $TMPDIR; pages are
#: only used when touched.
MEMORY_MB = 1536
#: The guest's wall clock at boot: 2026-01-01T00:00:00Z, in nanoseconds.
GUEST_EPOCH_NS = 1767225600 * 10**9
#: The seed a job gets when it names none (recorded either way).
DEFAULT_SEED = 1


@dataclass
class UMLConfig:
    memory_mb: int = MEMORY_MB
    #: Host core to pin the UML to; None: the first core this process may use.
    cpu: int | None = None
    boot_timeout_s: float = BOOT_TIMEOUT_S
    shares_timeout_s: float = SHARES_TIMEOUT_S
    poweroff_timeout_s: float = POWEROFF_TIMEOUT_S
    job_grace_s: float = JOB_GRACE_S


def kernel_cmdline() -> list[str]:
    """The command line: the same words for every run of an image, in the same order."""
    return [
        f"mem={MEMORY_MB}M",
        "time-travel=inf-cpu",
        # The guest's calendar starts at the same instant in every boot (else it is the
        # host's time at boot): pcap timestamps and anything else read from it repeat too.
        f"time-travel-start={GUEST_EPOCH_NS}",
        # Host paths are relative to the UML's working directory (the run's uml/ links).
        "hostfs=.", "rootfstype=hostfs", "rootflags=root", "ro",
        "init=/usr/local/sbin/sslab-init", "sslab.substrate=uml",
        # IPv6 autoconfiguration puts solicitations and DAD on random timers onto the links.
        "ipv6.disable=1",
        "con=null", "con0=null,fd:1",
        "quiet", "loglevel=5", "panic=-1",
    ]


def allowed_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def uml_command(image: Image, cfg: UMLConfig) -> list[str]:
    cpu = cfg.cpu if cfg.cpu is not None else allowed_cpus()[0]
    words = kernel_cmdline()
    if cfg.memory_mb != MEMORY_MB:
        words[0] = f"mem={cfg.memory_mb}M"
    # What another kernel source needs besides (its images/uml/sources/ file says; e.g. root=/dev/root
    # for a hostfs root on 7.x); the default kernel's line is the one above, word for word.
    words += (image.manifest().get("uml") or {}).get("cmdline_extra") or []
    # setpriv --pdeathsig: the UML dies with the thread that started it (a runner killed outright,
    # SIGKILL or the OOM killer, leaves no UML behind running on its core); taskset pins it.
    return ["setpriv", "--pdeathsig", "KILL", "taskset", "-c", str(cpu), str(image.uml_binary), *words]


#: Test knobs of our UML kernel's FP sizing (images/uml/patches/0003-*), passed on from the
#: host's environment when set: SSLAB_UML_FP_AREA gives every FP buffer at least that many bytes
#: (a guest with the memory layout of a host with a larger XSAVE area); SSLAB_UML_FP_SAVE moves
#: that many bytes per save and restore instead of the host's (shorter: a kernel that cannot boot).
FP_TEST_KNOBS = ("SSLAB_UML_FP_AREA", "SSLAB_UML_FP_SAVE")


def fp_test_env() -> dict[str, str]:
    return {k: os.environ[k] for k in FP_TEST_KNOBS if k in os.environ}


def stage_links(job_dir: Path, image: Image, src_dir: Path) -> Path:
    """job_dir/uml/{root,job,src}: the only host paths the guest sees."""
    stage = job_dir / "uml"
    stage.mkdir(exist_ok=True)
    for name, target in (("root", image.rootfs), ("job", job_dir), ("src", src_dir)):
        (stage / name).symlink_to(Path(target).resolve())
    return stage


@dataclass
class UMLBootRecord:
    cpu: int
    seed: int
    seconds_to_userspace: float | None
    seconds_total: float
    guest_seconds: float | None
    markers: list
    exit_code: int | None


def boot_and_run(image: Image, job_dir: Path, cfg: UMLConfig, job_timeout_s: float, seed: int,
                 src_dir: Path = paths.REPO_ROOT, live: set | None = None) -> UMLBootRecord:
    """Boot once, wait through every phase, return the timings.  @live, when given, holds
    the UML's process while it runs (so that another thread can stop it)."""
    if not image.uml_binary.is_file() or not image.rootfs.is_dir():
        raise VMError(f"the image {image.root} has no UML kernel or rootfs directory: rebuild it (`make image`)")
    stage = stage_links(job_dir, image, src_dir)
    cmd = uml_command(image, cfg)
    # HOME: UML keeps its pid file and management socket in $HOME/.uml/<umid>/ (here: the run's).
    recorded = {"SSLAB_ENTROPY_SEED": str(seed), **fp_test_env()}
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "HOME": str(stage),
           "TMPDIR": os.environ.get("SSLAB_UML_TMPDIR", "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp"),
           **recorded}
    (stage / "cmdline.json").write_text(json.dumps({"argv": cmd, "cwd": str(stage), "env": recorded}, indent=1))
    console_log = stage / "console.log"
    t0 = time.monotonic()
    # Own process group: the UML's host processes (one per guest process) go with it.
    # The console goes to a file, not a pipe (see console.FileReader: a pipe lets the
    # host's reading speed into the guest's random pool).
    with open(console_log, "wb") as console:
        proc = subprocess.Popen(cmd, cwd=stage, env=env, stdin=subprocess.DEVNULL, stdout=console,
                                stderr=subprocess.STDOUT, start_new_session=True)
    if live is not None:
        live.add(proc)
    reader = FileReader(console_log, proc, t0)
    reader.start()
    phases = job_phases(cfg, job_timeout_s)
    try:
        seen, code = follow_phases(proc, reader, phases, cfg.poweroff_timeout_s, what="UML", kill_group=True)
    finally:
        if live is not None:
            live.discard(proc)
    total = time.monotonic() - t0
    up = {n: (u, t) for n, _, u, t in seen}
    guest = (up["agent-exit"][0] - up["shares-mounted"][0]) if "agent-exit" in up and "shares-mounted" in up \
        else None
    record = UMLBootRecord(int(cmd[cmd.index("-c") + 1]), seed, up.get("userspace", (None, None))[1], total,
                           None if guest is None else round(guest, 6), seen, code)
    (stage / "boot.json").write_text(json.dumps(record.__dict__, indent=2))
    return record


class UMLTestbed:
    """Runs each job in a fresh UML boot of the image, pinned to one core, in virtual time."""

    name = "uml"
    clock = CLOCK
    __test__ = False

    def __init__(self, image: Image, cfg: UMLConfig | None = None):
        self.image = image
        self.cfg = cfg or UMLConfig()
        self.live: set = set()
        for tool in ("taskset", "setpriv"):
            if shutil.which(tool) is None:
                raise VMError(f"{tool} not found (Debian package util-linux)")

    def facts(self, res: JobResult) -> dict:
        """What a check records of this substrate beside the guest's own report: the image with its
        UML kernel, and the boot's seed, core and guest time."""
        return {"image": self.image.facts(with_uml=True), "seed": res.seed, "cpu": res.cpu,
                "guest_seconds": res.guest_seconds}

    def stop_all(self) -> None:
        """Kill the UMLs this testbed is running (with their host processes)."""
        for proc in list(self.live):
            stop_process(proc, group=True)

    def run(self, job: JobSpec, job_dir: Path) -> JobResult:
        if modules := researcher_modules(self.image.manifest()):
            # A researcher's modules (MODULES=) load in every job, after ours, by these names.
            job = replace(job, env={**job.env, RESEARCHER_MODULES_ENV: " ".join(modules)})
        job.write(job_dir)
        seed = job.seed if job.seed is not None else DEFAULT_SEED
        self.image.mark_used()  # a run of hours keeps its image from a prune (cachegc.IN_USE_S)
        rec = boot_and_run(self.image, job_dir, self.cfg, job.timeout_s, seed, live=self.live)
        if "no-job" in [m[0] for m in rec.markers]:
            raise JobError("the UML guest found no job.json on its job share")
        try:
            status = read_status(job_dir)
        except JobError as e:
            raise JobError(f"{e}; console log: {job_dir / 'uml' / 'console.log'}") from None
        return JobResult(job_dir=job_dir, exit_code=status.get("exit_code"),
                         timed_out=bool(status.get("timed_out")), substrate=self.name, accelerator=None,
                         seconds_to_userspace=rec.seconds_to_userspace, seconds_total=rec.seconds_total,
                         status=status, clock=self.clock, seed=seed, guest_seconds=rec.guest_seconds,
                         cpu=rec.cpu)
