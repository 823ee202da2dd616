"""Seeds, start offsets and the UML command line: what makes a virtual-time run repeatable on purpose."""

import gzip
import json
from pathlib import Path

import pytest

from sslab.analysis.crosscheck import agree
from sslab.experiment.archive import complete_run, gzip_in_place
from sslab.experiment.plan import fidelity_rules
from sslab.matrix.spec import repetition_seed
from sslab.scenario import ScenarioError, parse_scenario, to_plan
from sslab.substrate.uml import GUEST_EPOCH_NS, kernel_cmdline, stage_links

BASE = {"name": "v", "topology": {"pairs": 2}, "bottleneck": {"rate": "10mbit", "buffer": {"packets": 50}},
        "pairs": [{"rtt": "40ms"}, {"rtt": "100ms"}],
        "cases": [{"name": "a", "flows": [{"pair": 1, "cc": "cubic", "size": "1MB"},
                                          {"pair": 2, "cc": "cubic_suss", "size": "1MB", "start": "1s"}]}],
        "repetitions": 3}


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    return plan_record(to_plan(s))


def offsets(plan):
    return [[f["start_offset_s"] for f in r["flows"]] for r in plan["runs"]]


def test_start_offsets_are_seeded_within_a_round_trip_and_recorded():
    plan = plan_data(parse_scenario(BASE))
    offs = offsets(plan)
    assert offs == offsets(plan_data(parse_scenario(BASE)))  # the same seed, the same offsets
    assert all(0 <= a < 0.040 and 0 <= b < 0.100 for a, b in offs)
    assert len({a for a, _ in offs}) == 3  # every run its own
    other = offsets(plan_data(parse_scenario({**BASE, "seed": 2})))
    assert other != offs
    assert plan["seed"] == 1 and plan["runs"][0]["flows"][1]["start"] == 1.0


def test_start_offset_knob():
    fixed = plan_data(parse_scenario({**BASE, "variation": {"start_offset": "5ms"}}))
    assert all(0 <= x < 0.005 for r in offsets(fixed) for x in r)
    none = plan_data(parse_scenario({**BASE, "variation": {"start_offset": 0}}))
    assert all(x == 0 for r in offsets(none) for x in r)
    with pytest.raises(ScenarioError, match="variation.start_offset"):
        parse_scenario({**BASE, "variation": {"start_offset": "-1ms"}})
    with pytest.raises(ScenarioError, match="variation.jitter: unknown field"):
        parse_scenario({**BASE, "variation": {"jitter": 1}})


def test_repetition_seeds_differ_and_repeat():
    seeds = [repetition_seed(1, r) for r in range(50)]
    assert len(set(seeds)) == 50 and seeds == [repetition_seed(1, r) for r in range(50)]
    assert all(0 <= s < 2**63 for s in seeds) and repetition_seed(2, 0) != seeds[0]


def test_uml_command_line_is_the_same_for_every_run(tmp_path):
    words = kernel_cmdline()
    assert words == kernel_cmdline()
    assert "time-travel=inf-cpu" in words and "ipv6.disable=1" in words and "hostfs=." in words
    assert f"time-travel-start={GUEST_EPOCH_NS}" in words
    assert not any("/" in w and not w.startswith("init=") for w in words), words


def test_uml_stage_links_are_the_only_host_paths(tmp_path):
    class FakeImage:
        rootfs = tmp_path / "img" / "rootfs"
    FakeImage.rootfs.mkdir(parents=True)
    job = tmp_path / "job"
    job.mkdir()
    stage = stage_links(job, FakeImage(), tmp_path)
    assert sorted(p.name for p in stage.iterdir()) == ["job", "root", "src"]
    assert (stage / "root").resolve() == FakeImage.rootfs.resolve() and (stage / "job").resolve() == job.resolve()


def test_fidelity_rules_follow_the_clock():
    assert fidelity_rules("uml/inf-cpu") == {"clock": "uml/inf-cpu", "calibrate": False, "rtt_tolerance_ms": 0.002,
                                           "ping_count": 3, "pairs_together": False}
    assert fidelity_rules("qemu/mttcg")["calibrate"] and fidelity_rules("kvm")["rtt_tolerance_ms"] == 0.5


def test_crosscheck_agreement():
    d = lambda m, ci=None, n=1: {"median": m, "ci95": ci, "n": n}  # noqa: E731
    assert agree(d(1.00), d(1.09)) == "agree" and agree(d(1.00), d(1.20)) == "DIFFER"
    # within the half-widths together: counts with 3 repetitions a side, not with 2
    assert agree(d(1.0, [0.8, 1.2], 3), d(1.25, [1.15, 1.35], 3)) == "agree"
    assert agree(d(1.0, [0.8, 1.2], 2), d(1.25, [1.15, 1.35], 2)) == "DIFFER"
    assert agree(d(0), d(4), count=True) == "agree" and agree(d(0), d(40), count=True) == "DIFFER"
    assert agree(None, d(1)) == "–"


PROBE = ("          <idle>-0       [000] ..s2.    {ts:.6f}: tcp_probe: family=AF_INET src=10.1.1.2:{port} "
         "dest=10.2.1.2:40000 mark=0x0 data_len=0 snd_nxt={nxt:#x} snd_una=0x1000 snd_cwnd={cwnd} "
         "ssthresh={ss} snd_wnd=1000000 srtt=100000 rcv_wnd=65280 sock_cookie=2")
EVENT = ("          <idle>-0       [000] ..s2.    {ts:.6f}: sslab_event: sport={port} dport=40000 variant=3 "
         "time_us=123 type=exit a=1 b=400 c=400 pkts=0 duration_us=0 rate=0 guard_us=0 limit=0 growth=0")


def test_host_completes_a_guest_run_record(tmp_path: Path):
    inf = 2147483647
    lines = ["# tracer: nop"]
    for t, c, s in ((1.0, 10, inf), (1.1, 400, inf), (1.2, 300, 300)):
        lines.append(PROBE.format(ts=t, port=5201, nxt=0x1000 + c * 1448, cwnd=c, ss=s))
    lines.append(EVENT.format(ts=1.15, port=5201))
    lines.append(PROBE.format(ts=1.3, port=5202, nxt=0x2000, cwnd=10, ss=inf))  # another flow's record
    (tmp_path / "flow.trace").write_text("\n".join(lines) + "\n")
    run = {"tag": "x", "flows": [{"port": 5201, "fct_s": 1.0}], "trace": "flow.trace"}
    (tmp_path / "run.json").write_text(json.dumps(run))
    done = complete_run(tmp_path)
    flow = done["flows"][0]
    assert flow["fct_s"] == 1.0 and flow["probe_records"] == 3
    assert flow["slow_start"]["exit_cwnd"] == 400 and flow["slow_start"]["ssthresh"] == 300
    assert [e["type"] for e in flow["events"]] == ["exit"] and flow["receiver_limited_acks"] == 0
    assert done["trace"] == "flow.trace.gz" and not (tmp_path / "flow.trace").exists()
    assert gzip.open(tmp_path / "flow.trace.gz", "rt").read() == "\n".join(lines) + "\n"
    assert json.loads((tmp_path / "run.json").read_text()) == done
    # Compressing is a function of the content: no timestamp in the gzip header.
    assert (tmp_path / "flow.trace.gz").read_bytes()[4:8] == b"\0\0\0\0"


def test_a_run_read_out_again_ends_as_read_out_once(tmp_path: Path):
    """A read-out stopped and run again (sslab.matrix.cells.read_out_cell): a run whose record was
    finished keeps its facts; one stopped after its trace was compressed but before its record was
    written is read from the compressed trace.  Each ends byte for byte as a read-out left alone."""
    inf = 2147483647
    lines = ["# tracer: nop"] + [PROBE.format(ts=t, port=5201, nxt=0x1000 + c * 1448, cwnd=c, ss=s)
                                 for t, c, s in ((1.0, 10, inf), (1.1, 400, inf), (1.2, 300, 300))]
    record = json.dumps({"tag": "x", "flows": [{"port": 5201, "fct_s": 1.0}], "trace": "flow.trace"})
    alone, again, cut = (tmp_path / name for name in ("alone", "again", "cut"))
    for d in (alone, again, cut):
        d.mkdir()
        (d / "flow.trace").write_text("\n".join(lines) + "\n")
        (d / "run.json").write_text(record)
    complete_run(alone)
    complete_run(again)
    complete_run(again)   # its record finished: the facts stay (not the empty ones of a run without a trace)
    gzip_in_place(cut / "flow.trace")   # stopped between compressing the trace and writing the record
    complete_run(cut)
    want = json.loads((alone / "run.json").read_text())
    assert want["flows"][0]["probe_records"] == 3 and want["flows"][0]["slow_start"]["exit_cwnd"] == 400
    for d in (again, cut):
        assert (d / "run.json").read_bytes() == (alone / "run.json").read_bytes(), d.name
        assert (d / "flow.trace.gz").read_bytes() == (alone / "flow.trace.gz").read_bytes()
        assert not (d / "flow.trace").exists()


def test_a_run_without_a_trace_gets_empty_trace_facts(tmp_path: Path):
    (tmp_path / "run.json").write_text(json.dumps({"flows": [{"port": 5201}], "trace": None}))
    flow = complete_run(tmp_path)["flows"][0]
    assert flow == {"port": 5201, "slow_start": None, "probe_records": 0, "server_fct_s": None,
                    "receiver_limited_acks": 0, "events": [], "bbr3": []}
