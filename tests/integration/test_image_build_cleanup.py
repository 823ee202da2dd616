"""An interrupted image build leaves no mount behind, and a killed one's mounts go at the next build.

A build compiles the UML kernel in a chroot with /proc, /sys, /dev and /dev/pts mounted in it.  Killed
there, it once left them mounted inside the cache, the chroot's /dev a bind of the host's devtmpfs:
an `rm -rf` of the cache would then have deleted the host's device nodes.  Here `make image` runs on
a cache of its own (the base stage hard-linked from the real one, so the build goes straight to the
UML kernel's chroot), is stopped there with SIGTERM and with SIGINT, and must leave no mount and no
build directory; then a build is SIGKILLed there (nothing can clean up), and the next build must
remove what it left before it does anything else.
"""

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sslab.paths import REPO_ROOT, cache_dir
from sslab.substrate.buildtools import BUILD_DIR, mounts_under
from sslab.substrate.cachecheck import tree_listing

from .helpers import mounted_tmpfs

pytestmark = pytest.mark.vm


@pytest.fixture
def cache(tmp_path, image):
    """A cache holding only the real cache's base stage, hard-linked (no copy, nothing shared that a build
    writes: stages copy the base rootfs before they change anything)."""
    c = tmp_path / "cache"
    c.mkdir()
    subprocess.run(["cp", "-al", str(cache_dir() / "base"), str(c / "base")], check=True)
    yield c
    for point in mounts_under(c):  # whatever a failed test left: never rm -rf through it
        subprocess.run(["umount", "-l", str(point)], check=False)


def start_build(cache: Path) -> subprocess.Popen:
    """`make image` on @cache in a session of its own; its output goes to a file (a pipe nobody reads
    would fill and stop the build): read it with output()."""
    env = {**os.environ, "SSLAB_CACHE": str(cache)}
    log = cache.parent / f"build-{time.monotonic_ns()}.log"
    with open(log, "w") as f:
        proc = subprocess.Popen(["make", "image"], cwd=REPO_ROOT, env=env, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)
    proc.log = log
    return proc


def output(proc: subprocess.Popen) -> str:
    return proc.log.read_text(errors="replace")


def wait_for(what, timeout: float, every: float = 0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if got := what():
            return got
        time.sleep(every)
    return None


def group_alive(proc: subprocess.Popen) -> bool:
    """Whether anything of the build's process group still runs (make itself reaped first: a zombie
    leader still counts as a member)."""
    proc.poll()
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return False
    return True


def build_dirs(cache: Path) -> list[Path]:
    return [d for stage in cache.iterdir() if stage.is_dir() for d in stage.iterdir() if BUILD_DIR.match(d.name)]


def in_the_chroot(proc: subprocess.Popen, cache: Path) -> list[Path]:
    """Wait until the build has its chroot's mounts up (and is working inside it); return them."""
    points = wait_for(lambda: [p for p in mounts_under(cache) if p.name == "pts"], timeout=240)
    assert points, f"the build never mounted its chroot; it said:\n{output(proc)[-3000:]}"
    time.sleep(2)  # apt-get is running in there now
    return mounts_under(cache)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_build_stopped_in_its_chroot_leaves_no_mount_and_no_build_directory(cache, sig):
    proc = start_build(cache)
    mounted = in_the_chroot(proc, cache)
    assert {p.name for p in mounted} >= {"proc", "sys", "dev", "pts"}
    os.killpg(proc.pid, sig)
    assert wait_for(lambda: not group_alive(proc), timeout=120), "the build did not stop"
    out = output(proc)
    assert mounts_under(cache) == [], out[-2000:]
    assert build_dirs(cache) == [], out[-2000:]
    # The chroot never held the host's /dev (it had a tmpfs of its own): the host's is intact.
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_the_next_build_removes_what_a_killed_build_left(cache):
    first = start_build(cache)
    left = in_the_chroot(first, cache)
    os.killpg(first.pid, signal.SIGKILL)  # nothing runs on the way out
    assert wait_for(lambda: not group_alive(first), timeout=60)
    assert mounts_under(cache) == left and len(build_dirs(cache)) == 1
    stale = build_dirs(cache)[0]
    second = start_build(cache)
    try:
        assert wait_for(lambda: not stale.exists(), timeout=120), "the next build did not remove the stale one"
        assert not any(str(p).startswith(str(stale)) for p in mounts_under(cache))
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        wait_for(lambda: not group_alive(second), timeout=120)
    out = output(second)
    assert "removed what an interrupted build left" in out and str(stale) in out
    assert mounts_under(cache) == [] and build_dirs(cache) == []


@pytest.fixture
def small_cache(tmp_path):
    """A 20 MB filesystem (tmpfs) for the cache: the base stage does not fit."""
    yield from mounted_tmpfs(tmp_path / "small-cache", "20m")


def build_on_a_full_cache(cache: Path, timeout: float) -> subprocess.CompletedProcess:
    """`sslab image build` on @cache, which runs out of space: it fails naming the cache's device and what
    to do (exit 1, no traceback) and leaves no build directory and no mount (whatever it did leave
    mounted is unmounted here, before the fixture's umount)."""
    try:
        res = subprocess.run([sys.executable, "-m", "sslab", "image", "build"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=timeout, env={**os.environ, "SSLAB_CACHE": str(cache)})
        assert res.returncode == 1, res.stdout[-2000:] + res.stderr[-2000:]
        assert f"error: no space left on the device holding {cache}" in res.stderr, res.stderr[-2000:]
        assert "Traceback" not in res.stderr
        assert [p for p in mounts_under(cache) if p != cache] == [] and build_dirs(cache) == []
        return res
    finally:
        for point in mounts_under(cache):
            if point != cache:
                subprocess.run(["umount", "-l", str(point)], check=False)


def test_a_full_cache_stops_a_build_saying_which_disk_and_leaves_nothing_half_built(small_cache):
    """The cache on a 20 MB filesystem: the base stage (debootstrap) runs out of space.  The build fails
    naming the cache's device and what to do (exit 1), and leaves no build directory, no mount and no
    stage in the cache; debootstrap itself said only that it could not download a file."""
    build_on_a_full_cache(small_cache, timeout=600)
    assert [p.name for p in (small_cache / "base").iterdir()] == []   # no stage recorded as built


@pytest.fixture
def cache_full_after_base(tmp_path, image):
    """A cache (tmpfs) holding a copy of the real cache's base stage with 200 MB to spare: the next stage
    copies the base's root tree to build in (1.4 GB) and runs out of space on the way."""
    base = cache_dir() / "base"
    size_mb = int(subprocess.run(["du", "-sm", str(base)], capture_output=True, text=True, check=True).stdout.split()[0])
    for cache in mounted_tmpfs(tmp_path / "cache", f"{size_mb + 200}m"):
        subprocess.run(["cp", "-a", str(base), str(cache / "base")], check=True)
        yield cache


def test_a_cache_full_past_the_base_stage_keeps_the_base_and_leaves_nothing_half_built(cache_full_after_base):
    """The space runs out in the UML kernel's stage, past the base (CI met this in a stage's copy of the
    base's tree): the build fails naming the cache's device (exit 1); the base stays as it was, and no
    build directory, mount or later stage is left."""
    cache = cache_full_after_base
    [base] = list((cache / "base").iterdir())
    before = tree_listing(base)
    res = build_on_a_full_cache(cache, timeout=900)
    assert "No space left on device" in res.stdout + res.stderr   # the step's own words, shown
    assert [p.name for p in (cache / "base").iterdir()] == [base.name] and tree_listing(base) == before
    for stage in ("uml", "images"):   # nothing recorded as built past the base
        assert not (cache / stage).exists() or [p.name for p in (cache / stage).iterdir()
                                                if not p.name.startswith(".")] == []


@pytest.fixture
def cache_short_for_the_last_stage(tmp_path, image):
    """A cache (tmpfs) holding copies of the real cache's base stage and of the UML kernel the tree's
    image is built on, with 1 GB to spare: the build goes straight to the image's last stage, which
    needs more (cachegc.FINAL_STAGE_NEEDS)."""
    uml = cache_dir() / "uml" / image.manifest()["uml"]["uml_hash"]
    size_mb = int(subprocess.run(["du", "-smc", str(cache_dir() / "base"), str(uml)], capture_output=True, text=True,
                                 check=True).stdout.split()[-2])
    for cache in mounted_tmpfs(tmp_path / "cache", f"{size_mb + 1024}m"):
        (cache / "uml").mkdir()
        subprocess.run(["cp", "-a", str(cache_dir() / "base"), str(cache / "base")], check=True)
        subprocess.run(["cp", "-a", str(uml), str(cache / "uml" / uml.name)], check=True)
        yield cache


def test_a_last_stage_without_room_is_refused_before_it_starts(cache_short_for_the_last_stage):
    """Past a base and a UML kernel that are there, the image's last stage needs 4 GiB: with about 1
    GB free the build prunes first (nothing to prune here), then refuses before it starts, saying
    how much is free and what to do (exit 1); nothing is built, nothing of the cache is lost."""
    cache = cache_short_for_the_last_stage
    before = {stage: sorted(p.name for p in (cache / stage).iterdir()) for stage in ("base", "uml")}
    res = subprocess.run([sys.executable, "-m", "sslab", "image", "build"], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "SSLAB_CACHE": str(cache)})
    out = res.stdout + res.stderr
    assert res.returncode == 1, out[-2000:]
    assert "removing images not used recently (keeping the 5 used last)" in out
    assert f"the cache's disk ({cache}) has 1.0 GiB free, it needs at least 4: nothing was built" in res.stderr, out[-2000:]
    assert "Traceback" not in res.stderr
    assert {stage: sorted(p.name for p in (cache / stage).iterdir()) for stage in ("base", "uml")} == before
    assert not (cache / "images").exists() or list((cache / "images").iterdir()) == []
