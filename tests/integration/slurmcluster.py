"""A one-node Slurm cluster on this machine, started and stopped by the tests themselves: Debian's
slurmctld and slurmd (`make slurm-deps`) under a configuration of their own (their own ports, state
and logs in a directory of the test's), authenticated by the machine's munge, and an unprivileged
user, as a campus cluster's user, with a Python environment, an image cache and a results directory
of their own in their home.

The cluster has two partitions: `debug` (this machine, the default) and `pair` (this machine and
`ghost`, a node at an address of TEST-NET-1 that never answers), for the refusal of a path only this machine sees.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from sslab.paths import REPO_ROOT, cache_dir

USER = "sslabci"
#: Ports of our own, apart from a system Slurm's 6817/6818.
CTLD_PORT, SLURMD_PORT = 16817, 16818


@dataclass
class Cluster:
    dir: Path
    conf: Path
    procs: list[subprocess.Popen]

    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        """A Slurm command as the administrator (root)."""
        return subprocess.run(list(cmd), capture_output=True, text=True, check=check,
                              env={**os.environ, **self.env()})

    def log_tail(self, n: int = 20) -> str:
        return "\n".join(f"{p.name}: " + "\n  ".join(p.read_text(errors="replace").splitlines()[-n:])
                         for p in sorted((self.dir / "log").glob("*.log")))


def config(d: Path, host: str, cpus: int) -> str:
    return f"""ClusterName=sslabtest
SlurmctldHost={host}
SlurmctldPort={CTLD_PORT}
SlurmdPort={SLURMD_PORT}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
MinJobAge=3600
KillWait=10
NodeName={host} CPUs={cpus} RealMemory=4000 State=UNKNOWN
NodeName=ghost NodeAddr=192.0.2.1 CPUs=1 RealMemory=1000 State=DOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
PartitionName=pair Nodes={host},ghost MaxTime=INFINITE State=UP
"""


def cgroup_conf() -> str:
    """cgroup.conf for this machine.  Slurm 22.05's "autodetect" refuses a hybrid layout (cgroup v1
    controllers under /sys/fs/cgroup and a cgroup2 at /sys/fs/cgroup/unified: "Hybrid mode is not
    supported"), which some machines of this project's kind have; there the v1 plugin is named."""
    mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
    unified = any(m[1] == "/sys/fs/cgroup" and m[2] == "cgroup2" for m in mounts if len(m) > 2)
    return "CgroupPlugin=autodetect\n" if unified else "CgroupPlugin=cgroup/v1\n"


def start_munge() -> None:
    """The machine's munged (Debian's key, its socket in /run/munge), if it is not running."""
    if subprocess.run(["munge", "-n"], capture_output=True).returncode == 0:
        return
    Path("/run/munge").mkdir(exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True)
    deadline = time.monotonic() + 10
    while subprocess.run(["munge", "-n"], capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "munged did not start"
        time.sleep(0.2)


def start(d: Path) -> Cluster:
    """slurmctld and slurmd in the foreground (-D), configured under @d; waits for the node to be idle."""
    for sub in ("state", "spool", "log"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    host = socket.gethostname()
    conf = d / "slurm.conf"
    conf.write_text(config(d, host, len(os.sched_getaffinity(0))))
    (d / "cgroup.conf").write_text(cgroup_conf())
    start_munge()
    env = {**os.environ, "SLURM_CONF": str(conf)}
    procs = [subprocess.Popen([daemon, "-D", "-f", str(conf)] + (["-i"] if daemon == "slurmctld" else []),
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
             for daemon in ("slurmctld", "slurmd")]
    cluster = Cluster(d, conf, procs)
    deadline = time.monotonic() + 60
    while True:
        res = cluster.run("sinfo", "-h", "-p", "debug", "-o", "%T", check=False)
        if res.returncode == 0 and res.stdout.strip() == "idle":
            return cluster
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            stop(cluster)
            raise AssertionError(f"the one-node cluster did not come up: {res.stdout}{res.stderr}\n"
                                 f"{cluster.log_tail()}")
        time.sleep(0.5)


def stop(cluster: Cluster) -> None:
    cluster.run("scancel", "--full", "-u", USER, check=False)
    for p in cluster.procs:
        if p.poll() is None:
            p.terminate()
    for p in cluster.procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


# -- the unprivileged user -------------------------------------------------------


def ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True)
        return pwd.getpwnam(USER)


def as_user(*cmd: str) -> list[str]:
    return ["runuser", "-u", USER, "--", *cmd]


def user_python(home: Path) -> Path:
    """The user's own Python environment (Debian's python3 and the project's dependencies from PyPI), as a
    cluster's user keeps one in their home; the checkout itself is read through PYTHONPATH, not copied.
    Kept between runs, by the hash of the project's dependencies."""
    import tomllib
    deps = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    venv = home / f"venv-{hashlib.sha256(repr(deps).encode()).hexdigest()[:12]}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run(as_user("/usr/bin/python3", "-m", "venv", str(venv)), check=True, capture_output=True)
        res = subprocess.run(as_user(str(python), "-m", "pip", "install", "-q", *deps), capture_output=True, text=True)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return python


def user_cache(home: Path, image) -> Path:
    """The user's image cache, every file theirs, as an image built elsewhere (with root) and copied in
    by the user would be: the image the tests use and its base's record, copied from the machine's cache
    (root's own, which the user cannot enter; a hard link would leave the rootfs's root-only files, such
    as /etc/shadow, unreadable to the user, and the image would count as damaged).  Kept between runs."""
    root = cache_dir()
    image_dir = Path(image.root)
    assert image_dir.is_relative_to(root), f"the image is not under the cache {root}: {image_dir}"
    cache = home / "cache"
    dest = cache / image_dir.relative_to(root)
    u = pwd.getpwnam(USER)
    if not (dest / "manifest.json").is_file():
        partial = dest.with_name(f".copy-{dest.name}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", "--sparse=always", str(image_dir), str(partial)], check=True)
        partial.rename(dest)
    for base_json in (root / "base").glob("*/base.json"):
        (cache / base_json.parent.relative_to(root)).mkdir(parents=True, exist_ok=True)
        shutil.copy2(base_json, cache / base_json.relative_to(root))
    subprocess.run(["chown", "-R", f"{u.pw_uid}:{u.pw_gid}", str(cache)], check=True)
    return cache
