"""Cells between a host and the controller: a host packs its finished cells, the controller checks
each against its manifest and merges the sound ones into its store (never replacing a cell it has).

A cell's manifest.json (experiment.run.write_manifest, written last on the host) holds the sha256 of
every other file of the cell.  A cell arriving with a file missing, added or changed is *damaged*:
it is never merged; it is kept under failed/<key>-<stamp>-damaged-<host>/ with the mismatches in
error.txt, and the controller deals it again (dealer.Dealer).
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from pathlib import Path

from .. import paths
from ..experiment.run import damaged_among, manifest_problems
from ..plan_record import MatrixPlan
from .spec import MatrixError
from .store import CellStore

#: A cell's manifest: what every other file of the cell must hash to.
MANIFEST = "manifest.json"

def pack_cells(matrix_dir: Path, plan: MatrixPlan, host: str, out: Path, keys: list[str] | None = None) -> int:
    """A tar of this host's finished cells and failure logs (for fetching): of @keys, else of the
    plan's dealing to @host."""
    store = CellStore(matrix_dir)
    keys = plan.deal.get(host, []) if keys is None else keys
    n = 0
    with tarfile.open(out, "w") as tar:
        for k in keys:
            if store.done(k):
                # Without links: a cell's are the UML's staging (job/uml/{root,job,src}), paths of
                # this host that mean nothing elsewhere and that no manifest lists.
                tar.add(store.cell_dir(k), arcname=f"cells/{k}", filter=without_links)
                n += 1
            for f in store.failures(k):
                tar.add(f, arcname=f"failed/{f.name}", filter=without_links)
        prog = matrix_dir / "progress" / f"{host}.json"
        if prog.exists():
            tar.add(prog, arcname=f"progress/{host}.json")
    return n


def without_links(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if member.issym() or member.islnk() else member


def extract_data(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract a host's tar of cells into @dest, refusing what a data archive must not hold: paths
    outside @dest, links, devices.  Python's "data" filter does this from 3.11.4; Debian 12's Python
    is 3.11.2, which has no filters (a fresh machine's merge failed on the keyword), so the same
    rules are checked here first."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for m in tar.getmembers():
        target = (root / m.name).resolve()
        if not (m.isfile() or m.isdir()) or m.name.startswith("/") or not target.is_relative_to(root):
            raise MatrixError(f"{tar.name}: refusing {m.name!r} (only files and directories inside the archive)")
    tar.extractall(dest)


def set_aside_damaged(store: CellStore, keys: list[str], log=None) -> dict[str, list[str]]:
    """Each finished cell of @keys checked against its manifest; a damaged one (a file changed, cut short,
    gone or added since it landed: a disk's fault, a hand's) set aside under failed/ with its
    mismatches, so that the run that follows runs it again rather than report from it, and (@log) a
    line saying so.  Returns each damaged key's mismatches (damaged_among)."""
    damaged = {d.name: problems for d, problems
               in damaged_among([store.cell_dir(k) for k in keys if store.done(k)]).items()}
    for k, problems in damaged.items():
        store.set_aside(k, "its files no longer match its manifest: " + "; ".join(problems[:5]))
        if log is not None:
            log(f"  cell {k}: its files no longer match its manifest ({'; '.join(problems[:2])}): set aside "
                f"under {store.failed}, to run again", flush=True)
    return damaged


def merge_cells(matrix_dir: Path, tar_path: Path, host: str = "host") -> dict:
    """Unpack a host's tar next to the store, check each cell against its manifest, then move in each
    sound cell that is not here yet (one rename each); never replace one that is.  A damaged cell is
    kept apart under failed/ (see the module doc) and named in the result's "damaged"."""
    store = CellStore(matrix_dir)
    counts: dict = {"merged": 0, "already_here": 0, "failure_logs": 0, "damaged": []}
    Path(matrix_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=matrix_dir, prefix=".merge-") as tmp:
        with tarfile.open(tar_path) as tar:
            extract_data(tar, Path(tmp))
        tmp = Path(tmp)
        store.cells.mkdir(parents=True, exist_ok=True)
        for cell in sorted((tmp / "cells").glob("*")) if (tmp / "cells").exists() else []:
            if not (cell / "cell.json").is_file():
                continue
            if store.done(cell.name):
                counts["already_here"] += 1
                continue
            if problems := manifest_problems(cell):
                store.failed.mkdir(parents=True, exist_ok=True)
                (cell / "error.txt").write_text(f"arrived damaged from {host} in {tar_path.name}:\n"
                                                + "\n".join(problems) + "\n")
                os.rename(cell, store.failed / f"{cell.name}-{paths.stamp()}-damaged-{host}")
                counts["damaged"].append(cell.name)
                continue
            os.rename(cell, store.cells / cell.name)
            counts["merged"] += 1
        for f in sorted((tmp / "failed").glob("*")) if (tmp / "failed").exists() else []:
            store.failed.mkdir(parents=True, exist_ok=True)
            if not (store.failed / f.name).exists():
                os.rename(f, store.failed / f.name)
                counts["failure_logs"] += 1
        for p in sorted((tmp / "progress").glob("*.json")) if (tmp / "progress").exists() else []:
            dest = matrix_dir / "progress" / f"{p.stem}.remote.json"
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(p, dest)
    return counts

