"""The containerlab topology a scenario becomes (sslab.guest.clab), and the file checked in beside it."""

import subprocess
import sys

import yaml

from sslab.guest.clab import ContainerlabDumbbell, topology, to_yaml
from sslab.experiment.plan import plan_for
from sslab.paths import REPO_ROOT
from sslab.scenario import load_scenario


def dumbbell(scenario: str = "experiments/scenarios/e1-startup.yaml") -> ContainerlabDumbbell:
    return ContainerlabDumbbell(plan_for(load_scenario(REPO_ROOT / scenario)))


def test_every_namespace_is_a_node_and_every_veth_a_link():
    db = dumbbell()
    t = topology(db)
    nodes = t["topology"]["nodes"]
    assert sorted(nodes) == sorted(["r1", "r2"] + [f"s{i}" for i in range(1, 6)] + [f"c{i}" for i in range(1, 6)])
    ends = [tuple(link["endpoints"]) for link in t["topology"]["links"]]
    assert ("r1:r1-r2", "r2:r2-r1") in ends
    assert ("s3:eth1", "r1:r1-s3") in ends and ("c5:eth1", "r2:r2-c5") in ends
    assert len(ends) == 1 + 2 * 5
    # every interface appears once
    names = [e for pair in ends for e in pair]
    assert len(names) == len(set(names))
    d = t["topology"]["defaults"]
    # nothing may be pulled (no registry is reachable), and the nodes have no management interface
    assert d["image-pull-policy"] == "never" and d["network-mode"] == "none" and d["kind"] == "linux"


def test_the_yaml_reads_back_as_the_topology():
    t = topology(dumbbell())
    assert yaml.safe_load(to_yaml(t)) == t


def test_to_yaml_quotes_strings_that_yaml_would_read_otherwise():
    data = {"a": "yes", "b": "1.0", "c": ["on", "x: y"], "d": {}, "e": 3}
    assert yaml.safe_load(to_yaml(data)) == data


def test_the_checked_in_topology_is_what_the_scenario_makes():
    checked_in = (REPO_ROOT / "topologies/dumbbell5.clab.yml").read_text()
    made = subprocess.run([sys.executable, "-m", "sslab", "clab", str(REPO_ROOT / "experiments/scenarios/e1-startup.yaml")],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    assert made.returncode == 0, made.stderr
    assert yaml.safe_load(made.stdout) == yaml.safe_load(checked_in)


def test_the_testbed_wires_containers_it_starts_itself():
    db = dumbbell()
    t = topology(db, external=True)
    assert t["topology"]["defaults"] == {"kind": "ext-container"}
    assert "clab-sslab-r1" in t["topology"]["nodes"] and "r1" not in t["topology"]["nodes"]
    ends = [tuple(link["endpoints"]) for link in t["topology"]["links"]]
    assert ("clab-sslab-s3:eth1", "clab-sslab-r1:r1-s3") in ends
    # the same links as the file to deploy by hand, node for node
    plain = [tuple(link["endpoints"]) for link in topology(db)["topology"]["links"]]
    assert [tuple(e.removeprefix("clab-sslab-") for e in pair) for pair in ends] == plain
    # a management network without IPv6 or iptables (the testbed's kernel has neither)
    assert t["mgmt"]["external-access"] is False and "ipv6-subnet" not in t["mgmt"]


def test_switched_lans_are_ovs_bridge_nodes_with_the_hosts_and_the_router_on_them():
    """lans: ovs. Each side one Open vSwitch bridge node (containerlab's ovs-bridge kind); every host
    and its router on it by one link; the delay lines on the switch's ports towards the hosts."""
    from sslab.scenario import scenario_from_dump
    s = load_scenario(REPO_ROOT / "experiments/scenarios/e1-startup.yaml")
    dump = s.model_dump(by_alias=True)
    s = scenario_from_dump({**dump, "topology": {**dump["topology"], "lans": "ovs"}})
    db = ContainerlabDumbbell(plan_for(s))
    t = topology(db, external=True)
    nodes = t["topology"]["nodes"]
    assert nodes["sl-lan1"] == {"kind": "ovs-bridge"} and nodes["sl-lan2"] == {"kind": "ovs-bridge"}
    ends = [tuple(link["endpoints"]) for link in t["topology"]["links"]]
    assert ("clab-sslab-r1:r1-r2", "clab-sslab-r2:r2-r1") in ends
    assert ("clab-sslab-r1:r1-lan", "sl-lan1:sl-l1-r1") in ends and ("clab-sslab-r2:r2-lan", "sl-lan2:sl-l2-r2") in ends
    assert ("clab-sslab-s3:eth1", "sl-lan1:sl-l1-s3") in ends and ("clab-sslab-c5:eth1", "sl-lan2:sl-l2-c5") in ends
    assert len(ends) == 1 + 2 + 2 * 5
    assert db.toward_server(3) == (None, "sl-l1-s3") and db.toward_client(5) == (None, "sl-l2-c5")
    plain = dumbbell()
    assert plain.toward_server(3) == ("sl-r1", "r1-s3") and plain.switches == []
