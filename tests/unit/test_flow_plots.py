"""Goodput over time from a client's received-bytes samples (sslab.analysis.plots.throughput_bins), and its plot."""

import pytest

from sslab.analysis.plots import plot_flows_over_time, throughput_bins


def test_bytes_are_binned_where_they_arrived_shared_across_a_bin_edge():
    # 0.5 s bins.  0.1 -> 0.4 s: 1 MB, all in bin 0.  0.4 -> 0.6 s: 1 MB, half before 0.5 s, half after.
    # 0.6 -> 1.6 s: 2 MB spread evenly: 0.8 MB in bin 1 (0.6-1.0), 1 MB in bin 2, 0.2 MB in bin 3.
    t, mbit = throughput_bins([[0.1, 0], [0.4, 1_000_000], [0.6, 2_000_000], [1.6, 4_000_000]])
    assert t == [0.0, 0.5, 1.0, 1.5]
    mb = [m * 0.5 / 8 for m in mbit]  # back to MB per bin
    assert mb == pytest.approx([1.5, 0.5 + 0.8, 1.0, 0.2])
    assert sum(mb) == pytest.approx(4.0)


def test_no_samples_no_bins_and_a_stalled_flow_adds_nothing():
    assert throughput_bins([]) == ([], []) and throughput_bins([[1.0, 5]]) == ([], [])
    t, mbit = throughput_bins([[0.0, 0], [0.5, 0], [1.0, 625_000]])
    assert t == [0.0, 0.5, 1.0] and mbit == pytest.approx([0.0, 10.0, 0.0])


def test_the_plot_has_a_panel_per_side(tmp_path):
    run = {"flows": [{"fct_s": 30.0, "rx_series": [[0.0, 0], [10.0, 60_000_000], [30.0, 150_000_000]]},
                     {"fct_s": 1.5, "rx_series": [[2.0, 0], [3.5, 2_000_000]]}]}
    out = plot_flows_over_time([("SUSS off", run), ("SUSS on", run)], tmp_path, "f.png", "a cell")
    assert out == tmp_path / "f.png" and out.stat().st_size > 10_000
    assert plot_flows_over_time([("off", {"flows": [{"fct_s": 1.0}]})], tmp_path, "g.png", "x") is None
