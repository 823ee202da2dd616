"""The hosts of a matrix run, driven from the controller: each prepared once, then given boots as it
frees up, each batch one `ansible-playbook` run (on a host in the controller's own tree, the runner
that run would start, started directly); lost hosts, damaged cells, Ctrl-C.

    prepare.yml  per host, all at once: the tree and image there (or the container image), the plan
    cells.yml    per batch (--limit HOST): run the batch's cells, pack the finished ones, fetch the tar
    stop.yml     on Ctrl-C / SIGTERM / SIGHUP, and for hosts given up: the runner, its testbeds, its
                 partial cells

Which boot goes where is matrix.dealer.Dealer's; this module only starts and watches the playbook
runs, merges what they fetch (matrix.transfer.merge_cells, every cell checked against its manifest)
and tells the dealer what came home.

Every playbook run is in a session of its own: a terminal's Ctrl-C reaches this process only, and
this process stops everything, once, in order: the playbook runs, then each host's runner by name
(on the host: matrix.stopping): a runner Ansible started on this machine is in a session of its
own too, and one on a host elsewhere hears nothing of a signal here.  SIGINT is taken whatever it
was on arrival (the CLI's main does so too), so a script's background job stops as a terminal's does.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..experiment import code_version
from ..plan_record import MatrixPlan
from .cells import host_error
from .dealer import Batch, Dealer
from .progress import ProgressBoard
from .spec import MatrixError
from .stopping import lock_holder, partials_words, stop_runner, stop_signals_interrupt
from .store import CellStore
from .transfer import merge_cells

PLAYBOOKS = paths.REPO_ROOT / "playbooks"
ANSIBLE_CFG = PLAYBOOKS / "ansible.cfg"
HOST_GROUP = "testbeds"
#: ansible-playbook's exit status when a host could not be reached (or a playbook not parsed).
ANSIBLE_UNREACHABLE = 4
#: Seconds a playbook run has after SIGTERM before SIGKILL, when the matrix is stopped.
PLAY_GRACE_S = 2.0
#: Seconds stop.yml may take on the hosts elsewhere.
STOP_TIMEOUT_S = 60.0
#: Seconds between looks at the running playbooks.
TICK_S = 0.5


def venv_bin(name: str) -> str:
    """An executable next to this Python (the venv's ansible), else on PATH."""
    cand = Path(sys.executable).parent / name
    if cand.exists():
        return str(cand)
    found = shutil.which(name)
    if not found:
        raise MatrixError(f"{name} not found: run `make deps` (it installs ansible-core into .venv)")
    return found


def ansible_env() -> dict:
    return {**os.environ, "ANSIBLE_CONFIG": str(ANSIBLE_CFG), "ANSIBLE_NOCOLOR": "1"}


def inventory_hosts(inventory: Path) -> dict[str, dict]:
    """Hosts of the inventory's `testbeds` group with their variables."""
    if not Path(inventory).exists():
        raise MatrixError(f"no inventory {inventory}")
    res = subprocess.run([venv_bin("ansible-inventory"), "-i", str(inventory), "--list"],
                         capture_output=True, text=True, env=ansible_env())
    if res.returncode != 0:
        raise MatrixError(f"cannot read inventory {inventory}: {res.stderr.strip()[-500:]}")
    data = json.loads(res.stdout)
    hosts = data.get(HOST_GROUP, {}).get("hosts", [])
    if not hosts:
        raise MatrixError(f"inventory {inventory} has no hosts in group [{HOST_GROUP}]")
    hostvars = data.get("_meta", {}).get("hostvars", {})
    return {h: hostvars.get(h, {}) for h in hosts}


def on_this_machine(hostvars: dict) -> bool:
    return "sslab_workdir" not in hostvars or hostvars.get("ansible_connection") == "local"


def host_matrix_dir(hostvars: dict, matrix_rel: str) -> Path | None:
    """Where a host keeps this matrix, if it can be read from here (a local host); None otherwise."""
    if "sslab_workdir" not in hostvars:
        return paths.RESULTS_DIR / matrix_rel
    if hostvars.get("ansible_connection") == "local":
        return Path(hostvars["sslab_workdir"]) / "results" / matrix_rel
    return None


#: prctl(2)'s option that gives a process a signal when the thread that made it ends.
PR_SET_PDEATHSIG = 1


def _ends_with_its_parent() -> None:
    """(In a batch's runner started here, before it runs.)  SIGTERM when the controller ends, however it
    ends: a controller killed outright (SIGKILL reaches no `finally`) leaves no runner of this tree working
    on.  The runner takes SIGTERM as a stop: its boots end, its partial cells never count.  One whose
    controller ended before this took effect stops at once."""
    import ctypes
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def code_tarball(dest: Path) -> Path:
    """The controller's tree as the hosts need it: tracked and new files, not results or caches."""
    res = subprocess.run(["git", "-C", str(paths.REPO_ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                         capture_output=True, check=True)
    names = [n for n in res.stdout.decode().split("\0") if n and not n.startswith("results/")
             and (paths.REPO_ROOT / n).is_file()]
    code = code_version()
    stamp = f"{code['commit']}{' dirty' if code['dirty'] else ''}\n".encode()
    with tarfile.open(dest, "w:gz") as tar:
        for n in sorted(names):
            tar.add(paths.REPO_ROOT / n, arcname=n, recursive=False)
        # The tree goes without git: the commit it is, for the hosts' run records.
        info = tarfile.TarInfo(".sslab-commit")
        info.size, info.mtime = len(stamp), int(time.time())
        tar.addfile(info, io.BytesIO(stamp))
    return dest


@dataclass
class Play:
    """One ansible-playbook run for one host (its preparation, a batch, or its stop), or a batch's
    runner started directly on a host in this tree (@program says which)."""
    kind: str
    host: str
    proc: subprocess.Popen
    log: Path
    batch: Batch | None = None
    tar: Path | None = None
    started: float = field(default_factory=time.time)
    program: str = "ansible-playbook"  # or "its runner"

    def ended(self) -> bool:
        return self.proc.poll() is not None

    def unreachable(self) -> bool:
        """The host could not be reached (ansible-playbook's status 4 is also a playbook it could not
        parse: the log tells them apart)."""
        return (self.program == "ansible-playbook" and self.proc.returncode == ANSIBLE_UNREACHABLE
                and "UNREACHABLE!" in self.log.read_text(errors="replace"))

    def tail(self, n: int = 8) -> str:
        lines = [ln for ln in self.log.read_text(errors="replace").splitlines() if ln.strip()]
        return "\n    ".join(lines[-n:])


def stop_results(log: str) -> dict[str, str]:
    """What stop.yml's last task said per host (a `sslab matrix stop` record, or a container's fate),
    from its log, as one line each."""
    out = {}
    for chunk in log.split("ok: [")[1:]:
        host = chunk.split("]", 1)[0]
        if '"msg"' not in chunk:
            continue
        if m := re.search(r'"msg": "([^"]*)"', chunk):
            out[host] = m.group(1)
            continue
        runner = re.search(r'"runner": (\d+|null)', chunk)
        partials = re.search(r'"partials_removed": (\d+)', chunk)
        kept = re.search(r'"partials_kept": (\d+)', chunk)
        left = re.search(r'"left_behind": \[([^\]]*)\]', chunk)
        n_left = len([x for x in (left.group(1) if left else "").split(",") if x.strip()])
        out[host] = ((f"runner {runner.group(1)} stopped" if runner and runner.group(1) != "null"
                      else "no runner running")
                     + (f", {n_left} process(es) it left killed" if n_left else "")
                     + partials_words(partials.group(1) if partials else "?", kept.group(1) if kept else 0))
    return out


class Fleet:
    """The hosts of one matrix run (see the module doc)."""

    def __init__(self, inventory: Path, hosts: dict[str, dict], matrix_dir: Path, matrix_rel: str, plan_path: Path,
                 plan: MatrixPlan, boots: list[list[str]], run_vars: dict, slots: dict[str, int], serial: int | None,
                 cell_seconds: float, timeout_s: float | None = None, log=print):
        self.inventory, self.hosts, self.matrix_dir = inventory, hosts, matrix_dir
        self.matrix_rel, self.plan_path, self.plan = matrix_rel, plan_path, plan
        self.store = CellStore(matrix_dir)
        self.serial = serial
        self.log = log
        per_boot = sum(len(b) for b in boots) / len(boots) if boots else 1
        self.run_vars = run_vars
        only = next(iter(hosts)) if len(hosts) == 1 else None
        self.dealer = Dealer(boots, slots, boot_seconds=cell_seconds * per_boot, timeout_s=timeout_s,
                             whole_queue=only if only is not None and self._runs_in_this_tree(only) else None)
        self.total = sum(len(b) for b in boots)
        self.stamp = plan_path.stem.removeprefix("plan-")
        self.logs = matrix_dir / "logs" / f"run-{self.stamp}"
        self.incoming = matrix_dir / "incoming"
        self.plays: list[Play] = []
        self.history: list[dict] = []  # every batch that came home: logs/run-<stamp>/fleet.json
        self.abandoned: list[Play] = []  # batches given up on (their host lost), left to finish
        self.touched: set[str] = set()  # hosts that ran anything: stopped by name when the matrix stops
        self.preparing: set[str] = set()
        self.board = ProgressBoard(self.dealer, {h: (d / "progress" / f"{h}.json" if (d := host_matrix_dir(v, matrix_rel))
                                                     else None) for h, v in hosts.items()},
                                   self.total, cell_seconds, self.preparing)
        self.vars_file = self._write_vars(run_vars)

    # -- the run ----------------------------------------------------------

    def run(self) -> int:
        """Run every boot to the end (or until no host is left); 0 if every cell came home."""
        # The handlers stay while the hosts are stopped: a second signal then is taken as the first was.
        with stop_signals_interrupt():
            try:
                self._stop_orphaned_runners()
                self._prepare_all()
                while not (self.dealer.finished() and not self.preparing) and not self._stranded():
                    self._step(time.time())
                    self.board.draw()
                    time.sleep(TICK_S)
                self.board.draw(force=True)
                self._give_up_abandoned()
            except KeyboardInterrupt as e:
                self.log(f"\ninterrupted ({e.args[0] if e.args else 'SIGINT'}): stopping every host's run "
                         f"(finished cells are kept, partial ones discarded)")
                self.stop_everything()
                raise
            except Exception as e:
                self.log(f"\nthe controller failed ({type(e).__name__}: {e}): stopping every host's run")
                self.stop_everything()
                raise
            finally:
                self._write_record()
        for name, rec in self.dealer.hosts.items():
            if rec.state == "lost":
                self.log(f"host {name}: lost ({rec.why_lost}); {rec.done} cell(s) home from it")
        if self.dealer.late:
            self.log(f"{len(self.dealer.late)} cell(s) came home from a host after it was given up; each kept once")
        if self._stranded():
            self.log(f"no host left to run {len(self.dealer.undone())} cell(s)", )
        return 0 if len(self.dealer.done) == self.total else 1

    def _stranded(self) -> bool:
        return self.dealer.stranded() and not self.preparing

    def _step(self, now: float) -> None:
        for play in [p for p in self.plays if p.ended()]:
            self.plays.remove(play)
            if play.kind == "prepare":
                self._prepared(play)
            else:
                self._batch_home(play)
        for play in [p for p in self.abandoned if p.ended()]:
            self.abandoned.remove(play)
            self._batch_home(play)
        for batch in self.dealer.overdue(now):
            play = next(p for p in self.plays if p.batch is batch)
            self.plays.remove(play)
            self.abandoned.append(play)
            self.log(f"host {batch.host}: {self.dealer.hosts[batch.host].why_lost}: given up, its "
                     f"{len(batch.keys)} cell(s) dealt to the others (a late finish is kept once)")
        # Idle hosts with the fewest batches first: under SERIAL= one host must not take every turn.
        for name in sorted(self.dealer.hosts, key=lambda h: self.dealer.hosts[h].batches):
            if name in self.preparing or (self.serial and self._batches_out() >= self.serial):
                continue
            batch = self.dealer.next_batch(name, now)
            if batch is not None:
                self._start_batch(batch)

    def _batches_out(self) -> int:
        return sum(p.kind == "cells" for p in self.plays)

    def _write_record(self) -> None:
        """logs/run-<stamp>/fleet.json: the hosts as they ended and every batch, for the archive."""
        self.logs.mkdir(parents=True, exist_ok=True)
        hosts = {h: {"state": r.state, "why_lost": r.why_lost, "done": r.done, "failed": r.failed,
                     "batches": r.batches, "slots": r.slots} for h, r in self.dealer.hosts.items()}
        (self.logs / "fleet.json").write_text(json.dumps(
            {"plan": self.plan_path.name, "hosts": hosts, "batches": self.history, "late": self.dealer.late,
             "undone": self.dealer.undone()}, indent=1))

    # -- preparing --------------------------------------------------------

    def _stop_orphaned_runners(self) -> None:
        """The runners of this matrix on this machine's hosts that a controller stopped outright left
        running (SIGKILL reaches no `finally`): this controller holds the matrix's lock, so none is
        another's.  Stopped, what they left with them, before any batch: a host's new runner would be
        refused beside one (one runner per host and matrix), and the host given up."""
        for h in self.hosts:
            d = self._matrix_dir_here(h)
            if d is None or not lock_holder(d / "progress" / f"{h}.lock"):
                continue
            r = stop_runner(d, h)
            self.log(f"host {h}: stopped the runner a stopped controller left (pid {r['runner']})"
                     + (f", {len(r['left_behind'])} process(es) it left" if r["left_behind"] else "")
                     + partials_words(r["partials_removed"], r["partials_kept"]))

    def _prepare_all(self) -> None:
        """Every host that needs it, at the same time; a host of this machine in the controller's own
        tree needs nothing (its plan is the controller's file)."""
        code_tar = None
        for name, hv in self.hosts.items():
            if "sslab_workdir" not in hv and "sslab_container_archive" not in hv:
                continue
            if "sslab_workdir" in hv and "sslab_container" not in hv and code_tar is None:
                code_tar = code_tarball(self.matrix_dir / "plans" / f"code-{self.stamp}.tar.gz")
            self.preparing.add(name)
            self.plays.append(self._play("prepare", name, "prepare.yml",
                                         {"code_tar": str(code_tar)} if code_tar else {}))

    def _prepared(self, play: Play) -> None:
        self.preparing.discard(play.host)
        rc = play.proc.returncode
        if rc != 0:
            why = "unreachable" if play.unreachable() else f"preparation failed (ansible-playbook exited {rc})"
            self.dealer.lose(play.host, why)
            self.log(f"host {play.host}: {why}; its log {play.log}:\n    {play.tail()}")
        elif (said := stop_results(play.log.read_text(errors="replace")).get(play.host)) is not None:
            # prepare.yml stopped a runner that a controller stopped outright had left there
            self.log(f"host {play.host}: stopped the runner a stopped controller left ({said})")

    # -- batches ----------------------------------------------------------

    def _start_batch(self, batch: Batch) -> None:
        self.touched.add(batch.host)
        if self._runs_in_this_tree(batch.host):
            play = self._runner_here(batch)
        else:
            tar = self.incoming / f"{batch.host}-b{batch.number}-{self.stamp}.tar"
            extra = {"batch_keys": batch.keys, "batch_redo": batch.redo, "batch_tar": str(tar)}
            play = self._play("cells", batch.host, "cells.yml", extra, tag=f"b{batch.number}")
            play.tar = tar
        play.batch = batch
        self.plays.append(play)

    def _runs_in_this_tree(self, host: str) -> bool:
        """@host is this machine in the controller's own tree and results, not in a container (the
        default inventory's localhost): nothing to ship there or fetch from it."""
        hv = self.hosts[host]
        return ("sslab_workdir" not in hv and "sslab_container" not in hv
                and not self.run_vars.get("sslab_container"))

    def _runner_here(self, batch: Batch) -> Play:
        """@batch on a host in this tree: its runner started as cells.yml's task starts it on any other
        host, with the same arguments and kernel variables, but without an ansible-playbook run
        between (about a second and a half a batch here, which a series of small parts feels); its
        cells land in place, so there is nothing to pack or fetch."""
        hv, v = self.hosts[batch.host], self.run_vars
        cmd = [sys.executable, "-m", "sslab", "matrix", "run-cells", "--matrix-dir", str(self.matrix_dir),
               "--plan", str(self.plan_path), "--host", batch.host, "--keys", ",".join(batch.keys),
               "--substrate", str(v.get("sslab_substrate", "uml")), "--clock", str(v.get("sslab_clock", "real")),
               "--accel", str(v.get("sslab_accel", "auto")),
               "--jobs", str(hv.get("sslab_host_jobs") or v.get("sslab_jobs") or 1)]
        if batch.redo:
            cmd += ["--redo", ",".join(batch.redo)]
        env = {**os.environ, "SSLAB_KERNEL_SOURCE": str(v.get("sslab_kernel_source", "")),
               "SSLAB_KERNEL_PATCHES": str(v.get("sslab_kernel_patches", "")),
               "SSLAB_MODULES": str(v.get("sslab_modules", ""))}
        return self._start("cells", batch.host, f"cells-{batch.host}-b{batch.number}", cmd, env, "its runner",
                           cwd=paths.REPO_ROOT, preexec_fn=_ends_with_its_parent)

    def _batch_home(self, play: Play) -> None:
        """Merge what @play fetched, then tell the dealer what came home."""
        batch = play.batch
        assert batch is not None
        damaged: list[str] = []
        if play.tar is not None and play.tar.exists():
            try:
                damaged = merge_cells(self.matrix_dir, play.tar, host=batch.host)["damaged"]
                play.tar.unlink()
            except (tarfile.TarError, MatrixError, OSError) as e:
                # A tar that cannot be read or holds what a data archive must not: nothing of it is
                # merged; its cells run again (the tar is kept beside the others, for a look).
                damaged = [k for k in batch.keys if not self.store.done(k)]
                self.log(f"host {batch.host}: its tar {play.tar} was refused ({type(e).__name__}: {e})")
            if damaged:
                self.log(f"host {batch.host}: {len(damaged)} cell(s) arrived damaged (not merged, run again; "
                         f"kept under {self.store.failed}): {', '.join(damaged)}")
        done = {k for k in batch.keys if self.store.done(k)}
        failed = self._failed_on(batch) - done
        rc = play.proc.returncode
        why = None
        if play.unreachable():
            why = "unreachable"
        elif rc != 0:
            error = self._host_error(batch.host) or self._full_disk(batch.host)
            why = error or f"batch {batch.number} ended with {play.program} exit {rc}"
        back = self.dealer.batch_ended(batch, done, failed, set(damaged), why=why)
        self.history.append({"batch": batch.number, "host": batch.host, "cells": batch.keys,
                             "started": round(batch.started, 3), "ended": round(time.time(), 3),
                             "exit": rc, "program": play.program, "done": sorted(done), "failed": sorted(failed),
                             "damaged": sorted(damaged), "sent_back": back, "why": why})
        if self.dealer.hosts[batch.host].state == "lost" and back:
            self.log(f"host {batch.host}: lost ({why}); {len(back)} cell(s) dealt to the others; its log "
                     f"{play.log}:\n    {play.tail()}")

    def _failed_on(self, batch: Batch) -> set[str]:
        """Cells of @batch the host's runner gave up on (its progress file, here or fetched)."""
        for f in self._progress_files(batch.host):
            try:
                st = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
            if st.get("updated", 0) >= batch.started:
                return set(st.get("failed_keys", [])) & set(batch.keys)
        return set()

    def _progress_files(self, host: str) -> list[Path]:
        """@host's runner's progress file where it can be read from here, then the copy fetched with
        its last batch."""
        d = host_matrix_dir(self.hosts[host], self.matrix_rel)
        return ([d / "progress" / f"{host}.json"] if d else []) + [self.matrix_dir / "progress" / f"{host}.remote.json"]

    def _full_disk(self, host: str) -> str | None:
        """A host here whose matrix directory's disk is (nearly) full: its runner could not say so (its
        progress file is on that disk), and Ansible's record of the task is cut short there too."""
        d = self._matrix_dir_here(host)
        return paths.full_disk_message(str(d)) if d is not None and paths.nearly_full(d) else None

    def _matrix_dir_here(self, host: str) -> Path | None:
        """Where @host keeps this matrix, if its runner works in it on this machine (not in a container)."""
        hv = self.hosts[host]
        return None if "sslab_container" in hv else host_matrix_dir(hv, self.matrix_rel)

    def _host_error(self, host: str) -> str | None:
        for f in self._progress_files(host):
            if e := host_error(f):
                return e
        return None

    # -- stopping ---------------------------------------------------------

    def stop_everything(self) -> None:
        """Every playbook run, then every host that ran anything, by name; says what it stopped."""
        running = self.plays + self.abandoned
        for play in running:
            self._signal(play, signal.SIGTERM)
        deadline = time.monotonic() + PLAY_GRACE_S
        while any(not p.ended() for p in running) and time.monotonic() < deadline:
            time.sleep(0.1)
        for play in running:
            if not play.ended():
                self._signal(play, signal.SIGKILL)
            play.proc.wait()
        self.log(f"  stopped {len(running)} batch or playbook run(s)")
        self.stop_hosts(sorted(self.touched))

    def stop_hosts(self, names: list[str]) -> None:
        """Each host's runner of this matrix: on this machine directly, elsewhere through stop.yml."""
        here = [h for h in names if "sslab_container" not in self.hosts[h]
                and host_matrix_dir(self.hosts[h], self.matrix_rel) is not None]
        far = [h for h in names if h not in here]
        results: dict[str, dict] = {}

        def stop_here(h: str) -> None:
            results[h] = stop_runner(host_matrix_dir(self.hosts[h], self.matrix_rel), h)
        threads = [threading.Thread(target=stop_here, args=(h,)) for h in here]
        for t in threads:
            t.start()
        play = self._play("stop", ",".join(far), "stop.yml", {}, tag="stop") if far else None
        for t in threads:
            t.join()
        for h in here:
            r = results[h]
            self.log(f"  host {h}: " + (f"runner {r['runner']} stopped" if r["runner"] else "no runner running")
                     + (" (killed after its grace)" if r["killed_after_grace"] else "")
                     + (f", {len(r['left_behind'])} process(es) it left killed" if r["left_behind"] else "")
                     + partials_words(r["partials_removed"], r["partials_kept"]))
        if play is not None:
            try:
                play.proc.wait(timeout=STOP_TIMEOUT_S)
                said = stop_results(play.log.read_text(errors="replace"))
                for h in far:
                    self.log(f"  host {h}: {said.get(h, 'no word from it (log ' + str(play.log) + ')')}")
            except subprocess.TimeoutExpired:
                self._signal(play, signal.SIGKILL)
                self.log(f"  hosts {', '.join(far)}: stop.yml did not end in {STOP_TIMEOUT_S:.0f} s (log {play.log})")

    def _give_up_abandoned(self) -> None:
        """Batches of lost hosts still out when the matrix is done: stopped, with their runners."""
        if not self.abandoned:
            return
        hosts = sorted({p.host for p in self.abandoned})
        for play in self.abandoned:
            self._signal(play, signal.SIGKILL)
            play.proc.wait()
        self.abandoned.clear()
        self.log(f"stopping what the lost host(s) {', '.join(hosts)} still run")
        self.stop_hosts(hosts)

    @staticmethod
    def _signal(play: Play, sig: int) -> None:
        try:
            os.killpg(play.proc.pid, sig)
        except ProcessLookupError:
            pass

    # -- ansible ----------------------------------------------------------

    def _write_vars(self, run_vars: dict) -> Path:
        extra = {"plan_file": str(self.plan_path), "matrix_rel": self.matrix_rel,
                 "controller_repo": str(paths.REPO_ROOT), "controller_results": str(paths.RESULTS_DIR),
                 "controller_matrix_dir": str(self.matrix_dir), "controller_python": sys.executable, **run_vars}
        path = self.matrix_dir / "plans" / f"vars-{self.stamp}.json"
        path.write_text(json.dumps(extra, indent=1))
        return path

    def _play(self, kind: str, limit: str, playbook: str, extra: dict, tag: str | None = None) -> Play:
        self.logs.mkdir(parents=True, exist_ok=True)
        name = f"{kind}-{limit.replace(',', '+')}" + (f"-{tag}" if tag else "")
        cmd = [venv_bin("ansible-playbook"), "-i", str(self.inventory), str(PLAYBOOKS / playbook),
               "-e", f"@{self.vars_file}", "--limit", limit]
        if extra:
            extra_path = self.logs / f"{name}.vars.json"
            extra_path.write_text(json.dumps(extra, indent=1))
            cmd += ["-e", f"@{extra_path}"]
        return self._start(kind, limit.split(",")[0], name, cmd, ansible_env(), "ansible-playbook")

    def _start(self, kind: str, host: str, name: str, cmd: list[str], env: dict, program: str,
               cwd: Path | None = None, preexec_fn=None) -> Play:
        """@cmd (@program, as messages and the fleet record name it) in a session of its own (the module
        doc says why), its output in logs/run-<stamp>/@name.log."""
        self.logs.mkdir(parents=True, exist_ok=True)
        log_path = self.logs / f"{name}.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env, cwd=cwd, start_new_session=True, preexec_fn=preexec_fn)
        return Play(kind, host, proc, log_path, program=program)
