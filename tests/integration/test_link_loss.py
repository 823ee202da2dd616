"""A last hop that loses packets at random, on the testbed (UML): the loss is the hop's (the
bottleneck drops nothing), at the rate asked for, each packet alone or in bursts, and a link without
loss keeps every byte it had."""

import json
from pathlib import Path

import pytest

from sslab.analysis.pcap import flow_packets
from sslab.paths import REPO_ROOT

from .helpers import sslab

pytestmark = pytest.mark.vm
LOSSY = REPO_ROOT / "tests/data/lossy-hop.yaml"
BURSTS = ["bottleneck.link.loss.down.rate=null", "bottleneck.link.loss.down.p=0.5%",
          "bottleneck.link.loss.down.r=50%"]


def run_lossy(results: Path, *sets: str) -> dict:
    args = ["run", "startup", "--scenario", str(LOSSY)]
    for s in sets:
        args += ["--set", s]
    res = sslab(args, results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # With fields set the runs go apart (results/startup_set-.../), never under results/startup/.
    [run_dir] = [d.resolve() for d in results.glob("startup*/latest")]
    assert (run_dir.parent.parent.name == "startup") == (not sets), run_dir   # results/<store>/cells/<key>
    [tag] = [p.name for p in (run_dir / "job/out/runs").iterdir()]
    return {"dir": run_dir / "job/out/runs" / tag,
            "run": json.loads((run_dir / "job/out/runs" / tag / "run.json").read_text()),
            "fidelity": json.loads((run_dir / "job/out/fidelity.json").read_text())}


def lost_at_the_hop(r: dict) -> tuple[int, list[int]]:
    """Data segments that passed the bottleneck and never reached the client: (how many, the runs of
    consecutive ones, by position in the bottleneck's order)."""
    port = r["run"]["flows"][0]["port"]
    sent = [(p[2], p[5]) for p in flow_packets(r["dir"] / r["run"]["pcap"], port) if p[1] == "s" and p[5]]
    got = [(p[2], p[5]) for p in flow_packets(r["dir"] / r["run"]["client_pcap"], port) if p[1] == "s" and p[5]]
    # One line, in order, no reordering: walk both; a segment the client's next is not is the hop's.
    missing, k = [], 0
    for i, seg in enumerate(sent):
        if k < len(got) and got[k] == seg:
            k += 1
        else:
            missing.append(i)
    assert k == len(got), "the client saw a segment the bottleneck did not send"
    runs, prev = [], None
    for i in missing:
        if prev is not None and i == prev + 1:
            runs[-1] += 1
        else:
            runs.append(1)
        prev = i
    return len(missing), runs


def test_a_lossy_hop_loses_at_its_rate_each_packet_alone_or_in_bursts(tmp_path):
    """2 MB is about 1400 data segments: 1 % loses about 14 (binomial, sd 3.7), asserted in [3, 35].
    The chain's bursts average two packets (1 / r), so some loss is a run of two or more: over 10 MB
    (about 7000 segments, some 35 bursts, 70 losses) all bursts are single with a chance of 2^-35;
    over 2 MB (some 7 bursts) it was 1 in 128, and a module change's shift of the guest's timeline
    drew it (29 Nov 2026: five bursts, each one packet)."""
    alone = run_lossy(tmp_path / "alone")
    assert alone["fidelity"]["loss_added_after_checks"] is True and alone["fidelity"]["rate"]["ok"]
    assert alone["run"]["bottleneck"]["drops"] == 0
    n, runs = lost_at_the_hop(alone)
    assert 3 <= n <= 35, (n, runs)
    assert alone["run"]["tcp_counters"]["1"]["RetransSegs"] >= n   # each one sent again
    bursts = run_lossy(tmp_path / "bursts", *BURSTS, "cases.0.flows.0.size=10MB")
    n, runs = lost_at_the_hop(bursts)
    assert bursts["run"]["bottleneck"]["drops"] == 0 and 25 <= n <= 150, (n, runs)
    assert max(runs) >= 2, runs


def test_without_loss_the_hop_loses_nothing(tmp_path):
    r = run_lossy(tmp_path, "bottleneck.link.loss.down=null")
    assert "loss_added_after_checks" not in r["fidelity"]
    assert r["run"]["bottleneck"]["drops"] == 0 and r["run"]["client_pcap"] is None
    assert r["run"]["tcp_counters"]["1"]["RetransSegs"] == 0
