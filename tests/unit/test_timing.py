"""Expected times from what this host measured (sslab.experiment.timing)."""

from types import SimpleNamespace

import pytest

from sslab import paths
from sslab.experiment import timing
from sslab.experiment.timing import estimate_seconds, guest_seconds
from sslab.scenario import load_scenario, to_plan

E1 = paths.REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SSLAB_CACHE", str(tmp_path))
    return tmp_path


def test_nothing_measured_is_the_generous_guess_and_says_so(cache):
    s = to_plan(load_scenario(E1))
    seconds, source = timing.expected_seconds(s, "uml")
    assert seconds == estimate_seconds(s, "uml") and source == "a generous guess: nothing measured on this host yet"


def test_the_last_runs_ratio_scales_a_scenarios_estimate(cache):
    s = to_plan(load_scenario(E1))
    g = guest_seconds(s)
    # Two boots of this scenario took 0.2 and 0.1 wall seconds per estimated guest second: the mean, 0.15.
    timing.record("uml", [s], 0.2 * g)
    timing.record("uml", [s], 0.1 * g)
    seconds, source = timing.expected_seconds(s, "uml")
    assert seconds == pytest.approx(0.15 * g) and source.startswith("from this host's last runs, 20")
    # A shared boot counts all its scenarios' estimates; another substrate has its own record.
    timing.record("uml", [s, s], 0.3 * 2 * g)
    assert timing.measured_ratio("uml")[0] == pytest.approx((0.2 + 0.1 + 0.3) / 3)
    assert timing.measured_ratio("vm") is None
    # Only the newest KEEP runs count.
    for _ in range(timing.KEEP):
        timing.record("uml", [s], 0.5 * g)
    assert timing.measured_ratio("uml")[0] == pytest.approx(0.5)


def test_a_damaged_record_is_as_good_as_none(cache):
    (cache / "timing").mkdir()
    (cache / "timing" / "uml.json").write_text("{not json")
    assert timing.measured_ratio("uml") is None
    timing.record("uml", [to_plan(load_scenario(E1))], 10.0)   # and the next run writes a good one
    assert timing.measured_ratio("uml") is not None


def test_a_plans_guess_hand_worked():
    """One run, 5 MB at 50 Mbit/s from 0 s (0.8 s, 1.04 s with 30 % to spare) beside a 2 s flow from 1 s
    (3 s): the checks' 30 s, the longer flow's 3 s and 3 s a run."""
    plan = SimpleNamespace(bottleneck=SimpleNamespace(rate_mbit=50.0), capture=SimpleNamespace(traces=True),
                           runs=[SimpleNamespace(flows=[SimpleNamespace(start=0.0, size=5_000_000, duration=None),
                                                        SimpleNamespace(start=1.0, size=None, duration=2.0)])])
    assert guest_seconds(plan) == pytest.approx(30 + 3 + 3)
    # A real clock: 60 s, the longest flow, 9 s a run, and 0.25 s per MB of traces: 5 MB, and the timed
    # flow at its share of the rate (2 s x 50 Mbit/s / 8 / 2 flows = 6.25 MB).
    assert estimate_seconds(plan, "vm") == pytest.approx(60 + 3 + 9 + 0.25 * 11.25)
