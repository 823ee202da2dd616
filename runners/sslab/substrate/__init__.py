"""Substrates: everything that gives a job a kernel to run on.

    image    the testbed image: pinned rootfs, stock kernel, our module (cached by recipe hash)
    mirrors  which Debian mirrors the image is built from
    qemu     boots the image under QEMU (accelerator and clock choice) and runs one job
    native   runs a job on a host that already has netem, fq and module loading
    job      the job directory protocol between the host and any substrate
    agent    runs a job and records its status (baked into the image; used natively as is)

Every substrate has a `name` and `run(JobSpec, job_dir) -> JobResult`.

May import: the leaves sslab.paths and sslab.ccas.  Not scenario, experiment,
analysis, matrix or cli; guest code is shipped to the substrate as files,
never imported.
"""

from __future__ import annotations


def make_substrate(name: str, accel: str = "auto"):
    """The substrate called @name ("vm" or "native"), ready to run jobs."""
    if name == "native":
        from .native import NativeHost
        return NativeHost()
    if name == "vm":
        from .image import ensure_image
        from .qemu import TestbedVM, VMConfig
        return TestbedVM(ensure_image(), VMConfig(accel=accel))
    raise SystemExit(f"unknown substrate {name!r}: use vm or native")
