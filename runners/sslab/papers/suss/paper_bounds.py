"""What the SUSS paper's own numbers allow of the parameters it leaves unstated (E7, Table 1).

The paper prints flow completion times; simple physics bounds a flow's FCT from below, so a
choice of ours whose bound is above a value the paper printed cannot be what the paper ran:

    transfer    B payload bytes cross a bottleneck of rate R in no less than wire(B) / R, where
                wire counts what netem's rate counts of every frame: the payload, and per segment
                of at most MSS bytes 66 bytes of headers (Ethernet 14 without FCS, IPv4 20, TCP
                with timestamps 32).  150 MB in 1448-byte segments: 103 592 frames, 156.8 MB.
    slow start  a flow that starts from IW segments and doubles its window each round trip has
                sent IW (2^k - 1) segments after k rounds: 2 MB (1382 segments from IW 10) needs
                k = 8 rounds (10 x 255 = 2550 >= 1382; 10 x 127 = 1270 is short).  An early exit
                (HyStart) or a loss only adds rounds, so the bound holds for SUSS off; SUSS on can
                grow faster and is not bounded here.
    timing      sslab-transfer's client times from just before connect() to its last byte, and the
                server sends from accept(): data leaves 1.5 RTT after connect() and round j's last
                segment arrives at (1 + j) RTT, so an FCT timed so is >= (k + 1) RTT and >= 2 RTT +
                wire / R.  Timed at the server as a kernel log would (its first segment to the last
                ACK), >= k RTT and >= RTT + wire / R.

    FCT >= max(rounds bound, transfer bound)          mean FCT of flows i >= mean of their bounds

The paper prints Table 1's 1 BDP rows and an Average row per control.  Read as the mean over the
paper's eight settings (both buffers, four RTTs), the Average rows give the mean of the four
unprinted 2 BDP rows: 2 x Average - mean(1 BDP rows), uncertain by the printed digits' rounding
(half a unit of the last digit, twice for the Average, once for the rows' mean).  These derived
values are the paper's too, and are compared as such (implied_2bdp)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

#: Header bytes on the wire per segment, as netem's rate counts a frame: Ethernet 14 (no FCS),
#: IPv4 20, TCP 20 + 12 of timestamp option (Linux sends timestamps by default).
FRAME_OVERHEAD = 66
#: IPv4 and TCP-with-timestamps headers inside the MTU: MSS = MTU - 52 (1500 -> 1448).
MSS_HEADERS = 52
#: Linux's initial window, segments (RFC 6928; the guest does not change it).
INITIAL_WINDOW = 10
#: Where an FCT is timed: our client's connect() to last byte, or a server's first data to last ACK.
TIMINGS = ("client", "server")
#: The FCT fields of Table 1's rows.  Physics bounds the large flow's either way, the small flows'
#: only with SUSS off (traditional slow start; SUSS can grow faster): large_flow_bound, small_flows_bound.
FCT_FIELDS = ("off_large", "off_small", "on_large", "on_small")


def mss_of(mtu: int) -> int:
    return mtu - MSS_HEADERS


def wire_bytes(payload: int, mss: int) -> int:
    """Bytes netem's rate counts for @payload bytes sent in full segments of @mss."""
    return payload + math.ceil(payload / mss) * FRAME_OVERHEAD


def transfer_s(payload: int, rate_mbit: float, mss: int) -> float:
    return wire_bytes(payload, mss) * 8 / (rate_mbit * 1e6)


def slow_start_rounds(payload: int, mss: int, iw: int = INITIAL_WINDOW) -> int:
    """Round trips of doubling from @iw segments until @payload bytes are sent."""
    segments = math.ceil(payload / mss)
    k = 0
    while iw * (2 ** k - 1) < segments:
        k += 1
    return k


def fct_floor_s(payload: int, rtt_s: float, rate_mbit: float, mss: int, timing: str = "client",
                iw: int = INITIAL_WINDOW) -> float:
    """The least FCT a flow of @payload bytes can have on an empty path of @rtt_s and @rate_mbit,
    timed as @timing says (the module's docstring derives both)."""
    if timing not in TIMINGS:
        raise ValueError(f"timing {timing!r}: one of {', '.join(TIMINGS)}")
    k = slow_start_rounds(payload, mss, iw)
    wire = transfer_s(payload, rate_mbit, mss)
    if timing == "client":
        return max((k + 1) * rtt_s, 2 * rtt_s + wire)
    return max(k * rtt_s, rtt_s + wire)


def largest_payload(fct_s: float, rtt_s: float, rate_mbit: float, mss: int, timing: str = "client") -> int:
    """The most payload bytes a flow could carry at @rate_mbit and still finish in @fct_s (the
    transfer bound solved for the payload)."""
    rtts = 2 if timing == "client" else 1
    budget = (fct_s - rtts * rtt_s) * rate_mbit * 1e6 / 8  # wire bytes
    return max(0, int(budget * mss / (mss + FRAME_OVERHEAD)))


def largest_mean_rtt_s(mean_fct_s: float, payload: int, mss: int, timing: str = "client",
                       iw: int = INITIAL_WINDOW) -> float:
    """The largest mean base RTT flows of @payload bytes can have for a mean FCT of @mean_fct_s
    (the rounds bound is linear in the RTT, so it bounds the mean RTT by the mean FCT)."""
    k = slow_start_rounds(payload, mss, iw)
    return mean_fct_s / (k + 1 if timing == "client" else k)


# ------------------------------------------------------------------------------------------------
# The paper's values: printed, and implied
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PaperValue:
    """One value of Table 1: where it stands, what it is, and whether the paper prints it or its
    Average rows imply it (then ± the rounding of the digits it is derived from)."""

    cca: str
    buffer: str          # "1BDP", "2BDP"; "average" for an Average row
    rtt: str | None      # "25ms", ...; None for a mean over RTTs
    field: str           # off_large, off_small, on_large, on_small, improvement_pct
    value: float
    derived: bool = False
    rounding: float = 0.0

    def where(self, labels: dict[str, str] | None = None) -> str:
        """"BBRv1 1BDP 25ms, large flow SUSS off" (with @labels, the report's names of the controls)."""
        rtt = self.rtt or "mean of 4 RTTs"
        spot = "Average" if self.buffer == "average" else f"{self.buffer} {rtt}"
        return f"{(labels or {}).get(self.cca, self.cca)} {spot}, {FIELD_TEXT.get(self.field, self.field)}" \
               f"{' (implied)' if self.derived else ''}"


def half_unit(decimals: int) -> float:
    """The rounding of a value printed with @decimals digits after the point."""
    return 0.5 * 10 ** -decimals


#: How the report names Table 1's fields.
FIELD_TEXT = {"off_large": "large flow, SUSS off", "on_large": "large flow, SUSS on",
              "off_small": "small flows, SUSS off", "on_small": "small flows, SUSS on",
              "improvement_pct": "improvement"}
#: Digits the paper prints: one decimal for the large flow, two for the small flows, whole percent.
DECIMALS = {"off_large": 1, "on_large": 1, "off_small": 2, "on_small": 2, "improvement_pct": 0}


def printed_values(ref: dict) -> list[PaperValue]:
    """Every value Table 1 prints (the reference file's rows and Average rows)."""
    out = []
    for r in ref.get("rows", []):
        for f in (*FCT_FIELDS, "improvement_pct"):
            out.append(PaperValue(r["large_cc"], r["buffer"], r["large_rtt"], f, float(r[f])))
    for r in ref.get("averages", []):
        for f in (*FCT_FIELDS, "improvement_pct"):
            out.append(PaperValue(r["large_cc"], "average", None, f, float(r[f])))
    return out


def implied_2bdp(ref: dict) -> list[PaperValue]:
    """The mean of the unprinted 2 BDP rows per control, from its Average row and its four printed
    1 BDP rows (the Average read as the mean over both buffers): 2 x Average - mean(1 BDP)."""
    out = []
    for avg in ref.get("averages", []):
        cca = avg["large_cc"]
        rows = [r for r in ref.get("rows", []) if r["large_cc"] == cca and r["buffer"] == "1BDP"]
        if len(rows) != 4:
            continue  # the Average's other half is not the mean of four rows
        fct = {}
        for f in FCT_FIELDS:
            u = 3 * half_unit(DECIMALS[f])  # twice the Average's rounding, once the rows' mean's
            fct[f] = (2 * avg[f] - statistics.fmean(r[f] for r in rows), u)
            out.append(PaperValue(cca, "2BDP", None, f, round(fct[f][0], 4), True, u))
        (off, u_off), (on, u_on) = fct["off_small"], fct["on_small"]
        impr = (1 - on / off) * 100
        spread = max(abs(impr - (1 - (on + a) / (off + b)) * 100) for a in (-u_on, u_on) for b in (-u_off, u_off))
        out.append(PaperValue(cca, "2BDP", None, "improvement_pct", round(impr, 2), True, round(spread, 2)))
    return out


# ------------------------------------------------------------------------------------------------
# Our choices against them
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choices:
    """The parameters of ours that the bounds test, read from a cell's plan (plan.json)."""

    rate_mbit: float
    mtu: int
    large_bytes: int
    small_bytes: list[int]
    small_rtts_ms: list[float]
    small_starts_s: list[float]

    @property
    def mss(self) -> int:
        return mss_of(self.mtu)

    @classmethod
    def of_plan(cls, plan: dict) -> "Choices":
        """From a Table 1 cell's plan: flow 1 is the large flow, the rest the small ones, each on
        its pair (plan['pairs'][pair - 1])."""
        flows = plan["runs"][0]["flows"]
        rtts = [p["rtt_ms"] for p in plan["pairs"]]
        return cls(rate_mbit=plan["bottleneck"]["rate_mbit"], mtu=plan["topology"]["mtu"],
                   large_bytes=flows[0]["size"], small_bytes=[f["size"] for f in flows[1:]],
                   small_rtts_ms=[rtts[f["pair"] - 1] for f in flows[1:]],
                   small_starts_s=[f["start"] for f in flows[1:]])


@dataclass(frozen=True)
class Bound:
    """A choice of ours against the paper values that bound it: the tightest of them, and whether
    any is below what the choice needs."""

    parameter: str
    chosen: str
    needs_s: float           # the choice's FCT floor at the tightest paper value
    tightest: PaperValue
    ruled_out_by: list[tuple[PaperValue, float]]   # (paper value, the floor it is below)
    allows: str

    @property
    def ruled_out(self) -> bool:
        return bool(self.ruled_out_by)

    def line(self, labels: dict[str, str] | None = None) -> str:
        head = f"{self.parameter} ({self.chosen})"
        if self.ruled_out:
            worst = ", ".join(f"{p.value:g} s ({p.where(labels)}; needs >= {floor:.2f} s)"
                              for p, floor in self.ruled_out_by[:4])
            more = f" and {len(self.ruled_out_by) - 4} more" if len(self.ruled_out_by) > 4 else ""
            return (f"{head}: **ruled out** by {len(self.ruled_out_by)} paper value(s): {worst}{more}. "
                    f"The paper's values allow {self.allows}.")
        return (f"{head}: allowed (the tightest paper value, {self.tightest.value:g} s at "
                f"{self.tightest.where(labels)}, leaves {self.tightest.value - self.needs_s:.2f} s over its floor of "
                f"{self.needs_s:.2f} s). The paper's values allow {self.allows}.")


def _rtt_s(value: PaperValue) -> float | None:
    return None if value.rtt is None else float(value.rtt.removesuffix("ms")) / 1000


def _value_hi(v: PaperValue) -> float:
    """The largest the paper's value can be, given its printed digits."""
    return v.value + (v.rounding if v.derived else half_unit(DECIMALS[v.field]))


def large_flow_bound(values: list[PaperValue], c: Choices, timing: str = "client") -> Bound:
    """The large flow's size at the bottleneck rate against every large-flow FCT the paper gives
    for a setting (its large-flow RTT known)."""
    checked = [(v, fct_floor_s(c.large_bytes, _rtt_s(v), c.rate_mbit, c.mss, timing))
               for v in values if v.field in ("off_large", "on_large") and v.rtt is not None]
    tight, need = min(checked, key=lambda vf: _value_hi(vf[0]) - vf[1])
    out = sorted([(v, f) for v, f in checked if f > _value_hi(v)], key=lambda vf: vf[0].value)
    most = min(largest_payload(_value_hi(v), _rtt_s(v), c.rate_mbit, c.mss, timing) for v, _ in checked)
    rate = max(wire_bytes(c.large_bytes, c.mss) * 8 / ((_value_hi(v) - (2 if timing == "client" else 1)
                                                        * _rtt_s(v)) * 1e6) for v, _ in checked)
    shared = c.large_bytes + sum(c.small_bytes)
    return Bound("large flow size at the bottleneck rate",
                 f"{c.large_bytes / 1e6:g} MB at {c.rate_mbit:g} Mbit/s, FCT timed at the {timing}; "
                 f"{transfer_s(c.large_bytes, c.rate_mbit, c.mss):.2f} s on the wire alone, "
                 f"{transfer_s(shared, c.rate_mbit, c.mss):.2f} s with the small flows' "
                 f"{sum(c.small_bytes) / 1e6:g} MB through the same bottleneck",
                 need, tight, out,
                 f"at most {most / 1e6:.1f} MB at {c.rate_mbit:g} Mbit/s, or {c.large_bytes / 1e6:g} MB at "
                 f">= {rate:.1f} Mbit/s")


def small_flows_bound(values: list[PaperValue], c: Choices, timing: str = "client") -> Bound:
    """The small flows' RTTs and size against the paper's SUSS-off mean small-flow FCTs (the mean of
    the flows' floors; the small flows' RTTs do not depend on the setting in our matrix)."""
    floors = [fct_floor_s(b, r / 1000, c.rate_mbit, c.mss, timing) for b, r in zip(c.small_bytes, c.small_rtts_ms)]
    need = statistics.fmean(floors)
    checked = [(v, need) for v in values if v.field == "off_small" and v.buffer != "average"]
    tight, _ = min(checked, key=lambda vf: _value_hi(vf[0]))
    out = sorted([(v, f) for v, f in checked if f > _value_hi(v)], key=lambda vf: vf[0].value)
    size = statistics.fmean(c.small_bytes)
    k = slow_start_rounds(int(size), c.mss)
    most = largest_mean_rtt_s(_value_hi(tight), int(size), c.mss, timing)
    return Bound("small flows' minRTTs",
                 f"{len(c.small_rtts_ms)} flows of {size / 1e6:g} MB, mean minRTT "
                 f"{statistics.fmean(c.small_rtts_ms):.1f} ms, {k} rounds of slow start from IW {INITIAL_WINDOW}, "
                 f"FCT timed at the {timing}",
                 need, tight, out,
                 f"a mean small-flow minRTT of at most {most * 1000:.0f} ms ({tight.where()}: "
                 f"{tight.value:g} s / {k + 1 if timing == 'client' else k} round trips)")


def bounds(ref: dict, c: Choices, timing: str = "client") -> list[Bound]:
    """Our choices against every printed and implied value that bounds them."""
    values = printed_values(ref) + implied_2bdp(ref)
    if not values:
        return []
    return [large_flow_bound(values, c, timing), small_flows_bound(values, c, timing)]
