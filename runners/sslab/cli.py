"""Command line: `python -m sslab ...` (the Makefile's targets call this)."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from pathlib import Path

from . import paths


def new_run_dir(kind: str) -> Path:
    """A fresh results directory results/<kind>/<run-id>; never an existing one."""
    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(2)
    d = paths.RESULTS_DIR / kind / run_id
    d.mkdir(parents=True, exist_ok=False)
    latest = paths.RESULTS_DIR / kind / "latest"
    if latest.is_symlink() or not latest.exists():
        tmp = latest.with_name(".latest.tmp")
        if tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(run_id)
        tmp.replace(latest)
    return d


def make_substrate(name: str, accel: str):
    if name == "native":
        from .native import NativeHost
        return NativeHost()
    if name == "vm":
        from .image import ensure_image
        from .vm import TestbedVM, VMConfig
        return TestbedVM(ensure_image(), VMConfig(accel=accel))
    raise SystemExit(f"unknown substrate {name!r}: use vm or native")


def cmd_image(args) -> int:
    from .image import ensure_image, repin
    if args.action == "repin":
        pin = repin()
        print(json.dumps(pin.__dict__, indent=2))
        return 0
    t0 = time.monotonic()
    image = ensure_image()
    m = image.manifest()
    print(json.dumps({"image": str(image.root), "image_hash": m["image_hash"], "kernel": m["kernel"],
                      "module": m["module"], "seconds": round(time.monotonic() - t0, 1)}, indent=2))
    return 0


def cmd_vm_check(args) -> int:
    from .job import JobSpec
    substrate = make_substrate(args.substrate, args.accel)
    run_dir = new_run_dir("vm-check")
    job = JobSpec(argv=["python3", "-m", "sslab.guest.vmcheck"], timeout_s=args.timeout, name="vm-check")
    t0 = time.monotonic()
    res = substrate.run(job, run_dir / "job")
    total = time.monotonic() - t0
    report_path = res.out_dir / "vmcheck.json"
    if not report_path.exists():
        print(f"error: the check left no report (exit {res.exit_code}, timed out: {res.timed_out});"
              f" see {res.out_dir}", file=sys.stderr)
        print(res.stderr()[-2000:], file=sys.stderr)
        return 1
    guest = json.loads(report_path.read_text())
    out = {
        "substrate": res.substrate,
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
        "job_exit_code": res.exit_code,
        "run_dir": str(run_dir),
    }
    if res.substrate == "vm":
        out["accel_probe"] = substrate.accel_probe
        m = substrate.image.manifest()
        out["image"] = {"hash": m["image_hash"], "kernel_package": m["kernel"]["package"],
                        "kernel_version": m["kernel"]["version"]}
    (run_dir / "vm-check.json").write_text(json.dumps(out, indent=2, sort_keys=True))
    print(json.dumps(out, sort_keys=True))
    return 0 if res.ok and all(guest["checks"].values()) else 1


def cmd_run(args) -> int:
    from .job import JobSpec
    substrate = make_substrate(args.substrate, args.accel)
    if not args.argv:
        raise SystemExit("give the command to run after --")
    run_dir = new_run_dir("jobs")
    res = substrate.run(JobSpec(argv=args.argv, timeout_s=args.timeout, name="adhoc"), run_dir / "job")
    sys.stdout.write(res.stdout())
    sys.stderr.write(res.stderr())
    print(json.dumps({"exit_code": res.exit_code, "timed_out": res.timed_out, "substrate": res.substrate,
                      "accelerator": res.accelerator, "run_dir": str(run_dir)}), file=sys.stderr)
    return 124 if res.timed_out else (res.exit_code if isinstance(res.exit_code, int) else 1)


def cmd_startup(args) -> int:
    from .experiment import print_table, run_scenario
    from .scenario import load_scenario
    load_scenario(args.scenario)  # refuse a bad file before building or booting anything
    substrate = make_substrate(args.substrate, args.accel)
    t0 = time.monotonic()
    run_dir = run_scenario(Path(args.scenario), args.kind, substrate, reps=args.reps)
    print_table(run_dir)
    print(f"report: {run_dir / 'report.md'}  ({time.monotonic() - t0:.0f} s)")
    return 0


def cmd_report(args) -> int:
    from .experiment import rebuild_report
    dest = rebuild_report(Path(args.run_dir))
    print(f"rebuilt: {dest / 'report.md'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="sslab")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("image", help="build (or repin) the testbed image")
    pi.add_argument("action", choices=["build", "repin"])
    pi.set_defaults(func=cmd_image)
    for name, func, timeout in (("vm-check", cmd_vm_check, 300.0), ("run", cmd_run, 600.0)):
        sp = sub.add_parser(name)
        sp.add_argument("--substrate", default="vm", choices=["vm", "native"])
        sp.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"])
        sp.add_argument("--timeout", type=float, default=timeout, help="job timeout in seconds")
        if name == "run":
            sp.add_argument("argv", nargs=argparse.REMAINDER)
        sp.set_defaults(func=func)
    ps = sub.add_parser("startup", help="run a scenario (E1 by default) and write its report")
    ps.add_argument("--scenario", default=str(paths.REPO_ROOT / "topologies" / "e1-startup.yaml"))
    ps.add_argument("--reps", type=int, help="repetitions (default: the scenario's)")
    ps.add_argument("--kind", default="startup", help="results/<kind>/ directory")
    ps.add_argument("--substrate", default="vm", choices=["vm", "native"])
    ps.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"])
    ps.set_defaults(func=cmd_startup)
    pr = sub.add_parser("report", help="rebuild a run's tables and plots from its archive")
    pr.add_argument("run_dir")
    pr.set_defaults(func=cmd_report)
    args = p.parse_args(argv)
    if getattr(args, "argv", None) and args.argv[0] == "--":
        args.argv = args.argv[1:]
    from .image import ImageError
    from .job import JobError
    from .mirrors import MirrorError
    from .native import NativeUnavailable
    from .scenario import ScenarioError
    from .vm import VMError
    try:
        return args.func(args)
    except (ScenarioError, NativeUnavailable) as e:
        # Refused before anything started.
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (ImageError, MirrorError, VMError, JobError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
