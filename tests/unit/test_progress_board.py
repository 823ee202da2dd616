"""The matrix progress board: per-host counts, the running cell and ETAs, from progress files."""

import io
import json
import time

from rich.console import Console

from sslab.matrix.progress import ProgressBoard, mmss


def write(path, **state):
    base = {"done": 0, "skipped": 0, "failed": 0, "running": None, "running_since": None, "cell_seconds": [],
            "finished": False, "updated": time.time()}
    path.write_text(json.dumps({**base, **state}))


def test_plain_board_counts_running_cell_and_eta(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    now = time.time()
    write(a, done=2, failed=1, cell_seconds=[100.0, 120.0], running="cell-x r0", running_since=now - 30)
    board = ProgressBoard({"a": a, "b": b, "far": None}, {"a": ["k"] * 5, "b": ["k"] * 2, "far": ["k"]},
                          est_cell_s=60.0, console=Console(file=io.StringIO(), force_terminal=False))
    assert not board.tty
    lines = board.lines(now)
    # a: 3 of 5 finished (2 done + 1 failed); 2 left at its own mean of 110 s, 30 s into one: 190 s
    assert lines[1].split() == ["a", "[##############..........]", "3/5,", "1", "failed,", "running", "cell-x",
                                "r0", "(0:30),", "ETA", "3:10"]
    # b has written nothing yet: 2 cells at the estimate
    assert "0/2, preparing, ETA 2:00" in lines[2]
    assert "far" in lines[3] and "remote" in lines[3]
    assert lines[0].startswith("matrix: 3/8 cells") and lines[0].endswith("ETA 3:10")


def test_a_previous_runs_progress_file_is_ignored(tmp_path):
    a = tmp_path / "a.json"
    write(a, done=4, updated=time.time() - 3600)
    board = ProgressBoard({"a": a}, {"a": ["k"] * 4}, est_cell_s=10.0,
                          console=Console(file=io.StringIO(), force_terminal=False))
    assert board.states()[0].finished == 0 and not board.states()[0].started


def test_log_prints_only_when_something_changed(tmp_path):
    a = tmp_path / "a.json"
    out = io.StringIO()
    board = ProgressBoard({"a": a}, {"a": ["k"] * 2}, est_cell_s=10.0,
                          console=Console(file=out, force_terminal=False, width=200))
    board.draw()
    board.draw()
    assert out.getvalue().count("matrix:") == 1
    write(a, done=1)
    board.draw()
    assert out.getvalue().count("matrix:") == 2 and "1/2" in out.getvalue()


def test_terminal_board_is_a_rich_progress_display(tmp_path):
    a = tmp_path / "a.json"
    write(a, done=1, cell_seconds=[5.0], running="cell-y r1", running_since=time.time())
    out = io.StringIO()
    board = ProgressBoard({"a": a}, {"a": ["k"] * 3}, est_cell_s=10.0,
                          console=Console(file=out, force_terminal=True, width=120))
    assert board.tty
    board.start()
    board.draw()
    board.stop()
    text = out.getvalue()
    # 2 cells left at 5 s each, a moment into one of them
    assert "1/3" in text and "running cell-y r1" in text and ("ETA 0:09" in text or "ETA 0:10" in text)


def test_mmss():
    assert mmss(59) == "0:59" and mmss(61) == "1:01" and mmss(3725) == "1:02:05" and mmss(-5) == "0:00"
