"""Other kernel sources on the real testbed: the UML kernel built from linux-source-7.3 (with our
hostfs fix, images/uml/patches/6.12+/0004) boots, our module loads in it and every one of its
variants runs by name; linux-source-6.12, with our FP patch ported, sizes its FP state from the host
(an AMX host's layout, or on an AMX host a larger one, gives the same results); and the matrix's kernel axis runs the same cells on
6.1 and 7.3, keyed and archived apart, with a report of the two side by side.  The first run builds
the 7.3 and 6.12 images (about 5-6 min each on 2 cores); later runs take them from the cache."""

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from sslab.analysis import ringbuf
from sslab.analysis.traces import read_trace
from sslab.paths import REPO_ROOT

from .helpers import larger_fp_area, sslab, sslab_watching, uml_userspace_modes

pytestmark = pytest.mark.vm
K73 = {"SSLAB_KERNEL_SOURCE": "7.3"}
#: Hashed kernel pointers 6.12's and 7.x's tcp_probe prints (6.1's does not): they follow the guest's
#: memory layout, which an FP area of another size moves; no analysis reads them.
POINTER_FIELDS = ("skbaddr", "skaddr")
POINTERS = re.compile(rb" (skbaddr|skaddr)=[0-9a-f]+")


@pytest.fixture(scope="module")
def run_on_73(tmp_path_factory, image):
    results = tmp_path_factory.mktemp("k73") / "results"
    res = sslab(["startup", "--scenario", str(REPO_ROOT / "tests/data/module-smoke.yaml")], results, env=K73)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return (results / "startup" / "latest").resolve()


def test_the_73_kernel_boots_and_is_recorded(run_on_73):
    meta = json.loads((run_on_73 / "meta.json").read_text())
    uml = meta["image"]["uml"]
    assert uml["release"].startswith("7.3."), uml["release"]
    assert uml["source"]["package"] == "linux-source-7.3"
    assert "6.12+/0004-hostfs-relative-paths-from-the-current-directory.patch" in uml["patches"]
    assert "0003-FP-state-sized-by-the-host.patch" not in uml["patches"]
    assert "kernel UML 7.3" in (run_on_73 / "report.md").read_text()


def test_our_module_runs_every_variant_on_73(run_on_73):
    meta = json.loads((run_on_73 / "meta.json").read_text())
    ran = set()
    for tag in meta["run_order"]:
        flow = json.loads((run_on_73 / "job/out/runs" / tag / "run.json").read_text())["flows"][0]
        assert flow["cc_used"] == flow["cc"], tag
        assert flow["bytes_received"] == flow["size"], tag
        ran.add(flow["cc"])
    assert ran == {"cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss"}


def test_the_kernel_axis_runs_both_and_sets_them_side_by_side(tmp_path, run_on_73):
    results = tmp_path / "results"
    args = ["matrix", "run", "smoke", "--set", "CCA=cubic", "--set", "RTT=20ms", "--kernel", "6.1", "--kernel", "7.3"]
    res = sslab(args, results, timeout=1800)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    d61 = results / "smoke" / "cca-cubic_rtt-20ms"
    d73 = results / "smoke" / "cca-cubic_rtt-20ms_kernel-source-7.3"
    keys = {}
    for d in (d61, d73):
        cells = [c for c in (d / "cells").iterdir() if (c / "cell.json").is_file()]
        assert len(cells) == 1, d
        keys[d] = cells[0].name
    assert keys[d61] != keys[d73]  # the same setting on another kernel is another cell
    side = (results / "smoke" / "cca-cubic_rtt-20ms_kernels" / "reports" / "latest" / "table.md").read_text()
    # A row per setting and kernel (the settings section's, the start by its label), 7.3's set beside 6.1's.
    assert "| CUBIC | 1BDP | 20ms | 6.1 | 1 |" in side and "| CUBIC | 1BDP | 20ms | 7.3 | 1 |" in side
    assert "- 7.3: the CIs overlap 6.1's, in settings with n ≥ 2 on both: small off 0 of 0" in side  # n = 1
    assert "kernel UML 7.3" in side  # 7.3's own ran-under line
    again = sslab(args, results, timeout=900)  # resumed: nothing left to run on either kernel
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout.count("1 already done, 0 to run") == 2, again.stdout[-3000:]


# -- 7.3 with its guest's processes under seccomp (images/uml/sources/7.3-seccomp.yaml) ------------

K73S = {"SSLAB_KERNEL_SOURCE": "7.3-seccomp"}


def guest_files(run_dir: Path) -> dict[str, str]:
    """Every file the guest wrote of a run's flows, by path: its sha256 (decompressed), the kernel
    pointers of 7.x's tcp_probe left out (they follow the guest's memory layout); a trace of
    ring-buffer pages by its records, since its pages hold those pointers as binary words."""
    files = {}
    for p in sorted((run_dir / "job/out/runs").rglob("*")):
        if p.is_file() and p.name != "run.json":
            if ringbuf.is_ringbuf(p):
                data = repr([(r.ts, r.event, {k: v for k, v in r.fields.items() if k not in POINTER_FIELDS})
                             for r in read_trace(p)]).encode()
            else:
                data = POINTERS.sub(b"", gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes())
            files[str(p.relative_to(run_dir))] = hashlib.sha256(data).hexdigest()
    return files


def test_73_runs_its_guests_processes_under_seccomp_in_virtual_time_and_repeats_its_bytes(tmp_path, run_on_73):
    runs, modes = [], []
    for name in ("first", "second"):
        results = tmp_path / name
        res, seen = sslab_watching(["startup", "--scenario", str(REPO_ROOT / "tests/data/module-smoke.yaml")],
                                   results, K73S, lambda r=results: uml_userspace_modes(r))
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        runs.append((results / "startup" / "latest").resolve())
        modes += [m for sample in seen for m in sample.values()]
    # The guest's programs ran under a seccomp filter (mode 2), none of them ptraced by the UML.
    assert 2 in modes and "traced" not in modes, sorted(set(map(str, modes)))
    meta = json.loads((runs[0] / "meta.json").read_text())
    assert meta["image"]["uml"]["cmdline_extra"] == ["root=/dev/root", "seccomp=on"]
    # 7.3's kernel, compiled once (umlkernel.compile_inputs): the same binary, a stage of its own.
    uml_73 = json.loads((run_on_73 / "meta.json").read_text())["image"]["uml"]
    assert meta["image"]["uml"]["binary_sha256"] == uml_73["binary_sha256"]
    assert meta["image"]["uml"]["uml_hash"] != uml_73["uml_hash"]
    assert meta["image"]["uml"].get("compile_of", uml_73["uml_hash"]) == uml_73["uml_hash"]
    assert "seccomp=on" in json.loads((runs[0] / "job/uml/cmdline.json").read_text())["argv"]
    # One seed, one byte stream: every capture and trace of the two boots the same.
    first = guest_files(runs[0])
    assert first and first == guest_files(runs[1])


# -- 6.12: our FP patch, ported (images/uml/patches/6.12/0003) --------------------------------------

K612 = {"SSLAB_KERNEL_SOURCE": "6.12"}
def run_files(results: Path, env: dict) -> tuple[dict, dict]:
    res = sslab(["startup", "--scenario", str(REPO_ROOT / "tests/data/module-smoke.yaml")], results,
                env={**K612, **env})
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run_dir = (results / "startup" / "latest").resolve()
    return guest_files(run_dir), json.loads((run_dir / "meta.json").read_text())


def test_612_sizes_its_fp_state_from_the_host_and_results_do_not_depend_on_it(tmp_path, image):
    own, own_meta = run_files(tmp_path / "own", {})
    other = larger_fp_area(own_meta["guest_kernel"]["uml_fp"]["host_fp_bytes"])
    amx, amx_meta = run_files(tmp_path / "amx", {"SSLAB_UML_FP_AREA": str(other)})
    assert own_meta["image"]["uml"]["release"].startswith("6.12.")
    assert "6.12/0003-FP-state-sized-by-the-host.patch" in own_meta["image"]["uml"]["patches"]
    assert amx_meta["guest_kernel"]["uml_fp"]["fp_area_bytes"] == other
    assert own_meta["guest_kernel"]["uml_fp"]["fp_area_bytes"] < other
    assert own and own == amx  # traces the same but for the hashed pointers
    host = own_meta["guest_kernel"]["uml_fp"]["host_fp_bytes"]
    res = sslab(["startup", "--scenario", str(REPO_ROOT / "tests/data/module-smoke.yaml")], tmp_path / "short",
                env={**K612, "SSLAB_UML_FP_SAVE": str(host - 8)})
    assert res.returncode == 2 and "ptrace set fp regs failed, errno = 14" in res.stderr, res.stderr[-2000:]
    assert "already sizes its FP state from the host (6.12/0003" in res.stderr
