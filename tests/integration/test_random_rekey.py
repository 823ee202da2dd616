"""A run apart from the guest's past, read back from real boots: the guest's own work before a job,
which draws from the kernel's generator and reads its clock, moves no byte of the job's runs (their
random numbers keyed from their own seed: images/uml/patches/0009-*, sslab.guest.timeline.
rekey_random; the job's work from a whole second: sleep_until_the_next_second); with the rekeying
taken out, the same work moves what the runs drew."""

import json
from pathlib import Path

import pytest
import yaml

from sslab.analysis.pcap import open_pcap, pcap_records
from sslab.experiment.plan import for_substrate
from sslab.records import plan_record, read_runs_index
from sslab.scenario import parse_scenario, to_plan
from sslab.substrate.job import JobSpec
from sslab.substrate.uml import UMLConfig, UMLTestbed

pytestmark = pytest.mark.vm

# BBR draws a random number when it enters ProbeBW (which of its gain cycle's phases to start in),
# and every connection draws its IP IDs' start: a run that depends on the generator's state shows it.
SCENARIO = {
    "name": "rekey", "seed": 11,
    "topology": {"kind": "dumbbell", "pairs": 1},
    "bottleneck": {"rate": "20mbit", "buffer": {"packets": 60}},
    "pairs": [{"rtt": "40ms"}],
    "cases": [{"name": "bbr", "flows": [{"pair": 1, "cc": "bbr", "size": "3MB"}]}],
    "repetitions": 2, "capture": {"pcap": True, "snaplen": 96, "traces": False},
}
#: Work before the job's own code: modules imported and 64 KB drawn from the kernel's generator.
WORK = "import os, decimal, email.parser, xml.dom.minidom\nfor _ in range(1024): os.getrandom(64)\n"
MAIN = "import sys, sslab.guest.scenario_run as job\n{patch}sys.exit(job.main())\n"


def run_job(uml: UMLTestbed, plan, where: Path, work: str = "", rekey: bool = True) -> dict[str, dict]:
    """The plan's job run in a fresh boot after @work: each run's record (host times aside) and its
    capture's frames as (time in us, bytes), by tag."""
    patch = "" if rekey else "job.rekey_random = lambda seed: None\n"
    argv = ["python3", "-c", work + MAIN.format(patch=patch)]
    res = uml.run(JobSpec(argv=argv, timeout_s=900, name="rekey", files={"plan.json": json.dumps(plan_record(plan))},
                          seed=plan.entropy_seed), where)
    assert res.ok, res.stderr()[-3000:]
    out = {}
    for entry in read_runs_index(res.out_dir / "runs.json"):
        rdir = res.out_dir / "runs" / entry["tag"]
        run = json.loads((rdir / "run.json").read_text())
        with open_pcap(rdir / run["pcap"]) as f:
            frames = [(round(ts * 1e6), bytes(buf)) for ts, buf in pcap_records(f)]
        out[entry["tag"]] = {"run": run, "frames": frames}
    return out


def test_the_guests_own_work_before_a_job_moves_no_byte_of_its_runs(tmp_path, image):
    uml = UMLTestbed(image, UMLConfig())
    scenario = parse_scenario(yaml.safe_load(yaml.safe_dump(SCENARIO)), "rekey")
    plan = for_substrate(to_plan(scenario), "uml", uml.clock)
    plain = run_job(uml, plan, tmp_path / "plain")
    busy = run_job(uml, plan, tmp_path / "busy", WORK)
    first, second = list(plain)
    # Each run keyed from a number of its own.
    assert isinstance(plain[first]["run"]["random_rekey"], int)
    assert plain[first]["run"]["random_rekey"] != plain[second]["run"]["random_rekey"]
    assert [busy[t]["run"]["random_rekey"] for t in busy] == [plain[t]["run"]["random_rekey"] for t in plain]
    # After the guest's extra work every run sends the same frames at the same times: its random
    # numbers (IP IDs start at a random number a connection; the ports come from the generator and
    # from secrets it made) and its clock (the job's work starts on a whole second of guest time,
    # after the extra work's imports and clock reads).
    for t in plain:
        a, b = plain[t], busy[t]
        assert a["frames"] == b["frames"] and len(a["frames"]) > 100
        assert a["run"]["bottleneck"] == b["run"]["bottleneck"] and a["run"]["flows"] == b["run"]["flows"]
    # Without the rekeying the same work moves what the runs drew.
    unkeyed = run_job(uml, plan, tmp_path / "unkeyed", WORK, rekey=False)
    assert all(unkeyed[t]["run"]["random_rekey"] is None for t in plain)
    assert all(drawn(unkeyed[t]["frames"]) != drawn(plain[t]["frames"]) for t in plain)


def drawn(frames: list[tuple[int, bytes]]) -> list[bytes]:
    """Each frame's length, IP ID and ports: what a run draws from the generator, and no clock."""
    return [len(b).to_bytes(2, "big") + b[18:20] + b[34:38] for _, b in frames]
