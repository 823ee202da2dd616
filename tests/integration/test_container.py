"""The testbed as a container: build (or reuse) the image, run a short scenario in it, rebuild its report on the host."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sslab.paths import REPO_ROOT
from sslab.substrate.container import engine

from .helpers import cell_record, sslab

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
    dest = Path(re.search(r"^rebuilt: (\S+)", rebuilt.stdout, re.M).group(1)).parent
    assert (dest / "summary.json").read_bytes() == (run_dir / "summary.json").read_bytes()


@pytest.fixture(scope="module")
def docker_image(tag, tmp_path_factory):
    """`make container-save`'s archive, loaded by Docker's own `docker load` (dockerd started here when
    it is installed and not running: `make test` installs Debian's docker.io)."""
    from sslab.substrate.container import ARCHIVE_SUFFIX, save
    from sslab.substrate.testfleet import ensure_docker
    assert ensure_docker() is None
    archive = save(dest=tmp_path_factory.mktemp("archive") / f"image{ARCHIVE_SUFFIX}")["archive"]
    res = subprocess.run(["docker", "load", "-i", archive], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert f"Loaded image: localhost/{tag}" in res.stdout
    yield f"localhost/{tag}"
    subprocess.run(["docker", "rmi", "-f", f"localhost/{tag}"], capture_output=True)  # 1.8 GB


def in_container(engine_cmd: list[str], image_tag: str, results: Path, *argv: str) -> Path:
    results.mkdir(parents=True, exist_ok=True)
    res = subprocess.run([*engine_cmd, "-v", f"{results}:/results", image_tag, *argv], capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return results


def test_docker_runs_the_saved_image_with_the_results_of_podman_and_the_host(docker_image, tag, engine_name,
                                                                            image, tmp_path):
    """vm-check and a short scenario, the same seed on the host, under Podman and under Docker: the guest
    writes the same bytes (Docker with no flags at all)."""
    engines = {"docker": ["docker", "run", "--rm"], "podman": ["podman", "run", "--rm", *FLAGS]}
    checks, runs = {}, {}
    for name, cmd in engines.items():
        out = in_container(cmd, docker_image if name == "docker" else tag, tmp_path / name, "make", "vm-check")
        checks[name] = (out / "vm-check/latest/job/out/vmcheck.json").read_bytes()
        out = in_container(cmd, docker_image if name == "docker" else tag, tmp_path / name, "make", "startup",
                           "SCENARIO=tests/data/module-smoke.yaml")
        runs[name] = cell_record((out / "startup/latest").resolve())
    res = sslab(["vm-check"], tmp_path / "host")
    assert res.returncode == 0, res.stderr[-2000:]
    checks["host"] = (tmp_path / "host/vm-check/latest/job/out/vmcheck.json").read_bytes()
    res = sslab(["startup", "--scenario", "tests/data/module-smoke.yaml"], tmp_path / "host")
    assert res.returncode == 0, res.stderr[-2000:]
    runs["host"] = cell_record((tmp_path / "host/startup/latest").resolve())
    vm = json.loads(checks["docker"])
    assert all(vm["checks"].values()) and len(runs["docker"]) >= 8
    assert checks["docker"] == checks["podman"] == checks["host"]
    assert runs["docker"] == runs["podman"] == runs["host"]
