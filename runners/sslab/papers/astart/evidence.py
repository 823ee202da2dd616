"""E8's (the Astart paper) evidence: the least margin between starts along an axis, the ratio across
buffers, NewReno's share beside Astart."""

from __future__ import annotations

from pathlib import Path

from ...analysis.evidence.base import LedgerError, Measured, measured, report_summary


def _astart_settings(archive: Path) -> tuple[dict, list[Path]]:
    """An E8 report's settings (scenario name -> its runs by case, each repetition's flows' throughput),
    from the records of its runs it keeps (papers.astart.runs), and the scenario runs it was written over."""
    s = report_summary(archive, "an E8 report: `make astart`")
    settings: dict = {}
    for r in s.get("records", []):
        runs = settings.setdefault(f"e8-astart-{r['setting']}", {"runs": {}})["runs"]
        runs.setdefault(r["case"], []).append({"flows": r["flows"]})
    return settings, [Path(r) for r in s.get("runs", [])]


def _astart_axis(settings: dict, axis: str) -> dict[float, str]:
    """The E8 settings along @axis (bw: Mbit/s, rtt: ms, buf: BDP, liw: the one Fig. 12 setting), as
    the report takes them: the 40 Mbit/s setting is also the 100 ms RTT's and the 1 BDP buffer's."""
    import re

    pattern = {"bw": r"e8-astart-bw-(\d+)mbit$", "rtt": r"e8-astart-rtt-(\d+)ms$",
               "buf": r"e8-astart-buf-([\d.]+)bdp$", "liw": r"e8-astart-(liw)$"}[axis]
    out = {}
    for name in settings:
        if m := re.match(pattern, name):
            out[0.0 if axis == "liw" else float(m[1])] = name
    if "e8-astart-bw-40mbit" in settings:
        out.setdefault({"rtt": 100.0, "buf": 1.0}.get(axis, -1.0), "e8-astart-bw-40mbit")
    out.pop(-1.0, None)
    return out


def astart_least_margin(archive: Path, axis: str, above: str, below: str, min_k: str = "-inf",
                        max_k: str = "inf") -> Measured:
    """How far the slower of @above's cases (comma-separated: Astart and Hoe) stays above @below's
    (NewReno, Vegas) in the first 20 s's throughput (Mbit/s), the least over the E8 settings along
    @axis from @min_k to @max_k (its unit: Mbit/s, ms, BDP), per repetition; its CI over repetitions.
    Above everywhere: the CI over zero."""
    settings, runs = _astart_settings(archive)
    keys = {k: n for k, n in _astart_axis(settings, axis).items() if float(min_k) <= k <= float(max_k)}
    if not keys:
        raise LedgerError(f"{archive}: no E8 setting along {axis} from {min_k} to {max_k} (`make astart`)")
    ups = [x for x in above.split(",") if x]
    per_setting = []
    for k, name in sorted(keys.items()):
        cases = settings[name]["runs"]
        missing = [c for c in (*ups, below) if c not in cases]
        if missing:
            raise LedgerError(f"{archive}: {name} has no run of {', '.join(missing)}")
        reps = min(len(cases[c]) for c in (*ups, below))
        per_setting.append([min(cases[u][i]["flows"][0]["throughput_mbit"] for u in ups)
                            - cases[below][i]["flows"][0]["throughput_mbit"] for i in range(reps)])
    k = min(len(v) for v in per_setting)
    vals = [min(v[i] for v in per_setting) for i in range(k)]
    return measured(vals, f"{archive}: {len(keys)} settings along {axis} ({', '.join(f'{x:g}' for x in sorted(keys))}); "
                          f"min({above}) - {below}, the least per repetition", runs, f"REPS={k}")


def astart_buffer_ratio(archive: Path, cc: str, small: str, ref: str) -> Measured:
    """@cc's first-20-s throughput at the buffer of @small BDP over its throughput at @ref BDP (E8's
    Fig. 10 settings), per repetition."""
    settings, runs = _astart_settings(archive)
    keys = _astart_axis(settings, "buf")
    missing = [b for b in (small, ref) if float(b) not in keys]
    if missing:
        raise LedgerError(f"{archive}: no E8 setting at a buffer of {', '.join(missing)} BDP (`make astart`)")
    a, b = (settings[keys[float(x)]]["runs"].get(cc, []) for x in (small, ref))
    if not a or not b:
        raise LedgerError(f"{archive}: no {cc} run at {small} and {ref} BDP")
    vals = [x["flows"][0]["throughput_mbit"] / y["flows"][0]["throughput_mbit"] for x, y in zip(a, b)]
    return measured(vals, f"{archive}: {cc} at {small} BDP over {ref} BDP", runs, f"REPS={len(vals)}")


def astart_newreno_share(archive: Path) -> Measured:
    """The five NewReno flows' share of the throughput beside five Astart flows (E8's mixed fairness
    case), per repetition."""
    settings, runs = _astart_settings(archive)
    fair = settings.get("e8-astart-fairness", {}).get("runs", {}).get("mixed")
    if not fair:
        raise LedgerError(f"{archive}: no mixed fairness run (`make astart`)")
    vals = []
    for r in fair:
        a = sum(f["throughput_mbit"] for f in r["flows"] if f["cc"] == "reno_astart")
        n = sum(f["throughput_mbit"] for f in r["flows"] if f["cc"] == "reno_fixed")
        vals.append(n / (a + n))
    return measured(vals, f"{archive}: the mixed case's NewReno share", runs, f"REPS={len(vals)}")
