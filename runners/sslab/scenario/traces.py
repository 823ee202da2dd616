"""Rate traces for a bottleneck whose rate varies: mahimahi's format in and out, and generated traces.

The format (mahimahi's, so people can bring their own traces): one line per
delivery opportunity, an integer number of milliseconds; at each the link
may deliver one packet of up to 1500 bytes.  Several lines may carry the same
millisecond (several packets in it).  The trace covers (0, last] ms and
repeats with that period.  Opportunity t falls in the millisecond (t-1, t].

On our bottleneck one opportunity is one full frame (1514 bytes on the veth,
a 1500-byte IP packet).  The guest replays a trace as a rate that is constant
within each bin (BIN_MS by default) and changes at bin boundaries: the rate
of bin k is (opportunities in bin k) x 1514 x 8 / bin.  Finer structure than a
bin (mahimahi's per-millisecond bursts) is not replayed: the link's bursts
come from its aggregation model (sslab.scenario.links), which is stated on
its own.

No trace archive is reachable here, so traces are generated from stated
stochastic models (`generate`), seeded:

  gauss-markov      the rate is a first-order autoregressive (Gauss-Markov)
                    process around its mean: correlation time tau, standard
                    deviation cv x mean (Wi-Fi: rate adaptation moving the
                    PHY rate up and down around a mean);
  lognormal-markov  the logarithm of the rate is such a process (cellular:
                    fading and the scheduler's share multiply the rate, so
                    it is skewed, with deep dips and no negative values).

A generated trace is scaled to have exactly the mean asked for.

Every rate is kept at or above one frame per bin (FLOOR): HTB charges a sent
frame at the rate in force, so a frame sent at a near-zero rate would stall
the link far past its bin.  Standard library only (the host reads files with
it; the guest gets the bins in its plan).
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

from .units import frame_bytes

#: The frame one opportunity carries: a trace's unit is a 1500-byte IP packet (Mahimahi's),
#: whatever the run's MTU, so a trace means the same rates on every topology.
OPPORTUNITY_FRAME_BYTES = frame_bytes(1500)
#: Replay bin, ms: short against every RTT studied (>= 20 ms), long against a frame's time.
BIN_MS = 10
MODELS = ("gauss-markov", "lognormal-markov")


class TraceError(ValueError):
    """A trace that cannot be read or made; the message says where."""


@dataclass(frozen=True)
class RateTrace:
    """A rate per bin, repeating with period_ms (the last bin may be shorter)."""

    bin_ms: int
    period_ms: int
    rates_mbit: tuple[float, ...]
    #: Where it came from: "file:<path>" or "model:<name> seed=<n> ...".
    source: str
    #: sha256 of the mahimahi text it was read from or written as.
    sha256: str

    def bin_length_ms(self, k: int) -> int:
        return min(self.bin_ms, self.period_ms - k * self.bin_ms)

    @property
    def mean_mbit(self) -> float:
        """The time-weighted mean rate over one period."""
        return sum(r * self.bin_length_ms(k) for k, r in enumerate(self.rates_mbit)) / self.period_ms

    def capacity_bytes(self, t0_s: float, t1_s: float, offset_s: float = 0.0) -> float:
        """Bytes the trace lets through between t0 and t1 (seconds since the replay began at @offset_s)."""
        total, t = 0.0, t0_s
        while t < t1_s - 1e-12:
            pos_ms = ((t + offset_s) * 1e3) % self.period_ms
            k = min(int(pos_ms // self.bin_ms), len(self.rates_mbit) - 1)
            end_ms = k * self.bin_ms + self.bin_length_ms(k)
            step = min(t1_s - t, (end_ms - pos_ms) / 1e3)
            step = max(step, 1e-9)
            total += self.rates_mbit[k] * 1e6 / 8 * step
            t += step
        return total


def floor_mbit(bin_ms: int) -> float:
    """The lowest rate replayed: one frame per bin."""
    return OPPORTUNITY_FRAME_BYTES * 8 / (bin_ms * 1e-3) / 1e6


def read_mahimahi(text: str, where: str = "<trace>") -> list[int]:
    """The opportunities (ms) of a mahimahi trace; errors name the line."""
    stamps: list[int] = []
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s:
            continue
        if not s.isdigit():
            raise TraceError(f"{where}:{n}: not a whole number of milliseconds: {s[:40]!r}")
        t = int(s)
        if stamps and t < stamps[-1]:
            raise TraceError(f"{where}:{n}: {t} ms comes after {stamps[-1]} ms (times must not decrease)")
        stamps.append(t)
    if not stamps:
        raise TraceError(f"{where}: no delivery opportunities")
    if stamps[-1] <= 0:
        raise TraceError(f"{where}: the last opportunity ({stamps[-1]} ms) must be after 0 ms (it sets the period)")
    return stamps


def bin_rates(stamps: list[int], bin_ms: int = BIN_MS) -> tuple[int, list[float]]:
    """(period ms, rate per bin in Mbit/s) of mahimahi opportunities, one full frame each."""
    if bin_ms < 1:
        raise TraceError(f"bin must be at least 1 ms, got {bin_ms}")
    period = stamps[-1]
    nbins = math.ceil(period / bin_ms)
    counts = [0] * nbins
    for t in stamps:
        counts[max(t - 1, 0) // bin_ms] += 1
    floor = floor_mbit(bin_ms)
    rates = []
    for k, c in enumerate(counts):
        length = min(bin_ms, period - k * bin_ms)
        rates.append(max(c * OPPORTUNITY_FRAME_BYTES * 8 / (length * 1e-3) / 1e6, floor))
    return period, rates


def trace_from_text(text: str, source: str, bin_ms: int = BIN_MS) -> RateTrace:
    period, rates = bin_rates(read_mahimahi(text, source), bin_ms)
    return RateTrace(bin_ms, period, tuple(round(r, 6) for r in rates), source,
                     hashlib.sha256(text.encode()).hexdigest())


def write_mahimahi(rates_mbit: list[float], bin_ms: int) -> str:
    """Mahimahi text delivering @rates_mbit (one per bin of @bin_ms): per millisecond, as many
    full frames as the credit accumulated so far allows (the remainder carries over)."""
    lines: list[str] = []
    credit = 0.0
    for k, rate in enumerate(rates_mbit):
        per_ms = rate * 1e6 / 8 * 1e-3
        for ms in range(k * bin_ms, (k + 1) * bin_ms):
            credit += per_ms
            while credit >= OPPORTUNITY_FRAME_BYTES - 1e-6:  # (a whole frame less rounding)
                lines.append(str(ms + 1))
                credit -= OPPORTUNITY_FRAME_BYTES
    period = len(rates_mbit) * bin_ms
    if not lines or int(lines[-1]) != period:
        # The period is the last opportunity: end on the trace's last millisecond.
        lines.append(str(period))
    return "\n".join(lines) + "\n"


def _normal(rng: random.Random) -> float:
    """A standard normal draw from rng.random() alone (Box-Muller), so a seed means the same
    trace on every Python version."""
    u1 = 1.0 - rng.random()
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * rng.random())


def generate_rates(model: str, seed: int, mean_mbit: float, duration_s: float, cv: float, tau_s: float,
                   bin_ms: int = BIN_MS) -> list[float]:
    """Rates per bin of a stationary process with the given mean, coefficient of variation and
    correlation time, started in its stationary distribution.  A finite stretch of the process
    has a mean of its own (a 60 s trace with tau 1 s lands within about 10% of it): the rates
    are scaled so that the trace's mean is @mean_mbit, then floored (FLOOR)."""
    if model not in MODELS:
        raise TraceError(f"unknown trace model {model!r}; known: {', '.join(MODELS)}")
    if not mean_mbit > 0 or not duration_s > 0 or cv < 0 or not tau_s > 0:
        raise TraceError("a generated trace needs mean > 0, duration > 0, cv >= 0 and tau > 0")
    rng = random.Random(f"sslab-trace/{model}/{seed}")
    n = max(1, round(duration_s * 1e3 / bin_ms))
    rho = math.exp(-bin_ms * 1e-3 / tau_s)
    innovation = math.sqrt(1.0 - rho * rho)
    floor = floor_mbit(bin_ms)
    z = _normal(rng)
    out = []
    for _ in range(n):
        if model == "gauss-markov":
            rate = mean_mbit * (1.0 + cv * z)
        else:
            sigma = math.sqrt(math.log(1.0 + cv * cv))
            rate = mean_mbit * math.exp(sigma * z - sigma * sigma / 2.0)
        out.append(rate)
        z = rho * z + innovation * _normal(rng)
    scale = mean_mbit / (sum(out) / len(out))
    return [max(r * scale, floor) for r in out]


def generated_trace(model: str, seed: int, mean_mbit: float, duration_s: float, cv: float, tau_s: float,
                    bin_ms: int = BIN_MS) -> tuple[str, RateTrace]:
    """(mahimahi text, the trace as replayed) of a generated trace.  The replayed rates are read
    back from the text, so a file written from here and read again replays the same."""
    text = write_mahimahi(generate_rates(model, seed, mean_mbit, duration_s, cv, tau_s, bin_ms), bin_ms)
    source = f"model:{model} seed={seed} mean={mean_mbit:g}mbit cv={cv:g} tau={tau_s:g}s duration={duration_s:g}s"
    return text, trace_from_text(text, source, bin_ms)
