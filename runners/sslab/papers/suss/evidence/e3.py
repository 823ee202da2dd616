"""E3's (dynamics, Figs. 9-12) evidence: the two arms of each repetition side by side, their exit,
FCT, slow-start RTT, time to a window and data delivered by a time, from the per-ACK series."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Callable

from ....analysis.evidence.base import LedgerError, Measured, measured


def _arm_pairs(archive: Path, size: str, on: str = "cubic_suss",
               off: str = "cubic_hs") -> list[tuple[tuple[dict, Path], tuple[dict, Path]]]:
    """The repetitions of a scenario run's @size case with both arms done: per repetition, (run
    record, run directory) of @on and of @off, paired by repetition (the same seed and link trace
    position: the scenario's order alternates them within a repetition)."""
    from ....analysis.archive import runs_of

    if not (archive / "job" / "out" / "runs.json").is_file():
        raise LedgerError(f"{archive}: no runs (job/out/runs.json): not a scenario run directory")
    by: dict[int, dict[str, tuple[dict, Path]]] = {}
    for run, d in runs_of(archive):
        params = run["run"].get("params", {})
        if params.get("size") == size and params.get("cc") in (on, off):
            by.setdefault(run["run"]["rep"], {})[params["cc"]] = (run, d)
    pairs = [(sides[on], sides[off]) for _, sides in sorted(by.items()) if len(sides) == 2]
    if not pairs:
        raise LedgerError(f"{archive}: no repetition of {size} with both {off} and {on} done")
    return pairs


def _paired_change(archive: Path, size: str, value: Callable[[dict], float | None], what: str,
                   on: str = "cubic_suss", off: str = "cubic_hs") -> Measured:
    """(on / off - 1) x 100 of @value of the first flow, per repetition of the @size case, the two
    arms paired by repetition (_arm_pairs)."""
    pairs = [(value(a[0]["flows"][0]), value(b[0]["flows"][0])) for a, b in _arm_pairs(archive, size, on, off)]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not pairs:
        raise LedgerError(f"{archive}: no repetition of {size} has {what} in both arms")
    vals = [(a / b - 1) * 100 for a, b in pairs]
    return measured(vals, f"{archive}: {size}, {what} with {on} over {off}, paired by repetition",
                    [archive], f"REPS={len(pairs)}")


def e3_exit_cwnd_change(archive: Path, size: str) -> Measured:
    """Slow start's exit cwnd with SUSS over that without, less one, in percent (E3: Fig. 9)."""
    return _paired_change(archive, size, lambda f: (f.get("slow_start") or {}).get("exit_cwnd"),
                          "slow start's exit cwnd")


def e3_fct_change(archive: Path, size: str) -> Measured:
    """The flow's FCT with SUSS over that without, less one, in percent (positive: slower; E3: Fig. 13)."""
    return _paired_change(archive, size, lambda f: f.get("fct_s"), "FCT")


def _series(run: dict, run_dir: Path) -> dict:
    """The first flow's per-ACK series (traces.trace_series), its times moved to count from the
    connection's establishment at the server (the first ACK's time less the handshake's RTT sample
    it prints, as ProbeFacts times the server's FCT); shift_s: by how much."""
    from ....analysis.traces import trace_series

    if not run.get("trace"):
        raise LedgerError(f"{run_dir}: no kernel trace (capture.traces): no per-ACK series")
    s = trace_series(run_dir / run["trace"], run["flows"][0]["port"])
    if not s["t"]:
        raise LedgerError(f"{run_dir}: the trace holds no tcp_probe record of the flow")
    shift = (s["srtt_ms"][0] or 0.0) / 1000
    return {**s, "t": [t + shift for t in s["t"]], "shift_s": shift}


def _first_time_at(s: dict, cwnd: int) -> float | None:
    """When @s's cwnd first reached @cwnd (None: never)."""
    return next((t for t, c in zip(s["t"], s["cwnd"]) if c >= cwnd), None)


def e3_time_to_cwnd_ratio(archive: Path, size: str) -> Measured:
    """How long SUSS takes to reach the cwnd at which both arms' slow start ends, over how long
    HyStart takes (Fig. 9: "roughly half the time to reach 1300 packets", the cwnd where both left
    exponential growth there): per repetition the smaller of the two arms' slow-start exit cwnd,
    and each arm's time from its establishment to its first cwnd at or above it, SUSS's over
    HyStart's."""
    vals = []
    for (a, da), (b, db) in _arm_pairs(archive, size):
        ea, eb = ((r["flows"][0].get("slow_start") or {}).get("exit_cwnd") for r in (a, b))
        if ea is None or eb is None:
            continue
        target = min(ea, eb)
        ta, tb = _first_time_at(_series(a, da), target), _first_time_at(_series(b, db), target)
        if ta is not None and tb:
            vals.append(ta / tb)
    if not vals:
        raise LedgerError(f"{archive}: no repetition of {size} has a slow-start exit in both arms")
    return measured(vals, f"{archive}: {size}, the time to the smaller exit cwnd with cubic_suss over cubic_hs, "
                          f"paired by repetition", [archive], f"REPS={len(vals)}")


def _slow_start_peak_srtt_ms(run: dict, run_dir: Path) -> float | None:
    """The largest smoothed RTT the flow's trace shows up to its slow start's end (ms; None: no end)."""
    ss = run["flows"][0].get("slow_start") or {}
    if ss.get("exit_time_s") is None:
        return None
    s = _series(run, run_dir)
    # exit_time_s counts from the first ACK, as the trace's own times do.
    during = [r for t, r in zip(s["t"], s["srtt_ms"]) if r is not None and t - s["shift_s"] <= ss["exit_time_s"]]
    return max(during) if during else None


def e3_slow_start_rtt_change(archive: Path, size: str) -> Measured:
    """The largest smoothed RTT during slow start with SUSS over that without, less one, in percent,
    paired by repetition (Fig. 9: "RTT in SUSS remains almost unchanged in the early rounds before
    stopping exponential growth": the extra delay SUSS's faster growth would add)."""
    vals = []
    for (a, da), (b, db) in _arm_pairs(archive, size):
        ra, rb = _slow_start_peak_srtt_ms(a, da), _slow_start_peak_srtt_ms(b, db)
        if ra is not None and rb:
            vals.append((ra / rb - 1) * 100)
    if not vals:
        raise LedgerError(f"{archive}: no repetition of {size} has a slow-start exit in both arms")
    return measured(vals, f"{archive}: {size}, the largest srtt in slow start with cubic_suss over cubic_hs, "
                          f"paired by repetition", [archive], f"REPS={len(vals)}")


def _acked_by(s: dict, at_s: float) -> float:
    """The data acknowledged in order (MB) by @at_s after establishment (0 before the first ACK)."""
    got = 0.0
    for t, mb in zip(s["t"], s["acked_mb"]):
        if t > at_s:
            break
        got = mb
    return got


def e3_delivered_ratio(archive: Path, size: str, at_s: str = "2") -> Measured:
    """The data delivered (acknowledged in order) @at_s seconds after the connection is established,
    with SUSS over without, paired by repetition (Fig. 10: 2 MB without SUSS at 2 s, three times that
    with it)."""
    vals, off_mb = [], []
    for (a, da), (b, db) in _arm_pairs(archive, size):
        on, off = _acked_by(_series(a, da), float(at_s)), _acked_by(_series(b, db), float(at_s))
        if off > 0:
            vals.append(on / off)
            off_mb.append(off)
    if not vals:
        raise LedgerError(f"{archive}: no repetition of {size} delivered anything by {at_s} s without SUSS")
    return measured(vals, f"{archive}: {size}, data delivered {at_s} s after establishment with cubic_suss over "
                          f"cubic_hs, paired by repetition (without SUSS {statistics.fmean(off_mb):.2f} MB on "
                          f"average)", [archive], f"REPS={len(vals)}")
