"""Before any cell or run: one short boot of the substrate on this host proves that it runs.

A substrate that cannot boot here fails the same way every time (UML 6.1's
fixed FP buffer on a host with AMX panicked every boot: 0 of 16 cells, each
tried twice, ending in Ansible's JSON).  So a matrix or an experiment first
boots the substrate once with a job that only reads what the guest's kernel
learnt of the host, and

  - on success records that in the cache, keyed by the substrate, the image
    and the host's facts (CPU, XSAVE area size, kernel), so the next start
    on this host and image costs nothing;
  - on failure stops before the first cell with one message: the cause,
    read from the console (known lines below), the host's facts, and what
    to do.  Nothing is retried: a deterministic boot failure is not a cell's.

Cost: one UML boot, about a second of wall time; a QEMU boot, seconds to a
minute.  Native hosts have their own check (substrate/native.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from .console import VMError
from .hostfacts import describe, host_facts
from .job import JobError, JobSpec

#: Bump when what a preflight checks changes (old successes are then not trusted).
#: 2: the congestion controls the booted kernel lists, with our module and a researcher's loaded.
PREFLIGHT_VERSION = 2
#: The guest reads what our UML kernel learnt of the host's FP state (patch 0003), loads our module
#: and a researcher's (as a run does) and lists the congestion controls the kernel then offers.
FP_PARAMS = "/sys/module/kernel/parameters"
PROBE_ARGV = ["sh", "-c",
              f"cat {FP_PARAMS}/uml_host_fp_bytes {FP_PARAMS}/uml_fp_area_bytes 2>/dev/null; "
              "modprobe tcp_sslab 2>/dev/null; "
              "for m in $SSLAB_RESEARCHER_MODULES; do modprobe $m || echo \"module-failed: $m\"; done; "
              "echo \"ccas: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)\"; true"]
PROBE_TIMEOUT_S = 120.0
#: What to try instead, for any failure of the default substrate.
ON_QEMU = ("run on QEMU instead: SUBSTRATE=vm (Debian's stock kernel, on the host's clock; slower, "
           "e.g. `make reproduce-table1 SUBSTRATE=vm`)")


class SubstrateUnusable(RuntimeError):
    """The substrate does not boot on this host; nothing was started."""


class Unoffered(ValueError):
    """A scenario asks for a congestion control the kernel under test does not offer (nothing ran)."""


@dataclass(frozen=True)
class Cause:
    """A known way for a boot to fail: a console line that names it, what it means, what to do."""

    pattern: str
    meaning: str
    remedy: str


CAUSES = (
    Cause(r"ptrace set fp regs failed, errno = 14|get_fp_registers failed",
          "the UML kernel's floating-point buffer is smaller than this host's XSAVE area, so restoring any "
          "guest process's FP registers fails with EFAULT and init dies (UML 6.1 as Debian ships it has a "
          "fixed 2696-byte buffer; AMX hosts have 11008 bytes)",
          "rebuild the image (`make image`): our UML kernel sizes its FP state from the host at boot "
          "(images/uml/patches/0003-FP-state-sized-by-the-host.patch); an image or container built before "
          "that patch cannot boot here"),
    Cause(r"slowstart-lab: .*FP state|slowstart-lab: SSLAB_UML_FP",
          "our UML kernel could not size its FP state from this host (its own message is quoted below)",
          "unset SSLAB_UML_FP_AREA / SSLAB_UML_FP_SAVE if set; otherwise report the quoted line"),
    Cause(r"Unable to mount root fs|Cannot open root device",
          "the UML kernel could not mount the image's root directory (hostfs): a kernel whose hostfs or "
          "root-mount rules differ from the testbed's command line (a 7.x kernel mounts no relative "
          "hostfs root), or an image whose rootfs directory is gone",
          "rebuild the image (`make image`); with another kernel than ours, check the words its boot needs"),
    # Not any "Operation not permitted": UML 7.x prints "epollctl add err fd 10, Operation not
    # permitted" on every boot here, and a root-mount panic was first called a ptrace problem.
    Cause(r"check_ptrace|ptrace_child|start_ptraced_child|PTRACE_.*failed|ptrace.*Operation not permitted",
          "the host does not let the UML kernel ptrace its own processes (a seccomp filter, a container "
          "without CAP_SYS_PTRACE, or kernel.yama.ptrace_scope = 3)",
          "allow ptrace for this user (outside a restricted container; check `sysctl kernel.yama.ptrace_scope`)"),
    Cause(r"check_tmpexec|noexec|mmap.*failed|Failed to allocate",
          "the UML kernel could not map its memory file executable in its temporary directory",
          "point SSLAB_UML_TMPDIR at a directory on a filesystem mounted without noexec, with 2 GB free"),
)


#: The patch that sizes UML's FP state from the host: an image with it that still fails that way is
#: a new problem, not an old image.
FP_PATCH = "0003-FP-state-sized-by-the-host.patch"


def diagnose(console: str) -> tuple[Cause | None, list[str]]:
    """The known cause a console shows (first match), and the console lines that show it (stack
    traces left out)."""
    lines = [ln.rstrip() for ln in console.splitlines() if ln.strip() and not ln.lstrip().startswith("[<")]
    for cause in CAUSES:
        hits = [ln for ln in lines if re.search(cause.pattern, ln)]
        if hits:
            panic = [ln for ln in lines if "Kernel panic" in ln][:1]
            return cause, list(dict.fromkeys(hits[:3] + panic))
    panic = [i for i, ln in enumerate(lines) if "Kernel panic" in ln or "panic" in ln.lower()]
    if panic:
        i = panic[0]
        return None, lines[max(0, i - 3):i + 1]
    return None, lines[-6:]


def console_of(job_dir: Path) -> Path | None:
    for p in (job_dir / "uml" / "console.log", job_dir / "vm" / "serial.log"):
        if p.exists():
            return p
    return None


def preflight_key(substrate, facts: dict) -> str:
    image = getattr(substrate, "image", None)
    manifest = image.manifest() if image is not None else {}
    knobs = {k: v for k, v in sorted(os.environ.items()) if k.startswith("SSLAB_UML_")}
    what = {"version": PREFLIGHT_VERSION, "substrate": substrate.name, "clock": substrate.clock,
            "image": manifest.get("image_hash"), "uml": (manifest.get("uml") or {}).get("binary_sha256"),
            "host": {k: facts[k] for k in ("cpu_model", "cpu_flags", "xstate_bytes", "kernel", "machine")},
            "knobs": knobs}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def ready(substrate, log=None):
    """@substrate, once one short boot has shown that it runs on this host (preflight: cached per host
    and image; if it does not boot, SubstrateUnusable names why, before anything); the boot's lines go
    to stderr unless @log takes them."""
    preflight(substrate, log=log or (lambda m: print(m, file=sys.stderr, flush=True)))
    return substrate


def preflight(substrate, cache: Path | None = None, log=print) -> dict:
    """Boot @substrate once (or find that it booted before on this host and image); return the record.

    Raises SubstrateUnusable, with the cause, the host's facts and what to do, when it does not boot.
    """
    if getattr(substrate, "image", None) is None:
        return {}  # a native host: substrate/native.py checks it
    facts = host_facts()
    cache = cache or paths.cache_dir()
    key = preflight_key(substrate, facts)
    record_path = cache / "preflight" / f"{key}.json"
    if record_path.is_file():
        return json.loads(record_path.read_text())
    job_dir = cache / "preflight" / "runs" / f"{substrate.name}-{paths.stamp()}"
    job_dir.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    error = None
    try:
        res = substrate.run(JobSpec(argv=PROBE_ARGV, timeout_s=PROBE_TIMEOUT_S, name="preflight", seed=1),
                            job_dir)
        if not res.ok:
            error = f"the preflight job exited {res.exit_code} (timed out: {res.timed_out}): {res.stderr()[-300:]}"
    except (VMError, JobError) as e:
        error = str(e).splitlines()[0].removesuffix("; console tail:")
    if error is not None:
        raise SubstrateUnusable(unusable_message(substrate, facts, error, console_of(job_dir)))
    out = res.stdout()
    failed = re.findall(r"^module-failed: (\S+)", out, re.M)
    if failed:
        raise SubstrateUnusable(f"your module(s) {', '.join(failed)} (MODULES=) did not load in the UML kernel; "
                                f"nothing was run.  The guest said:\n{res.stderr()[-1500:]}")
    listed = next((ln.split(":", 1)[1].split() for ln in out.splitlines() if ln.startswith("ccas:")), [])
    sizes = fp_sizes(out)
    record = {"substrate": substrate.name, "clock": substrate.clock, "host": facts,
              "image_hash": substrate.image.manifest().get("image_hash"),
              "guest_fp": dict(zip(("host_fp_bytes", "fp_area_bytes"), sizes)) if len(sizes) == 2 else None,
              "available_ccas": listed,
              "boot_seconds": round(time.monotonic() - t0, 2), "checked": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                         time.gmtime())}
    record_path.parent.mkdir(parents=True, exist_ok=True)
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True))
    shutil.rmtree(job_dir, ignore_errors=True)
    log(f"preflight: {substrate.name} boots on this host ({record['boot_seconds']} s; {describe(facts)})")
    return record


def fp_sizes(probe_out: str) -> list[int]:
    """The FP sizes the probe printed (the host's XSAVE area and the guest's buffer), each on a line
    of its own; empty from a kernel without patch 0003."""
    return [int(ln) for ln in probe_out.splitlines() if ln.strip().isdigit()]


def offered_ccas(substrate, record: dict) -> dict[str, str]:
    """The congestion controls the kernel under test offers: name -> where from.  The image lists
    the kernel's own (built in, or a module file: those load on first use) and ours; the boot
    (@record, preflight's) lists what is registered once our module and a researcher's are loaded."""
    manifest = substrate.image.manifest()
    static = ((manifest.get("uml") or {}).get("tcp_congestion_controls") if substrate.name == "uml"
              else manifest.get("tcp_congestion_controls")) or {}
    booted = {n: "listed by the booted kernel" for n in record.get("available_ccas") or []}
    return dict(sorted({**booted, **static}.items()))


def check_offered(substrate, names: set[str], log=print) -> None:
    """Refuse (Unoffered), before any run, congestion controls the kernel under test lacks, with the
    names it has.  One boot on this host (cached: preflight)."""
    if getattr(substrate, "image", None) is None or not names:
        return  # a native host checks its own kernel (substrate/native.py)
    offered = offered_ccas(substrate, preflight(substrate, log=log))
    missing = sorted(n for n in names if n not in offered)
    if missing:
        uml = (substrate.image.manifest().get("uml") or {}) if substrate.name == "uml" else {}
        kernel = f"UML {uml.get('release')}" if uml else substrate.image.manifest()["kernel"].get("release", "?")
        raise Unoffered(f"the kernel under test ({kernel}) offers no congestion control "
                        f"{', '.join(repr(n) for n in missing)}; nothing was run.  It has: {', '.join(offered)}")


def unusable_message(substrate, facts: dict, error: str, console: Path | None) -> str:
    text = console.read_text(errors="replace") if console else ""
    cause, shown = diagnose(text)
    image = substrate.image.manifest()
    uml = (image.get("uml") or {}) if substrate.name == "uml" else {}
    remedy = cause.remedy if cause else None
    ours = [p for p in (uml.get("patches") or {}) if p.rsplit("/", 1)[-1] == FP_PATCH]
    source = (uml.get("source") or {}).get("package", "")
    if cause is CAUSES[0] and ours:
        remedy = (f"this image's UML kernel already sizes its FP state from the host ({ours[0]}): please "
                  f"report it with the console log")
    elif cause is CAUSES[0] and source and source not in ("linux-source-6.1", "linux-source-6.12"):
        remedy = (f"this image's UML kernel ({source}) sizes its FP state from the host itself: please report "
                  f"it with the console log")
    lines = [f"the {substrate.name} substrate ({substrate.clock}) does not boot on this host; no cell or run was "
             f"started.",
             f"  cause: {cause.meaning if cause else 'not one the harness knows; see the console lines below'}",
             f"  console ({console or 'none'}):"]
    lines += [f"    {ln}" for ln in shown] or ["    (empty)"]
    knobs = {k: v for k, v in sorted(os.environ.items()) if k.startswith("SSLAB_UML_FP_")}
    if knobs:
        lines.append("  note: test knobs are set (" + ", ".join(f"{k}={v}" for k, v in knobs.items())
                     + "); unset them unless this failure is what you want")
    lines += [f"  harness: {error}",
              f"  host: {describe(facts)}",
              f"  image: {image.get('image_hash', '?')[:12]}" + (f", UML {uml.get('release')} with patches "
                                                                   f"{', '.join(sorted(uml.get('patches') or {}))}"
                                                                   if uml else ""),
              "  what to do: " + (f"{remedy}; or {ON_QEMU}" if remedy else ON_QEMU)]
    return "\n".join(lines)
