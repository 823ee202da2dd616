"""Open vSwitch for the dumbbell's switched LANs (topology.lans: ovs): its daemons and its bridges.

Each side's LAN is one bridge of the kernel datapath (CONFIG_OPENVSWITCH, built into the testbed's
UML kernel; the stock kernel's openvswitch module under QEMU), in standalone mode with no
controller: a learning switch (the NORMAL action), as the SUSS group's test topology had hubs and
switches between hosts and routers.

The daemons (ovsdb-server, ovs-vswitchd) are started on first use where none answers, with their
database on tmpfs (/run/openvswitch: the tools' default socket, so Mininet and containerlab find
it; the testbed's root is read-only, so not /etc/openvswitch).  A host that runs its own Open
vSwitch (a native host) keeps it: ours are stopped only if we started them.

Every port of ours gets a QoS row of type linux-noop.  Without one, ovs-vswitchd takes charge of
the port's root qdisc and deletes what it finds there when it first configures the port: measured
in the testbed (Open vSwitch 3.1.0, 26 Nov 2026), a netem added to a veth before `add-port` was
gone after it.  The delay lines and host models on the switch's ports towards the hosts are ours
(sslab.guest.dumbbell); linux-noop leaves them alone (the same check: both netems stayed through
another port's addition and a bridge reconfiguration).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

RUN_DIR = Path("/run/openvswitch")
SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
#: How long the daemons get to answer after they are started.
START_TIMEOUT_S = 60
#: How long ovs-vswitchd gets to start its first upcall handler (wait_for_handlers).
HANDLERS_TIMEOUT_S = 60
#: ovs-vswitchd is started only once the system has been up this long (wait_for_uptime says why).
VSWITCHD_MIN_UPTIME_S = 10.5


def _vsctl(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    res = subprocess.run(["ovs-vsctl", "--timeout=30", *args], capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        raise RuntimeError(f"ovs-vsctl {' '.join(args[:6])} failed ({res.returncode}): {res.stderr.strip()[-600:]}")
    return res


def answers() -> bool:
    """Whether an ovsdb-server answers on the default socket and an ovs-vswitchd runs."""
    try:
        db = subprocess.run(["ovs-vsctl", "--timeout=5", "show"], capture_output=True, timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    return db and _vswitchd_running()


def _vswitchd_running() -> bool:
    return subprocess.run(["pgrep", "-x", "ovs-vswitchd"], capture_output=True).returncode == 0


def _load_datapath() -> None:
    """The kernel datapath: built in (UML), or the stock kernel's module."""
    if not Path("/sys/module/openvswitch").exists():
        subprocess.run(["modprobe", "openvswitch"], capture_output=True)


class Daemons:
    """The two daemons: found running, or started here (and then stopped by stop())."""

    def __init__(self):
        self.started = False

    def ensure(self) -> "Daemons":
        _load_datapath()
        if answers():
            return self
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        db = RUN_DIR / "conf.db"
        if not db.exists():
            subprocess.run(["ovsdb-tool", "create", str(db), str(SCHEMA)], check=True, capture_output=True)
        sock = f"unix:{RUN_DIR / 'db.sock'}"
        subprocess.run(["ovsdb-server", str(db), f"--remote=p{sock}", f"--pidfile={RUN_DIR / 'ovsdb-server.pid'}",
                        "--detach", f"--log-file={RUN_DIR / 'ovsdb-server.log'}"], check=True, capture_output=True)
        _vsctl("--no-wait", "init")
        wait_for_uptime()
        subprocess.run(["ovs-vswitchd", sock, f"--pidfile={RUN_DIR / 'ovs-vswitchd.pid'}", "--detach",
                        f"--log-file={RUN_DIR / 'ovs-vswitchd.log'}"], check=True, capture_output=True)
        self.started = True
        deadline = time.monotonic() + START_TIMEOUT_S
        while not answers():
            if time.monotonic() > deadline:
                raise RuntimeError(f"ovs-vswitchd did not answer in {START_TIMEOUT_S} s; see {RUN_DIR}/*.log")
            time.sleep(0.2)
        return self

    def stop(self) -> None:
        if not self.started:
            return
        for name in ("ovs-vswitchd", "ovsdb-server"):
            pid_file = RUN_DIR / f"{name}.pid"
            try:
                os.kill(int(pid_file.read_text().strip()), 15)
            except (OSError, ValueError):
                pass
        self.started = False


def version() -> str:
    """ovs-vswitchd's version ("3.1.0")."""
    out = subprocess.run(["ovs-vswitchd", "--version"], capture_output=True, text=True).stdout
    first = (out.splitlines() or [""])[0]  # "ovs-vswitchd (Open vSwitch) 3.1.0"
    return first.split()[-1] if first else "?"


def add_bridge(name: str, ports: list[str]) -> None:
    """Bridge @name in standalone mode with no controller, @ports on it, each holding its qdiscs."""
    args = ["--", "--may-exist", "add-br", name, "--", "set-fail-mode", name, "standalone"]
    for port in ports:
        args += ["--", "--may-exist", "add-port", name, port]
    _vsctl(*args)
    keep_qdiscs(ports)
    wait_for_handlers()


def _handler_threads() -> int:
    """ovs-vswitchd's upcall handler threads (threads named handler<N>)."""
    pid = subprocess.run(["pgrep", "-x", "ovs-vswitchd"], capture_output=True, text=True).stdout.split()
    if not pid:
        return 0
    n = 0
    for comm in Path(f"/proc/{pid[0]}/task").glob("*/comm"):
        try:
            n += comm.read_text().startswith("handler")
        except OSError:
            pass
    return n


def wait_for_handlers(timeout_s: float = HANDLERS_TIMEOUT_S) -> float:
    """Wait until ovs-vswitchd has an upcall handler (seconds waited); a switch forwards nothing
    before: the first packet of every flow goes up to a handler, which installs the datapath's flow."""
    t0 = time.monotonic()
    while _handler_threads() < 1:
        if time.monotonic() - t0 > timeout_s:
            raise RuntimeError(f"ovs-vswitchd started no upcall handler in {timeout_s:.0f} s; see {RUN_DIR}/*.log")
        time.sleep(0.2)
    return time.monotonic() - t0


def wait_for_uptime(seconds: float = VSWITCHD_MIN_UPTIME_S) -> float:
    """Sleep until the system's monotonic clock reads @seconds (ovs-vswitchd's start; seconds slept).

    ovs-vswitchd sizes its upcall handlers by the CPUs it may run on, a count it caches and first
    computes once its monotonic clock reads 10 s (before that the count is 0).  Started earlier,
    it runs with no handler ("Overriding n-handler-threads to 0"), gets one at 10-12 s, and even
    then its kernel datapath (per-CPU upcall dispatch) loses every upcall: measured in the UML
    testbed, whose clock starts at 0 at boot (Open vSwitch 3.1.0, 26 Nov 2026): started at 2 s of
    uptime, "lookups: missed:3 lost:3" and no ping through the switch at 12 s or at 27 s; started
    at 11 s, one handler at once and pings through (lost:0).  Under virtual time the wait costs no
    wall time; a real-clock guest waits out what is left of its first 10.5 s."""
    left = seconds - time.monotonic()
    if left > 0:
        time.sleep(left)
    return max(left, 0.0)


def del_bridge(name: str) -> None:
    if answers():
        _vsctl("--if-exists", "del-br", name, check=False)


def fail_modes(names: list[str]) -> dict[str, str]:
    """Each bridge's fail mode and controllers, read back (the fidelity record says what ran)."""
    out = {}
    for name in names:
        mode = _vsctl("get-fail-mode", name).stdout.strip()
        ctl = _vsctl("get-controller", name).stdout.split()
        out[name] = f"{mode}, {'no controller' if not ctl else 'controllers ' + ' '.join(ctl)}"
    return out


def keep_qdiscs(ports: list[str]) -> None:
    """Give each of @ports a linux-noop QoS row: Open vSwitch leaves its qdiscs alone (module doc)."""
    args: list[str] = []
    for k, port in enumerate(ports):
        args += ["--", "set", "port", port, f"qos=@q{k}", "--", f"--id=@q{k}", "create", "qos", "type=linux-noop"]
    if args:
        _vsctl(*args)
