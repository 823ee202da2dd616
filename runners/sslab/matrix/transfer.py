"""Cells between a host and the controller: a host packs its finished cells, the controller merges
them into its store (never replacing a cell it has)."""

from __future__ import annotations

import os
import tarfile
import tempfile
from pathlib import Path

from .spec import MatrixError
from .store import CellStore

def pack_cells(matrix_dir: Path, plan: dict, host: str, out: Path) -> int:
    """A tar of this host's finished cells and failure logs (for fetching)."""
    store = CellStore(matrix_dir)
    keys = plan["deal"].get(host, [])
    n = 0
    with tarfile.open(out, "w") as tar:
        for k in keys:
            if store.done(k):
                tar.add(store.cell_dir(k), arcname=f"cells/{k}")
                n += 1
            for f in store.failures(k):
                tar.add(f, arcname=f"failed/{f.name}")
        prog = matrix_dir / "progress" / f"{host}.json"
        if prog.exists():
            tar.add(prog, arcname=f"progress/{host}.json")
    return n


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


def merge_cells(matrix_dir: Path, tar_path: Path) -> dict:
    """Unpack a host's tar next to the store, then move in each cell that is not
    here yet (one rename each); never replace one that is."""
    store = CellStore(matrix_dir)
    counts = {"merged": 0, "already_here": 0, "failure_logs": 0}
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

