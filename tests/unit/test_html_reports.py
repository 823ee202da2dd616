"""Reports as pages a browser opens from disk (sslab.analysis.html): the page, its links, the index."""

import json
import os
import re
from pathlib import Path

from sslab import paths
from sslab.analysis import html
from sslab.records import stamped


def a_run(run_dir: Path) -> Path:
    """A run directory whose one run records a capture (kept gzipped) and a trace, and no client capture."""
    tag = "000-cubic_hs-5MB-r0"
    runs = run_dir / "job" / "out" / "runs" / tag
    runs.mkdir(parents=True)
    for name in ("flow.pcap.gz", "flow.trace.gz"):
        (runs / name).write_bytes(b"x")
    (runs / "run.json").write_text(json.dumps(stamped("sslab.run", {"tag": tag, "pcap": "flow.pcap",
                                                                    "client_pcap": None, "trace": "flow.trace.gz"})))
    (run_dir / "job" / "out" / "runs.json").write_text(json.dumps(stamped("sslab.runs", {"runs": [{"tag": tag}]})))
    return run_dir


def test_a_report_page_is_the_markdown_with_its_plots_and_the_runs_files(tmp_path):
    run = a_run(tmp_path / "startup" / "20261126T000000Z-abcd")
    (run / "report.md").write_text("# e1-startup\n\nRan under: uml.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                                   "![cwnd](dynamics-20MB.png)\n")
    out = html.write_html(run / "report.md", [run])
    page = out.read_text()
    assert out == run / "report.html" and "<title>e1-startup</title>" in page
    assert "<table>" in page and "<td>1</td>" in page and '<img alt="cwnd" src="dynamics-20MB.png"' in page
    # The capture and the trace, linked relative to the page; run.json is no capture or trace.
    links = re.findall(r'<a href="([^"]+)">', page)
    assert links == ["job/out/runs/000-cubic_hs-5MB-r0/flow.pcap.gz", "job/out/runs/000-cubic_hs-5MB-r0/flow.trace.gz"]
    assert all((run / link).is_file() for link in links)
    # No script, nothing from the network.
    assert "<script" not in page and "http://" not in page and "https://" not in page


def test_a_page_lists_its_sections_at_its_top_each_an_anchor(tmp_path):
    """A report of several sections: each a heading with an id, listed under the title as links to them
    (its data's section too); a page of one section has no list."""
    run = a_run(tmp_path / "r")
    (run / "report.md").write_text("# Table 1\n\n**the answer**\n\n## Every paper value beside ours\n\nx\n\n"
                                   "## The paper's claims these runs test\n\ny\n")
    (run / "summary.json").write_text("{}")
    page = html.write_html(run / "report.md", [run]).read_text()
    ids = re.findall(r'<h2 id="([^"]+)">', page)
    assert ids == ["every-paper-value-beside-ours", "the-papers-claims-these-runs-test", "data", "captures"]
    [contents] = re.findall(r'<p class="contents">On this page: (.*?)</p>', page)
    assert re.findall(r'href="#([^"]+)"', contents) == ["every-paper-value-beside-ours",
                                                        "the-papers-claims-these-runs-test", "captures", "data"]
    assert page.index('<p class="contents">') < page.index("the answer")
    (run / "report.md").write_text("# one\n\nonly this\n")
    (run / "summary.json").unlink()
    assert 'class="contents"' not in html.write_html(run / "report.md").read_text()


def test_the_index_lists_reports_newest_first_per_experiment_and_not_the_cells(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    older = tmp_path / "startup" / "a"
    newer = tmp_path / "startup" / "b"
    cell = tmp_path / "table1" / "all" / "cells" / "k1"
    matrix = tmp_path / "table1" / "all" / "reports" / "r1"
    for d, title in ((older, "first"), (newer, "second"), (cell, "a cell"), (matrix, "E7")):
        d.mkdir(parents=True)
        (d / "report.md").write_text(f"# {title}\n")
    html.write_html(older / "report.md")
    html.write_html(cell / "report.md")
    os.utime(older / "report.html", (1_000_000, 1_000_000))  # written long before the next
    html.publish(newer / "report.md")
    (matrix / "table.md").write_text("# E7\n")
    html.publish(matrix / "table.md")
    page = (tmp_path / "index.html").read_text()
    assert re.findall(r'<a href="([^"]+)">', page) == ["startup/b/report.html", "startup/a/report.html",
                                                        "table1/all/reports/r1/report.html"]
    # Each page leads back to the index.
    assert '<a href="../../index.html">all results</a>' in (newer / "report.html").read_text()


def test_a_report_directory_appears_whole_or_not_at_all(tmp_path):
    """paths.filled_whole: filled as .<name>.partial, renamed at the end; an error removes it."""
    final = tmp_path / "reports" / "r1"
    with paths.filled_whole(final) as part:
        assert part == tmp_path / "reports" / ".r1.partial" and part.is_dir() and not final.exists()
        (part / "table.md").write_text("# whole\n")
    assert (final / "table.md").read_text() == "# whole\n" and not part.exists()

    broken = tmp_path / "reports" / "r2"
    try:
        with paths.filled_whole(broken) as part:
            (part / "table.md").write_text("# half")
            raise OSError(28, "No space left on device")
    except OSError as e:
        assert e.errno == 28
    else:
        raise AssertionError("the error was swallowed")
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["r1"]


def test_many_cells_captures_go_to_a_page_of_their_own(tmp_path):
    """Up to CAPTURES_INLINE_MAX cells' captures are listed on the report; one more and they move to
    captures.html beside it (linked from the report's section, and leading back to it), every link there
    relative to that page and to a file that exists."""
    cells = [a_run(tmp_path / "m" / "cells" / f"k{i:02d}") for i in range(html.CAPTURES_INLINE_MAX + 1)]
    report = tmp_path / "m" / "reports" / "r1"
    report.mkdir(parents=True)
    (report / "table.md").write_text("# Table 1\n\nthe answer\n")
    page = html.write_html(report / "table.md", cells[:-1]).read_text()
    assert page.count("flow.pcap.gz") == html.CAPTURES_INLINE_MAX and not (report / "captures.html").exists()
    page = html.write_html(report / "table.md", cells).read_text()
    assert "flow.pcap.gz" not in page
    assert f'The captures and traces of {len(cells)} cells, on <a href="captures.html">' in page
    own = (report / "captures.html").read_text()
    links = re.findall(r'<a href="([^"]+)">', own)
    assert links[0] == "report.html" and len(links) == 1 + 2 * len(cells)
    assert all((report / link).is_file() for link in links)


def test_a_verdict_cell_is_coloured_by_its_verdict(tmp_path):
    """Every table cell that is a verdict gets its class (the page's colour for it); other cells, and a
    verdict word inside a longer cell, do not."""
    (tmp_path / "t.md").write_text("# T\n\n| value | outcome | note |\n|---|---|---|\n"
                                   "| a | reproduced | x |\n| b | not reproduced | y |\n| c | not decided at n = 7 | z |\n"
                                   "| d | reproduced (n = 1, no CI) | 2 of 6 reproduced |\n")
    page = html.write_html(tmp_path / "t.md").read_text()
    assert re.findall(r'<td class="([\w-]+)">([^<]*)</td>', page) == [
        ("reproduced", "reproduced"), ("not-reproduced", "not reproduced"), ("not-decided", "not decided at n = 7"),
        ("reproduced", "reproduced (n = 1, no CI)")]
    assert "<td>2 of 6 reproduced</td>" in page and "td.not-reproduced {" in page
