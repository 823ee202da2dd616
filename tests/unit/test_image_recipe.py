"""Recipe loading, the stage hashes and the cache."""

import json
import shutil
from pathlib import Path

import pytest

from sslab.substrate import image as img
from sslab.paths import REPO_ROOT


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the parts of the source tree that feed the image hashes."""
    for rel in ("images", "runners/sslab/substrate/agent.py"):
        src, dst = REPO_ROOT / rel, tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
    (tmp_path / "kernel").mkdir()
    return tmp_path


def uml_hash(repo: Path, base: str) -> str:
    return img.hash_inputs(img.uml_inputs(repo / "images", base))


def hashes(repo: Path) -> tuple[str, str]:
    base = img.hash_inputs(img.base_inputs(repo / "images"))
    return base, img.hash_inputs(img.final_inputs(base, repo, repo / "kernel", uml_hash(repo, base)))


def test_the_real_recipe_loads():
    r = img.Recipe.load()
    assert r.kernel.image_package == f"linux-image-{r.kernel.abi}"
    assert r.kernel.headers_package == f"linux-headers-{r.kernel.abi}"
    assert "iperf3" in r.packages and "mininet" in r.packages


def test_hashes_follow_their_inputs(repo):
    base0, final0 = hashes(repo)
    assert hashes(repo) == (base0, final0)
    # A module source change rebuilds only the final stage.
    (repo / "kernel/Kbuild").write_text("obj-m += x.o\n")
    base1, final1 = hashes(repo)
    assert base1 == base0 and final1 != final0
    # Build products in kernel/ are not inputs, nor is its documentation.
    (repo / "kernel/x.o").write_bytes(b"\0")
    (repo / "kernel/.x.o.cmd").write_text("")
    (repo / "kernel/README.md").write_text("# how the module works\n")
    assert hashes(repo) == (base1, final1)
    # The init script is baked in: final stage only.
    (repo / "images/guest/sslab-init").write_text("#!/bin/sh\n# changed\n")
    base2, final2 = hashes(repo)
    assert base2 == base0 and final2 not in (final0, final1)
    # A recipe change rebuilds everything.
    recipe = repo / "images/recipe.yaml"
    recipe.write_text(recipe.read_text().replace("  - zstd\n", "  - zstd\n  - strace\n"))
    base3, final3 = hashes(repo)
    assert base3 != base0 and final3 != final2


def test_uml_kernel_hash_follows_its_config_patches_and_base(repo):
    base = "b" * 64
    h0 = uml_hash(repo, base)
    assert uml_hash(repo, base) == h0 and uml_hash(repo, "c" * 64) != h0
    config = repo / "images/uml/config"
    config.write_text(config.read_text() + "NET_SCH_CAKE=y\n")
    h1 = uml_hash(repo, base)
    (repo / "images/uml/patches/0099-extra.patch").write_text("--- a/x\n+++ b/x\n")
    h2 = uml_hash(repo, base)
    assert len({h0, h1, h2}) == 3
    # The UML kernel is an input of the final stage.
    assert img.final_inputs(base, repo, repo / "kernel", h1) != img.final_inputs(base, repo, repo / "kernel", h2)


def test_uml_config_file_is_read_and_checked(tmp_path):
    from sslab.substrate.umlkernel import config_mismatches, read_config
    cfg = tmp_path / "config"
    cfg.write_text("# comment\nHOSTFS=y  # why\nHZ=250\nUML_RANDOM=n\nLOCALVERSION=\"-x\"\n")
    lines = read_config(cfg)
    assert [(c.name, c.value) for c in lines] == [("HOSTFS", "y"), ("HZ", "250"), ("UML_RANDOM", "n"),
                                                  ("LOCALVERSION", '"-x"')]
    built = 'CONFIG_HOSTFS=y\nCONFIG_HZ=100\n# CONFIG_UML_RANDOM is not set\nCONFIG_LOCALVERSION="-x"\n'
    assert config_mismatches(lines, built) == ["HZ=250 (the built config has 100)"]
    assert config_mismatches(read_config(cfg)[:1], "") == ["HOSTFS=y (the built config has n)"]
    cfg.write_text("HOSTFS=maybe\n")
    with pytest.raises(img.ImageError, match=r"config:1: expected NAME=y\|n"):
        read_config(cfg)


def test_recipe_errors_name_the_problem(repo):
    recipe = repo / "images/recipe.yaml"
    text = recipe.read_text()
    recipe.write_text(text + "colour: blue\n")
    with pytest.raises(img.ImageError, match="unknown keys.*colour"):
        img.Recipe.load(repo / "images")
    recipe.write_text(text.replace("disk_size_gb: 4", "disk_size_gb: 1"))
    with pytest.raises(img.ImageError, match="disk_size_gb"):
        img.Recipe.load(repo / "images")
    recipe.write_text(text)
    (repo / "images/kernel.lock").unlink()
    with pytest.raises(img.ImageError, match="image-repin"):
        img.Recipe.load(repo / "images")


def fake_base(cache: Path, repo: Path) -> str:
    base_hash = img.hash_inputs(img.base_inputs(repo / "images"))
    d = cache / "base" / base_hash
    d.mkdir(parents=True)
    (d / "base.json").write_text(json.dumps({"base_hash": base_hash}))
    return base_hash


def fake_image(cache: Path, repo: Path) -> Path:
    """A complete image of @repo's recipe in @cache (its files empty); its root."""
    base_hash = fake_base(cache, repo)
    image_hash = img.hash_inputs(img.final_inputs(base_hash, repo, repo / "kernel", uml_hash(repo, base_hash)))
    root = cache / "images" / image_hash
    (root / "rootfs").mkdir(parents=True)
    for name in ("root.img", "vmlinuz", "initrd.img", "linux"):
        (root / name).write_text("{}")
    # What a build records, checked before every use (sslab.substrate.cachecheck).
    (root / "manifest.json").write_text(json.dumps({"image_hash": image_hash, "files": {
        name: img.sha256_file(root / name) for name in ("vmlinuz", "initrd.img", "linux")}}))
    return root


def test_cached_image_is_returned_without_building(repo, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    root = fake_image(cache, repo)

    def no_build(*a, **k):
        raise AssertionError("a cached image must not be rebuilt")

    monkeypatch.setattr(img, "build_final", no_build)
    monkeypatch.setattr(img, "build_base", no_build)
    monkeypatch.setattr(img, "ensure_uml", no_build)
    assert img.ensure_image(cache=cache, repo=repo).root == root


def test_a_built_image_is_used_while_another_build_holds_the_lock(repo, tmp_path, monkeypatch):
    """A run whose image is complete does not queue behind the cache's build lock (another kernel's
    build holds it for minutes); one whose image is missing waits for it."""
    import fcntl
    import threading

    cache = tmp_path / "cache"
    root = fake_image(cache, repo)
    got = []

    def use():
        try:
            got.append(img.ensure_image(cache=cache, repo=repo).root)
        except RuntimeError:
            got.append("stopped")

    with open(cache / "build.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a build of another image would
        t = threading.Thread(target=use, daemon=True)
        t.start()
        t.join(10)
        assert got == [root], "a built image waited for the build lock"
        (root / "linux").unlink()  # incomplete now: this one must wait for the lock
        got.clear()
        t = threading.Thread(target=use, daemon=True)
        monkeypatch.setattr(img, "remove_stale_builds", lambda c: got.append("locked"))
        monkeypatch.setattr(img, "ensure_base", lambda *a: (_ for _ in ()).throw(RuntimeError("stop")))
        t.start()
        t.join(1)
        assert got == [], "a missing image was built without the lock"
        fcntl.flock(held, fcntl.LOCK_UN)
        t.join(10)
        assert got == ["locked", "stopped"]


def test_incomplete_or_interrupted_builds_do_not_count(repo, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    base_hash = fake_base(cache, repo)
    image_hash = img.hash_inputs(img.final_inputs(base_hash, repo, repo / "kernel", uml_hash(repo, base_hash)))
    # A leftover temporary directory from an interrupted build, and nothing else.
    (cache / "images" / f".{image_hash}.tmp-1").mkdir(parents=True)
    monkeypatch.setattr(img, "require_host_tools", lambda: None)
    monkeypatch.setattr(img, "ensure_uml", lambda *a: ("u" * 64, None))

    def interrupted(base_dir, base_info, inputs, h, recipe, repo_, kdir, dest, uml=None, changes=None):
        (dest / "root.img").write_text("half")
        raise KeyboardInterrupt

    monkeypatch.setattr(img, "build_final", interrupted)
    with pytest.raises(KeyboardInterrupt):
        img.ensure_image(cache=cache, repo=repo)
    assert not (cache / "images" / image_hash).exists()
    assert [p.name for p in (cache / "images").iterdir()] == [f".{image_hash}.tmp-1"]

    def complete(base_dir, base_info, inputs, h, recipe, repo_, kdir, dest, uml=None, changes=None):
        for name in ("root.img", "vmlinuz", "initrd.img", "linux"):
            (dest / name).write_text("x")
        (dest / "rootfs").mkdir()
        return {"image_hash": h}

    monkeypatch.setattr(img, "build_final", complete)
    built = img.ensure_image(cache=cache, repo=repo)
    assert built.is_complete() and built.manifest()["image_hash"] == image_hash


def test_a_source_edited_during_the_build_leaves_no_image_under_the_old_key(repo, tmp_path, monkeypatch):
    """The key is taken before the build reads kernel/: an edit meanwhile would have put the new module under
    the old key (seen on 2 Dec 2026).  Such a build is refused, nothing kept; the next build takes the new key."""
    cache = tmp_path / "cache"
    source = repo / "kernel" / "sslab_tcp.c"
    source.write_text("/* the module */\n")
    base_hash = fake_base(cache, repo)
    old_hash = img.hash_inputs(img.final_inputs(base_hash, repo, repo / "kernel", uml_hash(repo, base_hash)))
    monkeypatch.setattr(img, "require_host_tools", lambda: None)
    monkeypatch.setattr(img, "ensure_uml", lambda *a: ("u" * 64, None))

    def edited_meanwhile(base_dir, base_info, inputs, h, recipe, repo_, kdir, dest, uml=None, changes=None):
        source.write_text(source.read_text() + "/* edited while the image was built */\n")
        for name in ("root.img", "vmlinuz", "initrd.img", "linux"):
            (dest / name).write_text("x")
        (dest / "rootfs").mkdir()
        return {"image_hash": h}

    monkeypatch.setattr(img, "build_final", edited_meanwhile)
    with pytest.raises(img.ImageError, match=f"sources changed while image {old_hash[:12]} was built"):
        img.ensure_image(cache=cache, repo=repo)
    assert list((cache / "images").iterdir()) == []
    new_hash = img.hash_inputs(img.final_inputs(base_hash, repo, repo / "kernel", uml_hash(repo, base_hash)))
    assert new_hash != old_hash


def test_manifest_records_what_the_image_is_made_of(repo):
    recipe = img.Recipe.load(repo / "images")
    base_info = {"base_hash": "b" * 64, "inputs": {"images/recipe.yaml": "r"},
                 "kernel": {"package": recipe.kernel.image_package, "version": recipe.kernel.version,
                            "release": recipe.kernel.abi},
                 "packages": {"iperf3": "3.12-1"}, "mirrors": {"debian": "http://m/debian", "security": None},
                 "debootstrap": "1.0.128", "built": "2026-01-01T00:00:00+00:00"}
    inputs = img.final_inputs("b" * 64, repo, repo / "kernel", "u" * 64)
    h = img.hash_inputs(inputs)
    m = img.make_manifest(base_info, inputs, h, recipe, {"present": False, "reason": "none"})
    assert m["recipe_hash"] == h == img.hash_inputs(m["recipe"]["inputs"])
    assert m["kernel"]["package"] == recipe.kernel.image_package
    assert m["packages"] == {"iperf3": "3.12-1"}
    assert m["build_date"] and m["module"]["present"] is False
    json.dumps(m)  # serialisable as is


def test_the_image_lists_bbr3_and_bbr2_sslab_only_where_the_module_has_them(tmp_path):
    """Our module declares bbr3's and bbr2_sslab's parameters only when built against a kernel with
    patch 0005 (the default UML kernel's, not Debian's stock one): the image's list follows."""
    from sslab.substrate.image import HOOKED_MARK, kernel_congestion_controls

    def listed(release, module_bytes):
        extra = tmp_path / f"lib/modules/{release}/extra"
        extra.mkdir(parents=True)
        (extra / "tcp_sslab.ko").write_bytes(module_bytes)
        return kernel_congestion_controls(tmp_path, release, {"present": True})

    hooked = listed("6.1.192-sslab-uml", b"\x7fELF...parm=suss_max:...\x00" + HOOKED_MARK + b"uint\x00")
    stock = listed("6.1.0-56-amd64", b"\x7fELF...parm=suss_max:...\x00")
    assert hooked["bbr3"] == hooked["bbr2_sslab"] == "module tcp_sslab" and hooked["cubic_suss"] == "module tcp_sslab"
    assert "bbr3" not in stock and "bbr2_sslab" not in stock and stock["cubic_suss"] == "module tcp_sslab"
