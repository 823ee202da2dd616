"""A cache entry checked against what its build recorded, before anything boots it.

A machine that crashed while writing, a full disk or a stray edit can leave a cached image or UML
kernel damaged: a truncated kernel, a module with flipped bytes.  Booting one gives a run that fails
in a way that names nothing, or one that runs and is wrong.  So each entry's record names its files'
sha256 (the image's manifest.json: its kernels, initrd, the modules and programs it put into the root
tree; the UML kernel's uml.json: its binary's size and sha256, its config's sha256), and the entry is
checked against it every time it is taken from the cache.  A damaged entry is moved aside, never
deleted (`.damaged-<name>-<stamp>` beside it: what went wrong can be looked at), the warning names
every file that differs, and the entry is built again.

What is not checked: an image's root.img (4 GB, written by mke2fs; only the QEMU substrate boots it)
and the root tree's other files (about 36 000; an image built since this check began records the
tree's listing, names, kinds and sizes, and that is compared), a UML kernel's build tree beyond its
.config and its listing (a UML kernel built since 27 Nov 2026 records the listing: a file of its
97 000 truncated, removed or added is found, one changed in place at its size is not; walking it
takes about 1.5 s, and it is checked only when an image is built from it), and the base stage (it is
only built from, and a build from a damaged base fails or differs in the image's recorded hashes).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from .buildtools import log, sha256_file


def _file_damage(path: Path, want_sha: str, want_bytes: int | None = None) -> str | None:
    """None if @path holds what was recorded, else what differs (missing, size, content)."""
    if not path.is_file():
        return f"{path.name}: missing"
    size = path.stat().st_size
    if want_bytes is not None and size != want_bytes:
        return f"{path.name}: {size} bytes, recorded {want_bytes}"
    got = sha256_file(path)
    if got != want_sha:
        return f"{path.name}: sha256 {got[:12]}..., recorded {want_sha[:12]}..."
    return None


def _record(path: Path) -> tuple[dict | None, str | None]:
    try:
        return json.loads(path.read_text()), None
    except FileNotFoundError:
        return None, f"{path.name}: missing"
    except (OSError, ValueError) as e:
        return None, f"{path.name}: unreadable ({type(e).__name__})"


def tree_listing(root: Path) -> str:
    """A tree's shape: sha256 over every entry's path, kind and (files) size, in os.walk's order (a
    directory's files and links, by name, then its directories, by name, each whole).  A file
    truncated, removed or added changes it; contents are the recorded hashes' business.

    One scandir a directory and one lstat a regular file (the entries' kinds come with the
    listing): an image's root tree, some 34,000 entries, is read in a fraction of the time a stat per
    question took, and every matrix host reads it before its first boot."""
    h = hashlib.sha256()

    def walk(top: str, prefix: str) -> None:
        try:
            with os.scandir(top) as listing:
                entries = list(listing)
        except OSError:
            return  # as os.walk: a directory that cannot be listed is passed over
        leaves, below = [], []
        for e in entries:
            try:
                is_dir = e.is_dir()  # a link to a directory counts as one, as for os.walk
            except OSError:
                is_dir = False
            link = e.is_symlink()
            if not is_dir or link:
                leaves.append((e.name, e, link))
            if is_dir and not link:
                below.append(e)
        for name, e, link in sorted(leaves, key=lambda x: x[0]):
            kind = "l" if link else "f" if e.is_file() else "o"
            size = e.stat(follow_symlinks=False).st_size if kind == "f" else 0
            h.update(f"{prefix}{name}\0{kind}\0{size}\n".encode(errors="surrogateescape"))
        for e in sorted(below, key=lambda e: e.name):
            walk(e.path, f"{prefix}{e.name}/")

    walk(str(root), "")
    return h.hexdigest()


#: Images this process found intact, with the size, mtime and inode of every file checked: an image
#: whose files are as they were is not hashed again in this process (a matrix's controller and each
#: host's runner check once, not once per boot); a file written since is.
_INTACT: set[tuple] = set()


def _signature(root: Path) -> tuple | None:
    manifest, _ = _record(root / "manifest.json")
    if manifest is None:
        return None
    names = ["manifest.json", *(manifest.get("files") or {}), *(f"rootfs{p}" for p in _in_tree(manifest))]
    try:
        return (str(root), *((n, st.st_size, st.st_mtime_ns, st.st_ino) for n in names
                             for st in [(root / n).stat()]))
    except OSError:
        return None


def _in_tree(manifest: dict) -> dict[str, str]:
    """The root tree's files the manifest hashes (programs, modules): path -> sha256."""
    out = dict(manifest.get("programs") or {})
    uml = manifest.get("uml") or {}
    for section in (manifest.get("module"), uml.get("module"), uml.get("researcher_modules")):
        for mod in ((section or {}).get("modules") or {}).values():
            out[mod["path"]] = mod["sha256"]
    return out


def image_damage(root: Path, shipped: bool = False) -> list[str]:
    """What of the image at @root differs from its manifest (empty: intact).  @shipped: the UML side a
    container ships (substrate.container: its manifest, UML kernel and root tree, in a directory of
    another name; no stock kernel, initrd or disk): its UML kernel and the tree's hashed files only."""
    seen = _signature(root)
    if seen is not None and seen in _INTACT:
        return []
    problems = _image_damage(root, shipped)
    if not problems and seen is not None:
        _INTACT.add(seen)
    return problems


def _image_damage(root: Path, shipped: bool) -> list[str]:
    manifest, err = _record(root / "manifest.json")
    if manifest is None:
        return [err]
    problems = []
    if not shipped and manifest.get("image_hash") != root.name:
        problems.append(f"manifest.json: names image {str(manifest.get('image_hash'))[:12]}, not {root.name[:12]}")
    for name, digest in (manifest.get("files") or {}).items():
        if not shipped or name == "linux":
            problems.append(_file_damage(root / name, digest))
    rootfs = root / "rootfs"
    for path, digest in _in_tree(manifest).items():
        d = _file_damage(rootfs / path.lstrip("/"), digest)
        problems.append(d and f"rootfs{path}: {d.split(': ', 1)[1]}")
    if (not shipped and manifest.get("rootfs_listing") and rootfs.is_dir()
            and tree_listing(rootfs) != manifest["rootfs_listing"]):
        problems.append("rootfs: files added, removed or resized since the build (its listing differs)")
    return [p for p in problems if p]


def uml_damage(root: Path) -> list[str]:
    """What of the UML kernel at @root differs from its uml.json (empty: intact)."""
    info, err = _record(root / "uml.json")
    if info is None:
        return [err]
    problems = [_file_damage(root / "linux", info.get("binary_sha256", ""), info.get("binary_bytes"))]
    if info.get("config_sha256") and (root / "tree" / ".config").is_file():
        d = _file_damage(root / "tree" / ".config", info["config_sha256"])
        problems.append(d and f"tree/{d}")
    if info.get("tree_listing") and (root / "tree").is_dir() and tree_listing(root / "tree") != info["tree_listing"]:
        problems.append("tree: files added, removed or resized since the build (its listing differs)")
    return [p for p in problems if p]


def set_aside(root: Path, problems: list[str], what: str) -> Path:
    """Move the damaged entry at @root out of the cache's way (it is then built again), saying why."""
    dest = root.parent / f".damaged-{root.name}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"
    root.rename(dest)
    log(f"WARNING: the cached {what} {root.name[:12]} is damaged and was not booted: "
        + "; ".join(problems) + f".  Moved aside to {dest}; building it again.")
    return dest
