"""Matrices: selection, cell keys, dealing, the cell store, resuming and merging."""

import hashlib
import json
import tarfile
from pathlib import Path

import pytest

from sslab import matrix as mx
from sslab.matrix.transfer import merge_cells, pack_cells
from sslab.plan_record import BootPlace, MatrixPlan, PlannedCell
from sslab.scenario import load_scenario, parse_scenario, scenario_from_dump
from sslab.scenario.sets import SetError, resolve

KERNEL = {"reno": "built in", "cubic": "built in", "bbr": "module tcp_bbr", "cubic_hs": "module tcp_sslab",
          "cubic_suss": "module tcp_sslab"}


def plan_data(s):
    """@s's compiled plan as its file holds it (the records' plain data)."""
    from sslab.records import plan_record
    from sslab.scenario import to_plan
    return plan_record(to_plan(s))


@pytest.fixture(scope="module")
def table1():
    return mx.load_matrix("table1")


def chosen_of(m, options):
    """The values @options (OPTION -> its text, as a command line gives them) choose of @m's axes,
    resolved as every NAME=value is (sslab.scenario.sets) and checked as a run checks them."""
    chosen = resolve([f"{k}={v}" for k, v in options.items()], m.spec.name, axes=m.spec.axes).axes
    m.check_chosen(chosen)
    return chosen


def plan_of(m, options=None, iterations=1, image="img1", code="code1"):
    chosen = chosen_of(m, options or {})
    return mx.plan_matrix(m, chosen, iterations, image, KERNEL, code)


def test_selection_matches_make_style_values(table1):
    spec = table1.spec
    assert chosen_of(table1, {"CCA": "cubic"}) == {"large_cc": ["cubic"]}
    assert chosen_of(table1, {"RTT": "100"}) == {"large_rtt": ["100ms"]}
    assert chosen_of(table1, {"BUF": "2bdp", "RTT": "25ms,200"}) == {
        "buffer": ["2BDP"], "large_rtt": ["25ms", "200ms"]}
    assert chosen_of(table1, {"rtt": "25 ms, 25ms,,50"}) == {"large_rtt": ["25ms", "50ms"]}
    with pytest.raises(mx.MatrixError, match="CCA=bbr4: not a congestion control the harness knows"):
        chosen_of(table1, {"CCA": "bbr4"})
    with pytest.raises(SetError, match="^CCA=Cubic!: not a congestion-control name"):
        chosen_of(table1, {"CCA": "Cubic!"})
    with pytest.raises(SetError, match="^FOO: table1 has no setting FOO .its axes: BUF, CCA, FIRST_START, LAYOUT, RTT;"):
        chosen_of(table1, {"FOO": "1"})
    with pytest.raises(SetError, match="^RTT is empty"):
        chosen_of(table1, {"RTT": ","})
    assert mx.selection_id(spec, {"large_cc": ["cubic"]}) == "cca-cubic"
    assert mx.selection_id(spec, {}) == "all"


def test_table1_cells_and_unavailable_cca(table1, monkeypatch):
    plan = plan_of(table1, iterations=2)
    # A kernel without our patch 0005 (Debian's stock kernel, another KERNEL_SOURCE=) offers neither
    # bbr2_sslab (the BBRv2 column's) nor bbr3: their 8 settings each are reported, not run, not
    # substituted, and the reason names the control the column runs.
    assert len(plan.unavailable) == 16
    assert {u.setting["large_cc"] for u in plan.unavailable} == {"bbr2", "bbr3"}
    assert {u.reason for u in plan.unavailable} == {"bbr2 or bbr2_sslab is not offered by the kernel under test",
                                                    "bbr3 is not offered by the kernel under test"}
    # The default UML kernel carries the patch: all four columns are cells, the BBRv2 column's flows
    # run bbr2_sslab, and the plan says so.
    hooked = {**KERNEL, "bbr3": "module tcp_sslab", "bbr2_sslab": "module tcp_sslab"}
    full = mx.plan_matrix(table1, chosen_of(table1, {}), 1, "img1", hooked, "code1")
    assert len(full.cells) == 32 and not full.unavailable
    assert full.runs_as == {"cubic": "cubic_hs", "bbr2": "bbr2_sslab"}
    assert full.paper_beside["bbr3"]["column"] == "bbr2" and "bbr2" not in full.paper_beside
    bbr2_cell = next(c for c in full.cells if c.setting["large_cc"] == "bbr2")
    assert scenario_from_dump(bbr2_cell.scenario).cases[0].flows[0].cc == "bbr2_sslab"
    # A kernel that carries Google's own v2alpha (a researcher's patch) registers "bbr2": the column runs
    # it, with another cell key, and the plan says so.
    monkeypatch.setenv("SSLAB_KERNEL_PATCHES", "/google-v2alpha")
    google = mx.plan_matrix(table1, chosen_of(table1, {"CCA": "bbr2"}), 1, "img1",
                            {**hooked, "bbr2": "listed by the booted kernel"}, "code1")
    assert google.runs_as["bbr2"] == "bbr2" and not google.unavailable
    assert scenario_from_dump(google.cells[0].scenario).cases[0].flows[0].cc == "bbr2"
    assert google.cells[0].key != next(c for c in mx.plan_matrix(
        table1, chosen_of(table1, {"CCA": "bbr2"}), 1, "img1", hooked, "code1").cells).key
    assert len(plan.cells) == 2 * 16
    # Repetition-major: every setting once before any repeats.
    assert [c.rep for c in plan.cells] == [0] * 16 + [1] * 16
    # A cell records each axis's label (the layout's pairs and the flows' pairs follow from its own).
    cell = next(c for c in plan.cells if c.setting == {"large_cc": "bbr", "buffer": "2BDP", "large_rtt": "50ms",
                                                       "layout": "five-pairs", "first_start": "2s"} and c.rep == 0)
    s = scenario_from_dump(cell.scenario)
    assert s.pairs[0].rtt == pytest.approx(0.05)
    assert s.bottleneck.buffer.bdp == 2 and s.bottleneck.buffer.rtt == pytest.approx(0.05)
    # 2 BDP of 50 ms at 50 Mbit/s in 1514-byte frames
    assert s.buffer_packets == round(2 * 50e6 * 0.05 / 8 / 1514)
    assert [f.cc for f in s.cases[0].flows[:2]] == ["bbr", "cubic_hs"]
    assert len(s.cases[0].flows) == 13 and s.cases[0].flows[-1].start == 24


def test_tshark_reads_each_setting_in_turn_and_table1_each_setting_once():
    """The k-th setting's captures are read at its repetitions k, k + N, ... (N: capture_check_every),
    at most capture_check_per_setting times."""
    from sslab.matrix.plan import checks_capture
    assert [r for r in range(20) if checks_capture(3, r, 0, 8, None)] == [3, 11, 19]
    assert [r for r in range(20) if checks_capture(10, r, 0, 8, None)] == [2, 10, 18]
    assert checks_capture(3, 11, 1, 8, None) and not checks_capture(3, 11, 1, 8, 1)
    assert all(checks_capture(k, r, 5, 1, None) for k in range(4) for r in range(4))


@pytest.mark.parametrize("iterations, checked", [(1, 4), (3, 12), (8, 32), (10, 32), (50, 32)])
def test_table1s_sample_of_captures_covers_its_settings_at_a_fixed_cost(iterations, checked):
    """Table 1's four columns (32 settings): 1/8 of the cells while a setting has fewer than 8
    repetitions, then each setting once (every 8th cell in plan order read settings 0, 8, 16 and 24
    only: 4 settings, 200 cells at ITER=50)."""
    m = mx.load_matrix("table1")
    hooked = {**KERNEL, "bbr3": "module tcp_sslab", "bbr2_sslab": "module tcp_sslab"}
    plan = mx.plan_matrix(m, chosen_of(m, {}), iterations, "img1", hooked, "code1")
    sample = [c for c in plan.cells if c.capture_check]
    assert len(sample) == checked
    settings = {mx.selection_id(m.spec, {k: [v] for k, v in c.setting.items()}) for c in sample}
    assert len(settings) == checked  # never a setting twice
    if iterations >= 8:
        assert len({tuple(sorted(c.setting.items())) for c in plan.cells}) == len(settings) == 32


def test_any_valid_value_beside_the_papers(table1):
    chosen = chosen_of(table1, {"BUF": "0.5BDP,3bdp,2BDP", "RTT": "30,300ms", "CCA": "cubic,vegas"})
    # Written the axis's way (unit and spelling); the file's values first, in the file's order.
    assert chosen == {"buffer": ["0.5BDP", "3BDP", "2BDP"], "large_rtt": ["30ms", "300ms"],
                      "large_cc": ["cubic", "vegas"]}
    plan = mx.plan_matrix(table1, chosen, 1, "img", {**KERNEL, "vegas": "module tcp_vegas"}, "code")
    got = [(c.setting["large_cc"], c.setting["buffer"], c.setting["large_rtt"]) for c in plan.cells]
    assert got[:3] == [("cubic", "2BDP", "30ms"), ("cubic", "2BDP", "300ms"), ("cubic", "0.5BDP", "30ms")]
    assert len(got) == 2 * 3 * 2 and not plan.unavailable
    s = scenario_from_dump(next(c for c in plan.cells if c.setting["buffer"] == "0.5BDP"
                                and c.setting["large_rtt"] == "300ms").scenario)
    assert s.pairs[0].rtt == pytest.approx(0.3) and s.buffer_packets == round(0.5 * 50e6 * 0.3 / 8 / 1514)
    assert plan.axis_values["buffer"] == ["1BDP", "2BDP"]
    assert mx.selection_id(table1.spec, chosen) == "buf-0.5bdp+3bdp+2bdp_rtt-30ms+300ms_cca-cubic+vegas"
    # Keys of the paper's cells do not depend on what else was asked.
    both = {c.key for c in plan_of(table1, {"CCA": "cubic", "BUF": "2BDP", "RTT": "25"}).cells}
    assert both <= {c.key for c in plan_of(table1, {"CCA": "cubic", "BUF": "2BDP,3BDP", "RTT": "25,30"}).cells}


@pytest.mark.parametrize("option, value, read_as, words", [
    ("RTT", "0", "0ms", "pairs[0].rtt: rtt must be in (0, 10 s]"),
    ("RTT", "fast", "fast", "cannot read time 'fast'"),
    ("BUF", "-1BDP", "-1BDP", "cannot read bdp '-1BDP'"),
    ("BUF", "0bdp", "0BDP", "bdp must be positive"),
    ("CCA", "cubicc", "cubicc", "not a congestion control the harness knows"),
])
def test_invalid_values_are_refused_naming_the_reason(table1, option, value, read_as, words):
    """Named as the axis reads the value (a bare number in its unit, its unit's spelling)."""
    with pytest.raises(mx.MatrixError) as err:
        chosen_of(table1, {option: value})
    assert str(err.value).startswith(f"{option}={read_as}: ") and words in str(err.value), str(err.value)


def test_cubics_column_runs_linuxs_cubic_as_cubic_hs_under_its_own_name(table1):
    """CCA=cubic plans the column CUBIC (keys, names and labels say cubic) whose large flow runs
    cubic_hs: Linux's CUBIC ACK for ACK, in the HyStart of the SUSS version's kernel (5.19's under
    the default SUSS 2024, hs_round_fix 0, for every flow of the cell)."""
    plan = plan_of(table1, {"CCA": "cubic", "BUF": "1BDP", "RTT": "25"}, iterations=1)
    (cell,) = plan.cells
    assert cell.setting["large_cc"] == "cubic" and cell.scenario["name"] == "table1-cubic-1BDP-25ms"
    s = scenario_from_dump(cell.scenario)
    assert [f.cc for f in s.cases[0].flows[:2]] == ["cubic_hs", "cubic_hs"]
    assert {r["module_params"]["hs_round_fix"] for r in plan_data(s)["runs"]} == {0}
    # A kernel without our module (no cubic_hs) cannot run the column: reported, not substituted.
    bare = mx.plan_matrix(table1, chosen_of(table1, {"CCA": "cubic"}), 1, "img1",
                          {k: v for k, v in KERNEL.items() if k != "cubic_hs"}, "code1")
    assert not bare.cells and all("cubic_hs is not offered" in u.reason for u in bare.unavailable)


def test_cases_alternate_in_pairs(table1):
    plan = plan_of(table1, {"CCA": "cubic", "BUF": "1BDP", "RTT": "25"}, iterations=3)
    orders = [[c["params"]["small"] for c in cell.scenario["cases"]] for cell in plan.cells]
    assert orders == [["cubic_hs", "cubic_suss"], ["cubic_suss", "cubic_hs"], ["cubic_hs", "cubic_suss"]]


def test_another_start_runs_in_the_compared_place_as_other_cells(table1, tmp_path):
    from sslab.matrix.orchestrate import matrix_rel_of
    from sslab.substrate.kernelchanges import KernelChanges
    # The file lists Rapid Start beside SUSS; its own comparison is cubic_hs against cubic_suss, cell
    # for cell the scenarios (and keys) of the file that listed only those two.
    assert table1.starts() == ["cubic_suss", "cubic_rapid", "cubic_search", "cubic_search4"] and table1.spec.compare.on == "cubic_suss"
    two = tmp_path / "two.yaml"
    two.write_text(table1.path.read_text().replace("small: [cubic_hs, cubic_suss, cubic_rapid]",
                                                   "small: [cubic_hs, cubic_suss]"))
    assert [c.key for c in plan_of(mx.load_matrix(str(two))).cells] == \
        [c.key for c in plan_of(table1).cells]
    rapid = table1.compared("cubic_rapid")
    plan = plan_of(rapid, {"CCA": "cubic", "BUF": "1BDP", "RTT": "25"}, iterations=2)
    assert plan.compare == {"param": "small", "off": "cubic_hs", "on": "cubic_rapid"}
    assert [[c["params"]["small"] for c in cell.scenario["cases"]] for cell in plan.cells] == \
        [["cubic_hs", "cubic_rapid"], ["cubic_rapid", "cubic_hs"]]
    assert {c.key for c in plan.cells}.isdisjoint(c.key for c in plan_of(table1).cells)
    # Archived apart: the file's comparison keeps its directory.
    none = KernelChanges()
    assert matrix_rel_of(table1, {"large_cc": ["cubic"]}, None, None, none) == "table1/cca-cubic"
    assert matrix_rel_of(rapid, {"large_cc": ["cubic"]}, None, None, none) == "table1/cca-cubic_start-cubic_rapid"
    assert rapid.compared().spec.compare.on == "cubic_suss"  # back to the file's own
    # A start the file does not list runs in the compared place all the same, its cells those of a file
    # that lists it: offering a start needs no experiment file edited.
    listed = tmp_path / "listed.yaml"
    listed.write_text(table1.path.read_text().replace("small: [cubic_hs, cubic_suss, cubic_rapid, cubic_search, cubic_search4]",
                                                      "small: [cubic_hs, cubic_suss, cubic_rapid, cubic_search, cubic_search4, cubic_suss25]"))
    asked = {"CCA": "cubic", "BUF": "1BDP"}
    assert [c.key for c in plan_of(table1.compared("cubic_suss25"), asked).cells] == \
        [c.key for c in plan_of(mx.load_matrix(str(listed)).compared("cubic_suss25"), asked).cells]
    assert matrix_rel_of(table1.compared("cubic_suss25"), {"large_cc": ["cubic"]}, None, None, none) == \
        "table1/cca-cubic_start-cubic_suss25"
    with pytest.raises(mx.MatrixError, match="cubic_nope is not a start it can compare with cubic_hs: unknown "
                                             "congestion control"):
        table1.compared("cubic_nope")
    # E6 likewise: its fifth flow.
    fairness = mx.load_matrix("fairness")
    assert fairness.starts() == ["cubic_suss", "cubic_rapid", "cubic_search", "cubic_search4"]
    assert {c["params"]["fifth"] for cell in plan_of(fairness.compared("cubic_rapid")).cells
            for c in cell.scenario["cases"]} == {"cubic_hs", "cubic_rapid"}


def test_cell_keys_are_stable_and_change_with_their_inputs(table1):
    a = [c.key for c in plan_of(table1).cells]
    assert a == [c.key for c in plan_of(table1).cells]
    assert len(set(a)) == len(a)
    assert set(a).isdisjoint(c.key for c in plan_of(table1, image="img2").cells)
    assert set(a).isdisjoint(c.key for c in plan_of(table1, code="code2").cells)
    # Asking for a subset or more iterations keeps the keys of the cells in common.
    sub = plan_of(table1, {"CCA": "cubic"}, iterations=2)
    assert {c.key for c in sub.cells if c.rep == 0} <= set(a)


def test_traffic_code_version_follows_guest_code(tmp_path):
    for d in ("guest", "scenario"):
        (tmp_path / "runners/sslab" / d).mkdir(parents=True)
    for f in ("runners/sslab/guest/flows.py", "runners/sslab/scenario/model.py", "runners/sslab/analysis.py"):
        (tmp_path / f).write_text("x = 1\n")
    v1 = mx.traffic_code_version(tmp_path)
    (tmp_path / "runners/sslab/analysis.py").write_text("x = 2\n")  # reports rebuild: not traffic
    # Nor the front end: what it decides is in the plan, which the key covers.
    (tmp_path / "runners/sslab/scenario/model.py").write_text("x = 2\n")
    assert mx.traffic_code_version(tmp_path) == v1
    (tmp_path / "runners/sslab/guest/flows.py").write_text("x = 2\n")
    assert mx.traffic_code_version(tmp_path) != v1


def test_the_keys_code_is_what_a_runs_job_imports():
    """A cell's key covers the guest's code and the host modules its job imports: exactly JOB_LEAVES,
    each in TRAFFIC_CODE, so that a harness-only module (the front end, the reports, ccas's reading of
    the kernel's headers) can change without re-keying a cell, and none the job reads is left out."""
    import subprocess
    import sys

    from sslab.experiment.keys import JOB_LEAVES, TRAFFIC_CODE
    from sslab.paths import REPO_ROOT
    out = subprocess.run([sys.executable, "-c", "import sys, sslab.guest.scenario_run\n"
                          "print(' '.join(sorted(m for m in sys.modules if m.startswith('sslab.') and "
                          "not m.startswith('sslab.guest'))))"], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO_ROOT / "runners"), "PATH": "/usr/bin:/bin"}).stdout.split()
    assert tuple(out) == JOB_LEAVES
    assert [f"runners/{m.replace('.', '/')}.py" for m in JOB_LEAVES] == [p for p in TRAFFIC_CODE if "/sslab/" in p
                                                                         and p.count("/") == 2]


def test_boots_to_run_are_a_cell_each_without_boot_sharing():
    cells = [PlannedCell(key=str(i), name="c", rep=0, setting={}, scenario={}) for i in range(3)]
    assert mx.boots_to_run(cells) == [["0"], ["1"], ["2"]]
    assert mx.boots_to_run([]) == []


def test_bdp_form_and_dump_round_trip():
    s = load_scenario(mx.MATRICES_DIR / "e7-cell.yaml")
    assert scenario_from_dump(s.model_dump(by_alias=True)) == s
    data = {"name": "x", "bottleneck": {"rate": "10mbit", "buffer": {"bdp": "1.5BDP", "rtt": "40ms"}},
            "pairs": [{"rtt": "40ms"}], "cases": [{"name": "a", "flows": [{"pair": 1, "cc": "cubic", "size": "1MB"}]}]}
    assert parse_scenario(data).bottleneck.buffer.bdp == 1.5
    data["bottleneck"]["buffer"]["bdp"] = "lots"
    with pytest.raises(Exception, match="cannot read bdp"):
        parse_scenario(data)


# --------------------------------------------------------------------------
# The store and the per-host loop, with a stand-in for the VM run
# --------------------------------------------------------------------------


def fake_plan(n=3, deal=None):
    return plan_of_cells([PlannedCell(key=f"k{i}", name=f"cell{i}", rep=0, setting={}, scenario={}) for i in range(n)],
                         deal)


def plan_of_cells(cells, deal=None):
    """A plan of @cells as a stand-in host reads it (its other fields: anything valid)."""
    return MatrixPlan(matrix="m", title="t", report="table1", selection={}, iterations=1, image_hash="img",
                      code_version="code", available_ccas=[], cells=cells, deal=deal or {})


def one_at_a_time(run_one):
    """A boot runner (run_cells' @runner) from a stand-in that runs one cell."""
    def run(cells, dests, substrate, host):
        return [run_one(c, d, substrate, host) for c, d in zip(cells, dests)]
    return run


def finishing_runner(calls):
    def run(cell, dest, substrate, host):
        calls.append(cell.key)
        (dest / "data.txt").write_text(cell.key)
        info = {"key": cell.key, "wall_s": 1.0, "traffic_s": 0.5}
        (dest / "cell.json").write_text(json.dumps(info))
        artifacts = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in dest.iterdir()}
        (dest / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
        return info
    return run


def test_run_cells_skips_done_and_never_overwrites(tmp_path):
    plan, calls = fake_plan(), []
    counts = mx.run_cells(tmp_path, plan, "h", ["k0", "k1", "k2"], None, log=lambda m: None,
                          runner=one_at_a_time(finishing_runner(calls)))
    assert counts == {"ran": 3, "skipped": 0, "failed": 0} and calls == ["k0", "k1", "k2"]
    store = mx.CellStore(tmp_path)
    assert all(store.done(k) for k in ("k0", "k1", "k2")) and not store.stale_partials()
    calls.clear()
    counts = mx.run_cells(tmp_path, plan, "h", ["k0", "k1", "k2"], None, log=lambda m: None,
                          runner=one_at_a_time(finishing_runner(calls)))
    assert counts == {"ran": 0, "skipped": 3, "failed": 0} and calls == []
    partial = store.new_partial("k0")
    with pytest.raises(FileExistsError):
        store.commit(partial, "k0")
    assert (store.cell_dir("k0") / "data.txt").read_text() == "k0"
    # A cell that lands takes its key's other partial directories with it (one a stop kept), no other key's.
    kept, other, landing = store.new_partial("k3"), store.new_partial("k4"), store.new_partial("k3")
    store.commit(landing, "k3")
    assert not kept.exists() and other.exists() and (store.cells / "k3").is_dir()
    progress = json.loads((tmp_path / "progress" / "h.json").read_text())
    assert progress["finished"] and progress["skipped"] == 3


def test_a_failing_cell_is_retried_once_then_recorded(tmp_path):
    attempts = []

    def flaky(cell, dest, substrate, host):
        attempts.append(cell.key)
        (dest / "half-written.txt").write_text("x")
        if cell.key == "k1":
            raise RuntimeError("VM hung in phase job")
        return finishing_runner([])(cell, dest, substrate, host)

    counts = mx.run_cells(tmp_path, fake_plan(), "h", ["k0", "k1", "k2"], None, log=lambda m: None,
                          runner=one_at_a_time(flaky))
    assert counts == {"ran": 2, "skipped": 0, "failed": 1}
    assert attempts == ["k0", "k1", "k1", "k2"]
    store = mx.CellStore(tmp_path)
    assert not store.done("k1")
    fails = store.failures("k1")
    assert sorted(f.name[-3:] for f in fails) == ["-a1", "-a2"]
    assert all("VM hung in phase job" in (f / "error.txt").read_text() for f in fails)
    # A rerun tries the failed cell again (and keeps the old failure logs).
    counts = mx.run_cells(tmp_path, fake_plan(), "h", ["k0", "k1", "k2"], None, log=lambda m: None,
                          runner=one_at_a_time(finishing_runner([])))
    assert counts == {"ran": 1, "skipped": 2, "failed": 0} and store.done("k1") and len(store.failures("k1")) == 2


def test_an_interrupted_cell_does_not_count(tmp_path):
    def interrupted(cell, dest, substrate, host):
        if cell.key == "k1":
            (dest / "cell.json").write_text("{}")  # even a cell.json inside a partial does not count
            raise KeyboardInterrupt
        return finishing_runner([])(cell, dest, substrate, host)

    with pytest.raises(KeyboardInterrupt):
        mx.run_cells(tmp_path, fake_plan(), "h", ["k0", "k1", "k2"], None, log=lambda m: None,
                     runner=one_at_a_time(interrupted))
    store = mx.CellStore(tmp_path)
    assert store.done("k0") and not store.done("k1") and not store.done("k2")
    assert len(store.stale_partials()) == 1
    calls = []
    counts = mx.run_cells(tmp_path, fake_plan(), "h", ["k0", "k1", "k2"], None, log=lambda m: None,
                          runner=one_at_a_time(finishing_runner(calls)))
    assert calls == ["k1", "k2"] and counts["skipped"] == 1


def test_pack_and_merge_never_replace_a_cell(tmp_path):
    host_dir, ctl_dir = tmp_path / "host", tmp_path / "ctl"
    plan = fake_plan(deal={"b": ["k0", "k1", "k2"]})
    mx.run_cells(host_dir, plan, "b", ["k0", "k1"], None, log=lambda m: None,
                 runner=one_at_a_time(finishing_runner([])))
    # The controller already holds k0, made elsewhere: it must stay as it is.
    mx.run_cells(ctl_dir, plan, "a", ["k0"], None, log=lambda m: None, runner=one_at_a_time(finishing_runner([])))
    (ctl_dir / "cells" / "k0" / "data.txt").write_text("controller's own")
    tar = tmp_path / "b.tar"
    assert pack_cells(host_dir, plan, "b", tar) == 2
    with tarfile.open(tar) as t:
        assert "cells/k1/cell.json" in t.getnames()
    assert merge_cells(ctl_dir, tar) == {"merged": 1, "already_here": 1, "failure_logs": 0, "damaged": []}
    assert (ctl_dir / "cells" / "k0" / "data.txt").read_text() == "controller's own"
    assert (ctl_dir / "cells" / "k1" / "data.txt").read_text() == "k1"
    assert not list(ctl_dir.glob(".merge-*"))


def test_a_cell_that_arrives_damaged_is_never_merged(tmp_path):
    """A file changed, one missing, one added after the manifest: each names the cell damaged."""
    host_dir, ctl_dir = tmp_path / "host", tmp_path / "ctl"
    plan = fake_plan(deal={"b": ["k0", "k1", "k2"]})
    mx.run_cells(host_dir, plan, "b", ["k0", "k1", "k2"], None, log=lambda m: None,
                 runner=one_at_a_time(finishing_runner([])))
    (host_dir / "cells" / "k0" / "data.txt").write_text("k0, one byte off")
    (host_dir / "cells" / "k1" / "data.txt").unlink()
    (host_dir / "cells" / "k2" / "extra.txt").write_text("not listed")
    tar = tmp_path / "b.tar"
    assert pack_cells(host_dir, plan, "b", tar, keys=["k0", "k1", "k2"]) == 3
    counts = merge_cells(ctl_dir, tar, host="b")
    assert counts["merged"] == 0 and counts["damaged"] == ["k0", "k1", "k2"]
    store = mx.CellStore(ctl_dir)
    assert not any(store.done(k) for k in ("k0", "k1", "k2"))
    errors = {f.name.split("-")[0]: (f / "error.txt").read_text() for f in store.failed.iterdir()}
    assert all(f.name.endswith("-damaged-b") for f in store.failed.iterdir())
    assert "data.txt: sha256" in errors["k0"] and "data.txt: missing" in errors["k1"]
    assert "extra.txt: not in the manifest" in errors["k2"]
    # The same cells sound: merged.
    sound = tmp_path / "sound"
    mx.run_cells(sound, plan, "b", ["k0"], None, log=lambda m: None, runner=one_at_a_time(finishing_runner([])))
    pack_cells(sound, plan, "b", tar, keys=["k0"])
    assert merge_cells(ctl_dir, tar, host="b")["merged"] == 1 and store.done("k0")


def test_a_finished_cell_damaged_on_disk_is_set_aside_to_run_again(tmp_path):
    """A cell's file bit-flipped, one cut short, one gone, one added after it landed: each found, set
    aside under failed/ with what differs; a sound cell and one not finished are left alone."""
    from sslab.matrix.transfer import set_aside_damaged
    keys = ["k0", "k1", "k2", "k3", "k4"]
    mx.run_cells(tmp_path, fake_plan(5), "h", keys, None, log=lambda m: None,
                 runner=one_at_a_time(finishing_runner([])))
    store = mx.CellStore(tmp_path)
    data = tmp_path / "cells" / "k0" / "data.txt"
    data.write_bytes(bytes([data.read_bytes()[0] ^ 1]) + data.read_bytes()[1:])   # one bit
    cut = tmp_path / "cells" / "k1" / "cell.json"
    cut.write_bytes(cut.read_bytes()[:10])
    (tmp_path / "cells" / "k2" / "data.txt").unlink()
    (tmp_path / "cells" / "k3" / "extra.txt").write_text("not listed")
    damaged = set_aside_damaged(store, keys + ["never-run"])
    assert sorted(damaged) == ["k0", "k1", "k2", "k3"]
    assert [store.done(k) for k in keys] == [False, False, False, False, True]
    why = {f.name.split("-")[0]: (f / "error.txt").read_text() for f in store.failed.iterdir()}
    assert all(f.name.endswith("-set-aside") for f in store.failed.iterdir())
    assert "data.txt: sha256" in why["k0"] and "cell.json: sha256" in why["k1"]
    assert "data.txt: missing" in why["k2"] and "extra.txt: not in the manifest" in why["k3"]
    assert set_aside_damaged(store, keys) == {}   # what is left is sound


def test_host_must_match_the_plan():
    plan = fake_plan().model_copy(update={"image_hash": "a" * 64, "code_version": "c" * 64})
    mx.check_host_matches(plan, "a" * 64, "c" * 64)
    with pytest.raises(mx.MatrixError, match="image"):
        mx.check_host_matches(plan, "b" * 64, "c" * 64)
    with pytest.raises(mx.MatrixError, match="traffic code"):
        mx.check_host_matches(plan, "a" * 64, "d" * 64)


def test_every_matrix_file_loads():
    """Four written in place in their experiments' files, one matrix file; each found by its name and by
    its experiment's, and loaded from its file the same."""
    files = mx.matrix_files()
    assert {p.name for p in files} == {"reproduce-table1.yaml", "table1-calibrate.yaml",
                                       "reproduce-table1-uncalibrated.yaml", "fairness.yaml", "smoke.yaml"}
    names = set()
    for path in files:
        m = mx.load_matrix(str(path))
        names.add(m.spec.name)
        assert mx.load_matrix(m.spec.name).path == path == mx.load_matrix(path.stem).path
        assert all(isinstance(v, str) for v in m.spec.defaults.values())
    assert names == {"table1", "table1-calibrate", "table1-uncalibrated", "fairness", "smoke"}


def test_a_matrix_written_in_its_experiments_file_plans_the_cells_of_the_same_matrix_file(tmp_path):
    """smoke.yaml's two sections moved into an experiment file (its scenario the template, its axes the
    experiment's, the rest under `matrix:`) plan the same cells, key for key; an error names its field."""
    import yaml
    f = Path(mx.matrix_path("smoke"))
    data = yaml.safe_load(f.read_text())
    section = {k: v for k, v in data["matrix"].items() if k not in ("axes", "report")}
    exp = {"format": "sslab.experiment/1", "id": "E1", "title": "smoke, in place", "what": "w",
           "reproduces": {"paper": "p", "figure": "f"}, "time_here": "n/a", "scenario": data["scenario"],
           "axes": data["matrix"]["axes"], "matrix": section, "report": data["matrix"]["report"]}
    g = tmp_path / "smoke-in-place.yaml"
    g.write_text(yaml.safe_dump(exp, sort_keys=False))
    ours, theirs = mx.load_matrix(str(g)), mx.load_matrix(str(f))
    assert ours.spec == theirs.spec and ours.template == theirs.template
    cells = [[c.model_dump() for c in mx.plan_matrix(m, {}, 2, "img", KERNEL, "code").cells] for m in (ours, theirs)]
    assert cells[0] == cells[1] and len(cells[0]) >= 4
    from sslab.experiment import load_experiment
    e = load_experiment(str(g))
    assert (e.kind, e.output, e.matrix_path) == ("matrix", data["matrix"]["name"], g) and e.parts == []
    del exp["matrix"]["compare"]
    g.write_text(yaml.safe_dump(exp, sort_keys=False))
    with pytest.raises(mx.MatrixError, match="invalid matrix .*\n  matrix.compare: Field required"):
        mx.load_matrix(str(g))


def test_bad_matrix_file_is_refused(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("matrix: {name: bad}\n")
    with pytest.raises(mx.MatrixError, match="two sections"):
        mx.load_matrix(str(p))
    with pytest.raises(mx.MatrixError, match="no matrix 'nope'"):
        mx.load_matrix("nope")
    with pytest.raises(mx.MatrixError, match=r"no matrix 'e1-startup' \(known: fairness, smoke, table1, table1-calibrate, table1-uncalibrated\)"):
        mx.load_matrix("e1-startup")   # a scenario beside the matrices is no matrix
    assert Path(mx.matrix_path("table1")).exists()


def test_matrix_file_errors_name_line_column_and_every_field(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("matrix:\n  name: m\n  axes: {x: {option: X, values: [1]}\nscenario: {}\n")
    with pytest.raises(mx.MatrixError, match=rf"^{p}:4:1: not valid YAML"):
        mx.load_matrix(str(p))
    p.write_text("matrix: {name: M!, title: t, report: table9, iterations: 0, axes: {}, compare: {param: p, 'off': a, 'on': b}}\n"
                 "scenario: {}\n")
    with pytest.raises(mx.MatrixError) as err:
        mx.load_matrix(str(p))
    lines = str(err.value).splitlines()
    assert lines[0] == f"{p}: invalid matrix (4 errors)"
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == ["matrix.name", "matrix.report", "matrix.iterations",
                                                              "matrix.axes"]
    # A report is a matrix's report of the one registry (sslab.analysis.plugins.REPORTS), named with the choices.
    assert "report 'table9': one of table1, or describe one" in lines[2]


@pytest.mark.parametrize("has_filters", [True, False])
def test_a_hosts_tar_is_extracted_only_inside_and_only_files(tmp_path, monkeypatch, has_filters):
    """With Python's extraction filters (3.11.4 on) and without them (Debian 12's 3.11.2): files inside
    the archive come out; a path leaving it is refused."""
    import io
    import tarfile

    from sslab.matrix.transfer import extract_data
    if not has_filters:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)

    def tar_of(name: str) -> tarfile.TarFile:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as t:
            info = tarfile.TarInfo(name)
            info.size = 2
            t.addfile(info, io.BytesIO(b"{}"))
        buf.seek(0)
        return tarfile.open(fileobj=buf)

    extract_data(tar_of("cells/k1/cell.json"), tmp_path)
    assert (tmp_path / "cells/k1/cell.json").read_text() == "{}"
    with pytest.raises(Exception):
        extract_data(tar_of("../outside"), tmp_path / "cells")
    assert not (tmp_path / "outside").exists()


# --------------------------------------------------------------------------
# Shared boots: repetitions of a setting in one boot
# --------------------------------------------------------------------------


def test_shared_boot_groups_keys_and_dealing(table1):
    chosen = chosen_of(table1, {"CCA": "cubic", "BUF": "1BDP", "RTT": "25,50"})
    alone = mx.plan_matrix(table1, chosen, 7, "img", KERNEL, "code", clock="uml/inf-cpu")
    shared = mx.plan_matrix(table1, chosen, 7, "img", KERNEL, "code", clock="uml/inf-cpu", boot_share=3)
    assert shared.boot_share == 3 and alone.cells[0].boot is None
    by_rep = {(c.setting["large_rtt"], c.rep): c for c in shared.cells}
    same = {(c.setting["large_rtt"], c.rep): c.key for c in alone.cells}
    # Repetitions 0-2, 3-5 and 6 of each setting share a boot; the first of each keeps its key alone.
    assert by_rep[("25ms", 4)].boot.model_dump() == {
        "group": "buffer=1BDP,first_start=2s,large_cc=cubic,large_rtt=25ms,layout=five-pairs/1", "share": 3,
        "position": 1}
    for (rtt, rep), cell in by_rep.items():
        assert (cell.key == same[(rtt, rep)]) == (rep % 3 == 0)
    assert len({c.key for c in shared.cells}) == 14
    groups = mx.plan.boot_groups(shared.cells)
    assert [[c.rep for c in g] for g in groups] == [[0, 1, 2], [0, 1, 2], [3, 4, 5], [3, 4, 5], [6], [6]]
    assert [g[0].setting["large_rtt"] for g in groups[:2]] == ["25ms", "50ms"]
    # A boot's cells are dealt together, boots in the plan's order.
    assert mx.boots_to_run(shared.cells) == [[c.key for c in g] for g in groups]
    with pytest.raises(ValueError, match="at least 1"):
        mx.plan_matrix(table1, chosen, 1, "img", KERNEL, "code", boot_share=0)


def boot_plan(reps=4, share=2):
    cells = []
    for rep in range(reps):
        boot = BootPlace(group=f"s/{rep // share}", share=share, position=rep % share)
        cells.append(PlannedCell(key=f"k{rep}", name="cell", rep=rep, setting={}, scenario={}, boot=boot))
    return plan_of_cells(cells)


def boot_runner(calls, fail_at=None):
    def run(cells, dests, substrate, host):
        calls.append([c.key for c in cells])
        if fail_at in [c.key for c in cells]:
            raise RuntimeError(f"VM hung running {fail_at}")
        return [finishing_runner([])(c, d, substrate, host) for c, d in zip(cells, dests)]
    return run


def test_a_shared_boot_runs_whole_whichever_of_its_cells_are_missing(tmp_path):
    plan, calls = boot_plan(), []
    store = mx.CellStore(tmp_path)
    # k1 alone is missing from the first boot: k0 runs again to reach it and is not replaced.
    mx.run_cells(tmp_path, plan, "h", ["k0"], None, log=lambda m: None, runner=boot_runner(calls))
    (store.cell_dir("k0") / "data.txt").write_text("the first k0")
    calls.clear()
    counts = mx.run_cells(tmp_path, plan, "h", ["k0", "k1", "k2", "k3"], None, log=lambda m: None,
                          runner=boot_runner(calls))
    assert calls == [["k0", "k1"], ["k2", "k3"]]
    assert counts == {"ran": 3, "skipped": 1, "failed": 0}
    assert (store.cell_dir("k0") / "data.txt").read_text() == "the first k0"
    assert all(store.done(f"k{i}") for i in range(4)) and not store.stale_partials()
    # Only the second boot's first repetition missing: its boot runs whole all the same (each cell keeps
    # copies of its boot's records, which a boot cut after it would change), and only k2 is kept.
    calls.clear()
    other = mx.CellStore(tmp_path / "other")
    counts = mx.run_cells(tmp_path / "other", plan, "h", ["k2"], None, log=lambda m: None,
                          runner=boot_runner(calls))
    assert calls == [["k2", "k3"]] and counts["ran"] == 1
    assert other.done("k2") and not other.done("k3") and not other.stale_partials()


def test_a_failing_shared_boot_records_each_missing_cell(tmp_path):
    calls = []
    counts = mx.run_cells(tmp_path, boot_plan(), "h", ["k0", "k1", "k2", "k3"], None, log=lambda m: None,
                          runner=boot_runner(calls, fail_at="k3"))
    assert calls == [["k0", "k1"], ["k2", "k3"], ["k2", "k3"]]
    assert counts == {"ran": 2, "skipped": 0, "failed": 2}
    store = mx.CellStore(tmp_path)
    assert [len(store.failures(k)) for k in ("k2", "k3")] == [2, 2] and not store.stale_partials()


def test_a_shared_jobs_later_scenario_gets_its_own_runs_and_copies_of_the_boots_records(tmp_path):
    from sslab.experiment.run import split_shared_job
    shared, dest = tmp_path / "first" / "job", tmp_path / "second" / "job"
    (shared / "out" / "cells" / "01" / "runs" / "000-a-r0").mkdir(parents=True)
    (shared / "out" / "cells" / "01" / "runs" / "000-a-r0" / "run.json").write_text("second's run")
    (shared / "out" / "cells" / "01" / "runs.json").write_text("second's index")
    (shared / "out" / "runs" / "000-a-r0").mkdir(parents=True)
    (shared / "out" / "runs" / "000-a-r0" / "run.json").write_text("first's run")
    (shared / "out" / "fidelity").mkdir()
    (shared / "out" / "fidelity" / "saturate.json").write_text("check")
    for name, text in (("job.json", "job"), ("plan.json", "first's plan"), ("plan-01.json", "second's plan"),
                       ("out/fidelity.json", "fidelity"), ("out/kernel.json", "kernel"), ("out/status.json", "0")):
        (shared / name).write_text(text)
    (shared / "uml").mkdir()
    (shared / "uml" / "console.log").write_text("console")
    (shared / "uml" / "root").symlink_to(tmp_path)
    split_shared_job(shared, dest, 1)
    assert (dest / "plan.json").read_text() == "second's plan"
    assert (dest / "out/runs/000-a-r0/run.json").read_text() == "second's run"
    assert (dest / "out/runs.json").read_text() == "second's index"
    assert [(dest / f).read_text() for f in ("job.json", "out/fidelity.json", "out/kernel.json", "out/status.json",
                                             "uml/console.log", "out/fidelity/saturate.json")] == \
        ["job", "fidelity", "kernel", "0", "console", "check"]
    assert not (dest / "uml" / "root").exists() and not (dest / "out" / "cells").exists()
    # The first's own runs stay where they were; the second's are moved out of the shared job.
    assert (shared / "out/runs/000-a-r0/run.json").read_text() == "first's run"
    assert not (shared / "out/cells/01/runs").exists()
    with pytest.raises(Exception, match="left no runs for its scenario 2"):
        split_shared_job(shared, tmp_path / "third" / "job", 2)


def test_a_packed_cell_leaves_its_links_behind(tmp_path):
    """A UML cell's job/uml/{root,job,src} are links to the host's paths: not shipped (a merge refuses
    links), and not in the manifest, so the cell arrives sound without them."""
    host_dir, ctl_dir = tmp_path / "host", tmp_path / "ctl"
    plan = fake_plan(deal={"b": ["k0"]})
    mx.run_cells(host_dir, plan, "b", ["k0"], None, log=lambda m: None, runner=one_at_a_time(finishing_runner([])))
    (host_dir / "cells" / "k0" / "root").symlink_to("/opt/sslab/image/root")
    failure = host_dir / "failed" / "k0-20261125T000000Z-0000-a1"  # an earlier attempt's log and staging
    failure.mkdir(parents=True)
    (failure / "error.txt").write_text("VMHangError")
    (failure / "job").symlink_to("/srv/sslab/results/x/cells/.partial-k0/job")
    tar = tmp_path / "b.tar"
    pack_cells(host_dir, plan, "b", tar)
    assert merge_cells(ctl_dir, tar, host="b") == {"merged": 1, "already_here": 0, "failure_logs": 1, "damaged": []}
    assert not (ctl_dir / "cells" / "k0" / "root").exists()
    assert (ctl_dir / "failed" / failure.name / "error.txt").read_text() == "VMHangError"


def test_stop_results_read_per_host_from_stop_yml_output():
    from sslab.matrix.fleet import stop_results
    log = """TASK [Say what was stopped] ***
ok: [fleet1] => {
    "msg": {
        "host": "fleet1",
        "killed_after_grace": false,
        "left_behind": [
            4242, 4243],
        "partials_removed": 2,
        "runner": 4100
    }
}
ok: [lab2] => {
    "msg": "container sslab-lab2-0123456789ab removed"
}
skipping: [fleet9]
"""
    assert stop_results(log) == {"fleet1": "runner 4100 stopped, 2 process(es) it left killed, 2 partial cell(s) removed",
                                 "lab2": "container sslab-lab2-0123456789ab removed"}


def test_a_prepare_log_names_a_runner_it_stopped_and_only_then():
    """prepare.yml's stop of a runner a killed controller left, read as stop.yml's is; a host where
    there was none (the debug task skipped) says nothing."""
    from sslab.matrix.fleet import stop_results
    log = """TASK [Stop a runner of this matrix that a stopped controller left] ***
changed: [fleet1]
ok: [fleet2]
TASK [Say which runner was stopped] ***
ok: [fleet1] => {
    "msg": {
        "host": "fleet1",
        "killed_after_grace": false,
        "left_behind": [],
        "partials_removed": 1,
        "runner": 777
    }
}
skipping: [fleet2]
TASK [Copy the plan] ***
ok: [fleet1]
ok: [fleet2]
"""
    assert stop_results(log) == {"fleet1": "runner 777 stopped, 1 partial cell(s) removed"}


@pytest.mark.parametrize("playbook", ["prepare.yml", "cells.yml", "stop.yml"])
def test_the_playbooks_parse(playbook):
    """ansible-playbook --syntax-check: a playbook that does not parse fails every host of a run."""
    import subprocess

    from sslab.matrix.fleet import PLAYBOOKS, ansible_env, venv_bin
    inventory = PLAYBOOKS / "inventory" / "localhost.ini"
    res = subprocess.run([venv_bin("ansible-playbook"), "--syntax-check", "-i", str(inventory),
                          str(PLAYBOOKS / playbook)], capture_output=True, text=True, env=ansible_env())
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]


def test_a_cca_value_is_checked_by_the_control_it_runs():
    """CCA=bbr2 names the BBRv2 column, whose flows run bbr2_sslab (Axis.runs_as): accepted where the
    file maps it, and the incumbents of E6 then run bbr2_sslab; a name mapped nowhere is Linux's own
    and refused unless a researcher's kernel may register it."""
    fairness = mx.load_matrix("fairness")
    chosen = chosen_of(fairness, {"CCA": "bbr2"})
    hooked = {**KERNEL, "bbr2_sslab": "module tcp_sslab"}
    plan = mx.plan_matrix(fairness, chosen, 1, "img1", hooked, "code1")
    assert plan.cells and not plan.unavailable
    flows = scenario_from_dump(plan.cells[0].scenario).cases[0].flows
    assert [f.cc for f in flows[:4]] == ["bbr2_sslab"] * 4
    assert plan.runs_as["bbr2"] == "bbr2_sslab"
    # Neither offered: listed unavailable, naming both.
    bare = mx.plan_matrix(fairness, chosen, 1, "img1", KERNEL, "code1")
    assert not bare.cells and bare.unavailable[0].reason == "bbr2 or bbr2_sslab is not offered by the kernel under test"
    # Google's own name, mapped nowhere in table1-calibrate: refused (it is no control the harness knows).
    calibrate = mx.load_matrix("table1-calibrate")
    with pytest.raises(mx.MatrixError, match="CCA=bbr2: not a congestion control the harness knows"):
        chosen_of(calibrate, {"CCA": "bbr2"})


def test_table1s_layouts_the_default_and_the_papers_five_pairs():
    m = mx.load_matrix("table1")
    hooked = {**KERNEL, "bbr3": "module tcp_sslab", "bbr2_sslab": "module tcp_sslab"}
    # Not asked for, the layout is its default, the calibration's: the paper's five pairs, and the directory
    # is the whole matrix's.  The large flow alone on pair 1, the twelve small flows three to a pair in the
    # paper's RTT order (25, 50, 100, 200 ms in turn), each pair at its flows' RTT.
    five = mx.plan_matrix(m, chosen_of(m, {"CCA": "cubic", "RTT": "100"}), 1, "i", hooked, "c")
    assert {c.setting["layout"] for c in five.cells} == {"five-pairs"}
    assert mx.selection_id(m.spec, chosen_of(m, {"LAYOUT": "five-pairs"})) == "all"
    s = scenario_from_dump(five.cells[0].scenario)
    assert s.topology.pairs == 5 and [p.rtt for p in s.pairs] == pytest.approx([0.1, 0.025, 0.05, 0.1, 0.2])
    flows = s.cases[0].flows
    assert [f.pair for f in flows] == [1] + [2, 3, 4, 5] * 3
    assert all(s.pairs[f.pair - 1].rtt == r for f, r in zip(flows[1:], [0.025, 0.05, 0.1, 0.2] * 3))
    # A pair a flow, as before the calibration's stage 3: asked for, and archived apart.
    chosen = chosen_of(m, {"CCA": "cubic", "RTT": "100", "LAYOUT": "own-pairs"})
    assert mx.selection_id(m.spec, chosen) == "cca-cubic_rtt-100ms_layout-own-pairs"
    own = mx.plan_matrix(m, chosen, 1, "i", hooked, "c")
    s = scenario_from_dump(own.cells[0].scenario)
    assert s.topology.pairs == 13 and [f.pair for f in s.cases[0].flows] == list(range(1, 14))
    assert own.cells[0].key not in {c.key for c in five.cells}


def test_the_first_small_flows_start_and_its_refusal():
    m = mx.load_matrix("table1")
    hooked = {**KERNEL, "bbr3": "module tcp_sslab", "bbr2_sslab": "module tcp_sslab"}
    plan = mx.plan_matrix(m, chosen_of(m, {"CCA": "cubic", "RTT": "25", "FIRST_START": "3.5s"}), 1,
                          "i", hooked, "c")
    s = scenario_from_dump(plan.cells[0].scenario)
    # The first at 3.5 s, the others every 2 s after it ("{first_start}+2s", ...).
    assert [f.start for f in s.cases[0].flows] == pytest.approx([0.0] + [3.5 + 2 * k for k in range(12)])
    # The large flow's 125 MB is 86,326 segments of 1448 bytes, 1514-byte frames: at least 20.91 s alone at
    # 50 Mbit/s.  A first small flow at 21 s could find it gone: refused before anything runs.
    with pytest.raises(mx.MatrixError, match=r"FIRST_START=21s: .*flow 2 starts at 21 s, when flow 1 can have "
                                             r"ended \(it starts at 0 s and needs at least 20.91 s alone"):
        chosen_of(m, {"FIRST_START": "21s"})
    assert chosen_of(m, {"FIRST_START": "20.9s"})["first_start"] == ["20.9s"]


def test_an_axis_default_names_its_own_values():
    from sslab.scenario.axes import AxesError, combinations, parse_axes
    axes = parse_axes({"a": [1, 2], "b": {"values": ["x", "y", "z"], "default": ["y"]}}, "t")
    assert combinations(axes) == [{"a": 1, "b": "y"}, {"a": 2, "b": "y"}]
    assert combinations(axes, {"b": ["z", "x"]}) == [{"a": 1, "b": "x"}, {"a": 1, "b": "z"},
                                                     {"a": 2, "b": "x"}, {"a": 2, "b": "z"}]
    with pytest.raises(AxesError, match="default names w, not among its values"):
        parse_axes({"b": {"values": ["x"], "default": ["w"]}}, "t")
