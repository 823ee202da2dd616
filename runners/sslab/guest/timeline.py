"""A job's and each run's place in the guest's time, and their random numbers, apart from the
guest's own work before them.

Under virtual time the job's work (after its imports) and every run start
on a whole second of the guest's clock (sleep_until_the_next_second), so
how long the guest's own work before them took does not move them; and
where the kernel can (our UML kernel, patch 0009), the guest's random
numbers are keyed afresh from the boot's seed when the job starts and
before each run (rekey_random), so how many the guest's own work drew does
not move them either.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import time
from pathlib import Path

#: Where our UML kernel takes a number to key its random numbers from (images/uml/patches/0009-*).
REKEY_SYSCTL = Path("/proc/sys/kernel/random/sslab_rekey")


def random_seed(plan, what: str | int) -> int:
    """The number the guest's random numbers are keyed from for @what (the job, or a run's index): the
    boot's entropy seed (the scenario's, or 0 where its entropy does not vary) and @what, hashed."""
    seed = plan.entropy_seed if plan.entropy_seed is not None else plan.seed
    return int.from_bytes(hashlib.sha256(f"sslab-rekey/{seed}/{what}".encode()).digest()[:8], "big")


def rekey_random(seed: int) -> int | None:
    """Key the guest kernel's random numbers from @seed alone, where the kernel can (REKEY_SYSCTL):
    every draw after it depends on @seed and on the draws since, not on how many the guest drew
    before (measured on 4 Dec 2026: without it BBR's runs in a boot moved with the guest's own work
    between them, BBR drawing its ProbeBW phase).  The number written, or None where the kernel
    has no such setting (Debian's own kernel, a researcher's)."""
    try:
        REKEY_SYSCTL.write_text(f"{seed}\n")
    except FileNotFoundError:
        return None
    return seed


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


#: clock_nanosleep's flag for a wake-up time rather than a span (<time.h>; Python has no name for it).
TIMER_ABSTIME = 1


def sleep_until_the_next_second() -> None:
    """Sleep until the guest's monotonic clock reaches its next whole second.

    Under virtual time a sleep costs no wall time, and it starts the job's work and each run at a time
    that does not depend on how long the guest's own work before it took (the job's imports, the last
    run's read-out, the job's housekeeping).  Measured on 4-5 Dec 2026: a change to how the trace is
    copied out moved every later run of a boot, and a guest module moved to another file moved
    every run of E2 and E4 (their link's replay thread woke 1 us apart); with the job and each run
    starting on the second, and the random numbers keyed afresh with it (rekey_random), neither
    moved a byte.  The wake-up is absolute (clock_nanosleep, TIMER_ABSTIME), so the time between
    reading the clock and sleeping cannot move it either."""
    libc = ctypes.CDLL(None)
    target = (time.monotonic_ns() // 1_000_000_000 + 1) * 1_000_000_000
    when = _Timespec(target // 1_000_000_000, target % 1_000_000_000)
    while libc.clock_nanosleep(time.CLOCK_MONOTONIC, TIMER_ABSTIME, ctypes.byref(when), None) == errno.EINTR:
        pass
