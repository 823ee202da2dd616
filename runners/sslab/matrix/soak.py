"""The soak: a matrix run twice, once left alone and once under faults drawn from a seed, then compared
cell by cell.

Under virtual time a cell's bytes depend on its plan alone, so a matrix that is killed, interrupted,
damaged and resumed must end where one left alone ends, byte for byte.  The soak drives the command a
user runs (`sslab run reproduce-table1 ...`, a process of its own, the same command again after each
fault) into two results directories beside each other:

    calm/     the matrix, run once to its end
    stormy/   the same command, started again and again; in each session faults strike at moments
              drawn from the seed: the controller sent SIGKILL, SIGTERM or SIGINT (Ctrl-C), a running
              boot's UML sent SIGKILL, a second controller started on the same directory, the
              results' filesystem filled to its last megabytes for a while and freed again, and
              over the test fleet (`--inventory`, make fleet-up) a host stopped and started, a
              finished cell damaged on disk (a byte flipped, a file cut short) while the matrix runs
              on, or between sessions once it is whole

then the command once more, left alone, to the end, and again until every damaged cell has been named
by a session that started after the damage.  Every cell of calm/ (of each matrix directory
there) is looked up in stormy/ by its key and their manifests compared on what the guest made (the job's plan and job/out/: every run's record,
capture and trace): identical, different (none allowed) or missing.  The record (soak.json) keeps the
seed, the schedule and what each fault did, so that a failing soak can be replayed.

Filling the disk fills the whole filesystem the soak writes to, for everything on it: the soak draws
that fault only when its directory is on a filesystem of its own (neither the repository's nor the
image cache's), and says so in the record when it is not.  Over a fleet, the soak runs on the test
fleet's containers (substrate.testfleet), which it can stop and start, and whose own copies of the
matrix it clears after the calm run (a host packs a cell it has done at once: the stormy run would run
nothing there).

A soak may take its calm run from an earlier soak of the same command (`--calm-from DIR`): a run left
alone is the same bytes wherever it ran, so one calm run serves as the reference for several stormy
ones (on this machine, then over the fleet), and its wall time (calm.json) times the faults.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import paths
from ..substrate import testfleet
from .stopping import processes_inside, stop_signals_interrupt
from .store import CONTROLLER_LOCK, CellStore
from .transfer import MANIFEST

#: What can strike while a controller runs, and what strikes between two of its sessions.
IN_RUN = ("sigkill-controller", "sigterm-controller", "sigint-controller", "sigkill-boot", "second-controller",
          "fill-the-disk", "stop-a-host")
BETWEEN = ("flip-a-byte", "cut-a-file")
KINDS = IN_RUN + BETWEEN
#: The faults strike at moments drawn uniformly over this many times the calm run's wall time, counted
#: over the stormy run's sessions (each fault's after_s: the time since the one before), so that they
#: meet a matrix from its start to its end, cells landing between them where a gap is long.  Rejected:
#: gaps of 0.5-3 cells' time (to 3 Dec 2026; at 320 cells no Table 1 cell came home before the storm
#: ended: a boot's ten land at once, every 90 s), and gaps of 0.5-2 of the calm run's landings (a
#: 16-cell matrix was whole before 14 of 20 faults could strike).
STORM_SPAN = 1.5
#: Cells whose manifests were written within this many seconds of each other landed together (a
#: boot's cells come home at once): what the soak counts to say how often cells came home.
LANDING_GAP_S = 10.0
#: What the soak compares of a cell: what its guest made, not the host's timings and paths.
GUEST_MADE = ("job/plan.json", "job/out/")
#: How long a second controller waits for the first to hold its lock (seconds: its checks of its hosts
#: and its plan come first).
LOCK_WAIT_S = 120.0
#: How long a boot-killing fault waits for a boot to be running (seconds).
BOOT_WAIT_S = 30.0
#: A full disk: the bytes left free on the results' filesystem (its last megabytes: a cell's record
#: still fits, its captures do not), and how long it stays full unless the controller stops first
#: (seconds: about a cell's boot, so that the fault meets a cell writing).
DISK_LEFT_B = 4 << 20
FILL_HOLD_S = 30.0
#: Where the ballast that fills it goes, in the soak's directory (removed when the fault ends, and by
#: a soak that stops for any reason).
BALLAST = ".ballast"
#: A stopped host stays down this long unless the controller stops first (seconds: long enough for the
#: controller to find it gone, a batch's ssh failing).
HOST_DOWN_S = 30.0
#: How long a session's controller has to stop its hosts' runs when the soak is stopped (seconds).
SESSION_STOP_S = 600.0
#: What an earlier soak wrote of its calm run, for a soak that takes it (--calm-from).
CALM_RECORD = "calm.json"
#: How long a session may run before the soak gives up on it (seconds).
SESSION_LIMIT_S = 4 * 3600


@dataclass
class Fault:
    kind: str
    after_s: float = 0.0             # seconds after the session's start or the last fault
    what: str = ""                   # what it did: a process and its exit, a cell and a file
    detected: bool | None = None     # a damaged cell: named by the next session


@dataclass
class Soak:
    seed: int
    args: list[str]
    faults: list[Fault] = field(default_factory=list)
    sessions: int = 0
    left_out: dict[str, str] = field(default_factory=dict)   # a fault kind not drawn: why
    calm_s: float = 0.0
    stormy_s: float = 0.0
    calm_from: str | None = None     # the earlier soak whose calm run this one took
    landing_s: float = 0.0           # the calm run's time between two landings of cells


def draw_schedule(seed: int, n: int, calm_s: float, kinds_allowed: tuple[str, ...] = KINDS) -> list[Fault]:
    """@n faults of @kinds_allowed drawn from @seed: each kind at least once when @n allows, the rest
    at random, in a random order; their moments uniform over STORM_SPAN times @calm_s (the calm run's
    wall time), each fault's after_s the gap since the one before."""
    rng = random.Random(seed)
    kinds = list(kinds_allowed[:n]) + [rng.choice(kinds_allowed) for _ in range(max(0, n - len(kinds_allowed)))]
    rng.shuffle(kinds)
    moments = sorted(rng.uniform(0.0, STORM_SPAN * calm_s) for _ in kinds)
    return [Fault(k, round(t - (moments[i - 1] if i else 0.0), 2)) for i, (k, t) in enumerate(zip(kinds, moments))]


def landings(written: list[float]) -> int:
    """How many times cells came home, from the moments their manifests were written: moments within
    LANDING_GAP_S of the one before are one landing."""
    moments = sorted(written)
    return sum(1 for i, t in enumerate(moments) if i == 0 or t - moments[i - 1] > LANDING_GAP_S)


def landing_interval(calm: Path, matrices: list[Path], calm_s: float) -> float:
    """The calm run's wall time between two landings of cells (its whole time if they all landed at
    once, or their manifests' times were lost in a copy)."""
    written = [d.joinpath(MANIFEST).stat().st_mtime for m in matrices for d in (calm / m / "cells").iterdir()
               if not d.name.startswith(".") and d.joinpath(MANIFEST).is_file()]
    return calm_s / max(1, landings(written))


def guest_made(cell: Path) -> dict[str, str]:
    """The sha256 of each file the cell's guest made, from its manifest."""
    listed = json.loads((cell / MANIFEST).read_text())["artifacts"]
    return {name: h for name, h in listed.items() if name.startswith(GUEST_MADE)}


def compare(calm: Path, stormy: Path) -> dict[str, list[str]]:
    """Each finished cell of @calm (a matrix directory) against the one of its key in @stormy."""
    out: dict[str, list[str]] = {"identical": [], "different": [], "missing": []}
    a, b = CellStore(calm), CellStore(stormy)
    for cell in sorted(a.cells.iterdir()) if a.cells.is_dir() else []:
        key = cell.name
        if key.startswith(".") or not a.done(key):
            continue
        if not b.done(key):
            out["missing"].append(key)
        else:
            out["identical" if guest_made(a.cell_dir(key)) == guest_made(b.cell_dir(key)) else "different"].append(key)
    return out


def shares_a_filesystem(dest: Path) -> str | None:
    """What of the harness's own shares @dest's filesystem (the repository, the image cache), or None."""
    def device(p: Path) -> int:
        return paths.existing_part(Path(p).absolute()).stat().st_dev
    for name, where in (("the repository", paths.REPO_ROOT), ("the image cache", paths.cache_dir())):
        if device(dest) == device(where):
            return f"{name} ({where})"
    return None


def split_inventory(args: list[str]) -> tuple[Path | None, list[str]]:
    """The inventory the soaked command names (`--inventory X` or `--inventory=X`), if any, and its other
    arguments: what names the matrix, not where it runs."""
    inventory, rest, it = None, [], iter(args)
    for a in it:
        if a == "--inventory":
            value = next(it, None)
            inventory = None if value is None else Path(value)
        elif a.startswith("--inventory="):
            inventory = Path(a.split("=", 1)[1])
        else:
            rest.append(a)
    return inventory, rest


def inventory_in(args: list[str]) -> Path | None:
    """The inventory the soaked command names, if any."""
    return split_inventory(args)[0]


def without_inventory(args: list[str]) -> list[str]:
    """@args without their `--inventory X`."""
    return split_inventory(args)[1]


def fleet_trouble(args: list[str]) -> str | None:
    """Why a soak cannot run over the inventory @args name, or None (none named, or the test fleet's, up)."""
    inv = inventory_in(args)
    if inv is None:
        return None
    if inv.resolve() != testfleet.inventory_path().resolve():
        return (f"a soak over hosts runs on the test fleet (make fleet-up; INVENTORY=$(python -m sslab fleet "
                f"inventory)), whose hosts it stops, starts and clears between its two runs; {inv} is another")
    if not testfleet.members():
        return "the test fleet is not up: make fleet-up FLEET_HOSTS=2"
    return None


def calm_trouble(earlier: Path, args: list[str]) -> str | None:
    """Why the soak in @earlier cannot lend its calm run to a soak of @args, or None."""
    record = Path(earlier) / CALM_RECORD
    if not record.is_file():
        return (f"{earlier} holds no finished calm run ({CALM_RECORD} is written when one ends): "
                "--calm-from takes an earlier soak's directory")
    try:
        calm = json.loads(record.read_text())
        theirs, calm_s = list(calm["args"]), float(calm["calm_s"])
    except (ValueError, KeyError, TypeError) as e:
        return f"{record} is not a calm run's record ({e})"
    if without_inventory(theirs) != without_inventory(args):
        return (f"the calm run in {earlier} ran `sslab {' '.join(theirs)}`, not this matrix "
                f"(`sslab {' '.join(args)}`; only --inventory may differ)")
    if calm_s <= 0 or not matrix_dirs(Path(earlier) / "calm"):
        return f"the calm run in {earlier} made no matrix"
    return None


def matrix_dirs(results: Path) -> list[Path]:
    """The matrix directories under @results (each holds cells/), relative to it."""
    return sorted(d.parent.relative_to(results) for d in Path(results).rglob("cells")
                  if d.is_dir() and (d.parent / "plans").is_dir())


class Console:
    """A session's console, written to logs/NAME as it comes through a pipe.  The controller writes to
    the pipe as it would to a user's terminal, which a full results disk cannot fail (no terminal is on
    that disk); what the file cannot take meanwhile is held and written once it can."""

    #: How long the end of a session waits for its console to drain (processes the controller left may
    #: hold the pipe open: what they write later is still written, when it comes).
    DRAIN_S = 5.0

    def __init__(self, path: Path):
        self.path = path
        self.held = bytearray()
        self.lock = threading.Lock()
        self.read_fd, self.write_fd = os.pipe()
        self.thread = threading.Thread(target=self._pump, daemon=True)

    def start(self) -> None:
        os.close(self.write_fd)          # the controller has its own copy; EOF when it and its children end
        self.thread.start()

    def _pump(self) -> None:
        while chunk := os.read(self.read_fd, 1 << 16):
            with self.lock:
                self.held += chunk
                self._write_held()
        os.close(self.read_fd)

    def _write_held(self) -> None:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                while self.held:
                    del self.held[:os.write(fd, self.held)]   # what a short write took is not written twice
            finally:
                os.close(fd)
        except OSError:                  # a full disk: the rest kept for the next try
            pass

    def text(self) -> str:
        """All the session wrote by now (its console drained, DRAIN_S at most)."""
        self.thread.join(timeout=self.DRAIN_S)
        with self.lock:
            self._write_held()
            return self.path.read_text(errors="replace") + self.held.decode(errors="replace")


class Soaker:
    """One soak's two runs (Soak, draw_schedule) into @dest; @args: the sslab command's arguments
    (`run reproduce-table1 --iter 10`)."""

    def __init__(self, dest: Path, args: list[str], seed: int, n: int, log=print, calm_from: Path | None = None):
        self.dest, self.args, self.log = Path(dest), list(args), log
        self.record = Soak(seed, list(args), calm_from=None if calm_from is None else str(Path(calm_from).resolve()))
        self.calm = (self.dest if calm_from is None else Path(calm_from)) / "calm"
        self.n = n
        self.rng = random.Random(seed + 2)      # which host a stop-a-host fault stops
        self.hosts = testfleet.members() if inventory_in(self.args) is not None else []

    def command(self, where: str) -> tuple[list[str], dict]:
        env = {**os.environ, "SSLAB_RESULTS": str(self.dest / where)}
        return [sys.executable, "-m", "sslab", *self.args], env

    def start(self, where: str, log_name: str) -> subprocess.Popen:
        """The command into @where, its console to logs/@log_name (self.console)."""
        cmd, env = self.command(where)
        self.console = Console(self.dest / "logs" / log_name)
        self.console.path.touch()
        proc = self.proc = subprocess.Popen(cmd, cwd=paths.REPO_ROOT, env=env, stdout=self.console.write_fd,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        self.console.start()
        return proc

    def stop_session(self, why: str) -> None:
        """The running session's controller stopped as a user's Ctrl-C stops it (SIGINT to its process
        group: it stops its hosts' runs), waited for; killed if it has not ended in SESSION_STOP_S."""
        proc = getattr(self, "proc", None)
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=SESSION_STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        self.console.text()
        self.log(f"soak: {why}: the running session's controller stopped (exit {proc.returncode})")

    def run_calm(self) -> float:
        """The calm run to its end (its wall time, also written to calm.json for a later soak), or an
        earlier soak's (--calm-from: its wall time)."""
        if self.record.calm_from is not None:
            return round(float(json.loads((Path(self.record.calm_from) / CALM_RECORD).read_text())["calm_s"]), 1)
        t0 = time.monotonic()
        proc = self.start("calm", "calm.log")
        if proc.wait(timeout=SESSION_LIMIT_S) != 0:
            raise RuntimeError(f"the calm run failed (exit {proc.returncode}); see {self.dest / 'logs' / 'calm.log'}")
        calm_s = round(time.monotonic() - t0, 1)
        (self.dest / CALM_RECORD).write_text(json.dumps({"args": self.args, "calm_s": calm_s}, indent=1) + "\n")
        return calm_s

    def umls(self) -> list[int]:
        """The UML kernels running for the stormy run: processes working under its directory (over a
        fleet: in its hosts' containers) with UML's virtual clock on their command line (every UML of an
        image has the same one), whose parent is none of them (a UML's other host processes are its
        children)."""
        pids = {}
        candidates = ([pid for m in self.hosts for pid in testfleet.processes_of(m)] if self.hosts
                      else processes_inside(self.dest / "stormy"))
        for pid in candidates:
            try:
                if b"time-travel" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    pids[pid] = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):   # gone meanwhile
                continue
        return [p for p, parent in pids.items() if parent not in pids]

    def strike(self, fault: Fault, proc: subprocess.Popen, session: int) -> bool:
        """@fault on the running @proc; whether the controller is stopped by it."""
        if fault.kind == "sigkill-boot":
            # The first boot running from that moment on (between two cells there is none).
            deadline = time.monotonic() + BOOT_WAIT_S
            while not (umls := self.umls()) and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            if not umls:
                fault.what = f"no boot ran in the {BOOT_WAIT_S:.0f} s after that moment: nothing killed"
                return False
            os.kill(umls[0], signal.SIGKILL)
            fault.what = f"UML pid {umls[0]} killed"
            return False
        if fault.kind == "fill-the-disk":
            return self.fill_the_disk(fault, proc)
        if fault.kind == "stop-a-host":
            return self.stop_a_host(fault, proc)
        if fault.kind == "second-controller":
            # A second only once the first holds its matrix's lock: started before it (while the session
            # checks its host), it would be the first, run the matrix to its end within this call, and
            # the session be refused (a soak at 16 cells lost 10 of its 16 faults so, 4 Dec 2026).
            if not self.wait_for_the_lock(proc):
                fault.what = (f"not injected: the session's controller held no matrix's lock in {LOCK_WAIT_S:.0f} s"
                              if proc.poll() is None else "not injected: the session ended before it held its lock")
                return False
            cmd, env = self.command("stormy")
            res = subprocess.run(cmd, cwd=paths.REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
            refused = res.returncode == 2 and "another `sslab matrix run`" in res.stderr + res.stdout
            fault.what = f"the second exited {res.returncode}" + ("" if refused else " (NOT refused as it must be)")
            fault.detected = refused
            return False
        sig = {"sigkill-controller": signal.SIGKILL, "sigterm-controller": signal.SIGTERM,
               "sigint-controller": signal.SIGINT}[fault.kind]
        os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)   # Ctrl-C: the whole group
        try:
            proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        fault.what = f"session {session}: the controller exited {proc.returncode}"
        return True

    def wait_for_the_lock(self, proc: subprocess.Popen) -> bool:
        """Whether the session @proc (a process group of its own) comes to hold a stormy matrix's
        controller lock within LOCK_WAIT_S: the lock file names its holder's pid, which must be alive
        and of the session's group (a killed session's pid stays in the file)."""
        deadline = time.monotonic() + LOCK_WAIT_S
        while proc.poll() is None and time.monotonic() < deadline:
            for lock in (self.dest / "stormy").rglob(CONTROLLER_LOCK):
                try:
                    if os.getpgid(int(lock.read_text().strip())) == proc.pid:
                        return True
                except (OSError, ValueError):   # being written, or its holder gone
                    continue
            time.sleep(0.2)
        return False

    def stop_a_host(self, fault: Fault, proc: subprocess.Popen) -> bool:
        """@fault: a fleet host's container stopped outright for HOST_DOWN_S (or until the controller
        stops), then started; whether the controller stopped meanwhile."""
        member = self.rng.choice(self.hosts)
        t0 = time.monotonic()
        testfleet.stop(member)
        try:
            proc.wait(timeout=HOST_DOWN_S)
        except subprocess.TimeoutExpired:
            pass
        finally:
            ip = testfleet.start(member)
        moved = "" if ip == member["ip"] else f" at another address, {ip} (the inventory names {member['ip']})"
        fault.what = (f"host {member['host']} ({member['engine']}) stopped for {time.monotonic() - t0:.0f} s, then "
                      f"started{moved}: " + ("the controller ran on" if proc.poll() is None
                                            else f"the controller exited {proc.returncode}"))
        return proc.poll() is not None

    def fill_the_disk(self, fault: Fault, proc: subprocess.Popen) -> bool:
        """@fault: the results' filesystem filled to DISK_LEFT_B free for FILL_HOLD_S (or until the
        controller stops), then freed; whether the controller stopped meanwhile."""
        ballast = self.dest / BALLAST
        st = os.statvfs(self.dest)
        size = st.f_bavail * st.f_frsize - DISK_LEFT_B
        if size <= 0:
            fault.what = f"the filesystem had {st.f_bavail * st.f_frsize >> 20} MB free already: nothing filled"
            return False
        t0 = time.monotonic()
        try:
            try:
                with open(ballast, "wb") as f:
                    os.posix_fallocate(f.fileno(), 0, size)
            except OSError as e:     # the run wrote meanwhile: what is left is filled nonetheless
                fault.what = f"filling {size >> 20} MB failed ({e.strerror}): "
            left = os.statvfs(self.dest)
            try:
                proc.wait(timeout=FILL_HOLD_S)
            except subprocess.TimeoutExpired:
                pass
        finally:
            ballast.unlink(missing_ok=True)
        held = time.monotonic() - t0
        fault.what += (f"filled to {left.f_bavail * left.f_frsize >> 20} MB free for {held:.0f} s, then freed: "
                      + ("the controller ran on" if proc.poll() is None else f"the controller exited {proc.returncode}"))
        return proc.poll() is not None

    @staticmethod
    def set_aside_count(key: str, matrices: list[Path]) -> int:
        """How many times the harness has set @key's cell aside as damaged (its failed/ directories): the
        record of a detection that a console killed mid-line may not show."""
        return sum(1 for m in matrices for d in (m / "failed").glob(f"{key}-*-set-aside")
                   if "no longer match its manifest" in (d / "error.txt").read_text(errors="replace"))

    def damage(self, fault: Fault, rng: random.Random) -> str | None:
        """@fault on a finished cell of the stormy run: a byte of one of its files flipped, or a file cut
        to half; the key, or None when no cell has finished."""
        stores = [CellStore(self.dest / "stormy" / m) for m in matrix_dirs(self.dest / "stormy")]
        done = [(store, d.name) for store in stores for d in sorted(store.cells.iterdir())
                if not d.name.startswith(".") and store.done(d.name)]
        if not done:
            fault.what = "no finished cell to damage"
            return None
        store, key = rng.choice(done)
        # Only a file with bytes can be damaged (a flip of an empty stderr.log changed nothing: 3 Dec 2026).
        files = sorted(name for name in guest_made(store.cell_dir(key)) if (store.cell_dir(key) / name).stat().st_size)
        path = store.cell_dir(key) / rng.choice(files)
        data = bytearray(path.read_bytes())
        if fault.kind == "flip-a-byte" and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        else:
            data = data[:len(data) // 2]
        path.write_bytes(bytes(data))
        fault.what = f"cell {key}: {path.relative_to(store.cell_dir(key))} ({fault.kind})"
        return key

    def _stormy_matrices(self) -> list[Path]:
        return [self.dest / "stormy" / m for m in matrix_dirs(self.dest / "stormy")]

    def run_stormy(self) -> None:
        rng = random.Random(self.record.seed + 1)
        pending = list(self.record.faults)
        damaged: list[tuple[Fault, str]] = []
        set_aside_before: dict[int, int] = {}   # a damage's fault -> its cell's set-asides before it
        # Damages drawn before any cell had landed: each tried again at every gap between sessions, so
        # that every damage drawn is injected (four of 40 were lost so at 320 cells: 3 Dec 2026).
        waiting: list[Fault] = []

        def damage(fault: Fault) -> None:
            if (key := self.damage(fault, rng)) is not None:
                damaged.append((fault, key))
                set_aside_before[id(fault)] = self.set_aside_count(key, self._stormy_matrices())
            else:
                waiting.append(fault)
        t0 = time.monotonic()
        while True:
            # Between sessions: the damages waiting for a cell and the one drawn for now, then the session
            # that must find them.
            retry = waiting[:]
            waiting.clear()
            for fault in retry:
                damage(fault)
            while pending and pending[0].kind in BETWEEN:
                damage(pending.pop(0))
            session = self.record.sessions = self.record.sessions + 1
            log = f"stormy-{session:03d}.log"
            to_find = [(f, k) for f, k in damaged if f.detected is None]   # made before this session
            proc = self.start("stormy", log)
            stopped = False
            while pending and not stopped:
                fault = pending[0]
                try:
                    proc.wait(timeout=fault.after_s)
                    break                      # the session ended first: the fault waits for the next
                except subprocess.TimeoutExpired:
                    pending.pop(0)
                    if fault.kind in BETWEEN:  # a landed cell damaged while the matrix runs on
                        damage(fault)
                    else:
                        stopped = self.strike(fault, proc, session)
            if not stopped:
                proc.wait(timeout=SESSION_LIMIT_S)
            if proc.returncode == 0:
                # The matrix is whole: a fault meant to strike while cells run finds none running until a
                # damaged cell makes work again.
                while pending and pending[0].kind in IN_RUN:
                    pending.pop(0).what = "not injected: the matrix had finished"
            self.console.text()
            stormy = self._stormy_matrices()
            for fault, key in to_find:
                # Found: set aside by the harness since the damage.  Missed: a session that ran to its
                # own end did not (one stopped by a fault may have been stopped before its check).
                if self.set_aside_count(key, stormy) > set_aside_before[id(fault)]:
                    fault.detected = True
                elif not stopped:
                    fault.detected = False
            self.log(f"soak: session {session} exited {proc.returncode}; {len(pending)} fault(s) to come")
            if not pending and not waiting and proc.returncode == 0 and all(f.detected is not None for f, _ in damaged):
                break
            if session > 4 * len(self.record.faults) + 10:
                raise RuntimeError(f"the stormy run did not end after {session} sessions; see {self.dest / 'logs'}")
        self.record.stormy_s = round(time.monotonic() - t0, 1)

    def run(self) -> dict:
        """The soak to its end; stopped itself (Ctrl-C, SIGTERM, SIGHUP), it first stops the session it
        runs, so that no controller of its runs is left behind (KeyboardInterrupt, raised on)."""
        with stop_signals_interrupt():
            try:
                return self._run()
            except KeyboardInterrupt as e:
                self.stop_session(f"interrupted ({e.args[0] if e.args else 'SIGINT'})")
                raise

    def _run(self) -> dict:
        (self.dest / "logs").mkdir(parents=True, exist_ok=True)
        self.log(f"soak: the calm run ({self.calm}" + (", an earlier soak's)" if self.record.calm_from else ")"))
        self.record.calm_s = self.run_calm()
        matrices = matrix_dirs(self.calm)
        if not matrices:
            raise RuntimeError(f"the command made no matrix under {self.calm}: a soak needs one")
        for member in self.hosts:     # the hosts' copies of the calm run's cells
            for m in matrices:
                testfleet.forget(member, str(m))
        if not self.hosts:
            self.record.left_out["stop-a-host"] = "the command names no inventory (INVENTORY=): no host to stop"
        if (shared := shares_a_filesystem(self.dest)) is not None:
            self.record.left_out["fill-the-disk"] = (f"{self.dest} shares its filesystem with {shared}: filling it "
                                                     "would starve them too (give --dest a filesystem of its own)")
        kinds = tuple(k for k in KINDS if k not in self.record.left_out)
        self.record.landing_s = round(landing_interval(self.calm, matrices, self.record.calm_s), 1)
        self.record.faults = draw_schedule(self.record.seed, self.n, self.record.calm_s, kinds)
        self.log(f"soak: the stormy run ({self.dest / 'stormy'}), {self.n} fault(s) from seed {self.record.seed}"
                 + "".join(f"; {k} left out: {why}" for k, why in self.record.left_out.items()))
        try:
            self.run_stormy()
        finally:
            (self.dest / BALLAST).unlink(missing_ok=True)
        compared: dict[str, list[str]] = {"identical": [], "different": [], "missing": []}
        for m in matrices:
            for k, keys in compare(self.calm / m, self.dest / "stormy" / m).items():
                compared[k] += keys
        summary = summarise(self.record, compared)
        (self.dest / "soak.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
        return summary


def summarise(record: Soak, compared: dict[str, list[str]]) -> dict:
    """The soak's record: its seed, schedule and faults, and the cells compared."""
    by_kind: dict[str, int] = {}
    for f in record.faults:
        if f.what and not f.what.startswith(("no ", "not injected")):
            by_kind[f.kind] = by_kind.get(f.kind, 0) + 1
    damaged = [f for f in record.faults if f.kind in BETWEEN and f.what and not f.what.startswith("no ")]
    # A second controller started beside a running one must be refused.
    seconds = [f for f in record.faults if f.kind == "second-controller" and f.what.startswith("the second")]
    return {"format": "sslab.soak/1", "seed": record.seed, "args": record.args, "sessions": record.sessions,
            "faults": [asdict(f) for f in record.faults], "injected_by_kind": by_kind, "left_out": record.left_out,
            "damaged_cells": len(damaged), "damaged_detected": sum(bool(f.detected) for f in damaged),
            "cells": {k: len(v) for k, v in compared.items()}, "cells_different": compared["different"],
            "cells_missing": compared["missing"], "calm_s": record.calm_s, "stormy_s": record.stormy_s,
            "lost_to_faults_s": round(record.stormy_s - record.calm_s, 1), "calm_from": record.calm_from,
            "landing_s": record.landing_s,
            "ok": not compared["different"] and not compared["missing"]
            and all(f.detected for f in damaged) and all(f.detected for f in seconds)}


def report_md(s: dict) -> str:
    """The soak's page: its summary, then every fault in order with what it did."""
    rows = [f"| {i} | {f['kind']} | {f['after_s']:g} | {f['what'] or 'not injected (the run ended first)'} | "
            f"{'' if f['detected'] is None else ('yes' if f['detected'] else 'NO')} |"
            for i, f in enumerate(s["faults"], 1)]
    return "\n".join([
        f"# Soak: `sslab {' '.join(s['args'])}`", "",
        *(f"- {ln.strip()}" for ln in summary_lines(s)), "",
        f"Fault kinds: {', '.join(KINDS)}.  Each fault, in order, with what it did:", "",
        "| # | kind | after (s) | what it did | detected |", "|---|---|---|---|---|", *rows,
        "", "Data: [soak.json](soak.json); the two runs: "
        + ("calm/ and stormy/" if not s.get("calm_from") else f"stormy/ and the earlier soak's {s['calm_from']}/calm/")
        + "; each session's console: logs/.", ""])


def write_pages(dest: Path, s: dict) -> Path:
    """The soak's page beside its record (report.md, report.html), and results/index.html brought up to
    date when the soak lies under results/ (its default place); returns the page."""
    from ..analysis.html import publish
    (dest / "report.md").write_text(report_md(s))
    return publish(dest / "report.md")


def summary_lines(s: dict) -> list[str]:
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(s["injected_by_kind"].items()))
    return [f"soak (seed {s['seed']}): {'OK' if s['ok'] else 'FAILED'}",
            f"  cells identical {s['cells']['identical']}, different {s['cells']['different']}, "
            f"missing {s['cells']['missing']}",
            f"  faults injected {sum(s['injected_by_kind'].values())} of {len(s['faults'])} drawn: {kinds}",
            *([f"  faults over {STORM_SPAN:g} x the calm run's {s['calm_s']:.0f} s, {s['calm_s'] * STORM_SPAN / max(1, len(s['faults'])):.0f} s "
               f"apart on average (its cells came home every {s['landing_s']:.0f} s)"] if s.get("landing_s") else []),
            f"  damaged cells detected and run again: {s['damaged_detected']} of {s['damaged_cells']}",
            *(f"  not drawn: {kind}: {why}" for kind, why in s.get("left_out", {}).items()),
            *([f"  the calm run: an earlier soak's, {s['calm_from']}/calm (its wall time times the faults)"]
              if s.get("calm_from") else []),
            f"  sessions {s['sessions']}; wall time: calm {s['calm_s']:.0f} s, stormy {s['stormy_s']:.0f} s "
            f"({s['lost_to_faults_s']:+.0f} s to the faults)"]
