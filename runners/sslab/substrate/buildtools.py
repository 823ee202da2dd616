"""Helpers the image stages share: hashing, running commands, chroots, the cache lock."""

from __future__ import annotations

import collections
import contextlib
import datetime as _dt
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from .. import paths


class ImageError(RuntimeError):
    """A build step that failed; @output: the end of what it said (its message shows it too)."""

    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def hash_inputs(parts: dict[str, str]) -> str:
    """Hash a name -> digest mapping, independent of insertion order."""
    h = hashlib.sha256()
    for name in sorted(parts):
        h.update(f"{name}\0{parts[name]}\n".encode())
    return h.hexdigest()


def log(msg: str) -> None:
    print(f"[image] {msg}", flush=True)


#: What of a failed step's own output its ImageError keeps (and shows: the console did not).
ERROR_TAIL_CHARS = 3000
#: A step that runs this long says so on the console, again every as long, and its time at its end.
HEARTBEAT_S = 60.0

_step_log: Path | None = None


def step_log() -> Path:
    """This process's build log, build-<stamp>.log in $SSLAB_LOGS or the system's temporary
    directory's sslab-logs-<uid> (as the Makefile's APT_INSTALL puts its logs; not the cache: a build
    that fills the cache's disk must still be able to say why): every build step's own output, which
    the console does not show (a kernel build, apt and dpkg print thousands of lines); made, and named
    on the console, on first use."""
    global _step_log
    if _step_log is None:
        where = Path(os.environ.get("SSLAB_LOGS") or Path(tempfile.gettempdir()) / f"sslab-logs-{os.getuid()}")
        where.mkdir(parents=True, exist_ok=True)
        _step_log = where / f"build-{paths.stamp()}.log"
        log(f"each build step's own output: {_step_log}")
    return _step_log


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    """@cmd, checked: a failure is an ImageError holding the end of what the step said.  Unless the
    caller takes the output itself, the step's output goes to the build log (step_log), the console
    hearing of a long step every HEARTBEAT_S, and the error keeps and shows the log's end
    (ImageError.output): it can then tell why the step failed ("No space left on device": the cache's
    disk) even when the step's cleanup has freed the space since."""
    logged = not (kw.get("capture_output") or kw.keys() & {"stdout", "stderr", "input"})
    try:
        if logged:
            try:
                path = step_log()
            except OSError:       # no log to be had: the step's words on the console, as they come
                return _run_keeping_stderr(cmd, cwd=kw.get("cwd"), env=kw.get("env"))
            return _run_logged(cmd, path, cwd=kw.get("cwd"), env=kw.get("env"))
        return _run_captured(cmd, **kw)
    except FileNotFoundError as e:
        raise ImageError(f"build host lacks {cmd[0]!r} (run `make image`, which installs it)") from e
    except subprocess.CalledProcessError as e:
        out = (e.stderr or b"")
        out = (out.decode(errors="replace") if isinstance(out, bytes) else out)[-ERROR_TAIL_CHARS:]
        where = f" (all of its output: {_step_log})" if logged and _step_log else ""
        raise ImageError(f"command failed ({e.returncode}): {' '.join(cmd)}{where}\n{out}", output=out) from e


def _what(cmd: list[str]) -> str:
    """A step's name on the console: its program and first words (inside a chroot: the command run there)."""
    words = cmd[2:] if cmd and Path(cmd[0]).name == "chroot" and len(cmd) > 2 else cmd
    shown = [w for w in words if not w.startswith("-")][:3]
    return " ".join(Path(shown[0]).name if i == 0 else w for i, w in enumerate(shown)) if shown else "?"


@contextlib.contextmanager
def _step(cmd: list[str], **kw) -> Iterator[subprocess.Popen]:
    """subprocess.Popen(@cmd, **@kw), killed and waited for if an interrupt stops the step.  On a
    KeyboardInterrupt (Ctrl-C, and the Terminated a SIGTERM raises) Popen waits a quarter of a second
    for its child and then leaves it running: a SIGTERM sent to the build alone (`kill PID`, a job's
    timeout), not to its process group, would leave a kernel compile or apt running in the chroot while
    the clean-up unmounts and removes it.  So the step's process is gone before anything cleans up after
    it (what it started in turn, a compile's compilers, is not waited for: without their make they
    start nothing new)."""
    with subprocess.Popen(cmd, **kw) as proc:
        try:
            yield proc
        except BaseException:
            proc.kill()
            proc.wait()
            raise


def _run_captured(cmd: list[str], input=None, capture_output: bool = False, **kw) -> subprocess.CompletedProcess:
    """subprocess.run(@cmd, check=True, ...) whose step an interrupt ends (_step)."""
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    with _step(cmd, **kw) as proc:
        out, err = proc.communicate(input)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _run_logged(cmd: list[str], path: Path, cwd=None, env=None) -> subprocess.CompletedProcess:
    """subprocess.run(@cmd, check=True) with its stdout and stderr appended to the build log @path; a
    line on the console every HEARTBEAT_S while it runs and its time at its end if it ran that long; on
    failure the log's end since the step began in CalledProcessError.stderr."""
    with open(path, "ab") as out:
        out.write(f"\n$ {' '.join(cmd)}\n".encode())
        out.flush()
        start_at = out.tell()
        t0 = time.monotonic()
        with _step(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env) as proc:
            while True:
                try:
                    rc = proc.wait(timeout=HEARTBEAT_S)
                    break
                except subprocess.TimeoutExpired:
                    log(f"  ... {_what(cmd)}: {(time.monotonic() - t0) / 60:.1f} min so far")
    took = time.monotonic() - t0
    if took >= HEARTBEAT_S:
        log(f"  {_what(cmd)}: took {took / 60:.1f} min")
    if rc != 0:
        with open(path, "rb") as f:
            f.seek(max(start_at, path.stat().st_size - ERROR_TAIL_CHARS))
            raise subprocess.CalledProcessError(rc, cmd, stderr=f.read())
    return subprocess.CompletedProcess(cmd, rc)


def _run_keeping_stderr(cmd: list[str], cwd=None, env=None) -> subprocess.CompletedProcess:
    """subprocess.run(@cmd, check=True) with its stderr passed through to ours line by line and its end
    kept (in CalledProcessError.stderr); stdout as ours."""
    tail: collections.deque[bytes] = collections.deque()
    kept = 0
    with _step(cmd, stderr=subprocess.PIPE, cwd=cwd, env=env) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.buffer.write(line)
            sys.stderr.flush()
            tail.append(line)
            kept += len(line)
            while kept > ERROR_TAIL_CHARS and len(tail) > 1:
                kept -= len(tail.popleft())
        rc = proc.wait()
    err = b"".join(tail)
    if rc != 0:
        raise subprocess.CalledProcessError(rc, cmd, stderr=err)
    return subprocess.CompletedProcess(cmd, rc, stderr=err)


def require_host_tools() -> None:
    need = {
        "debootstrap": "debootstrap",
        "mke2fs": "e2fsprogs",
        "chroot": "coreutils",
        "qemu-system-x86_64": "qemu-system-x86",
    }
    missing = [f"{tool} (Debian package {pkg})" for tool, pkg in need.items() if not shutil.which(tool)]
    if missing:
        raise ImageError("build host lacks: " + ", ".join(missing))
    if os.geteuid() != 0:
        raise ImageError("building the image needs root (debootstrap and chroot)")


@contextlib.contextmanager
def cache_lock(cache: Path) -> Iterator[None]:
    """One build in @cache at a time (a second `make image`, or a run needing another kernel's image,
    waits, saying for what and for whom).  Booting needs no lock: an image is renamed into place only
    when complete, and another recipe's is another directory."""
    def say(pid: str) -> None:
        log(f"waiting for another build in {cache} (pid {pid}) to finish: one build at a time")

    with paths.pid_lock(cache / "build.lock", when_held=say):
        yield


#: The device nodes a build chroot gets, on a /dev of its own (a tmpfs), never the host's: a
#: bind of the host's devtmpfs left behind by a killed build would let an `rm -rf` of the cache
#: delete the host's device nodes.  What a whole image build opened (inotify on each chroot's
#: /dev, 24 Nov 2026): the base stage /dev/null 160 times, /dev/urandom 105, /dev/tty 16 and a
#: pty (apt, dpkg); the UML kernel's build /dev/null 13175 times, /dev/urandom 3 and a pty; the
#: final stage /dev/null.  zero, full and random are the minimum programs expect; nothing opened
#: them.  The binaries built were the same as with the host's /dev bound in.
DEV_NODES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8), "urandom": (1, 9), "tty": (5, 0)}
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}


def _make_private_dev(dev: Path) -> None:
    """Fill a fresh tmpfs at @dev with DEV_NODES, DEV_LINKS, pts/ and shm/."""
    for name, (major, minor) in DEV_NODES.items():
        os.mknod(dev / name, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(dev / name, 0o666)  # whatever the umask
    for name, target in DEV_LINKS.items():
        os.symlink(target, dev / name)
    for d in ("pts", "shm"):
        (dev / d).mkdir()
    os.chmod(dev / "shm", 0o1777)


@contextlib.contextmanager
def chroot_mounts(rootfs: Path) -> Iterator[None]:
    """Mount /proc, /sys, a private /dev and its own /dev/pts inside the rootfs, always undone."""
    mounted: list[Path] = []
    try:
        for fstype, target, opts in (
            ("proc", "proc", []),
            ("sysfs", "sys", []),
            ("tmpfs", "dev", ["-o", "mode=0755,size=4m,nosuid"]),
            # A devpts instance of its own: the host's ptys are not visible in the chroot.
            ("devpts", "dev/pts", ["-o", "newinstance,ptmxmode=0666,mode=0620"]),
        ):
            tgt = rootfs / target
            tgt.mkdir(parents=True, exist_ok=True)
            run(["mount", "-t", fstype, *opts, fstype, str(tgt)], capture_output=True)
            mounted.append(tgt)
            if target == "dev":
                _make_private_dev(tgt)
        yield
    finally:
        for tgt in reversed(mounted):
            subprocess.run(["umount", "-l", str(tgt)], capture_output=True)


# --------------------------------------------------------------------------
# Removing build directories: never through a mount, and what killed builds left
# --------------------------------------------------------------------------


def mounts_under(path: Path, mountinfo: str | None = None) -> list[Path]:
    """The mount points at or below @path, deepest first, from @mountinfo (default: this process's
    /proc/self/mountinfo)."""
    if mountinfo is None:
        with open("/proc/self/mountinfo") as f:
            mountinfo = f.read()
    root = os.path.realpath(path)
    found = set()
    for line in mountinfo.splitlines():
        if not line.strip():
            continue
        # Field 5 is the mount point, with space, tab, newline and backslash octal-escaped.
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), line.split()[4])
        if point == root or point.startswith(root.rstrip("/") + "/"):
            found.add(Path(point))
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def unmount_below(path: Path) -> list[Path]:
    """Unmount everything mounted at or below @path (lazily: busy ones are detached at once);
    return what was mounted.  Raises ImageError if anything stays mounted."""
    points = mounts_under(path)
    for point in points:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)
    left = mounts_under(path)
    if left:
        raise ImageError(f"cannot unmount {', '.join(map(str, left))}; unmount by hand (`umount -l`) before "
                         f"removing {path}")
    return points


def remove_tree(path: Path) -> None:
    """`rm -rf @path`, but never through a mount: what is mounted below it is unmounted first."""
    if not os.path.lexists(path):
        return
    unmount_below(path)
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def build_dir(path: Path) -> Iterator[Path]:
    """@path, a stage's build directory (BUILD_DIR), made empty for the stage to work in and removed
    if anything stops the stage before it renames the directory into place.  Made inside that guard: a
    SIGTERM or Ctrl-C raised just after mkdir returns must not leave it (the next build removes only
    what a dead process left; CI met that window on 7 Dec 2026)."""
    remove_tree(path)
    try:
        path.mkdir(parents=True)
        yield path
    except BaseException:
        remove_tree(path)
        raise


#: Directories builds work in, named with the builder's pid: <stage>/.<hash>.tmp-<pid> (image
#: stages), containerlab/<key>.tmp-<pid>, container/.build-<pid>, .repin-<pid>, .fresh-<pid>
#: (make fresh-check's throw-away root).
BUILD_DIR = re.compile(r"^(?:.+\.tmp|\.build|\.repin|\.fresh)-(?P<pid>[0-9]+)$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_builds(cache: Path) -> list[str]:
    """Unmount and remove what killed builds left in @cache: build directories (BUILD_DIR) whose
    process is gone, with anything still mounted in them (a SIGKILL leaves /proc, /sys, /dev
    of a chroot mounted).  Run before a build does anything else; returns what was removed."""
    if not cache.is_dir():
        return []
    removed = []
    for parent in (cache, *[d for d in cache.iterdir() if d.is_dir() and not d.name.startswith(".")]):
        for d in sorted(parent.iterdir()):
            m = BUILD_DIR.match(d.name)
            if m and d.is_dir() and not d.is_symlink() and not _alive(int(m["pid"])):
                points = unmount_below(d)
                shutil.rmtree(d, ignore_errors=True)
                removed.append(f"{d}" + (f" ({len(points)} mount(s) undone)" if points else ""))
    for line in removed:
        log(f"removed what an interrupted build left: {line}")
    return removed


def in_chroot(rootfs: Path, cmd: list[str], capture: bool = False, extra_env: dict[str, str] | None = None) -> str:
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "DEBIAN_FRONTEND": "noninteractive",
        "LC_ALL": "C",
        "HOME": "/root",
        **(extra_env or {}),
    }
    res = run(["chroot", str(rootfs)] + cmd, env=env, capture_output=capture, text=True)
    return res.stdout if capture else ""


def installed_packages(rootfs: Path) -> dict[str, str]:
    out = in_chroot(rootfs, ["dpkg-query", "-W", "-f", "${Package}\t${Version}\n"], capture=True)
    pkgs = {}
    for line in out.splitlines():
        name, _, version = line.partition("\t")
        if name:
            pkgs[name] = version
    return pkgs


def tool_version(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (res.stdout or res.stderr).strip().splitlines()[0] if (res.stdout or res.stderr).strip() else "unknown"


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def packages_version_of_host(pkg: str) -> str:
    try:
        res = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
        return res.stdout.strip() or "unknown"
    except OSError:
        return "unknown"
