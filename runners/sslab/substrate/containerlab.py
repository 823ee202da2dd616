"""containerlab for the containerlab backend, built from the Go module proxy (the only place it can come from here).

Built on the host when a run with BACKEND=containerlab first needs it (a
few minutes), never for other runs: the image does not carry it.  Such a
job takes the binary along in its job directory (JobSpec.tools), and the
run's meta.json records what was built (`containerlab`).

No container registry, no git hosting and no release download is reachable;
Debian does not package containerlab.  The Go module proxy serves its
module at exact versions (its version list is refused), and every
dependency but one: gomplate's `inet.af/netaddr` lives on a module host the
proxy here does not fetch from.  The same module is mirrored as
`github.com/inetaf/netaddr` at the same pseudo-version, which the proxy
does serve, so the build replaces the one with the other (images/containerlab.lock
says so; nothing of containerlab is changed).

    images/containerlab.lock   module, version, the module's h1 hash (checked: the
                               checksum database is not reachable), the replace,
                               and the Go toolchain to use when the host has none new
                               enough (golang.org/toolchain from the proxy, by sha256)

The binary is cached under <cache>/containerlab/<lock hash>/ with its record
(versions, hashes, the Go that built it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from .. import paths
from .buildtools import ImageError, cache_lock, log, sha256_file
from .gotoolchain import PROXY, find_go

#: What to build: module, version, hashes (see the module's text).
LOCK = paths.IMAGES_DIR / "containerlab.lock"


def containerlab_for_job(cache: Path | None = None, lock_path: Path = LOCK) -> tuple[Path, dict]:
    """The containerlab binary for a job (built on first need, under the cache's build lock so
    that cells running in parallel build it once) and its record."""
    cache = cache or paths.cache_dir()
    with cache_lock(cache):
        return build_containerlab(lock_path, cache)


def read_lock(path: Path) -> dict:
    try:
        lock = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ImageError(f"{path}: cannot read the containerlab lock: {e}") from None
    need = {"module", "version", "h1", "replace", "go_min", "toolchain", "toolchain_sha256"}
    missing = sorted(need - set(lock))
    if missing:
        raise ImageError(f"{path}: missing {', '.join(missing)}")
    return lock


def build_containerlab(lock_path: Path, cache: Path) -> tuple[Path, dict]:
    """The containerlab binary of the lock (built once, cached) and its record."""
    lock = read_lock(lock_path)
    key = hashlib.sha256(lock_path.read_bytes()).hexdigest()
    dest = cache / "containerlab" / key
    binary, record = dest / "containerlab", dest / "containerlab.json"
    if binary.exists() and record.exists():
        return binary, json.loads(record.read_text())
    go, go_version = find_go(lock, cache)
    gopath = cache / "go"
    env = {**os.environ, "GOPATH": str(gopath), "GOMODCACHE": str(gopath / "mod"), "GOFLAGS": "-mod=mod",
           "GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "GOPROXY": PROXY,
           # The checksum database is not reachable: the module's own hash is checked below,
           # its dependencies by the module's go.sum.
           "GOSUMDB": "off"}
    mod = f"{lock['module']}@{lock['version']}"
    log(f"containerlab: download {mod} from the Go module proxy")
    res = subprocess.run([go, "mod", "download", "-json", mod], capture_output=True, text=True, env=env,
                         timeout=1800)
    if res.returncode != 0:
        raise ImageError(f"go mod download {mod} failed: {res.stdout[-800:]} {res.stderr[-800:]}")
    info = json.loads(res.stdout)
    if info.get("Sum") != lock["h1"]:
        raise ImageError(f"{mod} from the proxy has hash {info.get('Sum')}, the lock says {lock['h1']}")
    tmp = dest.with_name(dest.name + f".tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    src = tmp / "src"
    shutil.copytree(info["Dir"], src)
    for p in src.rglob("*"):
        p.chmod(p.stat().st_mode | 0o200)
    for old, new in lock["replace"].items():
        subprocess.run([go, "mod", "edit", "-replace", f"{old}={new}"], cwd=src, env=env, check=True)
    version = lock["version"].lstrip("v")
    pkg = f"{lock['module']}/cmd"
    ldflags = (f"-s -w -X {pkg}.version={version} -X {pkg}.commit={lock.get('commit', 'none')} "
               f"-X {pkg}.date={lock.get('date', 'unknown')}")
    log(f"containerlab: build {mod} with Go {go_version} (a few minutes; the module cache stays in {gopath})")
    res = subprocess.run([go, "build", "-trimpath", "-ldflags", ldflags, "-o", str(tmp / "containerlab"), "."],
                         cwd=src, env=env, capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        raise ImageError(f"building containerlab failed:\n{res.stderr[-2000:]}")
    shutil.rmtree(src)
    rec = {"module": lock["module"], "version": lock["version"], "h1": lock["h1"], "replace": lock["replace"],
           "go": go_version, "go_binary": go, "binary_sha256": sha256_file(tmp / "containerlab"),
           "lock_sha256": key}
    (tmp / "containerlab.json").write_text(json.dumps(rec, indent=1))
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return binary, rec
