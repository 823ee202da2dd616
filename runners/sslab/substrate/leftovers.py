"""UML processes a killed run left behind, found and stopped before the next boot.

A UML dies with the runner that started it (uml.py starts it under a parent-death signal), and its
guest's processes die with it; but a UML kernel's own helper processes (6.1's I/O helpers) are
clones that nothing signals: when the runner is killed outright (SIGKILL, the OOM killer) they stay,
asleep, re-parented to init, holding the dead run's files open.  Before booting, a command stops the
UML processes that are orphans in this sense: a UML's command line, working in a directory under
the results, and a parent that is init.  A UML of a command still running has that command (or its
UML) as parent and is left alone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

#: A word of every UML command line the substrate writes (uml.kernel_cmdline).
UML_WORD = "time-travel=inf-cpu"


def orphaned_umls(under: Path) -> list[int]:
    """Pids of UML processes whose working directory is under @under and whose parent is init."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if UML_WORD not in (proc / "cmdline").read_bytes().decode(errors="replace"):
                continue
            if not os.readlink(proc / "cwd").startswith(str(under)):
                continue
            ppid = next(int(ln.split()[1]) for ln in (proc / "status").read_text().splitlines()
                        if ln.startswith("PPid:"))
        except (OSError, StopIteration, ValueError):
            continue  # gone meanwhile, or not ours to read
        if ppid == 1:
            found.append(int(proc.name))
    return sorted(found)


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
