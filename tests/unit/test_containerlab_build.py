"""The containerlab build's lock and its choice of Go (sslab.substrate.containerlab); the build itself
runs at `make image` time and is checked there (its hash, its version in every run)."""

import json

import pytest

from sslab.paths import REPO_ROOT
from sslab.substrate.buildtools import ImageError
from sslab.substrate.containerlab import read_lock
from sslab.substrate.gotoolchain import _as_tuple, find_go


def test_the_repository_lock_is_complete_and_pins_by_hash():
    lock = read_lock(REPO_ROOT / "images/containerlab.lock")
    assert lock["version"].startswith("v") and lock["h1"].startswith("h1:")
    assert len(lock["toolchain_sha256"]) == 64
    # the one dependency taken from elsewhere is the same module at the same pseudo-version
    old, new = next(iter(lock["replace"].items()))
    assert new.split("@")[0].endswith(old.split("/")[-1]) and "@v0.0.0-" in new


def test_a_lock_missing_fields_is_refused(tmp_path):
    f = tmp_path / "containerlab.lock"
    f.write_text(json.dumps({"module": "m", "version": "v1"}))
    with pytest.raises(ImageError, match="missing"):
        read_lock(f)
    f.write_text("{not json")
    with pytest.raises(ImageError, match="cannot read"):
        read_lock(f)


def test_versions_compare_as_numbers():
    assert _as_tuple("1.22.1") < _as_tuple("1.22.12") < _as_tuple("1.26") < _as_tuple("1.100")


def test_an_old_go_on_the_path_is_passed_over_for_the_cached_toolchain(tmp_path):
    old = tmp_path / "bin" / "go"
    old.parent.mkdir()
    old.write_text("#!/bin/sh\necho go version go1.19.8 linux/amd64\n")
    old.chmod(0o755)
    lock = {"go_min": "1.22.1", "toolchain": "1.22.12", "toolchain_sha256": "0" * 64}
    cached = tmp_path / "cache/go-toolchain/1.22.12/golang.org/toolchain@v0.0.1-go1.22.12.linux-amd64/bin/go"
    cached.parent.mkdir(parents=True)
    cached.write_text("")
    go, version = find_go(lock, tmp_path / "cache", candidates=[str(old), None, str(tmp_path / "nothing")])
    assert go == str(cached) and version == "1.22.12"
    new = tmp_path / "bin" / "go-new"
    new.write_text("#!/bin/sh\necho go version go1.26.8 linux/amd64\n")
    new.chmod(0o755)
    assert find_go(lock, tmp_path / "cache", candidates=[str(old), str(new)]) == (str(new), "1.26.8")
