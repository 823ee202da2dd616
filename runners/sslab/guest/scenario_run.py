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
them), and their cells' keys say so (sslab.matrix.plan).
Under virtual time the job's work (after its imports) and every run start
on a whole second of the guest's clock (sleep_until_the_next_second), so
how long the guest's own work before them took does not move them; and
where the kernel can (our UML kernel, patch 0009), the guest's random
numbers are keyed afresh from the boot's seed when the job starts and
before each run (rekey_random), so how many the guest's own work drew does
not move them either.

Fidelity.  Before the runs, each pair's idle base RTT is measured as ping
measures it, by echo requests of ping's size sent from this process
(guest/echo.py).
On a real clock the substrate adds latency of its own (under TCG about
0.2 ms per hop); the median excess over all pairs is taken off the netem
delay lines (delay_offset_ms) and the RTT measured again, and an RTT off by
more than 0.5 ms is flagged.  Under virtual time (UML) the path's RTT is the
configured delay exactly: nothing is calibrated away, and an RTT off by more
than ping's resolution (1 us, rounded) is flagged, and kept.  Then one CUBIC
flow saturates the bottleneck for SATURATE_S seconds and the rate of frames
leaving it is measured (flagged when off by more than 1%); on a path whose RTT
is over 300 ms the reading starts after 10 of its RTTs, not 3 s (slow start
from 10 packets to a GEO path's BDP takes about 8 of them).  Each run
re-measures the base RTT of the pairs it uses.  The plan's `fidelity`
section says which rules apply.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ..records import VIRTUAL_CLOCKS, Bursts, Capture, read_plan, read_record, runs_index, stamped
from .clab import ContainerlabDumbbell
from .dumbbell import Dumbbell, MininetDumbbell
from .flows import MAX_FLOWS, SERVER_PORT, run_case
from .ftrace import ALL_EVENTS, STACK_EVENTS, Ftrace
from .netns import raise_input_backlog, restore_input_backlog, softnet_drops, unchanged_input_backlog
from .phases import mark

#: Defaults for a real clock; the plan's `fidelity` section overrides them.
RTT_TOLERANCE_MS = 0.5
RATE_TOLERANCE = 0.01
SATURATE_S = 8.0
#: The rate is read over [SATURATE_FROM_S, SATURATE_S - 1]: after slow start.
SATURATE_FROM_S = 3.0
#: ... and on a long path from this many of its largest RTT on (reading as long), so that slow start
#: has reached the BDP: 3 s is 10 RTTs of 300 ms, and every path up to 300 ms reads as before.
SATURATE_FROM_RTTS = 10
#: Calibrate only a consistent excess (smaller differences are noise).
CALIBRATE_MIN_MS = 0.05
#: A default ping's frame: 56 data bytes + ICMP 8 + IP 20 + Ethernet 14.  Its
#: echo request crosses the bottleneck (the rate limiter serialises it); the
#: reply goes back the other way, which has no rate limit.
PING_FRAME_BYTES = 98


def expected_rtt_ms(db: Dumbbell, pair: int) -> float:
    """What ping should measure on an idle pair: the configured round trip plus the time the
    bottleneck takes to serialise the echo request (15.7 us at 50 Mbit/s; none through HTB, the
    shaper of a varying link), plus what the host model adds: each host's access link
    serialises the request and the reply once each, and each host processes one of them.  A
    link with bursts (slots), a host's jitter and its coalescing add a wait within a range:
    see extra_wait_ms."""
    rtt = db.plan.pairs[pair - 1].rtt_ms + host_rtt_ms(db, pair)
    if db.shaper != "netem":
        # HTB lets an idle link's packet through on its burst's tokens, unserialised.
        return rtt
    return rtt + PING_FRAME_BYTES * 8 / (db.plan.bottleneck.rate_mbit * 1e6) * 1e3


def host_rtt_ms(db: Dumbbell, pair: int) -> float:
    """The host model's fixed part of an idle round trip of ping's frames."""
    total_us = 0.0
    for kind in ("server", "client"):
        if (host := db.host(pair, kind)) is None:
            continue
        if host.nic_mbit:
            total_us += 2 * PING_FRAME_BYTES * 8 / host.nic_mbit  # bits / (Mbit/s) = us
        total_us += host.rx_cost_us
    return total_us / 1e3


def slot_wait_ms(db: Dumbbell) -> tuple[float, float]:
    """(least, most) an idle round trip waits for the link model's slots: an idle packet's
    slot opens a uniform [min, max] after it is due, in each direction that has slots."""
    slots = [st for st in (*db.plan.bottleneck.link.down, *db.plan.bottleneck.link.up) if isinstance(st, Bursts)]
    return sum(st.min_ms for st in slots), sum(st.max_ms for st in slots)


#: A host's link rate puts a netem on the host's own interface, which a packet passes in the
#: sending call (and UML charges 256 ns of guest time for a clock read outside interrupts: netem
#: reads it to queue and to try to dequeue).  Measured on an idle pair (module-smoke's path,
#: ping's minimum of 10): 0.8 us more than the model's time with the servers' links at 1 Gbit/s,
#: 1.8 with the clients', 2.2 with both; per host with a link rate, at most this:
NIC_CLOCK_CHARGE_MS = 0.0011


def extra_wait_ms(db: Dumbbell, pair: int) -> tuple[float, float]:
    """(least, most) an idle round trip waits beyond expected_rtt_ms: the link's slots, each host's
    jitter (uniform [0, jitter)) and coalescing (its next batch: [0, period]), and UML's clock
    charges for the netems on the hosts' own interfaces (NIC_CLOCK_CHARGE_MS)."""
    lo, hi = slot_wait_ms(db)
    for kind in ("server", "client"):
        if (host := db.host(pair, kind)) is None:
            continue
        hi += host.rx_jitter_us / 1e3 + (host.rx_batch.period_us if host.rx_batch else 0) / 1e3
        hi += NIC_CLOCK_CHARGE_MS if host.nic_mbit else 0.0
    return lo, hi


def rtt_within(db: Dumbbell, pair: int, measured: float, tolerance_ms: float) -> bool:
    """The idle RTT (ping's minimum) is the configured one, plus a wait within its range."""
    lo, hi = extra_wait_ms(db, pair)
    base = expected_rtt_ms(db, pair)
    return base + lo - tolerance_ms <= measured <= base + hi + tolerance_ms


def measure_base_rtts(db: Dumbbell, pairs: list[int], count: int = 10, together: bool = True,
                      warm_up: bool = False) -> dict[int, float]:
    """Idle base RTT of each pair.

    together: the pairs pinged at once.  On a real clock one pair after
    another took about 1 s per pair (13 s per run of a 13-pair cell), and
    jitter keeps a few pings from meeting at the bottleneck.  Under virtual
    time every pair's ping leaves at the same instant and they queue behind
    each other at the bottleneck (+15.7 us each at 50 Mbit/s), while one
    pair after another costs no wall time: there, pairs go one at a time.
    warm_up: one ping first, answered before the measured ones leave, so
    that no measured ping waits for ARP (the first after the topology is
    built does, by up to half the pair's RTT: the delay lines carry ARP too).
    """
    def one(i: int) -> float:
        if warm_up:
            db.base_rtt_ms(i, count=1, interval=0.1)
        return db.base_rtt_ms(i, count=count, interval=0.1)

    if not together:
        return {i: one(i) for i in pairs}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(16, len(pairs))) as pool:
        rtts = list(pool.map(one, pairs))
    return dict(zip(pairs, rtts))


def calibrate(db: Dumbbell, tolerance_ms: float = RTT_TOLERANCE_MS, allowed: bool = True,
              count: int = 10, together: bool = True) -> dict:
    pairs = list(range(1, len(db.plan.pairs) + 1))
    configured = {i: db.plan.pairs[i - 1].rtt_ms for i in pairs}
    expected = {i: round(expected_rtt_ms(db, i), 4) for i in pairs}
    before = measure_base_rtts(db, pairs, count, together, warm_up=True)
    excess = statistics.median(before[i] - expected[i] for i in pairs)
    after = before
    # With slots (or the hosts' jitter and batches) the excess is mostly their waits, which are
    # the model's and must stay.
    slotted = any(extra_wait_ms(db, i) != (0, 0) for i in pairs)
    if allowed and excess > CALIBRATE_MIN_MS and not slotted:
        db.delay_offset_ms = excess / 2
        db.set_delays()
        after = measure_base_rtts(db, pairs, count, together)
    return {"configured_ms": configured, "expected_ms": expected, "measured_before_ms": before,
            "substrate_excess_ms": round(excess, 3),
            "delay_offset_ms": round(db.delay_offset_ms, 3), "measured_ms": after,
            "calibrated": allowed and not slotted, "slot_wait_ms": list(slot_wait_ms(db)),
            "tolerance_ms": tolerance_ms,
            "ok": all(rtt_within(db, i, after[i], tolerance_ms) for i in pairs)}


def saturating_rate(db: Dumbbell, out: Path) -> dict:
    """Run a CUBIC flow and measure the rate leaving the bottleneck once slow start is over (from
    SATURATE_FROM_S, or SATURATE_FROM_RTTS of a long path's RTT, for 4 s)."""
    import threading
    samples: dict = {}
    start = max(SATURATE_FROM_S, SATURATE_FROM_RTTS * max(p.rtt_ms for p in db.plan.pairs) / 1e3)
    duration = start + SATURATE_S - SATURATE_FROM_S

    def sample() -> None:
        time.sleep(start)
        samples["b0"], samples["t0"] = db.bottleneck_bytes(), time.monotonic()
        time.sleep(duration - 1 - start)
        samples["b1"], samples["t1"] = db.bottleneck_bytes(), time.monotonic()

    th = threading.Thread(target=sample)
    th.start()
    run_case(db, [{"pair": 1, "cc": "cubic", "duration": duration, "start": 0.0}], out, "saturate",
             capture=Capture(pcap=False, snaplen=96, traces=False, immediate=True))
    th.join()
    rate = (samples["b1"] - samples["b0"]) * 8 / (samples["t1"] - samples["t0"]) / 1e6
    configured = db.plan.bottleneck.rate_mbit
    return {"configured_mbit": configured, "measured_mbit": round(rate, 3),
            "window_s": [start, duration - 1],
            "ok": abs(rate - configured) <= RATE_TOLERANCE * configured}


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


#: Where our UML kernel takes a number to key its random numbers from (images/uml/patches/0009-*).
REKEY_SYSCTL = Path("/proc/sys/kernel/random/sslab_rekey")


def random_seed(plan, what: str | int) -> int:
    """The number the guest's random numbers are keyed from for @what (the job, or a run's index): the
    boot's entropy seed (the scenario's, or 0 where its entropy does not vary) and @what, hashed."""
    seed = plan.entropy_seed if plan.entropy_seed is not None else plan.seed
    return int.from_bytes(hashlib.sha256(f"sslab-rekey/{seed}/{what}".encode()).digest()[:8], "big")


def rekey_random(seed: int) -> int | None:
    """Key the guest kernel's random numbers from @seed alone, where the kernel can (REKEY_SYSCTL):
    every draw after it depends on @seed and on the draws since, not on how many the guest drew
    before (measured on 4 Dec 2026: without it BBR's runs in a boot moved with the guest's own work
    between them, BBR drawing its ProbeBW phase).  The number written, or None where the kernel
    has no such setting (Debian's own kernel, a researcher's)."""
    try:
        REKEY_SYSCTL.write_text(f"{seed}\n")
    except FileNotFoundError:
        return None
    return seed


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


#: clock_nanosleep's flag for a wake-up time rather than a span (<time.h>; Python has no name for it).
TIMER_ABSTIME = 1


def sleep_until_the_next_second() -> None:
    """Sleep until the guest's monotonic clock reaches its next whole second.

    Under virtual time a sleep costs no wall time, and it starts the job's work and each run at a time
    that does not depend on how long the guest's own work before it took (the job's imports, the last
    run's read-out, the job's housekeeping).  Measured on 4 Dec 2026: a change to how the trace is
    copied out moved every later run of a boot, and a guest module moved to another file moved
    every run of E2 and E4 (their link's replay thread woke 1 us apart); with the job and each run
    starting on the second, and the random numbers keyed afresh with it (rekey_random), neither
    moved a byte.  The wake-up is absolute (clock_nanosleep, TIMER_ABSTIME), so the time between
    reading the clock and sleeping cannot move it either."""
    libc = ctypes.CDLL(None)
    target = (time.monotonic_ns() // 1_000_000_000 + 1) * 1_000_000_000
    when = _Timespec(target // 1_000_000_000, target % 1_000_000_000)
    while libc.clock_nanosleep(time.CLOCK_MONOTONIC, TIMER_ABSTIME, ctypes.byref(when), None) == errno.EINTR:
        pass


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
