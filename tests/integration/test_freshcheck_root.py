"""make fresh-check's new root is a machine's root, not a chroot: a process that joins its mount
namespace (what runc does for `docker exec` and `podman exec`) stays inside it.

Entered as a chroot, the root let every engine exec into a fleet host fail with "chdir to cwd
("/opt/sslab") ... no such file or directory" (make fresh-check, 28 Nov 2026): setns puts the caller at
the namespace's root, which was this machine's /.  The root here is made of this machine's own
programs and their libraries (a few MB), and entered by the same code as the check's."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sslab.substrate.freshcheck import in_root

#: What the root needs: the entry's programs after its pivot (umount, rmdir, env, bash) and the probe's.
PROGRAMS = ("bash", "env", "umount", "rmdir", "nsenter", "cat", "ls")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounts and pivot_root need root")


def small_root(root: Path) -> None:
    """@root with PROGRAMS and the libraries they load, at this machine's paths, and the mount points the
    entry fills (proc, sys, dev, run)."""
    files = set()
    for name in PROGRAMS:
        program = shutil.which(name)
        assert program, f"{name} not on this machine"
        files.add(Path(program).resolve())
        for line in subprocess.run(["ldd", program], capture_output=True, text=True).stdout.splitlines():
            path = next((w for w in line.split() if w.startswith("/")), None)
            if path:
                files.add(Path(path))
    for f in files:
        for shown in {f, f.resolve()}:
            dest = root / shown.relative_to("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f.resolve(), dest)
    for name in PROGRAMS:  # at the paths the entry's PATH and /usr/bin/env name
        for where in ("usr/bin", "bin"):
            dest = root / where / name
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(shutil.which(name)).resolve(), dest)
    for d in ("proc", "sys", "dev", "run", "root"):
        (root / d).mkdir(exist_ok=True)
    (root / "in-the-new-root").write_text("yes\n")


def test_a_process_joining_the_new_roots_mount_namespace_stays_in_the_new_root(tmp_path):
    root = tmp_path / "root"
    small_root(root)
    log = tmp_path / "enter.log"
    # First the root as its own processes see it, then as one that joins its mount namespace does.
    probe = "cat /in-the-new-root; nsenter --mount=/proc/self/ns/mnt -- cat /in-the-new-root; ls -a /"
    rc, _ = in_root(root, probe, log)
    out = log.read_text()
    assert rc == 0, out
    lines = out.splitlines()
    assert lines[:2] == ["yes", "yes"], out
    # This machine's tree is not reachable from inside, and the pivot left nothing behind.
    assert ".old-root" not in lines[2:], out
    assert not (root / ".old-root").exists()
    # Nothing of the root's stays mounted on this machine.
    assert str(root) not in Path("/proc/self/mountinfo").read_text()
