"""`make lint-workflows`: the hosted-CI workflow files (.github/workflows/) checked by actionlint.

actionlint knows GitHub Actions' syntax, its expressions and contexts, the inputs of the common
actions, and runs shellcheck on every `run:` script; nothing of ours could check as much.  It is a
Go program, and Go's module proxy is one of the registries this project may use, so it is built
here from source, pinned by version, into the virtualenv's bin/:

- with the machine's Go when it is new enough (ACTIONLINT_NEEDS_GO);
- else with Go's own toolchain taken from the same module proxy (golang.org/toolchain, the zip the
  go command itself downloads when it switches toolchains), pinned by its SHA-256 and kept in the
  cache.  A new Debian root (`make fresh-check`) has no Go: this is how its `make test` lints.

shellcheck is Debian's (installed by the Makefile).  Exit status: actionlint's (1: a finding), 2 when
the linter cannot be had, saying why.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

from .. import paths

ACTIONLINT_MODULE = "github.com/rhysd/actionlint/cmd/actionlint"
ACTIONLINT_VERSION = "1.7.12"
#: actionlint 1.7.12's go.mod says `go 1.25.0`.
ACTIONLINT_NEEDS_GO = (1, 25)
#: The toolchain fetched when the machine's Go is missing or older (the proxy's zip, measured 29 Nov 2026).
TOOLCHAIN_GO = "1.26.8"
TOOLCHAIN_SHA256 = "30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7"
WORKFLOWS_DIR = paths.REPO_ROOT / ".github" / "workflows"


class LintToolError(RuntimeError):
    """The linter could not be had (the message says why and what to do)."""


def go_proxy() -> str:
    """The first proxy of $GOPROXY (Go's default when unset or `direct`)."""
    for entry in re.split(r"[,|]", os.environ.get("GOPROXY", "")):
        if entry.startswith(("http://", "https://")):
            return entry.rstrip("/")
    return "https://proxy.golang.org"


def go_version(go: str) -> tuple[int, int] | None:
    """(major, minor) of the Go at @go, None when it does not answer."""
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"go(\d+)\.(\d+)", out.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def fetched_toolchain() -> Path:
    """Go TOOLCHAIN_GO from the module proxy, unpacked in the cache (once): the path of its `go`."""
    root = paths.cache_dir() / "tools" / f"go{TOOLCHAIN_GO}"
    go = root / "go" / "bin" / "go"
    if go.exists():
        return go
    url = f"{go_proxy()}/golang.org/toolchain/@v/v0.0.1-go{TOOLCHAIN_GO}.linux-amd64.zip"
    print(f"lint-workflows: no Go >= {'.'.join(map(str, ACTIONLINT_NEEDS_GO))} here; fetching Go {TOOLCHAIN_GO} "
          f"from {url}", flush=True)
    try:
        with urllib.request.urlopen(url, timeout=300) as resp:
            data = resp.read()
    except OSError as e:
        raise LintToolError(f"cannot fetch Go {TOOLCHAIN_GO} from the module proxy ({url}): {e}; "
                            f"install Go >= 1.25 and run again") from e
    digest = hashlib.sha256(data).hexdigest()
    if digest != TOOLCHAIN_SHA256:
        raise LintToolError(f"Go {TOOLCHAIN_GO}'s zip from {url} has SHA-256 {digest}, not {TOOLCHAIN_SHA256}: refused")
    partial = root.with_name(root.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    # The proxy's zip holds golang.org/toolchain@v0.0.1-go<ver>.linux-amd64/<GOROOT's files>, without
    # file modes (a module zip keeps none): the programs are bin/ and pkg/tool/'s, as the go command's
    # own unpacking has it.
    prefix = f"golang.org/toolchain@v0.0.1-go{TOOLCHAIN_GO}.linux-amd64/"
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            rel = info.filename.removeprefix(prefix)
            if rel == info.filename or info.is_dir() or ".." in Path(rel).parts:
                continue
            target = partial / "go" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))
            target.chmod(0o755 if rel.startswith(("bin/", "pkg/tool/")) else 0o644)
    partial.rename(root)
    return go


def usable_go() -> str:
    """A Go that can build actionlint: the machine's if new enough, else the fetched toolchain."""
    go = shutil.which("go")
    if go and (go_version(go) or (0, 0)) >= ACTIONLINT_NEEDS_GO:
        return go
    return str(fetched_toolchain())


def actionlint_path() -> Path:
    return Path(sys.prefix) / "bin" / "actionlint"


def installed_version(binary: Path) -> str | None:
    if not binary.exists():
        return None
    out = subprocess.run([str(binary), "-version"], capture_output=True, text=True).stdout
    return out.split()[0] if out.split() else None


def ensure_actionlint() -> Path:
    """actionlint ACTIONLINT_VERSION in the virtualenv's bin/, built when missing or another version."""
    binary = actionlint_path()
    if installed_version(binary) == f"v{ACTIONLINT_VERSION}":
        return binary
    go = usable_go()
    env = {**os.environ, "GOBIN": str(binary.parent), "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod",
           "PATH": f"{Path(go).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if Path(go).is_relative_to(paths.cache_dir()):
        env["GOROOT"] = str(Path(go).parents[1])
    print(f"lint-workflows: building actionlint {ACTIONLINT_VERSION} with {go}", flush=True)
    res = subprocess.run([go, "install", f"{ACTIONLINT_MODULE}@v{ACTIONLINT_VERSION}"], env=env,
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise LintToolError(f"go install {ACTIONLINT_MODULE}@v{ACTIONLINT_VERSION} failed:\n{res.stderr[-2000:]}")
    return binary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="lint-workflows", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help="workflow files (default: .github/workflows/*.yml)")
    args = ap.parse_args(argv)
    files = args.files or sorted(WORKFLOWS_DIR.glob("*.y*ml"))
    if not files:
        print(f"error: no workflow file in {WORKFLOWS_DIR}", file=sys.stderr)
        return 2
    if not shutil.which("shellcheck"):
        print("error: shellcheck is needed (Debian's shellcheck; `make lint-workflows` installs it)", file=sys.stderr)
        return 2
    try:
        binary = ensure_actionlint()
    except LintToolError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res = subprocess.run([str(binary), "-shellcheck", shutil.which("shellcheck") or "shellcheck",
                          *map(str, files)])
    if res.returncode == 0:
        print(f"lint-workflows: {len(files)} workflow file(s) clean (actionlint {ACTIONLINT_VERSION}, shellcheck)")
    return res.returncode


if __name__ == "__main__":
    sys.exit(main())
