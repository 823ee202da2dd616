"""Work on several substrates at once, stopped as a whole by Ctrl-C or SIGTERM."""

from __future__ import annotations

import threading
from typing import Callable


def run_on_each(workers: list, work: Callable[[object], None], stop: threading.Event) -> None:
    """work(w) for every one of @workers at once, each in a thread of its own; with one worker in
    this thread, so that a signal unwinds straight through the running job.  @work returns when
    @stop is set (or it has nothing left).  When Ctrl-C or SIGTERM reaches this thread: @stop is set
    so that nothing more starts, every worker's running testbeds are ended (its stop_all), the
    threads are given 30 s to end, and the signal's exception goes on up."""
    if len(workers) == 1:
        work(workers[0])
        return
    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.5)
    except BaseException:
        stop.set()
        for w in workers:
            getattr(w, "stop_all", lambda: None)()
        for t in threads:
            t.join(timeout=30)
        raise
