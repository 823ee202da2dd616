"""Boot the real testbed image and check what the harness promises of it."""

import json
import subprocess
import sys
import time

import pytest

from sslab.substrate.image import Recipe, sha256_file
from sslab.substrate.job import JobSpec
from sslab.paths import REPO_ROOT
from sslab.substrate.qemu import TestbedVM, VMConfig, VMError, VMHangError

pytestmark = pytest.mark.vm

VM_WARM_BOOT_TARGET_S = 15.0   # runners/benchmarks.py's target for a warm TCG boot


@pytest.fixture(scope="module")
def vm_check():
    """`python -m sslab vm-check` as `make vm-check` runs it: one JSON object on stdout."""
    res = subprocess.run([sys.executable, "-m", "sslab", "vm-check", "--substrate", "vm"], capture_output=True,
                         text=True, cwd=REPO_ROOT, timeout=900)
    lines = res.stdout.strip().splitlines()
    assert lines, f"vm-check printed nothing; stderr:\n{res.stderr[-3000:]}"
    report = json.loads(lines[-1])
    report["_returncode"] = res.returncode
    return report


def test_vm_check_link_selftest(vm_check):
    st = vm_check["link_selftest"]
    assert abs(st["min_rtt_ms"] - 100.0) <= 1.0, st
    # The link's rate, from UDP keeping netem's queue full (vmcheck.UDP_OVERLOAD).
    assert st["wire_rate_from"] == "udp" and st["udp_window_drops"] > 0, st
    assert abs(st["wire_rate_mbps"] - 50.0) <= 0.03 * 50.0, st
    # The TCP phase, over the seconds the wire's rate was read over: the payload the receiver got
    # (its server's per-second report) cannot exceed what the sender's frames carried (1448 of
    # every 1514 bytes) and falls short of it by what was sent twice.  The window's two ends are
    # read on two clocks (the server's seconds, the sender's device counter), a few tenths of a
    # second apart under TCG: 3 % either way.  The whole transfer's average is not compared: it
    # holds slow start and the start's stalls (CI, 6 Dec 2026: 40.2 against the window's 47.6).
    payload_on_wire = st["tcp_wire_rate_mbps"] * 1448 / 1514
    assert 0.85 * payload_on_wire < st["iperf3_goodput_steady_mbps"] <= 1.03 * payload_on_wire, st
    assert vm_check["_returncode"] == 0 and all(vm_check["checks"].values())


def test_vm_check_substrate_facts(vm_check, image):
    assert vm_check["substrate"] == "vm" and vm_check["clock"] in ("qemu/mttcg", "kvm")
    assert vm_check["accelerator"] in ("kvm", "tcg")
    assert vm_check["qdiscs"] == {"netem": True, "fq": True, "tbf": True, "htb": True}
    assert vm_check["kernel_release"] == image.manifest()["kernel"]["release"]
    assert "cubic" in vm_check["tcp_available_congestion_control"]
    module = image.manifest()["module"]
    if module["present"]:
        assert all(v is True for v in vm_check["module"]["loaded"].values()), vm_check["module"]
    # Warm start: the image is cached by now.  A wall-clock bound on a shared machine is a benchmark,
    # not a test (`make bench BENCH=vmboot` holds the 15 s target: 11.3-13.2 s on an idle 2-core Xeon,
    # 15.07 s once in CI): here only a boot twice that slow fails, e.g. one that hung and was retried.
    assert vm_check["seconds_to_userspace"] < 2 * VM_WARM_BOOT_TARGET_S
    assert vm_check["seconds_total"] > vm_check["seconds_to_userspace"]


def test_image_manifest_matches_the_image(image):
    m = image.manifest()
    recipe = Recipe.load()
    assert image.root.name == m["image_hash"] == m["recipe_hash"]
    # The pinned kernel, or (when the mirror no longer offers it) what the build took instead, said so.
    pinned = m["kernel"].get("pinned", {"package": m["kernel"]["package"], "version": m["kernel"]["version"]})
    assert pinned == {"package": recipe.kernel.image_package, "version": recipe.kernel.version}
    assert ("warning" in m["kernel"]) == (m["kernel"]["version"] != recipe.kernel.version)
    assert m["packages"][m["kernel"]["package"]] == m["kernel"]["version"]
    for pkg in recipe.packages:
        assert pkg in m["packages"], f"{pkg} missing from the image"
    assert m["files"]["vmlinuz"] == sha256_file(image.kernel)
    assert m["files"]["initrd.img"] == sha256_file(image.initrd)
    if m["module"]["present"]:
        assert all(len(v["sha256"]) == 64 for v in m["module"]["modules"].values())


@pytest.fixture(scope="module")
def vm(image):
    return TestbedVM(image, VMConfig())


def test_job_exit_status_and_output_come_back(vm, tmp_path):
    res = vm.run(JobSpec(argv=["sh", "-c", "uname -r; echo err >&2; exit 7"], timeout_s=30), tmp_path / "j")
    assert res.exit_code == 7 and not res.timed_out
    assert res.stdout().strip() == vm.image.manifest()["kernel"]["release"]
    assert res.stderr().strip() == "err"
    assert res.accelerator == vm.accelerator


def test_job_past_its_timeout_is_killed_and_vm_powers_off(vm, tmp_path):
    t0 = time.monotonic()
    res = vm.run(JobSpec(argv=["sleep", "600"], timeout_s=3), tmp_path / "j")
    assert res.timed_out and "timeout of 3 s" in res.status["error"]
    assert time.monotonic() - t0 < 60


def test_hung_vm_is_killed_naming_the_phase(image, tmp_path):
    # The job freezes the agent that would report its end (SIGSTOP to its
    # parent), so the guest never finishes the job phase: only the host's
    # deadline can end the run.
    vm = TestbedVM(image, VMConfig(job_grace_s=5))
    t0 = time.monotonic()
    with pytest.raises(VMHangError) as err:
        vm.run(JobSpec(argv=["sh", "-c", "kill -STOP $PPID; sleep 600"], timeout_s=5), tmp_path / "j")
    assert err.value.phase == "job"
    assert 10 <= time.monotonic() - t0 < 60
    assert "SSLAB:agent-exit" not in err.value.serial_log.read_text()


def test_kernel_panic_ends_the_run_at_once(image, tmp_path):
    # A panic (as a soft lockup now causes) reboots, and QEMU exits: the run
    # fails at once, naming the phase, with the console log.
    vm = TestbedVM(image, VMConfig())
    t0 = time.monotonic()
    with pytest.raises(VMError, match="during phase 'job'") as err:
        vm.run(JobSpec(argv=["sh", "-c", "echo c > /proc/sysrq-trigger"], timeout_s=300), tmp_path / "j")
    assert not isinstance(err.value, VMHangError)
    assert time.monotonic() - t0 < 60
    assert "Kernel panic" in (tmp_path / "j/vm/serial.log").read_text()
