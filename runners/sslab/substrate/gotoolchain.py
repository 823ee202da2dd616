"""A Go to build with: the host's when it is new enough, else Go's own toolchain from the Go module
proxy (golang.org/toolchain, the zip the go command itself fetches when it switches toolchains),
checked against the SHA-256 its caller pins and unpacked once in the cache.

Used by what this project builds from the Go module proxy: containerlab (images/containerlab.lock)
and actionlint (sslab.cli.workflowlint).  A new Debian root has no Go; this is how both build there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import urllib.request
import zipfile
from pathlib import Path

from .buildtools import ImageError, log, sha256_file

PROXY = "https://proxy.golang.org"


def _go_version(go: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([go, "version"], capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return None
    m = re.search(r"go(\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(x or 0) for x in m.groups()) if m else None


def _as_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in (v.split(".") + ["0", "0"])[:3])


def find_go(lock: dict, cache: Path, candidates: list[str | None] | None = None) -> tuple[str, str]:
    """(go binary, its version): the host's if new enough, else the lock's toolchain from the proxy."""
    if candidates is None:
        candidates = [shutil.which("go"), "/usr/local/go/bin/go", "/usr/lib/go/bin/go"]
    for cand in candidates:
        if cand and Path(cand).exists():
            v = _go_version(cand)
            if v and v >= _as_tuple(lock["go_min"]):
                return cand, ".".join(map(str, v))
    tc = lock["toolchain"]
    root = cache / "go-toolchain" / tc
    go = root / f"golang.org/toolchain@v0.0.1-go{tc}.linux-amd64" / "bin" / "go"
    if not go.exists():
        url = f"{PROXY}/golang.org/toolchain/@v/v0.0.1-go{tc}.linux-amd64.zip"
        log(f"no Go >= {lock['go_min']} here; fetching the Go {tc} toolchain from {url}")
        root.mkdir(parents=True, exist_ok=True)
        z = root / "toolchain.zip"
        with urllib.request.urlopen(url, timeout=600) as r, open(z, "wb") as f:
            shutil.copyfileobj(r, f)
        got = sha256_file(z)
        if got != lock["toolchain_sha256"]:
            z.unlink()
            raise ImageError(f"the Go toolchain {tc} from the proxy has sha256 {got}, the lock says "
                             f"{lock['toolchain_sha256']}")
        with zipfile.ZipFile(z) as zf:
            for info in zf.infolist():
                zf.extract(info, root)
                mode = info.external_attr >> 16
                if mode:
                    os.chmod(root / info.filename, mode & 0o777)
        z.unlink()
    return str(go), tc
