"""UML processes a killed run left behind, found and stopped before the next boot.

A UML dies with the runner that started it (uml.py starts it under a parent-death signal), and its
guest's processes die with it; but a UML kernel's own helper processes (6.1's I/O helpers) are
clones that nothing signals: when the runner is killed outright (SIGKILL, the OOM killer) they stay,
asleep, re-parented to init, holding the dead run's files open.  Such a process may have processes
of its own below it (CI saw one on 7 Dec 2026, of a kind not known; a UML whose start the runner's
death overtook, between its fork and setpriv's prctl, would be one).

Before booting, a command stops the UML processes that are orphans in this sense: a UML's command
line, working in a directory under the results, and a parent that is init or is itself such an
orphan (the whole tree: stopping only its root would leave its children to init, alive until the
next command).  A UML of a command still running has that command (or its UML) as parent, and is
left alone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

#: A word of every UML command line the substrate writes (uml.kernel_cmdline).
UML_WORD = "time-travel=inf-cpu"


def orphaned_umls(under: Path) -> list[int]:
    """Pids of UML processes working under @under whose parent is init or another of them."""
    parents = {}  # pid -> parent pid, of every UML process working under @under
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if UML_WORD not in (proc / "cmdline").read_bytes().decode(errors="replace"):
                continue
            if not os.readlink(proc / "cwd").startswith(str(under)):
                continue
            parents[int(proc.name)] = next(int(ln.split()[1]) for ln in (proc / "status").read_text().splitlines()
                                           if ln.startswith("PPid:"))
        except (OSError, StopIteration, ValueError):
            continue  # gone meanwhile, or not ours to read
    return orphans(parents)


def orphans(parents: dict[int, int]) -> list[int]:
    """The pids of @parents (pid -> parent pid, of UML processes) whose line of parents reaches init
    through pids of @parents only."""
    def orphaned(pid: int) -> bool:
        seen = set()
        while pid in parents and pid not in seen:
            seen.add(pid)
            pid = parents[pid]
        return pid == 1
    return sorted(pid for pid in parents if orphaned(pid))


def stop_orphaned_umls(under: Path, log=print) -> list[int]:
    """SIGKILL every orphaned UML process under @under (orphaned_umls), saying which; returns them."""
    pids = orphaned_umls(under)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if pids:
        log(f"stopped {len(pids)} UML process(es) a killed run left behind under {under} "
            f"(pids {', '.join(map(str, pids))})", flush=True)
    return pids
