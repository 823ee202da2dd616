"""Every report's data as one tidy table: a row per flow per run, the setting as columns.

flows.csv beside each report (and sslab.results.load, which reads it into a pandas DataFrame) holds
what a researcher's own analysis starts from, read from the archive alone:

    where     scenario, run_dir (relative to the report), substrate, clock, kernel (the guest's
              release), image (its hash, 12 digits), code (the commit, 12 digits, "+dirty")
    setting   rate_mbit, buffer (as asked), buffer_pkts, link, hosts, mtu
    run       run (its tag), case, rep, param_<name> (each of the case's parameters: cc, size, ...),
              lost (the bottleneck's drops), queue_peak_pkts (the most its queue held at once, as
              the qdisc counted: patches 0007 and 0008), retransmissions (the senders' counter), fidelity_ok,
              spin_guard_charges
    flow      flow (0, 1, ... in the run), pair, rtt_ms (its pair's base RTT), cc, cc_used,
              version (of its start, in the start's words: SUSS "2024", SEARCH "4.0", cubic_hs's
              HyStart "Linux 5.19"), suss_version (a SUSS flow's, as the number the module
              takes: 2024, 2025, 0 for ours), size_bytes, start_s (when it was due), fct_s (the client's),
              server_fct_s, bytes_received, exit_cwnd, exit_time_s, receiver_limited_acks,
              connect_s (the client's connect(), inside fct_s), syn_retransmits and
              synack_retransmits (the kernel's count on either side of the handshake)

    matrix    (a matrix's report) axis_<name>, the cell's value on each of the matrix's axes (Table 1:
              axis_buffer, axis_large_cc, axis_large_rtt), and iteration, the cell's repetition

A value a run does not have is empty.  The columns are COLUMNS, the matrix's, then the param_
ones, each group sorted.  sslab.results.load types them: INTEGER_COLUMNS as integers (a missing one
stays missing: pandas' Int64), and an axis_ or param_ column whose every value is a number in one unit
("25ms", "1BDP", "2MB") gains a numeric twin named with its unit (axis_large_rtt_ms, param_size_mb),
so that it sorts and computes as a number.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ..ccas import recorded_suss_version, recorded_version
from ..records import RecordFormatError, read_record, read_runs_index
from .archive import run_summary
from .conditions import commit_text
from .fidelity import run_passes
from .setting import setting_of

#: The table's fixed columns, in order (the case's parameters follow, as param_<name>).
COLUMNS = ("scenario", "run_dir", "substrate", "clock", "kernel", "image", "code",
           "rate_mbit", "buffer", "buffer_pkts", "link", "hosts", "mtu",
           "run", "case", "rep", "lost", "queue_peak_pkts", "retransmissions", "fidelity_ok", "spin_guard_charges",
           "flow", "pair", "rtt_ms", "cc", "cc_used", "version", "suss_version", "size_bytes", "start_s", "fct_s",
           "server_fct_s", "bytes_received", "exit_cwnd", "exit_time_s", "receiver_limited_acks",
           "connect_s", "syn_retransmits", "synack_retransmits")

#: The columns that count something (packets, bytes, repetitions, a version): integers.
INTEGER_COLUMNS = ("buffer_pkts", "mtu", "rep", "lost", "queue_peak_pkts", "retransmissions", "spin_guard_charges",
                   "flow", "pair", "suss_version", "size_bytes", "bytes_received", "exit_cwnd",
                   "receiver_limited_acks", "syn_retransmits", "synack_retransmits", "iteration")

FILE = "flows.csv"


def where_it_ran(run_dir: Path) -> dict:
    """The columns every row of @run_dir shares: its scenario, substrate and code, and its setting
    (empty where the directory has no meta.json or plan.json to say)."""
    out: dict = {"_rtts": []}
    if (run_dir / "meta.json").is_file():
        meta = read_record(run_dir / "meta.json", "sslab.meta")
        code = meta.get("code") or {}
        out.update(substrate=meta.get("substrate"), clock=meta.get("clock"),
                   kernel=(meta.get("guest_kernel") or {}).get("release"),
                   image=((meta.get("image") or {}).get("hash") or "")[:12],
                   code=commit_text(code))
    try:
        s = setting_of(run_dir)
    except (RecordFormatError, KeyError):
        return out  # a directory whose plan (or, before plans said it, meta.json) does not give it
    out.update(scenario=s.name, rate_mbit=s.rate_mbit, buffer=s.buffer, buffer_pkts=s.buffer_pkts, link=s.link,
               hosts=s.hosts_model, mtu=s.mtu, _rtts=s.pair_rtts_ms)
    return out


def flow_rows(run_dir: Path, relative_to: Path | None = None) -> list[dict]:
    """A row per flow of every run under @run_dir (a scenario run's or a matrix cell's directory)."""
    run_dir = Path(run_dir)
    shared = where_it_ran(run_dir)
    rtts = shared.pop("_rtts")
    shared["run_dir"] = os.path.relpath(run_dir, relative_to) if relative_to else str(run_dir)
    out_dir = run_dir / "job" / "out"
    rows = []
    for entry in read_runs_index(out_dir / "runs.json"):
        run = run_summary(out_dir / "runs" / entry["tag"] / "run.json")
        per_run = {**shared, "run": entry["tag"], "case": run["run"]["case"], "rep": run["run"]["rep"],
                   **{f"param_{k}": v for k, v in (run["run"].get("params") or {}).items()},
                   "lost": run["bottleneck"]["drops"], "queue_peak_pkts": run["bottleneck"].get("peak_pkts"),
                   "retransmissions": sum(c.get("RetransSegs", 0) for c in (run.get("tcp_counters") or {}).values()),
                   "fidelity_ok": run_passes(run),
                   "spin_guard_charges": (run.get("fidelity") or {}).get("spin_guard_charges")}
        for i, f in enumerate(run["flows"]):
            ss = f.get("slow_start") or {}
            pair = f.get("pair")
            rows.append({**per_run, "flow": i, "pair": pair,
                         "rtt_ms": rtts[pair - 1] if pair and pair <= len(rtts) else None,
                         "cc": f.get("cc"), "cc_used": f.get("cc_used"), "version": recorded_version(f),
                         "suss_version": recorded_suss_version(f),
                         "size_bytes": f.get("size"), "start_s": f.get("start"), "fct_s": f.get("fct_s"),
                         "server_fct_s": f.get("server_fct_s"), "bytes_received": f.get("bytes_received"),
                         "exit_cwnd": ss.get("exit_cwnd"), "exit_time_s": ss.get("exit_time_s"),
                         "receiver_limited_acks": f.get("receiver_limited_acks"), "connect_s": f.get("connect_s"),
                         "syn_retransmits": f.get("syn_retransmits"),
                         "synack_retransmits": f.get("synack_retransmits")})
    return rows


def columns_of(rows: list[dict]) -> list[str]:
    """COLUMNS, then every other column any row has (a matrix's), then the param_ ones, each sorted."""
    keys = {k for r in rows for k in r} - set(COLUMNS)
    return [*COLUMNS, *sorted(k for k in keys if not k.startswith("param_")),
            *sorted(k for k in keys if k.startswith("param_"))]


def matrix_columns(cell: dict) -> dict:
    """A matrix cell's columns: axis_<name> per axis (@cell["setting"]), iteration (@cell["rep"])."""
    return {**{f"axis_{a}": v for a, v in cell["setting"].items()}, "iteration": cell["rep"]}


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns_of(rows), restval="", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return buf.getvalue()


def write_flows_table(dest: Path, run_dirs: list[Path], cells: list[dict] | None = None) -> Path:
    """@dest/flows.csv: every flow of every run under @run_dirs (their paths relative to @dest); with
    @cells (a matrix's, one per run directory: its axes' values and its iteration), those too."""
    extra = [matrix_columns(c) for c in cells] if cells is not None else [{}] * len(run_dirs)
    rows = [{**row, **more} for d, more in zip(run_dirs, extra) for row in flow_rows(d, relative_to=dest)]
    out = Path(dest) / FILE
    out.write_text(csv_text(rows))
    return out


def table_of(where: Path) -> Path | None:
    """The flows.csv that stands for @where: its own, its latest report's, or None."""
    for candidate in (where / FILE, where / "reports" / "latest" / FILE, where / "latest" / FILE):
        if candidate.is_file():
            return candidate
    return None


def read_rows(where: str | Path) -> list[dict]:
    """The table of @where as dicts: a report's flows.csv (values as strings), a results directory's
    latest report's, or read from a run's archive (values as recorded); FileNotFoundError naming
    what was looked for when there is none."""
    where = Path(where)
    if (table := table_of(where)) is not None:
        with open(table, newline="") as f:
            return list(csv.DictReader(f))
    if (where / "job" / "out" / "runs.json").is_file():
        return flow_rows(where)
    raise FileNotFoundError(f"{where}: no {FILE} there (a report's), under reports/latest/ (a matrix's or "
                            f"experiment's results) or a run's archive (job/out/runs.json)")
