"""Run a scenario end to end and write its run record: `sslab startup`.

    scenario YAML --validate--> Scenario --to_plan--> the plan, records.Plan (a matrix cell keeps it)
        --for_substrate--> plan.json --substrate (VM or native)--> job/out/ (fidelity, runs, pcaps, traces)
        --analysis--> summary.json, report.md, plots --> manifest.json

The run directory is new for every run (results/<kind>/<run-id>/) and
`results/<kind>/latest` points at it.  The report itself is the analysis
package's (sslab.analysis.startup), which can rebuild it from the archive.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..records import Plan, format_of, plan_record, read_record, stamped
from .. import paths
from ..analysis.startup import write_report
from ..scenario import Scenario, parse_scenario, to_plan
from ..scenario.load import scenario_file_data
from ..scenario.knobs import apply as apply_knobs
from ..substrate.hostfacts import host_facts
from ..substrate.kinds import kind_of
from .timing import estimate_seconds, expected_seconds, guest_seconds, record
from ..substrate.image import sha256_file as sha256
from ..substrate.containerlab import containerlab_for_job
from ..substrate.job import TOOLS_DIR, JobError, JobSpec, remove_tools
from ..substrate.preflight import check_offered
from ..substrate import spinguard
from .archive import complete_runs
from .plan import for_substrate


def code_version() -> dict:
    def git(*args: str) -> str:
        try:
            res = subprocess.run(["git", "-C", str(paths.REPO_ROOT), *args], capture_output=True, text=True)
        except OSError:
            return ""
        return res.stdout.strip() if res.returncode == 0 else ""
    commit = git("rev-parse", "HEAD")
    if not commit and (paths.REPO_ROOT / ".sslab-commit").is_file():
        # A tree without git (the container's, a fleet host's): the commit it was made from, and
        # whether that tree had changes beyond it (a second word "dirty").
        words = (paths.REPO_ROOT / ".sslab-commit").read_text().split()
        return {"commit": words[0] if words else "unknown", "dirty": "dirty" in words[1:], "from": ".sslab-commit"}
    return {"commit": commit or "unknown", "dirty": bool(git("status", "--porcelain"))}


def as_run(data: dict, reps: int | None = None, backend: str | None = None, knobs: dict | None = None) -> dict:
    """A scenario's plain data (@data, its `extends:` followed) as a command line runs it: the knobs
    it set over the file (sslab.scenario.knobs: `SUSS_VERSION=2025`, `HOSTS=1gbe`, `LANS=ovs`), another
    topology backend, other repetitions; set on the data, before the model checks it once."""
    data = apply_knobs(copy.deepcopy(data), knobs) if knobs else copy.deepcopy(data)
    if backend is not None:
        data["topology"] = {**(data.get("topology") or {}), "backend": backend}
    if reps is not None:
        data["repetitions"] = reps
    return data


def scenario_as_run(scenario_path: Path, reps: int | None = None, backend: str | None = None,
                    knobs: dict | None = None) -> Scenario:
    """The scenario in @scenario_path as a command line runs it (as_run), validated once."""
    return parse_scenario(as_run(scenario_file_data(scenario_path), reps, backend, knobs), str(scenario_path))


def run_scenario(scenario_path: Path, kind: str, substrate, reps: int | None = None,
                 backend: str | None = None, knobs: dict | None = None) -> Path:
    """`sslab startup`: run a scenario file into a new results/<kind>/<run-id>/."""
    return run_as_run(scenario_as_run(scenario_path, reps, backend, knobs), scenario_path, kind, substrate)


def run_as_run(s: Scenario, scenario_path: Path, kind: str, substrate) -> Path:
    """Run @s (the file @scenario_path as the command line runs it: scenario_as_run) into a new
    results/<kind>/<run-id>/."""
    check_offered(substrate, s.congestion_controls())
    return run_compiled(Compiled.of(s), {"path": str(scenario_path), "sha256": sha256(Path(scenario_path))}, kind,
                        substrate)


def run_compiled(c: Compiled, source: dict, kind: str, substrate) -> Path:
    """Run @c (a scenario compiled as the command line runs it) into a new results/<kind>/<run-id>/,
    whose manifest is the last file written.  @source: what meta.json records of where its words came
    from (a scenario file's path and sha256)."""
    expected, basis = expected_seconds(c.plan, substrate.name)
    print(f"{c.name}: {len(c.plan.runs)} runs on {substrate.name} ({substrate.clock}); expected about "
          f"{expected / 60:.1f} min ({basis})", flush=True)
    run_dir = paths.new_run_dir(kind)
    run_scenarios_in_one_boot([c], [run_dir], substrate, [source])
    write_manifest(run_dir)
    return run_dir


def run_scenario_into(s: Scenario, run_dir: Path, substrate, source: dict) -> None:
    """Run @s on @substrate into the (new, empty) @run_dir and write its report."""
    run_scenarios_in_one_boot([Compiled.of(s)], [run_dir], substrate, [source])


@dataclass(frozen=True)
class Compiled:
    """A scenario as its run needs it: its plan (sslab.scenario.to_plan: every quantity resolved, the
    file's words under `asked`), which is all the host and the guest read, and its model as validated,
    which meta.json keeps for the record beside the file's path and hash (nothing reads it back).  A
    matrix cell keeps both (sslab.plan_record.PlannedCell), so the host that runs it validates nothing
    again."""
    plan: Plan
    model: dict

    @classmethod
    def of(cls, s: Scenario) -> Compiled:
        return cls(to_plan(s), s.model_dump(mode="json", by_alias=True))

    @property
    def name(self) -> str:
        return self.plan.name

    def congestion_controls(self) -> set[str]:
        """Every congestion-control name a socket of its runs asks the kernel for (a flow's `cc` in the
        plan: the name that pins a version where one is asked), as Scenario.congestion_controls."""
        return {f.cc for run in self.plan.runs for f in run.flows}


#: The plan fields the scenarios of one shared boot must have alike: what the guest builds the
#: topology from and what its checks hold runs to.  Each one's name, seed, runs and module
#: parameters are its own (sslab.guest.scenario_run).
SHARED_PLAN_FIELDS = ("topology", "bottleneck", "pairs", "addresses", "hosts", "capture", "fidelity")

#: Where a job run under sslab-syscount leaves its counts (in its out/).
SYSCOUNT_FILE = "syscalls.json"


def run_scenarios_in_one_boot(scenarios: list[Compiled], run_dirs: list[Path], substrate,
                              sources: list[dict], syscount: Path | None = None) -> list[Path]:
    """Run @scenarios (each compiled: its plan) one after another in one boot of @substrate, each into its own (new, empty)
    run directory, and write each one's report; returns the run directories.

    One scenario is a run of its own.  Several (the repetitions of one matrix setting) share the
    boot, the topology and its fidelity check: the first's plan is plan.json, the others' are
    plan-01.json, ... (sslab.guest.scenario_run), and the boot's seed is the first's.  The first
    runs exactly as alone; the others' runs do not (the guest's random numbers and clock go on
    from the runs before), which each one's meta.json says under "boot".  Each run directory is
    then complete on its own: its plan, the job's record (console, status, fidelity, kernel) and
    its own runs.

    @syscount: the sslab-syscount program (built by `make bench BENCH=syscalls`): the job runs under
    it and its counts are left in the job's out/syscalls.json.  An observer, which moves the guest's
    timeline: meta.json names it, and such runs are a benchmark's, never a results tree's."""
    if not scenarios or len(scenarios) != len(run_dirs) or len(sources) != len(scenarios):
        raise ValueError("one run directory and one source per scenario")
    plans = [for_substrate(s.plan, substrate.name, substrate.clock) for s in scenarios]
    first = plans[0]
    for s, plan in zip(scenarios[1:], plans[1:]):
        differ = [k for k in SHARED_PLAN_FIELDS if getattr(plan, k) != getattr(first, k)]
        if differ:
            raise ValueError(f"{s.name} cannot share a boot with {scenarios[0].name}: its "
                                  f"{', '.join(differ)} differ")
    # What the boot's scenarios share, read once: the harness's commit, the host, the image.
    common = {"code": code_version(), "host": host_facts(), "image": _image_facts(substrate)}
    metas = [_meta(s, substrate, source, plan, common) for s, source, plan in zip(scenarios, sources, plans)]
    run_dir = run_dirs[0]
    for d, plan in zip(run_dirs, plans):
        (d / "plan.json").write_text(json.dumps(plan_record(plan), indent=1))
    tools = {}
    if first.topology.backend == "containerlab":
        # Built on this first need only (a few minutes, cached); the image does not carry it.
        binary, containerlab = containerlab_for_job()
        tools["containerlab"] = str(binary)
        for meta in metas:
            meta["containerlab"] = containerlab
    # The job's timeout counts guest seconds (the agent's clock); generous on every substrate.
    eta = sum(max(estimate_seconds(s.plan), guest_seconds(s.plan)) for s in scenarios)
    files = {"plan.json": json.dumps(plan_record(first))}
    files.update({f"plan-{n:02d}.json": json.dumps(plan_record(plan)) for n, plan in enumerate(plans[1:], 1)})
    s0 = scenarios[0]
    argv = ["python3", "-m", "sslab.guest.scenario_run"]
    if syscount is not None:
        tools["sslab-syscount"] = str(syscount)
        argv = ["sslab-syscount", "--out", SYSCOUNT_FILE, "--", *argv]
        for meta in metas:
            meta["observer"] = {"program": "sslab-syscount", "out": f"job/out/{SYSCOUNT_FILE}"}
    job = JobSpec(argv=argv, timeout_s=eta * 2 + 300, name=s0.name, files=files,
                  seed=s0.plan.entropy_seed, tools=tools)
    t0 = time.monotonic()
    try:
        res = substrate.run(job, run_dir / "job")
    finally:
        remove_tools(run_dir / "job")
    facts = dict(accelerator=res.accelerator, seconds_to_userspace=res.seconds_to_userspace,
                 substrate_seconds=round(time.monotonic() - t0, 1), job_exit_code=res.exit_code,
                 job_timed_out=res.timed_out, clock=res.clock or substrate.clock, cpu=res.cpu,
                 guest_seconds=res.guest_seconds)
    if getattr(substrate, "accel_probe", None) is not None:   # QEMU's: which accelerator works here
        facts["accel_probe"] = substrate.accel_probe
    if (kernel := res.out_dir / "kernel.json").exists():
        facts["guest_kernel"] = json.loads(kernel.read_text())
    for n, (meta, d) in enumerate(zip(metas, run_dirs)):
        meta.update(facts)
        if len(scenarios) > 1:
            meta["boot"] = {"shared_by": len(scenarios), "position": n, "entropy_seed": job.seed,
                            "first": {"name": s0.name, "seed": s0.plan.seed},
                            "same_as_alone": n == 0}
        (d / "meta.json").write_text(json.dumps(meta, indent=1))
    if not res.ok:
        raise JobError(f"the scenario job failed (exit {res.exit_code}, timed out {res.timed_out}); "
                       f"see {res.out_dir}/stderr.log:\n{res.stderr()[-2000:]}")
    for n, d in enumerate(run_dirs[1:], 1):
        split_shared_job(run_dir / "job", d / "job", n)
    shutil.rmtree(res.out_dir / "cells", ignore_errors=True)
    if len(run_dirs) == 1:
        finish_run_dir(run_dirs[0])
    else:
        finish_in_own_process(run_dirs)
    if syscount is None:   # a counted run is slower than any other: it would mislead the next estimate
        record(substrate.name, [s.plan for s in scenarios], time.monotonic() - t0)   # what the next expected times start from
    return run_dirs


def finish_run_dir(run_dir: Path) -> None:
    """The host's part of a run directory after its job: every run's trace read out and its capture
    checked by tshark (the time it took in meta.json's host_trace_seconds), then the report, unless
    its source says "report": false (a matrix's cell: the matrix's report reads it)."""
    t1 = time.monotonic()
    meta = read_record(run_dir / "meta.json", "sslab.meta")
    # A matrix checks a sample of its cells' captures with tshark (the cell says); a scenario, all.
    timing: dict = {}
    complete_runs(run_dir / "job" / "out", check_captures=meta["scenario"].get("capture_check", True), timing=timing,
                  spin_guard=spinguard.ran_guarded(meta))
    meta["host_trace_seconds"] = round(time.monotonic() - t1, 1)
    if "capture_check_seconds" in timing:
        # tshark's wall time over the runs (its readers run beside the trace read-out, so it is
        # not a part of host_trace_seconds); kept here, not in the runs' records.
        meta["capture_check_seconds"] = round(timing["capture_check_seconds"], 1)
    (run_dir / "meta.json").write_text(json.dumps(meta, indent=1))
    if meta["scenario"].get("report", True):
        from .. import papers  # noqa: F401 (the papers' claim extractors, which the report judges with)
        write_report(run_dir, run_dir)


def guest_finished(run_dir: Path) -> bool:
    """Whether @run_dir's job ran to its end in the guest while the host's read-out of it did not (no
    manifest): its meta.json, written once the job is back, says it exited 0 in time, and the guest's
    index of its runs is there.  Such a directory holds every byte its boot gives; reading it out
    (matrix.cells.read_out_cell) ends it as the run left alone would have ended."""
    if (run_dir / "manifest.json").exists() or not (run_dir / "job" / "out" / "runs.json").is_file():
        return False
    try:
        meta = read_record(run_dir / "meta.json", "sslab.meta")
    except (OSError, ValueError):   # none yet, or half written when the command stopped
        return False
    return meta.get("job_exit_code") == 0 and meta.get("job_timed_out") is False


def finish_in_own_process(run_dirs: list[Path]) -> None:
    """finish_run_dir for each of @run_dirs, in a Python process of its own.

    The matrix runner drives its testbeds from threads of one process, and reading traces and
    captures out is Python-bound: two runners' read-outs in one process take turns on its
    interpreter lock.  Measured on Table 1 (ITER=10, JOBS=2, two boots of ten cells ending
    together): 4.3-5.9 s of trace read-out per cell in threads against about 1.6 s alone."""
    import sslab
    root = str(Path(sslab.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    res = subprocess.run([sys.executable, "-m", "sslab.experiment.finish", *map(str, run_dirs)], env=env,
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise JobError(f"reading out the runs of {run_dirs[0].name} and the {len(run_dirs) - 1} after it failed "
                       f"(exit {res.returncode}):\n{res.stderr[-2000:]}")


def _meta(s: Compiled, substrate, source: dict, plan: Plan, common: dict) -> dict:
    meta = {"format": format_of("sslab.meta"), "scenario": {**source, "model": s.model},
            "code": common["code"], "substrate": substrate.name, "clock": substrate.clock, "seed": s.plan.seed,
            # The host, its XSAVE area's size among its facts: results must not depend on it
            # (tests/integration/test_uml_fp.py), and a reader can check that they did not.
            "host": common["host"],
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "run_order": [r.tag for r in plan.runs]}
    if common["image"] is not None:
        meta["image"] = dict(common["image"])
    return meta


def _image_facts(substrate) -> dict | None:
    if getattr(substrate, "image", None) is None:
        return None
    m = substrate.image.manifest()
    image = {"hash": m["image_hash"], "kernel": m["kernel"], "module": m["module"]}
    if (section := kind_of(substrate.name).manifest_section) is not None:   # the UML kernel's own facts
        image[section] = m.get(section)
    return image


#: A shared job's records every one of its scenarios keeps a copy of (the boot's own).
SHARED_JOB_FILES = ("job.json", "out/fidelity.json", "out/kernel.json", "out/status.json", "out/stdout.log",
                    "out/stderr.log")


def split_shared_job(shared: Path, dest: Path, n: int) -> None:
    """Scenario @n's part of the shared boot's job directory @shared, as @dest: its own plan (written
    by the host beside the others) and runs (moved out of out/cells/NN/), with copies of the boot's
    records (console, status, fidelity check, kernel facts); symlinks (the substrate's working
    links) are left out."""
    own = shared / "out" / "cells" / f"{n:02d}"
    if not (own / "runs.json").is_file():
        raise JobError(f"the shared boot left no runs for its scenario {n} ({own / 'runs.json'} missing)")
    (dest / "out").mkdir(parents=True)
    shutil.copy2(shared / f"plan-{n:02d}.json", dest / "plan.json")
    for name in SHARED_JOB_FILES:
        if (shared / name).is_file():
            shutil.copy2(shared / name, dest / name)
    if (shared / "out" / "fidelity").is_dir():
        shutil.copytree(shared / "out" / "fidelity", dest / "out" / "fidelity", symlinks=True)
    for sub in sorted(p for p in shared.iterdir() if p.is_dir() and p.name not in ("out", TOOLS_DIR)):
        # The substrate's own records (uml/: console, boot, command line); not its links.
        (dest / sub.name).mkdir()
        for f in sorted(sub.iterdir()):
            if f.is_file() and not f.is_symlink():
                shutil.copy2(f, dest / sub.name / f.name)
    os.rename(own / "runs", dest / "out" / "runs")
    os.rename(own / "runs.json", dest / "out" / "runs.json")


def write_manifest(run_dir: Path) -> Path:
    meta = read_record(run_dir / "meta.json", "sslab.meta")
    files = {}
    for p in sorted(run_dir.rglob("*")):
        if p.is_file() and p.name != "manifest.json" and not p.is_symlink():
            files[str(p.relative_to(run_dir))] = sha256(p)
    manifest = stamped("sslab.manifest", {**meta, "artifacts": files})
    path = run_dir / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return path


def manifest_problems(run_dir: Path) -> list[str]:
    """How @run_dir's files differ from its manifest (none: it is sound): a file changed, cut short,
    gone or added since the manifest was written (a disk's fault, a hand's).  A run directory and a
    matrix's cell are both checked by it."""
    try:
        listed = json.loads((run_dir / "manifest.json").read_text())["artifacts"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return [f"manifest.json: unreadable ({type(e).__name__})"]
    present = {str(p.relative_to(run_dir)) for p in run_dir.rglob("*")
               if p.is_file() and not p.is_symlink() and p.name != "manifest.json"}
    problems = [f"{name}: missing" for name in sorted(set(listed) - present)]
    problems += [f"{name}: not in the manifest" for name in sorted(present - set(listed))]
    problems += [f"{name}: sha256 {got[:12]}, manifest {listed[name][:12]}" for name in sorted(present & set(listed))
                 if (got := sha256(run_dir / name)) != listed[name]]
    return problems


def damaged_among(run_dirs: list[Path]) -> dict[Path, list[str]]:
    """Each of @run_dirs (run directories, a matrix's cells) whose files no longer match its manifest,
    with how (manifest_problems).  Hashed on threads: hashlib lets go of the interpreter lock (Table 1's
    160 cells, 1.6 GB, took 4.2 s on one thread of a busy 2-core machine)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        found = dict(zip(run_dirs, pool.map(manifest_problems, run_dirs)))
    return {d: problems for d, problems in found.items() if problems}
