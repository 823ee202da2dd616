"""Host models: the scenario's hosts section, its presets and overrides, and what the guest makes of it."""

import pytest
import yaml

from sslab.experiment.plan import plan_for
from sslab.paths import REPO_ROOT
from sslab.scenario import ScenarioError, parse_scenario, scenario_from_dump, to_plan
from sslab.guest.dumbbell import Dumbbell, host_stages
from sslab.records import Host, RxBatch
from sslab.guest.fidelity import expected_rtt_ms, extra_wait_ms


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    return plan_record(to_plan(s))


def e1(**extra) -> dict:
    base = yaml.safe_load((REPO_ROOT / "topologies/dumbbell5.yaml").read_text())
    data = yaml.safe_load((REPO_ROOT / "experiments/scenarios/e1-startup.yaml").read_text())
    data.pop("extends")
    return {**base, **data, **extra}


def test_ideal_hosts_by_default_and_nothing_added():
    plan = plan_data(parse_scenario(e1()))
    assert plan["hosts"]["model"] == "ideal"
    assert all(h == {"nic_mbit": None, "rx_cost_us": 0.0, "rx_jitter_us": 0.0, "rx_batch": None}
               for p in plan["hosts"]["pairs"] for h in p.values())
    assert host_stages(plan_for(parse_scenario(e1())).hosts.pairs[0].client) == []


def test_a_preset_fields_over_it_and_a_pair_of_its_own():
    data = e1(hosts={"model": "1gbe", "clients": {"rx_jitter": "3us", "rx_batch": {"period": "50us", "packets": 16}}})
    data["pairs"][0] = {**data["pairs"][0], "server": {"rx_cost": "20us"}}
    s = parse_scenario(data)
    pairs = plan_data(s)["hosts"]["pairs"]
    assert pairs[0]["server"] == {"nic_mbit": 1000.0, "rx_cost_us": 20.0, "rx_jitter_us": 0.0, "rx_batch": None}
    assert pairs[1]["server"]["rx_cost_us"] == 1.4
    assert pairs[0]["client"] == {"nic_mbit": 1000.0, "rx_cost_us": 1.4, "rx_jitter_us": 3.0,
                                  "rx_batch": {"period_us": 50.0, "packets": 16}}
    # A dump read back is the same model (the pair's own fields stay as written).
    assert plan_data(scenario_from_dump(s.model_dump(by_alias=True)))["hosts"] == plan_data(s)["hosts"]
    assert "1gbe: servers NIC 1000 Mbit/s, receive 1.4 us/packet" in s.hosts.describe()


@pytest.mark.parametrize("hosts, message", [
    ({"model": "fast"}, "unknown host model 'fast'"),
    ({"clients": {"rx_cost": "20ms"}}, "rx_cost must be in [0, 10 ms]"),
    ({"servers": {"nic": "10kbit"}}, "nic must be between 1mbit and 1000gbit"),
    ({"servers": {"speed": "1gbit"}}, "speed"),
])
def test_bad_host_models_are_refused_by_name(hosts, message):
    with pytest.raises(ScenarioError) as err:
        parse_scenario(e1(hosts=hosts))
    assert message in str(err.value)


def test_the_stages_a_receiving_host_is_made_of():
    # 1 Gbit/s link, batches of 16 every 50 us, 2 us per packet with up to 3 us more:
    # the cost's rate makes every packet one 65535-byte cell: 65535 B / 2 us = 32 767 500 000 B/s.
    # (The link's rate is in the delay line's own netem, the root: see Dumbbell._delay_line.)
    host = Host(nic_mbit=1000.0, rx_cost_us=2.0, rx_jitter_us=3.0, rx_batch=RxBatch(period_us=50.0, packets=16))
    assert host_stages(host) == ["netem slot 50us 50us packets 16",
                                 "netem delay 1.5us 1.5us rate 32767500000bps 0 65535"]
    assert Dumbbell._chain("r2-c1", host_stages(host)) == [
        "qdisc add dev r2-c1 parent 1:1 handle 10: netem slot 50us 50us packets 16 limit 100000",
        "qdisc add dev r2-c1 parent 10:1 handle 20: netem delay 1.5us 1.5us rate 32767500000bps 0 65535 limit 100000"]
    db = Dumbbell(plan_for(parse_scenario(e1(hosts={"model": "1gbe"}))))
    assert db._delay_line(1, "client") == "netem delay 50.000ms limit 100000 rate 1000mbit"


def test_the_idle_rtt_the_fidelity_check_expects():
    # 100 ms path, 50 Mbit/s bottleneck: 100 + 98 B x 8 / 50 Mbit/s = 100.01568 ms; 1 Gbit/s links
    # serialise ping's 98-byte frames 4 times (0.784 us each) and each host adds its 1.4 us:
    # + 3.136 + 2.8 us = 100.021616 ms.  Jitter 3 us at the client and its 50 us batches: up to 53 us more.
    s = parse_scenario(e1(hosts={"model": "1gbe", "clients": {"rx_jitter": "3us", "rx_batch": {"period": "50us"}}}))
    db = Dumbbell(plan_for(s))
    assert expected_rtt_ms(db, 1) == pytest.approx(100.021616, abs=1e-9)
    # ... and 1.1 us per host with a link rate for UML's clock charges (NIC_CLOCK_CHARGE_MS).
    assert extra_wait_ms(db, 1) == pytest.approx((0.0, 0.053 + 2 * 0.0011))
