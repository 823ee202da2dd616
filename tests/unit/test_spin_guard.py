"""The UML spin guard as the host sees it (sslab.substrate.spinguard): the charges a console log
records, whether an image's kernel has the guard, which charges fall in a run, and the report's line."""

from sslab.analysis.startup import spin_guard_line
from sslab.substrate.spinguard import PATCH, Charge, charges, during, guarded

CONSOLE = """\
SSLAB-PHASE topology uptime=2.001
spin guard: charged 4000000 ns to dockerd[812] at 1767225610500000000 (1)
some other line
spin guard: charged 4000000 ns to containerd-shim[901] at 1767225611000000000 (2)
SSLAB-PHASE run 000-a-r0 uptime=12.5
spin guard: charged 4000000 ns to sh -c x[77] at 1767225612000000000 (3)
"""


def test_a_console_log_gives_every_charge_in_order():
    found = charges(CONSOLE)
    assert found == [Charge(4_000_000, "dockerd", 812, 1767225610500000000, 1),
                     Charge(4_000_000, "containerd-shim", 901, 1767225611000000000, 2),
                     Charge(4_000_000, "sh -c x", 77, 1767225612000000000, 3)]
    assert charges("SSLAB-PHASE topology uptime=2.001\n") == []


def test_a_charge_falls_in_a_run_by_the_guests_wall_clock_ends_included():
    found = charges(CONSOLE)
    assert during(found, 1767225611.0, 1767225612.0) == 2      # both ends
    assert during(found, 1767225611.5, 1767225611.9) == 0
    assert during(found, 1767225600.0, 1767225610.4) == 0


def test_the_guard_is_known_by_the_images_kernel_patches():
    assert guarded({"uml": {"patches": {PATCH: "ab12", "0001-x.patch": "cd"}}})
    assert not guarded({"uml": {"patches": {"0001-x.patch": "cd"}}})
    assert not guarded({"kernel": {}}) and not guarded(None)


META = {"substrate": "uml", "image": {"uml": {"patches": {PATCH: "ab12"}}}}


def run(charges_in_traffic):
    return {"fidelity": {"base_rtt_ok": True, "rate_ok": True, "spin_guard_charges": charges_in_traffic}}


def test_a_job_without_the_guard_says_nothing_of_it():
    assert spin_guard_line({"substrate": "uml", "image": {"uml": {"patches": {}}}}, [], [run(0)]) is None
    assert spin_guard_line({"substrate": "native"}, [], [run(0)]) is None


def test_a_guard_that_never_charged_leaves_every_run_its_seeds():
    line = spin_guard_line(META, [], [run(0), run(0)])
    assert line == ("- spin guard (200 ms of host CPU in user mode): never charged a tick: every run is the one "
                    "its seed gives on any host")


def test_charges_are_counted_in_the_boot_and_in_the_runs_traffic():
    line = spin_guard_line(META, charges(CONSOLE), [run(0), run(1), run(0)])
    assert "charged 3 tick(s) in the boot (containerd-shim, dockerd, sh -c x), 1 of them during the traffic " \
           "of 1 of 3 runs" in line
