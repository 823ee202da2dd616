"""Removing build directories never goes through a mount, and what a killed build left is found."""

import os
import subprocess
from pathlib import Path

from sslab.substrate.buildtools import BUILD_DIR, mounts_under, remove_stale_builds

MOUNTINFO = """\
22 1 253:0 / / rw,relatime - ext4 /dev/vda rw
30 22 0:5 / /dev rw,nosuid - devtmpfs udev rw
91 22 0:60 / /cache/uml/.ab.tmp-41/chroot/proc rw - proc proc rw
92 22 0:61 / /cache/uml/.ab.tmp-41/chroot/dev rw - tmpfs tmpfs rw
93 92 0:62 / /cache/uml/.ab.tmp-41/chroot/dev/pts rw - devpts devpts rw
94 22 0:63 / /cache/my\\040dir/x rw - tmpfs tmpfs rw
95 22 0:64 / /cache-other/y rw - tmpfs tmpfs rw
"""


def test_mounts_under_lists_deepest_first_and_only_below_the_path():
    got = mounts_under(Path("/cache"), MOUNTINFO)
    assert got[0] == Path("/cache/uml/.ab.tmp-41/chroot/dev/pts")
    assert set(got) == {Path("/cache/uml/.ab.tmp-41/chroot/proc"), Path("/cache/uml/.ab.tmp-41/chroot/dev"),
                        Path("/cache/uml/.ab.tmp-41/chroot/dev/pts"), Path("/cache/my dir/x")}
    # A sibling whose name starts with the same letters is not below it.
    assert Path("/cache-other/y") not in got
    assert mounts_under(Path("/cache/uml/.ab.tmp-41/chroot/dev"), MOUNTINFO) == [
        Path("/cache/uml/.ab.tmp-41/chroot/dev/pts"), Path("/cache/uml/.ab.tmp-41/chroot/dev")]


def test_build_directory_names_carry_the_builders_pid():
    for name, pid in ((".3cb31aa8.tmp-4242", "4242"), ("9f1e.tmp-17", "17"), (".build-99", "99"),
                      (".repin-5", "5"), (".fresh-12", "12")):
        m = BUILD_DIR.match(name)
        assert m and m["pid"] == pid, name
    for name in ("3cb31aa8", "build.lock", ".latest.tmp", "go", "tmp-12"):
        assert not BUILD_DIR.match(name), name


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_stale_build_directories_are_removed_and_live_ones_kept(tmp_path):
    dead = dead_pid()
    stale = [tmp_path / "uml" / f".abc.tmp-{dead}", tmp_path / "container" / f".build-{dead}",
             tmp_path / f".repin-{dead}", tmp_path / "containerlab" / f"k1.tmp-{dead}"]
    live = tmp_path / "images" / f".def.tmp-{os.getpid()}"
    finished = tmp_path / "uml" / "abc"
    for d in (*stale, live, finished):
        (d / "chroot").mkdir(parents=True)
        (d / "chroot" / "file").write_text("x")
    removed = remove_stale_builds(tmp_path)
    assert sorted(removed) == sorted(str(d) for d in stale)
    assert not any(d.exists() for d in stale)
    assert (live / "chroot" / "file").exists() and (finished / "chroot" / "file").exists()



def interrupted_after_mkdir(monkeypatch, cache: Path):
    """Path.mkdir of a build directory in @cache raising KeyboardInterrupt just after the directory is
    made: where a SIGTERM (Terminated) or Ctrl-C that arrives during the mkdir system call is raised,
    before the next line runs (CI, 7 Dec 2026: the UML stage's empty directory was left so)."""
    real = Path.mkdir

    def mkdir(self, *args, **kw):
        real(self, *args, **kw)
        if BUILD_DIR.match(self.name) and self.is_relative_to(cache):
            raise KeyboardInterrupt

    monkeypatch.setattr(Path, "mkdir", mkdir)


def test_a_stage_interrupted_as_it_makes_its_directory_leaves_none(tmp_path, monkeypatch):
    """The UML kernel's and the base's stages, each interrupted right after making its build
    directory: the directory is removed on the way out (the next build removes only a dead process's)."""
    import pytest
    from sslab import paths
    from sslab.substrate import image, umlkernel
    cache = tmp_path / "cache"
    interrupted_after_mkdir(monkeypatch, cache)
    with pytest.raises(KeyboardInterrupt):
        umlkernel.ensure_uml(cache, paths.IMAGES_DIR, "0" * 64, tmp_path / "no-base", lambda: None)
    assert (cache / "uml").is_dir() and list((cache / "uml").iterdir()) == []
    monkeypatch.setattr(image, "require_host_tools", lambda: None)
    with pytest.raises(KeyboardInterrupt):
        image.ensure_base(image.Recipe.load(), cache, mirrors=object())
    assert (cache / "base").is_dir() and list((cache / "base").iterdir()) == []
