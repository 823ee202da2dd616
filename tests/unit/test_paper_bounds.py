"""What the SUSS paper's numbers allow (sslab.papers.suss.paper_bounds), with hand-worked numbers (the verdict on
ours beside them: test_verdict.py)."""

import pytest
import yaml

from sslab.papers.suss import paper_bounds as pb
from sslab.paths import REPO_ROOT

REF = yaml.safe_load((REPO_ROOT / "results/reference/table1.yaml").read_text())
MSS = 1448


def test_frames_on_the_wire():
    assert pb.mss_of(1500) == MSS
    # 150 MB: 150e6 / 1448 = 103 591.2 -> 103 592 segments, 66 header bytes each.
    assert pb.wire_bytes(150_000_000, MSS) == 150_000_000 + 103_592 * 66 == 156_837_072
    # ... at 50 Mbit/s: 156 837 072 * 8 / 50e6 = 25.0939 s; with 24 MB more, 29.11 s.
    assert pb.transfer_s(150_000_000, 50, MSS) == pytest.approx(25.0939, abs=1e-4)
    assert pb.transfer_s(174_000_000, 50, MSS) == pytest.approx(29.109, abs=1e-3)


def test_slow_start_rounds_from_iw10():
    # 2 MB = 1382 segments: 10 (2^7 - 1) = 1270 is short, 10 (2^8 - 1) = 2550 is enough.
    assert pb.slow_start_rounds(2_000_000, MSS) == 8
    assert pb.slow_start_rounds(10 * MSS, MSS) == 1
    assert pb.slow_start_rounds(10 * MSS + 1, MSS) == 2
    assert pb.slow_start_rounds(2_000_000, MSS, iw=4) == 9  # 4 x 511 = 2044 >= 1382; 4 x 255 = 1020 is short


def test_fct_floors_at_the_client_and_the_server():
    # 2 MB at 162.5 ms: nine round trips at the client (1.4625 s), eight at the server (1.30 s).
    assert pb.fct_floor_s(2_000_000, 0.1625, 50, MSS) == pytest.approx(1.4625)
    assert pb.fct_floor_s(2_000_000, 0.1625, 50, MSS, "server") == pytest.approx(1.30)
    # At 25 ms the transfer dominates: 2 x 25 ms + 2 091 212 * 8 / 50e6 = 0.05 + 0.33459 s.
    assert pb.fct_floor_s(2_000_000, 0.025, 50, MSS) == pytest.approx(0.38459, abs=1e-5)
    with pytest.raises(ValueError, match="timing 'wall'"):
        pb.fct_floor_s(1, 0.1, 50, MSS, "wall")


def test_the_largest_payload_and_mean_rtt_a_value_allows():
    # 24.15 s (24.1 and its rounding) at 25 ms from the client: (24.15 - 0.05) * 50e6 / 8 wire bytes,
    # 150 625 000, of which 1448 / 1514 is payload: 144.06 MB.
    assert pb.largest_payload(24.15, 0.025, 50, MSS) == pytest.approx(144_058_784, abs=2)
    # 1.185 s (1.18 rounded) over nine round trips: 131.7 ms; over eight: 148.1 ms.
    assert pb.largest_mean_rtt_s(1.185, 2_000_000, MSS) == pytest.approx(0.13167, abs=1e-5)
    assert pb.largest_mean_rtt_s(1.185, 2_000_000, MSS, "server") == pytest.approx(0.148125)


def test_the_2bdp_means_the_average_rows_imply():
    got = {(v.cca, v.field): v for v in pb.implied_2bdp(REF)}
    # CUBIC: 2 x 28.8 - (30.4 + 37.9 + 29.0 + 27.2) / 4 = 57.6 - 31.125 = 26.475 (± 3 x 0.05);
    # small off: 4.56 - (1.33 + 1.18 + 1.42 + 2.69) / 4 = 4.56 - 1.655 = 2.905 (± 3 x 0.005).
    assert got["cubic", "off_large"].value == pytest.approx(26.475) and got["cubic", "off_large"].rounding == \
        pytest.approx(0.15)
    assert got["cubic", "off_small"].value == pytest.approx(2.905) and got["cubic", "off_small"].rounding == \
        pytest.approx(0.015)
    # small on: 3.10 - (0.94 + 0.98 + 1.22 + 2.03) / 4 = 1.8075; improvement 1 - 1.8075 / 2.905 = 37.78 %.
    assert got["cubic", "on_small"].value == pytest.approx(1.8075)
    assert got["cubic", "improvement_pct"].value == pytest.approx(37.78, abs=0.01)
    assert all(v.derived and v.buffer == "2BDP" and v.rtt is None for v in got.values())
    assert {c for c, _ in got} == {"cubic", "bbr", "bbr2"}
    # Without its four 1 BDP rows an Average implies nothing.
    assert pb.implied_2bdp({"rows": REF["rows"][:3], "averages": REF["averages"][:1]}) == []


TODAY = pb.Choices(rate_mbit=50, mtu=1500, large_bytes=150_000_000, small_bytes=[2_000_000] * 12,
                   small_rtts_ms=[25.0 * i for i in range(1, 13)], small_starts_s=[2.0 * i for i in range(1, 13)])


def test_todays_choices_are_ruled_out_by_the_papers_own_values():
    large, small = pb.bounds(REF, TODAY)
    # BBRv1's 24.1 (off, 25 ms), 24.3 (on, 25 ms) and 24.6 (off, 50 ms) are below what 150 MB needs.
    assert large.ruled_out
    assert [(v.cca, v.rtt, v.field, v.value) for v, _ in large.ruled_out_by] == [
        ("bbr", "25ms", "off_large", 24.1), ("bbr", "25ms", "on_large", 24.3), ("bbr", "50ms", "off_large", 24.6)]
    assert large.ruled_out_by[0][1] == pytest.approx(25.0939 + 0.05, abs=1e-4)
    assert "at most 144.1 MB at 50 Mbit/s" in large.allows
    # Mean small FCT >= (0.38459 + 9 x 1.925) / 12 = 1.47580 s: above CUBIC's 1.18, 1.33, 1.42 and BBRv2's 1.44.
    assert small.needs_s == pytest.approx(1.47580, abs=1e-5)
    assert sorted(v.value for v, _ in small.ruled_out_by) == [1.18, 1.33, 1.42, 1.44]
    assert "at most 132 ms" in small.allows
    assert small.line().startswith("small flows' minRTTs (12 flows of 2 MB, mean minRTT 162.5 ms, 8 rounds of slow "
                                   "start from IW 10, FCT timed at the client): **ruled out** by 4 paper value(s)")


def test_choices_the_paper_allows_are_said_so():
    # 140 MB and every small flow at 100 ms: 9 x 0.1 = 0.9 s, under every SUSS-off mean the paper prints.
    c = pb.Choices(rate_mbit=50, mtu=1500, large_bytes=140_000_000, small_bytes=[2_000_000] * 12,
                   small_rtts_ms=[100.0] * 12, small_starts_s=[2.0 * i for i in range(1, 13)])
    large, small = pb.bounds(REF, c)
    assert not large.ruled_out and not small.ruled_out
    assert small.needs_s == pytest.approx(0.9) and small.tightest.value == 1.18
    assert "allowed (the tightest paper value, 1.18 s" in small.line()


def test_a_plans_choices_are_read_from_its_pairs_and_flows():
    plan = {"bottleneck": {"rate_mbit": 50.0}, "topology": {"mtu": 1500},
            "pairs": [{"rtt_ms": 50.0}, {"rtt_ms": 25.0}, {"rtt_ms": 300.0}],
            "runs": [{"flows": [{"pair": 1, "size": 150_000_000, "start": 0.0},
                                {"pair": 3, "size": 2_000_000, "start": 2.0},
                                {"pair": 2, "size": 2_000_000, "start": 4.0}]}]}
    c = pb.Choices.of_plan(plan)
    assert (c.large_bytes, c.small_bytes, c.small_rtts_ms, c.small_starts_s) == \
        (150_000_000, [2_000_000] * 2, [300.0, 25.0], [2.0, 4.0])
