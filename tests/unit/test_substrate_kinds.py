"""The substrate table (sslab.substrate.kinds): what planning knows of each substrate before a boot."""

import json
from pathlib import Path

import pytest

from sslab.matrix.orchestrate import check_boot_share, check_jobs
from sslab.matrix.spec import MatrixError
from sslab.substrate import SUBSTRATES
from sslab.substrate.kinds import KINDS, kind_of


def test_every_substrate_has_a_row_and_its_clock():
    assert SUBSTRATES == ("uml", "vm", "native") == tuple(KINDS)
    assert kind_of("uml").clock() == "uml/inf-cpu" and kind_of("native").clock("virtual") == "native"
    assert kind_of("vm").clock("real") == "qemu/mttcg" and kind_of("vm").clock("virtual") == "qemu/icount"
    with pytest.raises(ValueError, match="unknown substrate 'kvm'"):
        kind_of("kvm")


def test_only_uml_runs_side_by_side_and_shares_boots_by_default():
    assert check_jobs("uml", 1) == 1 and check_boot_share("uml", None) == 10
    for name in ("vm", "native"):
        assert check_jobs(name, None) == 1 and check_boot_share(name, None) == 1
        with pytest.raises(MatrixError, match="JOBS>1 needs SUBSTRATE=uml"):
            check_jobs(name, 2)
    assert check_boot_share("vm", 3) == 3


def test_the_congestion_controls_offered_come_from_the_substrates_kernel():
    manifest = {"tcp_congestion_controls": ["cubic", "reno"], "uml": {"tcp_congestion_controls": ["cubic", "bbr"]}}
    assert kind_of("uml").offered_ccas(manifest) == ["cubic", "bbr"]
    assert kind_of("vm").offered_ccas(manifest) == ["cubic", "reno"]
    assert kind_of("uml").offered_ccas({"tcp_congestion_controls": ["cubic"]}) is None   # an old image
    assert kind_of("uml").topology_backend == "netns" and kind_of("vm").topology_backend == "mininet"



def test_virtual_time_decides_the_estimate_the_host_model_and_the_container():
    from sslab import paths
    from sslab.experiment.timing import UML_BOOT_S, UML_WALL_PER_GUEST, estimate_seconds, guest_seconds
    from sslab.matrix.orchestrate import run_matrix
    from sslab.matrix.spec import load_matrix
    from sslab.scenario import load_scenario, to_plan
    s = to_plan(load_scenario(paths.REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml"))
    # Under virtual time the wall follows the guest seconds simulated; on a real clock the flows' own length.
    assert estimate_seconds(s, "uml") == pytest.approx(UML_BOOT_S + UML_WALL_PER_GUEST * guest_seconds(s))
    assert estimate_seconds(s, "vm") == estimate_seconds(s, "native") > 60.0
    assert [k.name for k in KINDS.values() if k.virtual_time] == ["uml"]
    assert [k.name for k in KINDS.values() if k.in_container] == ["uml"]
    assert [k.name for k in KINDS.values() if not k.has_image] == ["native"]
    with pytest.raises(MatrixError, match="CONTAINER= runs cells on the container's UML substrate"):
        run_matrix(load_matrix("smoke"), {}, 1, Path("unused"), substrate="vm", container="sslab:latest")


def test_a_testbed_says_what_a_check_records_of_it(tmp_path):
    """The UML testbed's facts: its image with the UML kernel, and the boot's seed, core and guest time."""
    from sslab.substrate.image import Image
    from sslab.substrate.job import JobResult
    from sslab.substrate.uml import UMLTestbed
    (tmp_path / "manifest.json").write_text(json.dumps({
        "image_hash": "ab12", "kernel": {"package": "linux-image-6.1.0-56-amd64", "version": "6.1.192-2"},
        "uml": {"release": "6.1.192-sslab-uml", "source": {"package": "linux-source-6.1"}, "config_sha256": "cf"}}))
    res = JobResult(job_dir=tmp_path, exit_code=0, timed_out=False, substrate="uml", seed=7, cpu=1, guest_seconds=2.5)
    assert UMLTestbed(Image(tmp_path)).facts(res) == {
        "image": {"hash": "ab12", "kernel_package": "linux-image-6.1.0-56-amd64", "kernel_version": "6.1.192-2",
                  "uml": {"release": "6.1.192-sslab-uml", "source": {"package": "linux-source-6.1"},
                          "config_sha256": "cf", "warning": None}},
        "seed": 7, "cpu": 1, "guest_seconds": 2.5}
