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
    assert src.startswith("../../../../assets/plotly-") and (dest / src).resolve().is_file()
    assert "https://" not in text.split("<body>")[1].split("plotly-")[0]  # no script or font from a network
    assert "SUSS off (cubic_hs): flow 0 (cubic, 125 MB, FCT 30.00 s)" in text and "the link, 50 Mbit" in text
    # A second page shares the copy: it is written once.
    js = (dest / src).resolve()
    before = js.stat().st_mtime_ns
    interactive.flows_page([("off", a_run(), None)], dest, "flows-y.html", "another")
    assert js.stat().st_mtime_ns == before and len(list(js.parent.glob("plotly-*.js"))) == 1


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
