"""A varying link against its model: rate delivered against the trace, bursts, queue depth.

Read from what the guest recorded per run (sslab.guest.linkreplay's rows and
the capture at the client), on the host:

  rate      in each bin that began with at least as many frames queued as
            the trace lets through in it (a busy bin: the queue cannot run
            dry before the bin ends, whatever arrives) the link must send
            exactly what the trace allows; summed over the busy bins, the
            ratio delivered / allowed must be within the link's
            rate_tolerance of 1, or the run is flagged.  Other bins say
            nothing about the link: a queue that held frames at both ends of
            a bin may still have run dry in between (seen: 15 frames at the
            start of a 36-frame bin, 18 sent).
  bursts    data segments that reach the client less than BURST_GAP_S apart
            belong to one burst (under virtual time a burst's frames arrive
            at one instant; on a real clock a few microseconds apart, far
            below a frame's time at any rate studied here).
  queue     frames queued at the bottleneck at each bin boundary.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from ..scenario import FRAME_BYTES
from .pcap import tcp_segments

#: Frames closer than this at the client are one burst: a 1514-byte frame takes 20 us at 600 Mbit/s.
BURST_GAP_S = 20e-6


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def replay_fidelity(replay: dict) -> dict:
    """The link's delivery against the trace over the run's busy bins (see the module's text)."""
    rows = replay.get("rows") or []
    tol = replay.get("rate_tolerance") or 0.02
    # The queue is counted in full frames of the run's MTU; a record that does not say is of 1514-byte frames.
    frame = replay.get("frame_bytes") or FRAME_BYTES
    delivered = allowed = 0.0
    errors_frames: list[float] = []
    for (t0, rate, sent0, q0, _), (t1, _, sent1, _, _) in zip(rows, rows[1:]):
        a = rate * 1e6 / 8 * (t1 - t0)
        if t1 > t0 and q0 * frame >= a + frame:
            d = sent1 - sent0
            delivered += d
            allowed += a
            errors_frames.append((d - a) / frame)
    queued = [r[3] for r in rows]
    out = {
        "bins": max(len(rows) - 1, 0), "busy_bins": len(errors_frames),
        "delivered_over_allowed": round(delivered / allowed, 5) if allowed else None,
        "bin_error_frames_p50": round(_quantile(errors_frames, 0.5), 2) if errors_frames else None,
        "bin_error_frames_p95_abs": round(_quantile([abs(e) for e in errors_frames], 0.95), 2)
        if errors_frames else None,
        "queue_max_pkts": max(queued) if queued else None,
        "queue_mean_pkts": round(statistics.fmean(queued), 1) if queued else None,
        "rate_tolerance": tol, "replay_error": replay.get("error"),
    }
    out["ok"] = (replay.get("error") is None and
                 (allowed == 0 or abs(delivered / allowed - 1) <= tol))
    return out


def rate_series(replay: dict) -> list[tuple[float, float, float, int]]:
    """(bin start s, trace Mbit/s, delivered Mbit/s, queued frames) per bin, for plots."""
    rows = replay.get("rows") or []
    return [(t0, rate, (s1 - s0) * 8 / (t1 - t0) / 1e6 if t1 > t0 else 0.0, q0)
            for (t0, rate, s0, q0, _), (t1, _, s1, _, _) in zip(rows, rows[1:])]


def arrival_bursts(path: Path, server_ports: set[int] | None = None, gap_s: float = BURST_GAP_S) -> list[int]:
    """Sizes (segments) of the data bursts that reached the client, in order."""
    sizes: list[int] = []
    last = None
    for ts, (sport, _dport, _seq, _flags), payload in tcp_segments(path):
        if payload <= 0 or (server_ports is not None and sport not in server_ports):
            continue
        if last is not None and ts - last < gap_s:
            sizes[-1] += 1
        else:
            sizes.append(1)
        last = ts
    return sizes


def burst_summary(sizes: list[int]) -> dict:
    if not sizes:
        return {"bursts": 0}
    return {"bursts": len(sizes), "segments": sum(sizes), "mean": round(statistics.fmean(sizes), 2),
            "p50": _quantile(sizes, 0.5), "p90": _quantile(sizes, 0.9), "max": max(sizes),
            "share_in_bursts_of_2_plus": round(sum(s for s in sizes if s > 1) / sum(sizes), 3)}
