"""Substrates: everything that gives a job a kernel to run on.

    image      the testbed image: pinned rootfs, stock kernel, UML kernel, our module (cached by recipe hash)
    umlkernel  the User-Mode Linux kernel stage of the image (Debian's linux-source, our config and patches)
    buildtools hashing, chroots and commands the image stages share
    gotoolchain a Go to build with: the host's, else Go's toolchain from the module proxy (containerlab,
               actionlint)
    mirrors    which Debian mirrors the image is built from
    uml        boots the image's UML kernel in virtual time and runs one job (the default)
    qemu       boots the image's stock kernel under QEMU (accelerator and clock choice) and runs one job
    console    following a testbed kernel's console: markers, phases, deadlines
    native     runs a job on a host that already has netem, fq and module loading
    container  the testbed as an OCI image (UML kernel, module, rootfs, harness) for Podman or Docker
    job        the job directory protocol between the host and any substrate
    agent      runs a job and records its status (baked into the image; used natively as is)
    kinds      what each substrate is, as planning needs it (side by side, boots shared, backend)

Every substrate's testbed is a `Testbed` (below): a `name`, a `clock`
(uml/inf-cpu, qemu/icount, qemu/mttcg, kvm or native), `run(JobSpec,
job_dir) -> JobResult` (a boot, the job, its status) and `facts(result)`
(what a check records of it); `preflight.ready` boots it once on this host
before a long run; `kinds` says what planning needs of it before any boot.
Code outside this package asks these, never a substrate's name.

May import: the leaves sslab.paths and sslab.ccas.  Not scenario, experiment,
analysis, matrix or cli; guest code is shipped to the substrate as files,
never imported.
"""

from __future__ import annotations


from pathlib import Path
from typing import Protocol

from .job import JobResult, JobSpec
from .kinds import KINDS

SUBSTRATES = tuple(KINDS)


class Testbed(Protocol):
    """What the harness asks of a substrate's testbed (uml.UMLTestbed, qemu.TestbedVM, native.NativeHost)."""

    name: str

    @property
    def clock(self) -> str: ...

    def run(self, job: JobSpec, job_dir: Path) -> JobResult:
        """Boot (where it boots), run @job in @job_dir, and say how it ended."""
        ...

    def facts(self, res: JobResult) -> dict:
        """What a check records of this substrate beside the guest's report (image, seed, accelerator)."""
        ...
CLOCKS = ("real", "virtual")


def make_substrate(name: str, accel: str = "auto", clock: str = "real", cpu: int | None = None) -> Testbed:
    """The substrate called @name (uml, vm or native), ready to run jobs.

    @clock applies to QEMU (real: MTTCG or KVM; virtual: icount); UML's is
    always virtual and a native host's always real.  @cpu pins a UML.
    """
    if name != "uml":
        from .kernelchanges import KernelChanges, KernelChangesRefused
        if not KernelChanges.from_env().empty:
            raise KernelChangesRefused(f"KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES= change the UML kernel the testbed builds; "
                                       f"SUBSTRATE={name} runs another kernel: use SUBSTRATE=uml")
    if name == "native":
        from .native import NativeHost
        return NativeHost()
    if name == "vm":
        from .image import ensure_image, prebuilt_image
        from .qemu import TestbedVM, VMConfig
        if prebuilt_image() is not None:
            from .preflight import SubstrateUnusable
            raise SubstrateUnusable("this container ships the UML substrate only: SUBSTRATE=vm needs QEMU and the full "
                             "image (run on the host, or `make image` there)")
        return TestbedVM(ensure_image(), VMConfig(accel=accel, clock=clock))
    if name == "uml":
        from .. import paths
        from .image import ensure_image
        from .leftovers import stop_orphaned_umls
        from .uml import UMLConfig, UMLTestbed
        stop_orphaned_umls(paths.RESULTS_DIR)
        return UMLTestbed(ensure_image(), UMLConfig(cpu=cpu))
    raise ValueError(f"unknown substrate {name!r}: use {', '.join(SUBSTRATES)}")
