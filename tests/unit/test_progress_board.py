"""The matrix progress board: per-host state from the dealer, the running cell from progress files."""

import io
import json
import time

from rich.console import Console

from sslab.matrix.dealer import Dealer
from sslab.matrix.progress import ProgressBoard, mmss


def board_of(dealer, files, total, preparing=(), out=None):
    return ProgressBoard(dealer, files, total, est_cell_s=60.0, preparing=set(preparing),
                         console=Console(file=out or io.StringIO(), force_terminal=False, width=200))


def test_board_shows_each_hosts_state_and_the_cell_its_runner_is_on(tmp_path):
    d = Dealer([["k0"], ["k1"], ["k2", "k3"], ["k4"]], {"a": 1, "b": 1, "c": 1}, boot_seconds=60)
    now = time.time()
    ba = d.next_batch("a", now - 30)
    bb = d.next_batch("b", now - 10)
    d.batch_ended(bb, {"k1"}, set(), set())
    d.next_batch("b", now - 5)  # k2, k3
    a_file = tmp_path / "a.json"
    a_file.write_text(json.dumps({"running": "smoke-cubic r0", "updated": now}))
    board = board_of(d, {"a": a_file, "b": None, "c": None}, total=5, preparing={"c"})
    lines = board.lines(now)
    assert lines[1].split() == ["a", "running", "0", "cell(s)", "home,", "batch", f"{ba.number}", "(1", "cell(s),",
                                "0:30):", "smoke-cubic", "r0"]
    assert "b            running   1 cell(s) home, batch 3 (2 cell(s), 0:05)" in lines[2]
    assert lines[3].split()[:2] == ["c", "preparing"]
    # 4 cells left at 60 s over 3 slots: 80 s
    assert lines[0].startswith("matrix: 1/5 cells home, elapsed ") and "ETA 1:20 (3 host(s))" in lines[0]


def test_the_eta_learns_the_pace_once_a_round_of_cells_is_home():
    """At first the estimate per cell (60 s) over the slots; once as many cells are home as there are slots,
    this run's own pace: 2 home in 100 s, 4 left: 200 s, whatever the estimate said (4 x 60 / 2 = 120 s)."""
    d = Dealer([["k0"], ["k1"], ["k2"], ["k3"], ["k4"], ["k5"]], {"a": 1, "b": 1}, boot_seconds=60)
    board = board_of(d, {}, total=6)
    board.t0 = 1000.0
    ba, bb = d.next_batch("a", 1000.0), d.next_batch("b", 1000.0)
    assert board.eta_s(1010.0) == 6 * 60 / 2                      # nothing home yet: the estimate
    d.batch_ended(ba, {"k0"}, set(), set())
    assert board.eta_s(1050.0) == 5 * 60 / 2                      # one of two slots' cells: still the estimate
    d.batch_ended(bb, {"k1"}, set(), set())
    assert board.eta_s(1100.0) == 4 * 100 / 2                     # a round home in 100 s: 50 s a cell
    assert "ETA 3:20" in board.lines(1100.0)[0]


def test_a_lost_host_says_why_and_leaves_the_eta_to_the_others():
    d = Dealer([["k0"], ["k1"]], {"a": 1, "b": 1}, boot_seconds=60)
    bb = d.next_batch("b", 0)
    d.batch_ended(bb, set(), set(), set(), why="unreachable")
    lines = board_of(d, {}, total=2).lines()
    assert "b            lost      0 cell(s) home: unreachable" in lines[2]
    assert "ETA 2:00 (2 host(s), 1 lost)" in lines[0]
    d.lose("a", "preparation failed")
    assert "no live host" in board_of(d, {}, total=2).lines()[0]


def test_an_earlier_batchs_progress_file_is_not_this_batchs(tmp_path):
    d = Dealer([["k0"]], {"a": 1}, boot_seconds=60)
    now = time.time()
    d.next_batch("a", now)
    f = tmp_path / "a.json"
    f.write_text(json.dumps({"running": "old cell", "updated": now - 100}))
    assert board_of(d, {"a": f}, total=1).states(now)[0].running is None


def test_the_board_prints_only_when_something_changed():
    d = Dealer([["k0"]], {"a": 1}, boot_seconds=60)
    out = io.StringIO()
    board = board_of(d, {}, total=1, out=out)
    board.draw()
    board.draw()
    assert out.getvalue().count("matrix:") == 1
    batch = d.next_batch("a", time.time())
    board.draw()
    d.batch_ended(batch, {"k0"}, set(), set())
    board.draw()
    assert out.getvalue().count("matrix:") == 3 and "1/1 cells home" in out.getvalue()
    assert "a            done" in out.getvalue()


def test_mmss():
    assert mmss(59) == "0:59" and mmss(61) == "1:01" and mmss(3725) == "1:02:05" and mmss(-5) == "0:00"
