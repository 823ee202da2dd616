"""The matrix plan record (sslab.plan_record): what a controller writes is what hosts and reports read."""

import json

import pytest

from .test_matrix import chosen_of
from sslab import matrix as mx
from sslab.plan_record import MatrixPlan, read_matrix_plan, write_matrix_plan
from sslab.records import RecordFormatError

KERNEL = {"cubic": "builtin", "bbr": "module tcp_bbr", "cubic_hs": "module tcp_sslab",
          "cubic_suss": "module tcp_sslab"}


def table1_plan(boot_share=1) -> MatrixPlan:
    m = mx.load_matrix("table1")
    chosen = chosen_of(m, {"CCA": "cubic", "BUF": "1BDP", "RTT": "25,50"})
    return mx.plan_matrix(m, chosen, 3, "img", KERNEL, "code", substrate="uml", clock="uml/inf-cpu",
                          boot_share=boot_share)


@pytest.mark.parametrize("share", [1, 2])
def test_a_plan_reads_back_as_written(tmp_path, share):
    plan = table1_plan(share)
    write_matrix_plan(plan, tmp_path / "plan.json")
    assert read_matrix_plan(tmp_path / "plan.json") == plan
    raw = json.loads((tmp_path / "plan.json").read_text())
    assert raw["format"] == "sslab.matrix-plan/1" and len(raw["cells"]) == 2 * 3
    # A cell of a boot of its own has no "boot" in the file; a shared boot's cells say where they stand.
    if share == 1:
        assert all("boot" not in c for c in raw["cells"])
    else:
        assert [c["boot"]["position"] for c in raw["cells"]] == [0, 0, 1, 1, 0, 0]
    # A None at the top (a plan of no inventory yet) is left out.
    assert "inventory" not in raw and "jobs" not in raw


def test_a_plan_from_before_a_field_existed_reads_with_its_default(tmp_path):
    # As the first matrices wrote it: no substrate, clock, boot share, labels, axis values or kind.
    raw = {"format": "sslab.matrix-plan/1", "matrix": "table1", "title": "E7", "report": "table1",
           "selection": {}, "iterations": 1, "image_hash": "i", "code_version": "c",
           "available_ccas": {"cubic": "builtin"}, "compare": {"param": "small", "off": "a", "on": "b"},
           "cells": [{"key": "k", "setting": {"large_cc": "cubic"}, "rep": 0, "name": "n", "scenario": {}}]}
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    plan = read_matrix_plan(tmp_path / "plan.json")
    assert (plan.substrate, plan.clock, plan.boot_share, plan.kind, plan.labels, plan.axis_values) == \
        ("vm", "qemu/mttcg", 1, "matrix", {}, None)
    assert plan.cells[0].capture_check is True and plan.cells[0].boot is None and plan.cells[0].boot_group == "k"


def test_a_mistyped_or_missing_field_is_refused_by_its_path(tmp_path):
    raw = table1_plan().record()
    raw["cells"][1]["rep"] = "second"
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    with pytest.raises(RecordFormatError, match=r"plan.json: not a matrix plan this harness reads: cells\.1\.rep"):
        read_matrix_plan(tmp_path / "plan.json")
    del raw["cells"]
    (tmp_path / "plan.json").write_text(json.dumps(raw))
    with pytest.raises(RecordFormatError, match=r"cells: Field required"):
        read_matrix_plan(tmp_path / "plan.json")
