"""sslab-syscount (images/tools/sslab-syscount.c) on this host, and the tables made of its counts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sslab.analysis.syscount import by_role, cost_table, read_counts, role_of, syscall_names
from sslab.paths import REPO_ROOT
from sslab.substrate.image import SYSCOUNT_PROGRAM, compile_on_host


@pytest.fixture(scope="module")
def syscount(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("no gcc here")   # the bench that uses it builds it with gcc, as does the image
    return compile_on_host(REPO_ROOT / SYSCOUNT_PROGRAM, tmp_path_factory.mktemp("syscount") / "sslab-syscount")


def counted(syscount: Path, tmp_path: Path, *argv: str) -> tuple[int, list[dict]]:
    out = tmp_path / "counts.json"
    res = subprocess.run([str(syscount), "--out", str(out), "--", *argv], capture_output=True, text=True)
    return res.returncode, read_counts(out)


def test_counts_a_programs_system_calls_by_number_and_passes_its_exit_status(syscount, tmp_path):
    code, images = counted(syscount, tmp_path, sys.executable, "-c",
                           "import os\nfor _ in range(1000): os.getppid()\nraise SystemExit(3)")
    assert code == 3
    py = [i for i in images if "getppid" in i["argv"]]
    assert len(py) == 1
    getppid = str({v: k for k, v in syscall_names().items()}["getppid"])
    # Python itself calls it no more than a few times besides the loop's thousand
    assert 1000 <= py[0]["syscalls"][getppid] <= 1005
    assert py[0]["minflt"] > 0


def test_follows_children_threads_and_execs_and_counts_signals(syscount, tmp_path):
    script = ("import os, signal, subprocess, threading\n"
              "signal.signal(signal.SIGUSR1, lambda *a: None)\n"
              "for _ in range(3): os.kill(os.getpid(), signal.SIGUSR1)\n"
              "t = threading.Thread(target=os.getppid); t.start(); t.join()\n"
              "subprocess.run(['sh', '-c', 'exec true'])\n")
    code, images = counted(syscount, tmp_path, sys.executable, "-c", script)
    assert code == 0
    py = next(i for i in images if "SIGUSR1" in i["argv"])
    assert py["signals"] == {"10": 3, "17": 1}  # SIGUSR1 three times, SIGCHLD when sh ended
    assert py["threads"] == 2                  # the main thread and the one it started
    sh = [i for i in images if i["parent"] == py["tgid"]]
    # the child: Python's fork (before its exec), sh, then true in sh's place
    assert [i["comm"] for i in sh][-2:] == ["sh", "true"]
    assert len({i["tgid"] for i in sh}) == 1


def test_a_command_that_cannot_start(syscount, tmp_path):
    code, images = counted(syscount, tmp_path, "/nonexistent/program")
    assert code == 127
    assert len(images) == 1


def test_refuses_a_command_line_without_its_parts(syscount, tmp_path):
    res = subprocess.run([str(syscount), "--out", str(tmp_path / "x.json"), "true"], capture_output=True, text=True)
    assert res.returncode == 2 and "usage" in res.stderr


def test_syscall_names_from_a_header(tmp_path):
    header = tmp_path / "unistd_64.h"
    header.write_text("#ifndef _ASM_UNISTD_64_H\n#define __NR_read 0\n#define __NR_write 1\n"
                      "#define __NR_sendto 44\n#endif\n")
    assert syscall_names(header) == {0: "read", 1: "write", 44: "sendto"}
    assert syscall_names(tmp_path / "missing.h") == {}


@pytest.mark.parametrize("comm, argv, role", [
    ("sslab-transfer", "sslab-transfer serve --port 5201 --cc cubic_suss --bytes 2000000", "sslab-transfer serve"),
    ("sslab-transfer", "sslab-transfer fetch --host 10.0.2.1 --port 5201 --bytes 2000000", "sslab-transfer fetch"),
    ("python3", "python3 -m sslab.guest.scenario_run", "python3 sslab.guest.scenario_run"),
    ("python3", "python3 /usr/local/lib/sslab/agent.py /sslab/job", "python3 agent.py"),
    ("ip", "ip netns exec c1 sslab-transfer fetch", "ip netns exec"),
    ("tc", "tc -n r1 -s -j -batch -", "tc -batch"),
    ("ip", "ip -n c1 link set dev c1-eth0 up", "ip link"),
    ("tc", "tc -s -j qdisc show dev r1-eth1", "tc qdisc"),
    ("tcpdump", "tcpdump -Z root -i r1-eth1 -n -s 96 -w flow.pcap tcp", "tcpdump"),
    ("kworker", "", "kworker"),
])
def test_role_of(comm, argv, role):
    assert role_of(comm, argv) == role


def image(comm: str, argv: str, syscalls: dict, **kw) -> dict:
    return {"tgid": 1, "parent": 0, "threads": 1, "comm": comm, "argv": argv, "minflt": kw.get("minflt", 0),
            "majflt": kw.get("majflt", 0), "nvcsw": 1, "nivcsw": 0, "syscalls": syscalls,
            "signals": kw.get("signals", {})}


def test_by_role_totals_images_and_orders_by_ptrace_stops():
    names = {0: "read", 44: "sendto", 45: "recvfrom"}
    images = [image("sslab-transfer", "sslab-transfer serve --port 1", {"44": 20, "0": 1}, minflt=30),
              image("sslab-transfer", "sslab-transfer serve --port 2", {"44": 20}, minflt=30),
              image("sslab-transfer", "sslab-transfer fetch --port 1", {"45": 150}, minflt=40, signals={"14": 2}),
              image("ping", "ping -c 10 10.0.0.1", {"9": 5})]
    costs = by_role(images, names)
    assert [c.role for c in costs] == ["sslab-transfer fetch", "sslab-transfer serve", "ping"]
    fetch, serve, ping = costs
    assert (serve.images, serve.total_syscalls, serve.syscalls, serve.minflt) == (2, 41, {"sendto": 40, "read": 1}, 60)
    assert serve.ptrace_stops == 41 + 60
    assert fetch.ptrace_stops == 150 + 40 + 2
    assert ping.syscalls == {"nr9": 5}          # a number the table does not name
    table = cost_table(costs, runs=2).splitlines()
    # per run: fetch 75 calls, 20 faults, 1 signal, 96 stops; 192 of 298 in all (64.4 %)
    assert table[2] == "| sslab-transfer fetch | 0.5 | 75 | recvfrom 75 | 20 | 1 | 96 | 64.4% |"
    assert table[-1] == "| all | 2.0 | 98 | | 50 | 1 | 149 | 100% |"


def test_read_counts_refuses_another_record(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"format": "sslab.run/1"}))
    with pytest.raises(ValueError, match="not an sslab-syscount record"):
        read_counts(p)
