"""The dealer walked through a fleet's life by hand: hosts free up, one is lost, one comes back late."""

import pytest

from sslab.matrix.dealer import MIN_TIMEOUT_S, TIMEOUT_FACTOR, Dealer


def boots(n, per=1):
    return [[f"c{i}{chr(97 + j)}" if per > 1 else f"c{i}" for j in range(per)] for i in range(n)]


def test_a_host_that_frees_up_gets_the_next_boot():
    d = Dealer(boots(4), {"a": 1, "b": 1}, boot_seconds=10)
    ba, bb = d.next_batch("a", 0), d.next_batch("b", 0)
    assert (ba.keys, bb.keys) == (["c0"], ["c1"])
    assert d.next_batch("a", 1) is None  # busy
    assert d.batch_ended(ba, {"c0"}, set(), set()) == []
    # a is free again before b: it takes c2, and then c3 when it is back again
    assert d.next_batch("a", 5).keys == ["c2"]
    assert d.hosts["a"].state == "running" and d.hosts["b"].state == "running"
    d.batch_ended(d.hosts["a"].batch, {"c2"}, set(), set())
    assert d.next_batch("a", 9).keys == ["c3"]
    d.batch_ended(d.hosts["a"].batch, {"c3"}, set(), set())
    assert not d.finished()  # b still out
    d.batch_ended(bb, {"c1"}, set(), set())
    assert d.finished() and d.done == {"c0", "c1", "c2", "c3"} and d.hosts["a"].done == 3


def test_slots_give_a_host_that_many_boots_at_once():
    d = Dealer(boots(5, per=2), {"a": 2, "b": 1}, boot_seconds=10)
    assert d.next_batch("a", 0).boots == [["c0a", "c0b"], ["c1a", "c1b"]]
    assert d.next_batch("b", 0).boots == [["c2a", "c2b"]]


def test_a_host_cut_off_loses_its_boots_to_the_others():
    d = Dealer(boots(3, per=2), {"a": 1, "b": 1}, boot_seconds=10)
    ba, bb = d.next_batch("a", 0), d.next_batch("b", 0)
    # b came back unreachable having merged the first repetition of its boot only
    back = d.batch_ended(bb, {"c1a"}, set(), set(), why="unreachable")
    assert back == ["c1b"]
    assert d.hosts["b"].state == "lost" and d.hosts["b"].why_lost == "unreachable"
    assert d.next_batch("b", 20) is None  # never dealt again
    d.batch_ended(ba, {"c0a", "c0b"}, set(), set())
    # the lost boot's missing cell comes first, before the queue's c2
    assert d.next_batch("a", 30).boots == [["c1b"]]
    d.batch_ended(d.hosts["a"].batch, {"c1b"}, set(), set())
    assert d.next_batch("a", 40).boots == [["c2a", "c2b"]]
    d.batch_ended(d.hosts["a"].batch, {"c2a", "c2b"}, set(), set())
    assert d.finished() and len(d.done) == 6


def test_an_overdue_host_is_lost_and_its_late_cells_count_once():
    d = Dealer(boots(2), {"a": 1, "b": 1}, boot_seconds=100)
    ba, bb = d.next_batch("a", 0), d.next_batch("b", 0)
    assert ba.deadline == TIMEOUT_FACTOR * 100 == 400
    assert d.overdue(399) == []
    d.batch_ended(ba, {"c0"}, set(), set())
    assert [b.number for b in d.overdue(401)] == [bb.number]
    assert d.hosts["b"].state == "lost" and "not back after 401 s" in d.hosts["b"].why_lost
    assert d.next_batch("a", 402).keys == ["c1"]
    # b was slow, not dead: its cell arrives while a is running it; kept once, nothing requeued
    assert d.batch_ended(bb, {"c1"}, set(), set()) == []
    assert d.late == ["c1"] and d.done == {"c0", "c1"}
    d.batch_ended(d.hosts["a"].batch, set(), set(), set())  # a's copy was "already here"
    assert d.finished() and d.hosts["a"].state == "lost"


def test_a_late_cell_still_queued_leaves_the_queue():
    d = Dealer(boots(4), {"a": 1, "b": 1, "c": 1}, boot_seconds=10)
    d.next_batch("a", 0)
    bb = d.next_batch("b", 0)
    d.next_batch("c", 100)
    d.overdue(MIN_TIMEOUT_S + 1)  # a and b lost: c0, c1 back at the front
    assert d.live_hosts() == ["c"] and d.undone() == ["c0", "c1", "c3"]
    d.batch_ended(bb, {"c1"}, set(), set())
    assert d.undone() == ["c0", "c3"]


def test_the_last_live_host_is_waited_for_however_late():
    d = Dealer(boots(2), {"a": 1}, boot_seconds=10)
    batch = d.next_batch("a", 0)
    assert d.overdue(10 * MIN_TIMEOUT_S) == [] and d.hosts["a"].state == "running"
    d.batch_ended(batch, {"c0"}, set(), set())
    assert d.next_batch("a", 1).keys == ["c1"]


def test_a_damaged_cell_is_run_again_elsewhere_and_a_failed_one_not_at_all():
    d = Dealer(boots(3), {"a": 1, "b": 1}, boot_seconds=10)
    ba, bb = d.next_batch("a", 0), d.next_batch("b", 0)
    assert d.batch_ended(ba, set(), set(), {"c0"}) == ["c0"]
    assert d.hosts["a"].state == "idle"  # damage in transit is not the host's loss
    # a is idle and b is busy: a gets c2, not the c0 it sent damaged... while b is running, a is
    # the only idle host, so c0 goes to a after all, marked to be redone there
    nxt = d.next_batch("a", 1)
    assert nxt.keys == ["c0"] and nxt.redo == ["c0"]
    d.batch_ended(bb, set(), {"c1"}, set())
    assert d.failed == {"c1"} and d.hosts["b"].state == "idle"
    # both idle now: the next c2 goes to b; c1 is never dealt again
    assert d.next_batch("b", 2).keys == ["c2"]
    d.batch_ended(d.hosts["b"].batch, {"c2"}, set(), set())
    d.batch_ended(nxt, {"c0"}, set(), set())
    assert d.finished() and d.failed == {"c1"} and d.done == {"c0", "c2"}


def test_damaged_cells_prefer_another_idle_host():
    d = Dealer(boots(2), {"a": 1, "b": 1}, boot_seconds=10)
    ba = d.next_batch("a", 0)
    d.batch_ended(ba, set(), set(), {"c0"})
    # both idle: a skips c0 (it came damaged from a) and takes c1; b gets c0
    assert d.next_batch("a", 1).keys == ["c1"]
    nb = d.next_batch("b", 1)
    assert nb.keys == ["c0"] and nb.redo == []


def test_a_host_whose_preparation_failed_is_lost_before_any_batch():
    d = Dealer(boots(1), {"a": 1}, boot_seconds=10)
    d.lose("a", "make deps image failed")
    assert d.stranded() and d.next_batch("a", 0) is None


def test_a_fixed_timeout_overrides_the_estimate():
    d = Dealer(boots(1), {"a": 1}, boot_seconds=1000, timeout_s=60)
    assert d.next_batch("a", 0).deadline == 60


def test_no_hosts_is_refused():
    with pytest.raises(ValueError):
        Dealer(boots(1), {}, boot_seconds=1)


def test_the_one_host_in_the_controllers_tree_takes_the_whole_queue_at_once():
    d = Dealer(boots(5, per=2), {"a": 2}, boot_seconds=100, whole_queue="a")
    b = d.next_batch("a", 0)
    # Every boot in one batch; its deadline counts the rounds its two slots take: 3 rounds of 100 s, x4.
    assert b.boots == boots(5, per=2) and b.deadline == TIMEOUT_FACTOR * 3 * 100 == 1200
    assert d.next_batch("a", 1) is None and not d.queue
    # Its runner killed part-way: what is not home goes back in order, and with no other host it waits.
    back = d.batch_ended(b, {"c0a", "c0b", "c1a"}, set(), set(), why="runner exit 143")
    assert back == ["c1b", "c2a", "c2b", "c3a", "c3b", "c4a", "c4b"]
    assert d.hosts["a"].state == "lost" and d.stranded() and d.undone() == back


def test_only_the_one_host_there_is_takes_the_whole_queue():
    with pytest.raises(ValueError, match="only as the one host"):
        Dealer(boots(2), {"a": 1, "b": 1}, boot_seconds=10, whole_queue="a")
    # Without it, a lone host takes its slots' worth at a time.
    d = Dealer(boots(3), {"a": 2}, boot_seconds=10)
    assert d.next_batch("a", 0).keys == ["c0", "c1"]
