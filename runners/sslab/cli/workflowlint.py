"""`make lint-workflows`: the hosted-CI workflow files (.github/workflows/) checked by actionlint.

actionlint knows GitHub Actions' syntax, its expressions and contexts, the inputs of the common
actions, and runs shellcheck on every `run:` script; nothing of ours could check as much.  It is a
Go program, and Go's module proxy is one of the registries this project may use, so it is built
here from source, pinned by version, into the virtualenv's bin/:

- with the machine's Go when it is new enough (TOOLCHAIN's go_min);
- else with Go's own toolchain taken from the same module proxy, pinned by its SHA-256 and kept in
  the cache (sslab.substrate.gotoolchain, as containerlab's build).  A new Debian root (`make
  fresh-check`) has no Go: this is how its `make test` lints.

shellcheck is Debian's (installed by the Makefile).  Exit status: actionlint's (1: a finding), 2 when
the linter cannot be had, saying why.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import paths
from ..substrate.buildtools import ImageError
from ..substrate.gotoolchain import find_go

ACTIONLINT_MODULE = "github.com/rhysd/actionlint/cmd/actionlint"
ACTIONLINT_VERSION = "1.7.12"
#: The Go actionlint needs (its go.mod says `go 1.25.0`), and the toolchain taken from the module proxy
#: when the machine's is missing or older (its zip's SHA-256 as the proxy served it on 29 Nov 2026).
TOOLCHAIN = {"go_min": "1.25.0", "toolchain": "1.26.8",
             "toolchain_sha256": "30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7"}
WORKFLOWS_DIR = paths.REPO_ROOT / ".github" / "workflows"


class LintToolError(RuntimeError):
    """The linter could not be had (the message says why and what to do)."""


def usable_go() -> str:
    """A Go that can build actionlint: the machine's if new enough, else the pinned toolchain from the
    module proxy (substrate.gotoolchain, as containerlab's build)."""
    try:
        go, _ = find_go(TOOLCHAIN, paths.cache_dir())
    except (ImageError, OSError) as e:
        raise LintToolError(f"no Go >= {TOOLCHAIN['go_min']} here and none from the module proxy: {e}") from e
    return go


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
