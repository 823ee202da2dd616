"""The topology checked before a job's runs (its fidelity.json): each pair's base RTT and the
bottleneck's saturating rate, and the base RTT each run measures again.

Before a job's runs, each pair's idle base RTT is measured as ping
measures it, by echo requests of ping's size sent from this process
(guest/echo.py).
On a real clock the substrate adds latency of its own (under TCG about
0.2 ms per hop); the median excess over all pairs is taken off the netem
delay lines (delay_offset_ms) and the RTT measured again, and an RTT off by
more than 0.5 ms is flagged.  Under virtual time (UML) the path's RTT is the
configured delay exactly: nothing is calibrated away, and an RTT off by more
than ping's resolution (1 us, rounded) is flagged, and kept.  Then one CUBIC
flow saturates the bottleneck for SATURATE_S seconds and the rate of frames
leaving it is measured (flagged when off by more than 1%); on a path whose RTT
is over 300 ms the reading starts after 10 of its RTTs, not 3 s (slow start
from 10 packets to a GEO path's BDP takes about 8 of them).  Each run
re-measures the base RTT of the pairs it uses.  The plan's `fidelity`
section says which rules apply.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from ..records import Bursts, Capture
from .dumbbell import Dumbbell
from .flows import run_case

#: Defaults for a real clock; the plan's `fidelity` section overrides them.
RTT_TOLERANCE_MS = 0.5
RATE_TOLERANCE = 0.01
SATURATE_S = 8.0
#: The rate is read over [SATURATE_FROM_S, SATURATE_S - 1]: after slow start.
SATURATE_FROM_S = 3.0
#: ... and on a long path from this many of its largest RTT on (reading as long), so that slow start
#: has reached the BDP: 3 s is 10 RTTs of 300 ms, and every path up to 300 ms reads as before.
SATURATE_FROM_RTTS = 10
#: Calibrate only a consistent excess (smaller differences are noise).
CALIBRATE_MIN_MS = 0.05
#: A default ping's frame: 56 data bytes + ICMP 8 + IP 20 + Ethernet 14.  Its
#: echo request crosses the bottleneck (the rate limiter serialises it); the
#: reply goes back the other way, which has no rate limit.
PING_FRAME_BYTES = 98


def expected_rtt_ms(db: Dumbbell, pair: int) -> float:
    """What ping should measure on an idle pair: the configured round trip plus the time the
    bottleneck takes to serialise the echo request (15.7 us at 50 Mbit/s; none through HTB, the
    shaper of a varying link), plus what the host model adds: each host's access link
    serialises the request and the reply once each, and each host processes one of them.  A
    link with bursts (slots), a host's jitter and its coalescing add a wait within a range:
    see extra_wait_ms."""
    rtt = db.plan.pairs[pair - 1].rtt_ms + host_rtt_ms(db, pair)
    if db.shaper != "netem":
        # HTB lets an idle link's packet through on its burst's tokens, unserialised.
        return rtt
    return rtt + PING_FRAME_BYTES * 8 / (db.plan.bottleneck.rate_mbit * 1e6) * 1e3


def host_rtt_ms(db: Dumbbell, pair: int) -> float:
    """The host model's fixed part of an idle round trip of ping's frames."""
    total_us = 0.0
    for kind in ("server", "client"):
        if (host := db.host(pair, kind)) is None:
            continue
        if host.nic_mbit:
            total_us += 2 * PING_FRAME_BYTES * 8 / host.nic_mbit  # bits / (Mbit/s) = us
        total_us += host.rx_cost_us
    return total_us / 1e3


def slot_wait_ms(db: Dumbbell) -> tuple[float, float]:
    """(least, most) an idle round trip waits for the link model's slots: an idle packet's
    slot opens a uniform [min, max] after it is due, in each direction that has slots."""
    slots = [st for st in (*db.plan.bottleneck.link.down, *db.plan.bottleneck.link.up) if isinstance(st, Bursts)]
    return sum(st.min_ms for st in slots), sum(st.max_ms for st in slots)


#: A host's link rate puts a netem on the host's own interface, which a packet passes in the
#: sending call (and UML charges 256 ns of guest time for a clock read outside interrupts: netem
#: reads it to queue and to try to dequeue).  Measured on an idle pair (module-smoke's path,
#: ping's minimum of 10): 0.8 us more than the model's time with the servers' links at 1 Gbit/s,
#: 1.8 with the clients', 2.2 with both; per host with a link rate, at most this:
NIC_CLOCK_CHARGE_MS = 0.0011


def extra_wait_ms(db: Dumbbell, pair: int) -> tuple[float, float]:
    """(least, most) an idle round trip waits beyond expected_rtt_ms: the link's slots, each host's
    jitter (uniform [0, jitter)) and coalescing (its next batch: [0, period]), and UML's clock
    charges for the netems on the hosts' own interfaces (NIC_CLOCK_CHARGE_MS)."""
    lo, hi = slot_wait_ms(db)
    for kind in ("server", "client"):
        if (host := db.host(pair, kind)) is None:
            continue
        hi += host.rx_jitter_us / 1e3 + (host.rx_batch.period_us if host.rx_batch else 0) / 1e3
        hi += NIC_CLOCK_CHARGE_MS if host.nic_mbit else 0.0
    return lo, hi


def rtt_within(db: Dumbbell, pair: int, measured: float, tolerance_ms: float) -> bool:
    """The idle RTT (ping's minimum) is the configured one, plus a wait within its range."""
    lo, hi = extra_wait_ms(db, pair)
    base = expected_rtt_ms(db, pair)
    return base + lo - tolerance_ms <= measured <= base + hi + tolerance_ms


def measure_base_rtts(db: Dumbbell, pairs: list[int], count: int = 10, together: bool = True,
                      warm_up: bool = False) -> dict[int, float]:
    """Idle base RTT of each pair.

    together: the pairs pinged at once.  On a real clock one pair after
    another took about 1 s per pair (13 s per run of a 13-pair cell), and
    jitter keeps a few pings from meeting at the bottleneck.  Under virtual
    time every pair's ping leaves at the same instant and they queue behind
    each other at the bottleneck (+15.7 us each at 50 Mbit/s), while one
    pair after another costs no wall time: there, pairs go one at a time.
    warm_up: one ping first, answered before the measured ones leave, so
    that no measured ping waits for ARP (the first after the topology is
    built does, by up to half the pair's RTT: the delay lines carry ARP too).
    """
    def one(i: int) -> float:
        if warm_up:
            db.base_rtt_ms(i, count=1, interval=0.1)
        return db.base_rtt_ms(i, count=count, interval=0.1)

    if not together:
        return {i: one(i) for i in pairs}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(16, len(pairs))) as pool:
        rtts = list(pool.map(one, pairs))
    return dict(zip(pairs, rtts))


def calibrate(db: Dumbbell, tolerance_ms: float = RTT_TOLERANCE_MS, allowed: bool = True,
              count: int = 10, together: bool = True) -> dict:
    pairs = list(range(1, len(db.plan.pairs) + 1))
    configured = {i: db.plan.pairs[i - 1].rtt_ms for i in pairs}
    expected = {i: round(expected_rtt_ms(db, i), 4) for i in pairs}
    before = measure_base_rtts(db, pairs, count, together, warm_up=True)
    excess = statistics.median(before[i] - expected[i] for i in pairs)
    after = before
    # With slots (or the hosts' jitter and batches) the excess is mostly their waits, which are
    # the model's and must stay.
    slotted = any(extra_wait_ms(db, i) != (0, 0) for i in pairs)
    if allowed and excess > CALIBRATE_MIN_MS and not slotted:
        db.delay_offset_ms = excess / 2
        db.set_delays()
        after = measure_base_rtts(db, pairs, count, together)
    return {"configured_ms": configured, "expected_ms": expected, "measured_before_ms": before,
            "substrate_excess_ms": round(excess, 3),
            "delay_offset_ms": round(db.delay_offset_ms, 3), "measured_ms": after,
            "calibrated": allowed and not slotted, "slot_wait_ms": list(slot_wait_ms(db)),
            "tolerance_ms": tolerance_ms,
            "ok": all(rtt_within(db, i, after[i], tolerance_ms) for i in pairs)}


def saturating_rate(db: Dumbbell, out: Path) -> dict:
    """Run a CUBIC flow and measure the rate leaving the bottleneck once slow start is over (from
    SATURATE_FROM_S, or SATURATE_FROM_RTTS of a long path's RTT, for 4 s)."""
    import threading
    samples: dict = {}
    start = max(SATURATE_FROM_S, SATURATE_FROM_RTTS * max(p.rtt_ms for p in db.plan.pairs) / 1e3)
    duration = start + SATURATE_S - SATURATE_FROM_S

    def sample() -> None:
        time.sleep(start)
        samples["b0"], samples["t0"] = db.bottleneck_bytes(), time.monotonic()
        time.sleep(duration - 1 - start)
        samples["b1"], samples["t1"] = db.bottleneck_bytes(), time.monotonic()

    th = threading.Thread(target=sample)
    th.start()
    run_case(db, [{"pair": 1, "cc": "cubic", "duration": duration, "start": 0.0}], out, "saturate",
             capture=Capture(pcap=False, snaplen=96, traces=False, immediate=True))
    th.join()
    rate = (samples["b1"] - samples["b0"]) * 8 / (samples["t1"] - samples["t0"]) / 1e6
    configured = db.plan.bottleneck.rate_mbit
    return {"configured_mbit": configured, "measured_mbit": round(rate, 3),
            "window_s": [start, duration - 1],
            "ok": abs(rate - configured) <= RATE_TOLERANCE * configured}
