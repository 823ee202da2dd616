"""Per-ACK time series of a flow from its archived kernel trace (tcp:tcp_probe, sslab:sslab_ack)."""

from __future__ import annotations

import gzip
from pathlib import Path

from ..guest.ftrace import parse as parse_trace

TRACE_MSS = 1448  # payload of a full frame with TCP timestamps


def trace_series(path: Path, port: int) -> dict:
    """Per-ACK time series of one flow.

    cwnd and delivered come from tcp:tcp_probe (any congestion control).
    Packets in flight come from our module's sslab_ack (the kernel's
    packets_in_flight: outstanding less SACKed and lost, plus retransmitted)
    when the flow used one of our controls; otherwise `in_flight_source` is
    "outstanding" and the series is snd_nxt - snd_una, which in recovery
    also counts SACKed and lost packets.
    """
    with gzip.open(path, "rt") as f:
        records = parse_trace(f.read())
    probes = [r for r in records if r.event == "tcp_probe" and r.fields.get("src", "").endswith(f":{port}")]
    acks = [r for r in records if r.event == "sslab_ack" and r.fields.get("sport") == str(port)]
    out = {"t": [], "cwnd": [], "delivered_mb": [], "in_flight_t": [], "in_flight": [],
           "in_flight_source": "sslab_ack" if acks else "outstanding"}
    if not probes:
        return out
    t0, una0 = probes[0].ts, probes[0].int("snd_una")
    for r in probes:
        out["t"].append(r.ts - t0)
        out["cwnd"].append(r.int("snd_cwnd"))
        out["delivered_mb"].append(((r.int("snd_una") - una0) & 0xFFFFFFFF) / 1e6)
    if acks:
        out["in_flight_t"] = [r.ts - t0 for r in acks]
        out["in_flight"] = [r.int("in_flight") for r in acks]
    else:
        out["in_flight_t"] = out["t"]
        out["in_flight"] = [((r.int("snd_nxt") - r.int("snd_una")) & 0xFFFFFFFF) / TRACE_MSS for r in probes]
    return out
