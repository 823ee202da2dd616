"""Run a scenario's plan on the substrate (inside the VM, or natively).

Input: $SSLAB_JOB_DIR/plan.json, written by the host from the validated
scenario (sslab.scenario.to_plan).  Output, under $SSLAB_OUT_DIR:

  fidelity.json            the topology check: base RTT per pair (and the
                           delay calibration), saturating rate
  runs/NNN-<case>-r<rep>/  run.json, <tag>.pcap, <tag>.trace.gz per run
  runs.json                the index of runs, in the order they ran (an sslab.runs record)
  cells/NN/                runs/ and runs.json of the NNth further plan of a shared boot

A shared boot.  The host may add plan-01.json, plan-02.json, ... beside
plan.json: further cells (repetitions of one matrix setting) with the same
topology, run in this boot after plan.json's runs, each into cells/NN/.  The
topology is built and checked (fidelity) once, for plan.json; every run
still measures its own pairs' base RTT.  plan.json's runs are exactly those
of the same plan run alone (the further plans are read only after them); a
further plan's runs are not (the guest's clock and its kernel's state, the
ports in use and the IDs it numbers packets with, go on from the runs before
them), and their cells' keys say so (sslab.matrix.plan).  Under virtual time the
job's work and each run start apart from the guest's own work before them
(guest/timeline.py).

Before the runs the topology is checked: each pair's base RTT and the
bottleneck's saturating rate (guest/fidelity.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..records import VIRTUAL_CLOCKS, read_plan, read_record, runs_index, stamped
from .clab import ContainerlabDumbbell
from .dumbbell import Dumbbell, MininetDumbbell
from .fidelity import calibrate, measure_base_rtts, rtt_within, saturating_rate
from .flows import MAX_FLOWS, SERVER_PORT, run_case
from .ftrace import ALL_EVENTS, STACK_EVENTS, Ftrace
from .netns import raise_input_backlog, restore_input_backlog, softnet_drops, unchanged_input_backlog
from .phases import mark
from .timeline import random_seed, rekey_random, sleep_until_the_next_second

BACKENDS = {"mininet": MininetDumbbell, "netns": Dumbbell, "containerlab": ContainerlabDumbbell}


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


MODULES_DIR = Path("/sys/module")
MODULE_PARAMS_DIR = MODULES_DIR / "tcp_sslab" / "parameters"


def module_defaults() -> dict[str, int]:
    """Our module's writable parameters as loaded (its defaults), to return to between runs."""
    if not MODULE_PARAMS_DIR.is_dir():
        return {}
    return {p.name: int(p.read_text()) for p in sorted(MODULE_PARAMS_DIR.iterdir()) if p.stat().st_mode & 0o200}


def param_path(name: str) -> Path:
    """A parameter's file: ours by name, the kernel's as "<module>.<parameter>" (tcp_cubic.hystart)."""
    module, dot, param = name.rpartition(".")
    return MODULES_DIR / module / "parameters" / param if dot else MODULE_PARAMS_DIR / name


def set_module_params(defaults: dict[str, int], asked: dict[str, int]) -> dict[str, int]:
    """The module parameters for one run: the defaults with @asked over them; returns what was set.

    A kernel module's parameter (tcp_cubic.hystart) joins @defaults, at the value the kernel had, the
    first time a run asks for it, so that the runs after it get it back."""
    for name in asked:
        if name not in defaults and "." in name and param_path(name).exists():
            defaults[name] = int(param_path(name).read_text())
    missing = sorted(set(asked) - set(defaults))
    if missing:
        raise RuntimeError(f"the kernel has no module parameter(s) {', '.join(missing)}")
    values = {**defaults, **asked}
    for name, value in values.items():
        path = param_path(name)
        if int(path.read_text()) != value:
            path.write_text(str(value))
    return values


def main() -> int:
    job = Path(os.environ["SSLAB_JOB_DIR"])
    out = Path(os.environ["SSLAB_OUT_DIR"])
    # The record as written (its runs and flows are repeated in each run.json), and the same plan
    # typed: a plan with a missing, unknown or mistyped field stops here, naming it.
    record = read_record(job / "plan.json", "sslab.plan")
    plan = read_plan(record, str(job / "plan.json"))
    virtual = plan.fidelity.clock in VIRTUAL_CLOCKS
    # Before anything draws a random number of its own (the kernel's secrets for ports and sequence
    # numbers are made at their first use): what the guest did before this job cannot move them.
    # And on a whole second: the job's own imports and whatever the guest did before it (each clock
    # read costs guest time) cannot move when its work, the topology's checks first, starts.
    if virtual:
        rekey_random(random_seed(plan, "job"))
        sleep_until_the_next_second()
    subprocess.run(["modprobe", "tcp_sslab"], check=True)
    # A researcher's own modules (MODULES=; the substrate names them), after ours.
    for name in os.environ.get("SSLAB_RESEARCHER_MODULES", "").split():
        subprocess.run(["modprobe", name], check=True)
    defaults = module_defaults()
    backend = BACKENDS.get(plan.topology.backend, Dumbbell)
    # SIGTERM ends the job as Ctrl-C does: through the finally below, which tears the topology down.
    signal.signal(signal.SIGTERM, _interrupted)
    rules = plan.fidelity
    # Under a real clock only (netns.raise_input_backlog says why); None: left as it was.
    backlog = None if virtual else raise_input_backlog()
    t_build = time.monotonic()
    mark("topology")
    db = backend(plan)
    try:
        db.build()
        built_s = time.monotonic() - t_build
        mark("fidelity")
        fidelity = {"backend": db.backend, "clock": rules.clock, "topology_build_s": round(built_s, 3),
                    **({"backend_versions": db.versions} if getattr(db, "versions", None) else {}),
                    # Each side's hosts on links of their own (veth) or on a switch (ovs: its mode, read back).
                    "lans": db.plan.topology.lans, **({"switches": db.switch_modes()} if db.switched else {}),
                    "rtt": calibrate(db, rules.rtt_tolerance_ms, rules.calibrate, rules.ping_count,
                                     rules.pairs_together)}
        fidelity["rate"] = saturating_rate(db, out / "fidelity")
        # The link model's random loss goes on after the checks, which measure rate and delay.
        if db.add_loss():
            fidelity["loss_added_after_checks"] = True
        (out / "fidelity.json").write_text(json.dumps(fidelity, indent=1))
        print(f"fidelity: rtt {fidelity['rtt']['measured_ms']} (offset {fidelity['rtt']['delay_offset_ms']} ms), "
              f"rate {fidelity['rate']['measured_mbit']} Mbit/s", flush=True)
        tracer = Ftrace()
        tracer.setup(SERVER_PORT, SERVER_PORT + MAX_FLOWS - 1,
                     STACK_EVENTS if plan.capture.trace_events == "stack" else ALL_EVENTS)
        run_plan(db, record, plan, out, defaults, tracer, fidelity["rate"]["ok"])
        for n, (later_record, later_plan) in further_plans(job):
            mark(f"cell {n:02d}")
            run_plan(db, later_record, later_plan, out / "cells" / f"{n:02d}", defaults, tracer,
                     fidelity["rate"]["ok"])
        tracer.close()
        mark("teardown")
    finally:
        db.teardown()
        db.stop_switches()
        if backlog is not None:
            restore_input_backlog(backlog)
    # After the runs, so that reading it cannot shift them.
    (out / "kernel.json").write_text(json.dumps(kernel_facts(backlog or unchanged_input_backlog()), indent=1))
    return 0


def further_plans(job: Path):
    """(n, record, plan) of plan-01.json, plan-02.json, ... in @job, each read when its turn comes
    (after the runs before it).  The host has checked that they share plan.json's topology
    (sslab.experiment.run.SHARED_PLAN_FIELDS)."""
    n = 1
    while (path := job / f"plan-{n:02d}.json").exists():
        record = read_record(path, "sslab.plan")
        yield n, (record, read_plan(record, str(path)))
        n += 1


def run_plan(db: Dumbbell, record: dict, plan, out: Path, defaults: dict[str, int], tracer: Ftrace,
             rate_ok: bool) -> None:
    """Every run of @plan (its typed form; @record as written) into @out/runs/, indexed in @out/runs.json."""
    rules = plan.fidelity
    index = []
    for run, written in zip(plan.runs, record["runs"]):
        tag = run.tag
        rekeyed = None
        if plan.fidelity.clock in VIRTUAL_CLOCKS:
            rekeyed = rekey_random(random_seed(plan, run.index))
            sleep_until_the_next_second()
        mark(f"run {tag}")
        rdir = out / "runs" / tag
        pairs = sorted({f.pair for f in run.flows})
        params = set_module_params(defaults, run.module_params)
        rtts = measure_base_rtts(db, pairs, rules.ping_count, rules.pairs_together)
        t = time.time()
        res = run_case(db, written["flows"], rdir, "flow", capture=plan.capture, tracer=tracer,
                       link=plan.bottleneck.link,
                       trace_offset_s=0.0 if run.trace_offset_s is None else run.trace_offset_s)
        res.update(run=written, started_unix=t, seconds=round(time.time() - t, 3), module_params=params,
                   random_rekey=rekeyed)
        res["fidelity"] = {
            "base_rtt_ms": rtts,
            "base_rtt_ok": all(rtt_within(db, p, rtts[p], rules.rtt_tolerance_ms) for p in pairs),
            "rate_ok": rate_ok,
        }
        (rdir / "run.json").write_text(json.dumps(stamped("sslab.run", res), indent=1))
        index.append({"tag": tag, "case": run.case, "rep": run.rep})
        f0 = res["flows"][0]
        print(f"{tag}: fct {f0['fct_s']:.3f} s, drops {res['bottleneck']['drops']}, "
              f"rtt {rtts}, ok {res['fidelity']['base_rtt_ok'] and res['fidelity']['rate_ok']}", flush=True)
        (out / "runs.json").write_text(json.dumps(runs_index(index), indent=1))


#: What our UML kernel learnt of the host's FP state at boot (images/uml/patches/0003-*).
UML_FP_PARAMS = {"host_fp_bytes": "uml_host_fp_bytes", "fp_area_bytes": "uml_fp_area_bytes"}


def kernel_facts(backlog: dict[str, int]) -> dict:
    """The guest kernel's release, under UML the host's XSAVE area size it uses, and the input
    backlog the job ran with (@backlog) and what it dropped (since boot: on a substrate the
    job's alone; on a native host, the host's)."""
    params = Path("/sys/module/kernel/parameters")
    fp = {k: int((params / name).read_text()) for k, name in UML_FP_PARAMS.items() if (params / name).exists()}
    return {"release": os.uname().release, "uml_fp": fp or None,
            "input_backlog": {**backlog, "drops_since_boot": softnet_drops()}}


if __name__ == "__main__":
    sys.exit(main())
