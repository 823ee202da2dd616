"""A run's kernel trace as ftrace's ring buffer held it: the pages the guest copied, read on the host.

Why pages and not text: the kernel formats its trace as text when `trace` is read, one line per
event, 20-37 MB for a Table 1 run, in the guest, where every second of CPU is a second of wall time;
the pages behind it (per_cpu/cpuN/trace_pipe_raw) hold the same events in about 40 % of the bytes,
and the guest hands them over by splice() without formatting anything (sslab.guest.ftrace).  Here
they are read back with the format files the guest saved beside them, and each event's line is the
one the kernel would have printed: the same timestamp, the same `key=value` text (each event's
`print fmt`, interpreted below for the conversions our four events use).

The file (`<tag>.trace.rb`, and `<tag>.trace.rb.gz` once the host has read the run):
  line 1   MAGIC
  line 2   a JSON object: page_size, byteorder, header_page and header_event (tracefs's texts),
           formats (each enabled event's format file), cpus (the CPUs' numbers, in file order) and,
           written by the host's read-out, event_names: the names `sslab_event` prints for its
           type numbers (the module's declarations, kernel/core/sscore.h: the kernel prints them by
           a function of the module's, which no format file shows)
  then, for each CPU in `cpus`: its page count (u64, little-endian) and its pages.

A page (header_page): a u64 timestamp, the commit word (its low bits the bytes of events, bit 31
"events were lost before this page", bit 30 "and their count is stored after the events"), then
the events.  An event (header_event) starts with a u32: type_len (5 bits) and time_delta (27 bits).
type_len 1-28 is a data event of type_len * 4 bytes after the u32; 0 a data event whose length
(with its own 4 bytes) is the next u32; 29 padding (time_delta 0: the rest of the page; else a
discarded event, its length as for 0); 30 a time extend (the next u32 holds the delta's bits
above 27); 31 an absolute timestamp, built the same way.  A page's clock starts at its timestamp
and each data event and time extend adds its delta (padding adds none: the kernel's own reader
skips it so, ring_buffer.c's rb_update_read_stamp).  The kernel prints a time in microseconds,
rounded (trace.c's ns2usecs), as seconds with six decimals.

The walk over the events is vectorised across pages: one step takes the next event of every page
at once, so a run's trace (about 3,000 pages of 30-70 events) takes as many numpy steps as the
fullest page has events, with no compiled code.
"""

from __future__ import annotations

import ipaddress
import json
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from isal import igzip

MAGIC = b"sslab-ringbuf 1\n"
#: A data event's longest type_len, and the three special ones (header_event names them).
DATA_MAX, PADDING, TIME_EXTEND, TIME_STAMP = 28, 29, 30, 31
TS_SHIFT = 27
#: The commit word's flags (ring_buffer.c's RB_MISSED_EVENTS, RB_MISSED_STORED) and the rest.
MISSED_EVENTS, MISSED_STORED = 1 << 31, 1 << 30
COMMIT_BYTES = (1 << 30) - 1

_FIELD = re.compile(r"field:(?P<decl>[^;]+);\s*offset:(?P<offset>\d+);\s*size:(?P<size>\d+);\s*signed:(?P<signed>\d);")


def is_ringbuf(path: Path) -> bool:
    """Whether @path names a trace of ring-buffer pages (this module's), not ftrace's text."""
    return Path(path).name.endswith((".trace.rb", ".trace.rb.gz"))


@dataclass(frozen=True)
class Field:
    name: str
    offset: int
    size: int
    signed: bool
    array: bool


@dataclass
class EventFormat:
    """One event's format file: its id, its fields where they lie in its record, its print fmt."""
    name: str
    ident: int
    fields: dict[str, Field]
    fmt: str
    args: list[str]

    @classmethod
    def parse(cls, text: str) -> EventFormat:
        name = re.search(r"^name: (\S+)", text, re.M)
        ident = re.search(r"^ID: (\d+)", text, re.M)
        pf = re.search(r"^print fmt: (.*)$", text, re.M)
        if not (name and ident and pf):
            raise ValueError(f"not an event's format file: {text[:120]!r}")
        fields = {}
        for m in _FIELD.finditer(text):
            decl = m["decl"].strip()
            array = decl.endswith("]")
            fname = re.sub(r"\[.*\]$", "", decl).split()[-1]
            fields[fname] = Field(fname, int(m["offset"]), int(m["size"]), m["signed"] == "1", array)
        fmt, args = _split_print_fmt(pf[1])
        return cls(name[1], int(ident[1]), fields, fmt, args)


def _split_print_fmt(text: str) -> tuple[str, list[str]]:
    """A print fmt's format string and its arguments (split at commas outside brackets and quotes)."""
    if not text.startswith('"'):
        raise ValueError(f"print fmt without a format string: {text[:80]!r}")
    end = 1
    while text[end] != '"':
        end += 2 if text[end] == "\\" else 1
    fmt, rest = text[1:end], text[end + 1:]
    args, depth, quoted, cur = [], 0, False, ""
    for ch in rest:
        if quoted:
            quoted = ch != '"'
        elif ch == '"':
            quoted = True
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    args.append(cur.strip())
    return fmt, [a for a in args if a]


@dataclass
class RingBuffer:
    """A trace file's header and its events in the order the kernel would print them."""
    header: dict
    formats: dict[int, EventFormat]
    data: np.ndarray              # uint8: every page of every CPU, end to end
    offset: np.ndarray            # int64: each event's record (its common_type) in data
    ts_ns: np.ndarray             # uint64: each event's time (the trace clock, ns)
    etype: np.ndarray             # uint16: each event's common_type
    missed: int = 0               # events the kernel said it lost (overwritten before they were read)
    _by_name: dict[str, EventFormat] = field(default_factory=dict)

    def format(self, name: str) -> EventFormat | None:
        if not self._by_name:
            self._by_name = {f.name: f for f in self.formats.values()}
        return self._by_name.get(name)

    def rows(self, name: str) -> np.ndarray:
        """The indices (into offset, ts_ns) of event @name's records, in order."""
        f = self.format(name)
        return np.flatnonzero(self.etype == f.ident) if f else np.empty(0, dtype=np.int64)

    def column(self, name: str, fname: str, rows: np.ndarray) -> np.ndarray:
        """Field @fname of event @name at @rows, as int64 (uint64 for an unsigned 8-byte field)."""
        f = self.format(name).fields[fname]
        if f.array:
            raise ValueError(f"{name}.{fname} is an array")
        kind = ("<i" if f.signed else "<u") + str(f.size)
        at = self.offset[rows][:, None] + f.offset + np.arange(f.size)
        values = self.data[at].copy().view(kind)[:, 0]
        return values if kind == "<u8" else values.astype(np.int64)

    def seconds(self, rows: np.ndarray) -> np.ndarray:
        """The times the kernel prints for @rows: microseconds, rounded, in seconds (float64)."""
        return ((self.ts_ns[rows] + 500) // 1000).astype(np.float64) / 1e6

    def texts(self, name: str, rows: np.ndarray) -> list[str]:
        """Event @name's `key=value ...` text at each of @rows, as the kernel prints it (its print
        fmt, argument by argument over the rows: a format string's conversions, not a record's)."""
        f = self.format(name)
        convs = list(_CONVERSION.finditer(f.fmt))
        if len(convs) != len(f.args):
            raise ValueError(f"{f.name}: {len(convs)} conversions for {len(f.args)} arguments")
        columns, last, template = [], 0, []
        for m, arg in zip(convs, f.args):
            template.append(f.fmt[last:m.start()].replace("{", "{{").replace("}", "}}") + "{}")
            columns.append(self._printed(f, m, arg, rows))
            last = m.end()
        template.append(f.fmt[last:].replace("{", "{{").replace("}", "}}"))
        line = "".join(template)
        return [line.format(*values) for values in zip(*columns)]

    def _printed(self, f: EventFormat, m: re.Match, arg: str, rows: np.ndarray) -> list[str]:
        """One argument of @f's print fmt, printed by conversion @m, at each of @rows."""
        names = self.header.get("event_names") or []
        if (a := _REC.match(arg)) and f.fields[a[1]].array:
            if m["conv"] != "pISpc":
                raise ValueError(f"{f.name}: {arg} printed as %{m['conv']}")
            x = f.fields[a[1]]
            raw = self.data[self.offset[rows][:, None] + x.offset + np.arange(x.size)]
            seen: dict[bytes, str] = {}
            return [seen[b] if b in seen else seen.setdefault(b, _sockaddr(b)) for b in map(bytes, raw)]
        if a := _REC.match(arg):
            return list(map(_integer_printer(m), self.column(f.name, a[1], rows).tolist()))
        if a := _SYMBOLIC.match(arg):
            table = {int(num, 0): text for num, text in re.findall(r'\{\s*(-?\w+)\s*,\s*"([^"]*)"\s*\}', a[2])}
            return [table.get(v, f"0x{v:x}") for v in self.column(f.name, a[1], rows).tolist()]
        if a := _EVENT_NAME.match(arg):
            return [names[v] if 0 <= v < len(names) else "?" for v in self.column(f.name, a[1], rows).tolist()]
        raise ValueError(f"{f.name}: an argument this reader cannot print: {arg!r}")


def read(path: Path) -> RingBuffer:
    """A trace file of ring-buffer pages, raw or compressed."""
    path = Path(path)
    raw = igzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return parse(raw)


def split_header(raw: bytes) -> tuple[dict, int]:
    """The file's header (its JSON line) and where its pages begin."""
    if not raw.startswith(MAGIC):
        raise ValueError(f"not a ring-buffer trace (its first line is not {MAGIC!r})")
    end = raw.index(b"\n", len(MAGIC))
    return json.loads(raw[len(MAGIC):end]), end + 1


def with_header(raw: bytes, **extra) -> bytes:
    """@raw with @extra added to its header (what the host's read-out writes in: event_names)."""
    header, at = split_header(raw)
    return MAGIC + json.dumps({**header, **extra}, sort_keys=True).encode() + b"\n" + raw[at:]


def parse(raw: bytes) -> RingBuffer:
    header, at = split_header(raw)
    if header.get("byteorder", "little") != "little":
        raise ValueError("a big-endian guest's trace: this reader reads little-endian pages")
    page_size = int(header["page_size"])
    page = _page_layout(header["header_page"])
    _check_event_header(header["header_event"])
    formats = {f.ident: f for f in (EventFormat.parse(t) for t in header["formats"].values())}
    chunks, cpu_of_page = [], []
    for cpu in header["cpus"]:
        (count,) = struct.unpack_from("<Q", raw, at)
        at += 8
        chunks.append(np.frombuffer(raw, dtype=np.uint8, count=count * page_size, offset=at))
        cpu_of_page += [cpu] * count
        at += count * page_size
    if at != len(raw):
        raise ValueError(f"{len(raw) - at} bytes after the last CPU's pages")
    data = np.concatenate(chunks) if chunks else np.empty(0, dtype=np.uint8)
    offset, ts, missed = _walk(data, page_size, page)
    # The kernel prints the CPUs' events merged by time, the lower CPU first on a tie: each CPU's are in
    # order already (_walk keeps the pages' order), so a stable sort by time is that merge.
    order = np.argsort(ts, kind="stable")
    offset, ts = offset[order], ts[order]
    etype = data[offset[:, None] + np.arange(2)].copy().view("<u2")[:, 0] if len(offset) else \
        np.empty(0, dtype=np.uint16)
    return RingBuffer(header, formats, data, offset, ts, etype, missed)


@dataclass(frozen=True)
class PageLayout:
    commit_at: int
    commit_size: int
    data_at: int


def _page_layout(text: str) -> PageLayout:
    """Where header_page puts the commit word and the events."""
    fields = {re.sub(r"\[.*\]$", "", m["decl"].split()[-1]): (int(m["offset"]), int(m["size"]))
              for m in _FIELD.finditer(text.replace("field: ", "field:"))}
    if "commit" not in fields or "data" not in fields or fields.get("timestamp") != (0, 8):
        raise ValueError(f"a header_page this reader does not know: {text[:200]!r}")
    return PageLayout(fields["commit"][0], fields["commit"][1], fields["data"][0])


def _check_event_header(text: str) -> None:
    """The event header this reader walks (5 bits of type_len, 27 of time_delta, the types' numbers)."""
    wanted = [r"type_len\s*:\s*5 bits", r"time_delta\s*:\s*27 bits", r"padding\s*:\s*type == 29",
              r"time_extend\s*:\s*type == 30", r"data max type_len\s*==\s*28"]
    missing = [w for w in wanted if not re.search(w, text)]
    if missing:
        raise ValueError(f"a header_event this reader does not know (no {missing}): {text[:300]!r}")


def _walk(data: np.ndarray, page_size: int, page: PageLayout) -> tuple[np.ndarray, np.ndarray, int]:
    """Every data event's record offset in @data and its time, in page order (a page's events in
    their order), and the events the pages say were lost; one step takes one event of every page."""
    n = len(data) // page_size
    if n == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint64), 0
    pages = data.reshape(n, page_size)
    clock = pages[:, 0:8].copy().view("<u8")[:, 0].copy()
    commit = pages[:, page.commit_at:page.commit_at + page.commit_size].copy() \
        .view("<u8" if page.commit_size == 8 else "<u4")[:, 0].astype(np.uint64)
    length = (commit & COMMIT_BYTES).astype(np.int64)
    stored = (commit & MISSED_STORED) != 0
    missed = 0
    for p in np.flatnonzero(stored):
        at = p * page_size + page.data_at + length[p] - 8
        missed += int(data[at:at + 8].view("<u8")[0])
    missed += int(np.count_nonzero(((commit & MISSED_EVENTS) != 0) & ~stored))
    length = length - 8 * stored
    words = data.view("<u4")
    room = page_size - page.data_at
    pos = np.zeros(n, dtype=np.int64)
    active = np.flatnonzero(length > 0)
    pages_of, steps_of, offsets, times = [], [], [], []
    step = 0
    while active.size:
        at = active * page_size + page.data_at + pos[active]
        head = words[at >> 2]
        nxt = words[np.minimum((at >> 2) + 1, len(words) - 1)].astype(np.int64)
        type_len = (head & 31).astype(np.int64)
        delta = (head >> 5).astype(np.uint64)
        size = np.where(type_len == 0, nxt + 4, type_len * 4 + 4)
        size = np.where(type_len == PADDING, np.where(delta == 0, room - pos[active], nxt + 4), size)
        size = np.where(type_len >= TIME_EXTEND, 8, size)
        is_data = type_len <= DATA_MAX
        extended = (nxt.astype(np.uint64) << np.uint64(TS_SHIFT)) + delta
        clock[active] += np.where(is_data, delta, np.where(type_len == TIME_EXTEND, extended, np.uint64(0)))
        absolute = type_len == TIME_STAMP
        clock[active[absolute]] = extended[absolute]
        if is_data.any():
            pages_of.append(active[is_data])
            steps_of.append(np.full(int(is_data.sum()), step))
            offsets.append(at[is_data] + np.where(type_len[is_data] == 0, 8, 4))
            times.append(clock[active[is_data]].copy())
        if (size <= 0).any():
            raise ValueError("an event of no length: not a ring-buffer page")
        pos[active] += size
        active = active[pos[active] < length[active]]
        step += 1
    if not offsets:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint64), missed
    pg, st = np.concatenate(pages_of), np.concatenate(steps_of)
    order = np.lexsort((st, pg))
    return np.concatenate(offsets)[order], np.concatenate(times)[order], missed


#: A print fmt's conversions (those our events use) and its arguments (a field; a field printed by
#: a table, the kernel's __print_symbolic, whose text for a value not in it is 0x<hex>; the module's
#: event name, ss_event_name, "?" past the names it has).  A plain %p (6.12's and 7.x's tcp_probe
#: end with skbaddr=%p skaddr=%p) is the only conversion whose text the pages cannot give: the kernel
#: prints an address hashed by a key its boot drew and kept to itself, as 16 hex digits; here the
#: address itself is printed so (what the kernel's %px prints).  No analysis reads them.
_CONVERSION = re.compile(r"%(?P<flags>[#0-]*)(?P<width>\d*)(?P<len>hh|h|ll|l|z)?(?P<conv>[udxXs]|pISpc|p(?![A-Za-z]))")
_REC = re.compile(r"^REC->(\w+)$")
_SYMBOLIC = re.compile(r"^__print_symbolic\(REC->(\w+),(.*)\)$", re.S)
_EVENT_NAME = re.compile(r"^ss_event_name\(REC->(\w+)\)$")


def _integer_printer(m: re.Match):
    """How conversion @m prints an integer (the kernel's %#x of 0 is 0x0, as Python's; an address,
    %p, zero-padded to 16 hex digits, as a 64-bit kernel pads one)."""
    if m["width"] or m["flags"] not in ("", "#"):
        raise ValueError(f"a conversion this reader does not print: {m[0]}")
    if m["conv"] == "p":
        return lambda v: format(v, "016x")
    if m["conv"] in "xX":
        spec = "#x" if m["flags"] == "#" else "x"
        return (lambda v: format(v, spec)) if m["conv"] == "x" else (lambda v: "0X" * (spec == "#x") + format(v, "X"))
    return str


def _sockaddr(raw: bytes) -> str:
    """%pISpc: an IPv4 sockaddr as a.b.c.d:port, an IPv6 one as [compressed]:port."""
    family = int.from_bytes(raw[0:2], "little")
    port = int.from_bytes(raw[2:4], "big")
    if family == 2:
        return f"{ipaddress.IPv4Address(raw[4:8])}:{port}"
    if family == 10:
        return f"[{ipaddress.IPv6Address(raw[8:24]).compressed}]:{port}"
    raise ValueError(f"a socket address of family {family}")
