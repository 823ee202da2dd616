"""Where a flow left slow start against its path's chokepoint: early, near it, or after it with loss.

SEARCH's question (its draft: exit "after capacity has been reached but before packet loss"), asked of
every start we run, by this rule (docs/experiments.md, E10, says how it was fixed):

  after, with loss  slow start ended by a loss (the module's first `loss` event, the stack asking for
                    a reduction, came before its first `exit` event, or there was none), or by the
                    start's own test with a window above what the path holds, the BDP and the buffer:
                    that flight overflows the buffer whatever the exit does, its drops seen later;
  early             ended by the start's own test with the window it decided at (the largest cwnd under
                    an infinite ssthresh) below the path's BDP: the chokepoint was not yet full;
  near              ended by its own test at or above the BDP and at most the BDP and the buffer.

The BDP is the bottleneck's rate (its mean, for a trace) times the pair's base RTT, in full frames (a
segment of cwnd is a frame on the wire).  A flow that never left slow start (too short), and a flow
of a congestion control without our module's events (the kernel's own), has no class (None).
"""

from __future__ import annotations

from ..scenario.units import frame_bytes

#: The classes, in the order a report lists them, each with the run record's field of its share.
CLASSES = {"early": "exit_early", "near": "exit_near", "after with loss": "exit_after_loss"}


def bdp_frames(rate_mbit: float, rtt_ms: float, mtu: int) -> float:
    """The path's bandwidth-delay product in full frames: @rate_mbit x @rtt_ms over a frame of @mtu."""
    return rate_mbit * 1e6 / 8 * rtt_ms / 1e3 / frame_bytes(mtu)


def exit_class(flow: dict, bdp: float, buffer: float) -> str | None:
    """@flow's class (a run record's flow: its `events` and `slow_start`) on a path of a BDP of @bdp
    frames and a buffer of @buffer."""
    events = flow.get("events")
    slow_start = flow.get("slow_start")
    if not events or not slow_start or slow_start.get("exit_cwnd") is None:
        return None
    ends = [e for e in events if e.get("type") in ("exit", "loss")]
    if not ends:
        return None
    window = slow_start["exit_cwnd"]
    if ends[0]["type"] == "loss" or window > bdp + buffer:
        return "after with loss"
    return "early" if window < bdp else "near"
