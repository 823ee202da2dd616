"""Which boot goes to which host, decided while the matrix runs.

The controller holds a queue of boots (a boot: the cells that run in one boot of the testbed, see
plan.boot_groups) and a set of hosts.  A host is given a *batch* (up to its slots' worth of boots)
whenever it has none (a host given every boot at once takes the whole queue: see Dealer); when the
batch ends, what came home decides what happens next:

            +-----------+  next_batch   +---------+  batch_ended: every cell done or failed
  start --> |   idle    | ------------> | running | ---------------------------------+
            +-----------+               +---------+                                  |
                 ^                        |      |                                   |
                 +------------------------+------|-----------------------------------+
                                          |      |  overdue (past its deadline), or a batch that
                                          |      |  ended with cells unaccounted for (unreachable,
                                          v      v  runner killed, a host that broke)
                                        +---------+
                                        |  lost   |  no more batches; its unfinished boots go back
                                        +---------+  to the front of the queue for the others

A cell a lost host still brings home later (a slow host, not a dead one) counts once: the merge
never replaces a cell that is there (transfer.merge_cells), and a boot whose cells are all done
leaves the queue.  A damaged cell (its files do not match its manifest) is never merged: its boot
goes back to the queue, to be run again, preferably elsewhere.  A failed cell (the host's runner
tried it ATTEMPTS times) is not dealt again in this invocation: as on one host, a rerun tries it.

Pure bookkeeping: no processes, no clocks of its own (callers pass `now`), so the unit tests can
walk it through a fleet's life by hand.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

#: A batch is given up (its host counted lost) after this many times its expected seconds, and
#: never sooner than MIN_TIMEOUT_S: boots of one matrix vary in length by less than 2x on a host
#: (Table 1's longest setting against its shortest), and machines of this project's kind differ by
#: about 2x in speed, so 4x is late beyond doubt while not waiting out a dead host for long.
TIMEOUT_FACTOR = 4.0
MIN_TIMEOUT_S = 300.0


@dataclass
class Batch:
    """Boots running on one host: started at `started`, given up at `deadline`."""
    number: int
    host: str
    boots: list[list[str]]
    started: float
    deadline: float
    #: Cells the controller wants run again on the host (damaged on arrival before).
    redo: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        return [k for boot in self.boots for k in boot]


@dataclass
class HostRecord:
    """One host as the dealer sees it."""
    name: str
    slots: int
    state: str = "idle"  # idle | running | lost
    batch: Batch | None = None
    why_lost: str | None = None
    done: int = 0
    failed: int = 0
    batches: int = 0


class Dealer:
    """Deals boots to hosts as they free up; takes a lost host's boots back (see the module doc)."""

    def __init__(self, boots: list[list[str]], slots: dict[str, int], boot_seconds: float,
                 timeout_s: float | None = None, whole_queue: str | None = None):
        """@boots: the cells to run, a list per boot, in the order they should run.  @slots: per host,
        boots at a time (its JOBS).  @boot_seconds: expected seconds per boot, for deadlines;
        @timeout_s: a fixed batch timeout instead (HOST_TIMEOUT=).  @whole_queue: the one host there
        is, dealt every boot in one batch: its runner keeps its slots full as boots end
        (cells.run_cells), where batches of a slot's worth each wait for their slowest boot and start a
        runner again.  Only for a host whose cells land in place (the controller's own tree): one
        elsewhere would bring nothing home until the very end."""
        if not slots:
            raise ValueError("no hosts to deal to")
        if whole_queue is not None and set(slots) != {whole_queue}:
            raise ValueError(f"{whole_queue} takes the whole queue only as the one host there is")
        self.whole_queue = whole_queue
        self.queue: deque[list[str]] = deque(list(b) for b in boots if b)
        self.hosts = {h: HostRecord(h, max(1, n)) for h, n in slots.items()}
        self.boot_seconds = boot_seconds
        self.timeout_s = timeout_s
        self.done: set[str] = set()
        self.failed: set[str] = set()
        self.damaged_on: dict[str, set[str]] = {}  # cell -> hosts it came home damaged from
        self.late: list[str] = []  # cells a lost host brought home after all
        self.numbered = 0

    # -- questions ------------------------------------------------------

    def live_hosts(self) -> list[str]:
        return [h for h, r in self.hosts.items() if r.state != "lost"]

    def running(self) -> list[Batch]:
        return [r.batch for r in self.hosts.values() if r.batch is not None]

    def finished(self) -> bool:
        """Nothing left to deal and nothing out on a live host."""
        return not self.queue and not any(r.state == "running" for r in self.hosts.values())

    def stranded(self) -> bool:
        """Boots left, and no host left to run them."""
        return bool(self.queue) and not self.live_hosts()

    def undone(self) -> list[str]:
        return [k for boot in self.queue for k in boot]

    def deadline_for(self, n_boots: int, slots: int) -> float:
        if self.timeout_s is not None:
            return self.timeout_s
        rounds = -(-n_boots // slots)
        return max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * rounds * self.boot_seconds)

    # -- events ---------------------------------------------------------

    def next_batch(self, host: str, now: float) -> Batch | None:
        """The next boots for an idle @host (None: nothing left, or the host is not idle).  A boot
        that came home damaged from this host goes elsewhere while another live host is idle."""
        rec = self.hosts[host]
        if rec.state != "idle" or not self.queue:
            return None
        others_idle = any(r.state == "idle" and h != host for h, r in self.hosts.items())
        taken: list[list[str]] = []
        for boot in list(self.queue):
            if len(taken) == rec.slots and host != self.whole_queue:
                break
            if others_idle and any(host in self.damaged_on.get(k, ()) for k in boot):
                continue
            self.queue.remove(boot)
            taken.append(boot)
        if not taken:
            return None
        self.numbered += 1
        redo = [k for boot in taken for k in boot if host in self.damaged_on.get(k, ())]
        rec.batch = Batch(self.numbered, host, taken, now, now + self.deadline_for(len(taken), rec.slots), redo)
        rec.state, rec.batches = "running", rec.batches + 1
        return rec.batch

    def batch_ended(self, batch: Batch, done: set[str], failed: set[str], damaged: set[str],
                    why: str | None = None) -> list[str]:
        """@batch's host is back: @done cells merged, @failed ones recorded failed by the host, @damaged
        ones refused at the merge.  Cells of the batch in none of these (the host was cut off or its
        runner killed) make the host lost (@why says how) and go back to the queue, as do damaged
        ones.  Returns the cells that go back."""
        rec = self.hosts[batch.host]
        self.done |= done
        self.failed |= failed - done
        rec.done += len(done)
        rec.failed += len(failed - done)
        for k in damaged:
            self.damaged_on.setdefault(k, set()).add(batch.host)
        if rec.batch is not batch:
            # A batch given up earlier (overdue) came home after all: keep what it brought.
            self.late += sorted(done)
            self._drop_done()
            return []
        rec.batch = None
        unaccounted = [k for k in batch.keys if k not in done and k not in failed and k not in damaged]
        back = [k for k in batch.keys if k in unaccounted or k in damaged]
        if unaccounted and rec.state != "lost":
            rec.state, rec.why_lost = "lost", why or f"came back with {len(unaccounted)} cell(s) unaccounted for"
        elif rec.state == "running":
            rec.state = "idle"
        self._requeue(batch, set(back))
        self._drop_done()
        return back

    def overdue(self, now: float) -> list[Batch]:
        """Batches past their deadline: their hosts are lost, their boots go back to the front of
        the queue; never the last live host's (a slow host is better than none).  The batches are returned so the caller can leave them running (a late finish is
        still merged, once) or stop them."""
        late = []
        # Newest first, each to the queue's front: the oldest work ends up first.
        for rec in sorted(self.hosts.values(), key=lambda r: -(r.batch.number if r.batch else 0)):
            if len(self.live_hosts()) == 1:
                break  # the last host left: nobody else could take its boots, so it is waited for
            if rec.batch is not None and now > rec.batch.deadline:
                batch = rec.batch
                rec.state, rec.batch = "lost", None
                rec.why_lost = f"batch {batch.number} not back after {now - batch.started:.0f} s"
                self._requeue(batch, set(batch.keys))
                late.append(batch)
        return late[::-1]

    def lose(self, host: str, why: str) -> None:
        """@host is gone (its preparation failed, say): no batches for it."""
        rec = self.hosts[host]
        if rec.batch is not None:
            self._requeue(rec.batch, set(rec.batch.keys))
            rec.batch = None
        rec.state, rec.why_lost = "lost", why

    # -- inside ---------------------------------------------------------

    def _requeue(self, batch: Batch, keys: set[str]) -> None:
        """The boots of @batch holding any of @keys, minus what is done, back to the queue's front
        (in their order: they were the oldest work)."""
        back = [[k for k in boot if k not in self.done and k not in self.failed] for boot in batch.boots
                if any(k in keys for k in boot)]
        for boot in reversed([b for b in back if b]):
            self.queue.appendleft(boot)

    def _drop_done(self) -> None:
        kept = [[k for k in boot if k not in self.done] for boot in self.queue]
        self.queue = deque(b for b in kept if b)
