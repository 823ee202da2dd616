"""The Docker stack's Go programs run with one scheduler slot in the testbed (sslab.guest.clab):
the wrappers override what a parent puts in their environment, and gomaxprocs_of reads back what
running processes got; where the guest has no sudo, containerlab gets a stand-in."""

import os
import subprocess

import pytest

from sslab.guest.clab import GO_WRAPPED, gomaxprocs_of, write_go_wrappers, write_sudo_standin


def test_a_wrapper_overrides_the_parents_gomaxprocs_and_passes_the_arguments(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    for name in GO_WRAPPED:  # stand-ins that say what they were started with
        prog = real / name
        prog.write_text('#!/bin/sh\necho "$0 GOMAXPROCS=$GOMAXPROCS args=$*"\n')
        prog.chmod(0o755)
    wrappers = write_go_wrappers(tmp_path / "bin", str(real))
    for name in GO_WRAPPED:
        # as containerd-shim-runc-v2 starts runc: its own GOMAXPROCS=4 appended to the environment
        out = subprocess.run([str(wrappers / name), "init", "--x y"], capture_output=True, text=True, check=True,
                             env={**os.environ, "GOMAXPROCS": "4"}).stdout
        assert out == f"{real / name} GOMAXPROCS=1 args=init --x y\n"


def test_a_program_missing_from_path_is_an_error_not_a_dangling_wrapper(tmp_path):
    with pytest.raises(RuntimeError, match="containerd is not on PATH"):
        write_go_wrappers(tmp_path / "bin", str(tmp_path / "empty"))


def fake_proc(root, pid: int, comm: str, env: list[bytes]):
    d = root / str(pid)
    d.mkdir()
    (d / "comm").write_text(comm + "\n")
    (d / "environ").write_bytes(b"\0".join(env) + b"\0")


def test_gomaxprocs_of_reads_each_programs_environment_by_its_kernel_name(tmp_path):
    fake_proc(tmp_path, 10, "dockerd", [b"PATH=/bin", b"GOMAXPROCS=1"])
    fake_proc(tmp_path, 11, "containerd", [b"GOMAXPROCS=1"])
    fake_proc(tmp_path, 12, "containerd-shim", [b"GOMAXPROCS=1", b"TTRPC_ADDRESS=x"])   # -runc-v2, cut at 15
    fake_proc(tmp_path, 13, "containerd-shim", [b"GOMAXPROCS=2"])
    fake_proc(tmp_path, 14, "runc", [b"HOME=/"])
    fake_proc(tmp_path, 15, "python3", [b"GOMAXPROCS=7"])
    (tmp_path / "self").mkdir()   # not a process directory
    got = gomaxprocs_of(("dockerd", "containerd", "containerd-shim", "runc"), tmp_path)
    assert got == {"containerd": ["1"], "containerd-shim": ["1", "2"], "dockerd": ["1"], "runc": ["unset"]}


@pytest.mark.skipif(os.geteuid() != 0, reason="the stand-in is written only for root")
def test_sudo_standin_runs_its_command_as_is_where_there_is_no_sudo(tmp_path):
    standin = write_sudo_standin(tmp_path, str(tmp_path / "empty"))
    assert standin == tmp_path / "sudo"
    out = subprocess.run([str(standin), "sh", "-c", 'echo "$0 $1"', "ovs-vsctl", "list-br"],
                         capture_output=True, text=True, check=True).stdout
    assert out == "ovs-vsctl list-br\n"
    # a real sudo on the path is left alone
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "sudo").write_text("#!/bin/sh\n")
    (tmp_path / "real" / "sudo").chmod(0o755)
    assert write_sudo_standin(tmp_path / "other", str(tmp_path / "real")) is None
