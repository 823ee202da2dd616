"""The substrate table (sslab.substrate.kinds): what planning knows of each substrate before a boot."""

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
