"""Rate traces (mahimahi reader, writer, generators), link models in scenarios, and the link's fidelity."""

import math
import statistics

import pytest

from sslab.analysis.link import burst_summary, rate_series, replay_fidelity
from sslab.scenario import ScenarioError
from sslab.scenario.load import link_plan, parse_scenario, to_plan, trace_offset
from sslab.scenario.traces import (OPPORTUNITY_FRAME_BYTES, TraceError, bin_rates, floor_mbit,
                                   generate_rates, generated_trace, read_mahimahi, trace_from_text,
                                   write_mahimahi)

FRAME_MBIT = OPPORTUNITY_FRAME_BYTES * 8 / 1e6  # one frame, in Mbit


# -- the mahimahi reader ----------------------------------------------------

def test_reader_takes_repeated_milliseconds_and_blank_lines():
    assert read_mahimahi("1\n1\n\n2\n10\n") == [1, 1, 2, 10]


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    return plan_record(to_plan(s))


@pytest.mark.parametrize("text, where", [
    ("1\n2\nabc\n", ":3: not a whole number"),
    ("1\n5\n3\n", ":3: 3 ms comes after 5 ms"),
    ("\n\n", "no delivery opportunities"),
    ("0\n0\n", "must be after 0 ms"),
    ("1\n-2\n", ":2: not a whole number"),
])
def test_reader_names_the_bad_line(text, where):
    with pytest.raises(TraceError, match=where):
        read_mahimahi(text, "t.mahi")


def test_bins_count_full_frames_per_bin():
    # Opportunity t falls in the millisecond (t-1, t]: 1, 1, 2 in the first 5 ms, 10 in the second.
    period, rates = bin_rates([1, 1, 2, 10], bin_ms=5)
    assert period == 10
    assert rates == pytest.approx([3 * FRAME_MBIT / 5e-3, 1 * FRAME_MBIT / 5e-3])


def test_an_empty_bin_is_floored_to_one_frame_and_a_short_last_bin_keeps_its_length():
    period, rates = bin_rates([1, 25], bin_ms=10)
    assert period == 25 and len(rates) == 3
    assert rates[0] == pytest.approx(FRAME_MBIT / 10e-3)
    assert rates[1] == pytest.approx(floor_mbit(10))          # nothing in (10, 20]
    assert rates[2] == pytest.approx(FRAME_MBIT / 5e-3)        # one frame in the last 5 ms


def test_writer_and_reader_round_trip_whole_frames_exactly():
    # 10 and 20 frames per 10 ms bin: whole frames, so nothing is carried over.
    rates = [10 * FRAME_MBIT / 10e-3, 20 * FRAME_MBIT / 10e-3]
    text = write_mahimahi(rates, 10)
    assert len(text.splitlines()) == 30
    period, back = bin_rates(read_mahimahi(text), 10)
    assert period == 20 and back == pytest.approx(rates)


def test_writer_carries_the_remainder_so_totals_stay_within_a_frame():
    rates = [7.3, 41.9, 0.5, 88.8, 23.0]
    stamps = read_mahimahi(write_mahimahi(rates, 10))
    wanted = sum(rates) * 10e-3 / FRAME_MBIT
    assert abs(len(stamps) - wanted) <= 1.0 + 1  # the closing line may add one


# -- generated traces --------------------------------------------------------

def test_a_seed_means_one_trace_and_another_seed_another():
    a = generated_trace("gauss-markov", 7, 50, 5, 0.25, 0.5)
    b = generated_trace("gauss-markov", 7, 50, 5, 0.25, 0.5)
    c = generated_trace("gauss-markov", 8, 50, 5, 0.25, 0.5)
    assert a[0] == b[0] and a[1].sha256 == b[1].sha256
    assert a[1].sha256 != c[1].sha256


@pytest.mark.parametrize("model", ["gauss-markov", "lognormal-markov"])
def test_generated_rates_have_the_asked_mean_spread_and_memory(model):
    mean, cv, tau, bin_ms = 40.0, 0.3, 0.5, 10
    rates = generate_rates(model, 3, mean, 600, cv, tau, bin_ms)
    assert len(rates) == 60000
    assert statistics.fmean(rates) == pytest.approx(mean, rel=1e-3)  # exact but for the floor
    assert statistics.pstdev(rates) / mean == pytest.approx(cv, rel=0.15)
    assert min(rates) >= floor_mbit(bin_ms)
    # Autocorrelation at lag tau is about 1/e for these processes (exactly so for the Gauss-Markov one).
    lag = round(tau * 1e3 / bin_ms)
    m = statistics.fmean(rates)
    num = sum((x - m) * (y - m) for x, y in zip(rates, rates[lag:]))
    den = sum((x - m) ** 2 for x in rates)
    assert num / den == pytest.approx(math.exp(-1), abs=0.1)


def test_lognormal_is_skewed_gauss_markov_is_not():
    g = generate_rates("gauss-markov", 1, 30, 600, 0.4, 0.5)
    ln = generate_rates("lognormal-markov", 1, 30, 600, 0.4, 0.5)
    assert statistics.median(ln) < statistics.fmean(ln) * 0.97   # a long upper tail
    assert statistics.median(g) == pytest.approx(statistics.fmean(g), rel=0.03)


def test_generated_trace_replays_what_its_file_says():
    text, trace = generated_trace("lognormal-markov", 2, 20, 3, 0.5, 1.0)
    assert trace_from_text(text, "again").rates_mbit == trace.rates_mbit
    assert trace.mean_mbit == pytest.approx(20, rel=0.01)  # whole frames per bin


def test_unknown_model_and_bad_numbers_are_refused():
    with pytest.raises(TraceError, match="unknown trace model"):
        generate_rates("pareto", 1, 10, 1, 0.1, 0.1)
    with pytest.raises(TraceError, match="mean > 0"):
        generate_rates("gauss-markov", 1, 0, 1, 0.1, 0.1)


def test_capacity_wraps_around_the_period():
    text = write_mahimahi([10 * FRAME_MBIT / 10e-3, 30 * FRAME_MBIT / 10e-3], 10)  # 10 then 30 frames
    trace = trace_from_text(text, "t")
    frames = OPPORTUNITY_FRAME_BYTES
    assert trace.capacity_bytes(0, 0.02) == pytest.approx(40 * frames)
    assert trace.capacity_bytes(0, 0.01, offset_s=0.01) == pytest.approx(30 * frames)
    assert trace.capacity_bytes(0, 0.03, offset_s=0.01) == pytest.approx(70 * frames)  # 30 + 10 + 30


# -- link models in scenarios --------------------------------------------------

def scenario(bottleneck: dict, reps: int = 1, cases=None, **extra) -> dict:
    return {"name": "s", "bottleneck": bottleneck, "pairs": [{"rtt": "50ms"}], "repetitions": reps,
            "cases": cases or [{"name": "a", "flows": [{"pair": 1, "cc": "cubic_hs", "size": "1MB"}]}], **extra}


def test_wifi_takes_its_preset_and_a_field_overrides_it():
    s = parse_scenario(scenario({"link": {"kind": "wifi"}}))
    assert s.bottleneck.rate_mbit == 50 and s.buffer_packets == 1000
    assert s.bottleneck.link.preset == "wifi"
    assert s.bottleneck.link.aggregation.down.max == pytest.approx(0.004)
    s2 = parse_scenario(scenario({"rate": "20mbit", "buffer": {"packets": 200},
                                  "link": {"kind": "wifi", "trace": {"seed": 9},
                                           "aggregation": {"up": None}}}))
    assert s2.bottleneck.rate_mbit == 20 and s2.buffer_packets == 200
    assert s2.bottleneck.link.trace.seed == 9 and s2.bottleneck.link.trace.model == "gauss-markov"
    assert s2.bottleneck.link.aggregation.up is None and s2.bottleneck.link.aggregation.down is not None
    assert s2.bottleneck.rate_trace().mean_mbit == pytest.approx(20, rel=0.01)


def test_cellular_takes_lte_unless_named_and_a_wrong_pairing_is_refused():
    assert parse_scenario(scenario({"link": {"kind": "cellular"}})).bottleneck.rate_mbit == 32
    s = parse_scenario(scenario({"link": {"kind": "cellular", "preset": "5g"}}))
    assert s.bottleneck.rate_mbit == 100 and s.buffer_packets == round(100e6 * 0.1 / 8 / 1514)
    with pytest.raises(ScenarioError, match="preset 'wifi' is a wifi link, not cellular"):
        parse_scenario(scenario({"link": {"kind": "cellular", "preset": "wifi"}}))
    with pytest.raises(ScenarioError, match="unknown link preset"):
        parse_scenario(scenario({"link": {"kind": "wifi", "preset": "lora"}}))


def test_searchs_paths_are_presets_each_varying_its_delay():
    """geo and leo (a satellite kind; geo its default) and lte-search: the draft's cycles (2 s, 0.1 s,
    0.17 s), a depth of a third of the draft's minimum RTT, 1 BDP buffers at that RTT (LTE: the lte
    preset's 560 frames)."""
    geo = parse_scenario(dict(scenario({"link": {"kind": "satellite"}}), pairs=[{"rtt": "600ms"}]))
    link = geo.bottleneck.link
    assert link.preset == "geo" and geo.bottleneck.rate_mbit == 50 and geo.buffer_packets == 2477
    extra = link.delay_variation.extra_ms()
    # 2 s in 10 ms bins: 200, from the trough (0) to the peak (200 ms) half-way.
    assert len(extra) == 200 and extra[0] == 0 and extra[100] == 200 and extra[50] == pytest.approx(100)
    leo = parse_scenario(scenario({"link": {"kind": "satellite", "preset": "leo"}}))
    assert leo.bottleneck.rate_mbit == 100 and len(leo.bottleneck.link.delay_variation.extra_ms()) == 20
    assert max(leo.bottleneck.link.delay_variation.extra_ms()) == 10
    lte = parse_scenario(scenario({"link": {"kind": "cellular", "preset": "lte-search"}}))
    assert lte.buffer_packets == 560 and len(lte.bottleneck.link.delay_variation.extra_ms()) == 17
    with pytest.raises(ScenarioError, match="preset 'geo' is a satellite link, not cellular"):
        parse_scenario(scenario({"link": {"kind": "cellular", "preset": "geo"}}))


def test_a_varying_delay_from_a_trace_file(tmp_path):
    f = tmp_path / "rtt.txt"
    f.write_text("# extra one-way delay, ms, one per 20 ms bin\n0\n5.5\n\n12  # the peak\n5\n")
    s = parse_scenario(scenario({"rate": "10mbit", "buffer": {"packets": 100},
                                 "link": {"delay_variation": {"trace": str(f), "bin": "20ms"}}}))
    assert s.bottleneck.link.delay_variation.extra_ms() == [0, 5.5, 12, 5]
    for text, said in (("1\nfast\n", "rtt.txt:2: 'fast' is not a delay in ms"), ("-1\n", "0 to 5000 ms"),
                       ("# none\n", "no delay in it")):
        f.write_text(text)
        with pytest.raises(ScenarioError, match=said):
            parse_scenario(scenario({"rate": "10mbit", "buffer": {"packets": 100},
                                     "link": {"delay_variation": {"trace": str(f)}}}))
    with pytest.raises(ScenarioError, match="give period and depth"):
        parse_scenario(scenario({"rate": "10mbit", "buffer": {"packets": 100},
                                 "link": {"delay_variation": {"trace": str(f), "period": "1s", "depth": "5ms"}}}))
    with pytest.raises(ScenarioError, match="give period and depth"):
        parse_scenario(scenario({"rate": "10mbit", "buffer": {"packets": 100},
                                 "link": {"delay_variation": {"period": "1s"}}}))


def test_a_trace_file_sets_the_mean_unless_a_rate_scales_it(tmp_path):
    f = tmp_path / "t.mahi"
    f.write_text(write_mahimahi([10 * FRAME_MBIT / 10e-3] * 5 + [30 * FRAME_MBIT / 10e-3] * 5, 10))
    own = parse_scenario(scenario({"buffer": {"packets": 100}, "link": {"kind": "wired", "trace": str(f)}}))
    assert own.bottleneck.rate_mbit == pytest.approx(20 * FRAME_MBIT / 10e-3)
    scaled = parse_scenario(scenario({"rate": "10mbit", "buffer": {"packets": 100},
                                      "link": {"kind": "wired", "trace": str(f)}}))
    t = scaled.bottleneck.rate_trace()
    assert t.mean_mbit == pytest.approx(10) and t.rates_mbit[-1] == pytest.approx(3 * t.rates_mbit[0])
    assert "scaled" in t.source


def test_a_bad_trace_file_is_refused_with_its_line(tmp_path):
    f = tmp_path / "bad.mahi"
    f.write_text("1\n2\nx\n")
    with pytest.raises(ScenarioError, match=r"bad.mahi:3: not a whole number"):
        parse_scenario(scenario({"rate": "10mbit", "buffer": {"packets": 10}, "link": {"trace": str(f)}}))
    with pytest.raises(ScenarioError, match="no trace file"):
        parse_scenario(scenario({"rate": "10mbit", "buffer": {"packets": 10}, "link": {"trace": "nope.mahi"}}))


@pytest.mark.parametrize("link, message", [
    ({"kind": "wifi", "bin": "2.5ms"}, "whole number of ms"),
    ({"kind": "wifi", "aggregation": {"down": {"min": "5ms", "max": "1ms"}}}, "min <= max"),
    ({"kind": "wifi", "trace": {"cv": -1}}, "greater than or equal to 0"),
    ({"kind": "wifi", "trace": {"tau": "0s"}}, "tau must be"),
    ({"kind": "lora"}, "Input should be 'wired', 'wifi', 'cellular' or 'satellite'"),
])
def test_bad_link_fields_are_refused_by_name(link, message):
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(scenario({"link": link}))


def test_buffer_as_time_at_the_mean_rate():
    s = parse_scenario(scenario({"rate": "40mbit", "buffer": {"time": "300ms"}}))
    assert s.buffer_packets == round(40e6 * 0.3 / 8 / 1514)
    with pytest.raises(ScenarioError, match="exactly one of packets, bytes, bdp or time"):
        parse_scenario(scenario({"rate": "40mbit", "buffer": {"time": "300ms", "packets": 5}}))


def test_the_plan_carries_shaper_trace_and_slots():
    wired = link_plan(parse_scenario(scenario({"rate": "50mbit", "buffer": {"packets": 100}})))
    assert wired["shaper"] == "netem" and wired["trace"] is None and wired["down"] == []
    wifi = link_plan(parse_scenario(scenario({"link": {"kind": "wifi"}})))
    assert wifi["shaper"] == "htb" and len(wifi["trace"]["rates_mbit"]) == 6000
    assert wifi["down"] == [{"stage": "bursts", "min_ms": 2.0, "max_ms": 4.0, "packets": 64}]


def test_every_case_of_a_repetition_meets_the_trace_at_one_point():
    cases = [{"name": n, "flows": [{"pair": 1, "cc": cc, "size": "1MB"}]}
             for n, cc in (("a", "cubic_hs"), ("b", "cubic_suss"))]
    s = parse_scenario(scenario({"link": {"kind": "wifi"}}, reps=4, cases=cases))
    plan = plan_data(s)
    by_rep: dict[int, set] = {}
    for run in plan["runs"]:
        by_rep.setdefault(run["rep"], set()).add(run["trace_offset_s"])
    assert all(len(v) == 1 for v in by_rep.values())
    assert len({next(iter(v)) for v in by_rep.values()}) == 4          # the repetitions differ
    assert all(o * 1e3 % 10 == pytest.approx(0, abs=1e-6) for v in by_rep.values() for o in v)  # whole bins
    other = parse_scenario(scenario({"link": {"kind": "wifi"}}, reps=4, cases=cases, seed=99))
    assert [trace_offset(other, r) for r in range(4)] != [trace_offset(s, r) for r in range(4)]
    fixed = parse_scenario(scenario({"link": {"kind": "wifi"}}, variation={"trace_offset": "1.5s"}))
    assert trace_offset(fixed, 0) == 1.5


# -- the link's fidelity --------------------------------------------------------

def rows(per_bin: list[tuple[float, int, int]], bin_s: float = 0.01) -> list[list[float]]:
    """Replay rows from (rate Mbit/s, bytes sent in the bin, queue at its start)."""
    out, sent = [], 0
    for k, (rate, b, q) in enumerate(per_bin):
        out.append([k * bin_s, rate, sent, q, 0])
        sent += b
    out.append([len(per_bin) * bin_s, per_bin[-1][0], sent, per_bin[-1][2], 0])
    return out


def test_fidelity_judges_busy_bins_only():
    full = 12.112 * 1e6 / 8 * 0.01  # 10 frames per 10 ms at 12.112 Mbit/s
    # Busy: a bin that starts with more than its 10 frames queued (bins 1 and 2).  Bin 3 starts with 8
    # and ends with 3 queued, yet sends 5 frames: its queue ran dry in between, which says nothing.
    r = rows([(12.112, 0, 0), (12.112, full, 25), (12.112, full, 15), (12.112, 5 * 1514, 8), (12.112, 0, 3)])
    f = replay_fidelity({"rows": r, "rate_tolerance": 0.02})
    assert f["busy_bins"] == 2 and f["delivered_over_allowed"] == pytest.approx(1.0) and f["ok"]
    short = rows([(12.112, 0, 0), (12.112, full * 0.9, 25), (12.112, full * 0.9, 17), (12.112, 0, 0)])
    bad = replay_fidelity({"rows": short, "rate_tolerance": 0.02})
    assert bad["delivered_over_allowed"] == pytest.approx(0.9) and not bad["ok"]
    assert not replay_fidelity({"rows": r, "error": "RuntimeError('tc -batch ended')"})["ok"]


def test_rate_series_gives_delivered_rate_per_bin():
    full = 12.112 * 1e6 / 8 * 0.01
    s = rate_series({"rows": rows([(12.112, full, 4), (24.224, full, 9)])})
    assert [round(x[2], 3) for x in s] == [12.112, 12.112] and [x[3] for x in s] == [4, 9]


def test_burst_summary():
    b = burst_summary([1, 4, 4, 16, 5])
    assert b["bursts"] == 5 and b["segments"] == 30 and b["max"] == 16 and b["p50"] == 4
    assert b["share_in_bursts_of_2_plus"] == pytest.approx(29 / 30, abs=1e-3)
    assert burst_summary([]) == {"bursts": 0}


# -- E4's improvement and the SUSS paper's headline check ----------------------------

def records(link: str, rtt: float, size: int, off: list[float], on: list[float]) -> list[dict]:
    return ([{"link": link, "rtt_ms": rtt, "size": size, "cc": "cubic_hs", "fct_s": x} for x in off]
            + [{"link": link, "rtt_ms": rtt, "size": size, "cc": "cubic_suss", "fct_s": x} for x in on])


def test_improvement_is_off_minus_on_over_off_with_its_interval():
    from sslab.analysis.lastmile import improvements
    imp = improvements(records("wifi", 150, 1_000_000, [1.0, 1.1, 0.9], [0.7, 0.75, 0.65]), "cubic_hs", "cubic_suss")
    assert len(imp) == 1
    r = imp[0]
    assert r["improvement"] == pytest.approx(0.3) and r["significant"]
    lo, hi = r["improvement_ci"]
    assert lo < 0.3 < hi
    flat = improvements(records("wifi", 150, 1_000_000, [1.0, 1.2], [1.1, 1.1]), "cubic_hs", "cubic_suss")[0]
    assert flat["improvement"] == pytest.approx(0.0) and not flat["significant"]


def test_headline_needs_every_size_under_5mb_above_20pct_and_only_over_50ms():
    from sslab.analysis.lastmile import headline, improvements
    recs = (records("lte", 150, 1_000_000, [1.0, 1.0], [0.6, 0.6])
            + records("lte", 150, 4_000_000, [2.0, 2.0], [1.7, 1.7])     # 15%: short of 20%
            + records("lte", 150, 8_000_000, [4.0, 4.0], [4.0, 4.0])     # over 5 MB: not judged
            + records("wired", 150, 2_000_000, [1.0, 1.0], [0.7, 0.7])
            + records("wired", 40, 2_000_000, [1.0, 1.0], [1.0, 1.0])    # 40 ms: not judged
            # 25 % on average, but 0.6 and 0.9 on: the CI spans 20 % (and 0)
            + records("wifi", 150, 1_000_000, [1.0, 1.0], [0.6, 0.9]))
    h = {(x["link"], x["rtt_ms"]): x for x in headline(improvements(recs, "cubic_hs", "cubic_suss"), 0.20, 5_000_000, 50)}
    assert set(h) == {("lte", 150), ("wired", 150), ("wifi", 150)}
    assert h[("lte", 150)]["verdict"] == "not reproduced" and h[("lte", 150)]["short_of_20pct"] == [4_000_000]
    assert h[("lte", 150)]["least"] == pytest.approx(0.15)
    assert h[("wired", 150)]["verdict"] == "reproduced"
    # A mean over 20 % is no verdict when the CI is not.
    assert h[("wifi", 150)]["least"] == pytest.approx(0.25) and h[("wifi", 150)]["verdict"] == "not decided at n = 2"
