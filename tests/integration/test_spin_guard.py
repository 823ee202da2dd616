"""The UML kernel's spin guard (images/uml/patches/0006-*): under inf-cpu a task that spins in user
mode no longer stops the guest's clock, each charge is on the console, and a job in which nothing spins
is charged nothing.

Without the guard the first job below never ends: `sh` spins without a system call, so the guest's
clock stands still and `timeout`'s 20 ms never pass (the job would run into its wall-clock deadline).
With it, every 200 ms of host CPU the spin is charged one tick (4 ms) of guest time, so the 20 ms pass
after five charges, and `timeout` ends the spin.
"""

import pytest

from sslab.substrate.job import JobSpec
from sslab.substrate.spinguard import console_charges
from sslab.substrate.uml import UMLTestbed

pytestmark = pytest.mark.vm


def test_a_user_mode_spin_is_charged_ticks_until_a_timer_ends_it(image, tmp_path):
    # a forked shell spinning on a builtin: no system call, no fault, no signal while it spins
    script = "timeout 0.02 sh -c 'while :; do :; done'; echo rc=$?"
    res = UMLTestbed(image).run(JobSpec(argv=["sh", "-c", script], timeout_s=120, seed=1), tmp_path / "job")
    assert res.ok, res.stderr()[-2000:]
    assert "rc=124" in res.stdout()           # timeout(1) ended it: 20 ms of guest time passed
    found = console_charges(tmp_path / "job")
    # 20 ms of guest time in 4 ms ticks, all charged to the spinning shell, a tick apart
    assert 5 <= len(found) <= 6, found
    assert {c.task for c in found} == {"sh"} and {c.tick_ns for c in found} == {4_000_000}
    assert [c.count for c in found] == list(range(1, len(found) + 1))
    assert all(b.at_ns - a.at_ns >= 4_000_000 for a, b in zip(found, found[1:])), found


def test_a_job_that_does_not_spin_is_charged_nothing(image, tmp_path):
    # timers, forks and file work, as a job's own chores
    script = "sleep 0.5; ls -R /usr/lib/python3 > /dev/null; sleep 0.1; echo done"
    res = UMLTestbed(image).run(JobSpec(argv=["sh", "-c", script], timeout_s=120, seed=1), tmp_path / "job")
    assert res.ok and "done" in res.stdout(), res.stderr()[-2000:]
    assert console_charges(tmp_path / "job") == []
