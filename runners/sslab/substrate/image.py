"""Build the testbed VM image from Debian's packages, and cache it.

The image is built in two stages, each cached under the hash of its inputs:

  base   debootstrap'd rootfs + the pinned stock kernel, its headers and the
         recipe's packages.  Inputs: images/recipe.yaml, images/kernel.lock,
         BASE_BUILDER_VERSION.  Takes minutes (package downloads).
  final  a copy of the base plus our in-VM init and agent, our module built
         against the image's headers, and the manifest; packed into an ext4
         disk image.  Inputs: the base hash, images/guest/*, the agent,
         kernel/ sources, FINAL_BUILDER_VERSION.  Takes about a minute.

Splitting the stages means that editing the module or the agent does not
download a distribution again.  The *recipe hash* recorded in the manifest
is the final stage's key, which covers both.

Every stage is built in a temporary directory and renamed into place only
when complete, so an interrupted build never leaves something that looks
finished.  A lock file serialises concurrent builds of the same cache.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import yaml

from .. import paths
from ..ccas import OUR_CCAS
from .mirrors import Mirrors, resolve_mirrors

#: Bump when the base stage's procedure changes in a way that changes its output.
BASE_BUILDER_VERSION = 1
#: Bump when the final stage's procedure changes.
FINAL_BUILDER_VERSION = 2  # 2: the manifest lists the kernel's congestion controls

#: Files of the source tree baked into the final image (host path -> guest path).
GUEST_FILES = {
    "images/guest/sslab-init": "usr/local/sbin/sslab-init",
    "runners/sslab/substrate/agent.py": "usr/local/lib/sslab/agent.py",
}


class ImageError(RuntimeError):
    pass


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


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def hash_inputs(parts: dict[str, str]) -> str:
    """Hash a name -> digest mapping, independent of insertion order."""
    h = hashlib.sha256()
    for name in sorted(parts):
        h.update(f"{name}\0{parts[name]}\n".encode())
    return h.hexdigest()


def base_inputs(images_dir: Path) -> dict[str, str]:
    return {
        "images/recipe.yaml": sha256_file(images_dir / "recipe.yaml"),
        "images/kernel.lock": sha256_file(images_dir / "kernel.lock"),
        "base_builder_version": str(BASE_BUILDER_VERSION),
    }


def module_sources(kernel_dir: Path) -> list[Path]:
    """The files of kernel/ that go into the module build (not build output)."""
    if not kernel_dir.is_dir():
        return []
    keep = []
    for p in sorted(kernel_dir.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(kernel_dir)
        if rel.parts[0] in ("build", "tests") or p.name.startswith("."):
            continue
        if p.suffix in (".o", ".ko", ".mod", ".cmd", ".symvers", ".order") or p.name.endswith(".mod.c"):
            continue
        keep.append(p)
    return keep


def final_inputs(base_hash: str, repo: Path, kernel_dir: Path) -> dict[str, str]:
    parts = {"base": base_hash, "final_builder_version": str(FINAL_BUILDER_VERSION)}
    for src in GUEST_FILES:
        parts[src] = sha256_file(repo / src)
    for p in module_sources(kernel_dir):
        parts["kernel/" + str(p.relative_to(kernel_dir))] = sha256_file(p)
    return parts


def has_module(kernel_dir: Path) -> bool:
    """Our module is built when kernel/ has a kbuild file naming objects."""
    kbuild = kernel_dir / "Kbuild"
    return kbuild.is_file() and "obj-m" in kbuild.read_text()


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
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def manifest(self) -> dict:
        return json.loads(self.manifest_path.read_text())

    def is_complete(self) -> bool:
        return all(p.is_file() for p in (self.disk, self.kernel, self.initrd, self.manifest_path))


# --------------------------------------------------------------------------
# Helpers around the build host
# --------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"[image] {msg}", flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, check=True, **kw)
    except FileNotFoundError as e:
        raise ImageError(f"build host lacks {cmd[0]!r} (run `make image`, which installs it)") from e
    except subprocess.CalledProcessError as e:
        out = (e.stderr or b"")
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        raise ImageError(f"command failed ({e.returncode}): {' '.join(cmd)}\n{out[-3000:]}") from e


def require_host_tools() -> None:
    need = {
        "debootstrap": "debootstrap",
        "mke2fs": "e2fsprogs",
        "chroot": "coreutils",
        "qemu-system-x86_64": "qemu-system-x86",
    }
    missing = [f"{tool} (Debian package {pkg})" for tool, pkg in need.items() if not shutil.which(tool)]
    if missing:
        raise ImageError("build host lacks: " + ", ".join(missing))
    if os.geteuid() != 0:
        raise ImageError("building the image needs root (debootstrap and chroot)")


@contextlib.contextmanager
def cache_lock(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "build.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def chroot_mounts(rootfs: Path) -> Iterator[None]:
    """Mount /proc, /sys, /dev and /dev/pts inside the rootfs, always undone."""
    mounted: list[Path] = []
    try:
        for fstype, src, target, opts in (
            ("proc", "proc", "proc", []),
            ("sysfs", "sysfs", "sys", []),
            (None, "/dev", "dev", ["--bind"]),
            ("devpts", "devpts", "dev/pts", []),
        ):
            tgt = rootfs / target
            tgt.mkdir(parents=True, exist_ok=True)
            cmd = ["mount"] + opts + ([] if fstype is None else ["-t", fstype]) + [src, str(tgt)]
            run(cmd, capture_output=True)
            mounted.append(tgt)
        yield
    finally:
        for tgt in reversed(mounted):
            subprocess.run(["umount", "-l", str(tgt)], capture_output=True)


def in_chroot(rootfs: Path, cmd: list[str], capture: bool = False) -> str:
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "DEBIAN_FRONTEND": "noninteractive",
        "LC_ALL": "C",
        "HOME": "/root",
    }
    res = run(["chroot", str(rootfs)] + cmd, env=env, capture_output=capture, text=True)
    return res.stdout if capture else ""


def installed_packages(rootfs: Path) -> dict[str, str]:
    out = in_chroot(rootfs, ["dpkg-query", "-W", "-f", "${Package}\t${Version}\n"], capture=True)
    pkgs = {}
    for line in out.splitlines():
        name, _, version = line.partition("\t")
        if name:
            pkgs[name] = version
    return pkgs


def tool_version(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (res.stdout or res.stderr).strip().splitlines()[0] if (res.stdout or res.stderr).strip() else "unknown"


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


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
        offered = in_chroot(rootfs, ["apt-cache", "madison", k.image_package], capture=True)
        versions = {cols[1].strip() for cols in (ln.split("|") for ln in offered.splitlines()) if len(cols) >= 3}
        if k.version not in versions:
            raise ImageError(
                f"the pinned kernel {k.image_package}={k.version} is no longer offered by the mirror "
                f"(it offers: {offered.strip() or 'nothing'}); run `make image-repin` and commit images/kernel.lock"
            )
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
    return {
        "kernel": {"metapackage": k.metapackage, "package": k.image_package, "headers": k.headers_package,
                   "version": k.version, "release": release},
        "packages": packages,
        "mirrors": {"debian": mirrors.debian, "security": mirrors.security},
        "debootstrap": packages_version_of_host("debootstrap"),
        "built": now_iso(),
    }


def packages_version_of_host(pkg: str) -> str:
    try:
        res = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
        return res.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def ensure_base(recipe: Recipe, cache: Path, mirrors: Mirrors | None = None) -> tuple[str, Path]:
    inputs = base_inputs(recipe.images_dir)
    base_hash = hash_inputs(inputs)
    final = cache / "base" / base_hash
    if (final / "base.json").is_file():
        return base_hash, final
    require_host_tools()
    mirrors = mirrors or resolve_mirrors(recipe.suite)
    tmp = cache / "base" / f".{base_hash}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    started = time.monotonic()
    try:
        info = build_base(recipe, mirrors, tmp)
        info["base_hash"] = base_hash
        info["inputs"] = inputs
        info["build_seconds"] = round(time.monotonic() - started, 1)
        (tmp / "base.json").write_text(json.dumps(info, indent=2, sort_keys=True))
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"base {base_hash[:12]} built in {info['build_seconds']} s")
    return base_hash, final


# --------------------------------------------------------------------------
# Stage 2: final image
# --------------------------------------------------------------------------


def build_module(rootfs: Path, kernel_dir: Path, release: str) -> dict:
    """Build kernel/ against the image's own headers, inside the image's chroot.

    Building in the chroot uses the image's compiler and the headers package
    that matches the kernel exactly, whatever the build host runs.
    """
    if not has_module(kernel_dir):
        return {"present": False, "reason": "kernel/ has no Kbuild naming a module yet"}
    src = rootfs / "usr/src/sslab-module"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(kernel_dir, src, ignore=shutil.ignore_patterns("build", "tests", "*.o", "*.ko", ".*"))
    with chroot_mounts(rootfs):
        in_chroot(rootfs, ["make", "-C", f"/lib/modules/{release}/build", "M=/usr/src/sslab-module", "modules"])
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
    in_chroot(rootfs, ["make", "-C", f"/lib/modules/{release}/build", "M=/usr/src/sslab-module", "clean"])
    return {"present": True, "modules": built}


def build_final(base_dir: Path, base_info: dict, inputs: dict, image_hash: str, recipe: Recipe,
                repo: Path, kernel_dir: Path, dest: Path) -> dict:
    staging = dest / "rootfs"
    log("copy base rootfs")
    run(["cp", "-a", "--reflink=auto", str(base_dir / "rootfs"), str(staging)])
    for src, target in GUEST_FILES.items():
        t = staging / target
        t.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / src, t)
        t.chmod(0o755)
    release = base_info["kernel"]["release"]
    log("build module" if has_module(kernel_dir) else "no module sources yet: module step skipped")
    module = build_module(staging, kernel_dir, release)

    manifest = make_manifest(base_info, inputs, image_hash, recipe, module)
    manifest["tcp_congestion_controls"] = kernel_congestion_controls(staging, release, module)
    etc = staging / "etc/sslab"
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "image.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))

    shutil.copy2(staging / f"boot/vmlinuz-{release}", dest / "vmlinuz")
    shutil.copy2(staging / f"boot/initrd.img-{release}", dest / "initrd.img")
    log(f"pack rootfs into a {recipe.disk_size_gb} GB ext4 image")
    run(["mke2fs", "-q", "-t", "ext4", "-L", "sslabroot", "-d", str(staging), "-F",
         str(dest / "root.img"), f"{recipe.disk_size_gb}G"], capture_output=True)
    shutil.rmtree(staging)
    manifest["files"] = {name: sha256_file(dest / name) for name in ("vmlinuz", "initrd.img")}
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
    return dict(sorted(found.items()))


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


def ensure_image(cache: Path | None = None, repo: Path = paths.REPO_ROOT,
                 kernel_dir: Path | None = None, mirrors: Mirrors | None = None) -> Image:
    """Return the cached image for the current recipe, building what is missing."""
    cache = cache or paths.cache_dir()
    kernel_dir = kernel_dir or repo / "kernel"
    recipe = Recipe.load(repo / "images")
    with cache_lock(cache):
        base_hash, base_dir = ensure_base(recipe, cache, mirrors)
        inputs = final_inputs(base_hash, repo, kernel_dir)
        image_hash = hash_inputs(inputs)
        image = Image(cache / "images" / image_hash)
        if image.is_complete():
            return image
        require_host_tools()
        base_info = json.loads((base_dir / "base.json").read_text())
        tmp = cache / "images" / f".{image_hash}.tmp-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        started = time.monotonic()
        try:
            manifest = build_final(base_dir, base_info, inputs, image_hash, recipe, repo, kernel_dir, tmp)
            manifest["final_build_seconds"] = round(time.monotonic() - started, 1)
            manifest["base_build_seconds"] = base_info.get("build_seconds")
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
            tmp.rename(image.root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        log(f"image {image_hash[:12]} ready in {image.root}")
        return image


# --------------------------------------------------------------------------
# Repin: resolve the kernel metapackage to a concrete package and version
# --------------------------------------------------------------------------


def repin(repo: Path = paths.REPO_ROOT, mirrors: Mirrors | None = None) -> KernelPin:
    """Resolve recipe.yaml's kernel metapackage in a scratch minbase chroot."""
    data = yaml.safe_load((repo / "images/recipe.yaml").read_text())
    suite, meta = data["suite"], data["kernel_metapackage"]
    require_host_tools()
    mirrors = mirrors or resolve_mirrors(suite)
    scratch = paths.cache_dir() / f".repin-{os.getpid()}"
    try:
        run(["debootstrap", "--variant=minbase", suite, str(scratch), mirrors.debian], capture_output=True)
        (scratch / "etc/apt/sources.list").write_text(mirrors.sources_list(suite))
        with chroot_mounts(scratch):
            in_chroot(scratch, ["apt-get", "update", "-q"])
            dep = in_chroot(scratch, ["apt-cache", "depends", meta], capture=True)
            image_pkg = next((ln.split(":", 1)[1].strip() for ln in dep.splitlines()
                              if ln.strip().startswith("Depends:") and "linux-image-" in ln), None)
            if not image_pkg:
                raise ImageError(f"{meta} names no linux-image package:\n{dep}")
            pol = in_chroot(scratch, ["apt-cache", "policy", image_pkg], capture=True)
            version = next(ln.split(":", 1)[1].strip() for ln in pol.splitlines() if "Candidate:" in ln)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    abi = image_pkg.removeprefix("linux-image-")
    pin = KernelPin(meta, abi, image_pkg, f"linux-headers-{abi}", version)
    text = (
        "# Written by `make image-repin` from the metapackage in recipe.yaml.\n"
        "# Commit it: the image installs exactly this kernel and its headers.\n"
        + yaml.safe_dump({**pin.__dict__, "resolved_on": _dt.date.today().isoformat()}, sort_keys=False)
    )
    (repo / "images/kernel.lock").write_text(text)
    return pin
