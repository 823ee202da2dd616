"""Reading a matrix directory: its plans, its finished cells and their runs.

    results/<matrix>/<selection>/plans/plan-<stamp>.json   each invocation's plan
    results/<matrix>/<selection>/cells/<key>/cell.json     a finished cell (written last)

The matrix package writes this layout (sslab.matrix.store); everything that
reads it, the reports and the resuming runner alike, reads it through here.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from ..plan_record import MatrixPlan, PlannedCell, read_matrix_plan
from ..records import read_record, read_runs_index


class ArchiveError(ValueError):
    """A directory that is not the archive it is said to be."""


#: A cell counts as finished when this file exists in cells/<key>/ (it is written last).
CELL_RECORD = "cell.json"


def runs_named_by_keys(root: Path) -> dict[Path, Path]:
    """Every run a key names under @root (results/<kind>/keys/<key>, a link; a dot-name is a lock), as
    resolved -> the first link naming it, in sorted order: an experiment's finished parts, wherever
    they ran (sslab.experiment.series)."""
    out: dict[Path, Path] = {}
    for link in sorted(Path(root).rglob("keys/*")):
        if link.is_symlink() and not link.name.startswith("."):
            out.setdefault(link.resolve(), link)
    return out


def cell_dir(matrix_dir: Path, key: str) -> Path:
    return Path(matrix_dir) / "cells" / key


def written_as(path: Path) -> tuple | None:
    """@path's identity as last written (its inode, size and modification time), None when it is
    missing: what a reading held in memory is keyed by, so that a file written anew (a cell run
    again) is read anew."""
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def cell_done(matrix_dir: Path, key: str) -> bool:
    return (cell_dir(matrix_dir, key) / CELL_RECORD).is_file()


def current_cells(matrix_dir: Path, plan: MatrixPlan) -> list[tuple[PlannedCell, Path]]:
    """(cell, its directory) for every finished cell of @plan, in the plan's order."""
    return [(c, cell_dir(matrix_dir, c.key)) for c in plan.cells if cell_done(matrix_dir, c.key)]


#: latest_plan's plans by their file's path and identity (written_as): a report reads its matrix's plan
#: for its tables, each claim's extractor and the comparisons beside them (28 times for Table 1's), and
#: a plan of 320 cells is megabytes of JSON to parse and validate each time.
_PLANS: dict[tuple, MatrixPlan] = {}


def latest_plan(matrix_dir: Path) -> tuple[Path, MatrixPlan]:
    """The newest plan of @matrix_dir, and its path.  A copy of the one this process read: a field set
    on it is the caller's own, but its lists and the cells in them are shared, for reading."""
    plans = sorted((Path(matrix_dir) / "plans").glob("plan-*.json"))
    if not plans:
        raise ArchiveError(f"{matrix_dir} holds no plan (plans/plan-*.json): not a matrix directory")
    key = (str(plans[-1]), written_as(plans[-1]))
    if key not in _PLANS:
        _PLANS[key] = read_matrix_plan(plans[-1])
    return plans[-1], _PLANS[key].model_copy()


#: A run record's per-flow series, which only the plots and the per-paper reports read: each flow's
#: received bytes over time, the module's events and BBRv3's states, most of a record's bytes.
SERIES_KEYS = frozenset({"rx_series", "events", "bbr3"})
#: run_summary's records by their file's path and identity (written_as), the least recently read
#: dropped past SUMMARIES_KEPT: a matrix report over 640 runs keeps every one (a few KB each, where a
#: record with its series is about a megabyte in memory).
_SUMMARIES: OrderedDict[tuple, dict] = OrderedDict()
SUMMARIES_KEPT = 4096


def run_summary(path: Path) -> dict:
    """A run's record (its run.json) without its flows' series (SERIES_KEYS), parsed once while its
    file is unchanged: a matrix report's passes over its cells (its tables, the cells' timing, their
    conditions, the flows' table, the page's links to captures) share one reading of each run where
    each read it again.  Shared between its readers: for reading, never to change."""
    key = (str(path), written_as(path))
    got = _SUMMARIES.get(key)
    if got is None:
        record = read_record(path, "sslab.run")
        got = {**record, "flows": [{k: v for k, v in f.items() if k not in SERIES_KEYS}
                                   for f in record.get("flows") or []]}
        _SUMMARIES[key] = got
        while len(_SUMMARIES) > SUMMARIES_KEPT:
            _SUMMARIES.popitem(last=False)
    else:
        _SUMMARIES.move_to_end(key)
    return got


def run_summaries_of(cell_dir: Path) -> list[tuple[dict, Path]]:
    """runs_of's runs as run_summary reads them (no series): for a pass that reads none."""
    out = cell_dir / "job" / "out"
    return [(run_summary(out / "runs" / e["tag"] / "run.json"), out / "runs" / e["tag"])
            for e in read_runs_index(out / "runs.json")]


def runs_of(cell_dir: Path) -> list[tuple[dict, Path]]:
    out = cell_dir / "job" / "out"
    index = read_runs_index(out / "runs.json")
    return [(read_record(out / "runs" / e["tag"] / "run.json", "sslab.run"), out / "runs" / e["tag"])
            for e in index]


def check_controls(run: dict, where: Path) -> None:
    """Every flow of @run ran the control it asked for: a kernel that substituted one (an unknown
    name falls back to the default) would put another algorithm's numbers under this one's name."""
    for f in run["flows"]:
        if f["cc_used"] != f["cc"]:
            raise ValueError(f"{where}: flow on port {f['port']} asked for {f['cc']} but ran {f['cc_used']}")


def side_of(plan: MatrixPlan, run: dict) -> str:
    """'off' or 'on': which side of the comparison a run is."""
    cmp = plan.compare
    v = run["run"]["params"][cmp["param"]]
    if v == cmp["off"]:
        return "off"
    if v == cmp["on"]:
        return "on"
    raise ValueError(f"run {run['tag']}: {cmp['param']}={v} is neither side of the comparison")


def cell_timing(cell: PlannedCell, cell_dir: Path) -> tuple:
    """(name, rep, host, wall s, runs s, traffic s) of a finished cell.

    wall: the host's time for the whole cell (boot, fidelity checks, runs,
    analysis, archiving); runs: the guest's time inside run_case (servers,
    captures and trace read-out included); traffic: time on the wire, each
    run's first flow start to its last flow's last byte.
    """
    info = read_record(cell_dir / "cell.json", "sslab.cell")
    wire = sum(max(f.get("started_s", 0.0) + f["fct_s"] for f in run["flows"])
               for run, _ in run_summaries_of(cell_dir))
    return cell.name, cell.rep, info["host"], info["wall_s"], info["traffic_s"], wire


def overhead_table(walls: list[tuple]) -> str:
    if not walls:
        return ""
    lines = ["| cell | rep | host | wall (s) | runs in the guest (s) | traffic on the wire (s) | overhead: wall − traffic (s) | wall / traffic |",
             "|---|---|---|---|---|---|---|---|"]
    for name, rep, host, wall, runs, wire in walls:
        lines.append(f"| {name} | {rep} | {host} | {wall:.0f} | {runs:.0f} | {wire:.0f} | {wall - wire:.0f} | "
                     f"{wall / wire:.2f} |")
    tw, tr, tt = (sum(w[i] for w in walls) for i in (3, 4, 5))
    lines.append(f"| all {len(walls)} cells | | | {tw:.0f} | {tr:.0f} | {tt:.0f} | {tw - tt:.0f} | {tw / tt:.2f} |")
    return "\n".join(lines)
