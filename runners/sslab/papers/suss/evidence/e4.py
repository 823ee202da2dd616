"""E4's (FCT against size, Figs. 13-14) evidence: the improvement and its fall with size, the loss ratio
and its gap, SUSS against another start, from the report's summary."""

from __future__ import annotations

from pathlib import Path

from ....analysis.evidence.base import LedgerError, Measured, Point, difference, extreme, report_summary, standard_error
from ....analysis.lastmile import least_improvement


def _e4_summary(archive: Path) -> tuple[dict, list[Path], str]:
    """An E4 report's summary, the scenario runs it was written over, and the make options that ran
    them (LINKS= the links, REPS= the fewest repetitions any size has)."""
    s = report_summary(archive, "an E4 report: `make fct-vs-size`")
    runs = [Path(r) for r in s.get("runs", [])]
    # The settings (each run directory lies in results/fct-vs-size/<setting>/) and the variants run
    # ("cubic_suss 2024" ran as cubic_suss): the SELECT= that runs this archive again.
    settings = sorted({r.parent.name for r in runs})
    variants = sorted({r["cc"].split()[0] for r in s.get("sizes", [])})
    reps = min((r["n"] for r in s.get("sizes", [])), default=0)
    return s, runs, f"SELECT={','.join(settings + variants)} REPS={reps}"


def e4_least_improvement(archive: Path, links: str, max_mb: str, min_rtt_ms: str = "50",
                         on: str = "cubic_suss 2024") -> Measured:
    """The least FCT improvement with SUSS (in percent) over E4's @links (comma-separated) and its sizes
    under @max_mb at RTTs over @min_rtt_ms, from the report's summary (E4's `improvements`: (off - on) /
    off of the mean FCT, Welch's CI), as least_improvement takes it."""
    s, runs, options = _e4_summary(archive)
    want = [x for x in links.split(",") if x]
    imps = [i for i in s.get("improvements", [])
            if i["link"] in want and i["size"] < float(max_mb) * 1e6 and i["rtt_ms"] > float(min_rtt_ms)
            and i["on"] == on]
    missing = [x for x in want if x not in {i["link"] for i in imps}]
    if missing:
        raise LedgerError(f"{archive}: no {on} improvement for {', '.join(missing)} under {max_mb} MB over "
                          f"{min_rtt_ms} ms (`make fct-vs-size LINKS=...` runs it)")
    least = min(imps, key=lambda i: i["improvement"])
    m = least_improvement(imps)
    return Measured(m.mean, m.n, m.ci95, f"{archive}: {len(imps)} link x size points; the least, {least['link']} at "
                    f"{least['size'] / 1e6:g} MB and {least['rtt_ms']:g} ms", tuple(runs), options, m.points)


def e4_loss_ratio(archive: Path, link: str, rtt_ms: str, min_mb: str, max_mb: str,
                  on: str = "cubic_suss 2024", off: str = "cubic_hs") -> Measured:
    """Packets lost with SUSS over packets lost without (E5): the bottleneck's drops summed over E4's
    sizes from @min_mb to @max_mb MB on @link at @rtt_ms, each size's mean per run, on over off.  Its
    CI by the delta method from each size's mean and standard error (the sum's variance is the sum of
    the sizes'; the ratio's relative variance the sum of the two sums' relative variances), Student's t
    at the fewest repetitions any size has, less one: an approximation that is said with the verdict."""
    import math

    from ....analysis.stats import t95

    s, runs, options = _e4_summary(archive)
    lo, hi = float(min_mb) * 1e6, float(max_mb) * 1e6
    rows = [r for r in s.get("sizes", []) if r["link"] == link and abs(r["rtt_ms"] - float(rtt_ms)) < 1e-6
            and lo <= r["size"] <= hi]
    sums = {}
    for side in (on, off):
        mine = [r for r in rows if r["cc"] == side and r["lost"]["n"]]
        if not mine:
            raise LedgerError(f"{archive}: no {side} run on {link} at {rtt_ms} ms between {min_mb} and {max_mb} MB "
                              f"(`make fct-vs-size LINKS={link}` runs it)")
        var = 0.0
        for r in mine:
            d = r["lost"]
            if d["ci95"] is not None and d["n"] > 1:
                var += standard_error(d) ** 2
        sums[side] = (sum(r["lost"]["mean"] for r in mine), var, min(r["lost"]["n"] for r in mine), len(mine))
    (m_on, v_on, n_on, k_on), (m_off, v_off, n_off, k_off) = sums[on], sums[off]
    n = min(n_on, n_off)
    if m_off == 0:
        raise LedgerError(f"{archive}: {off} lost nothing on {link} at {rtt_ms} ms: no ratio")
    ratio = m_on / m_off
    # Each size's own ratio beside the sum (Fig. 14 shows them size by size).
    mean_of = {(r["cc"], r["size"]): r["lost"]["mean"] for r in rows if r["lost"]["n"]}
    per_size = ", ".join(f"{z / 1e6:g} MB {mean_of[(on, z)] / mean_of[(off, z)]:.2f}" if mean_of[(off, z)] else
                         f"{z / 1e6:g} MB -" for z in sorted({z for _, z in mean_of})
                         if (on, z) in mean_of and (off, z) in mean_of)
    ci = None
    if n > 1:
        rel = (v_on / m_on ** 2 if m_on else 0.0) + v_off / m_off ** 2
        half = t95(n - 1) * ratio * math.sqrt(rel)
        ci = (ratio - half, ratio + half)
    return Measured(ratio, n, ci,
                    f"{archive}: {link} at {rtt_ms} ms, {min(k_on, k_off)} sizes {min_mb}-{max_mb} MB: {m_on:.1f} "
                    f"lost on against {m_off:.1f} off (mean per run, summed over sizes); CI by the delta method; "
                    f"per size, on over off: {per_size}",
                    tuple(runs), options)


def _e4_rows(s: dict, link: str, rtt_ms: float, cc: str) -> dict[int, dict]:
    """An E4 summary's size rows of @cc on @link at @rtt_ms, by size."""
    return {r["size"]: r for r in s.get("sizes", [])
            if r["link"] == link and abs(r["rtt_ms"] - rtt_ms) < 1e-6 and r["cc"] == cc}


def _e4_long_rtts(s: dict, link: str, min_rtt_ms: float) -> list[float]:
    return sorted({r["rtt_ms"] for r in s.get("sizes", []) if r["link"] == link and r["rtt_ms"] > min_rtt_ms})


def e4_least_gain_over(archive: Path, links: str, other: str = "bbr", max_mb: str = "12",
                       min_rtt_ms: str = "100", on: str = "cubic_suss 2024") -> Measured:
    """SUSS's FCT gain over @other (percent of @other's mean FCT: positive, SUSS finishes sooner), the
    least over E4's @links at RTTs over @min_rtt_ms and sizes up to @max_mb (Fig. 11: "consistently
    outperforms the other two schemes").  Each point's CI from the two arms' standard errors; the
    least's CI from the least lower end to the least upper end (least_improvement): every point must
    clear the bound, and any one wholly below it fails the claim."""
    s, runs, options = _e4_summary(archive)
    points = []
    for link in [x for x in links.split(",") if x]:
        found = False
        for rtt in _e4_long_rtts(s, link, float(min_rtt_ms)):
            mine, theirs = _e4_rows(s, link, rtt, on), _e4_rows(s, link, rtt, other)
            for size in sorted(set(mine) & set(theirs)):
                if size > float(max_mb) * 1e6:
                    continue
                a, b = theirs[size]["fct"], mine[size]["fct"]
                n = min(a["n"], b["n"])
                diff, ci = difference([(1, a), (-1, b)], n)
                points.append(Point(f"{link} at {size / 1e6:g} MB and {rtt:g} ms", 100 * diff / a["mean"],
                                    (100 * ci[0] / a["mean"], 100 * ci[1] / a["mean"]), n))
                found = True
        if not found:
            raise LedgerError(f"{archive}: no {on} and {other} runs of the same size on {link} over {min_rtt_ms} ms "
                              f"(`make fct-vs-size` runs them)")
    least, ci = extreme(points)
    return Measured(least.value, min(p.n for p in points), ci,
                    f"{archive}: {len(points)} link x size points against {other}; the least, {least.where}; CIs from "
                    f"each arm's standard error", tuple(runs), options, tuple(points))


def e4_improvement_fall(archive: Path, links: str, small_mb: str = "2", max_mb: str = "12",
                        min_rtt_ms: str = "100", on: str = "cubic_suss 2024") -> Measured:
    """How much SUSS's improvement changes from @small_mb to the largest size up to @max_mb, in
    points (negative: it falls as the flow grows; Fig. 12), the largest over @links at RTTs over
    @min_rtt_ms: the CI of each link's change from the two improvements' CIs (independent runs),
    the largest's from the largest lower end to the largest upper end, so that `at_most 0` holds
    only when it falls on every link."""
    s, runs, options = _e4_summary(archive)
    imps = [i for i in s.get("improvements", []) if i["on"] == on and i["rtt_ms"] > float(min_rtt_ms)]
    points = []
    for link in [x for x in links.split(",") if x]:
        for rtt in sorted({i["rtt_ms"] for i in imps if i["link"] == link}):
            by = {i["size"]: i for i in imps if i["link"] == link and i["rtt_ms"] == rtt}
            small = by.get(int(float(small_mb) * 1e6))
            large = max((z for z in by if z <= float(max_mb) * 1e6), default=None)
            if small is None or large is None or large <= small["size"]:
                continue
            n = min(*small["n"], *by[large]["n"])
            terms = []
            for k, i in ((1, by[large]), (-1, small)):
                if i["improvement_ci"] is None:
                    raise LedgerError(f"{archive}: {link} at {i['size'] / 1e6:g} MB has no CI on its improvement")
                half = (i["improvement_ci"][1] - i["improvement_ci"][0]) / 2 * 100
                terms.append((k, {"mean": i["improvement"] * 100, "n": n,
                                  "ci95": [i["improvement"] * 100 - half, i["improvement"] * 100 + half]}))
            # Each improvement's half-width is already Welch's: its standard error at t(n - 1) stands in.
            diff, ci = difference(terms, n)
            points.append(Point(f"{link} ({large / 1e6:g} MB, {rtt:g} ms)", diff, ci, n))
        if not any(p.where.startswith(f"{link} (") for p in points):
            raise LedgerError(f"{archive}: no {on} improvement at {small_mb} MB and a larger size on {link} "
                              f"over {min_rtt_ms} ms (`make fct-vs-size` runs them)")
    top, ci = extreme(points, largest=True)
    return Measured(top.value, min(p.n for p in points), ci,
                    f"{archive}: {len(points)} links; the change from {small_mb} MB to the largest size, the least fall on "
                    f"{top.where}; CIs from the two improvements' CIs", tuple(runs), options, tuple(points))


def e4_loss_gap_change(archive: Path, link: str, rtt_ms: str, min_mb: str, max_mb: str,
                       on: str = "cubic_suss 2024", off: str = "cubic_hs") -> Measured:
    """How the loss rates with and without SUSS come together as the flow grows (§6.3, Fig. 14: "converge
    when the flow size increases"): the gap (off - on, percentage points of the packets sent) at the
    largest size up to @max_mb less the gap at the smallest from @min_mb, on @link at @rtt_ms; its CI
    from the four means' standard errors.  Negative: the gap narrows."""
    s, runs, options = _e4_summary(archive)
    a, b = _e4_rows(s, link, float(rtt_ms), on), _e4_rows(s, link, float(rtt_ms), off)
    sizes = sorted(z for z in set(a) & set(b) if float(min_mb) * 1e6 <= z <= float(max_mb) * 1e6)
    if len(sizes) < 2:
        raise LedgerError(f"{archive}: fewer than two sizes with both {off} and {on} on {link} at {rtt_ms} ms "
                          f"between {min_mb} and {max_mb} MB (`make fct-vs-size LINKS={link}` runs them)")
    lo, hi = sizes[0], sizes[-1]

    def pts(d: dict) -> dict:
        return {"mean": d["mean"] * 100, "n": d["n"], "ci95": d["ci95"] and [x * 100 for x in d["ci95"]]}

    terms = [(1, pts(b[hi]["loss_rate"])), (-1, pts(a[hi]["loss_rate"])),
             (-1, pts(b[lo]["loss_rate"])), (1, pts(a[lo]["loss_rate"]))]
    n = min(d["n"] for _, d in terms)
    diff, ci = difference(terms, n)
    gaps = {z: (b[z]["loss_rate"]["mean"] - a[z]["loss_rate"]["mean"]) * 100 for z in (lo, hi)}
    return Measured(diff, n, ci, f"{archive}: {link} at {rtt_ms} ms, the loss rate's gap off - on {gaps[lo]:.3g} points "
                                 f"at {lo / 1e6:g} MB and {gaps[hi]:.3g} at {hi / 1e6:g} MB; CI from the four means' "
                                 f"standard errors", tuple(runs), options)
