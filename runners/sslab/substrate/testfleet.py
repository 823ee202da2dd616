"""A test fleet on one machine: hosts with filesystems of their own, reachable only over ssh.

    sslab fleet up [--hosts 3] [--docker 1]     (make fleet-up)
    sslab fleet down                            (make fleet-down)
    sslab fleet kill HOST                       (a host dies: for trying the fleet's recovery)

Each host is a container of the testbed's image (substrate.container: the UML kernel, the image,
the harness and its Python environment) with an ssh server added, started by Podman, or by Docker
for the last --docker of them.  Nothing of this machine is mounted in but the fleet's public key:
a matrix reaches a host only as it would reach a machine elsewhere, over ssh, by Ansible, with the
controller's tree shipped to the host's own /srv/sslab (playbooks/prepare.yml) and its cells
fetched back.  The inventory (<cache>/fleet/inventory.ini) says so:

    make reproduce-table1 INVENTORY=$(python -m sslab fleet inventory) ...

A host's Python is the image's (/opt/sslab/.venv, `sslab_python`), running the shipped tree
(PYTHONPATH), so a host needs neither PyPI nor a build; its UML runs in the container as in
`make container` (the image's rootfs as the guests' root, untouched by the ssh layer: the layer's
new and changed files are not in the guests' root).

Why containers and not network namespaces with roots of their own: the image already is a host
with everything the cells need, and an engine kill is a host that dies mid-run; a namespace would
need a root built for it and shares the machine's process table (a "dead" host's processes would
still be this machine's).  Podman here, Docker if its daemon answers or can be started
(`dockerd`, Debian's docker.io): the issue's both engines.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .. import paths
from .buildtools import ImageError
from .container import CONTAINER_ENV, HARNESS, HOST_EXTRA_FLAGS, build
from .engines import engine_trouble
from .image import ensure_image

#: Container names: sslab-fleet-<n>, the host's inventory name fleet<n>.
PREFIX = "sslab-fleet-"
#: The ssh layer on top of the testbed image (Debian's openssh-server from the image's own
#: release).  The environment goes to /etc/environment: an ssh session does not inherit the
#: container's, and the harness inside needs it (where the image is, where UML's memory file goes).
SSH_LAYER = """FROM {base}
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \\
    openssh-server && rm -rf /var/lib/apt/lists/* && mkdir -p /run/sshd /root/.ssh && chmod 700 /root/.ssh
RUN printf '%s\\n' {env} > /etc/environment
CMD ["/usr/sbin/sshd", "-D", "-e"]
"""
#: Run flags per engine: Podman's as `make container` measured them on this kind of machine;
#: Docker's daemon gave the container what it needs without any.
RUN_FLAGS = {"podman": HOST_EXTRA_FLAGS, "docker": ()}
#: Seconds a host has to answer ssh after its container starts.
SSH_WAIT_S = 30.0
#: Where the daemon we start keeps its images, when Docker is not running already.
DOCKER_ROOT = "docker"


def fleet_dir() -> Path:
    return paths.cache_dir() / "fleet"


def inventory_path() -> Path:
    return fleet_dir() / "inventory.ini"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        raise ImageError(f"{' '.join(cmd[:4])} failed ({res.returncode}): {(res.stderr or res.stdout).strip()[-600:]}")
    return res


def base_image() -> str:
    """A testbed container image (podman) of this machine's testbed image: the newest tag made for its
    image hash (the harness inside is not used: hosts get the controller's tree), else `make container`."""
    image_hash = ensure_image().manifest()["image_hash"][:12]
    listed = json.loads(run(["podman", "images", "--format", "json"]).stdout or "[]")
    tags = [(img.get("Created", 0), name) for img in listed for name in img.get("Names") or []
            if f"slowstart-lab:{image_hash}-" in name]
    tags = [name for _, name in sorted(tags)]
    return tags[-1] if tags else build()["tag"]


def fleet_image() -> str:
    """The ssh layer on the base image (podman), built once per base."""
    base = base_image()
    tag = f"localhost/sslab-fleet:{base.rsplit(':', 1)[1]}"
    if subprocess.run(["podman", "image", "exists", tag]).returncode == 0:
        return tag
    env = " ".join(f"'{k}={v}'" for k, v in CONTAINER_ENV.items())
    with tempfile.TemporaryDirectory() as ctx:
        (Path(ctx) / "Containerfile").write_text(SSH_LAYER.format(base=base, env=env))
        run(["podman", "build", "--runtime", "runc", "--cgroup-manager=cgroupfs", "--network", "host", "-t", tag, ctx])
    drop_older_fleet_images("podman", tag)
    return tag


def drop_older_fleet_images(eng: str, keep: str) -> None:
    """Fleet images of other bases (about 1.9 GB each): removed, so repeated runs do not fill the disk."""
    names = subprocess.run([eng, "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True,
                           text=True).stdout.split()
    for name in names:
        if name.split(":")[0].endswith("sslab-fleet") and name != keep:
            subprocess.run([eng, "rmi", "-f", name], capture_output=True)


def ensure_docker() -> str | None:
    """None once `docker info` answers (starting Debian's dockerd if it is installed and not running),
    else why Docker cannot be used here."""
    if engine_trouble("docker") is None:
        return None
    if shutil.which("dockerd") is None:
        return "dockerd not installed (Debian's docker.io: apt-get install docker.io)"
    root = paths.cache_dir() / DOCKER_ROOT
    root.mkdir(parents=True, exist_ok=True)
    fleet_dir().mkdir(parents=True, exist_ok=True)
    log = open(fleet_dir() / "dockerd.log", "a")
    proc = subprocess.Popen(["dockerd", "--data-root", str(root), "-H", "unix:///var/run/docker.sock"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (fleet_dir() / "dockerd.pid").write_text(str(proc.pid))
    for _ in range(60):
        time.sleep(0.5)
        if engine_trouble("docker") is None:
            return None
    return f"dockerd started but `docker info` does not answer (log {fleet_dir() / 'dockerd.log'})"


def docker_has(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0


def up(hosts: int = 3, docker: int = 1) -> dict:
    """Start the fleet (a fleet already up is taken down first); its inventory."""
    if hosts < 1 or not 0 <= docker <= hosts:
        raise ValueError(f"--hosts {hosts} --docker {docker}: at least one host, and at most that many by Docker")
    down()
    d = fleet_dir()
    d.mkdir(parents=True, exist_ok=True)
    key = d / "id_ed25519"
    if not key.exists():
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sslab-fleet", "-f", str(key)])
    tag = fleet_image()
    engines = ["podman"] * (hosts - docker) + ["docker"] * docker
    if docker:
        if why := ensure_docker():
            raise ImageError(f"--docker {docker}: {why}")
        if not docker_has(tag):
            save = subprocess.Popen(["podman", "save", "--format", "docker-archive", tag], stdout=subprocess.PIPE)
            res = subprocess.run(["docker", "load"], stdin=save.stdout, capture_output=True, text=True)
            save.stdout.close()
            if save.wait() != 0 or res.returncode != 0:
                raise ImageError(f"docker load of {tag} failed: {res.stderr.strip()[-400:]}")
            drop_older_fleet_images("docker", tag)
    members = []
    cores = sorted(os.sched_getaffinity(0))
    for n, eng in enumerate(engines, start=1):
        name = f"{PREFIX}{n}"
        # A core of its own where the machine has enough (round-robin where it has fewer): a host's
        # runner pins its UMLs to the first core it may use, and without a cpuset every host's
        # first core is this machine's first (three hosts on one core of two: a poweroff past its
        # 30 s watchdog on 2026-11-25).
        core = cores[(n - 1) % len(cores)]
        run([eng, "run", "-d", "--name", name, "--hostname", f"fleet{n}", "--cpuset-cpus", str(core), *RUN_FLAGS[eng],
             "-v", f"{key}.pub:/root/.ssh/authorized_keys:ro", tag])
        ip = run([eng, "inspect", "-f", "{{.NetworkSettings.IPAddress}}", name]).stdout.strip()
        members.append({"host": f"fleet{n}", "container": name, "engine": eng, "ip": ip, "core": core})
    known = d / "known_hosts"
    known.write_text("")
    for m in members:
        with open(known, "a") as f:
            f.write(host_key(m, m["ip"]))
    lines = ["# The test fleet (`make fleet-up`): containers reachable only over ssh.  Made by",
             "# `python -m sslab fleet up`; `make fleet-down` removes them.", "[testbeds]"]
    for m in members:
        lines.append(
            f"{m['host']} ansible_host={m['ip']} ansible_user=root ansible_ssh_private_key_file={key} "
            f"ansible_ssh_common_args='-o UserKnownHostsFile={known}' ansible_python_interpreter=/usr/bin/python3 "
            f"sslab_workdir=/srv/sslab sslab_python=/{HARNESS}/.venv/bin/python sslab_host_jobs=1 "
            f"sslab_engine_of_host={m['engine']}")
    inventory_path().write_text("\n".join(lines) + "\n")
    record = {"image": tag, "hosts": members, "inventory": str(inventory_path())}
    (d / "fleet.json").write_text(json.dumps(record, indent=1))
    return record


def members() -> list[dict]:
    try:
        return json.loads((fleet_dir() / "fleet.json").read_text())["hosts"]
    except (OSError, ValueError, KeyError):
        return []


def kill(host: str) -> dict:
    """@host dies at once (its container killed): what a fleet must survive."""
    for m in members():
        if host in (m["host"], m["container"]):
            run([m["engine"], "kill", m["container"]])
            return m
    raise ValueError(f"no fleet host {host!r} (hosts: {', '.join(m['host'] for m in members()) or 'none'})")


def stop(member: dict) -> None:
    """@member's container stopped at once (no grace: a power cut, a host's reboot), kept to start again."""
    run([member["engine"], "stop", "-t", "0", member["container"]])


def start(member: dict) -> str:
    """@member's stopped container started again and answering ssh (its sshd is the container's command);
    its address now, which the inventory must still name for the host to rejoin."""
    run([member["engine"], "start", member["container"]])
    ip = run([member["engine"], "inspect", "-f", "{{.NetworkSettings.IPAddress}}", member["container"]]).stdout.strip()
    scan = host_key(member, ip)
    if ip != member["ip"]:
        readdress(member, ip, scan)
    return ip


def host_key(member: dict, ip: str) -> str:
    """@member's ssh host key at @ip (ssh-keyscan's line), once its sshd answers: SSH_WAIT_S at most."""
    deadline = time.monotonic() + SSH_WAIT_S
    while not (scan := subprocess.run(["ssh-keyscan", "-T", "2", "-t", "ed25519", ip], capture_output=True,
                                      text=True).stdout).strip():
        if time.monotonic() > deadline:
            raise ImageError(f"{member['host']} ({member['container']}, {ip}) does not answer ssh")
        time.sleep(0.5)
    return scan


def readdress(member: dict, ip: str, host_key: str) -> None:
    """@member came back at @ip (Podman's bridge gives a restarted container a new address, as DHCP may
    give a rebooted machine): the inventory, the known hosts and the fleet's record say so from now on,
    for the next command that reads them (a running controller has the old address: to it the host is
    gone)."""
    old = member["ip"]
    inv = inventory_path()
    inv.write_text("".join(ln.replace(f"ansible_host={old} ", f"ansible_host={ip} ")
                           if ln.startswith(f"{member['host']} ") else ln
                           for ln in inv.read_text().splitlines(keepends=True)))
    with open(fleet_dir() / "known_hosts", "a") as f:
        f.write(host_key.rstrip("\n") + "\n")
    record = json.loads((fleet_dir() / "fleet.json").read_text())
    for m in record["hosts"]:
        if m["container"] == member["container"]:
            m["ip"] = ip
    (fleet_dir() / "fleet.json").write_text(json.dumps(record, indent=1))
    member["ip"] = ip


def processes_of(member: dict) -> list[int]:
    """This machine's pids of the processes running in @member's container (its cgroup names the
    container's id): what the fleet host runs, as a host elsewhere would see it."""
    cid = run([member["engine"], "inspect", "-f", "{{.Id}}", member["container"]]).stdout.strip()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if cid in (entry / "cgroup").read_text():
                found.append(int(entry.name))
        except OSError:       # gone meanwhile
            continue
    return found


#: Where a fleet host keeps a matrix's cells (its sslab_workdir's results, as the inventory says).
HOST_RESULTS = "/srv/sslab/results"


def forget(member: dict, matrix_rel: str) -> None:
    """@member's own copy of the matrix at @matrix_rel removed: a host dealt a cell it has done packs it
    at once, so a second run over the fleet (the soak's) would run nothing there."""
    run([member["engine"], "exec", member["container"], "rm", "-rf", f"{HOST_RESULTS}/{matrix_rel}"])


def down() -> list[str]:
    """Remove the fleet's containers, whichever engine runs them; the names removed."""
    removed = []
    for eng in ("podman", "docker"):
        if engine_trouble(eng) is not None:
            continue
        names = subprocess.run([eng, "ps", "-a", "--format", "{{.Names}}"], capture_output=True,
                               text=True).stdout.split()
        for name in names:
            if name.startswith(PREFIX):
                subprocess.run([eng, "rm", "-f", name], capture_output=True)
                removed.append(name)
    (fleet_dir() / "fleet.json").unlink(missing_ok=True)
    stop_our_dockerd()
    return removed


def stop_our_dockerd() -> None:
    """The Docker daemon `up` started (ensure_docker), if it did: stopped with the fleet."""
    pid_file = fleet_dir() / "dockerd.pid"
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return
    pid_file.unlink(missing_ok=True)
    try:
        if Path(f"/proc/{pid}/comm").read_text().strip() != "dockerd":
            return  # that daemon is gone, and the pid is another process's now
    except OSError:
        return
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.1)
    except ProcessLookupError:
        pass
