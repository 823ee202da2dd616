"""A link as stages (sslab.records's, joined by sslab.guest.dumbbell): each mechanism's netem arguments,
the plan's stages read back by their names, and the tc lines the dumbbell writes from them, hand-worked."""

import dataclasses

import pytest

from sslab.experiment.plan import plan_for
from sslab.guest import dumbbell as db
from sslab.guest.dumbbell import Dumbbell, HtbShaper, chain, netem
from sslab.paths import REPO_ROOT
from sslab.records import (BatchSlots, Bursts, CellRate, Delay, DelayVariation, Host, HostPair, LinkModel, Loss, Pair,
                           Plan, PlanError, Queue, Rate, RxBatch, Stage, UniformDelay, _build)
from sslab.scenario import load_scenario


def plan_of(rate_mbit: float, buffer_pkts: int, rtts_ms: list[float], *, netem_mode: str = "apart",
            down: list[Stage] = (), up: list[Stage] = (), hosts: list[HostPair] = ()) -> Plan:
    """E1's plan with the bottleneck, pairs, last hop and host model given (what a dumbbell reads)."""
    plan = plan_for(load_scenario(REPO_ROOT / "experiments/scenarios/e1-startup.yaml"))
    b = plan.bottleneck
    link = dataclasses.replace(b.link, down=list(down), up=list(up))
    return dataclasses.replace(
        plan, pairs=[Pair(rtt) for rtt in rtts_ms], hosts=dataclasses.replace(plan.hosts, pairs=list(hosts)),
        bottleneck=dataclasses.replace(b, rate_mbit=rate_mbit, buffer_pkts=buffer_pkts, netem=netem_mode, link=link))


def test_each_stage_in_netems_words():
    assert netem(Delay(12.5), Queue(100000), Rate(1000.0), Bursts(2.0, 4.0, 64)) == \
        "netem delay 12.500ms limit 100000 rate 1000mbit slot 2ms 4ms packets 64"
    assert netem(None, Rate(50.0), Queue(413)) == "netem rate 50mbit limit 413"
    assert netem(UniformDelay(1.5), CellRate(32767500000, 65535)) == "netem delay 1.5us 1.5us rate 32767500000bps 0 65535"
    assert netem(BatchSlots(20.0, 8)) == "netem slot 20us 20us packets 8"
    assert chain("r2-c1", ["netem slot 20us 20us packets 8", "netem rate 1bps 0 65535"], Queue(9)) == [
        "qdisc add dev r2-c1 parent 1:1 handle 10: netem slot 20us 20us packets 8 limit 9",
        "qdisc add dev r2-c1 parent 10:1 handle 20: netem rate 1bps 0 65535 limit 9"]
    assert HtbShaper(Rate(50.0), 3028, Queue(1000)).tc("r1-r2") == [
        "qdisc add dev r1-r2 root handle 1: htb default 1",
        "class add dev r1-r2 parent 1: classid 1:1 htb rate 50mbit ceil 50mbit burst 3028 cburst 3028",
        "qdisc add dev r1-r2 parent 1:1 handle 10: pfifo limit 1000"]


def tc_lines(plan: Plan, monkeypatch) -> dict:
    """The tc lines _configure writes per namespace (nothing run)."""
    out: dict = {}
    monkeypatch.setattr(db, "run_batch", lambda tool, ns, lines: out.setdefault(ns, []).extend(lines)
                        if tool == "tc" else None)
    for name in ("set_sysctls", "in_ns", "sh"):   # sysctls and receive steering: not what is tested
        monkeypatch.setattr(db, name, lambda *a, **k: None)
    Dumbbell(plan)._configure()
    return out


def test_a_dumbbells_lines_from_its_stages(monkeypatch):
    """Two pairs at 100 and 30 ms behind a 50 Mbit/s, 413-packet netem; pair 1's hosts on 1 Gbit/s
    links with coalescing (20 us, 8 packets) and a receive cost of 1.4 us a packet (65535-byte cells at
    65535 / 1.4e-6 = 46810714286 B/s); the last hop bursts 1 ms apart down."""
    host = Host(nic_mbit=1000.0, rx_cost_us=1.4, rx_jitter_us=0.0, rx_batch=RxBatch(period_us=20.0, packets=8))
    plan = plan_of(50.0, 413, [100.0, 30.0], hosts=[HostPair(host, host)], down=[Bursts(1.0, 1.0, 1000)])
    lines = tc_lines(plan, monkeypatch)
    assert lines["sl-r1"] == [
        "qdisc add dev r1-r2 root handle 1: netem rate 50mbit limit 413",
        "qdisc add dev r1-s1 root handle 1: netem delay 50.000ms limit 100000 rate 1000mbit",
        "qdisc add dev r1-s1 parent 1:1 handle 10: netem slot 20us 20us packets 8 limit 100000",
        "qdisc add dev r1-s1 parent 10:1 handle 20: netem rate 46810714286bps 0 65535 limit 100000",
        "qdisc add dev r1-s2 root handle 1: netem delay 15.000ms limit 100000"]
    assert lines["sl-r2"][0] == "qdisc add dev r2-c1 root handle 1: netem delay 50.000ms limit 100000 rate 1000mbit " \
                                "slot 1ms 1ms packets 1000"
    assert lines["sl-s1"] == ["qdisc add dev eth0 root netem rate 1000mbit limit 100000"]
    assert lines["sl-c1"] == ["qdisc add dev eth0 root netem limit 100000 rate 1000mbit"]


def test_netem_one_holds_the_shared_delay_in_the_bottleneck(monkeypatch):
    """netem "one": the bottleneck holds half the smallest RTT (12.5 ms of 25, 50 ms); each pair's data
    line keeps the rest (0 and 12.5 ms), its ACK line half its RTT."""
    lines = tc_lines(plan_of(50.0, 104, [25.0, 50.0], netem_mode="one"), monkeypatch)
    assert lines["sl-r1"][0] == "qdisc add dev r1-r2 root handle 1: netem delay 12.500ms rate 50mbit limit 104"
    assert lines["sl-r2"] == ["qdisc add dev r2-c1 root handle 1: netem delay 0.000ms limit 100000",
                              "qdisc add dev r2-c2 root handle 1: netem delay 12.500ms limit 100000"]


def test_loss_in_netems_words_and_only_after_the_checks():
    """Random loss (1 %) and the two-state chain (into it 0.5 %, out 50 %) on the clients' lines; before
    add_loss (the fidelity checks) the lines are as without it."""
    assert netem(Delay(10.0), Queue(100000), None, None, Loss(1.0)) == "netem delay 10.000ms limit 100000 loss random 1%"
    assert Loss(0.5, 50.0).args() == "loss gemodel 0.5% 50%"
    d = Dumbbell(plan_of(50.0, 100, [20.0], down=[Loss(1.0)], up=[Loss(0.5, 50.0)]))
    assert d._delay_line(1, "client") == "netem delay 10.000ms limit 100000" and d._uplink(1) is None
    lines: dict = {}
    import sslab.guest.dumbbell as mod
    original, mod.run_batch = mod.run_batch, lambda tool, ns, ls: lines.setdefault(ns, []).extend(ls)
    try:
        assert d.add_loss()
    finally:
        mod.run_batch = original
    assert lines == {"sl-r2": ["qdisc change dev r2-c1 root handle 1: netem delay 10.000ms limit 100000 loss random 1%"],
                     "sl-c1": ["qdisc replace dev eth0 root netem limit 100000 loss gemodel 0.5% 50%"]}
    assert not Dumbbell(plan_of(50.0, 100, [20.0])).add_loss()


def test_a_plans_link_lists_its_stages_by_name():
    """The plan's last hop as stages (each with `stage`, its name); an unknown name or a field a stage
    does not have is refused by its path."""
    record = {"kind": "wifi", "preset": None, "shaper": "htb", "trace": None, "rate_tolerance": 0.01,
              "down": [{"stage": "bursts", "min_ms": 2.0, "max_ms": 4.0, "packets": 64},
                       {"stage": "loss", "p_percent": 0.5, "r_percent": 50.0},
                       {"stage": "delay_variation", "bin_ms": 250, "extra_ms": [0.0, 10.0, 20.0, 10.0]}],
              "up": [{"stage": "bursts", "min_ms": 0.5, "max_ms": 1.5, "packets": 64}]}
    link = _build(LinkModel, record, "bottleneck.link")
    assert link.down == [Bursts(2.0, 4.0, 64), Loss(0.5, 50.0), DelayVariation(250, [0.0, 10.0, 20.0, 10.0])]
    assert link.up == [Bursts(0.5, 1.5, 64)]
    with pytest.raises(PlanError, match=r"bottleneck.link.down\[0\].stage: one of bursts, loss, delay_variation, "
                                        r"got 'jitter'"):
        _build(LinkModel, {**record, "down": [{"stage": "jitter", "ms": 1}]}, "bottleneck.link")
    with pytest.raises(PlanError, match=r"bottleneck.link.up\[0\]: unknown field\(s\) rate"):
        _build(LinkModel, {**record, "up": [{"stage": "loss", "p_percent": 1.0, "r_percent": None, "rate": 1}]},
               "bottleneck.link")


def test_a_varying_delay_keeps_the_line_in_order_and_adds_its_extra(monkeypatch):
    """A varying delay towards the clients: the line gets a rate of 100 Gbit/s (netem keeps a line in
    order only with one) and, at a bin of 7.5 ms extra, 10 + 7.5 = 17.5 ms; bursts and loss after it."""
    d = Dumbbell(plan_of(50.0, 100, [20.0], down=[Bursts(2.0, 4.0, 64), Loss(1.0), DelayVariation(10, [0.0, 7.5])]))
    assert d._delay_line(1, "client") == "netem delay 10.000ms limit 100000 rate 100000mbit slot 2ms 4ms packets 64"
    d.with_loss = True
    assert d._delay_line(1, "client", 7.5) == \
        "netem delay 17.500ms limit 100000 rate 100000mbit slot 2ms 4ms packets 64 loss random 1%"
    assert d.delay_variation == DelayVariation(10, [0.0, 7.5])
