"""The plots that answer "did it reproduce?" at a glance, drawn from the verdicts' own records
(Comparison.record: our mean and CI, the paper's value, the band, the outcome): nothing is computed
here that the tables do not hold.

    ours_against_paper   every value the paper prints or implies: its FCTs on log axes, its
                         improvements and changes on linear ones; y = x, the band around it, each point
                         coloured by its verdict and marked by what it is, our CI as a bar
    per_setting          setting by setting, the small flows' improvement and the large flow's change
                         with SUSS: ours with its CI beside the paper's value and its band
    against_bound        setting by setting, the large flow's change with SUSS against the bound the
                         claims ledger holds its column to (the largest slowdown the paper prints in it):
                         at or below it is "no noticeable negative impact", per setting

    summary_pdf          the answer on one page of text, then the three plots, one a page: what a
                         review or a paper takes (summary.pdf beside the report)

Each point carries its value's name as its SVG id (`value-<n>`), so a page or a test finds the point
a value made.
"""

from __future__ import annotations

from pathlib import Path

from .verdict import FCT_TOLERANCE, IMPROVEMENT_POINTS, NOT_DECIDED, NOT_REPRODUCED, REPRODUCED

#: A verdict's colour (colour-blind safe: Okabe and Ito's blue, vermillion, orange).
COLOURS = {REPRODUCED: "#0072B2", NOT_REPRODUCED: "#D55E00", NOT_DECIDED: "#E69F00"}
#: A value's marker, by its headline group (what the paper's number is of).
MARKERS = {"the large flow's FCTs": "o", "the small flows' FCTs": "s", "the small flows' improvements": "^",
           "the stability effect": "D"}
FILE = "ours-vs-paper.svg"
SETTINGS_FILE = "per-setting.svg"
BOUND_FILE = "large-vs-bound.svg"
SUMMARY_FILE = "summary.pdf"
#: per_setting's panels: the group of values each shows, and its axis.
PER_SETTING = (("the small flows' improvements", "the small flows' improvement (%)"),
               ("the stability effect", "the large flow's change with SUSS (%)"))


def ours_against_paper(records: list[dict], dest: Path, pages=None) -> Path | None:
    """@records (summary.json's comparisons) drawn into @dest/ours-vs-paper.svg; None without any."""
    if not records:
        return None
    plt = _pyplot()
    fcts = [(i, r) for i, r in enumerate(records) if r["kind"] == "fct"]
    others = [(i, r) for i, r in enumerate(records) if r["kind"] != "fct"]
    panels = [(p, rows) for p, rows in (("fct", fcts), ("other", others)) if rows]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
    for ax, (panel, rows) in zip(axes[0], panels):
        values = [v for _, r in rows for v in (r["paper"], r["ours"], *(r["ci95"] or ()))]
        if panel == "fct":  # a log axis: what a CI reaches below zero (two repetitions) is off the plot
            values = [v for v in values if v > 0]
        lo, hi = min(values), max(values)
        if panel == "fct":
            lo, hi = lo / 1.3, hi * 1.3
            ax.set_xscale("log")
            ax.set_yscale("log")
            xs = [lo, hi]
            ax.fill_between(xs, [x * (1 - FCT_TOLERANCE) for x in xs], [x * (1 + FCT_TOLERANCE) for x in xs],
                            color="#cccccc", alpha=0.5, lw=0, label=f"±{FCT_TOLERANCE:.0%} of the paper's")
            ax.set_xlabel("the paper's FCT (s)")
            ax.set_ylabel("ours (s), mean and 95 % CI")
        else:
            pad = max(2.0, (hi - lo) * 0.1)
            lo, hi = lo - pad, hi + pad
            xs = [lo, hi]
            ax.fill_between(xs, [x - IMPROVEMENT_POINTS for x in xs], [x + IMPROVEMENT_POINTS for x in xs],
                            color="#cccccc", alpha=0.5, lw=0, label=f"±{IMPROVEMENT_POINTS:g} points (improvements)")
            ax.set_xlabel("the paper's value (%, points)")
            ax.set_ylabel("ours, mean and 95 % CI")
        ax.plot(xs, xs, color="#555555", lw=0.8, ls="--", label="ours = the paper's")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        for i, r in rows:
            if r["kind"] != "improvement" and panel != "fct":
                # A change's band is its own (±15 % of the paper's change, widened by rounding), not the
                # improvements' ±10 points the diagonal band shows: drawn at its point.
                ax.plot([r["paper"]] * 2, r["band"], color="#999999", lw=7, alpha=0.45, solid_capstyle="butt")
            err = None
            if r["ci95"]:
                err = [[r["ours"] - r["ci95"][0]], [r["ci95"][1] - r["ours"]]]
            point, _, _ = ax.errorbar([r["paper"]], [r["ours"]], yerr=err, fmt=MARKERS.get(r["group"], "o"),
                                      color=COLOURS[r["outcome"]], ms=6, elinewidth=1, capsize=2)
            point.set_gid(f"value-{i}")
        ax.grid(True, which="both", alpha=0.3)
    # One legend for both panels, outside the data: the verdicts' colours and the values' markers.
    from matplotlib.lines import Line2D
    handles = _verdict_handles("")
    handles += [Line2D([], [], color="#555555", marker=m, ls="", label=g) for g, m in MARKERS.items()
                if any(r["group"] == g for r in records)]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("Every value the paper prints or implies: ours against the paper's")
    fig.tight_layout(rect=(0, 0.1, 1, 0.95))
    return _saved(fig, dest / FILE, pages)


def per_setting(records: list[dict], dest: Path, pages=None) -> Path | None:
    """@records' improvements and stability effects, setting by setting (their `where`), into
    @dest/per-setting.svg: ours (mean, CI bar, coloured by verdict) beside the paper's value (a black
    tick) and its band (grey); None when there are neither."""
    panels = [(label, [(i, r) for i, r in enumerate(records) if r["group"] == group and not r["derived"]
                       or r["group"] == group == "the stability effect"])
              for group, label in PER_SETTING]
    panels = [(label, rows) for label, rows in panels if rows]
    if not panels:
        return None
    plt = _pyplot()
    width = max(6.0, 0.55 * max(len(rows) for _, rows in panels) + 2)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 3.2 * len(panels)), squeeze=False)
    for ax, (label, rows) in zip(axes[:, 0], panels):
        for x, (i, r) in enumerate(rows):
            lo, hi = r["band"]
            ax.fill_between([x - 0.3, x + 0.3], [lo, lo], [hi, hi], color="#cccccc", alpha=0.6, lw=0)
            ax.plot([x - 0.3, x + 0.3], [r["paper"], r["paper"]], color="black", lw=1.5)
            err = [[r["ours"] - r["ci95"][0]], [r["ci95"][1] - r["ours"]]] if r["ci95"] else None
            point, _, _ = ax.errorbar([x], [r["ours"]], yerr=err, fmt="o", color=COLOURS[r["outcome"]], ms=5,
                                      elinewidth=1, capsize=2)
            point.set_gid(f"value-{i}")
        ax.axhline(0, color="#555555", lw=0.6)
        ax.set_xticks(range(len(rows)), [r["where"] for _, r in rows], rotation=45, ha="right", fontsize=7)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = _verdict_handles("ours: ")
    handles += [Line2D([], [], color="black", lw=1.5, label="the paper's"), Patch(color="#cccccc", label="its band")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle("Setting by setting: ours (95 % CI) beside the paper's value and its band", fontsize=10)
    fig.tight_layout(rect=(0, 0.09, 1, 0.95))
    return _saved(fig, dest / SETTINGS_FILE, pages)


def against_bound(rows: list[dict], bounds: dict[str, float], dest: Path, pages=None) -> Path | None:
    """Each setting of @rows (summary.json's rows) whose column @bounds holds (large_cc -> the largest
    slowdown allowed, %), into @dest/large-vs-bound.svg: the large flow's paired change with SUSS, mean
    and CI (its `large_change`), coloured as the claim judges a setting (CI at or below the bound:
    reproduced; wholly above: not; else not decided), and the bound as a line over it; every setting,
    the 2 BDP ones the paper does not print among them."""
    points = []
    for row in rows:
        bound = bounds.get(row.get("large_cc"))
        change = row.get("large_change")
        if bound is None or not change:
            continue
        ci = change["ci95"]
        lo, hi = ci or (change["mean"], change["mean"])
        outcome = REPRODUCED if hi <= bound else NOT_REPRODUCED if lo > bound else NOT_DECIDED
        points.append((f"{row['large_cc']} {row['buffer']} {row['large_rtt']}", change["mean"], ci, bound, outcome))
    if not points:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(points) + 2), 3.6))
    for x, (where, ours, ci, bound, outcome) in enumerate(points):
        ax.plot([x - 0.4, x + 0.4], [bound, bound], color="black", lw=1.5)
        err = [[ours - ci[0]], [ci[1] - ours]] if ci else None
        point, _, _ = ax.errorbar([x], [ours], yerr=err, fmt="o", color=COLOURS[outcome], ms=5, elinewidth=1,
                                  capsize=2)
        point.set_gid(f"setting-{x}")
    ax.axhline(0, color="#555555", lw=0.6)
    ax.set_xticks(range(len(points)), [p[0] for p in points], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("the large flow's change with SUSS (%)", fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    from matplotlib.lines import Line2D
    handles = _verdict_handles("ours: ")
    handles.append(Line2D([], [], color="black", lw=1.5, label="the claims' bound (the column's largest printed)"))
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle("The large flow, setting by setting, against the bound its claim holds it to", fontsize=10)
    fig.tight_layout(rect=(0, 0.14, 1, 0.94))
    return _saved(fig, dest / BOUND_FILE, pages)


def _pyplot():
    """matplotlib's pyplot, drawing to files, its SVG ids salted alike: the same records give the same bytes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "sslab"
    return plt


def _verdict_handles(prefix: str) -> list:
    """A legend's entries for the verdicts' colours, each label after @prefix."""
    from matplotlib.lines import Line2D
    return [Line2D([], [], color=c, marker="o", ls="", label=f"{prefix}{o}") for o, c in COLOURS.items()]


def _saved(fig, out: Path, pages=None) -> Path:
    """@fig written to @out in the format its name says (SVG without a date, so the same records give the
    same bytes; PNG for a look at it), and a page of @pages (a PdfPages) too when given; then closed."""
    import matplotlib.pyplot as plt
    fig.savefig(out, format=out.suffix[1:], **({"metadata": {"Date": None}} if out.suffix == ".svg" else {"dpi": 90}))
    if pages is not None:
        pages.savefig(fig)
    plt.close(fig)
    return out


def summary_pdf(title: str, lines: list[str], records: list[dict], rows: list[dict], bounds: dict[str, float],
                dest: Path) -> Path:
    """@dest/summary.pdf: a page with @title and @lines (the answer: the verdict's counts, the claims,
    what the runs ran under; Markdown's emphasis dropped), then the three plots (drawn again from the
    same records, their SVGs rewritten byte for byte as they were), one a page, A4 landscape."""
    import textwrap

    from matplotlib.backends.backend_pdf import PdfPages
    plt = _pyplot()
    out = dest / SUMMARY_FILE
    with PdfPages(out, metadata={"CreationDate": None, "Creator": "slowstart-lab"}) as pages:
        fig = plt.figure(figsize=(11.69, 8.27))
        text = [title, ""]
        for line in lines:
            plain = line.replace("**", "").replace("*", "")
            text += textwrap.wrap(plain, 130, subsequent_indent="  " if plain.startswith("- ") else "") or [""]
        fig.text(0.05, 0.95, "\n".join(text), va="top", ha="left", fontsize=9, family="DejaVu Sans")
        pages.savefig(fig)
        plt.close(fig)
        ours_against_paper(records, dest, pages)
        per_setting(records, dest, pages)
        against_bound(rows, bounds, dest, pages)
    return out
