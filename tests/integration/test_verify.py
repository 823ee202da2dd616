"""`make verify`: an archived matrix's cells run again from their plans, compared byte for byte with the
archive; a tampered archive is caught, and an artifact this tree cannot rerun is refused before anything
runs."""

import gzip
import json
import re

import pytest

from sslab.analysis import ringbuf

from .helpers import sslab

pytestmark = pytest.mark.vm

CELL = ["--set", "CCA=cubic", "--set", "BUF=1BDP", "--set", "RTT=25ms", "--iter", "1"]


def test_a_cell_run_again_gives_the_same_bytes_and_a_changed_archive_does_not(tmp_path):
    results = tmp_path / "results"
    res = sslab(["run", "reproduce-table1", *CELL], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [artifact] = list((results / "table1").iterdir())
    res = sslab(["verify", str(artifact), "--sample", "1"], results)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "**1 of 1 cells the same bytes**" in res.stdout and "| table1-cubic-1BDP-25ms (" in res.stdout
    assert re.search(r"\| 0 \| 26 \| 26 \| – \|", res.stdout)  # both runs' 13 flows each, every one the same
    record = json.loads(((results / "verify" / "latest").resolve() / "verify.json").read_text())
    assert record["same"] == 1 and [c["same"] for c in record["cells"]] == [True]
    assert len(record["cells"][0]["flows"]) == 26 and all(f["identical"] for f in record["cells"][0]["flows"])
    # One ACK of the archive's trace changed (a cwnd of 10 read as 11): the rerun no longer matches it.
    [trace] = sorted(artifact.glob("cells/*/job/out/runs/000-*/flow.trace.rb.gz"))
    trace.write_bytes(gzip.compress(first_cwnd_of_10_made_11(gzip.decompress(trace.read_bytes()))))
    res = sslab(["verify", str(artifact), "--sample", "1"], results)
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]
    assert "**0 of 1 cells the same bytes**" in res.stdout and "000-suss-cubic_hs-r0 port" in res.stdout


def test_an_artifact_of_another_image_is_refused_before_anything_runs(tmp_path):
    results = tmp_path / "results"
    artifact = results / "table1" / "old"
    (artifact / "plans").mkdir(parents=True)
    plan = (artifact / "plans" / "plan-20261101T000000Z-0000.json")
    plan.write_text('{"format": "sslab.matrix-plan/1", "matrix": "table1", "title": "t", "report": "table1", '
                    '"selection": {}, "iterations": 1, "image_hash": "0123456789abcdef", "code_version": "x", '
                    '"substrate": "uml", "clock": "uml/inf-cpu", "cells": []}')
    res = sslab(["verify", str(artifact)], results)
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
    assert "ran on image 0123456789ab; this tree builds" in res.stderr and not (results / "verify").exists()


def first_cwnd_of_10_made_11(raw: bytes) -> bytes:
    """A one-CPU ring-buffer trace with its first tcp_probe record of snd_cwnd 10 saying 11."""
    header, pages_at = ringbuf.split_header(raw)
    assert header["cpus"] == [0]
    rb = ringbuf.parse(raw)
    rows = rb.rows("tcp_probe")
    first = int(rows[rb.column("tcp_probe", "snd_cwnd", rows) == 10][0])
    at = pages_at + 8 + int(rb.offset[first]) + rb.format("tcp_probe").fields["snd_cwnd"].offset  # 8: the page count
    assert raw[at:at + 4] == (10).to_bytes(4, "little")
    return raw[:at] + (11).to_bytes(4, "little") + raw[at + 4:]
