"""Where a UML testbed's host CPU goes during traffic, from a host `perf` profile.

Under UML the guest kernel is one host process and every guest process is
another host process that the guest kernel drives through ptrace: a guest
system call, page fault or timer signal stops the guest process in the host
kernel, wakes the UML kernel process, which reads the registers, does the
work and resumes it.  So the host CPU of a UML run splits into:

    UML kernel process, in the UML binary ──> guest kernel work, by symbol
    │   (networking and qdiscs; time and timers; memory and copies;
    │    scheduling, system calls and signals; other)
    host kernel, in a UML process ─────────> what the host does for UML, by
    │   its entry (the ptrace calls; stopping and resuming traced processes;
    │    file writes; other system calls, faults, interrupts)
    └── UML processes' own user code ───────> libc and stubs, guest programs

and any other process on the machine.  The input is `perf script -F
comm,pid,tid,ip,sym,dso` of `perf record -a -g`: one block per sample, its
call chain leaf first.  The UML binary is stripped, so its addresses are
named from the kernel build's System.map: perf prints an address in a
non-PIE executable as its file offset, which the binary's program headers
map to the link address (UML links at 0x60000000).
"""

from __future__ import annotations

import bisect
import re
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: The table's rows, in the order it lists them.
GUEST_NET = "guest kernel: networking, qdiscs"
GUEST_TIME = "guest kernel: time, timers"
GUEST_MEM = "guest kernel: memory, copies"
GUEST_SCHED = "guest kernel: scheduling, system calls, signals, host interface"
GUEST_OTHER = "guest kernel: other"
HOST_PTRACE = "host kernel: ptrace calls (UML driving its processes)"
HOST_STOP = "host kernel: stopping traced processes, waking their tracer"
HOST_WRITE = "host kernel: file writes and reads (disk, capture, trace)"
HOST_OTHER = "host kernel: other (faults, other calls, interrupts)"
UML_USER = "UML processes: libc, stubs, guest programs"
NOT_UML = "other processes"
CATEGORIES = (GUEST_NET, GUEST_TIME, GUEST_MEM, GUEST_SCHED, GUEST_OTHER,
              HOST_PTRACE, HOST_STOP, HOST_WRITE, HOST_OTHER, UML_USER, NOT_UML)

# Guest kernel symbols, by their names' prefixes and words (the Linux source's own naming).
_NET = re.compile(r"^_*(tcp|ip|inet|netem|qdisc|sch_|htb|tbf|fq_|skb|dev_|neigh|veth|napi|net_|netif|sk_|sock|"
                  r"raw_|udp|icmp|nf_|eth_|packet_|tpacket|dst_|fib|rt_|bpf|kfree_skb|consume_skb|alloc_skb|"
                  r"pfifo|csum|validate_xmit|process_backlog|gro|tcf|flow|red_|codel)")
_TIME = re.compile(r"(hrtimer|timer|time_travel|timekeeping|ktime|clock|tick)")
_MEM = re.compile(r"(page|folio|kmem|kmalloc|kfree|slab|slub|mm_|memcpy|memset|copy_|alloc_|free_|vma|pte|pmd|"
                  r"flush_tlb|fix_range|tlb)")
_SCHED = re.compile(r"(schedule|sched|switch_to|context|wake|__switch|finish_task|pick_next|enqueue_task|"
                    r"dequeue_task|userspace|signals|sig_handler|syscall|interrupt_end|handle_signal|um_|os_|"
                    r"segv|ptrace|wait_stub|registers)")
# Host kernel work, by the first frame (from the leaf) that says why it runs.
_PTRACE_CALL = re.compile(r"^(__(x64|ia32)_sys_(ptrace|wait4|waitid|kill|tgkill|tkill)|kernel_wait4|do_wait)$")
# ... or, where the chain has no such frame, the C library's call it came from.
_PTRACE_LIBC = re.compile(r"^(ptrace|__GI___wait4|__wait4|wait4|waitpid|__waitpid|kill)$")
_WRITE_LIBC = re.compile(r"^(__libc_)?(p?write|p?read)(64)?(v)?$")
_STOP = re.compile(r"^(ptrace_stop|do_notify_parent_cldstop|ptrace_notify|ptrace_do_notify)$")
_WRITE = re.compile(r"^__(x64|ia32)_sys_(p?write|p?read|writev|readv|pwritev|preadv|fsync|fdatasync)\w*$")


@dataclass
class Frame:
    ip: int
    sym: str
    dso: str


@dataclass
class Sample:
    comm: str
    pid: int
    frames: list[Frame] = field(default_factory=list)  # leaf first


_HEAD = re.compile(r"^(?P<comm>.*?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s*$")
_FRAME = re.compile(r"^\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s+\((?P<dso>.*)\)\s*$")


def parse_perf_script(text: str) -> list[Sample]:
    """Samples of `perf script -F comm,pid,tid,ip,sym,dso` with call chains: a header line
    (`<comm> <pid>/<tid>`), then one frame per line (`<ip> <sym> (<dso>)`), then a blank line."""
    samples: list[Sample] = []
    current: Sample | None = None
    for line in text.splitlines():
        if not line.strip():
            current = None
            continue
        if not line[0].isspace():
            m = _HEAD.match(line)
            if m:
                current = Sample(m["comm"], int(m["pid"]))
                samples.append(current)
            continue
        m = _FRAME.match(line)
        if m and current is not None:
            sym = m["sym"]
            current.frames.append(Frame(int(m["ip"], 16), "" if sym == "[unknown]" else sym.split("+")[0], m["dso"]))
    return samples


class SymbolTable:
    """Text symbols of a System.map, looked up by address (the symbol at or below it)."""

    def __init__(self, entries: list[tuple[int, str]]):
        entries = sorted(entries)
        self.addrs = [a for a, _ in entries]
        self.names = [n for _, n in entries]

    @classmethod
    def from_system_map(cls, text: str) -> "SymbolTable":
        out = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] in ("t", "T", "w", "W"):
                out.append((int(parts[0], 16), parts[2]))
        return cls(out)

    def name(self, addr: int) -> str:
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else ""


def load_segments(elf: bytes) -> list[tuple[int, int, int]]:
    """(file offset, size, link address) of each PT_LOAD segment of a 64-bit little-endian ELF."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    out = []
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + i * phentsize)
        if p_type == 1:  # PT_LOAD
            out.append((p_offset, p_filesz, p_vaddr))
    return out


def link_address(segments: list[tuple[int, int, int]], offset: int) -> int | None:
    """The link address of file offset @offset, or None outside every loaded segment."""
    for off, size, vaddr in segments:
        if off <= offset < off + size:
            return vaddr + offset - off
    return None


@dataclass
class UmlBinary:
    """The UML binary as perf names it (its path, perf's dso), its segments and its symbols."""
    path: str
    segments: list[tuple[int, int, int]]
    symbols: SymbolTable

    @classmethod
    def load(cls, binary: Path, system_map: Path) -> "UmlBinary":
        return cls(str(binary), load_segments(Path(binary).read_bytes()),
                   SymbolTable.from_system_map(Path(system_map).read_text()))

    def symbol(self, frame: Frame) -> str:
        addr = link_address(self.segments, frame.ip)
        return self.symbols.name(addr) if addr is not None else ""


def guest_category(sym: str) -> str:
    if _NET.match(sym):
        return GUEST_NET
    if _TIME.search(sym):
        return GUEST_TIME
    if _MEM.search(sym):
        return GUEST_MEM
    if _SCHED.search(sym):
        return GUEST_SCHED
    return GUEST_OTHER


def host_category(frames: list[Frame]) -> str:
    """A host-kernel sample by the first frame, from the leaf, that names its cause."""
    for f in frames:
        if f.dso != "[kernel.kallsyms]":
            if _PTRACE_LIBC.match(f.sym):
                return HOST_PTRACE
            if _WRITE_LIBC.match(f.sym):
                return HOST_WRITE
            break
        if _STOP.match(f.sym):
            return HOST_STOP
        if _PTRACE_CALL.match(f.sym):
            return HOST_PTRACE
        if _WRITE.match(f.sym):
            return HOST_WRITE
    return HOST_OTHER


def categorise(sample: Sample, uml: UmlBinary) -> tuple[str, str]:
    """(category, guest symbol or '') of one sample.  UML's processes are those whose samples
    run in the UML binary or whose command is the binary's name (guest processes run stubs and
    their own code, mapped from guest memory)."""
    if not sample.frames:
        return NOT_UML, ""
    leaf = sample.frames[0]
    if leaf.dso == uml.path:
        sym = uml.symbol(leaf)
        return guest_category(sym), sym
    if sample.comm != Path(uml.path).name:
        return NOT_UML, ""
    if leaf.dso == "[kernel.kallsyms]":
        return host_category(sample.frames), ""
    return UML_USER, ""


def split(samples: list[Sample], uml: UmlBinary) -> tuple[Counter, Counter]:
    """Samples per category, and per guest kernel symbol."""
    cats: Counter = Counter()
    syms: Counter = Counter()
    for s in samples:
        cat, sym = categorise(s, uml)
        cats[cat] += 1
        if sym:
            syms[sym] += 1
    return cats, syms


def split_table(cats: Counter, syms: Counter, top: int = 8) -> str:
    """The categories' shares (of every sample on the machine), then the busiest guest symbols."""
    total = sum(cats.values()) or 1
    lines = ["| where the host's CPU went | share of samples |", "|---|---|"]
    lines += [f"| {c} | {100 * cats[c] / total:.1f} % |" for c in CATEGORIES if cats[c]]
    lines += ["", f"Busiest guest kernel functions ({total} samples):", "",
              "| function | share |", "|---|---|"]
    lines += [f"| {s} | {100 * n / total:.1f} % |" for s, n in syms.most_common(top)]
    return "\n".join(lines)
