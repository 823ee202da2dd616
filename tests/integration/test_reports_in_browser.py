"""The report pages of a real run, opened in headless Chromium: every image loads, every link leads to a
file, the console stays quiet; a screenshot of each is kept in the test's output directory."""

import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from .browser import chromium, visit
from .helpers import sslab

pytestmark = pytest.mark.vm


@pytest.fixture(autouse=True)
def browser():
    # Not skipped without one: `make test` installs Debian's chromium (browser-deps) before the tests.
    assert chromium() is not None, "no chromium on PATH: `make browser-deps` installs Debian's"


#: Type "make startup" into the index's filter; then how many rows it shows, of how many, the first's experiment.
FILTER_STARTUP = """(() => { const f = document.getElementById('filter'); f.value = 'make startup';
  f.dispatchEvent(new Event('input', {bubbles: true})); })()"""
ROWS_SHOWN = """(() => { const rows = Array.from(document.querySelectorAll('#reports tbody tr'));
  const shown = rows.filter(r => !r.hidden);
  return {shown: shown.length, all: rows.length, first: shown.length ? shown[0].children[0].textContent : null}; })()"""


#: Zoom an explorable plot's time axis to 1-2 s; then what the last panel's axis shows, and how many lines.
ZOOM = """(() => { const g = document.querySelector('.js-plotly-plot'); Plotly.relayout(g, {'xaxis.range': [1, 2]}); })()"""
ZOOMED = """(() => { const g = document.querySelector('.js-plotly-plot'); if (!g || !g.layout) return null;
  const axes = Object.keys(g.layout).filter(k => /^xaxis[0-9]*$/.test(k)).sort();
  const last = g.layout[axes[axes.length - 1]].range;
  return last && last[0] === 1 ? {last: last, traces: g.data.length} : null; })()"""

#: A Plotly figure drawn on the page: how many lines it has (null until Plotly has drawn it).
DRAWN = """(() => { const g = document.querySelector('.js-plotly-plot');
  return g && g.data && g._fullLayout ? {traces: g.data.length} : null; })()"""


#: The page as a reader sees it: the colour of each kind of verdict cell, and the sections the list at
#: its top leads to (each an anchor on the page).
VERDICTS_AND_CONTENTS = """(() => { const out = {};
  for (const k of ['reproduced', 'not-reproduced', 'not-decided']) {
    const c = document.querySelector('td.' + k); out[k] = c ? getComputedStyle(c).backgroundColor : null; }
  const links = Array.from(document.querySelectorAll('p.contents a'));
  out.contents = links.length; out.anchored = links.filter(a => document.getElementById(a.hash.slice(1))).length;
  return out; })()"""


def local_links(page: Path) -> list[Path]:
    """The files a page links to or shows (relative href and src), resolved against the page."""
    refs = re.findall(r'(?:href|src)="([^"#:]+)"', page.read_text())
    return [(page.parent / unquote(r)).resolve() for r in refs]


def test_an_e1_run_a_table1_cell_and_the_index_open_in_a_browser(tmp_path):
    results = tmp_path / "results"
    res = sslab(["run", "startup", "--reps", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [e1] = [Path(m) for m in re.findall(r"^page: (\S+)", res.stdout, re.M)]
    res = sslab(["run", "reproduce-table1", "--set", "CCA=cubic", "--set", "BUF=1BDP", "--set", "RTT=25ms",
                 "--iter", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [table1] = list(results.glob("table1/*/reports/2*/report.html"))  # not reports/latest, a link to it
    index = results / "index.html"
    shots = {}
    for name, p in (("e1-report", e1), ("table1-report", table1), ("index", index)):
        links = local_links(p)
        assert links and all(f.exists() for f in links), [f for f in links if not f.exists()]
        v = visit(p, tmp_path / f"{name}.png")
        assert v.console_errors == [] and v.broken_images == [], v
        shots[name] = v
    # E1's page shows its plots (cwnd, outstanding, delivered; cwnd and RTT; goodput) and links its
    # captures and traces; Table 1's shows its answer's three plots (every value against the paper's; the
    # improvement and the large flow's change setting by setting; the large flow against its claim's
    # bound), the paper's values beside ours and its Fig. 16 view, every image drawn (no broken one, above).
    assert shots["e1-report"].images >= 4 and shots["table1-report"].images == 4
    assert all(f'src="{svg}"' in table1.read_text() for svg in ("ours-vs-paper.svg", "per-setting.svg",
                                                               "large-vs-bound.svg"))
    text = e1.read_text()
    assert "ran under: substrate uml, clock uml/inf-cpu" in text and ".pcap" in text and "flow.trace.rb.gz" in text
    text = table1.read_text()
    assert "small-flow improvement" in text and "flows-table1-cubic.png" in text and "Fig. 16" in text
    # Its verdicts coloured as the plots colour them (a light blue, vermillion, orange), and its list of
    # sections, each leading to a heading on the page.
    v = visit(table1, tmp_path / "table1-verdicts.png", until=VERDICTS_AND_CONTENTS)
    colours = {"reproduced": "rgb(217, 234, 246)", "not-reproduced": "rgb(248, 221, 204)",
               "not-decided": "rgb(251, 236, 205)"}
    assert any(v.value[k] for k in colours) and all(v.value[k] in (None, c) for k, c in colours.items()), v.value
    assert v.value["contents"] >= 5 and v.value["anchored"] == v.value["contents"], v.value
    assert str(e1.relative_to(results)) in index.read_text() and str(table1.relative_to(results)) in index.read_text()
    # The index is a table, a row per report, that a typed filter narrows: "make startup" keeps E1's.
    v = visit(index, tmp_path / "index-filtered.png", act=FILTER_STARTUP, until=ROWS_SHOWN)
    assert v.console_errors == [] and v.value == {"shown": 1, "all": 2, "first": "E1 make startup"}, v
    # The one-setting Table 1 run prints the ledger's Table 1 claims, each "no evidence yet" (the paper's
    # Average is over the whole column), never a sign.
    assert "The paper's claims these runs test" in text and "1 of the 8 settings of cubic" in text
    # The claims ledger over these archives: a page whose every claim row links to its section.
    res = sslab(["claims", "suss"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # Its first lines count every ledger's claims; each ledger's page is written, and the index shows each.
    head = res.stdout.split("\n\n", 1)[0].splitlines()
    assert head[0] == "Claims, every ledger:" and len(head) == 4, head
    assert [h.split(":")[0].strip() for h in head[1:]] == ["Astart (INFOCOM'04)", "Blitzstart (RWTH Aachen technical report)",
                                                          "SUSS (SIGCOMM'24)"], head
    index_text = index.read_text()
    for key in ("suss", "astart", "blitzstart"):
        assert (results / "claims" / key / "report.html").is_file() and f"claims/{key}" in index_text
    ledger = results / "claims" / "suss" / "report.html"
    v = visit(ledger, tmp_path / "ledger.png")
    assert v.console_errors == [] and v.broken_images == [], v
    page = ledger.read_text()
    anchors = re.findall(r'href="#([^"]+)"', page)
    assert len(anchors) >= 17 and all(f'id="{a}"' in page for a in anchors)
    assert "not testable here" in page and "no evidence yet" in page and "Ran on" not in page  # nothing ran E3-E6
    # The explorable plots: E1's dynamics and Table 1's flows over time, zoomed (Plotly.relayout, as a
    # drag does): every panel of the figure follows the first's time axis.
    for name, page in (("e1-dynamics", e1.parent / "dynamics-20MB.html"),
                       ("table1-flows", table1.parent / "flows-table1-cubic-1BDP-25ms.html")):
        assert page.is_file() and page.name in (e1 if name.startswith("e1") else table1).read_text()
        v = visit(page, tmp_path / f"{name}.png", act=ZOOM, until=ZOOMED)
        assert v.console_errors == [] and v.value is not None and v.value["last"] == [1, 2] and v.value["traces"] >= 4, v
    # E1's report folder copied out of the results tree (a reviewer's download) still draws its explorable
    # plots: each page loads plotly.js from the folder's own assets/, nothing from the tree above it.
    copied = Path(shutil.copytree(e1.parent, tmp_path / "elsewhere" / "e1-report", symlinks=True))   # as cp -R: links as links
    for page in ("dynamics-20MB.html", "fct.html"):
        v = visit(copied / page, tmp_path / f"copied-{page}.png", until=DRAWN)
        assert v.console_errors == [] and v.value is not None and v.value["traces"] >= 4, (page, v)
    # Two sets of results side by side (here E1's run against itself: every group n = 1, no verdict).
    res = sslab(["compare", str(e1.parent), str(e1.parent)], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [compare] = list(results.glob("compare/2*/report.html"))
    links = local_links(compare)
    assert links and all(f.exists() for f in links), [f for f in links if not f.exists()]
    v = visit(compare, tmp_path / "compare.png")
    assert v.console_errors == [] and v.broken_images == [] and v.images == 1, v
    assert "n = 1 (no CI)" in compare.read_text() and "compare.csv" in compare.read_text()
    # A page of plots is a large screenshot; the index a small one, but not an empty page's.
    assert shots["e1-report"].screenshot.stat().st_size > 50_000 and shots["index"].screenshot.stat().st_size > 3_000
    # Kept where a reviewer finds them after the run (pytest's tmp_path survives the session).
    print(f"screenshots: {', '.join(str(s.screenshot) for s in shots.values())}")


def test_a_broken_image_is_caught(tmp_path):
    """The check can fail: a page whose plot is missing is reported so."""
    (tmp_path / "p.html").write_text('<!doctype html><html><body><img src="missing.png"></body></html>')
    v = visit(tmp_path / "p.html", tmp_path / "p.png")
    assert v.broken_images == ["missing.png"] and any("ERR_FILE_NOT_FOUND" in e for e in v.console_errors)
