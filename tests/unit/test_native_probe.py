"""Native mode refuses a host that lacks what experiments need."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sslab.substrate.native import HostCapabilities, NativeHost, NativeUnavailable, module_loading_status, probe_host
from sslab.paths import REPO_ROOT


def test_module_loading_status_reads_proc(tmp_path: Path):
    ok, why = module_loading_status(tmp_path)
    assert not ok and "/proc/modules does not exist" in why
    (tmp_path / "modules").write_text("")
    (tmp_path / "sys/kernel").mkdir(parents=True)
    (tmp_path / "sys/kernel/modules_disabled").write_text("1\n")
    ok, why = module_loading_status(tmp_path)
    assert not ok and "modules_disabled" in why
    (tmp_path / "sys/kernel/modules_disabled").write_text("0\n")
    assert module_loading_status(tmp_path) == (True, "ok")


def test_missing_lists_every_gap():
    caps = HostCapabilities(root=True, tools={"iperf3": False, "ip": True},
                            qdiscs={"netem": False, "fq": True}, module_loading=False,
                            module_loading_reason="no /proc/modules")
    missing = caps.missing()
    assert len(missing) == 3
    assert any("iperf3" in m for m in missing) and any("sch_netem" in m for m in missing)
    assert any("module loading" in m for m in missing)


def host_network_state() -> str:
    links = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True).stdout
    qdiscs = subprocess.run(["tc", "-j", "qdisc", "show"], capture_output=True, text=True).stdout
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    # Traffic counters change by themselves; compare the configuration only.
    for link in (parsed := json.loads(links)):
        link.pop("stats64", None)
    return json.dumps(parsed, sort_keys=True) + qdiscs + netns


def test_native_check_on_this_host_and_host_network_untouched():
    before = host_network_state()
    caps = probe_host()
    assert host_network_state() == before, "the probe changed the host's network configuration"
    missing = caps.missing()
    if not missing:
        pytest.skip("this host can run experiments natively")
    with pytest.raises(NativeUnavailable) as err:
        NativeHost()
    res = subprocess.run([sys.executable, "-m", "sslab", "vm-check", "--substrate", "native"],
                         capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    for item in missing:
        assert item in res.stderr
    assert "VM substrate" in res.stderr
    assert str(err.value) in res.stderr
    assert host_network_state() == before
