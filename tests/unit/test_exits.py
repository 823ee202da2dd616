"""Where a flow left slow start against its path's chokepoint (sslab.analysis.exits), on hand-made flows."""

import pytest

from sslab.analysis import exits


def flow(exit_cwnd, *types):
    return {"slow_start": {"exit_cwnd": exit_cwnd}, "events": [{"type": "new_round"}] + [{"type": t} for t in types]}


def test_the_bdp_in_full_frames():
    # E1's path: 50 Mbit/s x 100 ms = 625,000 bytes over 1514-byte frames = 412.8 (its 1 BDP buffer: 413).
    assert exits.bdp_frames(50, 100, 1500) == pytest.approx(412.814, abs=1e-3)
    # GEO's preset: 50 Mbit/s x 600 ms: 2476.9 frames.
    assert exits.bdp_frames(50, 600, 1500) == pytest.approx(2476.88, abs=1e-2)


def test_each_class_by_the_rule():
    bdp, buffer = 412.8, 413
    # The start's own test first, below the BDP: early; at or above it and within BDP + buffer: near.
    assert exits.exit_class(flow(300, "exit", "loss"), bdp, buffer) == "early"
    assert exits.exit_class(flow(413, "exit"), bdp, buffer) == "near"
    assert exits.exit_class(flow(412, "exit"), bdp, buffer) == "early"
    assert exits.exit_class(flow(825, "exit", "loss"), bdp, buffer) == "near"
    # Its own test with a window over BDP + buffer (825.8): that flight overflows, the loss seen later.
    assert exits.exit_class(flow(826, "exit", "loss"), bdp, buffer) == "after with loss"
    # A loss before any exit event (or no exit event at all): after, with loss, whatever the window.
    assert exits.exit_class(flow(1651, "loss", "exit"), bdp, buffer) == "after with loss"
    assert exits.exit_class(flow(200, "loss"), bdp, buffer) == "after with loss"


def test_no_class_without_the_modules_events_or_an_exit():
    # Still in slow start at the end (no exit window), the kernel's own congestion control (no events),
    # or no exit nor loss among the events.
    assert exits.exit_class({"slow_start": None, "events": [{"type": "exit"}]}, 400, 400) is None
    assert exits.exit_class({"slow_start": {"exit_cwnd": 500}, "events": []}, 400, 400) is None
    assert exits.exit_class(flow(500), 400, 400) is None
