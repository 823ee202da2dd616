"""Plots one can explore, offline, beside the static ones: zoom and pan (shared by a figure's
panels), every value on hover, a click on a legend entry hides that line (a variant, a flow).

Plotly: its Python side writes a page whose only script is plotly.js, which a page loads by a
relative path from its own folder's assets/, a hard link to the one copy of it (about 5 MB, named with
its version) a results tree keeps (results/assets/): a report's folder copied elsewhere still draws
its plots, and a tree holds the library once.  Nothing is fetched when a page is viewed; zoom, pan,
hover and the legend's toggles come with it, with no JavaScript of ours.  The PNGs stay, for papers.

    dynamics-<size>.html   E1's (every scenario run's): cwnd, packets outstanding, smoothed RTT and
                           data acknowledged against time, a line per variant (tcp_probe)
    flows-<setting>.html   a matrix's: every flow's goodput past the bottleneck, SUSS off above on
    fct.html               any report's, from its flows.csv: per flow size, the CDF of the FCT over
                           repetitions and flows, and the FCT against the run's bottleneck drops, a
                           colour per variant (the columns that vary: a matrix's axes, cc, SUSS version)
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from .. import paths
from .plots import FLOWS_BIN_S, flow_goodputs, flow_variant, runs_of_size, small_flow_colours, variant_style
from .setting import PathMarks
from .tidy import FILE, read_rows
from .traces import trace_series


def plotly_js(dest: Path) -> str:
    """plotly.js for a page in @dest: in @dest/assets/, a hard link to the copy written once where
    pages share it (results/assets/ for a page under results/; a copy where a link cannot be made);
    the relative path a page loads it by."""
    import plotly
    from plotly.offline import get_plotlyjs
    dest = Path(dest)
    under_results = dest.resolve().is_relative_to(paths.RESULTS_DIR.resolve())
    assets = (paths.RESULTS_DIR if under_results else dest) / "assets"
    js = assets / f"plotly-{plotly.__version__}.min.js"
    if not js.is_file():
        assets.mkdir(parents=True, exist_ok=True)
        # Whole or not there: a page written meanwhile never loads half of it.  The part file is this
        # writer's own (mkstemp), not named by the process: the oracle's two boots are threads of one
        # process, each writing its run's report, and shared one name once (the second rename failed).
        fd, part = tempfile.mkstemp(dir=assets, prefix=f".{js.name}.")
        with os.fdopen(fd, "w") as f:
            f.write(get_plotlyjs())
        os.chmod(part, 0o644)
        os.replace(part, js)
    mine = dest / "assets" / js.name
    if not mine.is_file():
        mine.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(js, mine)
        except FileExistsError:
            pass            # another page of this folder linked it meanwhile
        except OSError:     # another file system: a copy, whole or not there
            import shutil
            fd, part = tempfile.mkstemp(dir=mine.parent, prefix=f".{js.name}.")
            os.close(fd)
            shutil.copyfile(js, part)
            os.chmod(part, 0o644)
            os.replace(part, mine)
    return Path(os.path.relpath(mine, dest)).as_posix()


def _write(fig, dest: Path, name: str, title: str, panels: int, hovermode: str = "x unified") -> Path:
    fig.update_layout(title=title, hovermode=hovermode, template="plotly_white", height=260 * panels + 120)
    out = Path(dest) / name
    # The figure's element named after the page (Plotly's default is a random id): a report rebuilt from
    # its archive is the same bytes.
    out.write_text(fig.to_html(include_plotlyjs=plotly_js(dest), full_html=True, config={"displaylogo": False},
                               div_id=Path(name).stem))
    return out


def dynamics_page(runs: list[dict], dest: Path, size: str, rep: int = 0, marks: PathMarks | None = None) -> Path | None:
    """E1's dynamics, explorable: a row per quantity, a line per variant (one legend entry hides a
    variant in every row), the BDP and BDP + buffer across the window rows."""
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    rows = (("cwnd", "cwnd (packets)"), ("outstanding", "outstanding (packets)"), ("srtt_ms", "smoothed RTT (ms)"),
            ("acked_mb", "acknowledged (MB)"))
    series = []
    for r in runs_of_size(runs, size, rep):
        flow = r["flows"][0]
        s = trace_series(r["dir"] / r["trace"], flow["port"]) if r.get("trace") else None
        if s and s["t"]:
            series.append((flow, s))
    if not series:
        return None
    fig = make_subplots(rows=len(rows), cols=1, shared_xaxes=True, vertical_spacing=0.03,
                        subplot_titles=[label for _, label in rows])
    for i, (flow, s) in enumerate(series):
        style = variant_style(i)
        name = f"{flow_variant(flow)} (FCT {flow['fct_s']:.2f} s)"
        for k, (key, _) in enumerate(rows, start=1):
            pts = [(t, v) for t, v in zip(s["t"], s[key]) if v is not None]
            fig.add_trace(go.Scatter(x=_packed([t for t, _ in pts]), y=_packed([v for _, v in pts]), name=name,
                                     legendgroup=name,
                                     showlegend=k == 1, mode="lines",
                                     line={"color": _hex(style["color"]), "dash": _DASH[style["ls"]], "width": 1}),
                          row=k, col=1)
    if marks is not None:
        for k in (1, 2):
            for value, what, dash in ((marks.bdp_pkts, "BDP", "dash"), (marks.limit_pkts, "BDP + buffer", "dot")):
                named = {"annotation_text": f"{what} {value:.0f}"} if k == 1 else {}  # once: None reads "new text"
                fig.add_hline(y=value, line={"color": "#666", "dash": dash, "width": 1}, row=k, col=1, **named)
    fig.update_xaxes(title_text="time since the flow's first ACK (s)", row=len(rows), col=1)
    return _write(fig, dest, f"dynamics-{size}.html", f"{size} transfer, repetition {rep}: every variant from tcp_probe",
                  len(rows))


def flows_page(sides: list[tuple[str, dict, Path | None]], dest: Path, name: str, title: str,
               link_mbit: float | None = None, rtts: dict[int, float] | None = None) -> Path | None:
    """Every flow's goodput against time, a panel per side (SUSS off above on), explorable: one legend
    entry per flow (its control, size and minRTT, from @rtts by index when given) that hides it in
    every panel, its FCT on each side in its hover; the first flow black, the others coloured by
    their minRTT as the report's figures colour them (else each its own colour); the link's rate
    across."""
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    measured = [(label, run, *flow_goodputs(run, capture)) for label, run, capture in sides]
    measured = [m for m in measured if any(t for t, _ in m[2])]
    if not measured:
        return None
    rtts = rtts or {}
    by_rtt = small_flow_colours(r for i, r in rtts.items() if i != 0)

    def colour(i: int) -> str:
        if i == 0:
            return "black"
        return by_rtt[rtts[i]] if i in rtts else qualitative.Alphabet[i % len(qualitative.Alphabet)]

    what = measured[0][4]
    fig = make_subplots(rows=len(measured), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[label for label, *_ in measured])
    shown: set[int] = set()
    for k, (label, run, bins, xlabel, _) in enumerate(measured, start=1):
        for i, ((t, mbit), f) in enumerate(zip(bins, run["flows"])):
            if not t:
                continue
            words = [f.get("cc") or "?"] + ([f"{f['size'] / 1e6:g} MB"] if f.get("size") else []) + \
                    ([f"minRTT {rtts[i]:g} ms"] if i in rtts else [])
            fct = f" FCT {f['fct_s']:.2f} s" if f.get("fct_s") is not None else ""
            fig.add_trace(go.Scatter(x=t, y=mbit, mode="lines", name=f"flow {i} ({', '.join(words)})",
                                     legendgroup=f"flow {i}", showlegend=i not in shown,
                                     line={"shape": "hv", "width": 1.8 if i == 0 else 1.0, "color": colour(i)},
                                     hovertemplate=f"{label}: flow {i}{fct}<br>" + "%{x:.1f} s: %{y:.1f} Mbit/s<extra></extra>"),
                          row=k, col=1)
            shown.add(i)
        if link_mbit:
            fig.add_hline(y=link_mbit, line={"color": "#666", "dash": "dash", "width": 1}, row=k, col=1,
                          annotation_text=f"the link, {link_mbit:g} Mbit/s")
        fig.update_yaxes(title_text="Mbit/s", row=k, col=1)
    fig.update_xaxes(title_text=measured[-1][3], row=len(measured), col=1)
    return _write(fig, dest, name, f"{title}: goodput in {FLOWS_BIN_S:g} s bins, {what}", len(measured))


#: The columns of flows.csv that tell one start (and one setting) from another: a matrix's axes first,
#: then the flow's control and SUSS version.  A variant is named by those of them that vary.
DESCRIBING = ("cc", "suss_version")


def variant_columns(rows: list[dict]) -> list[str]:
    """The describing columns (a matrix's axis_<name>, then DESCRIBING) whose value is not the same in
    every row: what names a variant of @rows."""
    axes = sorted({k for r in rows for k in r if k.startswith("axis_")})
    return [c for c in (*axes, *DESCRIBING) if len({r.get(c) or "" for r in rows}) > 1]


def fct_page(dest: Path, title: str, name: str = "fct.html") -> Path | None:
    """The flows of a report's flows.csv (beside it in @dest), explorable (fct_figure); None when no flow
    finished.  It reads the exported table only, as a researcher's own plot would."""
    if not (Path(dest) / FILE).is_file():
        return None
    fig = fct_figure(read_rows(dest))
    if fig is None:
        return None
    # Points, not a time axis: the hover names the one point under the pointer.
    return _write(fig, dest, name, title, len(fig.layout.annotations) // 2, hovermode="closest")


def append_fct_page(md: Path, title: str) -> Path | None:
    """fct_page beside the report @md (from the flows.csv already there), and a paragraph of @md that
    links it; None (and @md as it was) when no flow finished."""
    page = fct_page(Path(md).parent, title)
    if page is not None:
        with open(md, "a") as f:
            f.write(f"\n## FCT over repetitions, to explore\n\n[{page.name}]({page.name}): per flow size, the CDF "
                    f"of the FCT over every repetition and flow, and each flow's FCT against the packets its run "
                    f"lost at the bottleneck, a colour per variant (zoom, hover, a click on a variant hides it); "
                    f"drawn from [flows.csv](flows.csv).\n")
    return page


#: More variants than this in a panel and the page is small multiples: a row of panels per value of the
#: matrix axis with the most values (the first by name among equals; Table 1's large-flow control).
FACET_OVER = 16


def facet_column(rows: list[dict], naming: list[str]) -> str | None:
    """The axis column whose values split @rows into rows of panels, when the variants @naming makes are
    more than FACET_OVER; None when they are few, or no axis varies."""
    variants = {tuple(r.get(c) or "" for c in naming) for r in rows}
    axes = [c for c in naming if c.startswith("axis_")]
    if len(variants) <= FACET_OVER or not axes:
        return None
    return sorted(axes, key=lambda c: (-len({r.get(c) or "" for r in rows}), c))[0]


def fct_figure(table: list[dict]):
    """Per flow size a row with, left, the CDF of the FCT over every repetition and flow of a variant
    and, right, each flow's FCT against the packets its run lost at the bottleneck, a colour per
    variant (a legend entry hides it in every row); more than FACET_OVER variants, a row per flow size
    and value of the facet axis (facet_column), the variants named without it.  @table: flows.csv's
    rows (strings).  None when no flow of a known size finished."""
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    rows = [r for r in table if r.get("fct_s") and r.get("size_bytes")]
    if not rows:
        return None
    naming = variant_columns(rows) or ["cc"]
    facet = facet_column(rows, naming)
    if facet:
        naming = [c for c in naming if c != facet]
    facet_of = (lambda r: r.get(facet) or "–") if facet else (lambda r: "")

    def label(r: dict) -> str:
        parts = []
        for c in naming:
            if c == "suss_version":
                if r.get(c):
                    parts.append(f"SUSS {r[c]}")
            else:
                parts.append(f"{c.removeprefix('axis_')} {r.get(c) or '–'}" if c.startswith("axis_") else r.get(c) or "–")
        return ", ".join(parts)

    # The variants in the order the runs came (flows.csv's), each with the colour and line style the
    # report's own figures give the variant in that place (variant_style), so a variant looks the same
    # on both.  The dash matters too: variants with the same FCTs (E1's traditional slow start and
    # HyStart++ on a 1 BDP buffer) draw one over the other, and the dash shows both are there.
    variants = list(dict.fromkeys(label(r) for r in rows))
    colour = {v: _hex(variant_style(i)["color"]) for i, v in enumerate(variants)}
    dash = {v: _DASH[variant_style(i)["ls"]] for i, v in enumerate(variants)}
    # Each flow once into its panel and variant, FCTs in order.
    groups: dict[tuple[int, str, str], list[tuple[float, dict]]] = {}
    for r in rows:
        groups.setdefault((int(r["size_bytes"]), facet_of(r), label(r)), []).append((float(r["fct_s"]), r))
    for mine in groups.values():
        mine.sort(key=lambda m: m[0])
    panels = sorted({(size, fv) for size, fv, _ in groups}, key=lambda p: (p[0], _natural(p[1])))
    where = {fv: f", {facet.removeprefix('axis_')} {fv}" if facet else "" for _, fv in panels}
    fig = make_subplots(rows=len(panels), cols=2, horizontal_spacing=0.08,
                        vertical_spacing=min(0.2, 0.6 / max(1, len(panels) - 1)),
                        subplot_titles=[t for size, fv in panels for t in (
                            f"{size / 1e6:g} MB flows{where[fv]}: FCT, CDF over repetitions and flows",
                            f"{size / 1e6:g} MB flows{where[fv]}: FCT against the run's bottleneck drops")])
    shown: set[str] = set()
    for k, (size, fv) in enumerate(panels, start=1):
        for v in variants:
            mine = groups.get((size, fv, v))
            if not mine:
                continue
            n = len(mine)
            hover = [f"{r['run']} flow {r['flow']}" + (f", iteration {r['iteration']}" if r.get("iteration") else "")
                     for _, r in mine]
            first = v not in shown
            shown.add(v)
            fig.add_trace(go.Scatter(x=[t for t, _ in mine], y=[(i + 1) / n for i in range(n)], mode="lines+markers",
                                     line={"shape": "hv", "color": colour[v], "dash": dash[v]}, marker={"size": 5}, name=v,
                                     legendgroup=v, showlegend=first, text=hover,
                                     hovertemplate="%{text}<br>FCT %{x:.3f} s, fraction %{y:.2f} of " + f"{n}"
                                                   "<extra>" + v + "</extra>"),
                          row=k, col=1)
            fig.add_trace(go.Scatter(x=[int(r["lost"] or 0) for _, r in mine], y=[t for t, _ in mine], mode="markers",
                                     marker={"color": colour[v], "size": 7, "opacity": 0.8}, name=v, legendgroup=v,
                                     showlegend=False, text=hover,
                                     hovertemplate="%{text}<br>%{x} dropped in the run, FCT %{y:.3f} s<extra>" + v +
                                                   "</extra>"),
                          row=k, col=2)
        fig.update_xaxes(title_text="FCT (s)", row=k, col=1)
        fig.update_yaxes(title_text="fraction of flows", range=[0, 1.02], row=k, col=1)
        fig.update_xaxes(title_text="packets dropped at the bottleneck in the flow's run", row=k, col=2)
        fig.update_yaxes(title_text="FCT (s)", row=k, col=2)
    return fig


def _natural(value: str) -> tuple:
    """@value's sort key with its leading number as a number ("25ms" before "100ms")."""
    m = re.match(r"(\d+(?:\.\d+)?)(.*)", value)
    return (0, float(m[1]), m[2]) if m else (1, 0.0, value)


def _packed(values: list[float]):
    """@values as float32: plotly writes such an array as base64 of its bytes, not as decimal text (a
    20 MB flow's page 3.9 MB as text)."""
    import numpy as np
    return np.asarray(values, dtype=np.float32)


_DASH = {"-": "solid", "--": "dash", "-.": "dashdot", ":": "dot"}


def _hex(colour: str) -> str:
    """matplotlib's "C<n>" colour as the hex it draws, so a variant looks the same in both kinds of plot."""
    from matplotlib.colors import to_hex
    return to_hex(colour)
