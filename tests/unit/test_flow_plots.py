"""Goodput over time: from a client's received-bytes samples (sslab.analysis.plots.throughput_bins), from
the capture past the bottleneck (sslab.analysis.pcap.rate_bins), and its plot."""

import os

import dpkt
import pytest

from sslab.analysis.pcap import delivered_by_flow, rate_bins
from sslab.analysis.plots import flow_goodputs, plot_flows_over_time, same_as, throughput_bins, variant_style
from sslab.analysis.startup import repetitions_line

from .test_analysis import CLIENT, SERVER, frame


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
    out = plot_flows_over_time([("SUSS off", run, None), ("SUSS on", run, None)], tmp_path, "f.png", "a cell",
                               link_mbit=50)
    assert out == tmp_path / "f.png" and out.stat().st_size > 10_000
    assert plot_flows_over_time([("off", {"flows": [{"fct_s": 1.0}]}, None)], tmp_path, "g.png", "x") is None


def test_capture_bytes_are_binned_where_they_passed():
    # 0.5 s bins from origin 10.0: 1000 B at 10.1 and 10.4 (bin 0), none in bin 1, 3000 B at 11.2 (bin 2).
    t, mbit = rate_bins([10.1, 10.4, 11.2], [1000, 2000, 5000], origin=10.0, bin_s=0.5)
    assert t == [0.0, 0.5, 1.0]
    assert mbit == pytest.approx([2000 * 8 / 0.5 / 1e6, 0.0, 3000 * 8 / 0.5 / 1e6])
    assert rate_bins([], [], 0.0, 0.5) == ([], [])


def two_flows(path, mss=1448):
    """Flows to server ports 5201 (SYN at 1.0) and 5202 (SYN at 1.3); 5201 sends segments 0, 2, 1 (a
    hole filled), 5202 segment 0 twice (a duplicate)."""
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, snaplen=96)
        for port, syn in ((5201, 1.0), (5202, 1.3)):
            w.writepkt(frame(CLIENT, SERVER, 40000 + port, port, 7000, dpkt.tcp.TH_SYN), ts=syn)
            w.writepkt(frame(SERVER, CLIENT, port, 40000 + port, 9999, dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK), ts=syn + 0.05)
        for port, n, t in ((5201, 0, 1.2), (5201, 2, 1.21), (5202, 0, 1.4), (5201, 1, 1.6), (5202, 0, 1.7)):
            w.writepkt(frame(SERVER, CLIENT, port, 40000 + port, 10000 + n * mss, dpkt.tcp.TH_ACK, mss), ts=t)


def test_every_flows_new_data_in_one_pass_on_one_clock(tmp_path):
    path, mss = tmp_path / "two.pcap", 1448
    two_flows(path, mss)
    got = delivered_by_flow(path, [5201, 5202])
    assert got[5201][0] == pytest.approx(1.0) and got[5202][0] == pytest.approx(1.3)
    assert got[5201][1] == pytest.approx([1.2, 1.21, 1.6]) and got[5201][2] == [mss, 2 * mss, 3 * mss]
    assert got[5202][1] == pytest.approx([1.4]) and got[5202][2] == [mss]
    # The plot's bins: both flows from the first SYN (1.0), so 5202's segment at 1.4 s is in bin 0.
    run = {"flows": [{"port": 5201, "fct_s": 0.6}, {"port": 5202, "fct_s": 0.4}]}
    bins, xlabel, what = flow_goodputs(run, path)
    assert xlabel == "time since the first SYN at the bottleneck (s)" and what == "new data past the bottleneck"
    assert bins[0] == ([0.0, 0.5], pytest.approx([2 * mss * 8 / 0.5 / 1e6, mss * 8 / 0.5 / 1e6]))
    assert bins[1] == ([0.0], pytest.approx([mss * 8 / 0.5 / 1e6]))


def test_a_line_that_repeats_another_says_so_and_styles_tell_variants_apart():
    a, b = ([0, 1], [1, 2]), ([0, 1], [1, 3])
    assert same_as(["cubic_ss (1.2 s)", "cubic_hs (1.2 s)", "cubic_suss (1.0 s)"], [a, a, b]) == [
        "cubic_ss (1.2 s)", "cubic_hs (1.2 s) (= cubic_ss)", "cubic_suss (1.0 s)"]
    assert same_as(["x", "y"], [([], []), ([], [])]) == ["x", "y"]  # nothing drawn: nothing said
    styles = [variant_style(i) for i in range(4)]
    assert len({(s["color"], s["ls"]) for s in styles}) == 4 and styles[0]["ls"] != styles[1]["ls"]


def test_one_repetition_is_said_and_not_called_a_ci():
    once = {"a": {"runs": 1}, "b": {"runs": 1}}
    assert repetitions_line(once).startswith("One repetition: each value is that run's own; no CI")
    assert repetitions_line({**once, "c": {"runs": 3}}).startswith("Median [95% CI of the mean")


def test_the_small_multiples_have_a_panel_per_setting_and_side(tmp_path):
    from sslab.analysis.plots import plot_flows_grid
    run = {"flows": [{"fct_s": 30.0, "rx_series": [[0.0, 0], [10.0, 60_000_000], [30.0, 150_000_000]]},
                     {"fct_s": 1.5, "rx_series": [[2.0, 0], [3.5, 2_000_000]]}]}
    panels = {("25ms", "1BDP, SUSS off"): (run, None, {0: 25.0, 1: 50.0}),
              ("25ms", "1BDP, SUSS on"): (run, None, {0: 25.0, 1: 50.0})}
    out = plot_flows_grid(panels, ["25ms", "50ms"], ["1BDP, SUSS off", "1BDP, SUSS on"], tmp_path, "g.png", "CUBIC",
                          link_mbit=50)
    assert out == tmp_path / "g.png" and out.stat().st_size > 10_000
    assert plot_flows_grid({("a", "b"): ({"flows": [{"fct_s": 1.0}]}, None, {})}, ["a"], ["b"], tmp_path, "h.png",
                           "x") is None


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="reading ahead takes two cores or more")
def test_captures_read_ahead_in_other_processes_give_the_same_bins(tmp_path):
    from sslab.analysis import plots
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    two_flows(a)
    two_flows(b, mss=1000)
    wanted = [(a, (5201, 5202)), (b, (5201, 5202)), (a, (5201, 5202))]   # a twice: read once
    here = [plots._capture_bins(*w) for w in wanted[:2]]
    plots.prefetch_capture_bins(wanted)
    try:
        assert [plots._BINS[w] for w in wanted[:2]] == here and len(plots._BINS) >= 2
        assert plots.capture_bins(a, (5201, 5202)) == here[0]
    finally:
        plots._BINS.clear()
