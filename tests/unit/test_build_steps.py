"""A build step's output goes to the build log, not the console; the console hears of a long step and
its time; a failed step's error shows the log's end (sslab.substrate.buildtools.run)."""

import pytest

from sslab.substrate import buildtools
from sslab.substrate.buildtools import ImageError


@pytest.fixture
def logged(tmp_path, monkeypatch):
    monkeypatch.setattr(buildtools, "_step_log", tmp_path / "build.log")
    return tmp_path / "build.log"


def test_a_steps_output_goes_to_the_log_and_not_the_console(logged, capsys):
    buildtools.run(["sh", "-c", "echo compiling; echo warning >&2"])
    out = capsys.readouterr()
    assert "compiling" not in out.out + out.err and "warning" not in out.out + out.err
    assert logged.read_text() == "\n$ sh -c echo compiling; echo warning >&2\ncompiling\nwarning\n"


def test_a_long_step_says_so_and_its_time(logged, capsys, monkeypatch):
    monkeypatch.setattr(buildtools, "HEARTBEAT_S", 0.2)
    buildtools.run(["sh", "-c", "sleep 0.5"])
    lines = capsys.readouterr().out.splitlines()
    assert sum("... sh sleep 0.5: " in ln and "min so far" in ln for ln in lines) >= 1, lines
    assert lines[-1] == "[image]   sh sleep 0.5: took 0.0 min", lines


def test_a_failed_step_shows_the_end_of_its_own_output(logged):
    with pytest.raises(ImageError) as e:
        buildtools.run(["sh", "-c", "echo before; echo 'No space left on device' >&2; exit 3"])
    assert "command failed (3)" in str(e.value) and str(logged) in str(e.value)
    assert "No space left on device" in str(e.value) and "No space left on device" in e.value.output
    # Only this step's: an earlier step's output is not its error.
    buildtools.run(["sh", "-c", "echo earlier-step"])
    with pytest.raises(ImageError) as e:
        buildtools.run(["sh", "-c", "exit 1"])
    assert "earlier-step" not in e.value.output


def test_a_step_whose_output_the_caller_takes_is_not_logged(logged):
    res = buildtools.run(["sh", "-c", "echo mine"], capture_output=True, text=True)
    assert res.stdout == "mine\n" and not logged.exists()


def test_a_steps_name_inside_a_chroot_is_the_command_there():
    assert buildtools._what(["chroot", "/x/rootfs", "make", "-s", "-C", "/src", "ARCH=um"]) == "make /src ARCH=um"
    assert buildtools._what(["/usr/sbin/debootstrap", "--variant=minbase", "bookworm"]) == "debootstrap bookworm"


def test_the_build_log_is_made_where_SSLAB_LOGS_says_and_named_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(buildtools, "_step_log", None)
    monkeypatch.setenv("SSLAB_LOGS", str(tmp_path / "logs"))
    buildtools.run(["true"])
    buildtools.run(["true"])
    [made] = list((tmp_path / "logs").glob("build-*.log"))
    assert capsys.readouterr().out.count(f"each build step's own output: {made}") == 1


STUBBORN_STEP = ("import os, signal, sys, time\n"
                 "signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                 "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(30)\n")


@pytest.mark.parametrize("how", ["logged", "captured", "on the console"])
def test_an_interrupted_step_is_gone_before_the_clean_up_starts(tmp_path, monkeypatch, how):
    """A Ctrl-C or SIGTERM (Terminated, a KeyboardInterrupt) in the middle of a step: the step is killed
    and reaped before the exception reaches the build's clean-up, so it cannot write into a directory
    being removed.  The step here ignores SIGTERM and SIGINT and outlives Popen's own quarter second."""
    import os
    import signal
    import sys
    if how == "logged":
        monkeypatch.setattr(buildtools, "_step_log", tmp_path / "build.log")
    elif how == "on the console":
        monkeypatch.setattr(buildtools, "step_log", lambda: (_ for _ in ()).throw(OSError("no log")))
    pid_file = tmp_path / "pid"

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        with pytest.raises(KeyboardInterrupt):
            buildtools.run([sys.executable, "-c", STUBBORN_STEP, str(pid_file)],
                           **({"capture_output": True} if how == "captured" else {}))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    pid = int(pid_file.read_text())
    assert not os.path.exists(f"/proc/{pid}"), f"the step ({pid}) outlived the interrupt"
