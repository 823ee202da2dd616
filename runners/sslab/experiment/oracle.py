"""`sslab oracle SCENARIO...` (`make oracle`): our congestion controls checked against the kernel's own.

Each scenario runs twice, in two boots of UML with the same seed whose plans
differ only in the congestion control each flow's socket asks for: once as
written (ours: cubic_hs, cubic_ss) and once with every flow on the kernel's
equivalent (KERNEL_EQUIVALENTS: the kernel's `cubic`, with its HyStart off
for cubic_ss).  sslab.analysis.oracle then compares them flow by flow, ACK by
ACK and packet by packet, and the report lists every flow with its first
difference, if any.

The kernel under both boots: cubic_hs's HyStart rounds (hs_round_fix) decide
it.  1 (Linux 6.1.192's rounds) is the kernel's own; 0 (Linux 5.19's, the
paper's kernel) is the kernel with our patch that puts its round check back
where 5.19 had it (images/uml/patches/hystart519), built as a researcher's
kernel and never in the default image.  A scenario's runs must agree on it.

    results/oracle/<run-id>/
        <scenario>/ours/      a run directory (plan, job, report) with our controls
        <scenario>/kernel/    the same with the kernel's
        oracle.json           every flow's comparison
        report.md             the table (kernel/README.md keeps a copy)
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path

from .. import paths
from ..analysis.oracle import EXCEPTIONS, compare_runs, oracle_table
from ..records import stamped
from ..scenario import Scenario, expand_cases, parse_scenario, to_plan
from ..scenario.load import scenario_file_data
from .run import code_version, run_scenario_into, sha256, write_manifest
from .spec import ExperimentError

#: Our congestion controls with a kernel equivalent: its name, and the kernel's module parameters
#: that make it so (for a whole run: they are the kernel's, not the socket's).
KERNEL_EQUIVALENTS: dict[str, tuple[str, dict[str, int]]] = {
    "cubic_hs": ("cubic", {}),
    "cubic_ss": ("cubic", {"tcp_cubic.hystart": 0}),
}
#: The patch that gives the kernel's `cubic` Linux 5.19's HyStart rounds (hs_round_fix 0's oracle).
HYSTART519_PATCHES = paths.REPO_ROOT / "images" / "uml" / "patches" / "hystart519"
#: The oracle's own scenarios (`make oracle`; `make test` runs the E1 ones).
SCENARIOS_DIR = paths.REPO_ROOT / "kernel" / "tests" / "oracle"


class OracleError(ExperimentError):
    """A scenario the oracle cannot pair with the kernel's (exit 2, before anything runs)."""


def twins(data: dict, source: str = "<scenario>") -> tuple[Scenario, Scenario]:
    """(ours, the kernel's) for a scenario's plain data (@data, its `extends:` followed): the same name,
    seed, cases and runs; every flow of the kernel's on the equivalent of its congestion control in
    ours, and each case's module parameters in both gaining the kernel's that make the equivalence
    (so that both boots do the same).  Each twin is the data edited, then validated once."""
    cases = expand_cases(data.get("cases"))
    ours_cases, kernel_cases = copy.deepcopy(cases), copy.deepcopy(cases)
    for oc, kc in zip(ours_cases, kernel_cases):
        ccs = sorted({f.get("cc") for f in oc.get("flows") or []})
        unknown = [str(c) for c in ccs if c not in KERNEL_EQUIVALENTS]
        if unknown:
            raise OracleError(f"{data.get('name')}: case {oc.get('name')}: {', '.join(unknown)} has no kernel "
                              f"equivalent (the oracle pairs {', '.join(KERNEL_EQUIVALENTS)})")
        params = [KERNEL_EQUIVALENTS[c][1] for c in ccs]
        if any(p != params[0] for p in params):
            raise OracleError(f"{data.get('name')}: case {oc.get('name')} mixes {' and '.join(ccs)}, whose kernel "
                              f"equivalents need other settings of the kernel's (global) CUBIC parameters: "
                              f"one per case")
        for case in (oc, kc):
            case["module_params"] = {**(case.get("module_params") or {}), **params[0]}
        for f in kc["flows"]:
            f["cc"] = KERNEL_EQUIVALENTS[f["cc"]][0]
    return (parse_scenario({**data, "cases": ours_cases}, source),
            parse_scenario({**data, "cases": kernel_cases}, source))


def hystart_round_fix(s: Scenario) -> int:
    """cubic_hs's rounds in @s's runs (as planned: the SUSS version's default, when not set)."""
    fixes = {r.module_params["hs_round_fix"] for r in to_plan(s).runs}
    if len(fixes) != 1:
        raise OracleError(f"{s.name}: its runs ask for both of cubic_hs's rounds (hs_round_fix {sorted(fixes)}): "
                          f"each needs its own kernel; split the scenario")
    return fixes.pop()


def load_oracle_scenarios(names: list[str]) -> list[tuple[Path, tuple[Scenario, Scenario], int]]:
    """(file, its twins (ours, the kernel's), hs_round_fix) of each scenario named (a path, or a file of
    kernel/tests/oracle/ by its name), checked and paired before anything runs."""
    out = []
    for name in names:
        path = Path(name)
        if not path.exists() and (SCENARIOS_DIR / f"{name}.yaml").exists():
            path = SCENARIOS_DIR / f"{name}.yaml"
        data = scenario_file_data(path)
        parse_scenario(data, str(path))  # the file as it is, refused by its own fields before it is paired
        pair = twins(data, str(path))
        out.append((path, pair, hystart_round_fix(pair[0])))
    return out


def run_oracle(scenarios: list[tuple[Path, tuple[Scenario, Scenario], int]], substrate_for,
               jobs: int = 2) -> tuple[Path, list]:
    """Run each scenario's two twins (@jobs boots at a time; @substrate_for(hs_round_fix, slot) gives
    the substrate of a slot for a kernel), compare them, and write the report; returns (the run
    directory, [(scenario name, FlowComparison)])."""
    top = paths.new_run_dir("oracle")
    pending = []
    for path, (ours, kernel), fix in scenarios:
        source = {"path": str(path), "sha256": sha256(path)}
        for side, twin in (("ours", ours), ("kernel", kernel)):
            d = top / ours.name / side
            d.mkdir(parents=True)
            pending.append((twin, d, fix, source))
    errors: list[BaseException] = []
    lock = threading.Lock()

    def slot_worker(slot: int) -> None:
        while True:
            with lock:
                if not pending or errors:
                    return
                twin, d, fix, source = pending.pop(0)
            try:
                run_scenario_into(twin, d, substrate_for(fix, slot), source)
                write_manifest(d)
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                with lock:
                    errors.append(e)
                return

    threads = [threading.Thread(target=slot_worker, args=(i,)) for i in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    rows = []
    for _, (s, _), _ in scenarios:
        rows += [(s.name, c) for c in compare_runs(top / s.name / "ours", top / s.name / "kernel")]
    write_oracle_report(top, scenarios, rows)
    return top, rows


def run_oracle_here(names: list[str] | None, jobs: int | None = None) -> tuple[Path, list]:
    """run_oracle on this host's UMLs (one per core, at most @jobs): the scenarios @names of
    kernel/tests/oracle/ (None: all), each kernel's image built and booted once first.  The oracle
    chooses its kernels: refused (ExperimentError) under KERNEL_SOURCE=, KERNEL_PATCHES= or MODULES=."""
    from ..substrate.image import ensure_image
    from ..substrate.kernelchanges import KernelChanges
    from ..substrate.preflight import ready
    from ..substrate.uml import UMLConfig, UMLTestbed, allowed_cpus
    if not KernelChanges.from_env().empty:
        raise ExperimentError("the oracle chooses its kernels (the image's; with hs_round_fix 0, the image's with "
                              "images/uml/patches/hystart519): unset KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES=")
    scenarios = load_oracle_scenarios(names or sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml")))
    cpus = allowed_cpus()
    jobs = min(jobs or len(cpus), len(cpus))
    images = {fix: ensure_image(changes=KernelChanges() if fix else KernelChanges.of(HYSTART519_PATCHES, None))
              for fix in sorted({fix for _, _, fix in scenarios})}
    testbeds: dict[tuple[int, int], UMLTestbed] = {}

    def substrate_for(fix: int, slot: int) -> UMLTestbed:
        if (fix, slot) not in testbeds:
            testbeds[(fix, slot)] = UMLTestbed(images[fix], UMLConfig(cpu=cpus[slot]))
        return testbeds[(fix, slot)]

    for fix in images:
        ready(substrate_for(fix, 0))
    print(f"oracle: {len(scenarios)} scenario(s), each twice (ours, the kernel's), {jobs} boot(s) at a time",
          flush=True)
    return run_oracle(scenarios, substrate_for, jobs)


def write_oracle_report(top: Path, scenarios: list[tuple[Path, tuple[Scenario, Scenario], int]], rows: list) -> None:
    kernels = {fix: "Linux 6.1.192's `cubic` (the image's kernel)" if fix else
               "Linux 6.1.192's `cubic` with Linux 5.19's HyStart rounds (images/uml/patches/hystart519)"
               for _, _, fix in scenarios}
    failing = [(n, c) for n, c in rows if not c.passes]
    record = stamped("sslab.oracle", {
        "code": code_version(),
        "scenarios": [{"name": s.name, "path": str(p), "hs_round_fix": fix, "kernel": kernels[fix]}
                      for p, (s, _), fix in scenarios],
        "exceptions": {k: {"cannot_see": v[0], "bound": v[1]} for k, v in EXCEPTIONS.items()},
        "flows": [{"scenario": n, **c.as_dict()} for n, c in rows]})
    (top / "oracle.json").write_text(json.dumps(record, indent=1))
    lines = ["# The kernel as the oracle: our CUBIC against Linux's, ACK by ACK", "",
             f"- scenarios: {', '.join(f'{s.name} ({p})' for p, (s, _), _ in scenarios)}",
             *(f"- hs_round_fix {fix}: against {k}" for fix, k in sorted(kernels.items())),
             f"- flows: {len(rows)}; identical to the kernel's: {sum(c.identical for _, c in rows)}; "
             f"differing: {len(failing)}", "",
             "Each flow: the same scenario and seed in two boots, ours and the kernel's; every tcp_probe "
             "record of the sender (ACKs) and every packet at the capture point compared.  A value shown "
             "once is the same on both sides.", "", oracle_table(rows), ""]
    (top / "report.md").write_text("\n".join(lines))
