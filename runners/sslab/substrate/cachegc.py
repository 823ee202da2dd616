"""The image cache kept within its disk: images used least recently go first.

Every image is keyed by the hash of its inputs, the module's sources among them, so each change to
kernel/ makes a new image (2.8 GB), and the tests' patched kernels (a researcher's patch, 5.19's
HyStart rounds, ...) four more beside it.  Nothing else ever removed one: a day of module work
left twelve images (34 GB) in the cache, and the container engine's imports of them beside, until
a build ran out of disk halfway (`podman import`: "no space left on device").

What is kept, and why:

  * the image the source tree builds now (its recipe's hash), always;
  * an image a run has used in the last IN_USE_S: a run touches its image's LAST_USED at every
    boot (UML, QEMU), so an experiment that runs for hours keeps its image fresh, and nothing is
    removed under a running guest;
  * the KEEP most recently used others (DEFAULT_KEEP covers the test suite's own images);
  * a UML kernel that a kept image was built on, or that was used in the last IN_USE_S;
  * a container engine's slowstart-lab / sslab-fleet image of a kept image's hash.

Everything else of the cache's: images, UML kernels, entries a damage check set aside
(.damaged-*) more than SET_ASIDE_KEEP_S ago, and the engines' images of images no longer cached.
An image is renamed out of the cache's way before it is deleted, so a half-removed one is never
taken for a complete one.

`make image-prune` (KEEP=) prunes on demand, `make image-list` shows what there is; a build
prunes by itself first when the cache's disk has less than BUILD_ROOM free, and the image's last
stage and the container's build are refused before they start when even then too little is free.
An image removed can be built again from the commit its results name, while Debian's mirror still
offers the kernel it pinned.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .buildtools import ImageError, log, remove_tree
from .engines import ENGINES, engine_trouble

#: The file in an image's (or UML kernel's) directory whose mtime is when a run last took it.
LAST_USED = "last-used"

#: An entry used this recently is in use: never removed (a run's boots touch it every few seconds).
IN_USE_S = 30 * 60

#: An entry a damage check set aside is kept this long after it was (cachecheck.set_aside: "what
#: went wrong can be looked at"); a prune removes it after.  Before, any prune removed it, and the
#: build that follows a damaged image prunes first when the disk is short: the entry was gone
#: within the command that set it aside (seen 29 Nov 2026, 14 GB free).
SET_ASIDE_KEEP_S = 24 * 3600

#: Images kept beside the tree's own: the oracle's 5.19 image and the test suite's patched ones.
DEFAULT_KEEP = 5

GIB = 1 << 30

#: Free space below which a build prunes the cache first: a final image (2.8 GB), a UML kernel's
#: build tree (2 GB), and room for the container engine's import of the image (twice 1.9 GB).
BUILD_ROOM = 12 * GIB

#: Free space below which the image's last stage is refused before it starts: the image (2.8 GB),
#: built in place of its directory.
FINAL_STAGE_NEEDS = 4 * GIB

#: Free space below which `make container` is refused before it starts: a copy of the image's tree
#: (2.6 GB), then the engine's import of it (a 1.8 GB blob in /var/tmp and its layer in the store).
CONTAINER_BUILD_NEEDS = 7 * GIB

#: The container engines' repositories that hold images of ours, tagged <image hash[:12]>-<tree>.
ENGINE_REPOSITORIES = ("slowstart-lab", "sslab-fleet")


def mark_used(root: Path) -> None:
    """Note that a run takes the cache entry at @root now (a read-only cache is left as it is)."""
    try:
        (root / LAST_USED).touch()
    except OSError:
        pass


def last_used(root: Path) -> float:
    """When the entry at @root was last used: its LAST_USED, else when it was finished."""
    for name in (LAST_USED, "manifest.json", "uml.json"):
        try:
            return (root / name).stat().st_mtime
        except OSError:
            continue
    return root.stat().st_mtime


def disk_usage(root: Path) -> int:
    """Bytes @root takes on its disk (blocks allocated, each inode once: a sparse disk image counts
    what it holds, a hard link once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def free_bytes(path: Path) -> int:
    """Bytes free to this user on @path's filesystem (its nearest existing ancestor's)."""
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


@dataclass(frozen=True)
class CacheEntry:
    """An image or a UML kernel in the cache."""

    kind: str  # "image" | "uml" | "set aside"
    root: Path
    used: float
    uml_hash: str | None = None  # an image's UML kernel

    @property
    def name(self) -> str:
        return self.root.name


def cached_images(cache: Path) -> list[CacheEntry]:
    """The cache's complete images, most recently used first."""
    out = []
    for d in (cache / "images").glob("[0-9a-f]*"):
        manifest = d / "manifest.json"
        if not d.is_dir() or not manifest.is_file():
            continue  # a build in progress (.<hash>.tmp-<pid>) or an unfinished one
        try:
            uml_hash = (json.loads(manifest.read_text()).get("uml") or {}).get("uml_hash")
        except ValueError:
            uml_hash = None
        out.append(CacheEntry("image", d, last_used(d), uml_hash))
    return sorted(out, key=lambda e: e.used, reverse=True)


def cached_umls(cache: Path) -> list[CacheEntry]:
    """The cache's finished UML kernels, most recently used first."""
    out = [CacheEntry("uml", d, last_used(d)) for d in (cache / "uml").glob("[0-9a-f]*")
           if d.is_dir() and (d / "uml.json").is_file()]
    return sorted(out, key=lambda e: e.used, reverse=True)


#: cachecheck.set_aside's name for an entry it moved: .damaged-<name>-<YYYYmmddTHHMMSS>-<pid>.
_SET_ASIDE_NAME = re.compile(r"\.damaged-.*-(?P<stamp>\d{8}T\d{6})-\d+")


def set_aside_at(root: Path) -> float | None:
    """When the entry at @root was set aside (the stamp in its name, UTC), or None for a name
    without one."""
    m = _SET_ASIDE_NAME.fullmatch(root.name)
    if not m:
        return None
    return calendar.timegm(time.strptime(m["stamp"], "%Y%m%dT%H%M%S"))


def set_aside_entries(cache: Path) -> list[CacheEntry]:
    """What damage checks moved out of the way (cachecheck.set_aside): never booted again.  Its time
    is when it was set aside (else when it was last used)."""
    return [CacheEntry("set aside", d, set_aside_at(d) or last_used(d))
            for stage in ("images", "uml", "base") for d in (cache / stage).glob(".damaged-*")]


@dataclass
class PrunePlan:
    """What a prune keeps and removes, decided before anything is removed."""

    keep: list[CacheEntry] = field(default_factory=list)
    remove: list[CacheEntry] = field(default_factory=list)
    why_kept: dict[str, str] = field(default_factory=dict)  # entry name -> reason

    def kept_image_prefixes(self) -> set[str]:
        return {e.name[:12] for e in self.keep if e.kind == "image"}


def plan_prune(cache: Path, keep: int, current: str | None, current_uml: str | None = None,
               now: float | None = None) -> PrunePlan:
    """Which of @cache's entries a prune keeps: the image @current (the tree's own, by hash), those
    used in the last IN_USE_S, and the @keep most recently used other images; the UML kernels of
    kept images, @current_uml (the tree's) and those in use; what a damage check set aside in the
    last SET_ASIDE_KEEP_S.  The rest is to be removed."""
    if keep < 0:
        raise ValueError(f"keep {keep}: a number of images, 0 or more")
    now = time.time() if now is None else now
    plan = PrunePlan()
    ranked = 0  # other images kept for being among the @keep used last
    for e in cached_images(cache):
        if e.name == current:
            reason = "the source tree's image"
        elif now - e.used < IN_USE_S:
            reason = f"in use (used {int(now - e.used)} s ago)"
        elif ranked < keep:
            ranked += 1
            reason = f"among the {keep} used last"
        else:
            plan.remove.append(e)
            continue
        plan.keep.append(e)
        plan.why_kept[e.name] = reason
    kept_umls = {e.uml_hash for e in plan.keep}
    for e in cached_umls(cache):
        if e.name == current_uml:
            plan.keep.append(e)
            plan.why_kept[e.name] = "the source tree's UML kernel"
        elif e.name in kept_umls:
            plan.keep.append(e)
            plan.why_kept[e.name] = "a kept image's UML kernel"
        elif now - e.used < IN_USE_S:
            plan.keep.append(e)
            plan.why_kept[e.name] = f"in use (used {int(now - e.used)} s ago)"
        else:
            plan.remove.append(e)
    for e in set_aside_entries(cache):
        if now - e.used < SET_ASIDE_KEEP_S:
            plan.keep.append(e)
            plan.why_kept[e.name] = f"set aside {int(now - e.used)} s ago, to be looked at"
        else:
            plan.remove.append(e)
    return plan


def remove_entry(entry: CacheEntry) -> None:
    """Remove a cache entry: renamed out of the cache's way first (a half-removed image is never
    found under its hash), then deleted."""
    gone = entry.root.parent / f".pruned-{entry.name}-{os.getpid()}"
    try:
        entry.root.rename(gone)
    except FileNotFoundError:
        return  # another prune took it
    remove_tree(gone)


# --------------------------------------------------------------------------
# The container engines' images of ours
# --------------------------------------------------------------------------


def engine_images(eng: str) -> list[str]:
    """@eng's images of ours (ENGINE_REPOSITORIES), as repository:tag."""
    res = subprocess.run([eng, "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True, text=True)
    if res.returncode != 0:
        return []
    return [n for n in res.stdout.split() if n.split(":")[0].rsplit("/", 1)[-1] in ENGINE_REPOSITORIES]


def stale_engine_images(names: Iterable[str], kept_prefixes: set[str]) -> list[str]:
    """Of @names (repository:tag), those whose tag's image hash (its first 12 digits) is not kept."""
    return [n for n in names if n.rsplit(":", 1)[-1].split("-")[0] not in kept_prefixes]


def working_engines() -> list[str]:
    """The engines here that answer (a Docker client without its daemon does not)."""
    return [e for e in ENGINES if engine_trouble(e) is None]


# --------------------------------------------------------------------------
# Pruning
# --------------------------------------------------------------------------


@dataclass
class PruneResult:
    removed: list[tuple[str, str, int]]  # (kind, name, bytes)
    engine_removed: list[str]
    kept: list[tuple[str, str, str]]  # (kind, name, why)
    free_before: int
    free_after: int


def prune(cache: Path, keep: int = DEFAULT_KEEP, current: str | None = None, current_uml: str | None = None,
          dry_run: bool = False, orphans: bool = False, engines: Callable[[], list[str]] = working_engines,
          say: Callable[[str], None] = log) -> PruneResult:
    """Remove what plan_prune does not keep, and the engines' images of the images removed (with
    @orphans: of every image not kept, removed by hand before too; only for the engines' own cache,
    the default one: a test's cache of its own holds none of the images the engines hold); say each
    removal, with its size."""
    free_before = free_bytes(cache)
    plan = plan_prune(cache, keep, current, current_uml)
    removed = []
    for e in plan.remove:
        size = disk_usage(e.root)
        say(f"{'would remove' if dry_run else 'removing'} {e.kind} {e.name[:12]} ({size / GIB:.1f} GiB, "
            f"last used {time.strftime('%Y-%m-%d %H:%M', time.gmtime(e.used))}Z)")
        if not dry_run:
            remove_entry(e)
        removed.append((e.kind, e.name, size))
    engine_removed = []
    kept_prefixes = plan.kept_image_prefixes()
    removed_prefixes = {e.name[:12] for e in plan.remove if e.kind == "image"}
    for eng in engines() if removed_prefixes or orphans else ():
        stale = stale_engine_images(engine_images(eng), kept_prefixes)
        for name in stale if orphans else [n for n in stale if n.rsplit(":", 1)[-1][:12] in removed_prefixes]:
            say(f"{'would remove' if dry_run else 'removing'} {eng}'s {name}")
            if dry_run or subprocess.run([eng, "rmi", "-f", name], capture_output=True).returncode == 0:
                engine_removed.append(f"{eng}:{name}")
    kept = [(e.kind, e.name, plan.why_kept[e.name]) for e in plan.keep]
    return PruneResult(removed, engine_removed, kept, free_before, free_bytes(cache))


def prune_if_short(cache: Path, current: str | None, current_uml: str | None) -> None:
    """Before a build stage (the cache lock held): when the cache's disk has less than BUILD_ROOM
    free, prune what is not kept (DEFAULT_KEEP), saying so."""
    if (free := free_bytes(cache)) >= BUILD_ROOM:
        return
    log(f"the cache's disk has {free / GIB:.1f} GiB free (a build wants {BUILD_ROOM // GIB}): removing images "
        f"not used recently (keeping the {DEFAULT_KEEP} used last)")
    prune(cache, DEFAULT_KEEP, current, current_uml)


def refuse_if_short(cache: Path, need: int, what: str) -> None:
    """Refuse @what (ImageError) before any of its work when the cache's disk has less than @need
    free: a build that fails for room after minutes of work helps no one."""
    if (free := free_bytes(cache)) < need:
        raise ImageError(f"{what}: the cache's disk ({cache}) has {free / GIB:.1f} GiB free, it needs at least "
                         f"{need / GIB:.0f}: nothing was built.  `make image-list` shows the cache; "
                         f"`make image-prune KEEP=0` keeps only the tree's image and those in use")
