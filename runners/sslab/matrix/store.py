"""The resumable cell store of one matrix directory: cells/, failed/, progress/.

A cell counts as done only once its directory cells/<key>/ holds cell.json,
and that directory appears by one rename of a finished .partial directory.
Reading the store (plans, finished cells) is sslab.analysis.archive's.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from .. import paths
from ..paths import write_json_atomic
from ..analysis.archive import cell_dir, cell_done, current_cells, latest_plan
from ..experiment.run import guest_finished

__all__ = ["CONTROLLER_LOCK", "CellStore", "current_cells", "latest_plan", "set_aside", "write_json_atomic"]

#: The file beside cells/ that a matrix's controller holds locked while it runs, naming its pid
#: (sslab.matrix.orchestrate.controller_lock).
CONTROLLER_LOCK = "controller.lock"


class CellStore:
    """cells/, failed/ and progress/ of one matrix directory."""

    def __init__(self, matrix_dir: Path):
        self.dir = Path(matrix_dir)
        self.cells = self.dir / "cells"
        self.failed = self.dir / "failed"

    def done(self, key: str) -> bool:
        return cell_done(self.dir, key)

    def cell_dir(self, key: str) -> Path:
        return cell_dir(self.dir, key)

    def failures(self, key: str) -> list[Path]:
        return sorted(self.failed.glob(f"{key}-*")) if self.failed.exists() else []

    def failures_note(self) -> str:
        """"; logs of failed attempts are under <failed/>" when the store has some, else "": the end of
        the line that says which cells or parts a run left undone."""
        return f"; logs of failed attempts are under {self.failed}" if self.failed.is_dir() else ""

    def new_partial(self, key: str) -> Path:
        self.cells.mkdir(parents=True, exist_ok=True)
        d = self.cells / f".partial-{key}-{secrets.token_hex(3)}"
        d.mkdir()
        return d

    def commit(self, partial: Path, key: str) -> Path:
        """Make a finished cell count: one rename.  Refuses to replace an existing cell.  Any other partial
        directory of @key goes then (one a stop kept to be read out, of a boot run again whole instead:
        a shared boot's cell is never read out alone)."""
        final = self.cells / key
        if final.exists():
            raise FileExistsError(f"cell {key} already exists; not overwritten ({partial} kept)")
        os.rename(partial, final)  # atomic; fails if @final appeared meanwhile and is non-empty
        for other in self.cells.glob(f".partial-{key}-*"):
            shutil.rmtree(other, ignore_errors=True)
        return final

    def record_failure(self, partial: Path, key: str, attempt: int, error: str) -> Path:
        self.failed.mkdir(parents=True, exist_ok=True)
        dest = self.failed / f"{key}-{paths.stamp()}-a{attempt}"
        (partial / "error.txt").write_text(error)
        os.rename(partial, dest)
        return dest

    def set_aside(self, key: str, why: str) -> Path | None:
        """Move a finished cell out of cells/ (to failed/<key>-<stamp>-set-aside, with @why), so it
        runs again; None if it is not here."""
        if not self.done(key):
            return None
        self.failed.mkdir(parents=True, exist_ok=True)
        dest = self.failed / f"{key}-{paths.stamp()}-set-aside"
        os.rename(self.cell_dir(key), dest)
        (dest / "error.txt").write_text(why + "\n")
        return dest

    def guest_finished(self, key: str) -> Path | None:
        """The newest partial directory of @key whose guest finished (experiment.run.guest_finished: a
        runner stopped in its read-out), if any: it is read out rather than run again."""
        found = [p for p in self.cells.glob(f".partial-{key}-*") if guest_finished(p)] if self.cells.exists() else []
        return max(found, key=lambda p: p.stat().st_mtime) if found else None

    def stale_partials(self) -> list[Path]:
        return sorted(self.cells.glob(".partial-*")) if self.cells.exists() else []


def set_aside(matrix_dir: Path, key: str, why: str) -> Path | None:
    return CellStore(matrix_dir).set_aside(key, why)

