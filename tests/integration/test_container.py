"""The testbed as a container: build (or reuse) the image, run a short scenario in it, rebuild its report on the host."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sslab.paths import REPO_ROOT
from sslab.substrate.container import engine
pytestmark = pytest.mark.vm
#: This host's Podman may not raise rlimits (see substrate/container.py); harmless elsewhere.
FLAGS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1000:1000"]


@pytest.fixture(scope="module")
def engine_name():
    """The engine the harness picks (one that works, Podman first); `make test` installs Podman when
    none works, so a missing one is a failure here, not a skip."""
    return engine()


@pytest.fixture(scope="module")
def tag(image, engine_name):
    res = subprocess.run([sys.executable, "-m", "sslab", "container", "build"], capture_output=True, text=True,
                         cwd=REPO_ROOT, timeout=1800)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return json.loads(res.stdout[res.stdout.index("{"):])["tag"]


def test_a_scenario_runs_in_the_container_and_the_host_rebuilds_its_report(tag, image, engine_name, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    res = subprocess.run([engine_name, "run", "--rm", *FLAGS, "-v", f"{results}:/results", tag, "make", "startup",
                          "SCENARIO=tests/data/module-smoke.yaml"], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (results / "startup" / "latest").resolve()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["substrate"] == "uml" and meta["clock"] == "uml/inf-cpu"
    assert meta["code"]["from"] == ".sslab-commit" and len(meta["code"]["commit"]) == 40
    # The container runs the host's image (same recipe hash), with the harness it was built from.
    assert meta["image"]["hash"] == image.manifest()["image_hash"]
    runs = [json.loads(p.read_text()) for p in sorted((run_dir / "job/out/runs").glob("*/run.json"))]
    assert len(runs) == 4 and all(r["flows"][0]["cc_used"] == r["flows"][0]["cc"] for r in runs)
    # The host rebuilds the container's tables from the archive alone, byte for byte.
    rebuilt = subprocess.run([sys.executable, "-m", "sslab", "report", str(run_dir)], capture_output=True, text=True,
                             cwd=REPO_ROOT, timeout=300)
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    dest = Path(rebuilt.stdout.split("rebuilt: ")[1].strip()).parent
    assert (dest / "summary.json").read_bytes() == (run_dir / "summary.json").read_bytes()
