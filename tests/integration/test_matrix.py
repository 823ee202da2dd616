"""A matrix through the controller on this machine (the default inventory's localhost, its runner started
without Ansible): cells run on the default substrate (UML), resume, survive Ctrl-C, report."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sslab.paths import REPO_ROOT

from .helpers import matrix_records, processes_of

pytestmark = pytest.mark.vm
TINY = REPO_ROOT / "tests/data/matrix-tiny.yaml"


def matrix_cmd(*args):
    return [sys.executable, "-m", "sslab", "matrix", *args]


def run(args, results: Path, timeout=1200):
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    return subprocess.run(matrix_cmd(*args), capture_output=True, text=True, cwd=REPO_ROOT, env=env,
                          timeout=timeout)


def done_cells(mdir: Path) -> set[str]:
    """Cells home: a partial directory that has written its cell.json is not home until it is
    renamed (make test once caught one in between, which the Ctrl-C then discarded, as it should)."""
    return {p.name for p in (mdir / "cells").iterdir() if (p / "cell.json").is_file()
            and not p.name.startswith(".partial-")} if (mdir / "cells").exists() else set()


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, image):
    results = tmp_path_factory.mktemp("results")
    res = run(["run", str(TINY)], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return results, results / "tiny" / "all", res.stdout


def test_cells_run_and_report(first_run):
    results, mdir, out = first_run
    assert "1 cells; 0 already done, 1 to run in 1 boot(s) on 1 host(s) (localhost), dealt as they free up" in out
    assert "unavailable, not run and never substituted" in out and "bbr2" in out
    (key,) = done_cells(mdir)
    cell = mdir / "cells" / key
    info = json.loads((cell / "cell.json").read_text())
    # Under virtual time a cell's wall time can be less than its traffic's guest time.
    assert info["host"] == "localhost" and info["wall_s"] > 0 and info["traffic_s"] > 0
    # The controller's own tree: its runner started directly (no playbook run), every boot in one batch,
    # its output in the batch's log.
    (record,) = [json.loads(f.read_text()) for f in mdir.glob("logs/run-*/fleet.json")]
    (batch,) = record["batches"]
    assert (batch["program"], batch["exit"], batch["cells"], batch["done"]) == ("its runner", 0, [key], [key])
    (log,) = mdir.glob("logs/run-*/cells-localhost-b1.log")
    assert '{"ran": 1, "skipped": 0, "failed": 0}' in log.read_text()
    # pcaps are archived compressed; the manifest covers them
    pcaps = list(cell.rglob("*.pcap.gz"))
    assert len(pcaps) == 2 and not list(cell.rglob("*.pcap"))
    manifest = json.loads((cell / "manifest.json").read_text())
    assert any(k.endswith(".pcap.gz") for k in manifest["artifacts"])
    summary = json.loads((mdir / "reports" / "latest" / "summary.json").read_text())
    (row,) = summary["rows"]
    assert row["n"] == 1 and 0.2 < row["off_small"]["mean"] < 20 and 0.2 < row["on_small"]["mean"] < 20
    # The most the bottleneck held at once, as its netem counted it (patch 0007): a queue, within the buffer.
    assert 0 < row["queue_peak_pkts_off"] <= row["buffer_pkts"] and 0 < row["queue_peak_pkts_on"] <= row["buffer_pkts"]
    table = (mdir / "reports" / "latest" / "table.md").read_text()
    assert f"{row['queue_peak_pkts_off']:.0f} / {row['queue_peak_pkts_on']:.0f} of {row['buffer_pkts']} |" in table
    assert "| CUBIC | 1BDP | 20ms | 1 |" in table and "BBRv2" in table
    # The console ends with the report's answer and where it is, not the whole report: its title, what it
    # judged, the paths of the report, its page and the results index, in a screen's lines.
    lines = out.rstrip().splitlines()
    ending = lines[max(i for i, ln in enumerate(lines) if ln.startswith("# ")):]
    assert ending[0] == "# test matrix" and len(ending) <= 15, ending
    assert "No paper value to judge here" in "\n".join(ending)
    report = (mdir / "reports" / "latest").resolve()
    # (Its one-file summary too: the large flow against its claim's bound is drawn without paper values.)
    pdf = f"; the answer and its plots for a review: {report / 'summary.pdf'}" if (report / "summary.pdf").is_file() else ""
    assert ending[-2] == f"report: {report / 'table.md'} (every table; the page: {report / 'report.html'}{pdf})"
    assert ending[-1] == f"all results: {results / 'index.html'}" and (results / "index.html").is_file()
    assert "| CUBIC | 1BDP | 20ms | 1 |" not in out


def test_rerun_runs_nothing_and_report_is_byte_identical(first_run):
    results, mdir, _ = first_run
    before = done_cells(mdir)
    res = run(["run", str(TINY)], results)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "1 already done, 0 to run" in res.stdout
    assert done_cells(mdir) == before
    reports = sorted(p for p in (mdir / "reports").iterdir() if not p.is_symlink())
    res = run(["report", str(mdir)], results)
    assert res.returncode == 0, res.stderr[-2000:]
    new = sorted(p for p in (mdir / "reports").iterdir() if not p.is_symlink())
    assert len(new) == len(reports) + 1
    assert (new[-1] / "table.md").read_bytes() == (reports[-1] / "table.md").read_bytes()


def test_ctrl_c_to_the_foreground_group_stops_everything_and_the_rerun_completes_the_same_cells(
        tmp_path, image):
    """As a new user's Ctrl-C: SIGINT to make's process group (started here as a script's background
    job, which gets SIGINT ignored on arrival: the controller must take it all the same)."""
    results, reference = tmp_path / "results", tmp_path / "reference"
    mdir = results / "tiny" / "all"
    cmd = ["make", "matrix", f"MATRIX={TINY}", "ITER=6", "BOOT_SHARE=1"]
    env = {**os.environ, "SSLAB_RESULTS": str(results)}
    log = open(tmp_path / "make.log", "w")
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    # Partway: some cells home, others running.
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not (done_cells(mdir) and list((mdir / "cells").glob(".partial-*"))):
        assert proc.poll() is None, (tmp_path / "make.log").read_text()[-3000:]
        time.sleep(0.5)
    before = done_cells(mdir)
    assert before and len(before) < 6
    os.killpg(proc.pid, signal.SIGINT)
    t0 = time.monotonic()
    left = ["?"]
    while time.monotonic() - t0 < 10 and (proc.poll() is None or left):
        left = processes_of(results, "ansible-playbook", str(image.uml_binary))
        time.sleep(0.2)
    out = (tmp_path / "make.log").read_text()
    assert proc.poll() is not None and not left, f"left after 10 s: {left}\n{out[-3000:]}"
    assert "interrupted (SIGINT): stopping every host's run" in out and "partial cell(s) removed" in out
    # Finished cells kept, nothing partial left to count or to clean up.
    assert before <= done_cells(mdir) and not list((mdir / "cells").glob(".partial-*"))
    res = run(["run", str(TINY), "--iter", "6", "--boot-share", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    res = run(["run", str(TINY), "--iter", "6", "--boot-share", "1"], reference)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    resumed, whole = matrix_records(mdir), matrix_records(reference / "tiny" / "all")
    assert len(whole) == 6 and resumed == whole


def test_a_second_suss_version_is_archived_apart_and_reported_beside_the_first(first_run):
    results, mdir, _ = first_run
    res = run(["run", str(TINY), "--suss-version", "2025"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    other = mdir.parent / "all_suss-2025"
    assert len(done_cells(other)) == 1 and done_cells(other) != done_cells(mdir)
    table = (other / "reports" / "latest" / "table.md").read_text()
    assert "Ran under: substrate uml, clock uml/inf-cpu; host model ideal" in table
    assert "SUSS: SUSS 2025 (the authors' rewrite)" in table
    side = table[table.index("## SUSS versions side by side"):]
    assert "| SUSS 2024 (all) | SUSS 2025 (all_suss-2025) |" in side
    # One setting, an improvement under each version.
    (row,) = [ln for ln in side.splitlines() if ln.startswith("| cubic | 1BDP | 20ms |")]
    assert row.count("% (n=") == 2



@pytest.fixture(scope="module")
def shared_boot(tmp_path_factory, image):
    """The tiny matrix's two repetitions in one boot (the default under UML: BOOT_SHARE=10)."""
    results = tmp_path_factory.mktemp("shared")
    res = run(["run", str(TINY), "--iter", "2"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    mdir = results / "tiny" / "all"
    cells = {json.loads((mdir / "cells" / k / "cell.json").read_text())["rep"]: mdir / "cells" / k
             for k in done_cells(mdir)}
    (plan_file,) = (mdir / "plans").glob("plan-*.json")
    return cells, json.loads(plan_file.read_text()), res.stdout


def run_files(cell: Path) -> dict[str, bytes]:
    """What a cell's runs recorded: every run's record, capture and trace, by path."""
    runs = cell / "job" / "out" / "runs"
    return {str(p.relative_to(runs)): p.read_bytes() for p in sorted(runs.rglob("*")) if p.is_file()}


def test_a_shared_boots_first_repetition_is_the_cell_it_is_alone(first_run, shared_boot, tmp_path):
    _, alone_dir, _ = first_run
    shared, _, out = shared_boot
    assert "up to 10 repetitions of a setting per boot" in out and sorted(shared) == [0, 1]
    # The first run of the module ran repetition 0 in a boot of its own: the same key, and the
    # same bytes in every run (records, captures) and in the topology check.
    alone = alone_dir / "cells" / shared[0].name
    assert json.loads((alone / "cell.json").read_text()).get("boot") is None
    assert run_files(alone) == run_files(shared[0]) and len(run_files(alone)) >= 4
    assert (alone / "job/out/fidelity.json").read_bytes() == (shared[0] / "job/out/fidelity.json").read_bytes()
    # One boot: the second repetition's cell keeps a copy of its console and its fidelity check.
    meta = [json.loads((shared[r] / "meta.json").read_text()) for r in (0, 1)]
    assert [m["boot"]["position"] for m in meta] == [0, 1] and meta[1]["boot"]["same_as_alone"] is False
    assert meta[1]["boot"]["entropy_seed"] == meta[0]["seed"] != meta[1]["seed"]
    assert (shared[1] / "job/uml/console.log").read_bytes() == (shared[0] / "job/uml/console.log").read_bytes()
    assert (shared[1] / "job/out/fidelity.json").read_bytes() == (shared[0] / "job/out/fidelity.json").read_bytes()
    cell = json.loads((shared[1] / "cell.json").read_text())
    assert cell["boot"]["cells"] == [shared[0].name, shared[1].name] and cell["boot"]["position"] == 1
    # A matrix's cell keeps no run report of its own (the matrix's report reads it); one written on
    # demand from the cell says where it stood in its boot.
    assert not (shared[1] / "report.md").exists() and not (shared[1] / "summary.json").exists()
    from sslab.analysis.startup import write_report
    write_report(shared[1], tmp_path)
    assert "shared boot: repetition 2 of 2" in (tmp_path / "report.md").read_text()


def test_a_later_repetition_in_a_shared_boot_is_keyed_apart_with_its_own_plan(shared_boot):
    from sslab.matrix import cell_key
    shared, plan, _ = shared_boot
    second = next(c for c in plan["cells"] if c["rep"] == 1)
    alone_key = cell_key(second["plan"], 1, plan["image_hash"], plan["code_version"], plan["clock"])
    assert second["key"] == shared[1].name != alone_key
    # Its own plan: its seed's start offsets, the case order of an odd repetition (on, then off).
    runs = [json.loads(p.read_text()) for p in sorted((shared[1] / "job/out/runs").glob("*/run.json"))]
    job_plan = json.loads((shared[1] / "job/plan.json").read_text())
    assert [r["run"] for r in runs] == job_plan["runs"] and job_plan["seed"] == second["scenario"]["seed"]
    assert [r["run"]["case"] for r in runs] == ["suss-cubic_suss", "suss-cubic_hs"]
    assert all(r["fidelity"]["base_rtt_ok"] for r in runs)
    # Its captures are not the first repetition's: its own offsets, the boot's random numbers going on.
    assert run_files(shared[0]) != run_files(shared[1])
