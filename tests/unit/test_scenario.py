"""Scenario files are validated before anything runs, and errors name the field."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from sslab.experiment.plan import plan_for
from sslab.paths import REPO_ROOT
from sslab.scenario import (ScenarioError, load_scenario, parse_scenario, parse_rate_mbit,
                            parse_seconds, parse_size, to_plan)

E1 = REPO_ROOT / "experiments/scenarios/e1-startup.yaml"


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    return plan_record(to_plan(s))


def e1_data() -> dict:
    base = yaml.safe_load((REPO_ROOT / "topologies/dumbbell5.yaml").read_text())
    data = yaml.safe_load(E1.read_text())
    data.pop("extends")
    return {**base, **data}


def test_units():
    assert parse_size("5MB") == 5_000_000 and parse_size("64KiB") == 65536 and parse_size(1500) == 1500
    assert parse_rate_mbit("50mbit") == 50 and parse_rate_mbit("1gbit") == 1000
    assert parse_seconds("100ms") == pytest.approx(0.1) and parse_seconds("2s") == 2
    for bad in ("5 parsecs", "fast", "-3MB"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_e1_scenario():
    s = load_scenario(E1)
    assert s.name == "e1-startup" and s.topology.pairs == 5
    # 1 BDP of 50 Mbit/s x 100 ms in 1514-byte frames: 412.8 -> 413 (experiments.md)
    assert s.buffer_packets == 413
    # The paper's four, Rapid Start and SEARCH (which `make startup` leaves to VARIANTS=:
    # experiments/startup.yaml).
    assert [c.name for c in s.cases] == [f"{cc}-{sz}" for cc in ("cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss",
                                                                  "cubic_rapid", "cubic_search", "cubic_search4")
                                         for sz in ("5MB", "20MB")]
    assert s.cases[1].flows[0].size == 20_000_000 and s.cases[1].flows[0].cc == "cubic_ss"
    order = s.run_order()
    assert len(order) == 14 * 5
    # alternate: every case once per repetition, repetitions in turn
    assert [r for r, _ in order[:14]] == [0] * 14 and [c.name for _, c in order[:14]] == [c.name for c in s.cases]
    plan = plan_data(s)
    assert {k: v for k, v in plan["bottleneck"].items() if k != "link"} == {"rate_mbit": 50.0, "buffer_pkts": 413,
                                                                                       "netem": "apart"}
    # a wired link: netem's exact spacing, no trace, no bursts
    link = plan["bottleneck"]["link"]
    assert link["shaper"] == "netem" and link["trace"] is None and link["down"] == link["up"] == []
    assert plan["runs"][15]["rep"] == 1 and plan["runs"][15]["flows"][0]["cc"] == "cubic_ss"


def test_orders():
    data = e1_data()
    data["order"] = "sequential"
    seq = parse_scenario(data).run_order()
    assert [c.name for _, c in seq[:5]] == ["cubic_ss-5MB"] * 5
    data["order"] = "shuffled"
    a, b = parse_scenario(data).run_order(), parse_scenario(data).run_order()
    assert [(r, c.name) for r, c in a] == [(r, c.name) for r, c in b]  # seeded
    assert sorted((r, c.name) for r, c in a) == sorted((r, c.name) for r, c in seq)


@pytest.mark.parametrize("mutate,field,words", [
    (lambda d: d["bottleneck"].update(buffer={"bdp": -1, "rtt": "100ms"}), "bottleneck.buffer", "bdp must be positive"),
    (lambda d: d["bottleneck"].update(buffer={"bdp": 1}), "bottleneck.buffer", "needs the rtt"),
    (lambda d: d["bottleneck"].update(buffer={"packets": 0}), "bottleneck.buffer", "at least 1"),
    (lambda d: d["bottleneck"].update(buffer={"packets": 10, "bdp": 1, "rtt": "1ms"}), "bottleneck.buffer", "exactly one"),
    (lambda d: d["bottleneck"].update(rate="fast"), "bottleneck.rate", "cannot read rate"),
    (lambda d: d["cases"]["axes"].update(cc=["cubic_hs", "cubic_sus"]), "cases[2].flows[0].cc", "unknown congestion control 'cubic_sus'"),
    (lambda d: d["cases"]["axes"].update(cc=["bbr2"]), "cases[0].flows[0].cc", "unknown congestion control 'bbr2'"),
    (lambda d: d.update(colour="blue"), "colour", "unknown field"),
    (lambda d: d["bottleneck"].update(burst="10k"), "bottleneck.burst", "unknown field"),
    (lambda d: d["cases"]["flows"][0].update(pair=7), "(top level)", "pair is 7, but there are 5 pairs"),
    (lambda d: d["cases"]["flows"][0].update(duration="10s"), "cases[0].flows[0]", "exactly one of size or duration"),
    (lambda d: d["pairs"].pop(), "(top level)", "topology.pairs is 5 but 4 pairs"),
    (lambda d: d["pairs"][0].update(rtt="-5ms"), "pairs[0].rtt", "cannot read time"),
    (lambda d: d["topology"].update(addresses={"servers": "10.1.0.0/16", "clients": "10.1.128.0/17"}),
     "topology.addresses", "servers (10.1.0.0/16) and clients (10.1.128.0/17) overlap"),
    (lambda d: d.update(repetitions=0), "repetitions", "greater than or equal to 1"),
])
def test_bad_scenarios_are_refused_naming_the_field(mutate, field, words):
    data = copy.deepcopy(e1_data())
    mutate(data)
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, "bad.yaml")
    text = str(err.value)
    assert f"  {field}: " in text, text
    assert words in text, text


def test_extends_loops_and_missing_files(tmp_path: Path):
    (tmp_path / "a.yaml").write_text("extends: b.yaml\nname: a\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(ScenarioError, match="extends itself"):
        load_scenario(tmp_path / "a.yaml")
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "missing.yaml")
    (tmp_path / "c.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load_scenario(tmp_path / "c.yaml")


def test_iperf3_flows_are_timed():
    data = e1_data()
    data["cases"]["flows"][0].update(tool="iperf3")
    with pytest.raises(ScenarioError, match="iperf3 flows are timed"):
        parse_scenario(data)
    data["cases"]["flows"][0].pop("size")
    data["cases"]["flows"][0]["duration"] = "10s"
    data["cases"]["axes"].pop("size")
    data["cases"]["name"] = "{cc}"
    s = parse_scenario(data)
    assert s.cases[0].flows[0].tool == "iperf3" and s.cases[0].flows[0].duration == 10


def test_yaml_syntax_error_names_file_line_and_column(tmp_path: Path):
    p = tmp_path / "syntax.yaml"
    p.write_text("name: x\nbottleneck: {rate: 50mbit, buffer: {bdp: 1, rtt: 100ms}\npairs: [{rtt: 100ms}]\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario(p)
    text = str(err.value)
    # The flow mapping opened on line 2 is not closed when line 3 begins.
    assert text.startswith(f"{p}:3:1: not valid YAML: expected ',' or '}}'"), text
    assert "line 2, column 13" in text and "\n  pairs: [{rtt: 100ms}]\n  ^" in text


def test_every_field_error_is_listed_at_once(tmp_path: Path):
    p = tmp_path / "fields.yaml"
    p.write_text('name: "bad name!"\nbottleneck: {rate: fast, buffer: {bdp: 1, rtt: 100ms}}\npairs: [{rtt: 100ms}]\n'
                 "cases:\n  - name: a\n    flows: [{pair: 1, cc: cubic_hsp, size: 1MB}]\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario(p)
    lines = str(err.value).splitlines()
    assert lines[0] == f"{p}: invalid scenario (3 errors)"
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == ["name", "bottleneck.rate", "cases[0].flows[0].cc"]
    assert "(got 'bad name!')" in lines[1] and "'fast'" in lines[2] and "'cubic_hsp'" in lines[3]


def test_module_params_per_scenario_and_per_case():
    data = e1_data()
    data["module_params"] = {"suss_max": 2}
    data["cases"]["module_params"] = {"suss_lift_rwnd_rounds": "{lift}"}
    data["cases"]["axes"] = {"cc": ["cubic_suss"], "size": ["5MB"], "lift": [0, 3]}
    data["cases"]["name"] = "{cc}-lift{lift}"
    plan = plan_data(parse_scenario(data))
    # (hs_round_fix 0: the SUSS-off arm's HyStart under the default SUSS 2024, as below.)
    assert [r["module_params"] for r in plan["runs"]][:2] == [
        {"suss_max": 2, "suss_lift_rwnd_rounds": 0, "hs_round_fix": 0},
        {"suss_max": 2, "suss_lift_rwnd_rounds": 3, "hs_round_fix": 0}]
    data["module_params"] = {"suss_maxx": 2, "hs_low_window": -1}
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data)
    assert "module_params: Value error, unknown module parameter(s) suss_maxx" in str(err.value) or \
        "module_params: unknown module parameter(s) suss_maxx" in str(err.value)


def test_extends_replaces_the_case_template_whole(tmp_path: Path):
    (tmp_path / "base.yaml").write_text(E1.read_text().replace("extends: ../../topologies/dumbbell5.yaml",
                                                               f"extends: {REPO_ROOT}/topologies/dumbbell5.yaml"))
    (tmp_path / "child.yaml").write_text(
        "extends: base.yaml\nname: child\nbottleneck: {rate: 20mbit}\n"
        "cases:\n  name: 'x-{size}'\n  flows: [{pair: 1, cc: cubic_suss, size: '{size}'}]\n  axes: {size: [1MB]}\n")
    s = load_scenario(tmp_path / "child.yaml")
    # The parent's cc axis is gone (the template is replaced), the bottleneck merged (its buffer kept).
    assert [c.name for c in s.cases] == ["x-1MB"] and s.bottleneck.rate_mbit == 20
    assert s.bottleneck.buffer.bdp == 1


def _blitz(hint, cc="cubic_blitz") -> dict:
    data = e1_data()
    data["cases"] = [{"name": "b", "flows": [{"pair": 1, "cc": cc, "size": "2MB", "hint": hint}]}]
    return data


def test_blitzstart_hints_are_rates_or_multiples_of_the_bottleneck():
    # E1's bottleneck is 50 Mbit/s: 1.5x is 75 Mbit/s = 9,375,000 bytes/s; a rate is taken as given.
    for hint, bytes_per_s in (("1.5x", 9_375_000), ("20mbit", 2_500_000), ("0.5X", 3_125_000)):
        plan = plan_data(parse_scenario(_blitz(hint), "t"))
        assert plan["runs"][0]["flows"][0]["hint_bytes_per_s"] == bytes_per_s
    # No hint: nothing reaches the sender (the module falls back to the standard start).
    data = _blitz(None)
    data["cases"][0]["flows"][0].pop("hint")
    assert "hint_bytes_per_s" not in plan_data(parse_scenario(data, "t"))["runs"][0]["flows"][0]


@pytest.mark.parametrize("hint, cc, words", [
    ("fast", "cubic_blitz", "cannot read"),
    ("0x", "cubic_blitz", "positive"),
    ("-2x", "cubic_blitz", "positive"),
    ("1x", "cubic_hs", "only by cubic_blitz"),
])
def test_bad_hints_are_refused(hint, cc, words):
    with pytest.raises(ScenarioError, match=words):
        parse_scenario(_blitz(hint, cc), "t")


def test_an_axis_of_mappings_sets_parameters_together():
    data = e1_data()
    data["cases"] = {
        "name": "{start}-{size}",
        "flows": [{"pair": 1, "cc": "{cc}", "hint": "{hint}", "size": "{size}"}],
        "axes": {"start": [{"start": "std", "cc": "cubic_std"},
                             {"start": "1x", "cc": "cubic_blitz", "hint": "1x"}],
                   "size": ["70KB", "2MB"]}}
    s = parse_scenario(data, "t")
    assert [c.name for c in s.cases] == ["std-70KB", "std-2MB", "1x-70KB", "1x-2MB"]
    std, blitz = s.cases[0].flows[0], s.cases[2].flows[0]
    assert (std.cc, std.hint) == ("cubic_std", None) and (blitz.cc, blitz.hint) == ("cubic_blitz", "1x")
    assert s.cases[2].params == {"start": "1x", "cc": "cubic_blitz", "hint": "1x", "size": "70KB"}
    data["cases"]["axes"]["start"][0] = {"cc": "cubic_std"}
    with pytest.raises(ScenarioError, match="must set 'start'"):
        parse_scenario(data, "t")


def test_the_mtu_sets_frames_for_buffers_in_bdp():
    # 40 Mbit/s x 100 ms = 500,000 bytes: 330 frames of 1514 bytes, 469 of 1066 (MTU 1052, 1000-byte segments).
    data = e1_data()
    data["bottleneck"] = {"rate": "40mbit", "buffer": {"bdp": 1, "rtt": "100ms"}}
    assert parse_scenario(data, "t").buffer_packets == 330
    data["topology"] = {**data["topology"], "mtu": 1052}
    s = parse_scenario(data, "t")
    assert s.buffer_packets == 469 and plan_data(s)["topology"]["mtu"] == 1052
    # The guest's HTB shapers burst two full frames of the run's MTU: 2 x 1066, and 2 x 1514 at 1500.
    from sslab.guest.dumbbell import Dumbbell
    assert Dumbbell(plan_for(s)).burst_bytes == 2132
    assert Dumbbell(plan_for(parse_scenario(e1_data(), "t"))).burst_bytes == 3028
    data["topology"]["mtu"] = 100
    with pytest.raises(ScenarioError, match="topology.mtu"):
        parse_scenario(data, "t")


def test_a_series_builds_every_setting_and_refuses_bad_ones(tmp_path: Path):
    from sslab.experiment import ExperimentError, load_experiment
    e = load_experiment("astart")
    got = {p.name: parse_scenario(e.data_of(p)) for p in e.choose(["bw-10mbit", "buf-0.2bdp"])}
    # 10 Mbit/s x 100 ms in 1066-byte frames: 117; BDP/5 at 40 Mbit/s: 94.
    assert got["bw-10mbit"].buffer_packets == 117 and got["buf-0.2bdp"].buffer_packets == 94
    assert got["bw-10mbit"].topology.mtu == 1052 and got["bw-10mbit"].module_params == {"reno_init_ssthresh": 32}
    with pytest.raises(ExperimentError, match="nothing named bw-7mbit"):
        e.choose(["bw-7mbit"])
    bad = yaml.safe_load(e.path.read_text())
    bad["parts"][0]["axes"]["name"].append({"name": "bad", "group": "x", "rate": "fast", "rtt": "100ms", "bdp": 1})
    bad["parts"] = bad["parts"][:1]
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(ExperimentError, match="setting bad"):
        load_experiment(tmp_path / "s.yaml")


def test_a_starts_versions_are_read_from_its_header_through_the_registry(tmp_path):
    """SS_VERSIONS(variant, list) in a start's entry names its header's list of V(ID, pin, value, "name",
    "meaning") lines: the harness reads what the compiler expands, and a pin is checked against it."""
    from sslab.ccas import START_VERSIONS, StartVersion, parse_start_versions, registry_entries
    core = tmp_path / "core"
    core.mkdir()
    (core / "toy.h").write_text('#define SS_TOY_REGISTRY \\\n\tSS_VERSIONS(TOY, SS_TOY_VERSIONS) \\\n'
                                '\tSS_VARIANT(TOY, 0, ss_toy_ops)\n'
                                '#define SS_TOY_VERSIONS(V) \\\n'
                                '\tV(TOY_VER_1, 0x10, 1, "1.0", "Toy 1.0 (the first)") \\\n'
                                '\tV(TOY_VER_2, 0x20, 2, "2.0", "Toy 2.0, \\"the second\\"")\n'
                                '#define TOY_UNRELATED(V) V(TOY_VER_9, 9, 9, "9", "not a version list")\n')
    toy = parse_start_versions(tmp_path)
    assert toy == (StartVersion("TOY", "TOY_VER_1", 1, "1.0", "Toy 1.0 (the first)"),
                   StartVersion("TOY", "TOY_VER_2", 2, "2.0", 'Toy 2.0, \\"the second\\"'))
    assert registry_entries('SS_NAME(t2, "toy2", TOY, TOY_VER_2)\n', toy) == [("toy2", "TOY", 2)]
    with pytest.raises(ValueError, match="unknown version TOY_VER_9"):
        registry_entries('SS_NAME(t9, "toy9", TOY, TOY_VER_9)\n', toy)
    # The module's own: SUSS's three and SEARCH's two, in their headers' order, with the names a run
    # record gives them.
    assert [(v.variant, v.ident, v.value, v.name) for v in START_VERSIONS] == [
        ("SUSS", "SUSS_VER_2024", 2024, "2024"), ("SUSS", "SUSS_VER_2025", 2025, "2025"),
        ("SUSS", "SUSS_VER_PAPER", 0, "ours"), ("SEARCH", "SEARCH_VER_3", 3, "3.0"), ("SEARCH", "SEARCH_VER_4", 4, "4.0")]


def test_congestion_control_names_come_from_the_modules_registry():
    from sslab.ccas import OUR_CCAS, SEARCH_CCAS, SUSS_CCAS, START_VERSIONS, registry_entries
    # The parser, on a registry of two names (one pinned to SUSS 2025).
    text = ('SS_NAME(hs, "cubic_hs", HYSTART, SS_VERSION_PARAM)\n'
            '/* SS_NAME(x, "commented", SUSS, SUSS_VER_2024) is no line of its own */\n'
            'SS_NAME(suss25, "cubic_suss25", SUSS, SUSS_VER_2025)\n')
    assert registry_entries(text, START_VERSIONS) == [("cubic_hs", "HYSTART", None), ("cubic_suss25", "SUSS", 2025)]
    with pytest.raises(ValueError, match="unknown version SUSS_VER_1999"):
        registry_entries('SS_NAME(x, "cubic_x", SUSS, SUSS_VER_1999)\n', START_VERSIONS)
    # A pin names a version of its own variant only.
    assert registry_entries('SS_NAME(s4, "cubic_search4", SEARCH, SEARCH_VER_4)\n', START_VERSIONS) == [
        ("cubic_search4", "SEARCH", 4)]
    with pytest.raises(ValueError, match="SEARCH_VER_4 is not a version of SUSS"):
        registry_entries('SS_NAME(x, "cubic_x", SUSS, SEARCH_VER_4)\n', START_VERSIONS)
    # The module's registry (the starts' entries, kernel/core/*.h): its first fourteen names in registration order (a
    # new start adds its own after them), and the SUSS names with the versions they pin (the guest's
    # module check selects each by name).
    assert OUR_CCAS[:14] == ("cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss", "cubic_suss24", "cubic_suss25",
                        "cubic_susspaper", "reno_fixed", "reno_hoe", "reno_astart", "cubic_std", "cubic_blitz",
                        "cubic_suss_g2", "cubic_rapid")
    assert SUSS_CCAS == {"cubic_suss": None, "cubic_suss24": 2024, "cubic_suss25": 2025, "cubic_susspaper": 0}
    assert SEARCH_CCAS == {"cubic_search": None, "cubic_search3": 3, "cubic_search4": 4}
    src = (REPO_ROOT / "kernel/sslab_tcp.c").read_text()
    assert '#include "core/variants.h"' in src and not re.search(r'^SSLAB_OPS\(\w+, "', src, re.M)


def test_the_suss_off_arm_runs_the_hystart_of_its_suss_versions_kernel():
    """hs_round_fix, unless a run sets it, follows the run's SUSS version: 2024 (the paper's code, on
    Linux 5.19) gives 5.19's rounds, 2025 and ours 6.1.192's; a scenario or case that sets it wins."""
    data = e1_data()
    data["cases"]["axes"] = {"cc": ["cubic_hs"], "size": ["5MB"], "v": [2024, 2025, 0]}
    data["cases"]["name"] = "{cc}-{v}"
    data["cases"]["module_params"] = {"suss_version": "{v}"}
    plan = plan_data(parse_scenario(data))
    assert [r["module_params"]["hs_round_fix"] for r in plan["runs"][:3]] == [0, 1, 1]
    # The plan names each cubic_hs flow's HyStart as its version (the guest and the reports read it there).
    assert [r["flows"][0]["version"] for r in plan["runs"][:3]] == ["Linux 5.19", "Linux 6.1.192", "Linux 6.1.192"]
    data["module_params"] = {"hs_round_fix": 1}
    data["cases"]["axes"]["v"] = [2024]
    assert plan_data(parse_scenario(data))["runs"][0]["module_params"] == {"hs_round_fix": 1, "suss_version": 2024}
    del data["module_params"], data["cases"]["module_params"]
    assert plan_data(parse_scenario(data))["runs"][0]["module_params"] == {"hs_round_fix": 0}
    data["module_params"] = {"hs_round_fix": 2}
    with pytest.raises(ScenarioError, match="hs_round_fix 2: 0 .*5.19.* or 1"):
        parse_scenario(data)


def test_the_kernels_cubic_parameters_are_module_parameters_too():
    data = e1_data()
    data["module_params"] = {"tcp_cubic.hystart": 0}
    assert plan_data(parse_scenario(data))["runs"][0]["module_params"]["tcp_cubic.hystart"] == 0
    data["module_params"] = {"tcp_cubic.bic_scale": 40}
    with pytest.raises(ScenarioError, match="unknown module parameter.*tcp_cubic.bic_scale"):
        parse_scenario(data)


def test_suss_versions_per_scenario_case_and_flow():
    data = e1_data()
    data["module_params"] = {"suss_version": 2025}
    data["cases"]["axes"] = {"cc": ["cubic_suss"], "size": ["5MB"], "v": [0, 2024]}
    data["cases"]["name"] = "{cc}-{v}"
    data["cases"]["module_params"] = {"suss_version": "{v}"}
    plan = plan_data(parse_scenario(data))
    assert [r["module_params"] for r in plan["runs"]][:2] == [{"suss_version": 0, "hs_round_fix": 1},
                                                              {"suss_version": 2024, "hs_round_fix": 0}]
    # A flow may pin its own: it runs under the pinned name, whatever the run's parameter.
    data = e1_data()
    data["cases"]["flows"][0]["suss_version"] = 2025
    data["cases"]["axes"] = {"cc": ["cubic_suss"], "size": ["5MB"]}
    plan = plan_data(parse_scenario(data))
    assert plan["runs"][0]["flows"][0]["cc"] == "cubic_suss25"
    for bad, msg in (({"suss_version": 2023}, "suss_version 2023: one of 2024, 2025, 0"),):
        d = e1_data()
        d["module_params"] = bad
        with pytest.raises(ScenarioError, match=msg):
            parse_scenario(d)
    d = e1_data()
    d["cases"]["flows"][0]["suss_version"] = 2025
    d["cases"]["axes"] = {"cc": ["cubic_hs"], "size": ["5MB"]}
    with pytest.raises(ScenarioError, match="suss_version is for cubic_suss flows"):
        parse_scenario(d)


def test_suss_version_of_a_flow():
    from sslab.ccas import suss_version_of
    assert suss_version_of("cubic_suss") == 2024
    assert suss_version_of("cubic_suss", {"suss_version": 2025}) == 2025
    assert suss_version_of("cubic_suss25", {"suss_version": 0}) == 2025
    assert suss_version_of("cubic_susspaper") == 0
    assert suss_version_of("cubic_hs", {"suss_version": 2025}) is None


def test_one_netem_holds_the_delay_every_pair_shares():
    """netem "one": the bottleneck netem holds half the smallest pair's RTT (E1's pairs: 40 ms and up,
    so 20 ms) beside its rate and limit; each pair's line towards its client keeps the rest, its line
    towards its server all of its half.  "apart" (the default) holds none; a rate trace refuses "one"."""
    from sslab.guest.dumbbell import Dumbbell
    data = e1_data()
    rtts = [float(str(p["rtt"]).removesuffix("ms")) for p in data["pairs"]]
    assert plan_data(parse_scenario(data, "t"))["bottleneck"]["netem"] == "apart"
    data["bottleneck"] = {**data["bottleneck"], "netem": "one"}
    s = parse_scenario(data, "t")
    db = Dumbbell(plan_for(s))
    held = min(rtts) / 2
    assert db.shared_delay_ms == held
    [line] = db._bottleneck_tc()
    assert line == f"qdisc add dev r1-r2 root handle 1: netem delay {held:.3f}ms rate 50mbit limit {s.buffer_packets}"
    last = len(rtts)
    assert db._delay_line(last, "client") == f"netem delay {rtts[-1] / 2 - held:.3f}ms limit 100000"
    assert db._delay_line(last, "server") == f"netem delay {rtts[-1] / 2:.3f}ms limit 100000"
    assert db._delay_line(rtts.index(min(rtts)) + 1, "client") == "netem delay 0.000ms limit 100000"
    # "one-rtt": the whole smallest RTT in the bottleneck netem, every pair's two lines half the rest each.
    data["bottleneck"]["netem"] = "one-rtt"
    s = parse_scenario(data, "t")
    db = Dumbbell(plan_for(s))
    assert db.shared_delay_ms == min(rtts)
    [line] = db._bottleneck_tc()
    assert line == f"qdisc add dev r1-r2 root handle 1: netem delay {min(rtts):.3f}ms rate 50mbit limit {s.buffer_packets}"
    for kind in ("client", "server"):
        assert db._delay_line(last, kind) == f"netem delay {(rtts[-1] - min(rtts)) / 2:.3f}ms limit 100000"
        assert db._delay_line(rtts.index(min(rtts)) + 1, kind) == "netem delay 0.000ms limit 100000"
    data["bottleneck"]["netem"] = "both"
    with pytest.raises(ScenarioError, match="netem"):
        parse_scenario(data, "t")
    data["bottleneck"] = {"link": {"preset": "wifi"}, "netem": "one"}
    with pytest.raises(ScenarioError, match="constant-rate"):
        parse_scenario(data, "t")


def test_the_senders_qdisc_goes_on_each_servers_interface():
    """SENDER_QDISC: fq or fq_codel on every server's interface (none: the veth's default, no line);
    refused with a host model that puts a link rate's netem on the same interface."""
    from sslab.scenario import knobs
    data = knobs.apply(e1_data(), {"sender_qdisc": "fq"})
    s = parse_scenario(data, "t")
    assert plan_data(s)["topology"]["sender_qdisc"] == "fq"
    assert plan_for(s).topology.sender_qdisc == "fq"
    assert knobs.dir_suffix({"sender_qdisc": "fq"}) == "_qdisc-fq"
    with pytest.raises(ScenarioError, match="sender_qdisc fq with a host model"):
        parse_scenario(knobs.apply(data, {"hosts": "1gbe"}), "t")
    assert plan_data(parse_scenario(e1_data(), "t"))["topology"]["sender_qdisc"] == "none"


def test_an_axis_runs_the_first_offered_of_its_preferences():
    from sslab.scenario.axes import Axis
    ax = Axis.model_validate({"values": ["cubic", "bbr2"], "cca": True,
                              "runs_as": {"cubic": "cubic_hs", "bbr2": ["bbr2", "bbr2_sslab"]}})
    assert ax.runs("bbr2", {"bbr2", "bbr2_sslab"}) == "bbr2"          # Google's, where the kernel has it
    assert ax.runs("bbr2", {"bbr2_sslab", "cubic"}) == "bbr2_sslab"   # else ours
    assert ax.runs("bbr2") == ax.runs("bbr2", set()) == "bbr2_sslab"  # unknown or neither: the last, ours
    assert ax.runs("cubic", set()) == "cubic_hs" and ax.runs("bbr", {"bbr"}) == "bbr"
    assert ax.may_run("bbr2") == ["bbr2", "bbr2_sslab"] and ax.may_run("cubic") == ["cubic_hs"]


def wired_with(link: dict | None = None):
    """One CUBIC flow over a wired 50 Mbit/s, 20 ms path whose link has the fields @link."""
    from sslab.scenario import parse_scenario
    return parse_scenario({"name": "l", "topology": {"kind": "dumbbell", "pairs": 1}, "pairs": [{"rtt": "20ms"}],
                           "cases": [{"name": "c", "flows": [{"pair": 1, "cc": "cubic", "size": "1MB"}]}],
                           "bottleneck": {"rate": "50mbit", "buffer": {"packets": 100},
                                          "link": {"kind": "wired", **(link or {})}}})


def test_a_hops_random_loss_alone_or_in_bursts():
    """Loss as a rate or a two-state chain (fractions or percentages), in the plan in percent."""
    s = wired_with({"loss": {"down": {"rate": "1%"}, "up": {"p": 0.005, "r": "50%"}}})
    assert s.bottleneck.link.loss.down.rate == pytest.approx(0.01)
    assert s.bottleneck.link.loss.up.mean_rate == pytest.approx(0.005 / 0.505)
    link = plan_data(s)["bottleneck"]["link"]
    assert link["down"] == [{"stage": "loss", "p_percent": 1.0}]  # r_percent, None, is left out
    assert link["up"] == [{"stage": "loss", "p_percent": 0.5, "r_percent": 50.0}]
    for bad in ({"down": {"rate": "1%", "p": 0.1, "r": 0.5}}, {"down": {"p": 0.1}}, {"down": {"rate": "x%"}},
                {"down": {"rate": 2}}):
        with pytest.raises(ScenarioError):
            wired_with({"loss": bad})
    assert plan_data(wired_with())["bottleneck"]["link"]["down"] == []


def test_a_delay_that_varies_as_a_sine_one_value_a_bin():
    """Period 1 s, bins of 250 ms, depth 20 ms: depth x (1 - cos(2 pi k / 4)) / 2 = 0, 10, 20, 10 ms."""
    s = wired_with({"delay_variation": {"period": "1s", "depth": "20ms", "bin": "250ms"}})
    assert plan_data(s)["bottleneck"]["link"]["down"] == [{"stage": "delay_variation", "bin_ms": 250,
                                                         "extra_ms": [0.0, 10.0, 20.0, 10.0]}]
    for bad in ({"period": "1s", "depth": "20ms", "bin": "2s"}, {"period": "1s", "depth": "0ms"},
                {"period": "1s", "depth": "20ms", "bin": "2.5ms"}):
        with pytest.raises(ScenarioError):
            wired_with({"delay_variation": bad})


def test_the_plan_names_each_flows_suss_version_once():
    """Every SUSS flow's version resolved in the plan, in its one `version` field: a pinned name's own
    (cubic_suss25: "2025"), else its run's suss_version (the case's 0, "ours"; the scenario's 2025, the
    module's default 2024); no version for a start with one (cubic_ss), and no field of any one start."""
    data = e1_data()
    data["cases"]["axes"] = {"cc": ["cubic_suss", "cubic_suss25", "cubic_ss"], "size": ["5MB"], "v": [0, 2024]}
    data["cases"]["name"] = "{cc}-{v}"
    data["cases"]["module_params"] = {"suss_version": "{v}"}
    runs = plan_data(parse_scenario(data))["runs"]
    got = {r["case"]: r["flows"][0].get("version") for r in runs}
    assert got == {"cubic_suss-0": "ours", "cubic_suss-2024": "2024", "cubic_suss25-0": "2025",
                   "cubic_suss25-2024": "2025", "cubic_ss-0": None, "cubic_ss-2024": None}
    assert not any({"suss_version", "hystart", "search"} & set(r["flows"][0]) for r in runs)
    del data["cases"]["module_params"]
    data["cases"]["axes"]["v"] = [1]
    assert plan_data(parse_scenario(data))["runs"][0]["flows"][0]["version"] == "2024"
    data["module_params"] = {"suss_version": 2025}
    assert plan_data(parse_scenario(data))["runs"][0]["flows"][0]["version"] == "2025"


def test_a_time_may_be_a_sum_of_times():
    from sslab.scenario.units import parse_seconds
    assert parse_seconds("2s+22s") == pytest.approx(24.0)
    assert parse_seconds("100ms+ 1.5s") == pytest.approx(1.6)
    for bad in ("2s+", "+2s", "2s+3"):
        with pytest.raises(ValueError):
            parse_seconds(bad)
