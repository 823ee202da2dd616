"""The run's trace copied out of tracefs in the guest's own kernel (sslab.guest.ftrace.copy_out):
by sendfile(), one call where read() took one a page, and the same bytes as read() gives.

Why a guest test: whether a file's splice path hands over every record is the kernel's (UML's
6.1 here).  `trace_pipe`'s own splice dropped records at each page's end on the host's 6.18
(docs/notebook/cost.md, 30 Nov 2026); the `trace` file's is the generic one over the same
seq_file reads as read(), which this holds to, on 40,000 records of several page lengths,
written where a run writes (the job's output directory, over hostfs)."""

from __future__ import annotations

import json

import pytest

from sslab.substrate.job import JobSpec
from sslab.substrate.uml import UMLConfig, UMLTestbed

pytestmark = pytest.mark.vm

RECORDS = 40_000
GUEST = f"""
import json, os
from pathlib import Path
import sslab.guest.ftrace as ftrace
from sslab.guest.ftrace import TRACEFS, copy_out
class ReadIsNotAllowed:
    @staticmethod
    def copyfileobj(*args, **kwargs):
        raise AssertionError("copy_out fell back to read()")
ftrace.shutil = ReadIsNotAllowed   # the copy below must be sendfile's
root, out = TRACEFS, Path(os.environ["SSLAB_OUT_DIR"])
(root / "tracing_on").write_text("0")
(root / "buffer_size_kb").write_text("32768")
(root / "trace").write_text("")
(root / "tracing_on").write_text("1")
with open(root / "trace_marker", "w") as marker:
    for i in range({RECORDS}):
        marker.write(f"record {{i}} " + "x" * (i % 300) + "\\n")
        marker.flush()
(root / "tracing_on").write_text("0")
with open(root / "trace", "rb") as src, open(out / "by-read", "wb") as dst:
    while chunk := src.read(1 << 20):
        dst.write(chunk)
with open(root / "trace", "rb") as src, open(out / "by-sendfile", "wb") as dst:
    copied = copy_out(src, dst)
print(json.dumps({{"copied": copied}}))
"""


def test_the_trace_copied_by_sendfile_is_the_trace_read_gives(image, tmp_path):
    res = UMLTestbed(image, UMLConfig()).run(JobSpec(argv=["python3", "-c", GUEST], timeout_s=600), tmp_path / "job")
    assert res.ok, res.stderr()[-3000:]
    seen = json.loads(res.stdout().strip().splitlines()[-1])
    out = tmp_path / "job" / "out"
    by_read, by_sendfile = (out / "by-read").read_bytes(), (out / "by-sendfile").read_bytes()
    assert seen["copied"] == len(by_sendfile) > 40 * RECORDS
    assert by_sendfile == by_read
    records = [line for line in by_read.decode().splitlines() if not line.startswith("#")]
    assert len(records) == RECORDS
    assert [int(line.split("record ")[1].split()[0]) for line in records] == list(range(RECORDS))
