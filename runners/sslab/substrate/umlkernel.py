"""The User-Mode Linux kernel of the virtual-time testbed, built from Debian's kernel source.

UML is Linux built as an ordinary host program (ARCH=um).  Booted with
`time-travel=inf-cpu`, its clock moves only when the guest waits for a
timer: CPU work takes no guest time and host load cannot bend the clock
(docs/virtual-time.md has the measurements).  Debian ships no
UML kernel with time travel, veth or the qdiscs we need, so the image
builds one, as a cached stage of its own:

    inputs   images/uml/config (options on top of defconfig),
             images/uml/patches/*.patch (our own), images/uml/source.lock
             (the linux-source package and version), the base stage's hash
             (the compiler is the image's), UML_BUILDER_VERSION
    build    in a throw-away copy of the base rootfs: install the source
             package, unpack it, apply the patches, defconfig + our
             options, olddefconfig, check that every option stuck,
             `make ARCH=um linux modules`
    output   <cache>/uml/<hash>/linux (stripped), tree/ (the built source
             tree, which our module is compiled against), uml.json

Two source files can build one kernel: 7.3-seccomp.yaml is 7.3.yaml's
package, version and patches with other boot words (cmdline_extra).  The
stage's key names the file, so their kernels and runs are kept apart; the
compile is keyed by what it is built from (compile_inputs), and a kernel
whose compile an intact cached kernel already made is that kernel's binary
and tree, copied (reuse_compile), not compiled again (make test compiled
7.3's twice).

Debian's mirror keeps only the newest security build of a package.  When
the pinned source version is gone, the build takes the version the mirror
offers, says so, and records both in uml.json and the image manifest;
`make image-repin` rewrites the pin.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .buildtools import (ImageError, build_dir, chroot_mounts, hash_inputs, in_chroot, log, now_iso, remove_tree, run,
                          sha256_file, tool_version)
from .cachecheck import set_aside, tree_listing, uml_damage
from .cachegc import mark_used
from .kernelchanges import KernelChanges
from .mirrors import Mirrors

#: Bump when the build procedure changes in a way that changes its output.
#: 2: fixed build stamp (KBUILD_REPRODUCIBLE).
UML_BUILDER_VERSION = 2

#: The kernel writes its build time, user and host into its binary ("#1 Mon Nov 23 01:08:23 UTC
#: 2026"); two builds of one recipe then differ, and a guest's memory with them, which moved
#: chaotic runs (E9's two-flow cells, measured) between two machines given the same seed.  Fixed
#: values make the binary a function of the recipe alone.
KBUILD_REPRODUCIBLE = {"KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 2026", "KBUILD_BUILD_USER": "sslab",
                       "KBUILD_BUILD_HOST": "sslab", "KBUILD_BUILD_VERSION": "1"}
#: Where the tree is built inside the build chroot (and bind-mounted again for module builds).
TREE_IN_CHROOT = "/usr/src/sslab-uml"
#: Host packages the kernel build needs besides the base rootfs's gcc and make.
BUILD_PACKAGES = ("flex", "bison", "bc", "xz-utils", "patch", "binutils", "libc6-dev", "libssl-dev")


@dataclass(frozen=True)
class SourcePin:
    """A linux-source package and version; for another source than the default (its file in
    images/uml/sources/), the suite that carries it and which of our patches it takes."""

    package: str
    version: str
    suite: str | None = None
    patches: tuple[str, ...] | None = None  # None: every patch in images/uml/patches/
    #: Words this kernel's boot needs after the testbed's command line (uml.kernel_cmdline).
    cmdline_extra: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: Path) -> "SourcePin":
        if not path.exists():
            raise ImageError(f"{path} is missing: run `make image-repin`")
        data = yaml.safe_load(path.read_text()) or {}
        missing = [k for k in ("package", "version") if not data.get(k)]
        if missing:
            raise ImageError(f"{path}: missing {', '.join(missing)}; run `make image-repin`")
        patches = data.get("patches")
        if patches is not None and not (isinstance(patches, list) and all(isinstance(x, str) for x in patches)):
            raise ImageError(f"{path}: patches must be a list of paths under images/uml/patches/")
        extra = data.get("cmdline_extra") or []
        if not (isinstance(extra, list) and all(isinstance(x, str) and x and " " not in x for x in extra)):
            raise ImageError(f"{path}: cmdline_extra must be a list of words")
        return cls(str(data["package"]), str(data["version"]), data.get("suite"),
                   None if patches is None else tuple(patches), tuple(extra))

    def patch_files(self, images_dir: Path) -> list[Path]:
        """Our patches for this source, in order: the ones it lists (paths under images/uml/patches/;
        a sub-directory holds patches only newer sources take), else every *.patch directly in it."""
        folder = images_dir / "uml" / "patches"
        if self.patches is None:
            return sorted(folder.glob("*.patch"))
        missing = [n for n in self.patches if not (folder / n).is_file()]
        if missing:
            raise ImageError(f"{self.package}: no patch {', '.join(missing)} in {folder}")
        return [folder / n for n in self.patches]


def source_pin(images_dir: Path, changes: KernelChanges | None = None) -> tuple[Path, SourcePin]:
    """The source file (source.lock, or KERNEL_SOURCE's images/uml/sources/<name>.yaml) and its pin."""
    path = changes.source if changes is not None and changes.source is not None else images_dir / "uml" / "source.lock"
    return path, SourcePin.load(path)


@dataclass(frozen=True)
class ConfigLine:
    name: str
    value: str  # "y", "n", a number, or a quoted string


def read_config(path: Path) -> list[ConfigLine]:
    """images/uml/config: `NAME=value` lines; '#' starts a comment."""
    out = []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Z0-9_]+)=(y|n|-?[0-9]+|\"[^\"]*\")", line)
        if not m:
            raise ImageError(f"{path}:{n}: expected NAME=y|n|number|\"string\", got {raw.strip()!r}")
        out.append(ConfigLine(m[1], m[2]))
    return out


def config_mismatches(lines: list[ConfigLine], dot_config: str) -> list[str]:
    """The options of @lines that a built .config does not carry as asked."""
    have: dict[str, str] = {}
    for ln in dot_config.splitlines():
        if m := re.fullmatch(r"CONFIG_([A-Z0-9_]+)=(.*)", ln):
            have[m[1]] = m[2]
        elif m := re.fullmatch(r"# CONFIG_([A-Z0-9_]+) is not set", ln):
            have[m[1]] = "n"
    bad = []
    for c in lines:
        got = have.get(c.name, "n")
        if got != c.value:
            bad.append(f"{c.name}={c.value} (the built config has {got})")
    return bad


def source_entry(images_dir: Path, changes: KernelChanges | None = None) -> str:
    """The source file's name in the UML stage's key."""
    if changes is None or changes.source is None:
        return "images/uml/source.lock"
    return f"images/uml/sources/{changes.source.name}"


def uml_inputs(images_dir: Path, base_hash: str, changes: KernelChanges | None = None) -> dict[str, str]:
    """The UML stage's key: our recipe, and a researcher's patches when there are any (none: the key
    is the one it always was)."""
    uml = images_dir / "uml"
    source, pin = source_pin(images_dir, changes)
    parts = {"base": base_hash, "uml_builder_version": str(UML_BUILDER_VERSION),
             "images/uml/config": sha256_file(uml / "config"),
             source_entry(images_dir, changes): sha256_file(source)}
    if pin.suite:
        # How another suite's packages enter the build chroot (build_uml); the default has none.
        parts["uml_source_suite_priority"] = "100"
    for p in pin.patch_files(images_dir):
        parts[f"images/uml/patches/{p.relative_to(uml / 'patches')}"] = sha256_file(p)
    if changes is not None:
        parts.update(changes.uml_inputs())
    return parts


def compile_inputs(images_dir: Path, base_hash: str, changes: KernelChanges | None = None) -> dict[str, str]:
    """What the compiled kernel (binary and tree) is made from: the stage's key with the source file
    replaced by what build_uml takes from it (package, version, suite, the patches in their order).
    A source file's other words (cmdline_extra: how the kernel boots) are not in it."""
    _, pin = source_pin(images_dir, changes)
    parts = uml_inputs(images_dir, base_hash, changes)
    del parts[source_entry(images_dir, changes)]
    parts["linux_source"] = f"{pin.package}={pin.version}"
    if pin.suite:
        parts["linux_source_suite"] = pin.suite
    # The key's entries are hashed in name order; the order the patches go on in is the build's.
    parts["patch_order"] = " ".join(p.name for p in pin.patch_files(images_dir))
    return parts


@dataclass(frozen=True)
class UMLKernel:
    """A built UML kernel in the cache."""

    root: Path

    @property
    def binary(self) -> Path:
        return self.root / "linux"

    @property
    def tree(self) -> Path:
        return self.root / "tree"

    def info(self) -> dict:
        return json.loads((self.root / "uml.json").read_text())

    def is_complete(self) -> bool:
        return (self.root / "uml.json").is_file() and self.binary.is_file()


def offered_versions(rootfs: Path, package: str) -> list[str]:
    out = in_chroot(rootfs, ["apt-cache", "madison", package], capture=True)
    return [cols[1].strip() for cols in (ln.split("|") for ln in out.splitlines()) if len(cols) >= 3]


def build_uml(base_rootfs: Path, images_dir: Path, mirrors: Mirrors, dest: Path,
              changes: KernelChanges | None = None) -> dict:
    """Build the UML kernel into @dest (a fresh directory); return its record.  A researcher's patches
    (@changes) go on after ours, before the config; one that fails stops here (PatchRefused)."""
    _, pin = source_pin(images_dir, changes)
    config = read_config(images_dir / "uml" / "config")
    patches = pin.patch_files(images_dir)
    chroot = dest / "chroot"
    log("UML kernel: copy the base rootfs as a build chroot")
    run(["cp", "-a", "--reflink=auto", str(base_rootfs), str(chroot)])
    # The chroot stays bookworm (its compiler builds the kernel); another source's suite is added.
    extra = f"deb {mirrors.debian} {pin.suite} main\n" if pin.suite and pin.suite != "bookworm" else ""
    (chroot / "etc/apt/sources.list").write_text(mirrors.sources_list("bookworm") + extra)
    if extra:
        # ...at the priority of a backports suite: only what bookworm lacks comes from it.  At its
        # default 500, trixie replaced the chroot's libc (2.36 -> 2.41) while installing 6.12, and
        # the tree's modpost, built against it, could not run in the image's bookworm chroot.
        (chroot / "etc/apt/preferences.d").mkdir(parents=True, exist_ok=True)
        (chroot / "etc/apt/preferences.d/sslab-source-suite").write_text(
            f"Package: *\nPin: release n={pin.suite}\nPin-Priority: 100\n")
    record: dict = {"source": {"package": pin.package, "pinned_version": pin.version,
                               **({"suite": pin.suite} if pin.suite else {})},
                    **({"cmdline_extra": list(pin.cmdline_extra)} if pin.cmdline_extra else {})}
    try:
        with chroot_mounts(chroot):
            in_chroot(chroot, ["apt-get", "update", "-q"])
            offered = offered_versions(chroot, pin.package)
            if not offered:
                raise ImageError(f"the mirror offers no {pin.package}: cannot build the UML kernel")
            version = pin.version
            if pin.version not in offered:
                version = offered[0]
                warning = (f"the pinned {pin.package}={pin.version} is no longer offered by the mirror; "
                           f"building from {version}, the version it offers (run `make image-repin` to pin it)")
                log(f"WARNING: {warning}")
                record["warning"] = warning
            record["source"]["version"] = version
            log(f"UML kernel: install {pin.package}={version} and the build tools")
            in_chroot(chroot, ["apt-get", "install", "-y", "-q", "--no-install-recommends",
                               f"{pin.package}={version}", *BUILD_PACKAGES])
            tarballs = sorted((chroot / "usr/src").glob("linux-source-*.tar.xz"))
            if len(tarballs) != 1:
                raise ImageError(f"{pin.package} installed {len(tarballs)} source tarballs, expected one")
            record["source"]["tarball_sha256"] = sha256_file(tarballs[0])
            work = chroot / TREE_IN_CHROOT.lstrip("/")
            work.mkdir(parents=True)
            run(["tar", "xf", str(tarballs[0]), "-C", str(work)])
            (top,) = [p for p in work.iterdir() if p.is_dir()]
            src = f"{TREE_IN_CHROOT}/{top.name}"
            for p in patches:
                log(f"UML kernel: apply {p.name}")
                run(["patch", "-p1", "--forward", "--batch", "-d", str(top), "-i", str(p)], capture_output=True)
            if changes is not None and changes.patches:
                changes.apply_patches(top, log=log)
                record["researcher_patches"] = changes.record()["patches"]
            in_chroot(chroot, ["make", "-s", "-C", src, "ARCH=um", "defconfig"])
            for c in config:
                if c.value == "y":
                    args = ["--enable", c.name]
                elif c.value == "n":
                    args = ["--disable", c.name]
                elif c.value.startswith('"'):
                    args = ["--set-str", c.name, c.value.strip('"')]
                else:
                    args = ["--set-val", c.name, c.value]
                in_chroot(chroot, [f"{src}/scripts/config", "--file", f"{src}/.config", *args])
            in_chroot(chroot, ["make", "-s", "-C", src, "ARCH=um", "olddefconfig"])
            bad = config_mismatches(config, (top / ".config").read_text())
            if bad:
                raise ImageError("the UML kernel's config did not take these options (a dependency is missing "
                                 "or the option does not exist in this source):\n  " + "\n  ".join(bad))
            jobs = str(os.cpu_count() or 1)
            log(f"UML kernel: make ARCH=um linux modules -j{jobs} (5-15 min on 2 cores; a line a minute)")
            t0 = time.monotonic()
            in_chroot(chroot, ["make", "-s", "-C", src, "ARCH=um", f"-j{jobs}", "linux", "modules"],
                      extra_env=KBUILD_REPRODUCIBLE)
            record["compile_seconds"] = round(time.monotonic() - t0, 1)
            release = in_chroot(chroot, ["make", "-s", "-C", src, "ARCH=um", "kernelrelease"], capture=True).strip()
            record["gcc"] = in_chroot(chroot, ["gcc", "--version"], capture=True).splitlines()[0]
        shutil.copy2(top / "linux", dest / "linux")
        run(["strip", str(dest / "linux")])
        record.update(release=release, tree_in_chroot=src, config_sha256=sha256_file(top / ".config"),
                      binary_sha256=sha256_file(dest / "linux"), binary_bytes=(dest / "linux").stat().st_size,
                      patches={str(p.relative_to(images_dir / "uml" / "patches")): sha256_file(p) for p in patches},
                      built=now_iso(),
                      strip=tool_version(["strip", "--version"]))
        # Keep the built tree (module builds need it), not the rest of the chroot; its listing is
        # checked before it is built against again (cachecheck.uml_damage).
        os.rename(top, dest / "tree")
        record["tree_listing"] = tree_listing(dest / "tree")
    finally:
        remove_tree(chroot)
    return record


def ensure_uml(cache: Path, images_dir: Path, base_hash: str, base_dir: Path, mirrors_factory,
               changes: KernelChanges | None = None) -> tuple[str, UMLKernel]:
    """The cached UML kernel for these inputs, built if missing.  (The caller holds the cache lock.)"""
    inputs = uml_inputs(images_dir, base_hash, changes)
    uml_hash = hash_inputs(inputs)
    compile_key = hash_inputs(compile_inputs(images_dir, base_hash, changes))
    kernel = UMLKernel(cache / "uml" / uml_hash)
    if kernel.is_complete():
        if not (damage := uml_damage(kernel.root)):
            mark_used(kernel.root)
            return uml_hash, kernel
        set_aside(kernel.root, damage, "UML kernel")
    tmp = cache / "uml" / f".{uml_hash}.tmp-{os.getpid()}"
    started = time.monotonic()
    with build_dir(tmp):
        twin = compiled_twin(cache / "uml", compile_key)
        if twin is not None:
            record = reuse_compile(twin, tmp, source_pin(images_dir, changes)[1])
        else:
            record = build_uml(base_dir / "rootfs", images_dir, mirrors_factory(), tmp, changes)
        record.update(uml_hash=uml_hash, inputs=inputs, compile_key=compile_key,
                      build_seconds=round(time.monotonic() - started, 1))
        (tmp / "uml.json").write_text(json.dumps(record, indent=2, sort_keys=True))
        tmp.rename(kernel.root)
    log(f"UML kernel {uml_hash[:12]} ({record['release']}) built in {record['build_seconds']} s")
    return uml_hash, kernel


def compiled_twin(uml_dir: Path, compile_key: str) -> UMLKernel | None:
    """An intact cached kernel compiled from what @compile_key names (kernels built before the key
    was recorded have none, and are not reused)."""
    for root in sorted(uml_dir.glob("[!.]*")):
        kernel = UMLKernel(root)
        if not kernel.is_complete() or not kernel.tree.is_dir():
            continue
        try:
            if kernel.info().get("compile_key") != compile_key:
                continue
        except (OSError, ValueError):
            continue
        if not uml_damage(root):
            return kernel
    return None


def reuse_compile(twin: UMLKernel, dest: Path, pin: SourcePin) -> dict:
    """@twin's compile as this kernel's, in @dest: its binary and built tree copied, its record but for
    what this source file says of the boot (cmdline_extra), and which kernel's compile it is."""
    log(f"UML kernel: the same compile as {twin.root.name[:12]} (its source, version and patches): copied, "
        f"not built again")
    run(["cp", "-a", "--reflink=auto", str(twin.binary), str(twin.tree), str(dest)])
    record = {k: v for k, v in twin.info().items()
              if k not in ("uml_hash", "inputs", "compile_key", "build_seconds", "cmdline_extra", "compile_of")}
    if pin.cmdline_extra:
        record["cmdline_extra"] = list(pin.cmdline_extra)
    record["compile_of"] = twin.root.name
    return record


def config_digest(kernel: UMLKernel) -> str:
    return hashlib.sha256((kernel.tree / ".config").read_bytes()).hexdigest()
