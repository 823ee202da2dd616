"""Command line: `python -m sslab ...` (the Makefile's targets call this).

Thin: it parses arguments and calls one function per command; errors that
refuse a request before anything starts exit 2, failures during a run exit 1.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

import yaml

from . import paths
from .records import RecordFormatError, read_record
from .substrate import CLOCKS, SUBSTRATES, make_substrate

#: Who can build a scenario's topology (the scenario's topology.backend).
BACKENDS = ("mininet", "netns", "containerlab")

#: Exit statuses (README, "Exit statuses").
EXIT_OK = 0
#: A run, build or check failed after it started.
EXIT_FAILED = 1
#: Refused before anything started: a request, file or value that cannot run, or a host that
#: cannot run it; the message names what.
EXIT_REFUSED = 2
#: Stopped by a signal: 128 + its number (130 Ctrl-C, 143 SIGTERM), the shell's convention.
EXIT_SIGNAL_BASE = 128


class Refused(Exception):
    """A request refused before anything starts (EXIT_REFUSED); the message names what is wrong."""


def cmd_image(args) -> int:
    from .substrate.image import ensure_image, repin
    if args.action == "repin":
        pin = repin()
        print(json.dumps(pin.__dict__, indent=2))
        return EXIT_OK
    t0 = time.monotonic()
    image = ensure_image()
    m = image.manifest()
    print(json.dumps({"image": str(image.root), "image_hash": m["image_hash"], "kernel": m["kernel"],
                      "module": m["module"], "seconds": round(time.monotonic() - t0, 1)}, indent=2))
    return EXIT_OK


def cmd_container(args) -> int:
    from .substrate import container
    if args.action == "engine":
        print(container.engine())  # ImageError (exit 1) names each engine tried and why it failed
        return EXIT_OK
    info = container.build() if args.action == "build" else container.save()
    print(json.dumps(info, indent=2))
    return EXIT_OK


def at_least_one(name: str):
    """An argparse type: an integer of at least 1 (refused by the parser, exit 2, before anything runs)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}={text}: a whole number") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name}={value}: at least 1")
        return value
    return parse


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds, a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: more than 0 seconds")
    return value


def ready(substrate):
    """@substrate, once one short boot has shown that it runs on this host (substrate.preflight:
    cached per host and image; if it does not boot, SubstrateUnusable names why, before anything)."""
    from .substrate.preflight import preflight
    preflight(substrate, log=lambda m: print(m, file=sys.stderr, flush=True))
    return substrate


def cmd_fresh_check(args) -> int:
    """`make fresh-check`: the README's two commands in a throw-away Debian root with an empty cache."""
    from .substrate.freshcheck import fresh_check, make_targets
    target = (args.main.split() or [""])[0]
    if target not in make_targets():
        raise Refused(f"--main {args.main!r}: {target!r} is not a target of the Makefile "
                      f"(`make help` lists them)")
    record = fresh_check(main=args.main, keep=args.keep)
    print(json.dumps({k: record[k] for k in ("ok", "commit", "steps", "total_s", "record") if k in record}, indent=1))
    return EXIT_OK if record["ok"] else EXIT_FAILED


def cmd_vm_check(args) -> int:
    from .substrate.hostfacts import host_facts
    from .substrate.job import JobSpec
    substrate = ready(make_substrate(args.substrate, args.accel, args.clock))
    run_dir = paths.new_run_dir("vm-check")
    job = JobSpec(argv=["python3", "-m", "sslab.guest.vmcheck"], timeout_s=args.timeout, name="vm-check",
                  env={"SSLAB_CLOCK": substrate.clock})
    t0 = time.monotonic()
    res = substrate.run(job, run_dir / "job")
    total = time.monotonic() - t0
    report_path = res.out_dir / "vmcheck.json"
    if not report_path.exists():
        print(f"error: the check left no report (exit {res.exit_code}, timed out: {res.timed_out});"
              f" see {res.out_dir}", file=sys.stderr)
        print(res.stderr()[-2000:], file=sys.stderr)
        return EXIT_FAILED
    guest = json.loads(report_path.read_text())
    out = {
        "substrate": res.substrate,
        "clock": res.clock,
        "kernel_release": guest["kernel_release"],
        "accelerator": res.accelerator,
        "seconds_to_userspace": None if res.seconds_to_userspace is None else round(res.seconds_to_userspace, 2),
        "seconds_total": round(total, 2),
        "qdiscs": guest["qdiscs"],
        "tcp_available_congestion_control": guest["tcp_available_congestion_control"],
        "module": guest["module"],
        "share_write_mb_per_s": guest["share_write_mb_per_s"],
        "link_selftest": guest["link_selftest"],
        "checks": guest["checks"],
        "host": host_facts(),
        "uml_fp": guest.get("uml_fp"),
        "job_exit_code": res.exit_code,
        "run_dir": str(run_dir),
    }
    if res.substrate == "vm":
        out["accel_probe"] = substrate.accel_probe
    if res.substrate in ("vm", "uml"):
        m = substrate.image.manifest()
        out["image"] = {"hash": m["image_hash"], "kernel_package": m["kernel"]["package"],
                        "kernel_version": m["kernel"]["version"]}
        if res.substrate == "uml":
            uml = m.get("uml") or {}
            out["image"]["uml"] = {"release": uml.get("release"), "source": uml.get("source"),
                                   "config_sha256": uml.get("config_sha256"), "warning": uml.get("warning")}
            out["seed"], out["cpu"], out["guest_seconds"] = res.seed, res.cpu, res.guest_seconds
    (run_dir / "vm-check.json").write_text(json.dumps(out, indent=2, sort_keys=True))
    print(json.dumps(out, sort_keys=True))
    return EXIT_OK if res.ok and all(guest["checks"].values()) else EXIT_FAILED


def cmd_run(args) -> int:
    from .substrate.job import JobSpec
    substrate = make_substrate(args.substrate, args.accel, args.clock)
    if not args.argv:
        raise Refused("give the command to run after --")
    run_dir = paths.new_run_dir("jobs")
    res = substrate.run(JobSpec(argv=args.argv, timeout_s=args.timeout, name="adhoc"), run_dir / "job")
    sys.stdout.write(res.stdout())
    sys.stderr.write(res.stderr())
    print(json.dumps({"exit_code": res.exit_code, "timed_out": res.timed_out, "substrate": res.substrate,
                      "clock": res.clock, "accelerator": res.accelerator, "run_dir": str(run_dir)}),
          file=sys.stderr)
    return 124 if res.timed_out else (res.exit_code if isinstance(res.exit_code, int) else 1)


def cmd_startup(args) -> int:
    from .analysis.startup import print_table
    from .experiment import run_scenario
    from .scenario import load_scenario
    load_scenario(args.scenario)  # refuse a bad file before building or booting anything
    substrate = ready(make_substrate(args.substrate, args.accel, args.clock))
    t0 = time.monotonic()
    run_dir = run_scenario(Path(args.scenario), args.kind, substrate, reps=args.reps, backend=args.backend,
                           overrides=overrides(args))
    print_table(run_dir)
    print(f"report: {run_dir / 'report.md'}  ({time.monotonic() - t0:.0f} s)")
    return EXIT_OK


def cmd_crosscheck(args) -> int:
    """`make crosscheck`: one scenario on UML and on QEMU with -icount, side by side."""
    from .analysis.crosscheck import crosscheck_table
    from .analysis.startup import print_table
    from .experiment import run_scenario
    from .scenario import load_scenario
    load_scenario(args.scenario)  # refuse a bad file before anything runs
    runs, walls = {}, {}
    for label, name, clock in (("uml/inf-cpu", "uml", "real"), ("qemu/icount", "vm", "virtual")):
        substrate = ready(make_substrate(name, "tcg" if name == "vm" else "auto", clock))
        t0 = time.monotonic()
        # The host model is UML's: under QEMU's icount the hosts' work already costs instruction time.
        hosts = {"hosts": {"model": args.hosts}} if args.hosts and name == "uml" else None
        if hosts:
            label = f"uml/inf-cpu, hosts {args.hosts}"
        runs[label] = run_scenario(Path(args.scenario), f"crosscheck/{name}", substrate, reps=args.reps,
                                   overrides=hosts)
        walls[label] = time.monotonic() - t0
        print_table(runs[label])
    table = crosscheck_table(runs)
    dest = paths.new_run_dir("crosscheck/compared")
    text = (f"# Crosscheck: {Path(args.scenario).name} on two clocks\n\n"
            + "".join(f"- {label}: {d} ({walls[label]:.0f} s wall)\n" for label, d in runs.items())
            + "\nMedian [95% CI]. Agreement: medians within 10%, or (both sides with 3 or more "
              "repetitions) within the two CI half-widths together; losses of at most 5 on both sides "
              "agree.\n\n" + table + "\n")
    (dest / "crosscheck.md").write_text(text)
    print(text)
    print(f"crosscheck: {dest / 'crosscheck.md'}")
    return EXIT_OK


def _substrates(args, jobs: int) -> list:
    """One UML per core under virtual time (@jobs of them), else the one real-clock substrate; the
    first has passed the preflight (one boot on this host)."""
    if args.substrate == "uml":
        from .substrate.uml import allowed_cpus
        substrates = [make_substrate("uml", cpu=c) for c in allowed_cpus()[:jobs]]
    else:
        substrates = [make_substrate(args.substrate, args.accel, args.clock)]
    ready(substrates[0])
    return substrates


def _series_command(args, files_of, kind_of, write_report) -> int:
    """A target made of several scenario runs and one report (`make astart`, `make blitzstart`).

    @files_of() checks the request and returns the scenario files (everything is refused
    before anything runs); each runs into results/<kind_of(file)>/; the report follows."""
    if args.report:
        dest = write_report([Path(d) for d in args.report])
        print((dest / "report.md").read_text())
        print(f"report: {dest / 'report.md'}")
        return EXIT_OK
    from .experiment import run_series
    from .matrix.orchestrate import check_jobs
    jobs = check_jobs(args.substrate, args.jobs)
    files = files_of()
    t0 = time.monotonic()
    run_dirs = run_series(files, kind_of, _substrates(args, jobs), reps=args.reps, overrides=overrides(args))
    dest = write_report(run_dirs)
    print((dest / "report.md").read_text())
    print(f"report: {dest / 'report.md'}  ({time.monotonic() - t0:.0f} s for {len(run_dirs)} scenario(s), "
          f"{jobs} at once)")
    return EXIT_OK


def cmd_blitzstart(args) -> int:
    """`make blitzstart`: E9's links (topologies/e9-blitzstart-<link>.yaml), then the table beside the report's."""
    from .analysis.blitzstart import LINKS, write_report
    from .scenario import load_scenario
    prefix = "e9-blitzstart-"

    def files_of() -> list[Path]:
        links = [x.strip() for x in args.links.split(",") if x.strip()] if args.links else list(LINKS)
        files = [paths.REPO_ROOT / "topologies" / f"{prefix}{link}.yaml" for link in links]
        missing = [link for link, f in zip(links, files) if not f.exists()]
        if missing:
            known = sorted(f.stem.removeprefix(prefix) for f in (paths.REPO_ROOT / "topologies").glob(f"{prefix}*.yaml")
                           if f.stem != f"{prefix}cases")
            raise Refused(f"no link {', '.join(missing)} (known: {', '.join(known)}; "
                             f"a new link is a file topologies/{prefix}<link>.yaml)")
        for f in files:
            load_scenario(f)
        return files
    return _series_command(args, files_of, lambda f: f"blitzstart/{f.stem.removeprefix(prefix)}", write_report)


def _series_settings(series_file: str, names: str | None, what: str) -> list[Path]:
    """The scenario files of a series file's settings (all, or the comma-separated @names), written
    down first under results/<what>/scenarios/ so each run records the file it ran."""
    from .experiment.series import write_series_scenarios
    from .scenario.series import load_series
    series = load_series(paths.REPO_ROOT / "topologies" / series_file)
    chosen = series.scenarios([x.strip() for x in names.split(",") if x.strip()] if names else None)
    return write_series_scenarios(series, [s for s, _ in chosen], paths.new_run_dir(f"{what}/scenarios"))


def cmd_astart(args) -> int:
    """`make astart`: E8's settings (topologies/e8-astart.yaml), Fig. 12 and fairness, beside the paper."""
    from .analysis.astart import write_report
    from .scenario import load_scenario
    prefix = "e8-astart-"

    def files_of() -> list[Path]:
        extras = [] if args.only_series else [paths.REPO_ROOT / "topologies" / f"{prefix}{n}.yaml"
                                              for n in ("liw", "fairness")]
        for f in extras:
            load_scenario(f)
        return _series_settings("e8-astart.yaml", args.settings, "astart") + extras
    return _series_command(args, files_of, lambda f: f"astart/{f.stem.removeprefix(prefix)}", write_report)


def cmd_wifi(args) -> int:
    """`make wifi`: E2, the four slow starts over a Wi-Fi last hop (topologies/e2-wifi.yaml)."""
    from .analysis.lastmile import write_wifi_report
    prefix = "e2-wifi-"
    return _series_command(args, lambda: _series_settings("e2-wifi.yaml", args.variants, "wifi"),
                           lambda f: f"wifi/{f.stem.removeprefix(prefix)}", write_wifi_report)


#: `make fct-vs-size`'s quick default: one link of each type (5g is there to ask for).
FCT_QUICK_LINKS = ("wired", "wifi", "lte")


def cmd_fct_vs_size(args) -> int:
    """`make fct-vs-size`: E4/E5 over wired, Wi-Fi and cellular links (topologies/e4-fct-vs-size.yaml)."""
    from .analysis.lastmile import write_fct_report
    from .scenario.series import load_series
    prefix = "e4-"

    def files_of() -> list[Path]:
        if args.settings:
            return _series_settings("e4-fct-vs-size.yaml", args.settings, "fct-vs-size")
        links = [x.strip() for x in (args.links or ",".join(FCT_QUICK_LINKS)).split(",") if x.strip()]
        settings = load_series(paths.REPO_ROOT / "topologies" / "e4-fct-vs-size.yaml").spec.settings
        known = sorted({s["link"] for s in settings})
        unknown = sorted(set(links) - set(known))
        if unknown:
            raise Refused(f"LINKS: no link {', '.join(unknown)} in topologies/e4-fct-vs-size.yaml "
                             f"(known: {', '.join(known)})")
        names = ",".join(s["name"] for s in settings if s["link"] in links)
        return _series_settings("e4-fct-vs-size.yaml", names, "fct-vs-size")
    return _series_command(args, files_of, lambda f: f"fct-vs-size/{f.stem.removeprefix(prefix)}",
                           write_fct_report)


def cmd_trace(args) -> int:
    """`sslab trace generate|show`: rate traces in mahimahi's format (sslab.scenario.traces)."""
    from .scenario.traces import TraceError, generated_trace, trace_from_text
    from .scenario.units import parse_rate_mbit, parse_seconds
    try:
        if args.action == "generate":
            out = Path(args.out)
            if out.exists():
                raise Refused(f"{out} exists; a trace is never overwritten")
            text, trace = generated_trace(args.model, args.seed, parse_rate_mbit(args.mean),
                                          parse_seconds(args.duration), args.cv, parse_seconds(args.tau),
                                          round(parse_seconds(args.bin) * 1e3))
            out.write_text(text)
            print(f"{out}: {trace.source}; {len(text.splitlines())} opportunities, period {trace.period_ms} ms, "
                  f"mean {trace.mean_mbit:.3f} Mbit/s, sha256 {trace.sha256}")
            return EXIT_OK
        for name in args.files:
            t = trace_from_text(Path(name).read_text(), f"file:{name}", round(parse_seconds(args.bin) * 1e3))
            rates = sorted(t.rates_mbit)
            print(f"{name}: period {t.period_ms / 1e3:g} s, {len(rates)} bins of {t.bin_ms} ms, mean "
                  f"{t.mean_mbit:.3f} Mbit/s, min {rates[0]:.3f}, median {rates[len(rates) // 2]:.3f}, "
                  f"max {rates[-1]:.3f}; sha256 {t.sha256}")
        return EXIT_OK
    except (TraceError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_REFUSED


def cmd_clab(args) -> int:
    """`sslab clab SCENARIO`: the containerlab topology file of a scenario (what BACKEND=containerlab deploys)."""
    import subprocess
    import tempfile
    from .scenario import load_scenario, to_plan
    plan = to_plan(load_scenario(args.scenario))
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(plan, f)
        f.flush()
        # The topology is the guest's (it names the nodes and links it deploys): run it, never import it.
        res = subprocess.run([sys.executable, "-m", "sslab.guest.clab", "topology", f.name], capture_output=True,
                             text=True, cwd=paths.REPO_ROOT / "runners")
    if res.returncode != 0:
        print(res.stderr, file=sys.stderr)
        return EXIT_FAILED
    sys.stdout.write(f"# containerlab topology of {args.scenario} (`python -m sslab clab`); deploy with\n"
                     f"#   docker import of a tar holding busybox as bin/busybox, tagged sslab-node:1, then\n"
                     f"#   containerlab deploy -t <this file>; addresses, routes, delays and the bottleneck are\n"
                     f"#   the harness's (BACKEND=containerlab), not this file's.\n" + res.stdout)
    return EXIT_OK


def cmd_report(args) -> int:
    from .analysis.startup import rebuild_report
    if not (Path(args.run_dir) / "meta.json").is_file():
        raise Refused(f"{args.run_dir} is not a run directory (it has no meta.json)")
    dest = rebuild_report(Path(args.run_dir))
    print(f"rebuilt: {dest / 'report.md'}")
    return EXIT_OK


def cmd_matrix(args) -> int:
    from . import matrix as mx
    if args.action == "run":
        from .matrix.orchestrate import run_matrix
        m = mx.load_matrix(args.name)
        options = mx.validate_options(args.set or [])
        return run_matrix(m, options, args.iter, Path(args.inventory), serial=args.serial,
                          substrate=args.substrate, jobs=args.jobs, clock=args.clock, container=args.container,
                          backend=args.backend, suss_version=args.suss_version, host_model=args.hosts)
    if args.action == "run-cells":
        plan = read_record(Path(args.plan), "sslab.matrix-plan")
        keys = plan["deal"].get(args.host)
        if keys is None:
            raise mx.MatrixError(f"the plan deals no cells to host {args.host!r}")

        def stop(signum, frame):
            # Unwind: the VM's QEMU is killed on the way out; the cell in
            # progress stays a .partial directory, which never counts.
            raise SystemExit(EXIT_SIGNAL_BASE + signum)
        signal.signal(signal.SIGTERM, stop)
        from .matrix.orchestrate import check_jobs
        from .substrate.preflight import SubstrateUnusable
        jobs = check_jobs(args.substrate, args.jobs)
        try:
            substrates = _substrates(args, jobs)
        except SubstrateUnusable as e:
            # The controller prints this, not Ansible's record of the failed task.
            mx.record_host_error(Path(args.matrix_dir), args.host, str(e))
            raise
        substrate = substrates[0]
        image_hash = substrate.image.manifest()["image_hash"] if args.substrate != "native" else plan["image_hash"]
        mx.check_host_matches(plan, image_hash, mx.traffic_code_version())
        counts = mx.run_cells(Path(args.matrix_dir), plan, args.host, keys, substrates,
                              log=lambda m: print(m, flush=True))
        print(json.dumps(counts))
        return EXIT_FAILED if counts["failed"] else EXIT_OK
    if args.action == "pack":
        from .matrix.orchestrate import pack_cells
        plan = read_record(Path(args.plan), "sslab.matrix-plan")
        n = pack_cells(Path(args.matrix_dir), plan, args.host, Path(args.out))
        print(json.dumps({"packed_cells": n}))
        return EXIT_OK
    if args.action == "merge":
        from .matrix.orchestrate import merge_cells
        if not Path(args.tar).is_file():
            raise Refused(f"{args.tar}: no such tar of cells")
        print(json.dumps(merge_cells(Path(args.matrix_dir), Path(args.tar))))
        return EXIT_OK
    if args.action == "report":
        from .analysis.matrix_report import write_matrix_report
        dest = write_matrix_report(Path(args.matrix_dir))
        print((dest / "table.md").read_text())
        print(f"report: {dest / 'table.md'}")
        return EXIT_OK
    raise Refused(f"unknown matrix action {args.action}")


def overrides(args) -> dict | None:
    """What --suss-version and --hosts ask over the scenarios (None: nothing)."""
    out = {}
    if getattr(args, "suss_version", None) is not None:
        out["module_params"] = {"suss_version": args.suss_version}
    if getattr(args, "hosts", None):
        out["hosts"] = {"model": args.hosts}
    return out or None


def add_suss_version_option(p: argparse.ArgumentParser) -> None:
    """--suss-version and --hosts: the options every experiment command takes over its scenarios."""
    from .ccas import SUSS_VERSIONS
    from .scenario import HOST_PRESETS
    p.add_argument("--suss-version", type=int, choices=list(SUSS_VERSIONS),
                   help="the SUSS version cubic_suss runs: " + "; ".join(f"{k}: {v}" for k, v in SUSS_VERSIONS.items())
                   + " (default: the scenario's, else 2024)")
    p.add_argument("--hosts", choices=list(HOST_PRESETS),
                   help="the host model (sslab.scenario.hosts): ideal (infinitely fast hosts), 1gbe, logging "
                        "(default: the scenario's, else ideal)")


def add_substrate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--substrate", default="uml", choices=SUBSTRATES,
                   help="uml: User-Mode Linux in virtual time (default); vm: QEMU; native: this host")
    p.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"], help="QEMU's accelerator")
    p.add_argument("--clock", default="real", choices=CLOCKS,
                   help="QEMU's clock: real (MTTCG or KVM) or virtual (single-threaded TCG with icount)")


def scenario_repetitions(rel: str) -> str:
    """The repetitions a scenario or series file asks for, read from the file itself, so a help text
    never copies a default that the file has since changed."""
    data = yaml.safe_load((paths.REPO_ROOT / rel).read_text()) or {}
    reps = data.get("repetitions", (data.get("scenario") or {}).get("repetitions"))
    return f"{reps} in {rel}" if reps is not None else f"none set in {rel}"


def add_series_parser(sub, name: str, func, help_text: str, scenario_file: str):
    """A target made of scenario runs and a report: --reps, --jobs, --report and the substrate options."""
    p = sub.add_parser(name, help=help_text)
    p.add_argument("--reps", type=at_least_one("REPS"), help=f"repetitions per scenario (default: the scenario's, "
                                            f"{scenario_repetitions(scenario_file)})")
    p.add_argument("--jobs", type=at_least_one("JOBS"), help="scenarios at once under UML (default: the host's cores)")
    p.add_argument("--report", nargs="+", metavar="RUN_DIR", help="only rebuild the report from these run directories")
    add_substrate_options(p)
    p.set_defaults(func=func)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a closed terminal, `kill`, a CI timeout), raised where the program is,
    like a Ctrl-C: every `finally` runs, so a build unmounts its chroot and removes its
    directories, and a run stops its testbeds."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _interrupted(signum, frame):
    # Once: a second signal must not cut the clean-up short (SIGKILL still ends everything, and
    # the next build removes what a killed one left).
    signal.signal(signum, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def main(argv: list[str] | None = None) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupted)
    p = argparse.ArgumentParser(prog="sslab")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("image", help="build (or repin) the testbed image")
    pi.add_argument("action", choices=["build", "repin"])
    pi.set_defaults(func=cmd_image)
    pk = sub.add_parser("container", help="build the OCI container image (or save it as an archive; or name the "
                                          "container engine that works here)")
    pk.add_argument("action", choices=["build", "save", "engine"])
    pk.set_defaults(func=cmd_container)
    pfc = sub.add_parser("fresh-check", help="the README's two commands on a new machine: a throw-away Debian "
                                             "root with an empty cache (root; takes a cold build, the main job "
                                             "and the tests)")
    pfc.add_argument("--main", default="reproduce-table1 CCA=cubic ITER=1", help="the make target (and variables) "
                     "of the main job")
    pfc.add_argument("--keep", action="store_true", help="keep the root afterwards (it is large)")
    pfc.set_defaults(func=cmd_fresh_check)
    for name, func, timeout in (("vm-check", cmd_vm_check, 300.0), ("run", cmd_run, 600.0)):
        sp = sub.add_parser(name)
        add_substrate_options(sp)
        sp.add_argument("--timeout", type=positive_seconds, default=timeout, help="job timeout in seconds")
        if name == "run":
            sp.add_argument("argv", nargs=argparse.REMAINDER)
        sp.set_defaults(func=func)
    ps = sub.add_parser("startup", help="run a scenario (E1 by default) and write its report")
    ps.add_argument("--scenario", default=str(paths.REPO_ROOT / "topologies" / "e1-startup.yaml"))
    ps.add_argument("--reps", type=at_least_one("REPS"), help="repetitions (default: the scenario's)")
    ps.add_argument("--kind", default="startup", help="results/<kind>/ directory")
    ps.add_argument("--backend", choices=BACKENDS, help="who builds the topology (default: the scenario's)")
    add_suss_version_option(ps)
    add_substrate_options(ps)
    ps.set_defaults(func=cmd_startup)
    pc = sub.add_parser("crosscheck", help="a scenario (E1) on UML and on QEMU -icount, side by side")
    pc.add_argument("--scenario", default=str(paths.REPO_ROOT / "topologies" / "e1-startup.yaml"))
    pc.add_argument("--reps", type=at_least_one("REPS"), default=2)
    from .scenario import HOST_PRESETS
    pc.add_argument("--hosts", choices=list(HOST_PRESETS), help="the host model of the UML side (default: the scenario's)")
    pc.set_defaults(func=cmd_crosscheck)
    pb = add_series_parser(sub, "blitzstart", cmd_blitzstart, "E9: Blitzstart against the standard start on the "
                           "report's links", "topologies/e9-blitzstart-cases.yaml")
    pb.add_argument("--links", help="comma-separated links (default: dsl-slow,dsl-fast,3g,lte)")
    pa = add_series_parser(sub, "astart", cmd_astart, "E8: Astart, NewReno, Hoe and Vegas on the Astart paper's "
                           "settings", "topologies/e8-astart.yaml")
    pa.add_argument("--settings", help="comma-separated settings of topologies/e8-astart.yaml (default: all)")
    pa.add_argument("--only-series", action="store_true", help="leave out Fig. 12 and the fairness runs")
    pw = add_series_parser(sub, "wifi", cmd_wifi, "E2: the four slow starts over a Wi-Fi last hop",
                           "topologies/e2-wifi.yaml")
    pw.add_argument("--variants", help="comma-separated settings of topologies/e2-wifi.yaml (default: all four)")
    add_suss_version_option(pw)
    pf = add_series_parser(sub, "fct-vs-size", cmd_fct_vs_size, "E4/E5: FCT and loss against flow size over "
                           "wired, Wi-Fi and cellular last hops", "topologies/e4-fct-vs-size.yaml")
    pf.add_argument("--links", help=f"comma-separated links (default: {','.join(FCT_QUICK_LINKS)}; also 5g)")
    pf.add_argument("--settings", help="comma-separated settings of topologies/e4-fct-vs-size.yaml (over --links)")
    add_suss_version_option(pf)
    pt = sub.add_parser("trace", help="rate traces (mahimahi format): generate one from a model, or show one")
    tsub = pt.add_subparsers(dest="action", required=True)
    tg = tsub.add_parser("generate", help="a trace from a stated stochastic model and seed")
    tg.add_argument("--model", required=True, choices=["gauss-markov", "lognormal-markov"])
    tg.add_argument("--seed", type=int, default=1)
    tg.add_argument("--mean", required=True, help="mean rate, e.g. 50mbit")
    tg.add_argument("--cv", type=float, required=True, help="standard deviation over the mean")
    tg.add_argument("--tau", required=True, help="correlation time, e.g. 500ms")
    tg.add_argument("--duration", default="60s")
    tg.add_argument("--bin", default="10ms")
    tg.add_argument("--out", required=True)
    ts = tsub.add_parser("show", help="period, mean and spread of trace files")
    ts.add_argument("files", nargs="+")
    ts.add_argument("--bin", default="10ms")
    pt.set_defaults(func=cmd_trace)
    pcl = sub.add_parser("clab", help="print a scenario's containerlab topology file")
    pcl.add_argument("scenario")
    pcl.set_defaults(func=cmd_clab)
    pr = sub.add_parser("report", help="rebuild a run's tables and plots from its archive")
    pr.add_argument("run_dir")
    pr.set_defaults(func=cmd_report)
    pm = sub.add_parser("matrix", help="matrices (E7 table1, E6 fairness): run, resume, report")
    msub = pm.add_subparsers(dest="action", required=True)
    mr = msub.add_parser("run", help="plan, deal to the inventory's hosts, run missing cells, report")
    mr.add_argument("name", help="matrix name (playbooks/matrices/NAME.yaml) or a path")
    mr.add_argument("--set", action="append", metavar="OPTION=V[,V]", help="narrow an axis, e.g. CCA=cubic")
    mr.add_argument("--iter", type=at_least_one("ITER"), help="repetitions per setting (default: the matrix's)")
    mr.add_argument("--inventory", default=str(paths.REPO_ROOT / "playbooks" / "inventory" / "localhost.ini"))
    mr.add_argument("--serial", help="hosts at a time (default: all at once)")
    mr.add_argument("--jobs", type=at_least_one("JOBS"), help="cells at a time per host (UML; default: its cores)")
    mr.add_argument("--container", help="run the cells in this slowstart-lab container image (make container)")
    mr.add_argument("--backend", choices=BACKENDS, help="who builds each cell's topology (default: the matrix's)")
    add_suss_version_option(mr)
    add_substrate_options(mr)
    mc = msub.add_parser("run-cells", help="(on a host) run the cells the plan deals to HOST")
    mc.add_argument("--matrix-dir", required=True)
    mc.add_argument("--plan", required=True)
    mc.add_argument("--host", required=True)
    mc.add_argument("--jobs", type=at_least_one("JOBS"))
    add_substrate_options(mc)
    mp = msub.add_parser("pack", help="(on a host) tar its finished cells for the controller")
    mp.add_argument("--matrix-dir", required=True)
    mp.add_argument("--plan", required=True)
    mp.add_argument("--host", required=True)
    mp.add_argument("--out", required=True)
    mg = msub.add_parser("merge", help="(on the controller) merge a host's tar of cells")
    mg.add_argument("--matrix-dir", required=True)
    mg.add_argument("--tar", required=True)
    mrep = msub.add_parser("report", help="rebuild a matrix's tables and plots from its archive")
    mrep.add_argument("matrix_dir")
    pm.set_defaults(func=cmd_matrix)
    args = p.parse_args(argv)
    if getattr(args, "argv", None) and args.argv[0] == "--":
        args.argv = args.argv[1:]
    from .analysis.archive import ArchiveError
    from .matrix import MatrixError
    from .scenario import ScenarioError
    from .substrate.image import ImageError
    from .substrate.job import JobError
    from .substrate.mirrors import MirrorError
    from .substrate.native import NativeUnavailable
    from .substrate.preflight import SubstrateUnusable
    from .substrate.qemu import VMError
    try:
        return args.func(args)
    except KeyboardInterrupt as e:
        signum = e.signum if isinstance(e, Terminated) else signal.SIGINT
        print(f"interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        return EXIT_SIGNAL_BASE + signum
    except (Refused, ScenarioError, NativeUnavailable, SubstrateUnusable, MatrixError, ArchiveError,
            RecordFormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_REFUSED
    except (ImageError, MirrorError, VMError, JobError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
