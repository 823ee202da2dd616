"""Helpers shared by the integration tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sslab.paths import REPO_ROOT


#: The smoke matrix (CUBIC at two RTTs; its BBRv2 column is unavailable on Debian's kernel): three
#: repetitions, a boot each, six cells: enough for every host of a fleet (or task of an array) to run
#: some and to lose one mid-run.
SMOKE_ARGS = ["matrix", "run", "smoke", "--iter", "3", "--boot-share", "1"]
SMOKE_MATRIX = Path("smoke") / "all"


def sslab(args: list[str], results: Path, timeout: float = 1800,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m sslab ARGS` from the repository, writing its results under @results (@env: more
    of the environment, e.g. SSLAB_MODULES)."""
    env = {**os.environ, "SSLAB_RESULTS": str(results), **(env or {})}
    return subprocess.run([sys.executable, "-m", "sslab", *args], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=env, timeout=timeout)


def startup_runs(scenario: Path, results: Path, timeout: float = 900) -> list[tuple[Path, dict]]:
    """`sslab startup --scenario @scenario` into @results: each run's directory and record, in the
    run's order (the run must succeed)."""
    import json

    from sslab.records import read_runs_index
    res = sslab(["startup", "--scenario", str(scenario)], results, timeout=timeout)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (results / "startup" / "latest").resolve()
    out = []
    for entry in read_runs_index(run_dir / "job/out/runs.json"):
        tag_dir = run_dir / "job/out/runs" / entry["tag"]
        out.append((tag_dir, json.loads((tag_dir / "run.json").read_text())))
    return out


def one_cubic_flow(tmp_path: Path, name: str, topology: dict, rate: str, buffer_pkts: int,
                   size: str, cc: str = "cubic") -> tuple[Path, dict]:
    """One CUBIC flow (or @cc's) of @size over a one-pair dumbbell (@topology's fields beside its kind
    and pairs) at @rate with @buffer_pkts of buffer and a 40 ms RTT, its capture kept: the run's
    directory and record (startup_runs)."""
    import yaml

    scenario = {
        "name": name, "topology": {"kind": "dumbbell", "pairs": 1, **topology},
        "bottleneck": {"rate": rate, "buffer": {"packets": buffer_pkts}},
        "pairs": [{"rtt": "40ms"}],
        "cases": [{"name": "one", "flows": [{"pair": 1, "cc": cc, "size": size}]}],
        "repetitions": 1, "capture": {"pcap": True, "snaplen": 96, "traces": False},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(scenario))
    [(tag_dir, run)] = startup_runs(path, tmp_path / name)
    return tag_dir, run


def cell_record(cell: Path) -> dict[str, bytes]:
    """What a matrix cell recorded of its runs, by path: the job's plan and everything its guest wrote
    (every run's record, capture and trace, the fidelity check).  Left out, as the host's and not the
    cell's: cell.json (host, wall times), meta.json and job/uml/ (the host's boot timings, paths), and
    manifest.json, which hashes those too."""
    job = cell / "job"
    files = [job / "plan.json", *sorted(p for p in (job / "out").rglob("*") if p.is_file())]
    return {str(p.relative_to(cell)): p.read_bytes() for p in files}


def matrix_records(matrix_dir: Path) -> dict[str, dict[str, bytes]]:
    """cell_record of every finished cell of a matrix directory, by key."""
    cells = matrix_dir / "cells"
    return {d.name: cell_record(d) for d in sorted(cells.iterdir()) if (d / "cell.json").is_file()}


def processes_matching(*patterns: str) -> list[str]:
    """Processes (pid and command line) whose command line holds any of @patterns, this one aside."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if cmd and any(p in cmd for p in patterns):
            out.append(f"{proc.name} {cmd[:200]}")
    return out


def processes_of(root: Path, *patterns: str) -> list[str]:
    """This run's processes: those whose command line names @root, and those whose command line holds
    one of @patterns and which run in a directory under @root (every UML of an image has the same
    command line, and other runs on this machine may be using the image or Ansible meanwhile)."""
    out = []
    for line in processes_matching(str(root), *patterns):
        pid = line.split(" ", 1)[0]
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue  # gone meanwhile
        if str(root) in line or cwd.startswith(str(root)):
            out.append(line)
    return out


#: An AMX host's XSAVE area (PTRACE_GETREGSET of NT_X86_XSTATE there, and CPUID 0xD.0 EBX).
AMX_XSTATE_BYTES = 11008


def larger_fp_area(host_bytes: int) -> int:
    """An FP area the guest can be given (SSLAB_UML_FP_AREA only enlarges) that differs from this
    host's: an AMX host's 11008 bytes where the host has less, else a page more than the host's,
    64-byte aligned as XSAVE wants."""
    if host_bytes < AMX_XSTATE_BYTES:
        return AMX_XSTATE_BYTES
    return (host_bytes + 4096 + 63) // 64 * 64


def sslab_watching(args: list[str], results: Path, env: dict[str, str], watch, every_s: float = 0.05,
                   timeout: float = 1800) -> tuple[subprocess.CompletedProcess, list]:
    """`sslab` as above, calling @watch() every @every_s seconds while it runs; returns the result
    and what each call returned (a truthy value only)."""
    import time
    full_env = {**os.environ, "SSLAB_RESULTS": str(results), **env}
    proc = subprocess.Popen([sys.executable, "-m", "sslab", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO_ROOT, env=full_env)
    seen, deadline = [], time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        got = watch()
        if got:
            seen.append(got)
        time.sleep(every_s)
    out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), seen


def uml_userspace_modes(root: Path) -> dict[str, int | str]:
    """How the processes of the runs under @root (those working in a directory there: a UML, the
    processes it runs its guest's programs in, and the guest's helpers) are confined: {pid: the
    seccomp mode of /proc/PID/status (2: a filter)}, or "traced" for one a UML kernel ptraces."""
    modes: dict[str, int | str] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if not os.readlink(proc / "cwd").startswith(str(root)):
                continue
            status = dict(ln.split(":", 1) for ln in (proc / "status").read_text().splitlines() if ":" in ln)
        except OSError:
            continue  # gone meanwhile, or not ours to read
        modes[proc.name] = ("traced" if status.get("TracerPid", "0").strip() != "0"
                            else int(status.get("Seccomp", "0").strip()))
    return modes


def mounted_tmpfs(where: Path, size: str):
    """A tmpfs of @size mounted at @where (made here) for as long as the test runs (a fixture yields
    from it); the test is skipped without root."""
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]).returncode:
        pytest.skip("mounting a small filesystem needs root")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)])


def experiment(tmp_path, name: str, **fields) -> str:
    """An experiment file named @name in @tmp_path (E1's shape, the startup report), with @fields."""
    import yaml
    data = {"format": "sslab.experiment/1", "id": "E1", "title": name, "what": "a test",
            "reproduces": {"paper": "none", "figure": "none"}, "report": "startup", "time_here": "n/a", **fields}
    f = tmp_path / f"{name}.yaml"
    f.write_text(yaml.safe_dump(data))
    return str(f)


def keyed(results, kind: str) -> dict[str, object]:
    """results/<kind>/keys/: key -> the finished run directory it names (a dot-name is a lock, or where a
    run was started: not a key)."""
    keys = results / kind / "keys"
    return {p.name: p.resolve() for p in keys.iterdir() if p.is_symlink() and not p.name.startswith(".")} \
        if keys.is_dir() else {}
