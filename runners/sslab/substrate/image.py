"""Build the testbed image from Debian's packages, and cache it.

The image is built in three stages, each cached under the hash of its inputs:

  base   debootstrap'd rootfs + the pinned stock kernel, its headers and the
         recipe's packages.  Inputs: images/recipe.yaml, images/kernel.lock,
         BASE_BUILDER_VERSION.  Takes minutes (package downloads).
  uml    the User-Mode Linux kernel built from Debian's linux-source package
         with our config and patches (substrate/umlkernel.py).  Inputs: the
         base hash, images/uml/*.  About 5 minutes on 2 cores.
  final  a copy of the base plus our init and agent, our module built
         against the stock kernel's headers and against the UML tree, and
         the manifest; kept as a directory (the UML guest's root) and packed
         into an ext4 disk image (QEMU's root).  Inputs: the base and uml
         hashes, images/guest/*, the agent, kernel/ sources,
         FINAL_BUILDER_VERSION.  Takes about a minute.

Splitting the stages means that editing the module or the agent does not
download a distribution or compile a kernel again.  The *recipe hash*
recorded in the manifest is the final stage's key, which covers all three.

Every stage is built in a temporary directory and renamed into place only
when complete, so an interrupted build never leaves something that looks
finished.  A lock file serialises concurrent builds of the same cache.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .. import paths
from ..ccas import HOOKED_CCAS, OUR_CCAS
from .buildtools import (ImageError, build_dir, cache_lock, chroot_mounts, hash_inputs, in_chroot, installed_packages,
                         log, now_iso, packages_version_of_host, remove_stale_builds, remove_tree, require_host_tools,
                         run, sha256_file, tool_version)
from .kernelchanges import MODULES_IN_IMAGE, KernelChanges, KernelChangesRefused
from .mirrors import Mirrors, resolve_mirrors
from .cachecheck import image_damage, set_aside, tree_listing
from .cachegc import FINAL_STAGE_NEEDS, mark_used, prune, prune_if_short, refuse_if_short
from .umlkernel import UMLKernel, ensure_uml, uml_inputs

__all__ = ["ImageError", "Image", "Recipe", "KernelPin", "ensure_image", "repin", "sha256_file", "hash_inputs",
           "uml_inputs"]

#: Bump when the base stage's procedure changes in a way that changes its output.
BASE_BUILDER_VERSION = 1
#: Bump when the final stage's procedure changes.
FINAL_BUILDER_VERSION = 5  # 3: the UML kernel's module tree and the rootfs directory; 4: no containerlab;
#                            5: the guest's standard library compiled (GUEST_PYCACHE)

#: Files of the source tree baked into the final image (host path -> guest path).
GUEST_FILES = {
    "images/guest/sslab-init": "usr/local/sbin/sslab-init",
    "runners/sslab/substrate/agent.py": "usr/local/lib/sslab/agent.py",
}
#: Programs of ours compiled into the image with its own compiler (source -> installed path).
GUEST_PROGRAMS = {
    "images/guest/sslab-transfer.c": "usr/local/bin/sslab-transfer",
}
#: How they are compiled (part of the final stage's inputs).  Statically: under UML each page
#: fault and system call of a guest process is a round trip through the host's ptrace, and the
#: dynamic loader's work at every start was most of what a short-lived program cost there.
GUEST_CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror", "-static")
#: The guest Python's standard library compiled when the image is built, in the layout of a
#: PYTHONPYCACHEPREFIX tree (the source's absolute path under it): sslab-init mounts its usr/ at the
#: guest's prefix, so that an interpreter reads the modules it imports compiled rather than compiling
#: them at each start (the prefix keeps the host's compiled files of the shared source tree out of the
#: guest; under UML the job's imports took 0.70 s of wall time with the standard library compiled at
#: each start, 0.40 s with it compiled here: docs/notebook/cost.md, 6 Dec 2026).
GUEST_PYCACHE = "usr/local/lib/sslab/pycache"
#: What of the standard library is not compiled: its tests and the tools no job imports (some of
#: lib2to3's test data is Python 2 and does not compile).
GUEST_PYCACHE_SKIP = r"/(test|tests|idlelib|tkinter|turtledemo|lib2to3|ensurepip)/"
#: A program of ours a job carries when asked (JobSpec.tools), never in the image: the counter of
#: `make bench BENCH=syscalls`.
SYSCOUNT_PROGRAM = "images/tools/sslab-syscount.c"


def compile_on_host(source: Path, exe: Path) -> Path:
    """One of our C programs compiled with this host's compiler, as the image compiles its own
    (GUEST_CFLAGS: statically, so that it runs in any guest); ImageError with the compiler's words."""
    run(["gcc", *GUEST_CFLAGS, "-o", str(exe), str(source)], capture_output=True, text=True)
    return exe


# --------------------------------------------------------------------------
# Recipe and hashes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelPin:
    metapackage: str
    abi: str
    image_package: str
    headers_package: str
    version: str

    @classmethod
    def load(cls, path: Path) -> "KernelPin":
        if not path.exists():
            raise ImageError(f"{path} is missing: run `make image-repin` to pin a kernel")
        data = yaml.safe_load(path.read_text()) or {}
        missing = [k for k in ("metapackage", "abi", "image_package", "headers_package", "version") if not data.get(k)]
        if missing:
            raise ImageError(f"{path}: missing {', '.join(missing)}; run `make image-repin`")
        return cls(**{k: str(data[k]) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Recipe:
    suite: str
    arch: str
    kernel_metapackage: str
    packages: tuple[str, ...]
    initramfs_modules: tuple[str, ...]
    disk_size_gb: int
    kernel: KernelPin
    images_dir: Path

    @classmethod
    def load(cls, images_dir: Path = paths.IMAGES_DIR) -> "Recipe":
        path = images_dir / "recipe.yaml"
        data = yaml.safe_load(path.read_text()) or {}
        known = {"suite", "arch", "kernel_metapackage", "packages", "initramfs_modules", "disk_size_gb"}
        unknown = set(data) - known
        if unknown:
            raise ImageError(f"{path}: unknown keys {sorted(unknown)}")
        missing = known - set(data)
        if missing:
            raise ImageError(f"{path}: missing keys {sorted(missing)}")
        if not isinstance(data["packages"], list) or not all(isinstance(p, str) for p in data["packages"]):
            raise ImageError(f"{path}: packages must be a list of package names")
        if not isinstance(data["disk_size_gb"], int) or data["disk_size_gb"] < 2:
            raise ImageError(f"{path}: disk_size_gb must be an integer >= 2")
        kernel = KernelPin.load(images_dir / "kernel.lock")
        if kernel.metapackage != data["kernel_metapackage"]:
            raise ImageError(
                f"kernel.lock pins {kernel.metapackage} but recipe.yaml asks for "
                f"{data['kernel_metapackage']}: run `make image-repin`"
            )
        return cls(
            suite=data["suite"],
            arch=data["arch"],
            kernel_metapackage=data["kernel_metapackage"],
            packages=tuple(data["packages"]),
            initramfs_modules=tuple(data["initramfs_modules"]),
            disk_size_gb=data["disk_size_gb"],
            kernel=kernel,
            images_dir=images_dir,
        )


def base_inputs(images_dir: Path) -> dict[str, str]:
    return {
        "images/recipe.yaml": sha256_file(images_dir / "recipe.yaml"),
        "images/kernel.lock": sha256_file(images_dir / "kernel.lock"),
        "base_builder_version": str(BASE_BUILDER_VERSION),
    }


def module_sources(kernel_dir: Path) -> list[Path]:
    """The files of kernel/ that go into the module build (not build output, not its tests, not its
    documentation: an edit of kernel/README.md builds no new image)."""
    if not kernel_dir.is_dir():
        return []
    keep = []
    for p in sorted(kernel_dir.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(kernel_dir)
        if rel.parts[0] in ("build", "tests") or p.name.startswith("."):
            continue
        if p.suffix in (".o", ".ko", ".mod", ".cmd", ".symvers", ".order", ".md") or p.name.endswith(".mod.c"):
            continue
        keep.append(p)
    return keep


def final_inputs(base_hash: str, repo: Path, kernel_dir: Path, uml_hash: str,
                 changes: KernelChanges | None = None) -> dict[str, str]:
    parts = {"base": base_hash, "uml": uml_hash, "final_builder_version": str(FINAL_BUILDER_VERSION)}
    if changes is not None:
        parts.update(changes.final_inputs())  # a researcher's modules (the patches are in the uml hash)
    for src in (*GUEST_FILES, *GUEST_PROGRAMS):
        parts[src] = sha256_file(repo / src)
    parts["guest_cflags"] = " ".join(GUEST_CFLAGS)
    for p in module_sources(kernel_dir):
        parts["kernel/" + str(p.relative_to(kernel_dir))] = sha256_file(p)
    return parts


# --------------------------------------------------------------------------
# Built artifacts
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Image:
    """A finished image in the cache."""

    root: Path

    @property
    def disk(self) -> Path:
        return self.root / "root.img"

    @property
    def kernel(self) -> Path:
        return self.root / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.root / "initrd.img"

    @property
    def rootfs(self) -> Path:
        """The rootfs as a directory: the UML guest's root (hostfs, read-only)."""
        return self.root / "rootfs"

    @property
    def uml_binary(self) -> Path:
        return self.root / "linux"

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def manifest(self) -> dict:
        return json.loads(self.manifest_path.read_text())

    def mark_used(self) -> None:
        """Note that a run takes this image now (what a prune of the cache keeps: cachegc)."""
        mark_used(self.root)

    def is_complete(self) -> bool:
        return all(p.is_file() for p in (self.disk, self.kernel, self.initrd, self.uml_binary, self.manifest_path)) \
            and self.rootfs.is_dir()

    def facts(self, with_uml: bool = False) -> dict:
        """What a check records of the image: its hash and stock kernel, and with @with_uml the UML
        kernel built from it (release, source, config, any warning of its build)."""
        m = self.manifest()
        out = {"hash": m["image_hash"], "kernel_package": m["kernel"]["package"],
               "kernel_version": m["kernel"]["version"]}
        if with_uml:
            uml = m.get("uml") or {}
            out["uml"] = {k: uml.get(k) for k in ("release", "source", "config_sha256", "warning")}
        return out


# --------------------------------------------------------------------------
# Helpers around the build host
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Stage 1: base rootfs
# --------------------------------------------------------------------------

POLICY_RC_D = "#!/bin/sh\n# No services start while the image is built.\nexit 101\n"


def build_base(recipe: Recipe, mirrors: Mirrors, dest: Path) -> dict:
    rootfs = dest / "rootfs"
    k = recipe.kernel
    log(f"debootstrap {recipe.suite} (minbase) from {mirrors.debian}")
    run(["debootstrap", "--variant=minbase", f"--arch={recipe.arch}", recipe.suite, str(rootfs), mirrors.debian],
        capture_output=True)

    (rootfs / "etc/apt/sources.list").write_text(mirrors.sources_list(recipe.suite))
    policy = rootfs / "usr/sbin/policy-rc.d"
    policy.write_text(POLICY_RC_D)
    policy.chmod(0o755)
    # Only the modules needed to mount the root disk go into the initramfs:
    # a small initramfs unpacks in a fraction of a second under TCG.
    conf = rootfs / "etc/initramfs-tools"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "modules").write_text("\n".join(recipe.initramfs_modules) + "\n")

    with chroot_mounts(rootfs):
        log("apt-get update")
        in_chroot(rootfs, ["apt-get", "update", "-q"])
        k, warning = kernel_on_offer(rootfs, k)
        # The initramfs config must say MODULES=list before the kernel's
        # postinst generates the initramfs, so install initramfs-tools first.
        log("install initramfs-tools")
        in_chroot(rootfs, ["apt-get", "install", "-y", "-q", "--no-install-recommends", "initramfs-tools"])
        ifs = rootfs / "etc/initramfs-tools/initramfs.conf"
        text = ifs.read_text()
        text = "\n".join("MODULES=list" if ln.startswith("MODULES=") else ln for ln in text.splitlines()) + "\n"
        ifs.write_text(text)
        pkgs = list(recipe.packages) + [f"{k.image_package}={k.version}", f"{k.headers_package}={k.version}"]
        log(f"install {len(pkgs)} packages (kernel {k.image_package}={k.version})")
        in_chroot(rootfs, ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + pkgs)
        in_chroot(rootfs, ["apt-get", "clean"])
        packages = installed_packages(rootfs)

    for p in (rootfs / "var/lib/apt/lists").glob("*_*"):
        p.unlink()
    (rootfs / "etc/hostname").write_text("sslab-vm\n")
    (rootfs / "etc/fstab").write_text("/dev/vda / ext4 rw,noatime 0 1\n")
    release = k.abi
    if not (rootfs / f"boot/vmlinuz-{release}").is_file():
        raise ImageError(f"kernel {release} did not install a /boot/vmlinuz-{release}")
    kernel = {"metapackage": k.metapackage, "package": k.image_package, "headers": k.headers_package,
              "version": k.version, "release": release}
    if warning:
        pinned = recipe.kernel
        kernel.update(warning=warning, pinned={"package": pinned.image_package, "version": pinned.version})
    return {
        "kernel": kernel,
        "packages": packages,
        "mirrors": {"debian": mirrors.debian, "security": mirrors.security},
        "debootstrap": packages_version_of_host("debootstrap"),
        "built": now_iso(),
    }



def resolve_metapackage(rootfs: Path, meta: str) -> KernelPin:
    """What @meta (linux-image-amd64) depends on today, at the version the mirror offers."""
    dep = in_chroot(rootfs, ["apt-cache", "depends", meta], capture=True)
    image_pkg = next((ln.split(":", 1)[1].strip() for ln in dep.splitlines()
                      if ln.strip().startswith("Depends:") and "linux-image-" in ln), None)
    if not image_pkg:
        raise ImageError(f"{meta} names no linux-image package:\n{dep}")
    pol = in_chroot(rootfs, ["apt-cache", "policy", image_pkg], capture=True)
    version = next(ln.split(":", 1)[1].strip() for ln in pol.splitlines() if "Candidate:" in ln)
    abi = image_pkg.removeprefix("linux-image-")
    return KernelPin(meta, abi, image_pkg, f"linux-headers-{abi}", version)


def kernel_on_offer(rootfs: Path, pin: KernelPin) -> tuple[KernelPin, str | None]:
    """The pinned kernel if the mirror still offers it; else what the metapackage resolves to now,
    with a warning (Debian's mirror keeps only the newest security build: a fresh `make` must
    still work, and the manifest records the version actually used)."""
    offered = in_chroot(rootfs, ["apt-cache", "madison", pin.image_package], capture=True)
    versions = {cols[1].strip() for cols in (ln.split("|") for ln in offered.splitlines()) if len(cols) >= 3}
    if pin.version in versions:
        return pin, None
    now = resolve_metapackage(rootfs, pin.metapackage)
    warning = (f"the pinned kernel {pin.image_package}={pin.version} is no longer offered by the mirror; "
               f"building with {now.image_package}={now.version}, what {pin.metapackage} resolves to now "
               f"(run `make image-repin` and commit images/kernel.lock to pin it)")
    log(f"WARNING: {warning}")
    return now, warning


def ensure_base(recipe: Recipe, cache: Path, mirrors: Mirrors | None = None) -> tuple[str, Path]:
    inputs = base_inputs(recipe.images_dir)
    base_hash = hash_inputs(inputs)
    final = cache / "base" / base_hash
    if (final / "base.json").is_file():
        return base_hash, final
    require_host_tools()
    mirrors = mirrors or resolve_mirrors(recipe.suite)
    tmp = cache / "base" / f".{base_hash}.tmp-{os.getpid()}"
    started = time.monotonic()
    with build_dir(tmp):
        info = build_base(recipe, mirrors, tmp)
        info["base_hash"] = base_hash
        info["inputs"] = inputs
        info["build_seconds"] = round(time.monotonic() - started, 1)
        (tmp / "base.json").write_text(json.dumps(info, indent=2, sort_keys=True))
        tmp.rename(final)
    log(f"base {base_hash[:12]} built in {info['build_seconds']} s")
    return base_hash, final


# --------------------------------------------------------------------------
# Stage 2: final image
# --------------------------------------------------------------------------


def build_module(rootfs: Path, kernel_dir: Path, release: str, kdir: str | None = None,
                 arch: str | None = None, name: str = "sslab-module") -> dict:
    """Build kernel/ inside the image's chroot, against @kdir (default: the stock kernel's headers).

    Building in the chroot uses the image's compiler and the headers (or, for
    UML, the built tree) that match the kernel exactly, whatever the build
    host runs.  The module lands in /lib/modules/<release>/extra.
    """
    src = rootfs / "usr/src" / name
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(kernel_dir, src, ignore=shutil.ignore_patterns("build", "tests", "*.o", "*.ko", ".*"))
    make = ["make", "-C", kdir or f"/lib/modules/{release}/build", f"M=/usr/src/{name}"] + \
        ([f"ARCH={arch}"] if arch else [])
    with chroot_mounts(rootfs):
        in_chroot(rootfs, make + ["modules"])
        kos = sorted(src.rglob("*.ko"))
        if not kos:
            raise ImageError("module build produced no .ko")
        dest = rootfs / f"lib/modules/{release}/extra"
        dest.mkdir(parents=True, exist_ok=True)
        built = {}
        for ko in kos:
            shutil.copy2(ko, dest / ko.name)
            built[ko.stem] = {"path": f"/lib/modules/{release}/extra/{ko.name}", "sha256": sha256_file(ko)}
        in_chroot(rootfs, ["depmod", "-a", release])
    # Keep the sources (for provenance) but not the build products.
    in_chroot(rootfs, make + ["clean"])
    return {"present": True, "modules": built}


def compile_guest_python(rootfs: Path) -> dict:
    """The image's standard library compiled into GUEST_PYCACHE by its own Python; return what was."""
    libs = sorted(p.name for p in (rootfs / "usr/lib").glob("python3.*") if (p / "os.py").is_file())
    if not libs:
        raise ImageError("the image has no Python standard library under /usr/lib/python3.*")
    with chroot_mounts(rootfs):
        for lib in libs:
            in_chroot(rootfs, ["python3", "-m", "compileall", "-q", "-x", GUEST_PYCACHE_SKIP, f"/usr/lib/{lib}"],
                      extra_env={"PYTHONPYCACHEPREFIX": f"/{GUEST_PYCACHE}"})
    return {"dir": f"/{GUEST_PYCACHE}", "libs": libs,
            "files": sum(1 for _ in (rootfs / GUEST_PYCACHE).rglob("*.pyc"))}


def build_guest_programs(rootfs: Path, repo: Path) -> dict:
    """Compile GUEST_PROGRAMS in the image's chroot with its compiler; return path -> sha256."""
    out = {}
    src_dir = rootfs / "usr/src/sslab-programs"
    src_dir.mkdir(parents=True, exist_ok=True)
    with chroot_mounts(rootfs):
        for src, target in GUEST_PROGRAMS.items():
            shutil.copy2(repo / src, src_dir / Path(src).name)
            in_chroot(rootfs, ["gcc", *GUEST_CFLAGS, "-o", f"/{target}", f"/usr/src/sslab-programs/{Path(src).name}"])
            out[f"/{target}"] = sha256_file(rootfs / target)
    return out


@contextlib.contextmanager
def bind_mounted(source: Path, target: Path):
    """@source bind-mounted (read-only) at @target for the duration; always undone."""
    target.mkdir(parents=True, exist_ok=True)
    run(["mount", "--bind", str(source), str(target)], capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)
        try:
            target.rmdir()
        except OSError:
            pass


def install_uml(staging: Path, uml: UMLKernel, kernel_dir: Path, changes: KernelChanges | None = None) -> dict:
    """The UML kernel's side of the rootfs: its module tree, our module built against it, and a
    researcher's modules (MODULES=) built the same way."""
    info = uml.info()
    release, tree = info["release"], info["tree_in_chroot"]
    with bind_mounted(uml.tree, staging / tree.lstrip("/")):
        with chroot_mounts(staging):
            # modules.builtin and friends, so that depmod and modprobe work for this release.
            in_chroot(staging, ["make", "-s", "-C", tree, "ARCH=um", "INSTALL_MOD_PATH=/", "modules_install"])
        module = build_module(staging, kernel_dir, release, kdir=tree, arch="um", name="sslab-module-uml")
        researcher = None
        if changes is not None and changes.modules_dir is not None:
            log(f"build your modules ({changes.modules_dir}) for the UML kernel")
            researcher = build_module(staging, changes.modules_dir, release, kdir=tree, arch="um",
                                      name=MODULES_IN_IMAGE)
    return {"release": release, "module": module, "researcher_modules": researcher}


def build_final(base_dir: Path, base_info: dict, inputs: dict, image_hash: str, recipe: Recipe,
                repo: Path, kernel_dir: Path, dest: Path, uml: UMLKernel | None = None,
                changes: KernelChanges | None = None) -> dict:
    staging = dest / "rootfs"
    log("copy base rootfs")
    run(["cp", "-a", "--reflink=auto", str(base_dir / "rootfs"), str(staging)])
    for src, target in GUEST_FILES.items():
        t = staging / target
        t.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / src, t)
        t.chmod(0o755)
    programs = build_guest_programs(staging, repo)
    log("compile the guest's Python standard library")
    pycache = compile_guest_python(staging)
    # Mount points of the shares: the UML guest's root is read-only.  /etc/docker: dockerd
    # writes there; the containerlab backend mounts a tmpfs on it.
    for d in ("sslab/job", "sslab/src", "etc/docker"):
        (staging / d).mkdir(parents=True, exist_ok=True)
    release = base_info["kernel"]["release"]
    log("build module")
    module = build_module(staging, kernel_dir, release)
    uml_part = None
    if uml is not None:
        log("build module for the UML kernel")
        uml_part = install_uml(staging, uml, kernel_dir, changes)

    manifest = make_manifest(base_info, inputs, image_hash, recipe, module)
    manifest["programs"] = programs
    manifest["python_pycache"] = pycache
    manifest["tcp_congestion_controls"] = kernel_congestion_controls(staging, release, module)
    if uml is not None:
        info = uml.info()
        manifest["uml"] = {
            "release": info["release"], "source": info["source"], "config_sha256": info["config_sha256"],
            "binary_sha256": info["binary_sha256"], "uml_hash": info["uml_hash"], "patches": info["patches"],
            "gcc": info.get("gcc"), "warning": info.get("warning"), "module": uml_part["module"],
            **({"cmdline_extra": info["cmdline_extra"]} if info.get("cmdline_extra") else {}),
            **({"compile_of": info["compile_of"]} if info.get("compile_of") else {}),
            "tcp_congestion_controls": kernel_congestion_controls(staging, info["release"], uml_part["module"]),
        }
        if changes is not None and not changes.empty:
            # A researcher's kernel: their patches (built into the binary) and modules (loaded at boot,
            # by these names).  The names their modules register are read when the kernel boots.
            manifest["uml"]["researcher"] = {
                **changes.record(),
                **({"modules": uml_part["researcher_modules"]["modules"]} if uml_part["researcher_modules"] else {})}
        shutil.copy2(uml.binary, dest / "linux")
    etc = staging / "etc/sslab"
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "image.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))

    shutil.copy2(staging / f"boot/vmlinuz-{release}", dest / "vmlinuz")
    shutil.copy2(staging / f"boot/initrd.img-{release}", dest / "initrd.img")
    log(f"pack rootfs into a {recipe.disk_size_gb} GB ext4 image")
    run(["mke2fs", "-q", "-t", "ext4", "-L", "sslabroot", "-d", str(staging), "-F",
         str(dest / "root.img"), f"{recipe.disk_size_gb}G"], capture_output=True)
    # The directory stays: it is the UML guest's root (hostfs, read-only).
    manifest["files"] = {name: sha256_file(dest / name) for name in ("vmlinuz", "initrd.img", "linux")
                         if (dest / name).exists()}
    manifest["rootfs_listing"] = tree_listing(dest / "rootfs")  # checked before every use (cachecheck)
    return manifest


def kernel_congestion_controls(rootfs: Path, release: str, module: dict) -> dict[str, str]:
    """Congestion controls the image's kernel offers: name -> where it comes from.

    Read from the kernel's files (modules.builtin and net/ipv4/tcp_*.ko*),
    plus our module's names, so a matrix can say before any run that a
    control (BBRv2, say) is not in the kernel under test.  A kernel module
    tcp_<name> registers congestion control <name> (Linux's naming rule
    for congestion-control modules; `reno` is always built in).
    """
    mods = rootfs / f"lib/modules/{release}"
    found = {"reno": "built in"}
    builtin = mods / "modules.builtin"
    if builtin.exists():
        for line in builtin.read_text().splitlines():
            name = line.rsplit("/", 1)[-1].removesuffix(".ko")
            if "/net/ipv4/" in line and name.startswith("tcp_") and name != "tcp_diag":
                found[name[4:]] = "built in"
    for ko in sorted((mods / "kernel/net/ipv4").glob("tcp_*.ko*")):
        name = ko.name.split(".ko")[0]
        if name != "tcp_diag":
            found.setdefault(name[4:], f"module {name}")
    if module.get("present"):
        for cc in OUR_CCAS:
            found[cc] = "module tcp_sslab"
        if any(HOOKED_MARK in ko.read_bytes() for ko in mods.glob("extra/tcp_sslab.ko*")):
            for cc in HOOKED_CCAS:
                found[cc] = "module tcp_sslab"
    return dict(sorted(found.items()))


#: bbr3 and bbr2_sslab are compiled into our module, with their parameters, only against a kernel with
#: patch 0005 (kernel/sslab_bbr3.c): the module then declares their read-only count, and the image can
#: list them before any boot (a fleet's hosts are not booted here).
HOOKED_MARK = b"parmtype=bbr3_alloc_failures:"


def make_manifest(base_info: dict, inputs: dict, image_hash: str, recipe: Recipe, module: dict) -> dict:
    """The image manifest: what the image is made of and how it was made."""
    return {
        "schema": 1,
        "image_hash": image_hash,
        "recipe_hash": image_hash,
        "recipe": {"base_hash": base_info["base_hash"], "inputs": inputs, "base_inputs": base_info["inputs"]},
        "suite": recipe.suite,
        "kernel": base_info["kernel"],
        "module": module,
        "packages": base_info["packages"],
        "mirrors": base_info["mirrors"],
        "build_date": now_iso(),
        "base_build_date": base_info["built"],
        "builder": {"debootstrap": base_info["debootstrap"],
                    "mke2fs": tool_version(["mke2fs", "-V"]),
                    "host_kernel": os.uname().release},
    }


def prebuilt_image() -> Image | None:
    """The image a container ships ($SSLAB_PREBUILT_IMAGE: its UML kernel, manifest and rootfs link),
    or None outside one.  Such an image runs UML jobs only; nothing is built."""
    where = os.environ.get("SSLAB_PREBUILT_IMAGE")
    if not where:
        return None
    image = Image(Path(where))
    missing = [p.name for p in (image.uml_binary, image.manifest_path, image.rootfs) if not p.exists()]
    if missing:
        raise ImageError(f"the prebuilt image {where} lacks {', '.join(missing)}")
    if damage := image_damage(image.root, shipped=True):
        raise ImageError(f"the prebuilt image {where} is damaged ({'; '.join(damage)}): nothing was booted; "
                         f"build the container image again (make container)")
    return image


def tree_hashes(recipe: Recipe, cache: Path, repo: Path, kernel_dir: Path,
                changes: KernelChanges | None) -> tuple[str, str] | None:
    """The hashes of the image and UML kernel this tree builds, or None while the base stage (whose
    hash they depend on) is not built."""
    base_hash = hash_inputs(base_inputs(recipe.images_dir))
    if not (cache / "base" / base_hash / "base.json").is_file():
        return None
    uml_hash = hash_inputs(uml_inputs(repo / "images", base_hash, changes))
    return hash_inputs(final_inputs(base_hash, repo, kernel_dir, uml_hash, changes)), uml_hash


def built_image(recipe: Recipe, cache: Path, repo: Path, kernel_dir: Path,
                changes: KernelChanges | None) -> Image | None:
    """The complete image of this recipe if the cache has it, else None (nothing is built)."""
    if (hashes := tree_hashes(recipe, cache, repo, kernel_dir, changes)) is None:
        return None
    image = Image(cache / "images" / hashes[0])
    return image if image.is_complete() else None


def prune_cache(keep: int, dry_run: bool = False, cache: Path | None = None, repo: Path = paths.REPO_ROOT):
    """`make image-prune`: cachegc.prune, keeping this tree's image and UML kernel."""
    cache = cache or paths.cache_dir()
    hashes = tree_hashes(Recipe.load(repo / "images"), cache, repo, repo / "kernel", KernelChanges.from_env())
    with cache_lock(cache):
        return prune(cache, keep, *(hashes or (None, None)), dry_run=dry_run, orphans=True)


def ensure_image(cache: Path | None = None, repo: Path = paths.REPO_ROOT,
                 kernel_dir: Path | None = None, mirrors: Mirrors | None = None,
                 changes: KernelChanges | None = None) -> Image:
    """Return the cached image for the current recipe, building what is missing
    (in a container: the image it ships).  @changes: a researcher's patches and modules (default:
    KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES= from the environment)."""
    changes = KernelChanges.from_env() if changes is None else changes
    if (shipped := prebuilt_image()) is not None:
        if not changes.empty:
            raise KernelChangesRefused("KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES= build a kernel of their own; a container "
                                       "runs the image it ships: run outside the container")
        return shipped
    cache = cache or paths.cache_dir()
    kernel_dir = kernel_dir or repo / "kernel"
    recipe = Recipe.load(repo / "images")
    # An image is renamed into place only when complete, so one that is there needs no lock: a run
    # does not wait for another image's build (a kernel source's takes minutes) to use its own.
    if (built := built_image(recipe, cache, repo, kernel_dir, changes)) is not None and not image_damage(built.root):
        built.mark_used()
        return built
    with cache_lock(cache):
        # Before anything else: a build killed earlier (SIGKILL, a lost machine) may have left its
        # chroot's mounts and directories; nothing else holds the lock, so they are stale.
        remove_stale_builds(cache)
        base_hash, base_dir = ensure_base(recipe, cache, mirrors)
        uml_hash = hash_inputs(uml_inputs(repo / "images", base_hash, changes))
        inputs = final_inputs(base_hash, repo, kernel_dir, uml_hash, changes)
        image_hash = hash_inputs(inputs)
        image = Image(cache / "images" / image_hash)
        if image.is_complete():
            if not (damage := image_damage(image.root)):
                image.mark_used()
                return image
            set_aside(image.root, damage, "image")
        require_host_tools()
        prune_if_short(cache, image_hash, uml_hash)
        _, uml = ensure_uml(cache, repo / "images", base_hash, base_dir,
                            lambda: mirrors or resolve_mirrors(recipe.suite), changes)
        base_info = json.loads((base_dir / "base.json").read_text())
        refuse_if_short(cache, FINAL_STAGE_NEEDS, f"image {image_hash[:12]}")
        tmp = cache / "images" / f".{image_hash}.tmp-{os.getpid()}"
        started = time.monotonic()
        with build_dir(tmp):
            manifest = build_final(base_dir, base_info, inputs, image_hash, recipe, repo, kernel_dir, tmp, uml=uml,
                                   changes=changes)
            manifest["final_build_seconds"] = round(time.monotonic() - started, 1)
            manifest["base_build_seconds"] = base_info.get("build_seconds")
            # The key was taken before the build read the sources: an edit meanwhile (kernel/, the
            # guest's code) would put other code under this key, so such an image is not kept.
            if (now := hash_inputs(final_inputs(base_hash, repo, kernel_dir, uml_hash, changes))) != image_hash:
                raise ImageError(f"the sources changed while image {image_hash[:12]} was built (they are now "
                                 f"{now[:12]}'s): it is not kept; build again")
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
            tmp.rename(image.root)
        log(f"image {image_hash[:12]} ready in {image.root}")
        return image


# --------------------------------------------------------------------------
# Repin: resolve the kernel metapackage to a concrete package and version
# --------------------------------------------------------------------------


def repin(repo: Path = paths.REPO_ROOT, mirrors: Mirrors | None = None) -> KernelPin:
    """Resolve recipe.yaml's kernel metapackage, and the UML kernel's source package, in a scratch
    minbase chroot; rewrite images/kernel.lock and images/uml/source.lock."""
    data = yaml.safe_load((repo / "images/recipe.yaml").read_text())
    suite, meta = data["suite"], data["kernel_metapackage"]
    require_host_tools()
    mirrors = mirrors or resolve_mirrors(suite)
    remove_stale_builds(paths.cache_dir())
    scratch = paths.cache_dir() / f".repin-{os.getpid()}"
    try:
        run(["debootstrap", "--variant=minbase", suite, str(scratch), mirrors.debian], capture_output=True)
        (scratch / "etc/apt/sources.list").write_text(mirrors.sources_list(suite))
        with chroot_mounts(scratch):
            in_chroot(scratch, ["apt-get", "update", "-q"])
            pin = resolve_metapackage(scratch, meta)
            src_lock = repo / "images/uml/source.lock"
            src_pkg = yaml.safe_load(src_lock.read_text())["package"]
            pol = in_chroot(scratch, ["apt-cache", "policy", src_pkg], capture=True)
            src_version = next(ln.split(":", 1)[1].strip() for ln in pol.splitlines() if "Candidate:" in ln)
    finally:
        remove_tree(scratch)
    src_lock.write_text(
        "# The Debian package the UML kernel is built from, and its version.\n"
        "# `make image-repin` rewrites it.  When the mirror no longer offers this\n"
        "# version, the build takes the one it offers, warns, and records both.\n"
        + yaml.safe_dump({"package": src_pkg, "version": src_version,
                          "resolved_on": _dt.date.today().isoformat()}, sort_keys=False))
    text = (
        "# Written by `make image-repin` from the metapackage in recipe.yaml.\n"
        "# Commit it: the image installs exactly this kernel and its headers.\n"
        + yaml.safe_dump({**pin.__dict__, "resolved_on": _dt.date.today().isoformat()}, sort_keys=False)
    )
    (repo / "images/kernel.lock").write_text(text)
    return pin
