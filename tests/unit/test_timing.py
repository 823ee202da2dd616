"""Expected times from what this host measured (sslab.experiment.timing)."""

import pytest

from sslab import paths
from sslab.experiment import timing
from sslab.experiment.timing import estimate_seconds, guest_seconds
from sslab.scenario import load_scenario

E1 = paths.REPO_ROOT / "experiments" / "scenarios" / "e1-startup.yaml"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SSLAB_CACHE", str(tmp_path))
    return tmp_path


def test_nothing_measured_is_the_generous_guess_and_says_so(cache):
    s = load_scenario(E1)
    seconds, source = timing.expected_seconds(s, "uml")
    assert seconds == estimate_seconds(s, "uml") and source == "a generous guess: nothing measured on this host yet"


def test_the_last_runs_ratio_scales_a_scenarios_estimate(cache):
    s = load_scenario(E1)
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
    timing.record("uml", [load_scenario(E1)], 10.0)   # and the next run writes a good one
    assert timing.measured_ratio("uml") is not None
