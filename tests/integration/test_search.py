"""SEARCH (cubic_search3, cubic_search4) on the real UML guest, on E1's path (50 Mbit/s, 100 ms): the
module's checks recomputed from what it recorded, the exit it takes, and the window it leaves with
against the path's BDP (413 frames)."""

import pytest

from sslab.paths import REPO_ROOT

from .helpers import startup_runs

pytestmark = pytest.mark.vm
MSS = 1448
#: 50 Mbit/s of 1514-byte frames over 100 ms: the path's BDP, frames; its payload per second, packets.
BDP_PKTS = 50e6 / 8 / 1514 * 0.1
PKTS_PER_S = 50e6 / 8 / 1514
BUFFER_4BDP = 1652
THRESH = {"3.0": 0.35, "4.0": 0.26}
SS_EXIT_SEARCH, SS_EXIT_LOSS_EVENT = 7, "loss"


@pytest.fixture(scope="module")
def deep(tmp_path_factory, image):
    return {run["flows"][0]["version"]: run for _, run in
            startup_runs(REPO_ROOT / "tests/data/search.yaml", tmp_path_factory.mktemp("results"))}


@pytest.fixture(scope="module")
def e1(tmp_path_factory, image):
    return {run["flows"][0]["version"]: run for _, run in
            startup_runs(REPO_ROOT / "tests/data/search-1bdp.yaml", tmp_path_factory.mktemp("results"))}


def events(run: dict, *kinds: str) -> list[dict]:
    return [{k: int(v) if k in ("a", "b", "c") else v for k, v in e.items()}
            for e in run["flows"][0]["events"] if e["type"] in kinds]


@pytest.mark.parametrize("version", ["3.0", "4.0"])
def test_each_check_decides_by_its_recorded_numbers(deep, version):
    """Every check the module recorded (bin, bytes acked in the window, bytes expected) decides as
    (expected - acked) / expected >= THRESH says: it exits at the first check that passes, none before."""
    run = deep[version]
    checks = events(run, "search")
    assert len(checks) >= 10
    norms = [(c["c"] - c["b"]) / c["c"] for c in checks]
    first = next(i for i, n in enumerate(norms) if n >= THRESH[version])
    assert first == len(checks) - 1, norms  # the last check is the exit's: the checks stop there
    assert [c["a"] for c in checks] == sorted(c["a"] for c in checks)


def test_30_exits_by_its_own_test_and_rolls_back_two_initial_rtts_of_delivery(deep):
    run = deep["3.0"]
    first = events(run, "exit", "loss")[0]
    assert first["type"] == "exit" and first["a"] == SS_EXIT_SEARCH
    # It decided past the chokepoint (the window above the BDP) ...
    assert first["b"] > BDP_PKTS
    # ... and rolled back what was acked in the last 2 x 100 / 35 = 5 bins (175 ms) at the path's rate.
    assert first["b"] - first["c"] == pytest.approx(0.175 * PKTS_PER_S, rel=0.05)
    assert run["flows"][0]["slow_start"]["exit_cwnd"] == first["b"]


def test_40_drains_towards_the_empty_paths_bdp(deep):
    run = deep["4.0"]
    assert events(run, "exit", "loss", "estimate")[0]["type"] == "estimate"
    [target] = events(run, "estimate")
    # The target: what was acked over the last initial RTT, at the path's rate: its BDP.
    assert target["c"] == pytest.approx(BDP_PKTS, rel=0.05)
    assert 100_000 <= target["b"] <= 100_500
    # The drain took the window down from where it decided before anything else ended it.
    decided = run["flows"][0]["slow_start"]["exit_cwnd"]
    assert decided > BDP_PKTS
    later = events(run, "exit", "loss")
    assert later and later[0]["a" if later[0]["type"] == "loss" else "c"] < decided


@pytest.mark.parametrize("version", ["3.0", "4.0"])
def test_on_e1s_one_bdp_buffer_the_loss_comes_first(e1, version):
    """A 1 BDP buffer overflows about a round after the chokepoint; SEARCH detects about two rounds
    after it: the loss ends slow start, and no check runs in the recovery that follows."""
    run = e1[version]
    ends = events(run, "exit", "loss", "estimate")
    assert ends[0]["type"] == "loss"
    first_loss_us = int(ends[0]["time_us"])
    assert all(int(c["time_us"]) <= first_loss_us for c in events(run, "search"))
    assert all((c["c"] - c["b"]) / c["c"] < THRESH[version] for c in events(run, "search"))
