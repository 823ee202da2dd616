"""A report's data as a tidy table (sslab.analysis.tidy: flows.csv) and as a DataFrame (sslab.results),
from a run directory written here the way a run writes it: its plan, its meta, two runs of two flows."""

import json
from pathlib import Path

import pytest

from sslab import results
from sslab.analysis import tidy
from sslab.experiment.plan import plan_for
from sslab.paths import REPO_ROOT
from sslab.records import plan_record, stamped
from sslab.scenario import load_scenario


def flow(pair, cc, size, fct, exit_cwnd):
    return {"pair": pair, "cc": cc, "cc_used": cc, "size": size, "start": 0.0, "fct_s": fct, "server_fct_s": fct - 0.02,
            "bytes_received": size, "suss_version": None, "receiver_limited_acks": 0,
            "slow_start": {"exit_cwnd": exit_cwnd, "exit_time_s": 0.5}}


def a_run_dir(d: Path) -> Path:
    s = load_scenario(REPO_ROOT / "tests" / "data" / "e1-smoke.yaml")
    out = d / "job" / "out"
    (out / "runs").mkdir(parents=True)
    (d / "plan.json").write_text(json.dumps(plan_record(plan_for(s, "uml", "uml/inf-cpu"))))
    (d / "meta.json").write_text(json.dumps(stamped("sslab.meta", {
        "substrate": "uml", "clock": "uml/inf-cpu", "code": {"commit": "0123456789abcdef", "dirty": True},
        "image": {"hash": "fedcba9876543210"}, "guest_kernel": {"release": "6.1.192-sslab-uml"}})))
    runs = [("000-cubic_hs-2MB-r0", "cubic_hs", 0, [flow(1, "cubic_hs", 2_000_000, 1.25, 300)], 7),
            ("001-cubic_suss-2MB-r0", "cubic_suss", 0, [flow(1, "cubic_suss", 2_000_000, 1.0, 400),
                                                         flow(2, "cubic_suss", 500_000, 0.4, None)], 0)]
    for tag, cc, rep, flows, drops in runs:
        (out / "runs" / tag).mkdir()
        (out / "runs" / tag / "run.json").write_text(json.dumps(stamped("sslab.run", {
            "tag": tag, "run": {"case": f"{cc}-2MB", "rep": rep, "params": {"cc": cc, "size": "2MB"}},
            "flows": flows, "bottleneck": {"drops": drops}, "tcp_counters": {"1": {"RetransSegs": drops + 1}},
            "fidelity": {"base_rtt_ok": True, "rate_ok": True, "spin_guard_charges": 0}})))
    (out / "runs.json").write_text(json.dumps(stamped("sslab.runs", {"runs": [{"tag": t} for t, *_ in runs]})))
    return d


def test_a_row_per_flow_per_run_with_the_setting_as_columns(tmp_path):
    run_dir = a_run_dir(tmp_path / "run")
    rows = tidy.flow_rows(run_dir, relative_to=tmp_path / "report")
    assert [(r["run"], r["flow"], r["cc"], r["fct_s"]) for r in rows] == [
        ("000-cubic_hs-2MB-r0", 0, "cubic_hs", 1.25), ("001-cubic_suss-2MB-r0", 0, "cubic_suss", 1.0),
        ("001-cubic_suss-2MB-r0", 1, "cubic_suss", 0.4)]
    first = rows[0]
    # E1's path: 50 Mbit/s, a 1 BDP buffer at 100 ms (413 frames of 1514 B), pair 1's RTT 100 ms.
    assert (first["scenario"], first["rate_mbit"], first["buffer_pkts"], first["rtt_ms"], first["link"]) == (
        "e1-smoke", 50.0, 413, 100.0, "wired")
    assert (first["substrate"], first["clock"], first["kernel"], first["image"], first["code"]) == (
        "uml", "uml/inf-cpu", "6.1.192-sslab-uml", "fedcba987654", "0123456789ab+dirty")
    assert (first["run_dir"], first["lost"], first["retransmissions"], first["fidelity_ok"]) == ("../run", 7, 8, True)
    assert (first["param_cc"], first["param_size"], first["exit_cwnd"]) == ("cubic_hs", "2MB", 300)
    assert rows[2]["exit_cwnd"] is None and rows[2]["pair"] == 2


def test_the_csv_and_the_dataframe_hold_the_same_numbers(tmp_path):
    run_dir = a_run_dir(tmp_path / "run")
    report = tmp_path / "report"
    report.mkdir()
    out = tidy.write_flows_table(report, [run_dir])
    header = out.read_text().splitlines()[0].split(",")
    assert header == [*tidy.COLUMNS, "param_cc", "param_size"]
    df = results.load(report)
    # Every column of the file, then a setting in one unit as a number, named with its unit ("2MB": 2.0).
    assert list(df.columns) == [*header, "param_size_mb"] and len(df) == 3
    assert df.param_size_mb.tolist() == [2.0, 2.0, 2.0] and df.param_size.tolist() == ["2MB"] * 3
    assert df.groupby("cc").fct_s.mean().to_dict() == pytest.approx({"cubic_hs": 1.25, "cubic_suss": 0.7})
    assert df.exit_cwnd.isna().tolist() == [False, False, True]   # an empty cell is a missing value
    # Counts are integers, a missing one missing (not a float NaN that turns 300 into 300.0).
    assert str(df.exit_cwnd.dtype) == "Int64" and df.exit_cwnd.tolist()[:2] == [300, 400]
    assert str(df.lost.dtype) == "Int64" and str(df.fct_s.dtype) == "float64"
    # The run directory itself, read from its archive: the same table.
    direct = results.load(run_dir)
    assert direct.fct_s.tolist() == df.fct_s.tolist() and list(direct.columns) == list(df.columns)
    assert str(direct.exit_cwnd.dtype) == "Int64"


def test_a_directory_with_nothing_to_read_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no flows.csv there"):
        results.load(tmp_path)


def test_a_matrix_cell_adds_its_axes_and_iteration(tmp_path):
    run_dir = a_run_dir(tmp_path / "cell")
    out = tidy.write_flows_table(tmp_path, [run_dir], [{"setting": {"large_cc": "cubic", "buffer": "1BDP"}, "rep": 3}])
    df = results.load(tmp_path)
    assert list(df.columns) == [*tidy.COLUMNS, "axis_buffer", "axis_large_cc", "iteration", "param_cc", "param_size",
                                "axis_buffer_bdp", "param_size_mb"]
    assert set(df.axis_large_cc) == {"cubic"} and set(df.iteration) == {3} and out.name == "flows.csv"
    assert set(df.axis_buffer_bdp) == {1.0} and str(df.iteration.dtype) == "Int64"


def test_a_setting_in_one_unit_sorts_as_a_number():
    """Table 1's minRTTs as flows.csv writes them sort as text ("100ms" before "25ms"); their twin in ms
    sorts as numbers.  A column mixing units, or with a value that is no number, gains no twin."""
    import pandas as pd
    df = results.typed(pd.DataFrame({"axis_large_rtt": ["100ms", "25ms", "200ms", "50ms"],
                                     "axis_large_cc": ["cubic", "bbr", "bbr2", "bbr3"],
                                     "param_mixed": ["1MB", "5kB", "2MB", "3MB"], "lost": [1.0, None, 3.0, 0.0]}))
    assert sorted(df.axis_large_rtt) == ["100ms", "200ms", "25ms", "50ms"]
    assert df.sort_values("axis_large_rtt_ms").axis_large_rtt.tolist() == ["25ms", "50ms", "100ms", "200ms"]
    assert "axis_large_cc_" not in "".join(df.columns) and "param_mixed_mb" not in df.columns
    assert str(df.lost.dtype) == "Int64" and df.lost.isna().tolist() == [False, True, False, False]
