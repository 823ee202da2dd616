"""Host-side deadlines: a VM that stops making progress is killed, naming the phase.

QEMU is replaced by a stand-in program that prints the init's serial markers
up to a chosen point and then hangs, so every phase's deadline is exercised
without booting a kernel (the VM tests boot the real one).
"""

import stat
import time
from pathlib import Path

import pytest

from sslab.substrate.image import Image
from sslab.substrate.qemu import MARKER, VMConfig, VMError, VMHangError, boot_and_run

STAND_IN = """#!/bin/sh
for m in {markers}; do echo "SSLAB:$m uptime=1.00"; done
{after}
"""


def stand_in(tmp_path: Path, monkeypatch, markers: str, after: str = "sleep 600") -> None:
    exe = tmp_path / "fake-qemu"
    exe.write_text(STAND_IN.format(markers=markers, after=after))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SSLAB_QEMU", str(exe))


CFG = VMConfig(boot_timeout_s=1.5, shares_timeout_s=1.5, poweroff_timeout_s=1.5, job_grace_s=0.5)


@pytest.mark.parametrize("markers,phase", [
    ("", "boot"),
    ("userspace", "mount-shares"),
    ("'userspace' 'shares-mounted'", "job"),
    ("'userspace' 'shares-mounted' 'agent-exit'", "poweroff"),
])
def test_hang_is_killed_and_names_phase(tmp_path, monkeypatch, markers, phase):
    stand_in(tmp_path, monkeypatch, markers)
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    t0 = time.monotonic()
    with pytest.raises(VMHangError) as err:
        boot_and_run(Image(tmp_path), "tcg", job_dir, CFG, job_timeout_s=1.0)
    assert err.value.phase == phase
    assert f"phase '{phase}'" in str(err.value)
    assert time.monotonic() - t0 < 10
    assert (job_dir / "vm/serial.log").exists()


def test_early_qemu_exit_is_an_error_not_a_hang(tmp_path, monkeypatch):
    stand_in(tmp_path, monkeypatch, "userspace", after="echo 'qemu: boom'; exit 3")
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    with pytest.raises(VMError, match=r"QEMU exited \(3\) during phase 'mount-shares'") as err:
        boot_and_run(Image(tmp_path), "tcg", job_dir, CFG, job_timeout_s=1.0)
    assert not isinstance(err.value, VMHangError)


def test_clean_run_reports_timings(tmp_path, monkeypatch):
    stand_in(tmp_path, monkeypatch, "'userspace' 'shares-mounted' 'agent-exit status=0' 'poweroff'", after="exit 0")
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    rec = boot_and_run(Image(tmp_path), "tcg", job_dir, CFG, job_timeout_s=1.0)
    assert [m[0] for m in rec.markers] == ["userspace", "shares-mounted", "agent-exit", "poweroff", "eof"]
    assert rec.qemu_exit == 0 and rec.guest_uptime_at_userspace == 1.0


def test_marker_parsing_tolerates_console_noise():
    m = MARKER.search("\x1b[?7lSSLAB:agent-exit status=3 uptime=12.5\r")
    assert m["name"] == "agent-exit" and m["rest"].strip() == "status=3" and m["uptime"] == "12.5"
