"""A researcher's kernel changes (KERNEL_PATCHES=, MODULES=): what is refused, what is hashed, how a
patch that does not apply is reported (with the real `patch` program on a small tree)."""

import shutil
from pathlib import Path

import pytest

from sslab.analysis.conditions import kernel_ran_text, kernel_text
from sslab.ccas import cc_name_refusal, is_cc_name
from sslab.paths import REPO_ROOT
from sslab.scenario import ScenarioError, load_scenario
from sslab.substrate import image as img
from sslab.substrate.kernelchanges import (KernelChanges, KernelChangesRefused, PatchRefused, patch_failure,
                                           researcher_modules)

EXAMPLES = REPO_ROOT / "examples" / "bring-your-own"

#: A five-line source file and two patches of it, by hand: the first changes line 3, the second
#: expects a line 3 the file does not have.
SOURCE = "one\ntwo\nthree = 16;\nfour\nfive\n"
GOOD = ("--- a/src/f.c\n+++ b/src/f.c\n@@ -2,3 +2,3 @@\n two\n-three = 16;\n+three = 1000;\n four\n")
BAD = ("--- a/src/f.c\n+++ b/src/f.c\n@@ -2,3 +2,3 @@\n two\n-three = 32;\n+three = 64;\n four\n")


def write(d: Path, files: dict[str, str]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (d / name).write_text(text)
    return d


def tree(tmp_path: Path) -> Path:
    return write(tmp_path / "linux" / "src", {"f.c": SOURCE}).parent


def test_nothing_set_is_nothing():
    ch = KernelChanges.from_env({})
    assert ch.empty and ch.label() == "" and ch.uml_inputs() == {} and ch.final_inputs() == {}
    assert KernelChanges.from_env({"SSLAB_KERNEL_PATCHES": "", "SSLAB_MODULES": ""}).empty


@pytest.mark.parametrize("what, expect", [
    ({"SSLAB_KERNEL_PATCHES": "/nonexistent/patches"}, "KERNEL_PATCHES=/nonexistent/patches: no such directory"),
    ({"SSLAB_MODULES": "/nonexistent/mod"}, "MODULES=/nonexistent/mod: no such directory"),
])
def test_missing_directories_are_refused(what, expect):
    with pytest.raises(KernelChangesRefused, match=expect):
        KernelChanges.from_env(what)


def test_a_patch_directory_needs_unified_diffs(tmp_path):
    empty = write(tmp_path / "empty", {"README": "no patches here\n"})
    with pytest.raises(KernelChangesRefused, match=r"no \*\.patch or \*\.diff file"):
        KernelChanges.of(empty, None)
    prose = write(tmp_path / "prose", {"0001-x.patch": "just words\n"})
    with pytest.raises(KernelChangesRefused, match="is not a unified diff"):
        KernelChanges.of(prose, None)


def test_a_module_directory_needs_obj_m(tmp_path):
    d = write(tmp_path / "mod", {"Kbuild": "# nothing\n", "m.c": "int x;\n"})
    with pytest.raises(KernelChangesRefused, match="no Kbuild or Makefile naming obj-m"):
        KernelChanges.of(None, d)
    (d / "Makefile").write_text("obj-m += m.o\n")
    assert [p.name for p in KernelChanges.of(None, d).module_files] == ["Kbuild", "Makefile", "m.c"]


def test_patches_are_taken_in_name_order_and_hashed_with_their_place(tmp_path):
    d = write(tmp_path / "series", {"0002-b.diff": GOOD, "0001-a.patch": GOOD, "notes.txt": "x"})
    ch = KernelChanges.of(d, None)
    assert [p.name for p in ch.patches] == ["0001-a.patch", "0002-b.diff"]
    assert list(ch.uml_inputs()) == ["researcher/patches/000-0001-a.patch", "researcher/patches/001-0002-b.diff"]
    before = ch.label()
    assert before.startswith("patches-series-") and len(before) == len("patches-series-") + 8
    (d / "0002-b.diff").write_text(GOOD.replace("1000", "1001"))
    assert KernelChanges.of(d, None).label() != before


def test_module_build_output_is_not_hashed(tmp_path):
    d = write(tmp_path / "mod", {"Kbuild": "obj-m += m.o\n", "m.c": "int x;\n"})
    first = KernelChanges.of(None, d)
    write(d, {"m.o": "object", "m.ko": "module", ".m.o.cmd": "cmd", "m.mod.c": "generated"})
    again = KernelChanges.of(None, d)
    assert again.final_inputs() == first.final_inputs()
    assert list(first.final_inputs()) == ["researcher/modules/Kbuild", "researcher/modules/m.c"]
    (d / "m.c").write_text("int y;\n")
    assert KernelChanges.of(None, d).label() != first.label()


def test_the_default_image_keys_do_not_move():
    """Without changes, the UML and final stages' keys are the ones they were (the default image,
    and every result keyed by it, stays)."""
    images, base = REPO_ROOT / "images", "b" * 64
    assert img.uml_inputs(images, base) == img.uml_inputs(images, base, KernelChanges())
    assert img.final_inputs(base, REPO_ROOT, REPO_ROOT / "kernel", "u" * 64) == \
        img.final_inputs(base, REPO_ROOT, REPO_ROOT / "kernel", "u" * 64, KernelChanges())


def test_changes_move_the_keys_of_their_own_stage(tmp_path):
    images, base = REPO_ROOT / "images", "b" * 64
    patches = KernelChanges.of(write(tmp_path / "p", {"0001.patch": GOOD}), None)
    assert img.uml_inputs(images, base, patches) != img.uml_inputs(images, base)
    mods = KernelChanges.of(None, EXAMPLES / "module")
    assert img.uml_inputs(images, base, mods) == img.uml_inputs(images, base)  # a module needs no new kernel
    assert img.final_inputs(base, REPO_ROOT, REPO_ROOT / "kernel", "u" * 64, mods) != \
        img.final_inputs(base, REPO_ROOT, REPO_ROOT / "kernel", "u" * 64)


def test_a_good_patch_applies(tmp_path):
    t = tree(tmp_path)
    KernelChanges.of(write(tmp_path / "p", {"0001.patch": GOOD}), None).apply_patches(t, log=lambda m: None)
    assert (t / "src" / "f.c").read_text() == SOURCE.replace("16", "1000")


def test_a_failing_hunk_names_the_patch_the_file_and_the_hunk(tmp_path):
    t = tree(tmp_path)
    series = KernelChanges.of(write(tmp_path / "p", {"0001-good.patch": GOOD, "0002-bad.patch": BAD}), None)
    with pytest.raises(PatchRefused) as e:
        series.apply_patches(t, log=lambda m: None)
    msg = str(e.value)
    assert "your patch 2 of 2" in msg and "0002-bad.patch" in msg
    assert "src/f.c: hunk #1 (at line 2) failed" in msg
    assert "-three = 32;" in msg  # the rejected hunk, shown
    assert "nothing was compiled or booted" in msg


def test_the_examples_broken_patch_is_refused_by_its_hunk(tmp_path):
    """The example (docs/own-algorithm.md) of a patch that does not apply, on a file with the line it expects absent."""
    t = write(tmp_path / "linux" / "net" / "ipv4", {
        "tcp_cubic.c": "x\nstatic int hystart_detect __read_mostly = HYSTART_ACK_TRAIN | HYSTART_DELAY;\n"
                       "static int hystart_low_window __read_mostly = 16;\n"
                       "static int hystart_ack_delta_us __read_mostly = 2000;\n"}).parent.parent
    ch = KernelChanges.of(EXAMPLES / "broken-patch", None)
    with pytest.raises(PatchRefused, match=r"net/ipv4/tcp_cubic.c: hunk #1 \(at line 56\) failed"):
        ch.apply_patches(t, log=lambda m: None)
    ok = KernelChanges.of(EXAMPLES / "kernel-patches", None)
    ok.apply_patches(t, log=lambda m: None)  # with fuzz: the hunk's context is there, at another line
    assert "hystart_low_window __read_mostly = 1000;" in (t / "net/ipv4/tcp_cubic.c").read_text()


def test_patch_output_without_hunks_is_quoted(tmp_path):
    msg = patch_failure(Path("/p/0001.patch"), 1, 1, "can't find file to patch at input line 3\nNo file to patch.  "
                        "Skipping patch.\n", tmp_path)
    assert "patch said: can't find file to patch" in msg


def test_congestion_control_names():
    for ok in ("reno_iw20", "cubic", "bbr3", "a"):
        assert is_cc_name(ok)
    for bad in ("", "Cubic", "9lives", "has space", "x" * 16, "tcp-cubic"):
        assert not is_cc_name(bad)


def test_a_name_of_a_researchers_kernel_is_taken_only_with_one(tmp_path, monkeypatch):
    """Our kernel offers the known names, so another is refused at once; with MODULES= (or
    KERNEL_PATCHES=) a well-formed name waits for the booted kernel's list."""
    monkeypatch.delenv("SSLAB_MODULES", raising=False)
    monkeypatch.delenv("SSLAB_KERNEL_PATCHES", raising=False)
    with pytest.raises(ScenarioError, match="unknown congestion control 'reno_iw20'.*MODULES=dir"):
        load_scenario(EXAMPLES / "e1-reno-iw20.yaml")
    monkeypatch.setenv("SSLAB_MODULES", str(EXAMPLES / "module"))
    assert load_scenario(EXAMPLES / "e1-reno-iw20.yaml").congestion_controls() == {"reno", "reno_iw20"}
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"extends: {EXAMPLES / 'e1-reno-iw20.yaml'}\nname: bad\n"
                   "cases: {name: '{cc}', flows: [{pair: 1, cc: '{cc}', size: 1MB}], axes: {cc: [Reno-IW20]}}\n")
    with pytest.raises(ScenarioError, match="'Reno-IW20' is not a congestion-control name"):
        load_scenario(bad)


def test_cc_name_refusal():
    assert cc_name_refusal("cubic_suss", {}) is None
    assert cc_name_refusal("bbr3", {}) is None  # ours, where the kernel has patch 0005 (checked at boot)
    assert cc_name_refusal("bbr2_sslab", {}) is None  # likewise
    assert "unknown congestion control 'bbr2'" in cc_name_refusal("bbr2", {})  # Google's: a researcher's kernel
    assert cc_name_refusal("bbr2", {"SSLAB_KERNEL_PATCHES": "/p"}) is None
    assert "unknown congestion control 'bbr4'" in cc_name_refusal("bbr4", {})
    assert cc_name_refusal("bbr4", {"SSLAB_KERNEL_PATCHES": "/p"}) is None
    assert "not a congestion-control name" in cc_name_refusal("BBR 3", {"SSLAB_MODULES": "/m"})


def test_records_name_the_researchers_kernel():
    assert kernel_text({"image": {"uml": {"release": "6.1.192-sslab-uml"}}}) == ""
    meta = {"image": {"uml": {"release": "6.1.192-sslab-uml", "researcher": {
        "patches": {"dir": "/x", "series": {"0001-a.patch": "00"}},
        "modules_source": {"dir": "/m"}, "modules": {"tcp_reno_iw20": {}}}}}}
    assert kernel_text(meta) == ("; kernel UML 6.1.192-sslab-uml with your patches 0001-a.patch and your modules "
                                 "tcp_reno_iw20")
    assert researcher_modules(meta["image"]) == ["tcp_reno_iw20"]
    # "Ran under" names the kernel every time: a researcher's as above, else ours (UML, or a VM's Debian one).
    assert kernel_ran_text(meta) == kernel_text(meta)
    ours = {"substrate": "uml", "image": {"uml": {"release": "6.1.192-sslab-uml", "source": {"version": "6.1.192-2"}},
                                          "kernel": {"release": "6.1.0-56-amd64"}}}
    assert kernel_ran_text(ours) == "; kernel UML 6.1.192-sslab-uml (Debian's 6.1.192-2 source, this project's patches)"
    assert kernel_ran_text({**ours, "substrate": "vm"}) == "; kernel 6.1.0-56-amd64"
    assert kernel_ran_text({"substrate": "native"}) == ""
    assert researcher_modules({}) == []


def test_the_example_module_is_a_module():
    ch = KernelChanges.of(None, EXAMPLES / "module")
    assert {p.name for p in ch.module_files} == {"Kbuild", "tcp_reno_iw20.c"}
    assert shutil.which("patch")  # the build host's patch program (make's host-deps installs it)


# -- another kernel source (KERNEL_SOURCE=) and the kernel axis (KERNELS=) -------------------------


def test_the_default_source_by_name_is_the_default():
    """KERNEL_SOURCE=6.1 names source.lock's package: the default image, not another one."""
    assert KernelChanges.from_env({"SSLAB_KERNEL_SOURCE": "6.1"}).empty
    assert KernelChanges.parse("6.1").label() == ""


def test_an_unknown_source_is_refused_with_the_known_ones():
    with pytest.raises(KernelChangesRefused, match=r"KERNEL_SOURCE=5\.4: not a kernel source the testbed knows "
                                                   r"\(it knows: 6\.1 \(the default.*7\.3"):
        KernelChanges.from_env({"SSLAB_KERNEL_SOURCE": "5.4"})
    with pytest.raises(KernelChangesRefused, match="not a kernel source"):
        KernelChanges.parse("../7.3")


def test_another_source_has_its_own_uml_key_and_patches():
    """7.3 takes 0001, 0002 and the hostfs fix, not 0003 (its UML sizes FP state from the host); its
    key names its source file and moves; the final stage follows it through the UML hash only."""
    images, base = REPO_ROOT / "images", "b" * 64
    k73 = KernelChanges.parse("7.3")
    assert k73.label() == "source-7.3" and k73.describe() == "7.3"
    keys = img.uml_inputs(images, base, k73)
    assert "images/uml/sources/7.3.yaml" in keys and "images/uml/source.lock" not in keys
    assert [k for k in keys if k.startswith("images/uml/patches/")] == [
        "images/uml/patches/0001-os_getrandom-from-a-recorded-seed.patch",
        "images/uml/patches/0002-HZ-250-as-Debian-amd64.patch",
        "images/uml/patches/6.12+/0004-hostfs-relative-paths-from-the-current-directory.patch"]
    assert keys != img.uml_inputs(images, base)
    assert keys["uml_source_suite_priority"] == "100"  # its suite enters the chroot below bookworm
    default = img.uml_inputs(images, base)
    assert "uml_source_suite_priority" not in default
    assert "images/uml/patches/0003-FP-state-sized-by-the-host.patch" in default
    # A sub-directory's patches are not the default's; the default's own 0004 (the sender hooks) is.
    assert not any("6.12+/" in k for k in default)
    assert "images/uml/patches/0004-tcp-a-congestion-control-sees-its-packets-leave.patch" in default


def test_kernel_axis_terms(tmp_path):
    patches = write(tmp_path / "beta", {"0001.patch": GOOD})
    k = KernelChanges.parse(f"7.3,patches={patches},modules={EXAMPLES / 'module'}")
    assert (k.source_name, k.patches_dir, k.modules_dir) == ("7.3", patches, EXAMPLES / "module")
    assert k.describe() == "7.3 + patches beta + modules module"
    assert k.env() == {"SSLAB_KERNEL_SOURCE": "7.3", "SSLAB_KERNEL_PATCHES": str(patches),
                       "SSLAB_MODULES": str(EXAMPLES / "module")}
    assert KernelChanges.from_env(k.env()) == k
    assert KernelChanges.parse("6.1").env() == {"SSLAB_KERNEL_SOURCE": "", "SSLAB_KERNEL_PATCHES": "",
                                                "SSLAB_MODULES": ""}
    for bad in ("7.3,beta", "7.3,patchez=x", f"6.1,patches={patches},patches={patches}", ",patches=x", "7.3,"):
        with pytest.raises(KernelChangesRefused, match="kernel '"):
            KernelChanges.parse(bad)


def test_a_kernel_axis_refuses_twins_and_the_single_kernel_variables(tmp_path, monkeypatch):
    from sslab.matrix import MatrixError
    from sslab.matrix.orchestrate import kernel_env, parse_kernels
    for var in ("SSLAB_KERNEL_SOURCE", "SSLAB_KERNEL_PATCHES", "SSLAB_MODULES"):
        monkeypatch.delenv(var, raising=False)
    assert [k.describe() for k in parse_kernels(["6.1", "7.3"])] == ["6.1", "7.3"]
    with pytest.raises(MatrixError, match="'6.1' is the same kernel as '6.1'"):
        parse_kernels(["6.1", "7.3", "6.1"])
    monkeypatch.setenv("SSLAB_KERNEL_SOURCE", "7.3")
    with pytest.raises(MatrixError, match="leave KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES= unset"):
        parse_kernels(["6.1", "7.3"])
    with kernel_env(KernelChanges.parse("6.1")):
        assert KernelChanges.from_env().empty
    assert KernelChanges.from_env().source_name == "7.3"  # restored


def test_612_takes_our_fp_patch_ported_to_its_tree():
    keys = img.uml_inputs(REPO_ROOT / "images", "b" * 64, KernelChanges.parse("6.12"))
    assert [k for k in keys if k.startswith("images/uml/patches/")] == [
        "images/uml/patches/0001-os_getrandom-from-a-recorded-seed.patch",
        "images/uml/patches/0002-HZ-250-as-Debian-amd64.patch",
        "images/uml/patches/6.12/0003-FP-state-sized-by-the-host.patch",
        "images/uml/patches/6.12+/0004-hostfs-relative-paths-from-the-current-directory.patch"]



def test_a_kernel_axis_takes_a_modules_name_only_on_kernels_that_carry_it(monkeypatch):
    """KERNELS="6.1,modules=DIR ..." CCA=reno_iw20: the selection resolves with such a kernel named
    (the booted kernel then lists the name), and is refused with the default kernel named."""
    from sslab import matrix as mx
    from sslab.matrix.orchestrate import kernel_env
    from .test_matrix import chosen_of
    for var in ("SSLAB_KERNEL_SOURCE", "SSLAB_KERNEL_PATCHES", "SSLAB_MODULES"):
        monkeypatch.delenv(var, raising=False)
    m = mx.load_matrix("table1")
    options = {"CCA": "reno_iw20"}
    with kernel_env(KernelChanges.parse("6.1")), pytest.raises(mx.MatrixError, match="reno_iw20"):
        chosen_of(m, options)
    with kernel_env(KernelChanges.parse(f"6.1,modules={EXAMPLES / 'module'}")):
        assert chosen_of(m, options)["large_cc"] == ["reno_iw20"]
