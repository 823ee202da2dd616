"""Native mode: run a job directly on a Linux host that has what we need.

Experiments need packet delay (sch_netem), fq, and a kernel that loads our
module.  Before a native run, :func:`probe_host` checks each of them without
touching the host's own network: qdiscs are tried on the loopback device of
a scratch network namespace that the probe creates and deletes
(sslab.guest.qdiscs, the same probe the testbed guests run).  A host that
lacks anything is refused before the job starts, with the list of what is
missing and a pointer to the VM substrate.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from . import agent
from .job import JobResult, JobSpec

#: The qdiscs experiments use (probed by sslab.guest.qdiscs).
QDISCS = ("netem", "fq", "tbf", "htb")
#: Programs a job may call on the substrate.
REQUIRED_TOOLS = ("ip", "tc", "iperf3", "ping", "ethtool", "tcpdump")

class NativeUnavailable(RuntimeError):
    def __init__(self, missing: list[str]):
        self.missing = missing
        super().__init__(
            "native mode is not possible on this host; missing:\n  - "
            + "\n  - ".join(missing)
            + "\nUse the VM substrate instead (the default; SUBSTRATE=vm), which boots a kernel that has them."
        )


@dataclass
class HostCapabilities:
    root: bool
    tools: dict[str, bool] = field(default_factory=dict)
    qdiscs: dict[str, bool] = field(default_factory=dict)
    module_loading: bool = False
    module_loading_reason: str = ""

    def missing(self) -> list[str]:
        out = []
        if not self.root:
            out.append("root privileges (network namespaces, tc and module loading need them)")
        out += [f"program '{t}'" for t, ok in self.tools.items() if not ok]
        out += [f"qdisc sch_{q} (tc qdisc add ... {q} fails in a scratch namespace)"
                for q, ok in self.qdiscs.items() if not ok]
        if not self.module_loading:
            out.append(f"kernel module loading ({self.module_loading_reason})")
        return out


def module_loading_status(proc: Path = Path("/proc")) -> tuple[bool, str]:
    """Can this kernel load modules?  Decided from /proc, without loading one."""
    if not (proc / "modules").exists():
        return False, "the kernel was built without module support: /proc/modules does not exist"
    disabled = proc / "sys/kernel/modules_disabled"
    if disabled.exists() and disabled.read_text().strip() == "1":
        return False, "module loading is disabled: kernel.modules_disabled = 1"
    return True, "ok"


def probe_qdiscs() -> dict[str, bool]:
    """The qdiscs this host can instantiate, probed by the same code the testbed guests run
    (sslab.guest.qdiscs, started as a program: guest code is shipped, not imported)."""
    res = subprocess.run([sys.executable, "-m", "sslab.guest.qdiscs"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(paths.REPO_ROOT / "runners")}, timeout=60)
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError:
        return {q: False for q in QDISCS}


def probe_host() -> HostCapabilities:
    caps = HostCapabilities(root=os.geteuid() == 0)
    caps.tools = {t: shutil.which(t) is not None for t in REQUIRED_TOOLS}
    if caps.root and caps.tools.get("ip") and caps.tools.get("tc"):
        caps.qdiscs = probe_qdiscs()
    else:
        caps.qdiscs = {q: False for q in QDISCS}
    caps.module_loading, caps.module_loading_reason = module_loading_status()
    return caps


def native_programs() -> Path:
    """Our guest programs (the traffic tool, the namespace runner) compiled with this host's compiler,
    cached by their sources' and flags' hash:
    a native host runs them from there, as the image's guests run theirs from /usr/local/bin."""
    import hashlib
    from .image import GUEST_CFLAGS, GUEST_PROGRAMS, ImageError, compile_on_host
    from .buildtools import sha256_file
    digest = hashlib.sha256(" ".join([*(sha256_file(paths.REPO_ROOT / src) for src in GUEST_PROGRAMS),
                                      *GUEST_CFLAGS]).encode()).hexdigest()[:16]
    bin_dir = paths.cache_dir() / "native-bin" / digest
    for src, target in GUEST_PROGRAMS.items():
        exe = bin_dir / Path(target).name
        if not exe.exists():
            bin_dir.mkdir(parents=True, exist_ok=True)
            tmp = exe.with_suffix(".tmp")
            try:
                compile_on_host(paths.REPO_ROOT / src, tmp)
            except ImageError as e:
                raise NativeUnavailable([f"a C compiler that builds {src}: {str(e)[-300:]}"]) from None
            tmp.replace(exe)
    return bin_dir


class NativeHost:
    """Runs a job on this host, after checking that the host can run experiments."""

    name = "native"
    clock = "native"

    def __init__(self) -> None:
        self.capabilities = probe_host()
        missing = self.capabilities.missing()
        if missing:
            raise NativeUnavailable(missing)

    def facts(self, res: JobResult) -> dict:
        """Nothing beside the guest's report: the host's facts are the check's own."""
        return {}

    def run(self, job: JobSpec, job_dir: Path) -> JobResult:
        job.write(job_dir)
        bin_dir = native_programs()
        status = agent.run_job(str(job_dir), {"PYTHONPATH": str(paths.REPO_ROOT / "runners"),
                                              "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"})
        return JobResult(job_dir=job_dir, exit_code=status.get("exit_code"),
                         timed_out=bool(status.get("timed_out")), substrate=self.name,
                         accelerator=None, seconds_total=status.get("seconds"), status=status,
                         clock=self.clock)
