"""The knob table (sslab.scenario.knobs): each setting declared once, and what is made from it."""

import argparse
import re

import pytest

from sslab.paths import REPO_ROOT
from sslab.scenario import parse_scenario, scenario_from_dump
from sslab.scenario.model import ScenarioError
from sslab.scenario.knobs import KNOBS, add_options, apply, dir_suffix, given, make_line


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_options(p)
    return p


def test_the_makefile_passes_every_knob_as_the_table_says():
    lines = [line for line in (REPO_ROOT / "Makefile").read_text().splitlines() if line.startswith("KNOB_ARGS =")]
    assert lines == [make_line()]
    for k in KNOBS:
        # As NAME=value, the one resolver's (sslab.scenario.sets): an axis of the same name narrows it.
        assert f"$(if $({k.make_var}),--set {k.make_var}=$({k.make_var}))" in make_line()
    # and both kinds of experiment command get them
    text = (REPO_ROOT / "Makefile").read_text()
    assert re.search(r"^MATRIX_ARGS = \$\(KNOB_ARGS\)", text, re.M) and re.search(r"^RUN_ARGS = \$\(KNOB_ARGS\)", text, re.M)


def test_options_parse_into_the_values_by_name_and_refuse_what_a_knob_does_not_take():
    args = parser().parse_args(["--suss-version", "0", "--lans", "ovs"])
    assert given(args) == {"suss_version": 0, "lans": "ovs"}       # 0 is a value, not "unset"
    assert given(parser().parse_args([])) == {}
    with pytest.raises(SystemExit) as e:
        parser().parse_args(["--hosts", "10gbe"])
    assert e.value.code == 2


SCENARIO = {
    "name": "k", "topology": {"kind": "dumbbell", "pairs": 2},
    "bottleneck": {"rate": "50mbit", "buffer": {"bdp": 1, "rtt": "100ms"}},
    "pairs": [{"rtt": "100ms", "server": {"rx_cost": "2us"}}, {"rtt": "50ms"}],
    "module_params": {"hs_round_fix": 1},
    "cases": [{"name": "one", "flows": [{"pair": 1, "cc": "cubic_suss", "size": "1MB"}]}],
}


def test_apply_sets_each_field_and_keeps_the_rest():
    out = apply(SCENARIO, {"suss_version": 2025, "hosts": "logging", "lans": "ovs"})
    assert out["module_params"] == {"hs_round_fix": 1, "suss_version": 2025}   # merged, not replaced
    assert out["hosts"] == {"model": "logging"}
    # a pair's own host model gives way; a pair that set none is left as written
    assert out["pairs"] == [{"rtt": "100ms", "server": None}, {"rtt": "50ms"}]
    assert out["topology"] == {"kind": "dumbbell", "pairs": 2, "lans": "ovs"}
    assert SCENARIO["module_params"] == {"hs_round_fix": 1}                    # the input untouched
    assert apply(SCENARIO, None) == SCENARIO == apply(SCENARIO, {})


def test_apply_on_a_parsed_scenarios_dump_gives_a_valid_scenario():
    s = parse_scenario(SCENARIO, "test")
    t = scenario_from_dump(apply(s.model_dump(by_alias=True), {"hosts": "ideal", "lans": "ovs"}))
    assert t.hosts.model == "ideal" and t.topology.lans == "ovs"
    assert all(p.server is None and p.client is None for p in t.pairs)


def test_dir_suffix_names_each_value_in_the_tables_order():
    assert dir_suffix({"lans": "ovs", "suss_version": 2025, "hosts": "1gbe"}) == "_suss-2025_hosts-1gbe_lans-ovs"
    assert dir_suffix({"suss_version": 0}) == "_suss-0"
    assert dir_suffix({}) == dir_suffix(None) == ""


def test_offloads_linux_keeps_segments_whole_and_gives_a_line_rate_where_none_is():
    from sslab.scenario import to_plan
    s = parse_scenario(apply(SCENARIO, {"offloads": "linux"}), "test")
    assert s.topology.offloads == "linux" and dir_suffix({"offloads": "linux"}) == "_offloads-linux"
    # Ideal hosts get 1 Gbit/s links; pair 1's server keeps its own receive cost beside it.
    assert s.host_params(1, "server").nic_mbit == 1000.0 and s.host_params(1, "server").rx_cost == 2e-6
    assert s.host_params(2, "client").nic_mbit == 1000.0
    plan = to_plan(s)
    assert plan.topology.offloads == "linux"
    assert [h.server.nic_mbit for h in plan.hosts.pairs] == [1000.0, 1000.0]
    # A rate the host model gives is kept: the logging model's servers at 1 Gbit/s, 10 us a packet.
    logging = parse_scenario(apply(SCENARIO, {"offloads": "linux", "hosts": "logging"}), "test")
    assert logging.host_params(1, "server").rx_cost == pytest.approx(10e-6)
    # Off (the default): one segment per packet and the hosts as the model has them.
    off = parse_scenario(SCENARIO, "test")
    assert off.topology.offloads == "off" and off.host_params(2, "client").nic_mbit is None
    assert to_plan(off).topology.offloads == "off"


def test_offloads_linux_n_caps_every_packet_at_n_segments():
    from sslab.records import PlanError, offload_segments
    from sslab.scenario import to_plan
    s = parse_scenario(apply(SCENARIO, {"offloads": "linux-8"}), "test")
    assert dir_suffix({"offloads": "linux-8"}) == "_offloads-linux-8"
    # Linux's offloads in all but the cap: 1 Gbit/s links where the host model gives none.
    assert s.host_params(2, "client").nic_mbit == 1000.0
    plan = to_plan(s)
    assert plan.topology.offloads == "linux-8" and plan.topology.segments_a_packet == 8
    # What each veth's gso_max_segs becomes: 1 off, N, no cap (TSO's 64 KB) with Linux's own.
    assert [offload_segments(v) for v in ("off", "linux", "linux-2", "linux-16", "linux-32")] == [1, None, 2, 16, 32]
    for bad in ("linux-3", "linux-0", "linux-", "gro-8", "linux8"):
        with pytest.raises(PlanError, match="topology.offloads"):
            offload_segments(bad)
        with pytest.raises(ScenarioError, match=f"topology.offloads: '{bad}' is not an offload setting"):
            parse_scenario(apply(SCENARIO, {"offloads": bad}), "test")


def test_socket_buffers_linux_reaches_the_plan_and_the_archives_name():
    from sslab.scenario import to_plan
    s = parse_scenario(apply(SCENARIO, {"socket_buffers": "linux"}), "test")
    assert s.topology.socket_buffers == "linux" and to_plan(s).topology.socket_buffers == "linux"
    assert dir_suffix({"socket_buffers": "linux"}) == "_sockbuf-linux"
    assert to_plan(parse_scenario(SCENARIO, "test")).topology.socket_buffers == "raised"
