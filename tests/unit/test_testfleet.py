"""The test fleet's records when a host comes back at another address (substrate.testfleet.readdress):
Podman's bridge gave a restarted container a new one (3 Dec 2026), and a host the inventory names
at its old address cannot rejoin."""

import json

from sslab.substrate import testfleet


def test_a_host_back_at_another_address_is_named_there_and_only_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SSLAB_CACHE", str(tmp_path))
    d = testfleet.fleet_dir()
    d.mkdir(parents=True)
    lines = ["# the test fleet", "[testbeds]",
             "fleet1 ansible_host=10.88.0.17 ansible_user=root sslab_workdir=/srv/sslab",
             "fleet2 ansible_host=10.88.0.1 ansible_user=root sslab_workdir=/srv/sslab"]
    testfleet.inventory_path().write_text("\n".join(lines) + "\n")
    hosts = [{"host": "fleet1", "container": "sslab-fleet-1", "engine": "podman", "ip": "10.88.0.17"},
             {"host": "fleet2", "container": "sslab-fleet-2", "engine": "docker", "ip": "10.88.0.1"}]
    (d / "fleet.json").write_text(json.dumps({"hosts": hosts}))
    (d / "known_hosts").write_text("10.88.0.17 ssh-ed25519 AAAAold\n")
    member = dict(hosts[0])
    testfleet.readdress(member, "10.88.0.18", "10.88.0.18 ssh-ed25519 AAAAold\n")
    assert testfleet.inventory_path().read_text().splitlines() == \
        lines[:2] + ["fleet1 ansible_host=10.88.0.18 ansible_user=root sslab_workdir=/srv/sslab", lines[3]]
    assert [m["ip"] for m in testfleet.members()] == ["10.88.0.18", "10.88.0.1"] and member["ip"] == "10.88.0.18"
    assert (d / "known_hosts").read_text().splitlines() == ["10.88.0.17 ssh-ed25519 AAAAold",
                                                            "10.88.0.18 ssh-ed25519 AAAAold"]
