"""The oracle's pairing (ours and the kernel's twin of a scenario) and its comparison, on hand-made
records; tests/integration/test_oracle.py runs it on the testbed."""

import pytest

from sslab.analysis.oracle import (PROBE_ROW, FlowComparison, difference_text, first_difference, oracle_table,
                                   probe_rows)
from sslab.analysis.traces import parse
from sslab.experiment.oracle import OracleError, hystart_round_fix, load_oracle_scenarios, twins
from sslab.paths import REPO_ROOT
from sslab.scenario import load_scenario, parse_scenario
from sslab.scenario.load import scenario_file_data

PROBE = ("          <idle>-0       [000] ..s2.    {ts:.6f}: tcp_probe: family=AF_INET src=10.1.1.2:5201 "
         "dest=10.2.1.2:40000 mark=0x0 data_len=0 snd_nxt={nxt:#x} snd_una={una:#x} snd_cwnd={cwnd} "
         "ssthresh=2147483647 snd_wnd=1000000 srtt={srtt} rcv_wnd=65280 sock_cookie=2")


def _probes(isn: int, cwnds: list[int], srtt: int = 100000) -> list:
    text = "\n".join(PROBE.format(ts=1.0 + i / 1000, nxt=isn + (i + 10) * 1448, una=isn + i * 1448, cwnd=c, srtt=srtt)
                     for i, c in enumerate(cwnds))
    return parse(text)


def test_two_flows_with_other_isns_compare_equal_until_cwnd_differs():
    ours = probe_rows(_probes(0x1000, [10, 11, 12, 13]))
    kernel = probe_rows(_probes(0xFFFFFF00, [10, 11, 12, 14]))  # another ISN, wrapping
    assert ours[:3] == kernel[:3] and ours[0][1:3] == (0, 14480)
    diff = first_difference(ours, kernel, PROBE_ROW)
    assert diff == {"index": 3, "fields": {"snd_cwnd": {"ours": 13, "kernel": 14}}}
    assert first_difference(ours, ours, PROBE_ROW) is None
    # One side ending first differs where it ends.
    assert first_difference(ours, ours[:2], PROBE_ROW) == {
        "index": 2, "fields": {"records": {"ours": 4, "kernel": 2}}}


def _row(diff=None):
    return FlowComparison(run="000-x-r0", port=5201, cc_ours="cubic_hs", cc_kernel="cubic", acks=4, packets=9,
                          ack_difference=diff, packet_difference=None, exit_cwnd=(529, 529), lost=(0, 42),
                          fct_s=(1.5, 1.5))


def test_the_table_shows_a_value_once_where_both_sides_agree():
    table = oracle_table([("oracle-e1", _row())])
    assert "| oracle-e1 | 000-x-r0 | 5201 | cubic_hs | cubic | 4 | 9 | none | 529 | 0 / 42 | 1.500000 |" in table
    assert "drops (the run's, at the bottleneck)" in table
    diff = {"index": 3, "fields": {"snd_cwnd": {"ours": 13, "kernel": 14}}, "ours": [1.003, 0], "kernel": [1.003, 0]}
    row = _row(diff)
    assert not row.identical and not row.passes
    assert difference_text(row) == "ACK 4 (at 1.003): snd_cwnd 13 (kernel 14)"


def test_a_scenarios_twin_runs_the_kernels_cubic_with_the_same_plan_otherwise():
    ours, kernel = twins(scenario_file_data(REPO_ROOT / "kernel/tests/oracle/e1.yaml"))
    assert (ours.name, ours.seed, [c.name for c in ours.cases]) == (kernel.name, kernel.seed,
                                                                    [c.name for c in kernel.cases])
    assert [f.cc for c in ours.cases for f in c.flows] == ["cubic_ss", "cubic_ss", "cubic_hs", "cubic_hs"]
    assert {f.cc for c in kernel.cases for f in c.flows} == {"cubic"}
    # cubic_ss's twin is the kernel's cubic with HyStart off; both boots set it alike.
    assert [c.module_params for c in kernel.cases] == [c.module_params for c in ours.cases] == [
        {"tcp_cubic.hystart": 0}, {"tcp_cubic.hystart": 0}, {}, {}]
    assert hystart_round_fix(ours) == 1
    assert hystart_round_fix(load_scenario(REPO_ROOT / "kernel/tests/oracle/e1-519.yaml")) == 0


def test_what_the_oracle_cannot_pair_is_refused_before_anything_runs():
    base = {"name": "x", "bottleneck": {"rate": "50mbit", "buffer": {"packets": 100}}, "pairs": [{"rtt": "100ms"}],
            "cases": [{"name": "a", "flows": [{"pair": 1, "cc": "cubic_suss", "size": "1MB"}]}]}
    with pytest.raises(OracleError, match="cubic_suss has no kernel equivalent"):
        twins(base)
    mixed = {**base, "topology": {"pairs": 2}, "pairs": [{"rtt": "100ms"}, {"rtt": "100ms"}],
             "cases": [{"name": "a", "flows": [{"pair": 1, "cc": "cubic_ss", "size": "1MB"},
                                               {"pair": 2, "cc": "cubic_hs", "size": "1MB"}]}]}
    with pytest.raises(OracleError, match="mixes cubic_hs and cubic_ss"):
        twins(mixed)
    both = {**base, "cases": [{"name": "a", "flows": [{"pair": 1, "cc": "cubic_hs", "size": "1MB"}],
                               "module_params": {"hs_round_fix": 0}},
                              {"name": "b", "flows": [{"pair": 1, "cc": "cubic_hs", "size": "1MB"}],
                               "module_params": {"hs_round_fix": 1}}]}
    with pytest.raises(OracleError, match="both of cubic_hs's rounds"):
        hystart_round_fix(parse_scenario(both))
    # The oracle's own files load, and each is paired.
    names = sorted(p.stem for p in (REPO_ROOT / "kernel/tests/oracle").glob("*.yaml"))
    assert [s.name for _, (s, _), _ in load_oracle_scenarios(names)] == [f"oracle-{n}" for n in names]


def test_a_twin_is_its_data_edited_then_validated_once():
    """The twins are made from the file's data, not from a validated scenario dumped and read again: a
    case template's axes expand into the same cases, and the file's own refusals stand."""
    data = scenario_file_data(REPO_ROOT / "kernel/tests/oracle/e1.yaml")
    ours, _ = twins(data)
    assert [c.name for c in ours.cases] == [c.name for c in load_scenario(REPO_ROOT / "kernel/tests/oracle/e1.yaml").cases]
    with pytest.raises(Exception, match="repetitions"):
        twins({**data, "repetitions": 0})
