"""The documentation's results page from a snapshot of a Table 1 report (sslab.cli.docresults)."""

import json

import pytest

from sslab.cli import docresults, main
from sslab.cli.status import Refused


def a_report(d, verdict=True):
    """A report folder as a Table 1 run leaves it: summary.json with its answer, the three plots, flows.csv."""
    d.mkdir(parents=True)
    summary = {"verdict": ["**Table 1's values under the verdict at n = 5:**", "",
                           "- the small flows' FCTs: 5 reproduced, 3 not reproduced, 0 not decided of 8"] if verdict else [],
               "claims": [{"id": "table1-average-bbrv2", "outcome": "reproduced", "verdict": "reproduced"}],
               "answer_plots": [["every value beside the paper's", "ours-vs-paper.svg"],
                                ["the improvement and the large flow's change, setting by setting", "per-setting.svg"],
                                ["the large flow against its claim's bound, setting by setting", "large-vs-bound.svg"]],
               "causes_md": ["## Why the values not reproduced differ", "",
                             "  - moves it: x. y (docs/notebook/table1.md, 2026-12-02 (late))"],
               "comparisons_md": "| setting | value |\n|---|---|\n| BBRv2 1BDP 25ms | small off |"}
    (d / "summary.json").write_text(json.dumps(summary))
    for name in docresults.PLOTS:
        (d / name).write_text("<svg/>")
    (d / "summary.pdf").write_bytes(b"%PDF-1.4")
    (d / "flows.csv").write_text("scenario,code,fct_s\ntable1-bbr2-1BDP-25ms,775f7d5f2467,1.2\n")
    (d / "table.md").write_text("# E7\n\nRan under: substrate uml, clock uml/inf-cpu; host model ideal.\n")
    return d


def test_a_snapshot_copies_the_answer_and_names_its_run(tmp_path):
    report = a_report(tmp_path / "r")
    console = tmp_path / "console.log"
    console.write_text("\n".join(f"line {i}" for i in range(100)) + "\n")
    dest = docresults.take_snapshot(report, "make reproduce-table1", console, dest=tmp_path / "snap")
    assert sorted(p.name for p in dest.iterdir()) == sorted(["summary.json", *docresults.PLOTS, "summary.pdf",
                                                             "console.txt", "snapshot.json"])
    meta = json.loads((dest / "snapshot.json").read_text())
    assert meta["command"] == "make reproduce-table1" and meta["commit"] == "775f7d5f2467" and meta["cpu"]
    assert meta["ran_under"] == "substrate uml, clock uml/inf-cpu; host model ideal"
    # The console's ending only: its last 20 lines.
    assert (dest / "console.txt").read_text().splitlines() == [f"line {i}" for i in range(80, 100)]
    page = docresults.results_page(dest, "results/table1")
    assert "5 reproduced, 3 not reproduced" in page and "commit 775f7d5f2467" in page
    assert "Ran under: substrate uml, clock uml/inf-cpu; host model ideal." in page
    assert all(f"](results/table1/{n})" in page for n in (*docresults.PLOTS, "summary.pdf"))
    assert "table1-average-bbrv2 reproduced" in page and "| BBRv2 1BDP 25ms | small off |" in page
    # A cause's notebook entry is a link on the site; the console's lines a block.
    assert "[notebook/table1](notebook/table1.md)" in page and "```\nline 80" in page
    glance = docresults.results_glance(dest)
    assert "5 reproduced, 3 not reproduced" in glance and "(results.md)" in glance and "n = 5:**" not in glance


def test_no_snapshot_says_so(tmp_path):
    assert "No snapshot" in docresults.results_page(tmp_path) and "No snapshot" in docresults.results_glance(tmp_path)


def test_what_is_not_a_table1_report_is_refused_and_nothing_copied(tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(Refused, match="no summary.json"):
        docresults.take_snapshot(plain, "x", dest=tmp_path / "snap")
    with pytest.raises(Refused, match="no verdict lines"):
        docresults.take_snapshot(a_report(tmp_path / "e6", verdict=False), "x", dest=tmp_path / "snap")
    with pytest.raises(Refused, match="no such file"):
        docresults.take_snapshot(a_report(tmp_path / "ok"), "x", tmp_path / "missing.log", dest=tmp_path / "snap")
    assert not (tmp_path / "snap").exists()
    # From the command line: exit 2, before anything is written.
    assert main(["docs-snapshot", str(plain), "--command", "make reproduce-table1"]) == 2
    assert "not a Table 1 report" in capsys.readouterr().err


def test_the_e7_table_sets_ours_beside_each_printed_paper_value(tmp_path):
    def c(where, short, kind, paper, ours, outcome, rounding, derived=False):
        return {"where": where, "short": short, "kind": kind, "paper": paper, "ours": ours, "outcome": outcome,
                "rounding": rounding, "derived": derived}
    report = a_report(tmp_path / "r")
    summary = json.loads((report / "summary.json").read_text())
    summary["comparisons"] = [
        c("CUBIC 1BDP 25ms", "large off", "fct", 30.4, 30.708, "reproduced", 0.05),
        c("CUBIC 1BDP 25ms", "small off", "fct", 1.33, 1.8591, "not reproduced", 0.005),
        c("CUBIC 1BDP 25ms", "improvement", "improvement", 29, 46.2, "not decided", 0.5),
        # Implied by the paper, not printed: not in the table.
        c("CUBIC 1BDP 25ms", "stability", "change", 2.6, 5.8, "not reproduced", 0.05, derived=True),
        c("CUBIC 2BDP mean", "large off", "fct", 28.1, 27.0, "reproduced", 0.05, derived=True)]
    (report / "summary.json").write_text(json.dumps(summary))
    dest = docresults.take_snapshot(report, "make reproduce-table1", dest=tmp_path / "snap")
    table = docresults.e7_beside_paper(dest)
    assert "| CUBIC 1BDP 25ms | 30.4 / 30.71 ✓ | 1.33 / 1.86 ✗ | – | – | 29 % / 46 % ? |" in table
    assert "2BDP" not in table and "2.6" not in table
    assert "commit 775f7d5f2467" in table and "(results.md)" in table
    assert "No snapshot" in docresults.e7_beside_paper(tmp_path)
