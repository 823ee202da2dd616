"""The image cache's prune (substrate/cachegc.py): what it keeps and why, on a cache of real
directories whose use times are set by hand."""

import json
import os
import time

import pytest

from sslab.substrate import cachegc
from sslab.substrate.buildtools import ImageError

#: The fixtures' clock, set when each test's cache is made (not at import: a suite runs for an hour,
#: and prune() reads the real clock).
NOW = time.time()
HOUR = 3600.0


def image(cache, name, used_hours_ago, uml="c1"):
    d = cache / "images" / (name * 16)
    (d / "rootfs").mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"uml": {"uml_hash": uml * 32}}))
    (d / "root.img").write_bytes(b"x" * 8192)
    t = NOW - used_hours_ago * HOUR
    (d / cachegc.LAST_USED).touch()
    os.utime(d / cachegc.LAST_USED, (t, t))
    return d.name


def uml(cache, name, used_hours_ago):
    d = cache / "uml" / (name * 32)
    d.mkdir(parents=True)
    (d / "uml.json").write_text("{}")
    t = NOW - used_hours_ago * HOUR
    os.utime(d / "uml.json", (t, t))
    return d.name


@pytest.fixture
def cache(tmp_path):
    global NOW
    NOW = time.time()
    # Six images, by last use: a (now-ish: in use), b 1 h, c 2 h, d 3 h, e 4 h, f 5 h ago.
    for name, hours in zip("abcdef", (0.1, 1, 2, 3, 4, 5)):
        image(tmp_path, name, hours, uml="c1" if name in "abc" else "c2")
    uml(tmp_path, "c1", 1)
    uml(tmp_path, "c2", 3)
    uml(tmp_path, "c3", 9)  # no image left of it (UML kernels: c1, c2, c3)
    return tmp_path


def names(entries, kind="image"):
    return sorted(e.name[:1] if kind == "image" else e.name[:2] for e in entries if e.kind == kind)


def test_keeps_the_trees_image_those_in_use_and_the_k_used_last(cache):
    plan = cachegc.plan_prune(cache, keep=2, current="f" * 16, now=NOW)
    # f: the tree's own, however old; a: in use (6 min ago, under IN_USE_S); b, c: the 2 used last.
    assert names(plan.keep) == ["a", "b", "c", "f"]
    assert names(plan.remove) == ["d", "e"]
    assert plan.why_kept["f" * 16] == "the source tree's image"
    assert plan.why_kept["a" * 16].startswith("in use (used 360 s ago")
    # c1 (a, b, c) and c2 (f) are kept images' kernels; c3 was last used 9 h ago by nothing kept.
    assert names(plan.keep, "uml") == ["c1", "c2"]
    assert names(plan.remove, "uml") == ["c3"]


def test_keep_zero_leaves_the_tree_and_what_is_in_use(cache):
    plan = cachegc.plan_prune(cache, keep=0, current=None, now=NOW)
    assert names(plan.keep) == ["a"]
    assert names(plan.keep, "uml") == ["c1"]
    assert names(plan.remove, "uml") == ["c2", "c3"]


def test_the_trees_uml_kernel_is_kept_before_its_image_is_built(cache):
    plan = cachegc.plan_prune(cache, keep=0, current="z" * 16, current_uml="c3" * 32, now=NOW)
    assert names(plan.keep, "uml") == ["c1", "c3"]


def test_an_image_without_a_manifest_is_a_build_in_progress_and_is_not_touched(cache):
    (cache / "images" / ".cafe.tmp-123").mkdir()
    half = cache / "images" / ("9" * 16)
    half.mkdir()
    plan = cachegc.plan_prune(cache, keep=0, current=None, now=NOW)
    assert half not in [e.root for e in plan.remove + plan.keep]


def test_prune_removes_what_the_plan_does_not_keep_and_says_each(cache):
    said = []
    (cache / "images" / f".damaged-{'z' * 16}-20261127T101500-4242").mkdir()   # set aside two days ago
    res = cachegc.prune(cache, keep=1, current=None, engines=lambda: [], say=said.append)
    left = sorted(p.name[:1] for p in (cache / "images").iterdir())
    # a in use, b used last; the set-aside entry goes too; nothing .pruned-* is left behind.
    assert left == ["a", "b"]
    assert sorted(p.name[:2] for p in (cache / "uml").iterdir()) == ["c1"]
    assert [k for k, *_ in res.removed] == ["image"] * 4 + ["uml", "uml", "set aside"]
    assert all(size >= 8192 for kind, _, size in res.removed if kind == "image")
    assert len(said) == 7 and said[0].startswith("removing image cccccccccccc (")


def test_an_entry_set_aside_is_kept_a_day_to_be_looked_at(cache):
    """A damaged image moved aside stays a day, whatever prune comes (the build after it prunes first
    on a short disk); the name's stamp says when it was set aside (UTC), not its files' times."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(NOW - 2 * HOUR))
    recent = cache / "images" / f".damaged-{'y' * 16}-{stamp}-77"
    recent.mkdir()
    old = cache / "images" / f".damaged-{'x' * 16}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(NOW - 25 * HOUR))}-78"
    old.mkdir()
    assert cachegc.set_aside_at(recent) == pytest.approx(NOW - 2 * HOUR, abs=1)
    plan = cachegc.plan_prune(cache, keep=0, current=None, now=NOW)
    assert recent in [e.root for e in plan.keep] and old in [e.root for e in plan.remove]
    assert plan.why_kept[recent.name].startswith("set aside 72") and plan.why_kept[recent.name].endswith("looked at")
    cachegc.prune(cache, keep=0, current=None, engines=lambda: [], say=lambda _: None)
    assert recent.is_dir() and not old.exists()


def test_a_dry_run_removes_nothing(cache):
    before = sorted(p.name for p in (cache / "images").iterdir())
    res = cachegc.prune(cache, keep=0, current=None, dry_run=True, engines=lambda: [], say=lambda _: None)
    assert len(res.removed) == 5 + 2  # images b to f, UML kernels c2 and c3 (nothing set aside here)
    assert sorted(p.name for p in (cache / "images").iterdir()) == before


def test_engine_images_of_images_no_longer_kept_are_stale():
    listed = ["localhost/slowstart-lab:aaaaaaaaaaaa-0123456789ab", "localhost/sslab-fleet:bbbbbbbbbbbb-0123",
              "localhost/slowstart-lab:cccccccccccc-ffff"]
    assert cachegc.stale_engine_images(listed, {"aaaaaaaaaaaa"}) == listed[1:]


def test_disk_usage_counts_a_hard_link_once(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 40960)
    one = cachegc.disk_usage(tmp_path)
    os.link(tmp_path / "f", tmp_path / "g")
    assert cachegc.disk_usage(tmp_path) == one >= 40960


def test_a_short_disk_prunes_keeping_the_k_used_last(cache, monkeypatch):
    monkeypatch.setattr(cachegc, "free_bytes", lambda _: cachegc.BUILD_ROOM - 1)
    monkeypatch.setattr(cachegc, "working_engines", lambda: [])
    cachegc.prune_if_short(cache, None, None)
    # a is in use; b to f are the DEFAULT_KEEP (5) used last: all kept; c3 (no image) goes.
    assert len(list((cache / "images").iterdir())) == 6
    assert sorted(p.name[:2] for p in (cache / "uml").iterdir()) == ["c1", "c2"]


def test_a_disk_with_room_is_left_alone(cache, monkeypatch):
    monkeypatch.setattr(cachegc, "free_bytes", lambda _: cachegc.BUILD_ROOM)
    cachegc.prune_if_short(cache, None, None)
    assert len(list((cache / "uml").iterdir())) == 3


def test_a_stage_is_refused_before_it_starts_when_its_disk_is_short(cache, monkeypatch):
    monkeypatch.setattr(cachegc, "free_bytes", lambda _: 2 * cachegc.GIB)
    with pytest.raises(ImageError, match=r"container x: the cache's disk \(.*\) has 2\.0 GiB free, it needs at least 7: "
                                         r"nothing was built"):
        cachegc.refuse_if_short(cache, cachegc.CONTAINER_BUILD_NEEDS, "container x")
    cachegc.refuse_if_short(cache, 2 * cachegc.GIB, "image y")  # exactly enough: goes on


def fake_engine(bin_dir, listed):
    """A program answering `images` with @listed and noting each `rmi -f NAME` in rmi.log."""
    script = bin_dir / "fake-engine"
    script.write_text("#!/bin/sh\ncase $1 in\n images) printf '%s\\n' " + " ".join(listed) + " ;;\n"
                      f" rmi) echo $3 >> {bin_dir}/rmi.log ;;\nesac\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("orphans, gone", [
    (False, ["localhost/slowstart-lab:eeeeeeeeeeee-1"]),  # only the images this prune removed
    (True, ["localhost/slowstart-lab:eeeeeeeeeeee-1", "localhost/sslab-fleet:999999999999-2"]),
])
def test_the_engines_images_go_with_their_image_and_orphans_only_when_asked(cache, tmp_path, orphans, gone):
    listed = ["localhost/slowstart-lab:aaaaaaaaaaaa-1", "localhost/slowstart-lab:eeeeeeeeeeee-1",
              "localhost/sslab-fleet:999999999999-2", "docker.io/library/debian:12"]
    eng = fake_engine(tmp_path, listed)
    res = cachegc.prune(cache, keep=3, current=None, orphans=orphans, engines=lambda: [eng], say=lambda _: None)
    assert sorted(e.name[:1] for e in cachegc.cached_images(cache)) == ["a", "b", "c", "d"]
    assert (tmp_path / "rmi.log").read_text().split() == gone
    assert res.engine_removed == [f"{eng}:{n}" for n in gone]
