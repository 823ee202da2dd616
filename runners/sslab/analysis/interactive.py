"""Plots one can explore, offline, beside the static ones: zoom and pan (shared by a figure's
panels), every value on hover, a click on a legend entry hides that line (a variant, a flow).

Plotly: its Python side writes a page whose only script is plotly.js, which a page may load by a
relative path, so one copy of it (about 5 MB, named with its version) serves every page of a results
tree (results/assets/), and nothing is fetched when a page is viewed; zoom, pan, hover and the
legend's toggles come with it, with no JavaScript of ours.  The PNGs stay, for papers.

    dynamics-<size>.html   E1's (every scenario run's): cwnd, packets outstanding, smoothed RTT and
                           data acknowledged against time, a line per variant (tcp_probe)
    flows-<setting>.html   a matrix's: every flow's goodput past the bottleneck, SUSS off above on
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .. import paths
from .plots import FLOWS_BIN_S, flow_goodputs, runs_of_size, variant_style
from .setting import PathMarks
from .traces import trace_series


def plotly_js(dest: Path) -> str:
    """plotly.js for a page in @dest, written once where pages share it (results/assets/ for a page
    under results/, else @dest/assets/); the relative path a page loads it by."""
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
    return Path(os.path.relpath(js, dest)).as_posix()


def _write(fig, dest: Path, name: str, title: str, panels: int) -> Path:
    fig.update_layout(title=title, hovermode="x unified", template="plotly_white", height=260 * panels + 120)
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
        name = f"{flow['cc']} (FCT {flow['fct_s']:.2f} s)"
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
               link_mbit: float | None = None) -> Path | None:
    """Every flow's goodput against time, a panel per side (SUSS off above on), explorable: a legend
    entry per flow (its control, size and FCT), the link's rate across."""
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    measured = [(label, run, *flow_goodputs(run, capture)) for label, run, capture in sides]
    measured = [m for m in measured if any(t for t, _ in m[2])]
    if not measured:
        return None
    fig = make_subplots(rows=len(measured), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[label for label, *_ in measured])
    for k, (label, run, bins, xlabel, what) in enumerate(measured, start=1):
        for i, ((t, mbit), f) in enumerate(zip(bins, run["flows"])):
            if t:
                fig.add_trace(go.Scatter(x=t, y=mbit, mode="lines", line={"shape": "hv", "width": 1.5 if i == 0 else 0.8},
                                         name=f"{label}: flow {i} ({f['cc']}, {f['size'] / 1e6:g} MB, FCT "
                                              f"{f['fct_s']:.2f} s)" if f.get("size") else f"{label}: flow {i}"),
                              row=k, col=1)
        if link_mbit:
            fig.add_hline(y=link_mbit, line={"color": "#666", "dash": "dash", "width": 1}, row=k, col=1,
                          annotation_text=f"the link, {link_mbit:g} Mbit/s")
        fig.update_yaxes(title_text=f"Mbit/s, {FLOWS_BIN_S:g} s bins ({what})", row=k, col=1)
    fig.update_xaxes(title_text=measured[-1][3], row=len(measured), col=1)
    return _write(fig, dest, name, title, len(measured))


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
