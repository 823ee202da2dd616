"""A researcher's kernel on the real testbed (docs/own-algorithm.md): the example
out-of-tree module built into the image, loaded in the guest and run by the name it registers;
a name the booted kernel lacks refused before any run, with the names it has."""

import json

import pytest

from sslab.paths import REPO_ROOT

from .helpers import sslab

pytestmark = pytest.mark.vm
MODULE = {"SSLAB_MODULES": str(REPO_ROOT / "examples" / "bring-your-own" / "module")}


def scenario(tmp_path, name: str, ccs: list[str]):
    """E1's path, one repetition of 60 KB and 120 KB per name: 42 segments take a start of 10
    three rounds (10 + 20 + 40) and a start of 20 two (20 + 40)."""
    f = tmp_path / f"{name}.yaml"
    f.write_text(f"extends: {REPO_ROOT}/experiments/scenarios/e1-startup.yaml\nname: {name}\n"
                 "cases: {name: '{cc}-{size}', flows: [{pair: 1, cc: '{cc}', size: '{size}', start: 0s}],\n"
                 f"        axes: {{cc: [{', '.join(ccs)}], size: [60KB, 120KB]}}}}\n"
                 "repetitions: 1\ncapture: {pcap: false, traces: true}\n")
    return f


@pytest.fixture(scope="module")
def module_run(tmp_path_factory, image):
    tmp = tmp_path_factory.mktemp("module")
    results = tmp / "results"
    res = sslab(["startup", "--scenario", str(scenario(tmp, "iw20", ["reno", "reno_iw20"]))], results,
                env=MODULE)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return (results / "startup" / "latest").resolve(), res.stdout


def test_the_module_is_built_loaded_and_recorded(module_run):
    run_dir, stdout = module_run
    meta = json.loads((run_dir / "meta.json").read_text())
    mine = meta["image"]["uml"]["researcher"]
    assert list(mine["modules"]) == ["tcp_reno_iw20"]
    assert set(mine["modules_source"]["files"]) == {"Kbuild", "tcp_reno_iw20.c"}
    assert "with your modules tcp_reno_iw20" in (run_dir / "report.md").read_text()
    for tag in meta["run_order"]:
        flow = json.loads((run_dir / "job/out/runs" / tag / "run.json").read_text())["flows"][0]
        assert flow["cc_used"] == flow["cc"], tag  # the socket ran the name it asked for


def test_its_start_of_20_saves_a_round_trip(module_run):
    run_dir, _ = module_run
    rows = {r["cc"]: r for r in json.loads((run_dir / "summary.json").read_text())["startup"]}
    saved = rows["reno"]["fct_small"]["median"] - rows["reno_iw20"]["fct_small"]["median"]
    assert 0.07 < saved < 0.13, saved  # one 100 ms round trip


def test_a_name_the_kernel_lacks_is_refused_with_what_it_has(module_run, tmp_path):
    res = sslab(["startup", "--scenario", str(scenario(tmp_path, "iw30", ["reno_iw30"]))], tmp_path / "results",
                env=MODULE, timeout=600)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "offers no congestion control 'reno_iw30'; nothing was run" in res.stderr
    assert "reno_iw20" in res.stderr.split("It has:")[1]
    assert not (tmp_path / "results").exists()


def test_the_modules_name_runs_in_table1s_compared_place_and_a_name_it_lacks_is_refused_first(module_run, tmp_path):
    """`make reproduce-table1 VARIANTS=reno_iw20 MODULES=...`: the module's start in SUSS's place with no file
    naming it, its small flows run by that name; VARIANTS=reno_iw30 refused before any cell runs."""
    args = ["run", "reproduce-table1", "--set", "CCA=cubic", "--set", "BUF=1BDP", "--set", "RTT=25ms", "--iter", "1"]
    res = sslab([*args, "--select", "reno_iw30"], tmp_path / "lacks", env=MODULE, timeout=600)
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    assert "offers no congestion control reno_iw30; no cell was run" in res.stderr
    assert not list((tmp_path / "lacks").rglob("cell.json"))
    res = sslab([*args, "--select", "reno_iw20"], tmp_path / "runs", env=MODULE, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [cell] = list((tmp_path / "runs" / "table1").glob("*_start-reno_iw20_kernel-modules-*/cells/*/cell.json"))
    runs = [json.loads(p.read_text()) for p in sorted(cell.parent.glob("job/out/runs/*/run.json"))]
    assert sorted({f["cc_used"] for r in runs for f in r["flows"][1:]}) == ["cubic_hs", "reno_iw20"]
