"""One scenario on two substrates, side by side: does the clock change the answer?

`make crosscheck` runs E1 under UML (virtual time, infinitely fast CPUs)
and under QEMU with -icount (virtual time, CPU work costs guest time by
instruction count) and prints, per variant, the FCT of the small transfer,
the packets lost in the large one and slow start's exit cwnd from each,
with agreement marked.

Agreement: the two medians differ by no more than 10% of the larger one,
or, when both sides have at least MIN_N_FOR_CI repetitions, by no more than
the two 95% CI half-widths together (with two repetitions Student's t is
12.7 and the interval says little).  Counts near zero (losses) agree when
both are at most 5.
"""

from __future__ import annotations

from pathlib import Path

from ..records import read_record

#: Relative difference two substrates may show and still agree.
REL_TOLERANCE = 0.10
#: Counts at or below this on both sides agree (a handful of drops is noise).
SMALL_COUNT = 5
#: Repetitions a side needs before its CI may widen the agreement.
MIN_N_FOR_CI = 3


def _half(d: dict | None) -> float:
    if not d or not d.get("ci95"):
        return 0.0
    return (d["ci95"][1] - d["ci95"][0]) / 2


def agree(a: dict | None, b: dict | None, count: bool = False) -> str:
    if not a or not b or a.get("median") is None or b.get("median") is None:
        return "–"
    x, y = a["median"], b["median"]
    if count and x <= SMALL_COUNT and y <= SMALL_COUNT:
        return "agree"
    allowed = REL_TOLERANCE * max(abs(x), abs(y))
    if min(a.get("n") or 0, b.get("n") or 0) >= MIN_N_FOR_CI:
        allowed = max(allowed, _half(a) + _half(b))
    return "agree" if abs(x - y) <= allowed else "DIFFER"


def _fmt(d: dict | None, digits: int) -> str:
    if not d or d.get("median") is None:
        return "–"
    text = f"{d['median']:.{digits}f}"
    if d.get("ci95"):
        lo, hi = d["ci95"]
        text += f" [{max(lo, 0):.{digits}f}, {hi:.{digits}f}]"
    return text


def crosscheck_table(runs: dict[str, Path]) -> str:
    """@runs: label -> run directory (two of them) with summary.json; a markdown table."""
    (la, da), (lb, db) = list(runs.items())
    rows_a = {r["cc"]: r for r in read_record(da / "summary.json", "sslab.summary")["startup"]}
    rows_b = {r["cc"]: r for r in read_record(db / "summary.json", "sslab.summary")["startup"]}
    any_row = next(iter(rows_a.values()))
    small, large = any_row["small_size"], any_row["large_size"]
    lines = [f"| variant | FCT {small} (s), {la} | {lb} | | lost in {large}, {la} | {lb} | | "
             f"exit cwnd, {la} | {lb} | |", "|---|---|---|---|---|---|---|---|---|---|"]
    for cc in rows_a:
        a, b = rows_a[cc], rows_b.get(cc, {})
        lines.append(f"| {cc} | {_fmt(a.get('fct_small'), 3)} | {_fmt(b.get('fct_small'), 3)} | "
                     f"{agree(a.get('fct_small'), b.get('fct_small'))} | "
                     f"{_fmt(a.get('lost_large'), 0)} | {_fmt(b.get('lost_large'), 0)} | "
                     f"{agree(a.get('lost_large'), b.get('lost_large'), count=True)} | "
                     f"{_fmt(a.get('exit_cwnd_large'), 0)} | {_fmt(b.get('exit_cwnd_large'), 0)} | "
                     f"{agree(a.get('exit_cwnd_large'), b.get('exit_cwnd_large'))} |")
    return "\n".join(lines)
