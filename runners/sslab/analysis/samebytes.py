"""Two results trees, run by run: did a change that should move nothing move anything?

A refactoring of the guest, a kernel patch that should be inert, a new backend: each is shown
harmless by running the same experiments before and after it and comparing every run.  Under
virtual time one seed gives one byte stream, so the test is exact.  This pairs the finished runs of
two trees (two SSLAB_RESULTS directories, or one experiment's directory in each) and compares each
pair the way `sslab same-bytes` compares two runs (sslab.analysis.oracle: every flow ACK by ACK and
packet by packet), and beside it every capture and trace file whole (a trace in its text form on one
side and as ring-buffer pages on the other by the records it holds).

Pairing.  A run's directory is named by the time it ran (20261205T001447Z-0c52), and a matrix
cell's by its key, which covers the guest's code and the image: neither is shared by the two sides.
So a scenario run is named by its path below the tree with its own directory left out
(startup/*); an experiment's part, a cell of its store, by where its key is linked as if it were
there (results/startup/keys/<key> -> startup/*: a part run before 8 Dec 2026 into a directory of
its own and one run since as a cell pair); and a matrix cell by its place (the matrix's setting
directory), its name and its repetition (cell.json).  What a store keeps under failed/ (a failed
attempt, a cell set aside) is no run.  A tree with two runs under one name (an experiment run
twice, `AGAIN=1`, before 8 Dec 2026) cannot be paired: it is refused, naming them.
"""

from __future__ import annotations

import filecmp
from dataclasses import dataclass, field
from pathlib import Path

from isal import igzip

from ..paths import STAMP
from ..records import read_record
from .archive import CELL_RECORD, runs_named_by_keys
from .oracle import UnpairedRuns, compare_runs, difference_text
from .traces import read_trace

#: The files of a run compared whole: what the guest wrote that is traffic (captures, traces).  The
#: run records are not: they hold the host's times.  A compressed one (.gz) is compared by what it
#: holds: its deflated bytes are the compressor's (sslab.experiment.archive.gzip_in_place), and an
#: archive compressed by zlib holds the same run as one compressed by ISA-L.
WHOLE_FILES = (".pcap", ".gz")


class Unpairable(ValueError):
    """Two runs of a tree under one name: which one to compare is not for this tool to guess."""


def is_run_dir(path: Path) -> bool:
    return (Path(path) / "job" / "out" / "runs.json").is_file()


def run_dirs(root: Path) -> dict[str, Path]:
    """Every finished run directory under @root, by a name another tree's run of the same scenario
    or cell shares (see the module's comment).  Directories of unfinished cells (a dot first) and a
    run's own inner directories are not runs."""
    root = Path(root)
    out: dict[str, Path] = {}
    # A run a key names -> the directory of that key's kind, below @root.
    linked = {run: link.parent.parent.relative_to(root).as_posix() for run, link in runs_named_by_keys(root).items()}
    for index in sorted(root.rglob("job/out/runs.json")):
        run = index.parent.parent.parent
        rel = run.relative_to(root)
        if "job" in rel.parts or "failed" in rel.parts or any(p.startswith(".") for p in rel.parts):
            continue
        if run.resolve() in linked:
            name = f"{linked[run.resolve()]}/*"
        elif (run / CELL_RECORD).is_file():
            cell = read_record(run / CELL_RECORD, "sslab.cell")
            name = f"{rel.parent.parent.as_posix()}: {cell['name']} r{cell['rep']}"
        else:
            name = "/".join("*" if STAMP.fullmatch(p) else p for p in rel.parts)
        if name in out:
            raise Unpairable(f"{root} holds two runs named {name}: {out[name]} and {run}")
        out[name] = run
    return out


@dataclass
class PairResult:
    name: str
    flows: int = 0
    flows_same: int = 0
    #: The first difference of each differing flow, in words.
    differences: list[str] = field(default_factory=list)
    files: int = 0
    #: The files that differ or that only one side has, relative to the run's directory.
    files_differing: list[str] = field(default_factory=list)
    #: Why the two directories' runs could not be paired (another plan's runs), or None.
    runs_differ: str | None = None

    @property
    def same(self) -> bool:
        return self.runs_differ is None and self.flows == self.flows_same and not self.files_differing


def compare_pair(name: str, before: Path, after: Path) -> PairResult:
    """Flow by flow and file by file, @before's run against @after's."""
    out = PairResult(name)
    try:
        flows = compare_runs(before, after)
    except UnpairedRuns as e:
        out.runs_differ, flows = str(e), []
    for c in flows:
        out.flows += 1
        if c.identical:
            out.flows_same += 1
        else:
            out.differences.append(f"{c.run} port {c.port}: {difference_text(c, 'after')}")
    mine = {_paired_name(p.relative_to(before)): p for p in (before / "job" / "out").rglob("*") if p.suffix in WHOLE_FILES}
    theirs = {_paired_name(p.relative_to(after)): p for p in (after / "job" / "out").rglob("*") if p.suffix in WHOLE_FILES}
    for name in sorted(mine | theirs):
        out.files += 1
        if name not in mine or name not in theirs or not same_content(mine[name], theirs[name]):
            out.files_differing.append(name)
    return out


#: A run's trace as ftrace's text (a guest before 7 Dec 2026) and as the ring buffer's pages (since).
TEXT_TRACE, RINGBUF_TRACE = ".trace.gz", ".trace.rb.gz"


#: A capture as the guest wrote it, and as a store keeps it (a cell's, gzipped: matrix.cells).
RAW_CAPTURE, STORED_CAPTURE = ".pcap", ".pcap.gz"


def _paired_name(rel: Path) -> str:
    """The name a file is paired by: its path, a trace's in either form named as the text's, a
    capture's as the raw one's (a part run before 8 Dec 2026 kept it raw, one run since gzipped)."""
    name = rel.as_posix()
    if name.endswith(STORED_CAPTURE):
        return name[:-len(STORED_CAPTURE)] + RAW_CAPTURE
    return name[:-len(RINGBUF_TRACE)] + TEXT_TRACE if name.endswith(RINGBUF_TRACE) else name


def same_content(a: Path, b: Path) -> bool:
    """same_file, and a trace in its two forms (text, ring-buffer pages) by its records: every event's
    time, name and fields as the kernel prints them (sslab.analysis.traces.read_trace)."""
    if a.name.endswith(RINGBUF_TRACE) != b.name.endswith(RINGBUF_TRACE):
        return read_trace(a) == read_trace(b)
    return same_file(a, b)


def same_file(a: Path, b: Path) -> bool:
    """Whether two archived files hold the same bytes: byte for byte, or a gzip file by what it holds,
    against another or against the raw file (read a MiB at a time, so a capture's tens of MB are never
    held whole)."""
    if filecmp.cmp(a, b, shallow=False):
        return True
    if a.suffix != ".gz" and b.suffix != ".gz":
        return False
    def opened(p: Path):
        return igzip.open(p, "rb") if p.suffix == ".gz" else open(p, "rb")
    with opened(a) as x, opened(b) as y:
        while True:
            chunk = x.read(1 << 20)
            if chunk != y.read(1 << 20):
                return False
            if not chunk:
                return True


@dataclass
class TreeResult:
    pairs: list[PairResult]
    #: Names only one side has, with the side.
    unpaired: list[str]

    @property
    def same(self) -> bool:
        return not self.unpaired and all(p.same for p in self.pairs)

    def lines(self) -> list[str]:
        out = []
        for p in self.pairs:
            out.append(f"{p.name}: {p.flows_same} of {p.flows} flows the same bytes, "
                       f"{p.files - len(p.files_differing)} of {p.files} files")
            out += [f"  not the same runs: {p.runs_differ}"] if p.runs_differ else []
            out += [f"  {d}" for d in p.differences[:3]]
            out += [f"  file differs: {f}" for f in p.files_differing[:3]]
        out += [f"unpaired: {u}" for u in self.unpaired]
        flows, same = sum(p.flows for p in self.pairs), sum(p.flows_same for p in self.pairs)
        files = sum(p.files for p in self.pairs)
        files_same = files - sum(len(p.files_differing) for p in self.pairs)
        out.append(f"{len(self.pairs)} run{'' if len(self.pairs) == 1 else 's'} paired, {len(self.unpaired)} not; "
                   f"{same} of {flows} flows the same bytes; {files_same} of {files} capture and trace files")
        return out


def compare_trees(before: Path, after: Path) -> TreeResult:
    """Every run of @before against the run of @after under the same name (Unpairable from either
    tree before any comparison)."""
    a, b = run_dirs(before), run_dirs(after)
    unpaired = [f"{n} (only in {before})" for n in sorted(set(a) - set(b))] + \
               [f"{n} (only in {after})" for n in sorted(set(b) - set(a))]
    return TreeResult([compare_pair(n, a[n], b[n]) for n in sorted(set(a) & set(b))], unpaired)
