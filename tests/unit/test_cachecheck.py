"""A cache entry checked against its build's record (sslab.substrate.cachecheck), on hand-made entries."""

import hashlib
import json

from sslab.substrate.cachecheck import image_damage, set_aside, tree_listing, uml_damage


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def make_image(tmp_path, name="a" * 64):
    root = tmp_path / "images" / name
    (root / "rootfs/lib/modules/x/extra").mkdir(parents=True)
    (root / "rootfs/usr/local/bin").mkdir(parents=True)
    files = {"linux": b"uml kernel", "vmlinuz": b"kernel", "initrd.img": b"initrd"}
    for n, b in files.items():
        (root / n).write_bytes(b)
    (root / "rootfs/lib/modules/x/extra/tcp_sslab.ko").write_bytes(b"module")
    (root / "rootfs/usr/local/bin/sslab-transfer").write_bytes(b"program")
    manifest = {"image_hash": name, "files": {n: sha(b) for n, b in files.items()},
                "programs": {"/usr/local/bin/sslab-transfer": sha(b"program")},
                "uml": {"module": {"modules": {"tcp_sslab": {"path": "/lib/modules/x/extra/tcp_sslab.ko",
                                                             "sha256": sha(b"module")}}}}}
    manifest["rootfs_listing"] = tree_listing(root / "rootfs")
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_an_intact_image_has_no_damage_and_each_kind_of_damage_is_named(tmp_path):
    root = make_image(tmp_path)
    assert image_damage(root) == []
    (root / "linux").write_bytes(b"uml kernez")  # one byte flipped: same size, other content
    (root / "rootfs/lib/modules/x/extra/tcp_sslab.ko").write_bytes(b"modul")  # truncated
    (root / "initrd.img").unlink()
    got = image_damage(root)
    assert got[0] == f"linux: sha256 {sha(b'uml kernez')[:12]}..., recorded {sha(b'uml kernel')[:12]}..."
    assert "initrd.img: missing" in got
    assert f"rootfs/lib/modules/x/extra/tcp_sslab.ko: sha256 {sha(b'modul')[:12]}..., recorded " \
           f"{sha(b'module')[:12]}..." in got
    # The truncated module also changed the tree's listing (its size).
    assert got[-1].startswith("rootfs: files added, removed or resized")


def test_a_file_added_to_the_root_tree_or_a_broken_manifest_is_damage(tmp_path):
    root = make_image(tmp_path)
    (root / "rootfs/etc").mkdir()
    (root / "rootfs/etc/stray").write_text("x")
    assert image_damage(root) == ["rootfs: files added, removed or resized since the build (its listing differs)"]
    other = make_image(tmp_path, "b" * 64)
    (other / "manifest.json").write_text('{"image_hash": "b')  # cut short by a crash
    assert image_damage(other) == ["manifest.json: unreadable (JSONDecodeError)"]
    moved = make_image(tmp_path, "c" * 64)
    (moved.parent / ("d" * 64)).mkdir()
    (moved / "manifest.json").rename(moved.parent / ("d" * 64) / "manifest.json")
    assert image_damage(moved.parent / ("d" * 64))[0] == f"manifest.json: names image {'c' * 12}, not {'d' * 12}"


def test_a_uml_kernel_is_checked_by_size_then_hash_and_set_aside_not_deleted(tmp_path):
    root = tmp_path / "uml" / ("e" * 64)
    (root / "tree").mkdir(parents=True)
    (root / "linux").write_bytes(b"0123456789")
    (root / "tree/.config").write_text("CONFIG_X=y\n")
    (root / "uml.json").write_text(json.dumps({"binary_sha256": sha(b"0123456789"), "binary_bytes": 10,
                                               "config_sha256": sha(b"CONFIG_X=y\n")}))
    assert uml_damage(root) == []
    (root / "linux").write_bytes(b"01234")  # truncated: named by its size
    assert uml_damage(root) == ["linux: 5 bytes, recorded 10"]
    dest = set_aside(root, uml_damage(root), "UML kernel")
    assert not root.exists() and (dest / "linux").read_bytes() == b"01234"
    assert dest.parent == root.parent and dest.name.startswith(f".damaged-{'e' * 64}-")


def test_a_uml_kernels_build_tree_is_checked_by_its_listing(tmp_path):
    root = tmp_path / "uml" / ("f" * 64)
    (root / "tree/include/net").mkdir(parents=True)
    (root / "linux").write_bytes(b"0123456789")
    (root / "tree/.config").write_text("CONFIG_X=y\n")
    (root / "tree/include/net/tcp.h").write_text("struct tcp_sock;\n")
    info = {"binary_sha256": sha(b"0123456789"), "binary_bytes": 10, "config_sha256": sha(b"CONFIG_X=y\n"),
            "tree_listing": tree_listing(root / "tree")}
    (root / "uml.json").write_text(json.dumps(info))
    assert uml_damage(root) == []
    listing_differs = ["tree: files added, removed or resized since the build (its listing differs)"]
    (root / "tree/include/net/tcp.h").write_text("struct tcp")  # cut short by a crash
    assert uml_damage(root) == listing_differs
    (root / "tree/include/net/tcp.h").write_text("struct tcp_soc!;\n")  # changed in place, same size: not seen
    assert uml_damage(root) == []
    (root / "tree/include/net/stray.h").write_text("")
    assert uml_damage(root) == listing_differs
    (root / "tree/include/net/stray.h").unlink()
    (root / "tree/include/net/tcp.h").unlink()
    assert uml_damage(root) == listing_differs
    # A kernel built before listings were recorded is checked as before (binary and .config).
    (root / "uml.json").write_text(json.dumps({k: v for k, v in info.items() if k != "tree_listing"}))
    assert uml_damage(root) == []


def test_a_second_build_waits_for_the_first_saying_for_whom(tmp_path, capsys):
    """Two builds in one cache: the second says which process holds the lock, and goes on when it ends."""
    import subprocess
    import sys
    import time
    from sslab.substrate.buildtools import cache_lock
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"f = open({str(tmp_path / 'build.lock')!r}, 'a+'); fcntl.flock(f, fcntl.LOCK_EX)\n"
        "f.seek(0); f.truncate(); f.write(str(os.getpid())); f.flush()\n"
        "print('held', flush=True); time.sleep(1.0)\n")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    t0 = time.monotonic()
    with cache_lock(tmp_path):
        waited = time.monotonic() - t0
        assert (tmp_path / "build.lock").read_text() == str(__import__("os").getpid())
    holder.wait()
    assert waited > 0.5
    assert f"waiting for another build in {tmp_path} (pid {holder.pid}) to finish" in capsys.readouterr().out


def test_a_containers_shipped_image_is_checked_for_what_it_ships(tmp_path):
    root = make_image(tmp_path)
    shipped = tmp_path / "image"
    root.rename(shipped)
    for name in ("vmlinuz", "initrd.img"):
        (shipped / name).unlink()  # a container ships the UML side only
    assert image_damage(shipped, shipped=True) == []
    (shipped / "linux").write_bytes(b"uml kernez")
    assert image_damage(shipped, shipped=True) == [f"linux: sha256 {sha(b'uml kernez')[:12]}..., recorded "
                                                   f"{sha(b'uml kernel')[:12]}..."]


def test_a_trees_listing_is_its_entries_in_walk_order_and_a_link_is_not_followed(tmp_path):
    """The listing is the sha256 of a line per entry, `path NUL kind NUL size`, a directory's files and
    links first (by name), then each directory below (by name): the form every recorded listing (an
    image's `rootfs_listing`, a UML tree's `tree_listing`) was made in, so a cache made before still
    checks.  A link (to a directory, to a file, to nothing) is an entry of kind l, size 0, never
    followed; a regular file's size is its own."""
    import hashlib
    import os

    root = tmp_path / "t"
    (root / "b" / "c").mkdir(parents=True)
    (root / "a").mkdir()
    (root / "z.txt").write_text("12345")
    (root / "b" / "f").write_text("x")
    (root / "b" / "c" / "g").write_text("")
    os.symlink(root / "b", root / "b_link")       # to a directory: listed, not walked into
    os.symlink("/nonexistent", root / "a" / "gone")
    os.mkfifo(root / "a" / "pipe")
    lines = ["b_link\0l\0000\n", "z.txt\0f\0005\n",   # the top's files and links, by name
             "a/gone\0l\0000\n", "a/pipe\0o\0000\n",   # then a/, whole
             "b/f\0f\0001\n", "b/c/g\0f\0000\n"]         # then b/: its file, then b/c/
    assert tree_listing(root) == hashlib.sha256("".join(lines).encode()).hexdigest()
    (root / "b" / "f").write_text("xy")
    assert tree_listing(root) != hashlib.sha256("".join(lines).encode()).hexdigest()
