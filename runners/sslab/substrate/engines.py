"""The container engine that works here (Podman or Docker): what `make container`, the test fleet
and a prune of the image cache ask of it.

A leaf of substrate (it imports buildtools only), so that the cache's prune (cachegc) and the
container's build (container) can both ask without importing each other.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

from .buildtools import ImageError

#: Engines in the order they are tried: Podman first (daemonless, Debian's, what the container was
#: measured with here), then Docker.
ENGINES = ("podman", "docker")
#: `<engine> info` answers in well under a second when the engine works (0.24 s for Podman here).
INFO_TIMEOUT_S = 60


def engine_trouble(name: str) -> str | None:
    """None when the engine @name works on this host, else why it does not.  Being on the PATH is
    not enough: the machines here ship a Docker client with no daemon (`docker info`: "Cannot
    connect to the Docker daemon")."""
    if shutil.which(name) is None:
        return "not installed"
    try:
        res = subprocess.run([name, "info"], capture_output=True, text=True, timeout=INFO_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"`{name} info` did not answer within {INFO_TIMEOUT_S} s"
    if res.returncode != 0:
        said = [ln.strip() for ln in (res.stderr + res.stdout).splitlines() if ln.strip()]
        return f"`{name} info` failed ({res.returncode}): {said[-1] if said else 'no output'}"
    return None


@functools.lru_cache(maxsize=1)
def engine() -> str:
    """The first engine of ENGINES that works here; ImageError naming each one tried, and why it
    failed, when none does."""
    troubles = {}
    for name in ENGINES:
        trouble = engine_trouble(name)
        if trouble is None:
            return name
        troubles[name] = trouble
    raise ImageError("no working container engine: " + "; ".join(f"{n}: {why}" for n, why in troubles.items())
                     + ". `make test-deps` (or `make container`) installs Debian's podman and runc")
