"""The UML kernel's floating-point state is the host's size, results do not depend on that size, and a
substrate that cannot boot is stopped by the preflight before anything runs.

Our UML kernel asks the host for its XSAVE area's size at boot (images/uml/patches/0003-*): on hosts
with AMX (11008 bytes) UML 6.1 as Debian ships it, with a fixed 2696-byte buffer, panicked every
boot.  These tests run on whatever host runs CI: the first checks the kernel's size against the
host's own answer; the second makes the kernel move fewer bytes than the host's area (its test knob
SSLAB_UML_FP_SAVE), which reproduces that panic on any host; the third gives every FP buffer an AMX
host's 11008 bytes (SSLAB_UML_FP_AREA: the guest's memory then is laid out as on such a host; on an
AMX host, a page more than its own) and finds the same bytes as with this host's own size.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sslab.paths import REPO_ROOT
from sslab.records import read_runs_index
from sslab.substrate.hostfacts import xstate_probe
from sslab.substrate.job import JobSpec
from sslab.substrate.preflight import PROBE_ARGV, fp_sizes
from sslab.substrate.uml import UMLTestbed

from .helpers import larger_fp_area


pytestmark = pytest.mark.vm
DETERMINISM = REPO_ROOT / "tests/data/uml-determinism.yaml"
SMOKE = REPO_ROOT / "tests/data/module-smoke.yaml"
TINY = REPO_ROOT / "tests/data/matrix-tiny.yaml"


@pytest.fixture(scope="module")
def host_bytes():
    size, how = xstate_probe()
    assert size, how
    return size


def sslab_with(env: dict, args: list[str], results: Path) -> subprocess.CompletedProcess:
    full = {**os.environ, **env, "SSLAB_RESULTS": str(results)}
    return subprocess.run([sys.executable, "-m", "sslab", *args], capture_output=True, text=True, cwd=REPO_ROOT,
                          env=full, timeout=1800)


def test_the_uml_kernel_uses_exactly_the_hosts_xstate_size(image, tmp_path, host_bytes):
    res = UMLTestbed(image).run(JobSpec(argv=PROBE_ARGV, timeout_s=60, seed=1), tmp_path / "job")
    assert res.ok, res.stderr()
    kernel_host, area = fp_sizes(res.stdout())
    assert kernel_host == host_bytes
    assert area >= host_bytes and area % 64 == 0 and area - host_bytes < 832


def test_a_kernel_moving_less_than_the_hosts_area_is_stopped_by_the_preflight(image, tmp_path, host_bytes):
    knob = {"SSLAB_UML_FP_SAVE": str(host_bytes - 8)}
    results = tmp_path / "results"
    res = sslab_with(knob, ["startup", "--scenario", str(SMOKE)], results)
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    err = res.stderr
    assert "the uml substrate (uml/inf-cpu) does not boot on this host; no cell or run was started" in err
    assert "userspace - ptrace set fp regs failed, errno = 14" in err and "Kernel panic" in err
    assert f"XSAVE area {host_bytes} bytes" in err and "SUBSTRATE=vm" in err
    assert not (results / "startup").exists()
    # A matrix stops the same way, with the harness's message (not Ansible's), before any cell.
    res = sslab_with(knob, ["matrix", "run", str(TINY)], results)
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    assert "does not boot on this host" in res.stderr and "FAILED!" not in res.stdout + res.stderr
    assert not (results / "tiny").exists()


def run_digest(results: Path, env: dict) -> tuple[dict, list, dict]:
    scenario = results / "seed-7.yaml"
    results.mkdir(parents=True)
    scenario.write_text(DETERMINISM.read_text().replace("seed: 1", "seed: 7"))
    res = sslab_with(env, ["startup", "--scenario", str(scenario)], results)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    run_dir = (results / "startup" / "latest").resolve()
    files = {str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted((run_dir / "job/out/runs").rglob("*")) if p.is_file() and p.name != "run.json"}
    runs = []
    for entry in read_runs_index(run_dir / "job/out/runs.json"):
        run = json.loads((run_dir / "job/out/runs" / entry["tag"] / "run.json").read_text())
        runs.append({k: v for k, v in run.items() if k not in ("started_unix", "seconds")})
    return files, runs, json.loads((run_dir / "meta.json").read_text())


def test_same_seed_same_bytes_with_a_larger_fp_area(tmp_path, image, host_bytes):
    other = larger_fp_area(host_bytes)
    own_files, own_runs, own_meta = run_digest(tmp_path / "own", {})
    amx_files, amx_runs, amx_meta = run_digest(tmp_path / "amx", {"SSLAB_UML_FP_AREA": str(other)})
    # The guests did differ in what the test changed ...
    assert own_meta["guest_kernel"]["uml_fp"]["fp_area_bytes"] < other
    assert amx_meta["guest_kernel"]["uml_fp"] == {"host_fp_bytes": host_bytes, "fp_area_bytes": other}
    assert own_meta["host"]["xstate_bytes"] == host_bytes
    # ... and in nothing they produced: flows, captures (timestamps included), traces.
    assert own_runs == amx_runs
    assert [k for k in own_files if k.endswith(".pcap")] and own_files == amx_files
