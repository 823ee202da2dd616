"""Every record names its kind and format; readers take older and equal formats and refuse newer ones by name."""

import json
import os
import subprocess
import sys

import pytest

from sslab.paths import REPO_ROOT
from sslab.records import FORMATS, RecordFormatError, check, format_of, read_record, stamped


def test_a_stamped_record_leads_with_its_format_and_leaves_the_original_alone():
    original = {"flows": [], "format": "stale"}
    rec = stamped("sslab.run", original)
    assert list(rec)[0] == "format" and rec["format"] == f"sslab.run/{FORMATS['sslab.run']}"
    assert rec["flows"] == [] and original["format"] == "stale"


def test_older_and_equal_formats_are_read(tmp_path):
    assert check("sslab.run", {"flows": []}) == {"flows": []}          # before formats: version 0
    assert check("sslab.run", {"format": format_of("sslab.run"), "x": 1})["x"] == 1
    p = tmp_path / "run.json"
    p.write_text(json.dumps(stamped("sslab.run", {"x": 2})))
    assert read_record(p, "sslab.run")["x"] == 2


def test_a_newer_format_is_refused_by_kind_version_and_path(tmp_path):
    p = tmp_path / "meta.json"
    newer = FORMATS["sslab.meta"] + 1
    p.write_text(json.dumps({"format": f"sslab.meta/{newer}", "seed": 1}))
    with pytest.raises(RecordFormatError) as e:
        read_record(p, "sslab.meta")
    said = str(e.value)
    assert str(p) in said and f"sslab.meta format {newer}" in said and f"reads ({FORMATS['sslab.meta']})" in said


def test_another_kind_or_no_object_is_refused(tmp_path):
    with pytest.raises(RecordFormatError, match="'sslab.cell/1' record where a sslab.run record belongs"):
        check("sslab.run", {"format": "sslab.cell/1"})
    with pytest.raises(RecordFormatError, match="not a sslab.plan record"):
        check("sslab.plan", [1, 2])
    bad = tmp_path / "plan.json"
    bad.write_text("{not json")
    with pytest.raises(RecordFormatError, match="not JSON"):
        read_record(bad, "sslab.plan")


def test_the_scenario_plan_handed_to_the_guest_is_stamped():
    from sslab.experiment.plan import plan_for
    from sslab.scenario import load_scenario
    from sslab.records import plan_record, read_plan
    plan = plan_for(load_scenario(REPO_ROOT / "tests/data/e1-smoke.yaml"), "uml", "uml/inf-cpu")
    assert plan_record(plan)["format"] == format_of("sslab.plan")
    # The file reads back as the plan it was written from: the host's plan is the guest's.
    assert read_plan(json.loads(json.dumps(plan_record(plan)))) == plan


def test_a_host_refuses_a_newer_matrix_plan_with_exit_2(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"format": "sslab.matrix-plan/99", "deal": {"h": []}}))
    env = {"SSLAB_RESULTS": str(tmp_path / "results"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
           **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
    res = subprocess.run([sys.executable, "-m", "sslab", "matrix", "run-cells", "--matrix-dir", str(tmp_path / "m"),
                          "--plan", str(plan), "--host", "h"], capture_output=True, text=True, cwd=REPO_ROOT,
                         env=env, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "sslab.matrix-plan format 99, newer than this harness reads (1)" in res.stderr
    assert not (tmp_path / "m").exists() and not (tmp_path / "results").exists()


def test_the_index_of_runs_is_read_as_a_record_or_as_the_bare_list_written_before_formats(tmp_path):
    from sslab.records import read_runs_index, runs_index
    p = tmp_path / "runs.json"
    runs = [{"tag": "000-cubic_hs-5MB-r0", "case": "cubic_hs-5MB", "rep": 0}]
    p.write_text(json.dumps(runs_index(runs)))
    assert json.loads(p.read_text())["format"] == "sslab.runs/1" and read_runs_index(p) == runs
    p.write_text(json.dumps(runs))  # version 0
    assert read_runs_index(p) == runs
    p.write_text(json.dumps({"format": "sslab.runs/7", "runs": runs}))
    with pytest.raises(RecordFormatError, match="sslab.runs format 7, newer than this harness reads"):
        read_runs_index(p)


def test_the_job_and_its_status_carry_their_formats(tmp_path):
    """job.json (host -> agent) and status.json (agent -> host); the agent, which imports nothing of
    the harness in the guest, writes the format sslab.records names."""
    from sslab.substrate import agent
    from sslab.substrate.job import JobError, JobSpec, read_status
    assert agent.STATUS_FORMAT == format_of("sslab.status")
    job = tmp_path / "job"
    JobSpec(argv=["true"], timeout_s=10, name="t").write(job)
    assert json.loads((job / "job.json").read_text())["format"] == format_of("sslab.job")
    status = agent.run_job(str(job))
    assert status["exit_code"] == 0 and read_status(job)["format"] == format_of("sslab.status")
    (job / "out" / "status.json").write_text(json.dumps({**status, "format": "sslab.status/9"}))
    with pytest.raises(JobError, match="sslab.status format 9, newer"):
        read_status(job)


def _e1_plan() -> dict:
    """E1's plan as its plan.json holds it."""
    from sslab.experiment.plan import plan_for
    from sslab.records import plan_record
    from sslab.scenario import load_scenario
    return plan_record(plan_for(load_scenario(REPO_ROOT / "experiments/scenarios/e1-startup.yaml"), "uml",
                                "uml/inf-cpu"))


def test_the_plan_is_read_typed_as_the_guest_reads_it():
    from sslab.records import read_plan
    plan = read_plan(_e1_plan())
    assert plan.name == "e1-startup" and plan.topology.backend == "netns" and plan.bottleneck.buffer_pkts == 413
    assert plan.fidelity.ping_count == 3 and plan.fidelity.calibrate is False  # virtual time's rules
    assert [f.cc for f in plan.runs[0].flows] == ["cubic_ss"] and plan.runs[0].flows[0].size == 5_000_000
    assert plan.runs[0].trace_offset_s is None and plan.hosts.pairs[0].server.rx_batch is None


def test_a_plan_of_format_2_is_read_with_each_flows_start_version_in_one_field():
    """A format 2 plan (a cached matrix cell's, an archive's plan.json) named a SUSS flow's version in
    suss_version, cubic_hs's HyStart in hystart and SEARCH's in search: read, each is the flow's
    `version` in its start's words (SUSS 0 is "ours"), and a flow of no versions has none."""
    from sslab.records import read_plan
    plan = _e1_plan()
    old = [{"suss_version": 0}, {"suss_version": 2025}, {"suss_version": None, "hystart": "Linux 5.19"},
           {"suss_version": None, "search": "4.0"}, {"suss_version": None}]
    runs = plan["runs"][:len(old)]
    for run, fields in zip(runs, old):
        run["flows"][0].pop("version", None)
        run["flows"][0].update(fields)
    got = read_plan({**plan, "runs": runs, "format": "sslab.plan/2"})
    assert [r.flows[0].version for r in got.runs] == ["ours", "2025", "Linux 5.19", "4.0", None]
    # The same fields in a plan of this format are a drift, refused by name.
    with pytest.raises(Exception, match="unknown field"):
        read_plan({**plan, "runs": runs})


def test_a_flows_start_version_is_read_from_run_records_of_either_format():
    """recorded_version, recorded_suss_version and recorded_hystart take a run record's flow as format 2
    writes it (one `version`, read by the flow's start) or as format 1 did (suss_version, hystart, search)."""
    from sslab.ccas import recorded_hystart, recorded_suss_version, recorded_version
    new = [{"cc": "cubic_suss", "version": "ours"}, {"cc": "cubic_suss25", "version": "2025"},
           {"cc": "cubic_hs", "version": "Linux 5.19"}, {"cc": "cubic_search", "version": "3.0"}, {"cc": "cubic_ss"}]
    old = [{"cc": "cubic_suss", "suss_version": 0}, {"cc": "cubic_suss25", "suss_version": 2025},
           {"cc": "cubic_hs", "suss_version": None, "hystart": "Linux 5.19"},
           {"cc": "cubic_search", "suss_version": None, "search": "3.0"}, {"cc": "cubic_ss", "suss_version": None}]
    for flows in (new, old):
        assert [recorded_version(f) for f in flows] == ["ours", "2025", "Linux 5.19", "3.0", None]
        assert [recorded_suss_version(f) for f in flows] == [0, 2025, None, None, None]
        assert [recorded_hystart(f) for f in flows] == [None, None, "Linux 5.19", None, None]
    # A SEARCH flow's "3.0" is no SUSS version, nor a cubic_hs's HyStart one of another flow's.
    assert recorded_suss_version({"cc": "cubic_search", "version": "2024"}) is None
    assert recorded_hystart({"cc": "cubic_suss", "version": "2024"}) is None


@pytest.mark.parametrize("change, said", [
    (lambda p: p["runs"][3]["flows"][0].pop("cc"), "runs[3].flows[0].cc: missing"),
    (lambda p: p["runs"][0]["flows"][0].update(cc=7), "runs[0].flows[0].cc: str expected, got 7"),
    (lambda p: p["fidelity"].update(ping_count=True), "fidelity.ping_count: int expected, got True"),
    (lambda p: p["bottleneck"]["link"].update(shaper=None), "bottleneck.link.shaper: str expected, got None"),
    (lambda p: p["topology"].update(routers=2), "topology: unknown field(s) routers"),
    (lambda p: p.update(runs={}), "runs: a list, got dict"),
    (lambda p: p.update(format="sslab.plan/4"), "sslab.plan format 4, newer than this harness reads"),
    (lambda p: p["runs"][0]["flows"][0].update(suss_version=2024), "runs[0].flows[0]: unknown field(s) suss_version"),
])
def test_a_plan_that_drifted_from_the_typed_definition_is_refused_naming_the_field(change, said):
    from sslab.records import PlanError, read_plan
    plan = _e1_plan()
    change(plan)
    with pytest.raises((PlanError, RecordFormatError)) as e:
        read_plan(plan)
    assert said in str(e.value)


def test_every_experiments_plans_match_the_typed_definition():
    """to_plan validates each plan it compiles (a drift fails before any boot): every part of every
    experiment file, on each substrate's clock."""
    from sslab.experiment import experiment_files, load_experiment
    from sslab.experiment.plan import plan_for
    from sslab.scenario import load_scenario, parse_scenario
    n = 0
    for f in experiment_files():
        for part in load_experiment(f).parts:
            s = load_scenario(part.path) if part.path else parse_scenario(part.data)
            for substrate, clock in (("uml", "uml/inf-cpu"), ("vm", "qemu/icount")):
                plan_for(s, substrate, clock)
                n += 1
    assert n >= 2 * 30


def test_no_class_is_named_twice_in_the_harness():
    """The file's front end (sslab.scenario.model: BottleneckSpec, FlowSpec, ...) and the plan
    (sslab.records: Bottleneck, Flow, ...) name their classes apart, as does every other module:
    a name found in a traceback or a grep is one class."""
    import ast
    from collections import defaultdict

    from sslab.paths import REPO_ROOT

    where = defaultdict(list)
    for f in sorted((REPO_ROOT / "runners" / "sslab").rglob("*.py")):
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(f.relative_to(REPO_ROOT)))
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert len(where) > 100 and not twice, twice
