"""Helpers shared by the integration tests."""

import os
import subprocess
import sys
from pathlib import Path

from sslab.paths import REPO_ROOT


def sslab(args: list[str], results: Path, timeout: float = 1800,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m sslab ARGS` from the repository, writing its results under @results (@env: more
    of the environment, e.g. SSLAB_MODULES)."""
    env = {**os.environ, "SSLAB_RESULTS": str(results), **(env or {})}
    return subprocess.run([sys.executable, "-m", "sslab", *args], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=env, timeout=timeout)
