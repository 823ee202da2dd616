"""What a job's guest processes cost a ptrace-based UML: system calls, page faults, signals.

Under UML in ptrace mode each system call, page fault and signal of a guest
process is a round trip through the host's ptrace (two stops and the
tracer's calls between them), which is where most of a cell's wall time
goes during traffic (`make bench BENCH=umlperf`).  `sslab-syscount`
(images/tools/sslab-syscount.c) runs a job under ptrace inside the guest and
records, per program image (a process from its start or exec to its next
exec or exit), its system calls by number, the signals delivered to it, and
its page faults and context switches.  Here those images are grouped by
what they are (a program, and for ours and Python what they were started to
do) and totalled, so that a table says which process costs what.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

#: The x86-64 system call numbers (a UML guest's are the host architecture's): the host's header,
#: which the C compiler that builds sslab-syscount brings (Debian: linux-libc-dev).
UNISTD_64 = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
_NR = re.compile(r"^#define __NR_(\w+)\s+(\d+)\s*$")

#: What an `ip` or `tc` command acts on, which names it in a table.
_OBJECTS = frozenset({"link", "addr", "address", "route", "neigh", "netns", "rule", "qdisc", "class", "filter"})

#: Python programs of the harness, named by the module they run.
_PY_MODULE = re.compile(r"(?:^|\s)-m\s+(\S+)")


def syscall_names(header: Path = UNISTD_64) -> dict[int, str]:
    """Number -> name, from a unistd_64.h; empty if the header is not there."""
    try:
        text = header.read_text()
    except OSError:
        return {}
    return {int(m[2]): m[1] for line in text.splitlines() if (m := _NR.match(line))}


def role_of(comm: str, argv: str) -> str:
    """What a program image is, for a table: its program, and for the programs that do several
    things its part (`sslab-transfer serve`, `python3 sslab.guest.scenario_run`, `ip netns exec`)."""
    words = argv.split()
    prog = Path(words[0]).name if words else comm
    if prog == "sslab-transfer" and len(words) > 1:
        return f"sslab-transfer {words[1]}"
    if prog.startswith("python"):
        if m := _PY_MODULE.search(argv):
            return f"python3 {m[1]}"
        script = next((Path(w).name for w in words[1:] if w.endswith(".py")), None)
        return f"python3 {script}" if script else "python3"
    if prog == "ip" and len(words) > 2 and words[1] == "netns" and words[2] == "exec":
        return "ip netns exec"   # the namespace switch before the program it runs (the next image)
    if prog in ("tc", "ip"):
        obj = "-batch" if "-batch" in words else next((w for w in words[1:] if w in _OBJECTS), None)
        return f"{prog} {obj}" if obj else prog
    return prog or comm


@dataclass
class RoleCost:
    """The totals of the program images of one role."""

    role: str
    images: int = 0
    syscalls: dict[str, int] = field(default_factory=dict)
    signals: dict[int, int] = field(default_factory=dict)
    minflt: int = 0
    majflt: int = 0
    switches: int = 0

    @property
    def total_syscalls(self) -> int:
        return sum(self.syscalls.values())

    @property
    def total_signals(self) -> int:
        return sum(self.signals.values())

    @property
    def ptrace_stops(self) -> int:
        """The round trips through the host's ptrace this role caused, at most: one per system
        call, signal and page fault.  An upper bound: the guest kernel counts as the process's
        faults also those it takes itself on the process's memory (copying a send's data in), which
        cost the host nothing."""
        return self.total_syscalls + self.minflt + self.majflt + self.total_signals

    def top(self, n: int = 4) -> list[tuple[str, int]]:
        return sorted(self.syscalls.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def read_counts(path: Path) -> list[dict]:
    data = json.loads(Path(path).read_text())
    if data.get("format") != "sslab.syscount/1":
        raise ValueError(f"{path}: not an sslab-syscount record (format {data.get('format')!r})")
    return data["images"]


def by_role(images: list[dict], names: dict[int, str] | None = None) -> list[RoleCost]:
    """@images (read_counts) totalled per role_of, the costliest (ptrace stops) first."""
    names = syscall_names() if names is None else names
    roles: dict[str, RoleCost] = {}
    for img in images:
        role = role_of(img["comm"], img["argv"])
        cost = roles.setdefault(role, RoleCost(role))
        cost.images += 1
        for nr, count in img["syscalls"].items():
            name = names.get(int(nr), f"nr{nr}")
            cost.syscalls[name] = cost.syscalls.get(name, 0) + count
        for sig, count in img["signals"].items():
            cost.signals[int(sig)] = cost.signals.get(int(sig), 0) + count
        cost.minflt += img["minflt"]
        cost.majflt += img["majflt"]
        cost.switches += img["nvcsw"] + img["nivcsw"]
    return sorted(roles.values(), key=lambda c: (-c.ptrace_stops, c.role))


def cost_table(costs: list[RoleCost], runs: int = 1) -> str:
    """A Markdown table of @costs, per run of the job when @runs is given (a job's fixed part, its
    boot and topology, is spread over its runs then)."""
    per = f" / run (of {runs})" if runs > 1 else ""
    lines = [f"| process | starts{per} | system calls{per} | most called | page faults{per} | signals{per} "
             f"| ptrace stops, at most{per} | share |",
             "|---|---|---|---|---|---|---|---|"]
    total = sum(c.ptrace_stops for c in costs) or 1
    for c in costs:
        top = ", ".join(f"{name} {n / runs:.0f}" for name, n in c.top())
        lines.append(f"| {c.role} | {c.images / runs:.1f} | {c.total_syscalls / runs:.0f} | {top} | "
                     f"{(c.minflt + c.majflt) / runs:.0f} | {c.total_signals / runs:.0f} | "
                     f"{c.ptrace_stops / runs:.0f} | {100 * c.ptrace_stops / total:.1f}% |")
    lines.append(f"| all | {sum(c.images for c in costs) / runs:.1f} | "
                 f"{sum(c.total_syscalls for c in costs) / runs:.0f} | | "
                 f"{sum(c.minflt + c.majflt for c in costs) / runs:.0f} | {sum(c.total_signals for c in costs) / runs:.0f} "
                 f"| {total / runs:.0f} | 100% |")
    return "\n".join(lines)
