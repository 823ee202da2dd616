"""The preflight's reading of a console that shows why a substrate did not boot, and its message."""

from sslab.substrate.hostfacts import cpu_info, describe
from sslab.substrate.preflight import CAUSES, diagnose, unusable_message

#: The console of every boot of UML 6.1 (Debian's, fixed 2696-byte FP buffer) on an AMX host.
AMX_CONSOLE = """\
Checking environment variables for a tempdir...none found
Checking if /dev/shm is on tmpfs...OK
userspace - ptrace set fp regs failed, errno = 14
Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b
CPU: 0 PID: 1 Comm: sslab-init Not tainted 6.1.192-sslab-uml #1
Stack:
 [<6058af09>] panic+0x1a6/0x386
"""

AMX_HOST = {"cpu_model": "Intel(R) Xeon(R) Platinum 8481C", "cpu_flags": ["xsave", "avx", "avx2", "avx512f",
                                                                          "amx_tile"],
            "amx": True, "xstate_bytes": 11008, "xstate_from": "ptrace GETREGSET NT_X86_XSTATE",
            "kernel": "6.18.44", "machine": "x86_64", "cores": 2}


class Manifest:
    """What unusable_message reads of a substrate: its name, clock and image manifest."""

    name, clock = "uml", "uml/inf-cpu"

    class image:
        @staticmethod
        def manifest():
            return {"image_hash": "c60250aa4355f761", "uml": {"release": "6.1.192-sslab-uml",
                                                             "patches": {"0001-a.patch": "x", "0002-b.patch": "y"}}}


def test_the_amx_failure_is_recognised_with_its_lines():
    cause, lines = diagnose(AMX_CONSOLE)
    assert cause is CAUSES[0]
    assert lines == ["userspace - ptrace set fp regs failed, errno = 14",
                     "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b"]


def test_our_kernels_own_fp_message_is_recognised():
    cause, lines = diagnose("slowstart-lab: SSLAB_UML_FP_AREA=abc: not a multiple of 8 up to 1048576\n")
    assert cause is CAUSES[1] and lines == ["slowstart-lab: SSLAB_UML_FP_AREA=abc: not a multiple of 8 up to 1048576"]


def test_an_unknown_panic_shows_the_lines_before_it_and_no_cause():
    console = "a\nb\nc\nd\nsomething odd happened\nKernel panic - not syncing: Out of memory and no killable processes\ne\n"
    cause, lines = diagnose(console)
    assert cause is None
    assert lines == ["c", "d", "something odd happened", "Kernel panic - not syncing: Out of memory and no killable processes"]


def test_an_empty_console_has_no_cause_and_no_lines():
    assert diagnose("") == (None, [])


def test_the_message_names_cause_console_host_and_what_to_do(tmp_path):
    console = tmp_path / "console.log"
    console.write_text(AMX_CONSOLE)
    msg = unusable_message(Manifest(), AMX_HOST, "UML exited (0) during phase 'boot'", console)
    assert msg.startswith("the uml substrate (uml/inf-cpu) does not boot on this host; no cell or run was started.")
    assert "XSAVE area" in msg and "errno = 14" in msg and str(console) in msg
    assert "Intel(R) Xeon(R) Platinum 8481C" in msg and "XSAVE area 11008 bytes" in msg and "amx_tile" in msg
    assert "`make image`" in msg and "SUBSTRATE=vm" in msg
    assert "0001-a.patch, 0002-b.patch" in msg


def test_cpu_info_reads_the_first_cpus_model_and_flags(tmp_path):
    f = tmp_path / "cpuinfo"
    f.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu xsave avx avx2 avx512f\n\n"
                 "processor\t: 1\nmodel name\t: other\nflags\t\t: fpu\n")
    model, flags = cpu_info(str(f))
    assert model == "AMD EPYC" and flags == {"fpu", "xsave", "avx", "avx2", "avx512f"}
    assert cpu_info(str(tmp_path / "missing")) == ("unknown", set())


def test_describe_says_when_the_area_is_unknown():
    facts = {**AMX_HOST, "xstate_bytes": None, "xstate_from": "ptrace GETREGSET NT_X86_XSTATE failed: errno 1"}
    assert "XSAVE area unknown (ptrace GETREGSET NT_X86_XSTATE failed: errno 1)" in describe(facts)


def test_a_root_mount_panic_is_not_called_a_ptrace_problem():
    """UML 7.3's console on a boot whose hostfs root did not mount (seen here, 25 Nov 2026)."""
    console = ("Failed to initialize ubd device 0 :Couldn't determine size of device's file\n"
               "epollctl add err fd 10, Operation not permitted\n"
               "VFS: Cannot open root device \"/dev/root\" or unknown-block(0,0): error -9\n"
               "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\n")
    cause, lines = diagnose(console)
    assert cause is not None and "could not mount the image's root directory" in cause.meaning
    assert any("Unable to mount root fs" in ln for ln in lines)
    ptrace = next(c for c in CAUSES if "ptrace" in c.meaning)
    assert diagnose("check_ptrace : child exited with status 1\n")[0] is ptrace


def test_the_probes_fp_sizes_are_read_apart_from_its_list_of_controls():
    """The probe prints the two sizes, one a line, then the controls the booted kernel lists (a
    control's name may hold digits: reno_iw20)."""
    from sslab.substrate.preflight import fp_sizes
    assert fp_sizes("2432\n2432\nccas: reno cubic tcp2 reno_iw20\n") == [2432, 2432]
    assert fp_sizes("ccas: reno cubic\n") == []


def _with_uml(uml: dict):
    class Sub(Manifest):
        class image:
            @staticmethod
            def manifest():
                return {"image_hash": "c60250aa4355f761", "uml": uml}
    return Sub()


def test_what_to_do_knows_which_kernels_already_size_their_fp_state(tmp_path):
    """6.1 without our 0003: rebuild; 6.12 with its port (in a sub-directory): report it; 7.3, which
    sizes it itself: report it, naming the source."""
    console = tmp_path / "console.log"
    console.write_text(AMX_CONSOLE)
    ported = _with_uml({"release": "6.12.117-sslab-uml", "source": {"package": "linux-source-6.12"},
                        "patches": {"0001-a.patch": "x", "6.12/0003-FP-state-sized-by-the-host.patch": "z"}})
    msg = unusable_message(ported, AMX_HOST, "UML exited (0) during phase 'boot'", console)
    assert "already sizes its FP state from the host (6.12/0003-FP-state-sized-by-the-host.patch)" in msg
    own = _with_uml({"release": "7.3.4-sslab-uml", "source": {"package": "linux-source-7.3"},
                     "patches": {"0001-a.patch": "x"}})
    msg = unusable_message(own, AMX_HOST, "UML exited (0) during phase 'boot'", console)
    assert "(linux-source-7.3) sizes its FP state from the host itself" in msg and "`make image`" not in msg
    old = _with_uml({"release": "6.1.192-sslab-uml", "source": {"package": "linux-source-6.1"},
                     "patches": {"0001-a.patch": "x"}})
    assert "`make image`" in unusable_message(old, AMX_HOST, "UML exited (0) during phase 'boot'", console)
