"""The causes tried about the paper's values a report does not reproduce (analysis.causes)."""

import pytest

from sslab.analysis.causes import CauseTried, Causes, causes_md, load_causes
from sslab.analysis.verdict import Comparison

BBR_25 = {"large_cc": "bbr", "buffer": "1BDP", "large_rtt": "25ms"}


def test_each_value_not_reproduced_gets_the_causes_tried_about_it():
    causes = Causes(causes=[
        CauseTried(where={"large_cc": "bbr", "buffer": "1BDP"}, values=["small off"], verdict="ruled out",
              cause="the senders' qdisc", found="fq moved it by 0.1 s", runs="docs/notebook/table1.md, x"),
        CauseTried(where={"large_cc": "bbr"}, verdict="moves it", cause="offloads", found="11.8 -> 2.3 s", runs="y")])
    off = Comparison("BBRv1 1BDP 25ms", "small off FCT", "fct", 12.0, 20.07, 1, short="small off")
    on = Comparison("BBRv1 1BDP 25ms", "small on FCT", "fct", 17.5, 17.54, 1, short="small on")      # reproduced
    imp = Comparison("BBRv1 1BDP 25ms", "improvement", "improvement", 3.0, 13.0, 10, (-1.0, 7.0), short="improvement")
    cubic = Comparison("CUBIC 1BDP 25ms", "small off FCT", "fct", 1.84, 1.33, 1, short="small off")
    lines = causes_md(causes, [(BBR_25, off), (BBR_25, on), (BBR_25, imp),
                               ({"large_cc": "cubic", "buffer": "1BDP", "large_rtt": "25ms"}, cubic)])
    text = "\n".join(lines)
    assert "**BBRv1 1BDP 25ms, small on**" not in text                       # reproduced: not listed
    assert ("- **BBRv1 1BDP 25ms, small off** (not reproduced (n = 1, no CI); ours 12, the paper's 20.07):\n"
            "  - ruled out: the senders' qdisc. fq moved it by 0.1 s (docs/notebook/table1.md, x)\n"
            "  - moves it: offloads. 11.8 -> 2.3 s (y)") in text
    # The improvement: the second cause is about every value of the column, the first only small off.
    assert "- **BBRv1 1BDP 25ms, improvement** (not decided at n = 10" in text and text.count("moves it: offloads") == 2
    assert "- **CUBIC 1BDP 25ms, small off** (not reproduced (n = 1, no CI); ours 1.84, the paper's 1.33): no cause " \
           "tested yet." in text
    assert causes_md(causes, [(BBR_25, on)]) == []


def test_a_causes_file_is_checked_at_its_edge(tmp_path):
    assert load_causes("none", tmp_path).causes == []
    (tmp_path / "t.yaml").write_text("causes:\n  - {where: {large_cc: bbr}, verdict: maybe, cause: c, found: f, runs: r}\n")
    with pytest.raises(ValueError, match=r"t.yaml: causes.0.verdict: Input should be 'cause', 'ruled out' or 'moves it'"):
        load_causes("t", tmp_path)


def test_table1s_causes_file_names_real_settings_and_values():
    from sslab.analysis.matrix_described import described_in
    from sslab.analysis.settings_table import Settings
    from sslab.matrix.spec import load_matrix
    from sslab.papers.suss.table1 import MATRIX_FILE
    m = load_matrix("table1")
    shorts = {c.short for c in described_in(MATRIX_FILE).section(Settings).columns}
    assert shorts == {"small off", "small on", "improvement", "large off", "large on", "stability"}
    causes = load_causes("table1").causes
    assert causes
    for c in causes:
        assert set(c.where) <= {"large_cc", "buffer", "large_rtt"}, c.where
        for axis, value in c.where.items():
            assert value in m.spec.axes[axis].labels(axis), (axis, value)
        assert set(c.values or []) <= shorts, c.values
