"""The "ran under" line every report prints, from the archive's meta.json, plan and run records."""

import json
from pathlib import Path

from sslab.analysis.conditions import conditions_of, run_conditions
from sslab.analysis.setting import from_model, setting_of
from sslab.paths import REPO_ROOT
from sslab.records import runs_index
from sslab.scenario import parse_scenario, to_plan
from sslab.scenario.load import scenario_file_data


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    return plan_record(to_plan(s))


def _scenario(hosts: str | None):
    data = scenario_file_data(REPO_ROOT / "tests" / "data" / "e1-smoke.yaml")
    return parse_scenario({**data, **({"hosts": {"model": hosts}} if hosts else {})})


def _run(root: Path, name: str, model: dict, versions: list[int | None]) -> Path:
    """A run directory: its plan with the host model @model names (`hosts`); none named: an archive
    from before host models were recorded (its meta.json's scenario has no hosts, its plan no words)."""
    d = root / name
    (d / "job/out/runs/r0").mkdir(parents=True)
    s = _scenario((model.get("hosts") or {}).get("model"))
    dump, plan = s.model_dump(mode="json", by_alias=True), {"format": "sslab.plan/3", **plan_data(s)}
    if "hosts" not in model:
        del dump["hosts"], plan["asked"]
    (d / "plan.json").write_text(json.dumps(plan))
    (d / "meta.json").write_text(json.dumps({"substrate": "uml", "clock": "uml/inf-cpu",
                                             "scenario": {"model": dump}}))
    # As the guest writes it; run "a" as written before formats (a bare list, version 0).
    index = [{"tag": "r0"}]
    (d / "job/out/runs.json").write_text(json.dumps(index if name == "a" else runs_index(index)))
    flows = [{"cc": "cubic_suss" if v else "cubic_hs", "suss_version": v} for v in versions]
    (d / "job/out/runs/r0/run.json").write_text(json.dumps({"flows": flows}))
    return d


def test_one_testbed_is_named_once_with_every_suss_version(tmp_path):
    a = _run(tmp_path, "a", {}, [None, 2024])
    b = _run(tmp_path, "b", {}, [2025])
    line = conditions_of([a, b])
    assert line.startswith("substrate uml, clock uml/inf-cpu; host model ideal (not recorded")
    assert line.count("substrate") == 1
    assert "SUSS 2024" in line and "SUSS 2025" in line and line.index("2024") < line.index("2025")


def test_runs_without_suss_say_so_and_a_second_host_model_is_counted(tmp_path):
    a = _run(tmp_path, "a", {}, [None])
    b = _run(tmp_path, "b", {"hosts": {"model": "1gbe"}}, [None])
    c = _run(tmp_path, "c", {"hosts": {"model": "1gbe"}}, [None])
    line = conditions_of([a, b, c])
    assert line.endswith("SUSS: no SUSS flow")
    assert "[1 run(s)]" in line and "[2 run(s)]" in line and "1gbe" in line


def test_a_directory_without_meta_is_not_a_run(tmp_path):
    assert conditions_of([tmp_path]) == "not recorded (no run's meta.json found)"
    model = _scenario(None).model_dump(mode="json", by_alias=True)
    del model["hosts"]
    meta = {"substrate": "vm", "clock": "qemu/icount"}
    assert run_conditions(meta, from_model(model, 10), [{"suss_version": 0}, {"suss_version": None}]) == (
        "substrate vm, clock qemu/icount; host model ideal (not recorded: before host models); "
        "SUSS: SUSS, ours from the paper's text")


def test_the_hystart_each_cubic_hs_flow_ran_is_named(tmp_path):
    a = _run(tmp_path, "a", {}, [None, 2024])
    flows = json.loads((a / "job/out/runs/r0/run.json").read_text())["flows"]
    flows[0]["hystart"] = "Linux 5.19"
    (a / "job/out/runs/r0/run.json").write_text(json.dumps({"flows": flows}))
    assert conditions_of([a]).endswith("SUSS: SUSS 2024 (the authors' code behind the paper); "
                                       "cubic_hs: Linux 5.19 HyStart")
    meta = json.loads((a / "meta.json").read_text())
    assert run_conditions(meta, setting_of(a), [{"hystart": "Linux 6.1.192"}]).endswith(
        "; cubic_hs: Linux 6.1.192 HyStart")
    assert "cubic_hs" not in run_conditions(meta, setting_of(a), [{"suss_version": 2024}])


def test_runs_recorded_with_one_version_field_name_suss_and_hystart_as_before(tmp_path):
    """A run record of format 2 names a flow's start's version in `version`: the line says the same
    as for format 1's suss_version and hystart."""
    a = _run(tmp_path, "a", {}, [None])
    flows = [{"cc": "cubic_suss", "version": "2025"}, {"cc": "cubic_hs", "version": "Linux 5.19"}]
    (a / "job/out/runs/r0/run.json").write_text(json.dumps({"format": "sslab.run/2", "flows": flows}))
    assert conditions_of([a]).endswith("SUSS: SUSS 2025 (the authors' rewrite); cubic_hs: Linux 5.19 HyStart")


def test_a_start_written_from_a_draft_names_the_draft_and_its_revisions_constant(tmp_path):
    a = _run(tmp_path, "a", {}, [None])
    record = {"flows": [{"cc": "cubic_rapid", "cc_used": "cubic_rapid"}], "module_params": {}}
    (a / "job/out/runs/r0/run.json").write_text(json.dumps(record))
    assert conditions_of([a]).endswith("SUSS: no SUSS flow; cubic_rapid: Rapid Start, "
                                       "draft-kazuho-ccwg-rapid-start (K = 11/18)")
    # The module parameter as run: the -02 revision's K.
    meta = json.loads((a / "meta.json").read_text())
    runs = [{**record, "module_params": {"rapid_k36": 24}}]
    assert run_conditions(meta, setting_of(a), [], runs).endswith(
        "; cubic_rapid: Rapid Start, draft-kazuho-ccwg-rapid-start (K = 2/3)")
    assert "Rapid" not in run_conditions(meta, setting_of(a), [], [{"flows": [{"cc": "cubic_hs"}]}])


def test_the_quic_stand_ins_say_which_cubic_and_slow_start_they_ran(tmp_path):
    """cubic_std and cubic_blitz: Google QUIC's two decisions by default; Linux's when the run set them so, or
    when the run's module had neither parameter (before 2 Dec 2026)."""
    a = _run(tmp_path, "a", {}, [None])
    meta = json.loads((a / "meta.json").read_text())

    def line(params: dict) -> str:
        runs = [{"flows": [{"cc": "cubic_std"}, {"cc": "cubic_blitz"}], "module_params": params}]
        return run_conditions(meta, setting_of(a), [], runs)

    quic = line({"std_connections": 2, "std_ack_train": 0})
    assert ("cubic_blitz: Google QUIC's CUBIC of two connections, the delay exit alone (Google QUIC's hybrid slow "
            "start); cubic_std: Google QUIC's CUBIC") in quic
    assert "cubic_std: Linux's CUBIC, HyStart's ACK-train and delay exits (Linux's)" in line({})
    assert "cubic_std: Linux's CUBIC, HyStart's" in line({"std_connections": 1, "std_ack_train": 1})
    assert "cubic_std: CUBIC of 3 connections, the delay exit alone" in line({"std_connections": 3, "std_ack_train": 0})
    assert "cubic_std" not in run_conditions(meta, setting_of(a), [], [{"flows": [{"cc": "cubic_hs"}]}])


def test_a_directory_is_read_once_and_again_when_it_is_run_again(tmp_path, monkeypatch):
    """A report says its conditions several times over the same cells: each directory's records are
    read once, and again when it has been run again (its meta.json written anew)."""
    from sslab.analysis import conditions as cond
    read = []
    real = cond._runs_of
    monkeypatch.setattr(cond, "_runs_of", lambda d: read.append(d) or real(d))
    a = _run(tmp_path, "a", {}, [2024])
    assert "SUSS 2024" in conditions_of([a]) and "SUSS 2024" in conditions_of([a]) and len(read) == 1
    # Run again, under SUSS 2025 (its meta.json rewritten after its runs, a record of another length).
    (a / "job/out/runs/r0/run.json").write_text(json.dumps({"flows": [{"cc": "cubic_suss", "suss_version": 2025}]}))
    meta = json.loads((a / "meta.json").read_text())
    (a / "meta.json").unlink()
    (a / "meta.json").write_text(json.dumps({**meta, "again": True}))
    line = conditions_of([a])
    assert "SUSS 2025" in line and "SUSS 2024" not in line and len(read) == 2
