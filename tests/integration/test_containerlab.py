"""The containerlab backend on the real UML guest: deploy, traffic, destroy; and an interrupted run
leaves no container, namespace or veth behind."""

import json
import os

import pytest

from sslab.experiment.plan import plan_for
from sslab.experiment.run import with_backend
from sslab.paths import REPO_ROOT
from sslab.records import read_runs_index
from sslab.scenario import parse_scenario
from sslab.substrate.containerlab import containerlab_for_job
from sslab.substrate.job import JobSpec
from sslab.substrate.uml import UMLTestbed

from .helpers import sslab

#: Under UML's inf-cpu virtual time the lab's deploy often never ends: a guest process (Docker's or
#: containerlab's) holds a host CPU at full load and the guest's clock stands still (4 of 5 runs on
#: 25 Nov 2026, with and without our patch 0005, alone and beside other work; kernel/README.md).
#: Each such run costs the job's 30-minute timeout, so `make test` leaves these out until that is
#: fixed; SSLAB_TEST_CONTAINERLAB=1 runs them.
pytestmark = [pytest.mark.vm,
              pytest.mark.skipif(not os.environ.get("SSLAB_TEST_CONTAINERLAB"),
                                 reason="containerlab's deploy livelocks under UML inf-cpu in most runs "
                                        "(known, kernel/README.md); SSLAB_TEST_CONTAINERLAB=1 runs it")]
SMOKE = REPO_ROOT / "tests/data/e1-smoke.yaml"


def test_deploy_traffic_destroy(image, tmp_path):
    # The image does not carry containerlab: only a containerlab run builds it, and takes it along.
    assert "containerlab" not in image.manifest()
    assert not (image.rootfs / "usr/local/bin/containerlab").exists()
    res = sslab(["startup", "--scenario", str(SMOKE), "--backend", "containerlab"], tmp_path, timeout=1800)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (tmp_path / "startup" / "latest").resolve()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["containerlab"]["version"] == "v0.60.0" and len(meta["containerlab"]["binary_sha256"]) == 64
    assert not (run_dir / "job/tools").exists()   # the binary went with the job, not into the results
    fidelity = json.loads((run_dir / "job/out/fidelity.json").read_text())
    assert fidelity["backend"] == "containerlab"
    assert fidelity["backend_versions"]["containerlab"] == "0.60.0"
    assert fidelity["backend_versions"]["docker"].startswith("20.10")
    assert fidelity["rtt"]["ok"] and fidelity["rate"]["ok"], fidelity
    runs = read_runs_index(run_dir / "job/out/runs.json")
    assert len(runs) == 8
    for entry in runs:
        run = json.loads((run_dir / "job/out/runs" / entry["tag"] / "run.json").read_text())
        assert run["flows"][0]["bytes_received"] == run["flows"][0]["size"]
        assert run["fidelity"]["base_rtt_ok"]
    # the same scenario on plain namespaces delivers the same first flow to the microsecond or so
    # is not asserted here: `make startup BACKEND=...` compares backends with repetitions.


def test_an_interrupted_run_leaves_nothing_behind(image, tmp_path):
    s = with_backend(parse_scenario({
        "name": "clab-interrupt", "topology": {"kind": "dumbbell", "pairs": 2},
        "bottleneck": {"rate": "50mbit", "buffer": {"packets": 200}},
        "pairs": [{"rtt": "50ms"}, {"rtt": "50ms"}],
        "cases": [{"name": "long", "flows": [{"pair": 1, "cc": "cubic", "duration": "60s"},
                                             {"pair": 2, "cc": "cubic_suss", "duration": "60s"}]}]}),
        "containerlab")
    plan = plan_for(s, "uml", "uml/inf-cpu")
    binary, _ = containerlab_for_job()
    res = UMLTestbed(image).run(JobSpec(argv=["python3", "-m", "sslab.guest.clab", "interrupt-check", "3"],
                                        timeout_s=1800, files={"plan.json": json.dumps(plan)},
                                        tools={"containerlab": str(binary)}), tmp_path / "job")
    assert res.ok, res.stderr()[-3000:]
    out = json.loads(res.stdout().strip().splitlines()[-1])
    assert out["interrupted_during_traffic"], out
    assert out["returncode"] != 0          # it was interrupted, not finished
    assert out["leftovers"] == {"containers": [], "namespaces": [], "veths": [], "processes": []}, out
