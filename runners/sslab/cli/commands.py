"""What each command does: one function per command of sslab.cli.spec, called by sslab.cli.main
with the parsed arguments; each returns an exit status (sslab.cli.status)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .. import paths
from ..plan_record import read_matrix_plan
from ..records import read_record
from ..scenario import knobs
from ..substrate import make_substrate
from ..substrate.kinds import kind_of
from ..substrate.preflight import ready
from .status import EXIT_FAILED, EXIT_OK, EXIT_REFUSED, EXIT_TIMED_OUT, Refused

def cmd_image(args) -> int:
    from ..substrate.image import ensure_image, prune_cache, repin
    if args.action in ("list", "prune"):
        return image_cache(args, prune_cache)
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


def image_cache(args, prune_cache) -> int:
    """`sslab image list|prune`: the cache's images and UML kernels, what a prune keeps and why (list is
    a prune's dry run that says what it keeps too)."""
    from ..substrate.cachegc import DEFAULT_KEEP, GIB
    keep = DEFAULT_KEEP if args.keep is None else args.keep
    res = prune_cache(keep, dry_run=args.dry_run or args.action == "list")
    if args.action == "list":
        for kind, name, why in res.kept:
            print(f"keep   {kind:5} {name[:12]}  {why}")
        print(f"{len(res.removed)} entries ({sum(b for *_, b in res.removed) / GIB:.1f} GiB) and "
              f"{len(res.engine_removed)} engine images a prune (KEEP={keep}) would remove; "
              f"{res.free_before / GIB:.1f} GiB free")
    else:
        print(f"removed {len(res.removed)} entries ({sum(b for *_, b in res.removed) / GIB:.1f} GiB) and "
              f"{len(res.engine_removed)} engine images; {res.free_before / GIB:.1f} -> {res.free_after / GIB:.1f} "
              f"GiB free")
    return EXIT_OK


def cmd_container(args) -> int:
    from ..substrate import container
    if args.action == "engine":
        print(container.engine())  # ImageError (exit 1) names each engine tried and why it failed
        return EXIT_OK
    info = container.build() if args.action == "build" else container.save()
    print(json.dumps(info, indent=2))
    return EXIT_OK


def cmd_fleet(args) -> int:
    """`sslab fleet up|down|kill|inventory`: the test fleet (substrate.testfleet)."""
    from ..substrate import testfleet
    if args.action == "up":
        if args.hosts < 1 or not 0 <= args.docker <= args.hosts:
            raise Refused(f"--hosts {args.hosts} --docker {args.docker}: at least one host, at most that many by Docker")
        rec = testfleet.up(args.hosts, args.docker)
        for m in rec["hosts"]:
            print(f"{m['host']}: {m['engine']} container {m['container']}, ssh root@{m['ip']}")
        print(f"inventory: {rec['inventory']}  (make fleet-down removes the fleet)")
    elif args.action == "down":
        print(f"removed: {', '.join(testfleet.down()) or 'nothing'}")
    elif args.action == "kill":
        if not args.host:
            raise Refused("sslab fleet kill HOST: which host")
        try:
            m = testfleet.kill(args.host)
        except ValueError as e:
            raise Refused(str(e)) from None
        print(f"killed {m['host']} ({m['engine']} container {m['container']})")
    else:
        if not testfleet.members():
            raise Refused("no test fleet is up: make fleet-up")
        print(testfleet.inventory_path())
    return EXIT_OK


def cmd_fresh_check(args) -> int:
    """`make fresh-check`: the README's two commands in a throw-away Debian root with an empty cache."""
    from ..substrate.freshcheck import NEED_GB, disk_shortfall, fresh_check, make_targets
    target = (args.main.split() or [""])[0]
    if target not in make_targets():
        raise Refused(f"--main {args.main!r}: {target!r} is not a target of the Makefile "
                      f"(`make help` lists them)")
    short = disk_shortfall(NEED_GB if args.need_gb is None else args.need_gb)
    if short:
        raise Refused(short)
    record = fresh_check(main=args.main, keep=args.keep)
    print(json.dumps({k: record[k] for k in ("ok", "commit", "steps", "total_s", "record") if k in record}, indent=1))
    return EXIT_OK if record["ok"] else EXIT_FAILED


def cmd_vm_check(args) -> int:
    from ..substrate.hostfacts import host_facts
    from ..substrate.job import JobSpec
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
    out.update(substrate.facts(res))
    (run_dir / "vm-check.json").write_text(json.dumps(out, indent=2, sort_keys=True))
    print(json.dumps(out, sort_keys=True))
    return EXIT_OK if res.ok and all(guest["checks"].values()) else EXIT_FAILED


def cmd_exec(args) -> int:
    """`sslab exec -- CMD`: one command in a fresh testbed boot."""
    from ..substrate.job import JobSpec
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
    return EXIT_TIMED_OUT if res.timed_out else (res.exit_code if isinstance(res.exit_code, int) else 1)


def cmd_startup(args) -> int:
    from ..experiment import run_scenario
    from ..scenario import load_scenario
    load_scenario(args.scenario)  # refuse a bad file before building or booting anything
    substrate = ready(make_substrate(args.substrate, args.accel, args.clock))
    t0 = time.monotonic()
    run_dir = run_scenario(Path(args.scenario), args.kind, substrate, reps=args.reps, backend=args.backend,
                           knobs=knobs.given(args))
    _print_run(run_dir, f"({time.monotonic() - t0:.0f} s)")
    return EXIT_OK


def cmd_crosscheck(args) -> int:
    """`make crosscheck`: one scenario on UML and on QEMU with -icount, side by side."""
    from ..analysis.crosscheck import crosscheck_table
    from ..analysis.startup import print_table
    from ..experiment import run_scenario
    from ..scenario import load_scenario
    load_scenario(args.scenario)  # refuse a bad file before anything runs
    runs, walls = {}, {}
    for label, name, accel, clock in (("uml/inf-cpu", "uml", "auto", "real"), ("qemu/icount", "vm", "tcg", "virtual")):
        substrate = ready(make_substrate(name, accel, clock))
        t0 = time.monotonic()
        # A host model prices the hosts' work in virtual time; under QEMU's icount it already costs
        # instruction time.
        hosts = {"hosts": args.hosts} if args.hosts and kind_of(name).virtual_time else None
        if hosts:
            label = f"uml/inf-cpu, hosts {args.hosts}"
        runs[label] = run_scenario(Path(args.scenario), f"crosscheck/{name}", substrate, reps=args.reps,
                                   knobs=hosts)
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


def cmd_run(args) -> int:
    """`sslab run EXPERIMENT` (and `make <experiment>`): any experiments/*.yaml, or a path to one
    (sslab.matrix.experiments runs it; this prints what it left)."""
    from ..matrix.experiments import run_experiment
    out = run_experiment(_request(args, args.experiment))
    if out.report is not None:
        _print_report(out.report, out.took)
    elif out.alone and out.runs:
        _print_run(out.runs[0], out.took)
    elif out.runs:
        for d in out.runs:
            _print_run(d)
        print(out.took)
    return out.status


def _request(args, experiment: str):
    """The options @args holds as a run request (sslab.matrix.experiments.Request); those a command
    does not have are left unset."""
    from ..matrix.experiments import Request
    given = {name: getattr(args, option) for name, option in (
        ("reps", "reps"), ("iterations", "iter"), ("scenario", "scenario"), ("report_over", "report"),
        ("substrate", "substrate"), ("accel", "accel"), ("clock", "clock"), ("jobs", "jobs"),
        ("backend", "backend"), ("again", "again"), ("inventory", "inventory"), ("serial", "serial"),
        ("container", "container"), ("host_timeout", "host_timeout"), ("kernels", "kernel"),
        ("boot_share", "boot_share")) if getattr(args, option, None) is not None}
    if getattr(args, "slurm", False):
        from ..matrix.slurm import SlurmSettings
        given["slurm"] = SlurmSettings.parse(args.slurm_args, args.slurm_cells, args.slurm_poll)
    else:
        stray = [o for o, v in (("--slurm-args", "slurm_args"), ("--slurm-cells", "slurm_cells"),
                                ("--slurm-poll", "slurm_poll")) if getattr(args, v, None) is not None]
        if stray:
            raise Refused(f"{', '.join(stray)}: options of a Slurm run; give --slurm (make SLURM=1) too")
    return Request(experiment=experiment, select=_words(getattr(args, "select", None)),
                   sets=getattr(args, "set", None) or [], knobs=knobs.given(args), **given)


def _print_report(dest: Path, took: str = "") -> int:
    """A report over runs, already published (analysis.reports.write_over_runs): its text, where it is."""
    from ..analysis.html import index_of
    print((dest / "report.md").read_text())
    print(f"report: {dest / 'report.md'}  {took}".rstrip())
    _print_page(dest / "report.html", index_of(dest))
    return EXIT_OK


def _print_page(page: Path, index: Path | None) -> None:
    print(f"page: {page}" + (f"  (all results: {index})" if index else ""))


def _print_run(run_dir: Path, took: str = "") -> None:
    """A scenario run's table and where its report and page are; the index over results/ brought up to date."""
    from ..analysis.html import index_for
    from ..analysis.startup import print_table
    print_table(run_dir)
    print(f"report: {run_dir / 'report.md'}  {took}".rstrip())
    _print_page(run_dir / "report.html", index_for(run_dir))


def _words(selects: list[str] | None) -> list[str] | None:
    """--select a,b --select c -> [a, b, c] (None: the experiment's default)."""
    words = [w.strip() for s in selects or [] for w in s.split(",") if w.strip()]
    return words or None


def cmd_experiments(args) -> int:
    """`sslab experiments`: every experiment file, or (--markdown) the README's table of them."""
    from ..experiment import experiment_files, experiments_table, load_experiment
    if args.markdown:
        sys.stdout.write(experiments_table())
        return EXIT_OK
    for f in experiment_files():
        e = load_experiment(f)
        s = e.spec
        if e.kind == "matrix":
            how = "a matrix: CCA=, BUF=, RTT= narrow its axes, ITER= its repetitions"
        else:
            names = [p.name for p in e.parts]
            how = (f"repetitions {'/'.join(map(str, e.repetitions()))} (REPS=)"
                   + (f"; SELECT= among {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}"
                      + (f" (default {','.join(s.select)})" if s.select else "") if len(names) > 1 else ""))
        print(f"make {e.target:<17} {s.id:<3} {s.title} ({s.reproduces.paper}, {s.reproduces.figure})\n"
              f"{'':27}{how}; results/{e.output}/, report {s.report_of.name}")
    return EXIT_OK


def cmd_claims(args) -> int:
    """`sslab claims [LEDGER]`: every ledger's counts first (each ledger's page written, so the results
    index shows them all), then @LEDGER's page: every claim's verdict from the archives (analysis.claims)."""
    from .. import papers  # noqa: F401 (the papers' reports and claim extractors, registered)
    from ..analysis.claims import (LEDGER_DIR, LedgerError, counts_line, ledger_page, ledger_record, ledger_rows,
                                   load_ledger)
    from ..records import stamped
    from ..analysis.html import publish
    try:
        asked = load_ledger(args.ledger)
        ledgers = {p.stem: load_ledger(str(p)) for p in sorted(LEDGER_DIR.glob("*.yaml"))}
    except LedgerError as e:
        raise Refused(str(e)) from e
    name = Path(args.ledger).stem
    ledgers[name] = asked                 # a ledger file given by its path is one of them too
    from ..matrix.experiments import own_settings_of
    # Each experiment's own settings, as its file gives them: an archive that departs is a cause run.
    own = {e: own_settings_of(e) for e in sorted({c.evidence.experiment for ledger in ledgers.values()
                                                 for c in ledger.claims if c.evidence and c.evidence.archive})}
    pages, lines = {}, []
    for key, ledger in ledgers.items():
        rows = ledger_rows(ledger, own=own)
        dest = paths.RESULTS_DIR / "claims" / key
        dest.mkdir(parents=True, exist_ok=True)
        md = dest / "ledger.md"
        md.write_text(ledger_page(ledger, rows=rows))
        # The same verdicts as data, for a script (the page's words are for a reader).
        (dest / "ledger.json").write_text(json.dumps(stamped("sslab.summary", ledger_record(ledger, rows)), indent=1) + "\n")
        pages[key] = (md, publish(md))
        lines.append(f"  {counts_line(ledger, rows)}  (results/claims/{key}/)")
    print("Claims, every ledger:\n" + "\n".join(lines) + "\n")
    md, page = pages[name]
    print(md.read_text())
    print(f"ledger: {md}\npage: {page}")
    return EXIT_OK


def cmd_soak(args) -> int:
    """`sslab soak -- ARGS`: the command ARGS run twice, once under faults, and compared (sslab.matrix.soak);
    its record is soak.json and report.html in the soak's directory, listed in results/index.html."""
    from ..matrix.soak import Soaker, calm_trouble, fleet_trouble, summary_lines, write_pages
    if args.command_args[0] not in ("run", "matrix"):
        raise Refused(f"a soak runs a matrix: `run EXPERIMENT ...` or `matrix run MATRIX ...`, not "
                      f"{' '.join(args.command_args[:2])!r}")
    if args.dest is not None and args.dest.exists() and any(args.dest.iterdir()):
        raise Refused(f"{args.dest} is not empty: a soak writes into a new directory (nothing there is overwritten)")
    if (trouble := fleet_trouble(args.command_args)) is not None:
        raise Refused(trouble)
    if args.calm_from is not None and (trouble := calm_trouble(args.calm_from, args.command_args)) is not None:
        raise Refused(trouble)
    dest = args.dest or paths.new_run_dir("soak")
    dest.mkdir(parents=True, exist_ok=True)
    summary = Soaker(dest, args.command_args, args.seed, args.faults,
                     log=lambda m: print(m, flush=True), calm_from=args.calm_from).run()
    page = write_pages(dest, summary)
    print("\n".join(summary_lines(summary)))
    print(f"record: {dest / 'soak.json'}; page: {page}")
    return EXIT_OK if summary["ok"] else EXIT_FAILED


def cmd_docs_snapshot(args) -> int:
    from .docresults import take_snapshot
    dest = take_snapshot(args.report, args.made_by, args.console, args.screenshot)
    print(f"snapshot: {dest} (the site's results page: make docs)")
    return 0


def cmd_trace(args) -> int:
    """`sslab trace generate|show`: rate traces in mahimahi's format (sslab.scenario.traces)."""
    from ..scenario.traces import TraceError, generated_trace, trace_from_text
    from ..scenario.units import parse_rate_mbit, parse_seconds
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
    from ..experiment.plan import plan_for
    from ..scenario import load_scenario
    from ..records import plan_record
    plan = plan_for(load_scenario(args.scenario), "uml", "uml/inf-cpu")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(plan_record(plan), f)
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


def cmd_oracle(args) -> int:
    """`sslab oracle SCENARIO...` (`make oracle`): each scenario with our controls and with the kernel's, in
    two boots, compared ACK by ACK and packet by packet.  Exit 1 when a flow differs."""
    from ..analysis.oracle import difference_text
    from ..experiment.oracle import run_oracle_here
    top, rows = run_oracle_here(args.scenarios, args.jobs)
    for name, c in rows:
        print(f"{name} {c.run} port {c.port}: {c.cc_ours} / {c.cc_kernel}: {c.acks} ACKs, {c.packets} packets; "
              f"first difference: {difference_text(c)}")
    failing = sum(not c.passes for _, c in rows)
    print(f"report: {top / 'report.md'} ({len(rows)} flows, {failing} differing)")
    return EXIT_FAILED if failing else EXIT_OK


def cmd_same_bytes(args) -> int:
    """`sslab same-bytes BEFORE AFTER`: two runs of one scenario (before and after a change that should
    move nothing: a kernel patch, a backend, a refactoring), every flow compared ACK by ACK and packet by
    packet; or two results trees, every run of one paired with the other's (sslab.analysis.samebytes).
    Exit 1 when a flow or a file differs, or a run has no pair."""
    from ..analysis.oracle import UnpairedRuns, compare_runs, difference_text, oracle_table
    from ..analysis.samebytes import Unpairable, compare_trees, is_run_dir
    before, after = Path(args.before), Path(args.after)
    if not is_run_dir(before) and not is_run_dir(after) and before.is_dir() and after.is_dir():
        try:
            result = compare_trees(before, after)
        except Unpairable as e:
            raise Refused(str(e)) from None
        if not result.pairs and not result.unpaired:
            raise Refused(f"no finished run in {before} nor in {after}")
        print("\n".join(result.lines()))
        return EXIT_OK if result.same else EXIT_FAILED
    for side in (args.before, args.after):
        if not is_run_dir(Path(side)):
            raise Refused(f"{side} is not a finished run directory (it has no job/out/runs.json), and the "
                          f"two are not both results trees")
    try:
        rows = compare_runs(Path(args.before), Path(args.after))
    except UnpairedRuns as e:
        raise Refused(f"{e}: give the run directory with fewer runs (repetitions) first") from None
    if not rows:
        raise Refused(f"no flow to compare in {args.before}")
    print(oracle_table([(Path(args.after).name, c) for c in rows], sides=("before", "after")))
    differing = [c for c in rows if not c.identical]
    for c in differing:
        print(f"{c.run} port {c.port}: {difference_text(c, 'after')}")
    print(f"{len(rows)} flows, {len(rows) - len(differing)} the same bytes, {len(differing)} differing")
    return EXIT_FAILED if differing else EXIT_OK


def cmd_queue_check(args) -> int:
    """`sslab queue-check RUN_DIR...`: each run's queue peak, drops and goodput per bin as its report
    has them, against the capture of every interface of the bottleneck's router (sslab.analysis.
    queuecheck).  Exit 1 when one differs; 2 for a directory without such a capture."""
    from ..analysis.queuecheck import check_runs, lines
    checked = []
    for d in args.run_dirs:
        if not (Path(d) / "job" / "out" / "runs.json").is_file():
            raise Refused(f"{d} is not a finished run directory (it has no job/out/runs.json)")
        try:
            checked += [(f"{Path(d).name} {tag}", c) for tag, c in check_runs(Path(d))]
        except ValueError as e:
            raise Refused(str(e)) from None
    for label, c in checked:
        print("\n".join(lines(c, label)))
    bad = [label for label, c in checked if not c.agrees]
    print(f"{len(checked)} run(s), {len(checked) - len(bad)} agreeing with the router's capture, {len(bad)} not")
    return EXIT_FAILED if bad else EXIT_OK


def cmd_verify(args) -> int:
    """`sslab verify ARTIFACT` (`make verify ARTIFACT= SAMPLE=`): a sample of a matrix's cells run again,
    each compared with its archive byte for byte; exit 1 when one differs, 2 when this host cannot
    rerun them (another image or traffic code, a real clock), before anything runs."""
    from ..analysis.html import publish
    from ..matrix import MatrixError
    from ..matrix.verify import new_verify_dir, report_lines, sample, verdict_record, verifiable, verify_cells
    from ..substrate.image import ensure_image
    artifact = Path(args.artifact)
    if not (artifact / "plans").is_dir():
        raise Refused(f"{artifact}: not a matrix's results directory (it has no plans/)")
    try:
        plan, cells = verifiable(artifact, ensure_image().manifest()["image_hash"])
    except MatrixError as e:
        raise Refused(str(e)) from None
    chosen = sample(cells, args.sample)
    substrate = ready(make_substrate("uml"))
    dest = new_verify_dir()
    dest.mkdir(parents=True)
    verdicts = verify_cells(plan, chosen, substrate, dest)
    (dest / "report.md").write_text("\n".join(report_lines(artifact, plan, verdicts, len(cells))))
    (dest / "verify.json").write_text(json.dumps(verdict_record(artifact, plan, verdicts, len(cells)), indent=1))
    paths.point_latest(dest)
    print((dest / "report.md").read_text())
    print(f"report: {dest / 'report.md'}\npage: {publish(dest / 'report.md', [dest / v.cell.key for v in verdicts])}")
    return EXIT_OK if all(v.same for v in verdicts) else EXIT_FAILED


def cmd_compare(args) -> int:
    """`sslab compare A B` (`make compare A= B=`): each flow group's metrics, B against A, into a new
    results/compare/<stamp>/ (report, page, compare.csv); refused (exit 2) before anything is written
    when a side has no flows to read."""
    from ..analysis.compare import CompareError, write_compare
    from ..analysis.html import publish
    from ..analysis.tidy import read_rows
    sides = []
    for name in (args.a, args.b):
        try:
            sides.append(read_rows(name))
        except FileNotFoundError as e:
            raise Refused(str(e)) from None
    dest = paths.RESULTS_DIR / "compare" / paths.stamp()
    try:
        with paths.filled_whole(dest) as part:
            write_compare(args.a, sides[0], args.b, sides[1], part)
    except CompareError as e:
        raise Refused(str(e)) from None
    paths.point_latest(dest)
    print((dest / "report.md").read_text())
    print(f"report: {dest / 'report.md'}\npage: {publish(dest / 'report.md')}")
    return EXIT_OK  # a comparison reports; a difference is its finding, not the command's failure


def cmd_suss_loop(args) -> int:
    """`sslab suss-loop` (`make suss-loop`): SUSS 2024 in closed loop on its authors' path, each round's
    decisions beside their log's with the targets; SUSS 2025's beside.  Exit 1 when a target is missed."""
    from ..analysis.sussloop import SCENARIO, write_conformance
    from ..experiment import run_scenario
    text, ok = write_conformance(run_scenario(SCENARIO, "suss-loop", ready(make_substrate("uml"))))
    print(text)
    return EXIT_OK if ok else EXIT_FAILED


def cmd_kernel_trace(args) -> int:
    """`sslab kernel-trace FILE`: a run's kernel trace, a line an event as the kernel prints it (its
    time in seconds, its name, its fields), from the ring buffer's pages or an older archive's text."""
    from isal import igzip

    from ..analysis.ringbuf import is_ringbuf
    from ..analysis.traces import flow_records, read_trace
    path = Path(args.file)
    if not path.is_file():
        raise Refused(f"{path}: no such file (a run's trace is runs/<tag>/flow.trace.rb.gz)")
    try:
        if not is_ringbuf(path):
            with (igzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as f:
                if not f.read(64).startswith(b"# tracer:"):
                    raise ValueError("neither ring-buffer pages nor ftrace's text")
        records = read_trace(path)
    except (ValueError, OSError, EOFError) as e:
        raise Refused(f"{path}: not a kernel trace of a run ({e})") from None
    if args.port is not None:
        records = flow_records(records, args.port)
    if args.event:
        records = [r for r in records if r.event in args.event]
    try:
        for r in records:
            print(f"{r.ts:12.6f}: {r.event}: " + " ".join(f"{k}={v}" for k, v in r.fields.items()))
    except BrokenPipeError:          # `| head`
        sys.stdout = None
    return EXIT_OK


def cmd_captures(args) -> int:
    """`sslab captures DIR...`: every run's flows under DIR as our parser and tshark read them.

    Runs checked when they were made show their record; others (a matrix's cells outside its
    sample, runs from before the check) are read now, printed and not written.  Exit 1 when any
    flow differs."""
    from ..analysis.capturecheck import FLOWS_TABLE_HEAD, check_capture, flows_table, tshark_version
    runs = [(p, p.parent.relative_to(d)) for d in map(Path, args.dirs)
            for p in sorted(d.rglob("run.json")) if p.parent.parent.name == "runs"]
    if not runs:
        raise Refused(f"no run under {', '.join(args.dirs)} (a run's record is .../runs/<tag>/run.json)")
    if tshark_version() is None:
        raise Refused("tshark is not installed (make deps installs it)")
    lines, differ, now = list(FLOWS_TABLE_HEAD), 0, 0
    for path, label in runs:
        run = read_record(path, "sslab.run")
        if not run.get("pcap"):
            continue
        check = run.get("capture_check")
        if not check or check.get("agree") is None:
            check = check_capture(path.parent / run["pcap"], [f["port"] for f in run["flows"]])
            now += 1
        differ += not check["agree"]
        lines += flows_table(str(label), check)
    print("\n".join(lines))
    print(f"\n{len(runs)} runs, {differ} with a flow on which tshark {tshark_version()} and our parser differ; "
          f"{now} read now (not recorded)")
    return EXIT_FAILED if differ else EXIT_OK


def cmd_report(args) -> int:
    from .. import papers  # noqa: F401 (the papers' reports and claim extractors, registered)
    from ..analysis.startup import rebuild_report
    if not (Path(args.run_dir) / "meta.json").is_file():
        raise Refused(f"{args.run_dir} is not a run directory (it has no meta.json)")
    from ..analysis.html import index_for
    dest = rebuild_report(Path(args.run_dir))
    print(f"rebuilt: {dest / 'report.md'}")
    _print_page(dest / "report.html", index_for(dest))
    return EXIT_OK


def cmd_matrix(args) -> int:
    if args.action == "run":
        from ..matrix.experiments import run_matrix_file
        return run_matrix_file(args.name, _request(args, args.name))
    if args.action == "run-cells":
        from ..matrix.runner import run_host_cells
        counts = run_host_cells(Path(args.matrix_dir), Path(args.plan), args.host,
                                args.keys.split(",") if args.keys else None,
                                args.redo.split(",") if args.redo else [], _request(args, ""),
                                Path(args.pack_to) if args.pack_to else None, log=lambda m: print(m, flush=True))
        print(json.dumps(counts))
        return EXIT_FAILED if counts["failed"] else EXIT_OK
    if args.action == "pack":
        from ..matrix.transfer import pack_cells
        plan = read_matrix_plan(Path(args.plan))
        n = pack_cells(Path(args.matrix_dir), plan, args.host, Path(args.out),
                       args.keys.split(",") if args.keys else None)
        print(json.dumps({"packed_cells": n}))
        return EXIT_OK
    if args.action == "merge":
        from ..matrix.transfer import merge_cells
        if not Path(args.tar).is_file():
            raise Refused(f"{args.tar}: no such tar of cells")
        print(json.dumps(merge_cells(Path(args.matrix_dir), Path(args.tar))))
        return EXIT_OK
    if args.action == "stop":
        from ..matrix.stopping import stop_runner
        print(json.dumps(stop_runner(Path(args.matrix_dir), args.host)))
        return EXIT_OK
    if args.action == "report":
        from .. import papers  # noqa: F401 (the papers' reports and claim extractors, registered)
        from ..analysis.matrix_report import console_ending, write_matrix_report
        dest = write_matrix_report(Path(args.matrix_dir))
        print(console_ending(dest))
        return EXIT_OK
    if args.action == "compare":
        from ..analysis.archive import ArchiveError
        from ..papers.suss.table1_compare import compare
        for d in (args.base, args.other):
            if not (Path(d) / "plans").is_dir():
                raise Refused(f"{d}: not a matrix directory (no plans/)")
        try:
            table, _ = compare(Path(args.base), Path(args.other))
        except ArchiveError as e:
            raise Refused(str(e)) from e
        print(table)
        return EXIT_OK
    if args.action == "independence":
        from ..analysis.archive import ArchiveError
        from ..papers.suss.independence import report_md
        if not (Path(args.matrix_dir) / "plans").is_dir():
            raise Refused(f"{args.matrix_dir}: not a matrix directory (no plans/)")
        if args.group < 2:
            raise Refused(f"--group {args.group}: at least 2 repetitions a group")
        try:
            print(report_md(Path(args.matrix_dir), args.group))
        except ArchiveError as e:
            raise Refused(str(e)) from e
        return EXIT_OK
    if args.action == "rekey":
        from ..matrix.rekey import rekey
        results = Path(args.results) if args.results else paths.RESULTS_DIR
        if not results.is_dir():
            raise Refused(f"{results}: no such results tree")
        done = rekey(results, args.dry_run)
        for link in done.linked:
            print(f"{'would link' if args.dry_run else 'linked'} {link}")
        print(done.summary())
        return EXIT_OK
    raise Refused(f"unknown matrix action {args.action}")
