"""Boot the testbed image under QEMU and run one job in it.

How a run goes:

  1. the host writes job.json into a fresh job directory;
  2. QEMU boots the image's stock kernel straight into ``sslab-init`` (no
     init system) with the root disk as a throw-away snapshot, the job
     directory shared read-write over virtio-9p and the source tree shared
     read-only; the VM has no network card at all;
  3. init prints markers on the serial console (``SSLAB:userspace``,
     ``SSLAB:shares-mounted``, ``SSLAB:agent-exit``, ``SSLAB:poweroff``);
     the host times the boot with them and knows which phase a hang is in;
  4. the agent runs the job, writes out/status.json and init powers off.

Every phase has a deadline.  A VM that misses one is killed and the run
fails with :class:`VMHangError` naming the phase; the serial log is kept in
the job directory.

The accelerator is KVM when a probe boot with it succeeds, TCG otherwise.
The probe's verdict is cached per host kernel and QEMU version, because
/dev/kvm can exist and still fail to run a guest (it does on our CI hosts).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from .image import Image
from .console import MARKER, SerialReader, VMError, VMHangError, follow_phases, job_phases
from .job import JobError, JobResult, JobSpec, read_status

__all__ = ["MARKER", "VMError", "VMHangError", "VMConfig", "TestbedVM", "boot_and_run", "choose_accelerator"]


#: Deadlines per phase.  TCG boots in ~7 s here; the margins cover a loaded host.
BOOT_TIMEOUT_S = 120.0
SHARES_TIMEOUT_S = 60.0
POWEROFF_TIMEOUT_S = 30.0
#: Extra time the host allows beyond a job's own timeout: the agent needs
#: KILL_GRACE_S to stop a job that overran, plus writing its status.
JOB_GRACE_S = 45.0
#: -icount shift for CLOCK=virtual: 2^shift ns of guest time per instruction.
ICOUNT_SHIFT = 0
#: How long a KVM probe boot may take before KVM is declared unusable.
KVM_PROBE_TIMEOUT_S = 60.0


@dataclass
class VMConfig:
    memory_mb: int = 2048
    #: Two vCPUs.  One vCPU avoids a TCG hazard (patching kernel text, which
    #: enabling or disabling a trace event does, waits on an IPI to the other
    #: vCPUs that sometimes never arrives: two soft lockups in E1 runs, both
    #: when events were disabled after traffic), but it adds latency: vm-check
    #: measured a 101.06 ms idle RTT on a 100 ms path with one vCPU against
    #: 100.77-100.82 ms with two.  So: two vCPUs, trace events enabled once
    #: per job while the guest is idle and never disabled (guest/ftrace.py),
    #: and a lockup that happens anyway panics the guest and fails the run at
    #: once (softlockup_panic in kernel_cmdline).
    cpus: int = 2
    #: "auto" (probe KVM, fall back to TCG), "kvm" or "tcg".
    accel: str = "auto"
    boot_timeout_s: float = BOOT_TIMEOUT_S
    shares_timeout_s: float = SHARES_TIMEOUT_S
    poweroff_timeout_s: float = POWEROFF_TIMEOUT_S
    job_grace_s: float = JOB_GRACE_S
    #: Extra kernel command-line words (e.g. for debugging).
    extra_cmdline: str = ""
    #: "real": multi-threaded TCG (or KVM) on the host's clock; "virtual":
    #: single-threaded TCG with -icount, one vCPU (see accel_args).
    clock: str = "real"
    icount_shift: int = 0


def qemu_binary() -> str:
    # SSLAB_QEMU names another binary (a wrapper, or a stand-in in tests).
    exe = os.environ.get("SSLAB_QEMU") or shutil.which("qemu-system-x86_64")
    if not exe:
        raise VMError("qemu-system-x86_64 not found (Debian package qemu-system-x86; `make image` installs it)")
    return exe


def accel_args(accel: str, clock: str = "real", icount_shift: int = ICOUNT_SHIFT) -> list[str]:
    if accel == "kvm":
        if clock != "real":
            raise VMError("KVM runs on the host's clock: CLOCK=virtual needs TCG (ACCEL=tcg)")
        return ["-accel", "kvm", "-cpu", "host"]
    if accel == "tcg":
        if clock == "virtual":
            # One thread, one vCPU, and the guest clock driven by the instruction
            # count: 2^shift ns per instruction, no sleeping while idle (idle
            # time is skipped), so host stalls cannot bend it.
            return ["-accel", "tcg,thread=single", "-cpu", "max",
                    "-icount", f"shift={icount_shift},sleep=off"]
        # Multi-threaded TCG: one host thread per vCPU, on the host's clock.
        return ["-accel", "tcg,thread=multi", "-cpu", "max"]
    raise VMError(f"unknown accelerator {accel!r}")


def clock_name(accel: str, clock: str) -> str:
    """The clock a run had, as recorded: kvm, qemu/icount or qemu/mttcg."""
    if accel == "kvm":
        return "kvm"
    return "qemu/icount" if clock == "virtual" else "qemu/mttcg"


def kernel_cmdline(extra: str = "") -> str:
    words = [
        "console=ttyS0",
        "root=/dev/vda", "rw", "rootfstype=ext4",
        "init=/usr/local/sbin/sslab-init",
        # Kernel messages on a serial console slow a TCG boot; warnings (with
        # their backtraces) still show.
        "quiet", "loglevel=5",
        # A soft lockup panics, a panic reboots at once, and QEMU (-no-reboot)
        # exits: the host reports it with the console log instead of waiting
        # for the job's deadline.
        "softlockup_panic=1", "panic=-1",
        "i8042.noaux", "i8042.nokbd",
    ]
    return " ".join(words + extra.split())


def qemu_command(image: Image, accel: str, job_dir: Path, src_dir: Path, cfg: VMConfig) -> list[str]:
    return [
        qemu_binary(),
        *accel_args(accel, cfg.clock, cfg.icount_shift),
        "-M", "pc",
        "-m", str(cfg.memory_mb),
        "-smp", str(1 if cfg.clock == "virtual" else cfg.cpus),
        "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
        "-nic", "none",
        "-serial", "stdio",
        "-kernel", str(image.kernel),
        "-initrd", str(image.initrd),
        "-append", kernel_cmdline(cfg.extra_cmdline),
        # snapshot=on: the VM writes to a temporary overlay, never to the image.
        "-drive", f"file={image.disk},if=virtio,format=raw,snapshot=on",
        "-virtfs", f"local,path={job_dir},mount_tag=sslabjob,security_model=none,id=sslabjob",
        "-virtfs", f"local,path={src_dir},mount_tag=sslabsrc,security_model=none,readonly=on,id=sslabsrc",
    ]


@dataclass
class BootRecord:
    accelerator: str
    seconds_to_userspace: float | None
    guest_uptime_at_userspace: float | None
    seconds_total: float
    markers: list[tuple[str, str, float, float]]
    qemu_exit: int | None


def boot_and_run(image: Image, accel: str, job_dir: Path, cfg: VMConfig, job_timeout_s: float,
                 src_dir: Path = paths.REPO_ROOT) -> BootRecord:
    """Boot once, wait through every phase, return the timings.

    Raises VMHangError when a phase misses its deadline, VMError when QEMU
    exits before the job has finished.
    """
    vm_dir = job_dir / "vm"
    vm_dir.mkdir(exist_ok=True)
    cmd = qemu_command(image, accel, job_dir, src_dir, cfg)
    (vm_dir / "qemu-cmdline.json").write_text(json.dumps(cmd, indent=1))
    serial_log = vm_dir / "serial.log"
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    reader = SerialReader(proc.stdout, serial_log, t0)
    reader.start()
    phases = job_phases(cfg, job_timeout_s)
    seen, code = follow_phases(proc, reader, phases, cfg.poweroff_timeout_s, what="QEMU")
    total = time.monotonic() - t0
    us = next(((u, t) for n, _, u, t in seen if n == "userspace"), (None, None))
    record = BootRecord(accel, us[1], us[0], total, seen, code)
    (vm_dir / "boot.json").write_text(json.dumps(record.__dict__, indent=2))
    return record


# --------------------------------------------------------------------------
# Accelerator choice
# --------------------------------------------------------------------------


def _qemu_version() -> str:
    res = subprocess.run([qemu_binary(), "--version"], capture_output=True, text=True)
    return res.stdout.splitlines()[0] if res.stdout else "unknown"


def probe_kvm(image: Image, cfg: VMConfig) -> dict:
    """Try one short boot under KVM; report whether it reached userspace."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return {"kvm_usable": False, "reason": "/dev/kvm missing or not accessible"}
    with tempfile.TemporaryDirectory(prefix="sslab-kvm-probe-") as d:
        job_dir = Path(d)
        probe_cfg = VMConfig(**{**cfg.__dict__, "boot_timeout_s": KVM_PROBE_TIMEOUT_S})
        t0 = time.monotonic()
        try:
            rec = boot_and_run(image, "kvm", job_dir, probe_cfg, job_timeout_s=10)
        except VMError as e:
            return {"kvm_usable": False, "reason": str(e).splitlines()[0][:300] + _first_error(job_dir),
                    "probe_seconds": round(time.monotonic() - t0, 2)}
        return {"kvm_usable": True, "probe_seconds": round(rec.seconds_total, 2)}


def _first_error(job_dir: Path) -> str:
    log = job_dir / "vm" / "serial.log"
    if not log.exists():
        return ""
    for line in log.read_text(errors="replace").splitlines():
        if "error" in line.lower():
            return " | " + line.split(None, 1)[-1][:200]
    return ""


def choose_accelerator(image: Image, cfg: VMConfig, cache: Path | None = None) -> tuple[str, dict]:
    """Return (accelerator, probe record).  Honors cfg.accel when not 'auto'."""
    if cfg.accel in ("kvm", "tcg"):
        return cfg.accel, {"requested": cfg.accel}
    if cfg.accel != "auto":
        raise VMError(f"accel must be auto, kvm or tcg, not {cfg.accel!r}")
    cache = cache or paths.cache_dir()
    key = f"{os.uname().release}|{_qemu_version()}|{image.manifest()['kernel']['release']}"
    path = cache / "accel-probe.json"
    known = {}
    if path.exists():
        try:
            known = json.loads(path.read_text())
        except json.JSONDecodeError:
            known = {}
    if key not in known:
        known[key] = {**probe_kvm(image, cfg), "probed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(known, indent=2))
        tmp.replace(path)
    record = {**known[key], "cache_key": key}
    return ("kvm" if record["kvm_usable"] else "tcg"), record


# --------------------------------------------------------------------------
# The VM substrate
# --------------------------------------------------------------------------


class TestbedVM:
    """The harness's default substrate: a job runs in a fresh boot of the image."""

    name = "vm"
    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, image: Image, cfg: VMConfig | None = None):
        self.image = image
        self.cfg = cfg or VMConfig()
        if self.cfg.clock not in ("real", "virtual"):
            raise VMError(f"CLOCK must be real or virtual, not {self.cfg.clock!r}")
        if self.cfg.clock == "virtual" and self.cfg.accel == "auto":
            self.cfg.accel = "tcg"  # icount is TCG's
        self.accelerator: str | None = None
        self.accel_probe: dict = {}

    def facts(self, res: JobResult) -> dict:
        """What a check records of this substrate beside the guest's own report: the accelerator
        probe and the image."""
        return {"accel_probe": self.accel_probe, "image": self.image.facts()}

    @property
    def clock(self) -> str:
        return clock_name(self.accelerator or ("tcg" if self.cfg.accel == "auto" else self.cfg.accel),
                          self.cfg.clock)

    def run(self, job: JobSpec, job_dir: Path) -> JobResult:
        job.write(job_dir)
        if self.accelerator is None:
            self.accelerator, self.accel_probe = choose_accelerator(self.image, self.cfg)
        self.image.mark_used()  # a run of hours keeps its image from a prune (cachegc.IN_USE_S)
        rec = boot_and_run(self.image, self.accelerator, job_dir, self.cfg, job.timeout_s)
        names = [m[0] for m in rec.markers]
        if "no-job" in names:
            raise JobError("the VM found no job.json on its job share")
        try:
            status = read_status(job_dir)
        except JobError as e:
            raise JobError(f"{e}; serial log: {job_dir / 'vm' / 'serial.log'}") from None
        return JobResult(
            job_dir=job_dir,
            exit_code=status.get("exit_code"),
            timed_out=bool(status.get("timed_out")),
            substrate=self.name,
            accelerator=self.accelerator,
            seconds_to_userspace=rec.seconds_to_userspace,
            seconds_total=rec.seconds_total,
            status=status,
            clock=self.clock,
        )
