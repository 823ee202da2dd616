"""A researcher's own kernel: another kernel source, a patch series for the UML kernel, out-of-tree modules.

    KERNEL_SOURCE=name   the UML kernel from another Debian linux-source package,
                         described by images/uml/sources/<name>.yaml (package,
                         version, suite, which of our patches it takes); default:
                         images/uml/source.lock (6.1).

    KERNEL_PATCHES=dir   every *.patch and *.diff of dir, in name order, applied with
                         `patch -p1` to the UML kernel's source after our own patches
                         (images/uml/patches/); a hunk that does not apply stops the
                         image build, before anything boots, naming the patch and hunk.
    MODULES=dir          an out-of-tree module source (a Kbuild, or a Makefile, naming
                         obj-m), built against the UML kernel's tree in the image's
                         chroot and loaded in every boot before the job (after our
                         tcp_sslab).

The Makefile passes them as SSLAB_KERNEL_SOURCE, SSLAB_KERNEL_PATCHES and
SSLAB_MODULES; a matrix's `kernel` axis (KERNELS="6.1 7.3 6.1,patches=DIR")
runs one kernel after another with these set for each.  They are all
hashed into the image's recipe: the UML stage's key covers the source's file
and the patches, file by file, the final stage's key the module sources, so a rebuild happens
exactly when one of them changes, and cells and runs of another kernel are
other cells (their image hash differs).  The manifest records each file's
sha256 under `uml.researcher`.

Without any of them (or with KERNEL_SOURCE naming the default), nothing here
adds to any key: the default image is the one it was.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from .buildtools import ImageError, sha256_file

#: The environment variables (the Makefile's KERNEL_SOURCE=, KERNEL_PATCHES= and MODULES=).
SOURCE_ENV = "SSLAB_KERNEL_SOURCE"
PATCHES_ENV = "SSLAB_KERNEL_PATCHES"
MODULES_ENV = "SSLAB_MODULES"
#: Other kernel sources than the default, one file each.
SOURCES_DIR = paths.IMAGES_DIR / "uml" / "sources"
PATCH_SUFFIXES = (".patch", ".diff")
#: Files of a module directory that are build output, not source (left out of the hash).
BUILD_OUTPUT = (".o", ".ko", ".mod", ".cmd", ".symvers", ".order", ".mod.c")
#: Where the modules' sources are copied in the image (and built).
MODULES_IN_IMAGE = "sslab-researcher-modules"
#: The job's environment variable naming the modules the guest loads (space-separated), set by the
#: UML substrate from the image's manifest: absent for an image without them, so a default job is
#: the job it always was.
RESEARCHER_MODULES_ENV = "SSLAB_RESEARCHER_MODULES"


class KernelChangesRefused(ValueError):
    """KERNEL_PATCHES= or MODULES= names something that cannot be built (exit 2, before anything)."""


class PatchRefused(ImageError):
    """A researcher's patch did not apply to the UML kernel's source: the build stopped before any
    compile or boot.  The message names the patch, the hunks and the files."""


@dataclass(frozen=True)
class KernelChanges:
    """The directories, their files, and each file's sha256 as read when they were checked (what
    the recipe hashes and the manifest records: a file edited later is another recipe)."""

    patches_dir: Path | None = None
    patches: tuple[Path, ...] = ()
    modules_dir: Path | None = None
    module_files: tuple[Path, ...] = ()
    digests: tuple[tuple[Path, str], ...] = ()
    #: Another kernel source's file (images/uml/sources/<name>.yaml), or None for the default.
    source: Path | None = None

    def digest(self, path: Path) -> str:
        return dict(self.digests)[path]

    @property
    def source_name(self) -> str | None:
        return None if self.source is None else self.source.stem

    @property
    def empty(self) -> bool:
        return self.patches_dir is None and self.modules_dir is None and self.source is None

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "KernelChanges":
        env = os.environ if env is None else env
        return cls.of(env.get(PATCHES_ENV) or None, env.get(MODULES_ENV) or None, env.get(SOURCE_ENV) or None)

    @classmethod
    def of(cls, patches_dir: str | Path | None, modules_dir: str | Path | None,
           source: str | None = None, sources_dir: Path = SOURCES_DIR) -> "KernelChanges":
        """Check the source's name and both directories (KernelChangesRefused names what is wrong)
        and list their files."""
        source_file = None
        default = default_source_name(sources_dir.parent / "source.lock")
        if source and source != default:
            offered = sorted(p.stem for p in sources_dir.glob("*.yaml"))
            source_file = sources_dir / f"{source}.yaml"
            if "/" in source or not source_file.is_file():
                raise KernelChangesRefused(f"KERNEL_SOURCE={source}: not a kernel source the testbed knows (it knows: "
                                           f"{default} (the default, images/uml/source.lock), "
                                           f"{', '.join(offered) or 'none'} (images/uml/sources/))")
        patches: tuple[Path, ...] = ()
        pdir = mdir = None
        if patches_dir:
            pdir = _existing_dir(patches_dir, "KERNEL_PATCHES")
            patches = tuple(sorted(p for p in pdir.iterdir() if p.is_file() and p.suffix in PATCH_SUFFIXES))
            if not patches:
                raise KernelChangesRefused(f"KERNEL_PATCHES={patches_dir}: no *.patch or *.diff file in it "
                                           f"(a series is applied in file-name order)")
            for p in patches:
                if not _looks_like_patch(p):
                    raise KernelChangesRefused(f"KERNEL_PATCHES: {p} is not a unified diff (no '--- ' / '+++ ' "
                                               f"/ '@@' lines)")
        files: tuple[Path, ...] = ()
        if modules_dir:
            mdir = _existing_dir(modules_dir, "MODULES")
            kbuild = [mdir / n for n in ("Kbuild", "Makefile") if (mdir / n).is_file()]
            if not any("obj-m" in k.read_text(errors="replace") for k in kbuild):
                raise KernelChangesRefused(f"MODULES={modules_dir}: no Kbuild or Makefile naming obj-m (an "
                                           f"out-of-tree module: `obj-m += tcp_mine.o`)")
            files = tuple(sorted(p for p in mdir.rglob("*") if p.is_file() and not p.name.startswith(".")
                                 and not p.name.endswith(BUILD_OUTPUT)))
        return cls(pdir, patches, mdir, files, tuple((p, sha256_file(p)) for p in (*patches, *files)), source_file)

    @classmethod
    def parse(cls, term: str, sources_dir: Path = SOURCES_DIR) -> "KernelChanges":
        """One value of the `kernel` matrix axis (KERNELS="6.1 7.3 6.1,patches=DIR"): a source's name,
        then optionally `,patches=DIR` and `,modules=DIR` (KERNEL_PATCHES= and MODULES= for this kernel)."""
        name, *rest = term.split(",")
        opts: dict[str, str] = {}
        for part in rest:
            key, eq, value = part.partition("=")
            if not eq or key not in ("patches", "modules") or not value or key in opts:
                raise KernelChangesRefused(f"kernel {term!r}: after the source's name come only patches=DIR and "
                                           f"modules=DIR, once each (e.g. 6.1,patches=my-patches)")
            opts[key] = value
        if not name:
            raise KernelChangesRefused(f"kernel {term!r}: no source name (e.g. 6.1 or 7.3)")
        return cls.of(opts.get("patches"), opts.get("modules"), name, sources_dir)

    def env(self) -> dict[str, str]:
        """These changes as the environment variables every process of a run reads (from_env)."""
        return {SOURCE_ENV: self.source_name or "", PATCHES_ENV: str(self.patches_dir or ""),
                MODULES_ENV: str(self.modules_dir or "")}

    def describe(self) -> str:
        """For people: "7.3", "6.1 + patches kernel-patches", "6.1 + module module"."""
        text = self.source_name or default_source_name(SOURCES_DIR.parent / "source.lock")
        if self.patches_dir is not None:
            text += f" + patches {self.patches_dir.name}"
        if self.modules_dir is not None:
            text += f" + modules {self.modules_dir.name}"
        return text

    # -- what the recipe hashes ------------------------------------------------------------------

    def uml_inputs(self) -> dict[str, str]:
        """Entries of the UML stage's key: one per patch, in order (its position is in the name)."""
        return {f"researcher/patches/{i:03d}-{p.name}": self.digest(p) for i, p in enumerate(self.patches)}

    def final_inputs(self) -> dict[str, str]:
        return {f"researcher/modules/{p.relative_to(self.modules_dir)}": self.digest(p) for p in self.module_files}

    def record(self) -> dict:
        """What the manifest (and every run's meta.json through it) says of these changes."""
        out: dict = {}
        if self.source is not None:
            out["source"] = {"name": self.source_name, "file": f"images/uml/sources/{self.source.name}"}
        if self.patches_dir is not None:
            out["patches"] = {"dir": str(self.patches_dir), "series": {p.name: self.digest(p) for p in self.patches}}
        if self.modules_dir is not None:
            out["modules_source"] = {"dir": str(self.modules_dir), "digest": self.modules_digest(),
                                     "files": {str(p.relative_to(self.modules_dir)): self.digest(p)
                                               for p in self.module_files}}
        return out

    def label(self) -> str:
        """A short name for archives ("patches-beta-3f2a91c0_modules-mine-77e1d2aa"): the directories'
        names and the first 8 hex digits of their contents' hash; "" without changes."""
        parts = [f"source-{self.source_name}"] if self.source is not None else []
        if self.patches_dir is not None:
            h = hashlib.sha256("".join(self.uml_inputs().values()).encode()).hexdigest()[:8]
            parts.append(f"patches-{_slug(self.patches_dir.name)}-{h}")
        if self.modules_dir is not None:
            parts.append(f"modules-{_slug(self.modules_dir.name)}-{self.modules_digest()[:8]}")
        return "_".join(parts)

    def modules_digest(self) -> str:
        h = hashlib.sha256()
        for name, digest in sorted(self.final_inputs().items()):
            h.update(f"{name}\0{digest}\n".encode())
        return h.hexdigest()

    # -- the build ------------------------------------------------------------------------------

    def apply_patches(self, tree: Path, log=print) -> None:
        """Apply the series to the unpacked source @tree; PatchRefused at the first that fails."""
        for i, p in enumerate(self.patches, 1):
            log(f"UML kernel: apply your patch {i}/{len(self.patches)}: {p.name}")
            res = subprocess.run(["patch", "-p1", "--forward", "--batch", "-d", str(tree), "-i", str(p)],
                                 capture_output=True, text=True)
            if res.returncode != 0:
                raise PatchRefused(patch_failure(p, i, len(self.patches), res.stdout + res.stderr, tree))


def default_source_name(lock: Path) -> str:
    """The default source's short name ("6.1" for linux-source-6.1), from images/uml/source.lock."""
    try:
        text = lock.read_text()
    except OSError:
        return "6.1"
    m = re.search(r"^package:\s*linux-source-(\S+)", text, re.M)
    return m.group(1) if m else "6.1"


def researcher_modules(manifest: dict) -> list[str]:
    """The modules of a researcher an image carries (MODULES=), by name, in load order."""
    return sorted(((manifest.get("uml") or {}).get("researcher") or {}).get("modules") or {})


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", name).strip("-")[:32] or "dir"


def _existing_dir(value: str | Path, var: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise KernelChangesRefused(f"{var}={value}: no such directory")
    return path.resolve()


def _looks_like_patch(path: Path) -> bool:
    text = path.read_text(errors="replace")
    return bool(re.search(r"^--- ", text, re.M) and re.search(r"^\+\+\+ ", text, re.M)
                and re.search(r"^@@ ", text, re.M))


def patch_failure(patch: Path, index: int, count: int, output: str, tree: Path) -> str:
    """The message for a patch that did not apply: which patch, which hunks of which files, and the
    first rejected hunk as the source has it not."""
    failed = re.findall(r"^Hunk #(\d+) FAILED at (\d+)", output, re.M)
    files = re.findall(r"^(?:patching|checking) file (\S+)", output, re.M)
    rejects = re.findall(r"saving rejects to file (\S+)", output)
    lines = [f"your patch {index} of {count}, {patch}, does not apply to the UML kernel's source "
             f"({tree.name}, after our own patches); nothing was compiled or booted."]
    where = {}
    current = None
    for ln in output.splitlines():
        if m := re.match(r"(?:patching|checking) file (\S+)", ln):
            current = m[1]
        elif (m := re.match(r"Hunk #(\d+) FAILED at (\d+)", ln)) and current:
            where.setdefault(current, []).append(f"hunk #{m[1]} (at line {m[2]})")
    for f, hunks in where.items():
        lines.append(f"  {f}: {', '.join(hunks)} failed")
    if not failed:
        lines.append("  patch said: " + " | ".join(ln for ln in output.splitlines()[-4:] if ln.strip()))
    if rejects:
        rej = tree / rejects[0]
        if rej.is_file():
            shown = rej.read_text(errors="replace").splitlines()[2:14]
            lines.append(f"  first rejected hunk ({rejects[0]}):")
            lines += [f"    {ln}" for ln in shown]
    if files:
        lines.append(f"  files the patch touches: {', '.join(dict.fromkeys(files))}")
    lines.append("  what to do: rebase the patch on this source (`make image` builds Debian's "
                 "linux-source named in images/uml/source.lock), or leave KERNEL_PATCHES unset")
    return "\n".join(lines)
