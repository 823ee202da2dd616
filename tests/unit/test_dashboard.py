"""results/index.html as a dashboard (sslab.analysis.dashboard): each report's row from its directory."""

import json
import re

from sslab import paths
from sslab.analysis import dashboard, html
from sslab.experiment.spec import load_experiment
from sslab.records import stamped


def test_the_catalogue_names_the_folder_each_experiment_file_writes():
    known = dashboard.catalogue()
    files = sorted((paths.REPO_ROOT / "experiments").glob("*.yaml"))
    assert files and {load_experiment(f).output for f in files} == set(known)
    assert (known["table1"].id, known["table1"].target, known["table1"].figure) == ("E7", "reproduce-table1", "Table 1")


def test_rows_say_what_each_report_is(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    # A matrix's report with 30 of 40 cells done, a run's own (finished) report and one rebuilt in it.
    matrix = tmp_path / "table1" / "all" / "reports" / "20261129T101500Z-abcd"
    matrix.mkdir(parents=True)
    (matrix / "table.md").write_text("# E7 stability\n\n**61 of 90 paper values reproduced within tolerance**; ...\n")
    (matrix / "summary.json").write_text(json.dumps({"cells_done": 30, "cells_planned": 40, "code": "547e7e64fa04ffff",
                                                     "rows": [{"n": 3}, {"n": 4}],
                                                     "claims": [{"outcome": "reproduced"}, {"outcome": "not decided"},
                                                                {"outcome": "not decided"}]}))
    # Its cells ran the harness's commit (their meta.json), which the index shows, not the traffic code.
    cell = tmp_path / "table1" / "all" / "cells" / "k1"
    cell.mkdir(parents=True)
    (cell / "meta.json").write_text(json.dumps({"code": {"commit": "0d2d09b0a1b2c3d4", "dirty": False}}))
    run = tmp_path / "startup" / "20261128T213655Z-e63d"
    (run / "job" / "out").mkdir(parents=True)
    (run / "job" / "out" / "runs.json").write_text(json.dumps(stamped("sslab.runs", {"runs": [{"tag": "a"}, {"tag": "b"}]})))
    (run / "meta.json").write_text(json.dumps({"code": {"commit": "66a2648902d70804", "dirty": False}}))
    (run / "manifest.json").write_text("{}")
    (run / "report.md").write_text("# e1-startup\n")
    rebuilt = run / "rebuilt-20261129T095126Z-c991"
    rebuilt.mkdir()
    (rebuilt / "report.md").write_text("# e1-startup\n")
    for md in (matrix / "table.md", run / "report.md", rebuilt / "report.md"):
        html.write_html(md)
    rows = {r.page.parent: r for r in (dashboard.row_of(p, tmp_path, p.parent.name) for p in html.reports_under(tmp_path))}
    m = rows[matrix]
    # n: its repetitions (the most a setting has), not its cells; the claims it tests counted.
    assert (m.folder, m.n, m.status, m.commit, m.written) == ("table1", 4, "partial (30 of 40 cells)", "0d2d09b0a1b2",
                                                              "2026-11-29 10:15")
    assert m.headline == ("61 of 90 paper values reproduced within tolerance; claims: 1 reproduced, 2 not decided "
                          "of 3")
    r = rows[run]
    assert (r.n, r.status, r.commit, r.headline, r.written) == (2, "done", "66a2648902d7", "", "2026-11-28 21:36")
    b = rows[rebuilt]
    assert (b.n, b.status, b.commit, b.written) == (2, "done", "66a2648902d7", "2026-11-29 09:51")
    (run / "manifest.json").unlink()
    assert dashboard.row_of(run / "report.html", tmp_path, "x").status == "partial"


def test_the_index_is_a_table_a_row_per_report_with_its_experiment(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    d = tmp_path / "table1" / "all" / "reports" / "20261129T101500Z-abcd"
    d.mkdir(parents=True)
    (d / "table.md").write_text("# E7 stability\n")
    (d / "summary.json").write_text(json.dumps({"cells_done": 2, "cells_planned": 2}))
    (d / "flows.csv").write_text("scenario\n")
    html.publish(d / "table.md")
    page = (tmp_path / "index.html").read_text()
    assert page.count("<tr>") == 2  # the heading's and the report's
    # Its status coloured, its data a click away.
    assert '<td class="done">done</td>' in page
    assert ('<a href="table1/all/reports/20261129T101500Z-abcd/summary.json">summary.json</a> '
            '<a href="table1/all/reports/20261129T101500Z-abcd/flows.csv">flows.csv</a>') in page
    assert re.search(r"E7 <code>make reproduce-table1</code>", page) and "SUSS (SIGCOMM&#x27;24): Table 1" in page
    assert '<a href="table1/all/reports/20261129T101500Z-abcd/report.html">E7 stability</a>' in page
    assert "<script>" in page and "http" not in page.split("<script>")[1]  # sorting, filtering: nothing fetched


def test_a_matrix_report_that_did_not_count_its_cells_claims_no_status(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    d = tmp_path / "table1" / "all" / "reports" / "20261128T130119Z-8127"
    d.mkdir(parents=True)
    (d / "table.md").write_text("# E7\n")
    (d / "summary.json").write_text(json.dumps({"plan": "plan-x.json"}))
    html.write_html(d / "table.md")
    row = dashboard.row_of(d / "report.html", tmp_path, "E7")
    assert (row.n, row.status, row.commit) == (None, "", "")


def test_the_index_lists_an_experiments_part_but_not_a_matrix_cell_a_failure_or_a_partial(tmp_path):
    """A part of an experiment runs as a cell of its store and its key names it: its page is a run's
    own and is listed.  A matrix cell's page (its matrix's report links it), a cell set aside under
    failed/ and an unfinished cell are not."""
    pages = {}
    for name, d in (("part", "startup/cells/k1"), ("matrix cell", "table1/all/cells/k2"),
                    ("set aside", "startup/failed/k1-20261207T000000Z-set-aside"),
                    ("partial", "startup/cells/.partial-k3-abc"), ("run", "startup/20261128T213655Z-e63d")):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "report.html").write_text("<title>x</title>")
        pages[name] = tmp_path / d / "report.html"
    (tmp_path / "startup" / "keys").mkdir()
    (tmp_path / "startup" / "keys" / "k1").symlink_to("../cells/k1")
    (tmp_path / "startup" / "keys" / ".k1.lock").write_text("")
    assert html.reports_under(tmp_path) == sorted([pages["part"], pages["run"]])
