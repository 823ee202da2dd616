"""Link models for the bottleneck: wired, Wi-Fi, cellular and satellite last hops, as data.

What a last hop does to slow start, and how the testbed makes each trait:

  rate over time   HTB on the bottleneck (r1 -> r2) with its rate changed at
                   every bin of a rate trace (sslab.scenario.traces), from
                   inside the guest.  HTB and not netem: netem fixes each
                   packet's departure time when it is queued, so a rate
                   change would reach the link only after the whole queue
                   (hundreds of ms with a deep buffer) had drained at the old rate.
  aggregation      netem's `slot`: frames leave in bursts, one burst per slot,
                   the slots a uniform [min, max] apart, at most `packets`
                   per burst.  Downlink (data) on the delay line towards each
                   client (per station, as A-MPDUs are); uplink (ACKs) on the
                   client's own interface.  An idle packet waits up to `max`
                   for its slot: that is the hop's added delay.
  deep buffer      the bottleneck's queue limit (packets, or time at the mean rate).
  random loss      netem's loss on the hop (`loss: {down, up}`: a rate, or a
                   two-state chain's p and r; sslab.scenario.model.Loss),
                   after the fidelity checks.  No preset has any (none of
                   the sources below gives a loss figure).
  varying delay    a sine of `period` and `depth` added to the one-way delay
                   towards the clients, changed every `bin` during each run
                   (`delay_variation`; sslab.scenario.model.DelayVariation).
                   The satellite presets and lte-search have one.

Presets (`kind: wifi` takes `wifi`, `kind: cellular` takes `lte`, `kind:
satellite` takes `geo`; any field given in the scenario overrides the
preset's).  A preset is the link; the path's base RTT is its pairs' (a GEO
scenario sets `rtt: 600ms`).  Where the values come from:

  wifi  50 Mbit/s mean: E1's wired rate, so E1 and E2 differ by the link
        alone.  Aggregation 2-4 ms down and 0.5-1.5 ms up: the test report's
        Wi-Fi hop "adds 3-5 ms" (E2); the idle added delay is the sum of one
        wait for each direction's slot, 2.5-5.5 ms.  At most 64 frames per
        burst: 802.11n's limit of 64 subframes per A-MPDU.  Buffer 1000
        frames: Linux's default transmit queue length.  Rate: Gauss-Markov,
        sd 25% of the mean, correlation time 0.5 s (our assumption: rate
        adaptation moves the rate on the scale of several RTTs; not fitted
        to a measured trace).
  lte   32 Mbit/s mean and a 560-frame buffer: the Blitzstart report's LTE
        link (E9).  Downlink bursts every 1 ms: LTE's 1 ms scheduling
        interval (TTI).  Uplink 2-6 ms: a grant cycle of a few ms (our
        assumption).  Rate: log-normal Markov, sd 50% of the mean,
        correlation time 1 s (our assumption).
  5g    100 Mbit/s mean, downlink slot 0.5 ms (5G NR's slot at 30 kHz
        subcarrier spacing), uplink 1-3 ms, buffer 100 ms at the mean rate,
        log-normal Markov, sd 40%, 0.5 s (all but the slot our assumptions).

SEARCH's paths (the SEARCH draft of June 2024, Section 4, from its authors'
measurements [KCL24]: the RTT's dominant cycle by FFT, and the minimum RTT):

  geo   GEO satellite: minimum RTT about 600 ms, a cycle of 2 s (0.5 Hz).
  leo   LEO satellite: minimum RTT about 30 ms, a cycle of 0.1 s (10 Hz).
  lte-search
        4G LTE: minimum RTT about 60 ms, a cycle of 0.17 s (6 Hz); the lte
        preset's rate trace, aggregation and buffer.
  The draft gives neither rates, buffers nor the cycles' depth; ours, one
  rule for the three: the depth a third of the minimum RTT (GEO 200 ms, LEO
  10 ms, LTE 20 ms); rates GEO 50 Mbit/s and LEO 100 Mbit/s, constant (the
  draft's paths are downloads to one subscriber; any trace is the user's);
  buffers 1 BDP at the mean rate and minimum RTT (GEO 600 ms, LEO 30 ms of
  the rate).  The bins of the varying delay: GEO 10 ms (200 a cycle), LEO 5
  ms (20), LTE 10 ms (17).

These are stated models, not measurements: a researcher with a measured
trace replays it (`trace: path/to/file`, mahimahi format) instead.
"""

from __future__ import annotations

import copy
from typing import Any

#: kind -> the preset it takes when the scenario names none.
DEFAULT_PRESET = {"wifi": "wifi", "cellular": "lte", "satellite": "geo"}

LINK_PRESETS: dict[str, dict[str, Any]] = {
    "wifi": {
        "kind": "wifi",
        "mean": "50mbit",
        "buffer": {"packets": 1000},
        "trace": {"model": "gauss-markov", "seed": 1, "cv": 0.25, "tau": "500ms", "duration": "60s"},
        "aggregation": {"down": {"min": "2ms", "max": "4ms", "packets": 64},
                        "up": {"min": "0.5ms", "max": "1.5ms", "packets": 64}},
    },
    "lte": {
        "kind": "cellular",
        "mean": "32mbit",
        "buffer": {"packets": 560},
        "trace": {"model": "lognormal-markov", "seed": 1, "cv": 0.5, "tau": "1s", "duration": "60s"},
        "aggregation": {"down": {"min": "1ms", "max": "1ms", "packets": 1000},
                        "up": {"min": "2ms", "max": "6ms", "packets": 1000}},
    },
    "5g": {
        "kind": "cellular",
        "mean": "100mbit",
        "buffer": {"time": "100ms"},
        "trace": {"model": "lognormal-markov", "seed": 1, "cv": 0.4, "tau": "500ms", "duration": "60s"},
        "aggregation": {"down": {"min": "0.5ms", "max": "0.5ms", "packets": 1000},
                        "up": {"min": "1ms", "max": "3ms", "packets": 1000}},
    },
    # SEARCH's paths (the docstring: the cycles are the draft's, the rest ours).
    "geo": {
        "kind": "satellite",
        "mean": "50mbit",
        "buffer": {"time": "600ms"},
        "delay_variation": {"period": "2s", "depth": "200ms", "bin": "10ms"},
    },
    "leo": {
        "kind": "satellite",
        "mean": "100mbit",
        "buffer": {"time": "30ms"},
        "delay_variation": {"period": "100ms", "depth": "10ms", "bin": "5ms"},
    },
}
#: LTE as SEARCH's draft measured it: the lte preset with its RTT cycle.
LINK_PRESETS["lte-search"] = {**LINK_PRESETS["lte"],
                              "delay_variation": {"period": "170ms", "depth": "20ms", "bin": "10ms"}}


def preset_for(link: dict) -> dict[str, Any] | None:
    """The preset a link description takes (a deep copy), or None (wired, nothing to fill)."""
    name = link.get("preset") or DEFAULT_PRESET.get(link.get("kind", "wired"))
    if name is None:
        return None
    if name not in LINK_PRESETS:
        raise ValueError(f"unknown link preset {name!r}; known: {', '.join(LINK_PRESETS)}")
    preset = copy.deepcopy(LINK_PRESETS[name])
    if "kind" in link and link["kind"] != preset["kind"]:
        raise ValueError(f"preset {name!r} is a {preset['kind']} link, not {link['kind']}")
    return {**preset, "preset": name}


def fill_link(link: dict) -> tuple[dict, dict | None]:
    """(the link with its preset's fields where the scenario gave none, the preset's bottleneck
    defaults {mean, buffer} or None).  A trace given as a mapping merges into the preset's."""
    preset = preset_for(link)
    if preset is None:
        return link, None
    defaults = {"mean": preset.pop("mean"), "buffer": preset.pop("buffer")}
    out = dict(preset)
    for key, value in link.items():
        if key == "trace" and isinstance(value, dict) and isinstance(out.get("trace"), dict) \
                and "model" not in value:
            out["trace"] = {**out["trace"], **value}
        elif key == "aggregation" and isinstance(value, dict) and isinstance(out.get("aggregation"), dict):
            out["aggregation"] = {**out["aggregation"], **value}
        else:
            out[key] = value
    return out, defaults
