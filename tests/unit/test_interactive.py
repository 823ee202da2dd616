"""Explorable plots (sslab.analysis.interactive): the page, the one copy of plotly.js it loads by a
relative path, nothing fetched from a network."""

import re

from sslab import paths
from sslab.analysis import interactive


def a_run(fct_large=30.0):
    return {"flows": [{"cc": "cubic", "size": 125_000_000, "fct_s": fct_large,
                       "rx_series": [[0.0, 0], [10.0, 60_000_000], [30.0, 125_000_000]]},
                      {"cc": "cubic_hs", "size": 2_000_000, "fct_s": 1.5, "rx_series": [[2.0, 0], [3.5, 2_000_000]]}]}


def test_a_flows_page_loads_the_shared_plotly_by_a_relative_path(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    dest = tmp_path / "table1" / "all" / "reports" / "r1"
    dest.mkdir(parents=True)
    page = interactive.flows_page([("SUSS off (cubic_hs)", a_run(), None), ("SUSS on (cubic_suss)", a_run(28.0), None)],
                                  dest, "flows-x.html", "a cell", link_mbit=50)
    text = page.read_text()
    [src] = re.findall(r'<script[^>]*src="([^"]+)"', text)
    # In the report's own folder, a link to the tree's one copy: the folder copied elsewhere still draws.
    assert src.startswith("assets/plotly-") and (dest / src).is_file()
    assert (dest / src).stat().st_ino == (tmp_path / src).stat().st_ino
    import shutil
    moved = shutil.copytree(dest, tmp_path.parent / f"{tmp_path.name}-copied-report")
    assert (moved / src).read_bytes() == (tmp_path / src).read_bytes()
    assert "https://" not in text.split("<body>")[1].split("plotly-")[0]  # no script or font from a network
    assert "flow 0 (cubic, 125 MB)" in text and "SUSS off (cubic_hs): flow 0 FCT 30.00 s" in text
    assert "SUSS on (cubic_suss): flow 0 FCT 28.00 s" in text and "the link, 50 Mbit" in text
    # A second page shares the copy: it is written once.
    js = (dest / src).resolve()
    before = js.stat().st_mtime_ns
    interactive.flows_page([("off", a_run(), None)], dest, "flows-y.html", "another")
    assert js.stat().st_mtime_ns == before and len(list(js.parent.glob("plotly-*.js"))) == 1
    assert len(list((tmp_path / "assets").glob("plotly-*.js"))) == 1


def test_no_flow_measured_no_page(tmp_path):
    assert interactive.flows_page([("off", {"flows": [{"cc": "x", "fct_s": 1.0}]}, None)], tmp_path, "f.html", "x") is None
    assert not (tmp_path / "f.html").exists()


def test_a_page_written_again_is_the_same_bytes(tmp_path):
    sides = [("off", a_run(), None)]
    first = interactive.flows_page(sides, tmp_path, "f.html", "a cell").read_bytes()
    assert interactive.flows_page(sides, tmp_path, "f.html", "a cell").read_bytes() == first
    assert b'id="f"' in first


def test_pages_written_at_once_by_threads_of_one_process_share_one_whole_copy(tmp_path, monkeypatch):
    # The oracle's two boots are threads of one process, each writing its run's report: each writer
    # of plotly.js has its own part file (the one name a process gave both failed a rename).
    import threading
    from plotly.offline import get_plotlyjs
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    barrier = threading.Barrier(4)
    got, errors = [], []

    def write(i):
        dest = tmp_path / f"run{i}"
        dest.mkdir()
        barrier.wait()
        try:
            got.append(interactive.plotly_js(dest))
        except Exception as e:  # noqa: BLE001 - the assertion below names it
            errors.append(e)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 4
    [js] = list((tmp_path / "assets").iterdir())  # no part file left behind
    assert js.read_text() == get_plotlyjs() and (js.stat().st_mode & 0o777) == 0o644


def test_the_fct_page_draws_a_cdf_and_a_loss_scatter_per_size_a_colour_per_variant(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    # Two starts, two sizes, three repetitions of the small one; the 20 MB runs lost 4 and 0.
    rows = ["run,flow,rep,cc,suss_version,size_bytes,fct_s,lost",
            "a-r0,0,0,cubic_hs,,5000000,1.9,0", "a-r1,0,1,cubic_hs,,5000000,1.7,0", "a-r2,0,2,cubic_hs,,5000000,1.8,0",
            "b-r0,0,0,cubic_suss,2024,5000000,1.2,0", "b-r1,0,1,cubic_suss,2024,5000000,1.2,0",
            "b-r2,0,2,cubic_suss,2024,5000000,1.3,0",
            "c-r0,0,0,cubic_hs,,20000000,4.5,4", "d-r0,0,0,cubic_suss,2024,20000000,3.9,0",
            "e-r0,0,0,cubic_suss,2024,20000000,,0"]  # a flow that did not finish: not drawn
    (tmp_path / "flows.csv").write_text("\n".join(rows) + "\n")
    page = interactive.fct_page(tmp_path, "E1")
    assert page.name == "fct.html" and re.search(r'Plotly\.newPlot\(\s*"fct",', page.read_text())
    import csv
    with open(tmp_path / "flows.csv", newline="") as f:
        fig = interactive.fct_figure(list(csv.DictReader(f))).to_plotly_json()
    traces, layout = fig["data"], fig["layout"]
    # Per size a CDF (left) and a scatter (right), per variant: the variant named by what varies.
    assert [(t["name"], t["xaxis"], t["mode"]) for t in traces] == [
        ("cubic_hs", "x", "lines+markers"), ("cubic_hs", "x2", "markers"),
        ("cubic_suss, SUSS 2024", "x", "lines+markers"), ("cubic_suss, SUSS 2024", "x2", "markers"),
        ("cubic_hs", "x3", "lines+markers"), ("cubic_hs", "x4", "markers"),
        ("cubic_suss, SUSS 2024", "x3", "lines+markers"), ("cubic_suss, SUSS 2024", "x4", "markers")]
    hs5 = traces[0]
    assert hs5["x"] == [1.7, 1.8, 1.9] and hs5["y"] == [1 / 3, 2 / 3, 1.0]  # sorted FCTs, steps of 1/n
    assert traces[2]["x"] == [1.2, 1.2, 1.3]  # two runs of one FCT: both drawn
    assert traces[5]["x"] == [4] and traces[5]["y"] == [4.5]  # the 20 MB HyStart run: 4 dropped, 4.5 s
    assert traces[7]["x"] == [0] and traces[7]["y"] == [3.9]  # the unfinished flow left out
    # One legend entry per variant, the same colour in every panel: a click hides it everywhere.
    assert [t["showlegend"] for t in traces] == [True, False, True, False, False, False, False, False]
    assert len({t["legendgroup"] for t in traces}) == 2
    assert (traces[0]["line"]["dash"], traces[2]["line"]["dash"]) == ("solid", "dash")  # the same FCTs: both seen
    assert {t["line"]["color"] if "line" in t else t["marker"]["color"] for t in traces[::4]} == {traces[0]["line"]["color"]}
    # Each variant's colour the one the report's figures give the variant in its place (flows.csv's order):
    # the first matplotlib's C0 (#1f77b4), the second C1 (#ff7f0e), whatever their names' alphabetical order.
    assert (traces[0]["line"]["color"], traces[2]["line"]["color"]) == ("#1f77b4", "#ff7f0e")
    (tmp_path / "flows.csv").write_text("\n".join(rows[:1] + rows[4:7] + rows[1:4]) + "\n")   # SUSS's runs first
    with open(tmp_path / "flows.csv", newline="") as f:
        first = interactive.fct_figure(list(csv.DictReader(f))).to_plotly_json()["data"]
    assert [(t["name"], t["line"]["color"]) for t in first[::2]] == [("cubic_suss, SUSS 2024", "#1f77b4"),
                                                                      ("cubic_hs", "#ff7f0e")]
    titles = [a["text"] for a in layout["annotations"]]
    assert titles[0] == "5 MB flows: FCT, CDF over repetitions and flows" and titles[3].startswith("20 MB flows: FCT against")


def test_no_finished_flow_no_fct_page(tmp_path):
    (tmp_path / "flows.csv").write_text("run,flow,cc,size_bytes,fct_s,lost\na,0,cubic,5000000,,0\n")
    assert interactive.fct_page(tmp_path, "x") is None and not (tmp_path / "fct.html").exists()
    assert interactive.fct_page(tmp_path / "nothing-here", "x") is None


def test_many_variants_make_a_row_of_panels_per_value_of_the_widest_axis():
    """Table 1's 64 variants (2 buffers x 4 RTTs x 4 large-flow controls x SUSS off and on): a row of
    panels per flow size and control (the axis with the most values, the first by name among equals), its
    16 variants named without it; 16 or fewer variants stay in one row per size."""
    rows = [{"run": f"r{i}", "flow": "1", "size_bytes": "2000000", "fct_s": "1.5", "lost": "0", "cc": cc,
             "axis_buffer": buf, "axis_large_cc": large, "axis_large_rtt": rtt}
            for i, (buf, large, rtt, cc) in enumerate(
                (b, lc, r, c) for b in ("1BDP", "2BDP") for lc in ("cubic", "bbr", "bbr2", "bbr3")
                for r in ("25ms", "50ms", "100ms", "200ms") for c in ("cubic_hs", "cubic_suss"))]
    assert interactive.facet_column(rows, interactive.variant_columns(rows)) == "axis_large_cc"
    fig = interactive.fct_figure(rows).to_plotly_json()
    titles = [a["text"] for a in fig["layout"]["annotations"]][::2]
    assert titles == [f"2 MB flows, large_cc {lc}: FCT, CDF over repetitions and flows" for lc in ("bbr", "bbr2", "bbr3", "cubic")]
    legend = {t["name"] for t in fig["data"]}
    assert len(legend) == 16 and "buffer 1BDP, large_rtt 25ms, cubic_hs" in legend
    assert all("large_cc" not in name for name in legend)
    few = [r for r in rows if r["axis_large_cc"] == "cubic"]   # 16 variants: one row
    assert interactive.facet_column(few, interactive.variant_columns(few)) is None


def test_a_flows_page_has_one_legend_entry_per_flow_coloured_by_its_minrtt(tmp_path, monkeypatch):
    """Each flow once in the legend (its entry hides it on both sides), the large flow black, the small
    ones by their minRTT (the report's figures' colours), the FCT in the hover, a short y-axis title."""
    import json as _json
    from sslab.analysis.plots import RTT_COLOURS
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    run = {"flows": [{"cc": "cubic_hs", "size": 125e6, "fct_s": 30.0, "rx_series": [[0.0, 0], [30.0, 125_000_000]]},
                     {"cc": "cubic_hs", "size": 2e6, "fct_s": 1.5, "rx_series": [[2.0, 0], [3.5, 2_000_000]]},
                     {"cc": "cubic_hs", "size": 2e6, "fct_s": 2.5, "rx_series": [[4.0, 0], [6.5, 2_000_000]]}]}
    page = interactive.flows_page([("SUSS off", run, None), ("SUSS on", run, None)], tmp_path, "f.html", "a cell",
                                  link_mbit=50, rtts={0: 25.0, 1: 50.0, 2: 200.0}).read_text()
    fig = _json.loads(re.search(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\]),\s*(\{.*?\})\s*,\s*\{', page, re.S)[1])
    names = [t["name"] for t in fig if t.get("showlegend")]
    assert names == ["flow 0 (cubic_hs, 125 MB, minRTT 25 ms)", "flow 1 (cubic_hs, 2 MB, minRTT 50 ms)",
                     "flow 2 (cubic_hs, 2 MB, minRTT 200 ms)"]
    assert [t["line"]["color"] for t in fig[:3]] == ["black", RTT_COLOURS[0], RTT_COLOURS[1]]
    assert len(fig) == 6 and [t["legendgroup"] for t in fig[3:]] == ["flow 0", "flow 1", "flow 2"]
    assert "FCT 1.50 s" in fig[1]["hovertemplate"]
