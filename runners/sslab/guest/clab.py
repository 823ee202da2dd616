"""The dumbbell as a containerlab topology of Docker containers, one per node.

    s_i, c_i, r1, r2   containers of one tiny image (busybox, `docker import`ed
                       at first use: no registry is reachable), each only a
                       network namespace with a sleeping process in it
    links              veth pairs, made by containerlab from the topology file

In the testbed the harness starts the containers (`docker run`) and
containerlab wires them: the generated `<lab>.clab.yml` names them as
`ext-container` nodes.  containerlab's own `linux` nodes cannot start here:
containerlab sets net.ipv6.conf.all.disable_ipv6 in each, and the testbed's
kernel boots with IPv6 off (its autoconfiguration put packets on the
bottleneck during runs), so runc finds no such sysctl and refuses.  The file
for people to deploy by hand (`sslab clab`, topologies/dumbbell5.clab.yml)
has the same nodes and links as `linux` nodes.

Each container's network namespace is then given the name the configuration
code uses (`ip netns attach`, as for Mininet), so addresses, routes, delays,
the bottleneck and the capture are applied by exactly the same code as on
every backend.  The hosts' interface is `eth1` (containerlab keeps eth0 for
its management network, which no node joins).  containerlab's own `tools
netem` fixes its queue limit, so the bottleneck stays the harness's qdisc.

Docker inside the testbed: the UML guest's root is read-only, so dockerd
keeps its state on tmpfs (/tmp, /run; /etc/docker a tmpfs of its own) with
the vfs storage driver, and without iptables or a default bridge (the
testbed's kernel has no netfilter, and nothing here needs NAT).  On a host
that runs its own Docker engine, that engine is used.

dockerd, containerd, runc and what runc starts (dockerd's network hook) run
with one Go scheduler slot (GOMAXPROCS=1, `DockerEngine.ensure`).  The guest
has one CPU, but containerd starts its shims with GOMAXPROCS=2 and the shim
starts runc with GOMAXPROCS=4, whatever the environment says, and runc
passes its environment to the hook.  Under UML's inf-cpu virtual time two Go
schedulers on one CPU waited for each other for ever in that hook: one spun
in user mode, never entering the kernel, and the other's 100 us timed wait
never ended because the guest's clock moves only when the CPU is idle (the
measured chain: images/uml/README.md, "The spin guard").  So containerd,
the shim and runc are started through wrappers (`GO_WRAPPED`, first on
dockerd's PATH) that set GOMAXPROCS=1 after whatever their parent appended.
The shim's own daemon, which the shim starts from its own executable with
GOMAXPROCS=4 appended, is beyond them: there the kernel's spin guard keeps
the guest going.  `gomaxprocs()` says what the running stack got.

Teardown (`teardown()`, also run before every build, and by the caller's
`finally` on an error, SIGINT or SIGTERM): containerlab destroy, then the
containers the harness started, then the namespace names.  `leftovers()`
says what remains.  `python3 -m sslab.guest.clab topology PLAN` prints the
file to deploy by hand; `interrupt-check SECONDS` interrupts a scenario run
mid-traffic and reports what it left behind (an integration test).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from ..records import Plan, read_plan
from . import ovs
from .dumbbell import Dumbbell
from .netns import sh

LAB = "sslab"
#: The node image: busybox alone (Debian's busybox-static in the image).
NODE_IMAGE = "sslab-node:1"
BUSYBOX = Path("/bin/busybox")
#: The nodes sleep; nothing runs in them but what the run starts in their namespaces
#: (Dumbbell.launcher).
NODE_CMD = "/bin/busybox sleep 2147483647"
#: Our own dockerd inside the testbed.
DOCKER_DIR = Path("/run/sslab-docker")
DOCKER_DATA = Path("/tmp/sslab-docker")
DOCKER_SOCK = DOCKER_DIR / "docker.sock"
CLAB_DIR = Path("/run/sslab-clab")
#: The Go programs of the stack that their parent starts with GOMAXPROCS>1 whatever our
#: environment says (containerd -> shim: 2; shim -> runc, and so runc's hooks: 4), each
#: found on PATH: each is started through a wrapper in WRAPPER_DIR that sets GOMAXPROCS=1 last.
GO_WRAPPED = ("containerd", "containerd-shim-runc-v2", "runc")
WRAPPER_DIR = DOCKER_DIR / "bin"
#: Programs whose GOMAXPROCS `gomaxprocs()` reports (dockerd's network hook is dockerd too).
GO_STACK = ("dockerd", "containerd", "containerd-shim", "runc")
DEPLOY_TIMEOUT_S = 900
#: The management network containerlab insists on (no node joins it).
MGMT_SUBNET = "172.31.255.0/24"
#: The label on the containers the harness starts (what teardown removes).
OUR_LABEL = "org.slowstart-lab.lab"


def _run(cmd: list[str], env: dict | None = None, timeout: float = 300, check: bool = True,
         stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, env=env, timeout=timeout, input=stdin, cwd=cwd)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed ({res.returncode}): "
                           f"{res.stderr.decode(errors='replace')[-1500:]}")
    return res


class DockerEngine:
    """A Docker engine to talk to: the host's own, or one started here (in the testbed)."""

    def __init__(self):
        self.env = dict(os.environ)
        self.started = False

    def _answers(self) -> bool:
        try:
            return _run(["docker", "info", "--format", "{{.ServerVersion}}"], self.env, 60, check=False).returncode == 0
        except OSError:  # no docker client at all
            return False

    def ensure(self, timeout: float = 180) -> "DockerEngine":
        if self._answers():
            return self
        self.env["DOCKER_HOST"] = f"unix://{DOCKER_SOCK}"
        if self._answers():
            return self
        if not Path("/etc/sslab/image.json").exists():
            raise RuntimeError("no Docker engine answers (start one, or run in the testbed image)")
        DOCKER_DIR.mkdir(parents=True, exist_ok=True)
        DOCKER_DATA.mkdir(parents=True, exist_ok=True)
        self.env["PATH"] = f"{write_go_wrappers(WRAPPER_DIR, self.env.get('PATH', os.defpath))}:" \
                           f"{self.env.get('PATH', os.defpath)}"
        write_sudo_standin(WRAPPER_DIR, self.env["PATH"])
        self.env["GOMAXPROCS"] = "1"   # dockerd itself, the docker client, containerlab
        etc = Path("/etc/docker")
        if not os.access(etc, os.W_OK):
            sh("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(etc))
        log = open(DOCKER_DIR / "dockerd.log", "ab")
        subprocess.Popen(["dockerd", "--iptables=false", "--ip6tables=false", "--bridge=none",
                          "--storage-driver=vfs", f"--data-root={DOCKER_DATA}", f"--exec-root={DOCKER_DIR / 'exec'}",
                          f"--pidfile={DOCKER_DIR / 'docker.pid'}", "-H", f"unix://{DOCKER_SOCK}"],
                         stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True, env=self.env)
        deadline = time.monotonic() + timeout
        while not self._answers():
            if time.monotonic() > deadline:
                raise RuntimeError(f"dockerd did not answer in {timeout:.0f} s; see {DOCKER_DIR / 'dockerd.log'}")
            time.sleep(0.5)
        self.started = True
        return self

    def gomaxprocs(self) -> dict[str, list[str]]:
        """program -> the GOMAXPROCS values its running processes got (unset: "unset")."""
        return gomaxprocs_of(GO_STACK)

    def docker(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return _run(["docker", *args], self.env, **kw)

    def version(self) -> str:
        return self.docker("version", "--format", "{{.Server.Version}}").stdout.decode().strip()

    def ensure_node_image(self) -> str:
        if self.docker("image", "inspect", NODE_IMAGE, check=False).returncode == 0:
            return NODE_IMAGE
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(str(BUSYBOX), arcname="bin/busybox")
        self.docker("import", "-", NODE_IMAGE, stdin=buf.getvalue())
        return NODE_IMAGE


def write_go_wrappers(directory: Path, path: str) -> Path:
    """Write into @directory one wrapper per GO_WRAPPED program (the real one found on @path)
    that starts it with GOMAXPROCS=1, whatever its parent put in its environment."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in GO_WRAPPED:
        real = shutil.which(name, path=path)
        if real is None:
            raise RuntimeError(f"{name} is not on PATH ({path}): the testbed image carries Docker's stack")
        _write_script(directory / name, "one Go scheduler slot on the one CPU", f'GOMAXPROCS=1 exec {real} "$@"')
    return directory


def write_sudo_standin(directory: Path, path: str) -> Path | None:
    """containerlab drives Open vSwitch as `sudo ovs-vsctl ...` (its ovs-bridge nodes), and the
    testbed's guest, where everything runs as root, has no sudo: write into @directory a `sudo`
    that runs its command as is, when there is none on @path and we are root."""
    if os.geteuid() != 0 or shutil.which("sudo", path=path) is not None:
        return None
    return _write_script(directory / "sudo", "the guest runs as root and has no sudo", 'exec "$@"')


def _write_script(path: Path, why: str, command: str) -> Path:
    """An executable shell script at @path that runs @command, saying @why in a comment."""
    path.write_text(f"#!/bin/sh\n# slowstart-lab: {why} (sslab.guest.clab)\n{command}\n")
    path.chmod(0o755)
    return path


def gomaxprocs_of(programs: tuple[str, ...], proc: Path = Path("/proc")) -> dict[str, list[str]]:
    """For each running process whose command name is one of @programs (as the kernel keeps it:
    its first 15 characters): the GOMAXPROCS in its environment ("unset" if none), by program."""
    found: dict[str, set[str]] = {}
    for pid_dir in proc.glob("[0-9]*"):
        try:
            comm = (pid_dir / "comm").read_text().strip()
            env = (pid_dir / "environ").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or a kernel thread
            continue
        program = next((p for p in programs if comm == p[:15]), None)
        if program is None:
            continue
        value = next((e.split(b"=", 1)[1].decode() for e in env if e.startswith(b"GOMAXPROCS=")), "unset")
        found.setdefault(program, set()).add(value)
    return {k: sorted(v) for k, v in sorted(found.items())}


def node_names(db: Dumbbell) -> dict[str, str]:
    """namespace -> containerlab node name (r1, r2, s1.., c1..)."""
    return {ns: ns.removeprefix(db.prefix + "-") for ns in db.namespaces}


def container_name(node: str) -> str:
    """The container of a node, as containerlab names it (clab-<lab>-<node>)."""
    return f"clab-{LAB}-{node}"


def topology(db: Dumbbell, image: str = NODE_IMAGE, external: bool = False) -> dict:
    """The containerlab topology of @db: one node per namespace, one link per veth pair.

    external=False: `linux` nodes that containerlab creates from @image (the file to deploy
    by hand).  external=True: `ext-container` nodes, containers the harness starts itself and
    containerlab only wires (the testbed's way: containerlab's `linux` nodes set the
    container's net.ipv6.conf.all.disable_ipv6, which a kernel booted with IPv6 off, as the
    testbed's is, does not have, so runc refuses to start them)."""
    node = node_names(db)
    name = container_name if external else (lambda n: n)
    defaults = {"kind": "ext-container"} if external else \
        {"kind": "linux", "image": image, "image-pull-policy": "never", "network-mode": "none", "cmd": NODE_CMD}
    # Switched LANs: each switch an `ovs-bridge` node, a bridge that must exist before the deploy
    # (ContainerlabDumbbell.build makes it; by hand: ovs-vsctl add-br NAME -- set-fail-mode NAME
    # standalone); a link's end on it is named by the switch and the port.
    on_switch = {port: bridge for bridge, ports in db.switch_ports().items() for port in ports}

    def end(ns: str | None, dev: str) -> str:
        return f"{on_switch[dev]}:{dev}" if ns is None else f"{name(node[ns])}:{dev}"
    return {
        "name": LAB,
        # containerlab always makes a management network; the nodes do not join it.  IPv4 only
        # (the testbed's kernel has IPv6 off) and no external access (that is iptables rules,
        # and the testbed's kernel has no netfilter).
        "mgmt": {"network": f"{LAB}-mgmt", "ipv4-subnet": MGMT_SUBNET, "external-access": False},
        "topology": {
            "defaults": defaults,
            "nodes": {**{name(node[ns]): {} for ns in db.namespaces},
                      **{bridge: {"kind": "ovs-bridge"} for bridge in db.switches}},
            "links": [{"endpoints": [end(a, da), end(b, db_)]} for a, da, b, db_ in db.links()],
        },
    }


def to_yaml(value, indent: int = 0) -> str:
    """YAML for the plain data topology() makes (mappings, lists, strings, numbers)."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:\n{to_yaml(v, indent + 2)}")
            else:
                lines.append(f"{pad}{k}: {to_yaml(v)}")
        return "\n".join(lines)
    if isinstance(value, list):
        if not value:
            return "[]"
        out = []
        for v in value:
            if isinstance(v, dict) and v:
                body = to_yaml(v, indent + 2).lstrip()
                out.append(f"{pad}- {body}")
            else:
                out.append(f"{pad}- {to_yaml(v)}")
        return "\n".join(out)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(str(value))  # a quoted string is valid YAML


class ContainerlabDumbbell(Dumbbell):
    backend = "containerlab"
    host_dev = "eth1"

    def __init__(self, plan: Plan):
        super().__init__(plan)
        self.engine = DockerEngine()
        self.file = CLAB_DIR / f"{LAB}.clab.yml"
        self.versions: dict = {}

    def clab_env(self) -> dict:
        # The lab's directory goes beside the topology file (the testbed's root is read-only);
        # no version check (nothing outside is reachable).
        return {**self.engine.env, "CLAB_LABDIR_BASE": str(CLAB_DIR), "CLAB_VERSION_CHECK": "disable"}

    def container(self, ns: str) -> str:
        return container_name(node_names(self)[ns])

    def build(self) -> "Dumbbell":
        if shutil.which("containerlab") is None:
            raise RuntimeError("containerlab is not on PATH: the host brings it with a containerlab job "
                               "(sslab.substrate.containerlab.containerlab_for_job); the image does not carry it")
        self.engine.ensure()
        self.teardown()
        image = self.engine.ensure_node_image()
        for ns, node in node_names(self).items():
            self.engine.docker("run", "-d", "--name", self.container(ns), "--network", "none",
                               # (not containerlab's own label: it would take the lab as deployed already)
                               "--label", f"{OUR_LABEL}={LAB}",
                               "--hostname", node, image, *NODE_CMD.split())
        CLAB_DIR.mkdir(parents=True, exist_ok=True)
        self.file.write_text(to_yaml(topology(self, image, external=True)) + "\n")
        self._start_switches()
        for bridge in self.switches:
            ovs.add_bridge(bridge, [])  # containerlab's ovs-bridge nodes are bridges that exist
        _run(["containerlab", "deploy", "--runtime", "docker", "-t", str(self.file), "--reconfigure"],
             self.clab_env(), DEPLOY_TIMEOUT_S, cwd=CLAB_DIR)
        # containerlab put the switches' ports on them; they keep our qdiscs (sslab.guest.ovs).
        ovs.keep_qdiscs([port for ports in self.switch_ports().values() for port in ports])
        pids = self.engine.docker("inspect", "-f", "{{.State.Pid}}",
                                  *[self.container(ns) for ns in self.namespaces]).stdout.decode().split()
        for ns, pid in zip(self.namespaces, pids):
            sh("ip", "netns", "attach", ns, pid)
        self._configure()
        # (added to what _start_switches recorded: Open vSwitch's version when the LANs are switched)
        self.versions.update({"docker": self.engine.version(), "containerlab": clab_version(self.engine.env),
                              "gomaxprocs": self.engine.gomaxprocs()})
        return self

    def teardown(self) -> None:
        self.close_helpers()
        if self.file.exists():
            _run(["containerlab", "destroy", "--runtime", "docker", "-t", str(self.file), "--cleanup"],
                 self.clab_env(), DEPLOY_TIMEOUT_S, check=False, cwd=CLAB_DIR)
        left = self.containers()
        if left:
            self.engine.docker("rm", "-f", *left, check=False, timeout=300)
        super().teardown()

    def containers(self) -> list[str]:
        """Containers the harness started for the lab that exist (running or not)."""
        res = self.engine.docker("ps", "-aq", "--filter", f"label={OUR_LABEL}={LAB}", check=False)
        return res.stdout.decode().split() if res.returncode == 0 else []

    def leftovers(self) -> dict:
        """What a teardown left: the lab's containers, our namespace names, veths in this namespace,
        and traffic or capture processes (each would keep its namespace, and its veths, alive)."""
        names = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())
        links = subprocess.run(["ip", "-o", "link", "show", "type", "veth"], capture_output=True, text=True).stdout
        procs = subprocess.run(["pgrep", "-a", "-x", "sslab-transfer|tcpdump|iperf3"], capture_output=True,
                               text=True).stdout.split("\n")
        return {"containers": self.containers(), "namespaces": sorted(n for n in names if n in self.namespaces
                                                                     or n.startswith(f"clab-{LAB}-")),
                "veths": [ln.split(":")[1].strip() for ln in links.splitlines() if ln.strip()],
                "processes": [p for p in procs if p.strip()]}


def clab_version(env: dict | None = None) -> str:
    out = _run(["containerlab", "version"], {**(env or os.environ), "CLAB_VERSION_CHECK": "disable"}, 120,
               check=False).stdout.decode()
    for line in out.splitlines():
        if line.strip().startswith("version:"):
            return line.split(":", 1)[1].strip()
    return out.strip()[:60]


def interrupt_check(after_s: float) -> dict:
    """Run the job's plan (sslab.guest.scenario_run) in a child, interrupt it (SIGINT) @after_s
    seconds into its first run's traffic, and say what it left behind."""
    import signal
    out = Path(os.environ["SSLAB_OUT_DIR"])
    child = subprocess.Popen([sys.executable, "-m", "sslab.guest.scenario_run"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + DEPLOY_TIMEOUT_S
    # The first run's directory appears as its set-up begins (its capture file only after its traffic,
    # from the capture kept for the boot: sslab.guest.capture); its traffic is seconds of wall time.
    while not [d for d in (out / "runs").glob("*") if d.is_dir()]:
        if child.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    started = child.poll() is None
    time.sleep(after_s)
    child.send_signal(signal.SIGINT)
    try:
        _, err = child.communicate(timeout=DEPLOY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        _, err = child.communicate()
    time.sleep(2)  # the clients end once their servers are gone (guest time: free under UML)
    plan_file = Path(os.environ["SSLAB_JOB_DIR"]) / "plan.json"
    probe = ContainerlabDumbbell(read_plan(json.loads(plan_file.read_text()), str(plan_file)))
    probe.engine.ensure()
    return {"interrupted_during_traffic": started, "returncode": child.returncode,
            "stderr_tail": err[-600:], "leftovers": probe.leftovers()}


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "topology":
        plan = read_plan(json.loads(Path(argv[1]).read_text()), argv[1])
        print(to_yaml(topology(ContainerlabDumbbell(plan))))
        return 0
    if len(argv) == 2 and argv[0] == "interrupt-check":
        print(json.dumps(interrupt_check(float(argv[1]))))
        return 0
    print("usage: python3 -m sslab.guest.clab topology PLAN.json | interrupt-check SECONDS", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
