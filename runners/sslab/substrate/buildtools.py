"""Helpers the image stages share: hashing, running commands, chroots, the cache lock."""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator


class ImageError(RuntimeError):
    pass


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


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, check=True, **kw)
    except FileNotFoundError as e:
        raise ImageError(f"build host lacks {cmd[0]!r} (run `make image`, which installs it)") from e
    except subprocess.CalledProcessError as e:
        out = (e.stderr or b"")
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        raise ImageError(f"command failed ({e.returncode}): {' '.join(cmd)}\n{out[-3000:]}") from e


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
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "build.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def chroot_mounts(rootfs: Path) -> Iterator[None]:
    """Mount /proc, /sys, /dev and /dev/pts inside the rootfs, always undone."""
    mounted: list[Path] = []
    try:
        for fstype, src, target, opts in (
            ("proc", "proc", "proc", []),
            ("sysfs", "sysfs", "sys", []),
            (None, "/dev", "dev", ["--bind"]),
            ("devpts", "devpts", "dev/pts", []),
        ):
            tgt = rootfs / target
            tgt.mkdir(parents=True, exist_ok=True)
            cmd = ["mount"] + opts + ([] if fstype is None else ["-t", fstype]) + [src, str(tgt)]
            run(cmd, capture_output=True)
            mounted.append(tgt)
        yield
    finally:
        for tgt in reversed(mounted):
            subprocess.run(["umount", "-l", str(tgt)], capture_output=True)


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
