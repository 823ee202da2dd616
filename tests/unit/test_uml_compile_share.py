"""One compile for every source file that builds the same UML kernel (umlkernel.compile_inputs,
compiled_twin, reuse_compile): keyed on the repository's own source files, and reused from hand-made
cache entries."""

import hashlib
import json

from sslab.paths import REPO_ROOT
from sslab.substrate.buildtools import hash_inputs
from sslab.substrate.cachecheck import tree_listing
from sslab.substrate.kernelchanges import KernelChanges
from sslab.substrate.umlkernel import SourcePin, UMLKernel, compile_inputs, compiled_twin, reuse_compile, uml_inputs

IMAGES = REPO_ROOT / "images"
BASE = "b" * 64


def source(name: str | None) -> KernelChanges | None:
    return None if name is None else KernelChanges(source=IMAGES / "uml" / "sources" / f"{name}.yaml")


def keys(name: str | None) -> tuple[str, str]:
    """(the stage's key, the compile's key) of a source file."""
    return (hash_inputs(uml_inputs(IMAGES, BASE, source(name))),
            hash_inputs(compile_inputs(IMAGES, BASE, source(name))))


def test_sources_that_differ_only_in_how_they_boot_share_a_compile_and_keep_their_own_kernels():
    stage_73, compile_73 = keys("7.3")
    stage_73s, compile_73s = keys("7.3-seccomp")
    assert stage_73 != stage_73s  # runs on each are kept apart
    assert compile_73 == compile_73s  # one compile serves both


def test_another_version_suite_or_patch_series_is_another_compile():
    compiles = {name: keys(name)[1] for name in (None, "6.12", "7.2", "7.3")}
    assert len(set(compiles.values())) == 4, compiles


def test_the_compile_key_names_what_the_build_takes_from_the_source():
    parts = compile_inputs(IMAGES, BASE, source("7.3"))
    assert parts["linux_source"] == "linux-source-7.3=7.3.4-1~bpo13+1"
    assert parts["linux_source_suite"] == "trixie-backports"
    assert parts["patch_order"] == ("0001-os_getrandom-from-a-recorded-seed.patch 0002-HZ-250-as-Debian-amd64.patch "
                                    "0004-hostfs-relative-paths-from-the-current-directory.patch")
    assert not any(k.startswith("images/uml/sources/") for k in parts)
    # Everything else of the stage's key is the compile's too (the config, our builder, the patches' bytes).
    stage = uml_inputs(IMAGES, BASE, source("7.3"))
    assert {k: v for k, v in stage.items() if k != "images/uml/sources/7.3.yaml"}.items() <= parts.items()


def made_kernel(uml_dir, name: str, compile_key: str, **extra) -> UMLKernel:
    """A cache entry as ensure_uml leaves one: binary, built tree, record."""
    root = uml_dir / name
    (root / "tree/net/ipv4").mkdir(parents=True)
    (root / "tree/.config").write_text("CONFIG_UML=y\n")
    (root / "tree/net/ipv4/tcp_cubic.o").write_bytes(b"object")
    (root / "linux").write_bytes(b"uml kernel")
    record = {"uml_hash": name, "compile_key": compile_key, "release": "7.3.4", "build_seconds": 400.0,
              "binary_sha256": hashlib.sha256(b"uml kernel").hexdigest(), "binary_bytes": 10,
              "config_sha256": hashlib.sha256(b"CONFIG_UML=y\n").hexdigest(),
              "tree_listing": tree_listing(root / "tree"), "inputs": {"x": "y"}, **extra}
    (root / "uml.json").write_text(json.dumps(record))
    return UMLKernel(root)


def test_an_intact_kernel_of_the_same_compile_is_reused_and_says_so(tmp_path):
    uml_dir = tmp_path / "uml"
    made_kernel(uml_dir, "1" * 64, "other")
    twin = made_kernel(uml_dir, "2" * 64, "k", cmdline_extra=["root=/dev/root"])
    assert compiled_twin(uml_dir, "k") == twin
    assert compiled_twin(uml_dir, "none") is None
    dest = uml_dir / ".new.tmp"
    dest.mkdir()
    record = reuse_compile(twin, dest, SourcePin("linux-source-7.3", "7.3.4-1", cmdline_extra=("root=/dev/root",
                                                                                               "seccomp=on")))
    assert (dest / "linux").read_bytes() == b"uml kernel"
    assert tree_listing(dest / "tree") == twin.info()["tree_listing"]
    assert record["compile_of"] == "2" * 64
    assert record["cmdline_extra"] == ["root=/dev/root", "seccomp=on"]  # the new source's, not the twin's
    assert record["release"] == "7.3.4" and record["binary_sha256"] == twin.info()["binary_sha256"]
    # What names the twin's own entry is not carried over (ensure_uml writes the new kernel's).
    assert not {"uml_hash", "inputs", "compile_key", "build_seconds"} & record.keys()


def test_a_damaged_or_unrecorded_kernel_is_not_reused(tmp_path):
    uml_dir = tmp_path / "uml"
    damaged = made_kernel(uml_dir, "1" * 64, "k")
    (damaged.tree / "net/ipv4/tcp_cubic.o").write_bytes(b"obj")  # cut short
    old = made_kernel(uml_dir, "2" * 64, "k")
    info = old.info()
    del info["compile_key"]  # built before compiles were keyed
    (old.root / "uml.json").write_text(json.dumps(info))
    made_kernel(uml_dir, ".3333.tmp-1", "k")  # a build under way
    assert compiled_twin(uml_dir, "k") is None
