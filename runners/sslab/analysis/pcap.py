"""A flow's view at the bottleneck, from a packet capture (pcap or its .gz archive copy)."""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from pathlib import Path

import dpkt
from isal import igzip
import numpy as np

GOODPUT_BIN_S = 0.1
_TCP_HEAD = struct.Struct("!HHI")


@dataclass
class PcapFlow:
    syn_ts: float | None = None
    first_data_ts: float | None = None
    last_new_data_ts: float | None = None
    data_segments: int = 0
    retransmitted_segments: int = 0
    new_bytes_by_bin: dict | None = None
    #: Segments that start beyond every byte seen before them (what was missed: the bottleneck's
    #: drops, seen after its queue), one per hole however many packets it spans.
    holes: int = 0
    #: The highest data byte reached, from the SYN-ACK's sequence number (or the first segment's,
    #: without one): what the flow delivered past the capture point, first copies or not.
    seq_span: int = 0

    @property
    def new_bytes(self) -> int:
        return sum((self.new_bytes_by_bin or {}).values())


def _u32_ahead(a: int, b: int) -> bool:
    return ((a - b) & 0xFFFFFFFF) < 0x80000000 and a != b


def stored_capture(path: Path) -> Path:
    """@path, or its gzip-compressed archive copy (path + '.gz') when only that is there."""
    path = Path(path)
    if not path.exists() and path.with_name(path.name + ".gz").exists():
        return path.with_name(path.name + ".gz")
    return path


def open_pcap(path: Path):
    """A pcap file, or its gzip-compressed archive copy (path + '.gz')."""
    path = stored_capture(path)
    return igzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def _flow_events(segments, server_ports: list[int]):
    """(timestamp, port, what, ahead) for the listed flows, from @segments (tcp_segments' tuples, in
    capture order), in that order: what is "syn" for a SYN
    towards a port, "hole" for a segment from a port that starts beyond every byte seen so far
    (some before it never passed the capture point), else the data segment's new bytes (0: a
    retransmission, all of it seen before).  A segment with a hole gives "hole", then its bytes.
    ahead: how far a data segment moved the highest data byte seen (a hole's span included; 0
    for the rest).

    The sender's SYN-ACK starts its sequence space (a first data segment lost before the capture
    point is a hole); zero-length segments (a FIN) can show a hole too; RSTs never do."""
    ports = set(server_ports)
    highest: dict[int, int] = {}
    for ts, (sport, dport, seq, flags), payload in segments:
        if flags & SYN:
            if not flags & ACK and dport in ports:
                yield ts, dport, "syn", 0
            elif flags & ACK and sport in ports and sport not in highest:
                highest[sport] = (seq + 1) & 0xFFFFFFFF
            continue
        if sport not in ports:
            continue
        top = highest.get(sport)
        if top is not None and not flags & RST and _u32_ahead(seq, top):
            yield ts, sport, "hole", 0
        end = (seq + payload) & 0xFFFFFFFF
        # What the sender has sent up to, as the receiver's next sequence number: a FIN takes one.
        following = (end + 1) & 0xFFFFFFFF if flags & FIN else end
        if payload > 0:
            if top is None or _u32_ahead(end, top):
                ahead = payload if top is None else (end - top) & 0xFFFFFFFF
                yield ts, sport, min(payload, ahead), ahead
            else:
                yield ts, sport, 0, 0
        if top is None or _u32_ahead(following, top):
            highest[sport] = following


def analyse_pcap_ports(path: Path, server_ports: list[int], bin_s: float = GOODPUT_BIN_S,
                       absolute_t0: float | None = None) -> dict[int, PcapFlow]:
    """Every listed flow's view at the bottleneck, in one pass over the capture.

    A flow is the data from a server port and the SYN towards it.  New bytes
    are binned by @bin_s seconds from the flow's own SYN, or from
    @absolute_t0 (one clock for all flows, for fairness over time).
    """
    return analyse_segments(tcp_segments(path), server_ports, bin_s, absolute_t0)


def analyse_segments(segments, server_ports: list[int], bin_s: float = GOODPUT_BIN_S,
                     absolute_t0: float | None = None) -> dict[int, PcapFlow]:
    """analyse_pcap_ports over @segments (tcp_segments' tuples, in capture order) from any source."""
    flows = {p: PcapFlow(new_bytes_by_bin={}) for p in server_ports}
    for ts, port, what, ahead in _flow_events(segments, server_ports):
        flow = flows[port]
        if what == "syn":
            if flow.syn_ts is None:
                flow.syn_ts = ts
            continue
        if what == "hole":
            flow.holes += 1
            continue
        flow.data_segments += 1
        flow.seq_span += ahead
        if flow.first_data_ts is None:
            flow.first_data_ts = ts
        if what:
            flow.last_new_data_ts = ts
            origin = absolute_t0 if absolute_t0 is not None else (flow.syn_ts or ts)
            b = int((ts - origin) / bin_s)
            flow.new_bytes_by_bin[b] = flow.new_bytes_by_bin.get(b, 0) + what
        else:
            flow.retransmitted_segments += 1
    return flows


class SeenRanges:
    """The byte ranges [start, end) seen so far, disjoint and sorted: add() answers how many bytes
    of a range are new, and remembers them."""

    def __init__(self):
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, start: int, end: int) -> int:
        if end <= start:
            return 0
        i = bisect.bisect_left(self.ends, start)   # the first range ending at or after start
        j = bisect.bisect_right(self.starts, end)  # past the last range starting at or before end
        covered = sum(max(0, min(e, end) - max(b, start)) for b, e in zip(self.starts[i:j], self.ends[i:j]))
        merged_start = min(start, self.starts[i]) if i < j else start
        merged_end = max(end, self.ends[j - 1]) if i < j else end
        self.starts[i:j] = [merged_start]
        self.ends[i:j] = [merged_end]
        return (end - start) - covered


def delivered_by_flow(path: Path, server_ports: list[int]) -> dict[int, tuple[float | None, list[float], list[int]]]:
    """Data delivered past the bottleneck over time, for each listed flow, in one pass over the
    capture: (its SYN's capture time, or None; the capture time of each segment that brought bytes
    not seen before; the bytes passed so far then).  A byte counts once, when it first passes: the
    retransmission that fills a hole counts as it passes, a duplicate does not.  The same measure
    for every congestion control (the capture's, not a trace's); it does not stall in recovery, and
    since the capture point is past the bottleneck's queue, no stretch of it runs faster than the
    link."""
    return _delivered(segment_columns(path), server_ports)


def _delivered(c: SegmentColumns, server_ports: list[int]) -> dict[int, tuple[float | None, list[float], list[int]]]:
    """delivered_by_flow's answer over the capture's segments as columns."""
    syn, ack = (c.flags & SYN) != 0, (c.flags & ACK) != 0
    out: dict[int, tuple[float | None, list[float], list[int]]] = {}
    for port in server_ports:
        # Its SYN: the first towards it without ACK.  Its ISN: the first SYN-ACK from it; a data
        # segment before that (none in a capture that saw the handshake) counts by its raw number.
        syns = np.flatnonzero(syn & ~ack & (c.dport == port))
        syn_acks = np.flatnonzero(syn & ack & (c.sport == port))
        data = np.flatnonzero(~syn & (c.sport == port) & (c.payload > 0))
        seq = c.seq[data]
        if len(syn_acks):
            after = data > syn_acks[0]
            seq = np.where(after, (seq - ((c.seq[syn_acks[0]] + 1) & 0xFFFFFFFF)) & 0xFFFFFFFF, seq)
        new = _new_bytes(seq, seq + c.payload[data])
        brought = new > 0
        out[port] = (c.ts[syns[0]].item() if len(syns) else None, c.ts[data[brought]].tolist(),
                     np.cumsum(new)[brought].tolist())
    return out


def _new_bytes(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """SeenRanges.add's answer for each range [starts[i], ends[i]) added in order.  A range that starts
    at or past the end of every range before it (most segments: in order, or past a hole) is new
    whole; only the others (retransmissions, a hole's filling) are put to a SeenRanges, which is
    told of the ranges before them by their running highest end."""
    new = ends - starts
    if not len(new):
        return new
    highest_before = np.concatenate(([-1], np.maximum.accumulate(ends)[:-1]))
    seen = SeenRanges()
    for i in np.flatnonzero(starts != highest_before).tolist():
        if seen.ends:
            seen.ends[-1] = max(seen.ends[-1], int(highest_before[i]))
        if starts[i] > highest_before[i]:
            seen.starts.append(int(starts[i]))
            seen.ends.append(int(ends[i]))
        else:
            new[i] = seen.add(int(starts[i]), int(ends[i]))
    return new


def delivered_by_segments(segments, server_ports: list[int]) -> dict[int, tuple[float | None, list[float], list[int]]]:
    """delivered_by_flow over @segments (tcp_segments' tuples, in capture order) from any source."""
    return _delivered(_columns_of_tuples(list(segments)), server_ports)


def delivered_series(path: Path, server_port: int) -> tuple[list[float], list[int]]:
    """delivered_by_flow's one flow, against the seconds since its SYN at the capture point."""
    syn, times, delivered = delivered_by_flow(path, [server_port])[server_port]
    return [ts - (syn if syn is not None else ts) for ts in times], delivered


def rate_bins(times: list[float], delivered: list[int], origin: float, bin_s: float) -> tuple[list[float], list[float]]:
    """Mbit/s per @bin_s bin (each bin's start, seconds after @origin) of a cumulative byte count
    (@delivered at @times, as delivered_by_flow gives it); bins from the first byte's to the last's."""
    if not times:
        return [], []
    first = int((times[0] - origin) // bin_s)
    got = [0] * (int((times[-1] - origin) // bin_s) - first + 1)
    before = 0
    for ts, total in zip(times, delivered):
        got[int((ts - origin) // bin_s) - first] += total - before
        before = total
    return [(first + i) * bin_s for i in range(len(got))], [b * 8 / bin_s / 1e6 for b in got]


def new_bytes_between(path: Path, server_ports: list[int], t0: float, t1: float) -> dict[int, int]:
    """New data bytes each flow put through the bottleneck between capture times @t0 and @t1."""
    out = {p: 0 for p in server_ports}
    for ts, port, what, _ahead in _flow_events(tcp_segments(path), server_ports):
        if ts > t1:
            break
        if isinstance(what, int) and ts >= t0:
            out[port] += what
    return out


FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10
_ETH_IP = b"\x08\x00"


#: pcap's file header: magic, version, thiszone, sigfigs, snaplen, linktype.
_FILE_HEADER_BYTES = 24
#: Each record's header: seconds, microseconds, bytes captured, bytes on the wire.
_RECORD = {b"\xd4\xc3\xb2\xa1": struct.Struct("<IIII"), b"\xa1\xb2\xc3\xd4": struct.Struct(">IIII")}
_RECORD_BYTES = 16  # either's size
#: Records are read this many bytes of file at a time.
_CHUNK_BYTES = 1 << 22


def pcap_records(f):
    """(timestamp, frame bytes) of every record of an open pcap file, in file order.

    Our captures are tcpdump's microsecond pcap; those records are read here
    by offset, a chunk of the file at a time (dpkt's reader, one object per
    record, was two thirds of a Table 1 cell's report time: 3.7 of 5.8 s for
    383k records).  The timestamp is sec + usec / 1e6, the float dpkt gives.
    Any other file (nanosecond pcap, pcapng) is dpkt's to read.  As with
    dpkt, a last record cut short by the file's end (a capture stopped while
    writing) is returned with the bytes there are."""
    head = f.read(_FILE_HEADER_BYTES)
    record = _RECORD.get(head[:4])
    if record is None or len(head) < _FILE_HEADER_BYTES:
        f.seek(0)
        yield from dpkt.pcap.Reader(f)
        return
    rec_len = record.size
    data = b""
    off = 0
    while True:
        more = f.read(_CHUNK_BYTES)
        data = data[off:] + more
        off = 0
        end = len(data)
        while off + rec_len <= end:
            sec, usec, caplen, _wire = record.unpack_from(data, off)
            if off + rec_len + caplen > end and more:
                break  # the rest of it is in the next chunk
            start = off + rec_len
            off = start + caplen
            yield sec + usec / 1e6, data[start:off]
        if not more:
            return


@dataclass(frozen=True)
class SegmentColumns:
    """Every IPv4 TCP segment of a capture, in capture order, a column a header field: what
    tcp_segments gives as tuples, as numpy arrays (int64 but @ts, seconds as float64)."""
    ts: np.ndarray
    sport: np.ndarray
    dport: np.ndarray
    seq: np.ndarray
    flags: np.ndarray
    payload: np.ndarray


def segment_columns(path: Path) -> SegmentColumns:
    """The capture's TCP segments as columns.  A microsecond pcap (ours: tcpdump's) is read whole and
    its records found by one walk over their headers; every field is then cut out of all records at
    once (numpy), in under half the time of a record at a time (0.1 against 0.25 s for a Table 1
    capture of 165k frames).  Any other file is read record by record (pcap_records).  The timestamp
    is sec + usec / 1e6, the float pcap_records gives."""
    with open_pcap(path) as f:
        data = f.read()
    record = _RECORD.get(data[:4])
    if record is None or len(data) < _FILE_HEADER_BYTES:
        return _columns_of_records(path)
    starts, lengths = _record_places(data, record)
    return _columns(np.frombuffer(data, dtype=np.uint8), starts, lengths, record.format[0] == "<")


def _record_places(data: bytes, record: struct.Struct) -> tuple[np.ndarray, np.ndarray]:
    """Where each record's frame starts in @data and how many of its bytes are there (a last record cut
    short by the file's end, a capture stopped while writing, has what there is): one walk, since
    each record's place follows from the length of the one before it."""
    caplen_at = struct.Struct(record.format[0] + "I").unpack_from
    rec_len, end = _RECORD_BYTES, len(data)
    starts: list[int] = []
    append = starts.append
    off = _FILE_HEADER_BYTES
    while off + rec_len <= end:
        append(off + rec_len)
        off += rec_len + caplen_at(data, off + 8)[0]
    first = np.array(starts, dtype=np.int64)
    nxt = np.append(first[1:] - rec_len, off)
    return first, np.minimum(nxt, end) - first


def _columns(raw: np.ndarray, starts: np.ndarray, lengths: np.ndarray, little: bool) -> SegmentColumns:
    """tcp_segments' fields of the records whose frames are raw[starts : starts + lengths] (@little: the
    record headers' byte order)."""
    def u8(at: np.ndarray) -> np.ndarray:
        return raw[at].astype(np.int64)

    def u16(at: np.ndarray) -> np.ndarray:
        return (u8(at) << 8) | u8(at + 1)

    # IPv4 carrying TCP, as tcp_segments has always asked: the EtherType, a frame long enough for an IP
    # header, protocol 6, then one long enough for the TCP header's first 14 bytes.
    framed = np.flatnonzero(lengths >= 34)
    at = starts[framed]
    keep = framed[(u16(at + 12) == 0x0800) & (u8(at + 23) == 6)]
    at = starts[keep]
    ihl = (u8(at + 14) & 0x0F) * 4
    whole = lengths[keep] >= 14 + ihl + 14
    keep, at, ihl = keep[whole], at[whole], ihl[whole]
    tcp = at + 14 + ihl
    # The record header before each frame: seconds, then microseconds.
    head = starts[keep] - _RECORD_BYTES
    sec, usec = (_u32_in_order(raw, head + k, little) for k in (0, 4))
    return SegmentColumns(ts=sec.astype(np.float64) + usec.astype(np.float64) / 1e6,
                          sport=u16(tcp), dport=u16(tcp + 2), seq=_u32_in_order(raw, tcp + 4, False), flags=u8(tcp + 13),
                          payload=u16(at + 16) - ihl - (u8(tcp + 12) >> 4) * 4)


def _u32_in_order(raw: np.ndarray, at: np.ndarray, little: bool) -> np.ndarray:
    """The 4-byte unsigned words at @at, little- or big-endian."""
    b = [raw[at + k].astype(np.int64) for k in range(4)]
    if little:
        b.reverse()
    return (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]


def _columns_of_records(path: Path) -> SegmentColumns:
    """segment_columns of a file this module does not read by offset (pcapng, nanosecond pcap)."""
    return _columns_of_tuples(list(_segments_of_records(path)))


def _columns_of_tuples(rows: list) -> SegmentColumns:
    """tcp_segments' tuples as columns."""
    return SegmentColumns(ts=np.array([r[0] for r in rows], dtype=np.float64),
                          sport=np.array([r[1][0] for r in rows], dtype=np.int64),
                          dport=np.array([r[1][1] for r in rows], dtype=np.int64),
                          seq=np.array([r[1][2] for r in rows], dtype=np.int64),
                          flags=np.array([r[1][3] for r in rows], dtype=np.int64),
                          payload=np.array([r[2] for r in rows], dtype=np.int64))


def _segments_of_records(path: Path):
    with open_pcap(path) as f:
        for ts, buf in pcap_records(f):
            if buf[12:14] != _ETH_IP or len(buf) < 34 or buf[23] != 6:  # IPv4, TCP
                continue
            ihl = (buf[14] & 0x0F) * 4
            t = 14 + ihl
            if len(buf) < t + 14:
                continue
            ip_len = (buf[16] << 8) | buf[17]
            sport, dport, seq = _TCP_HEAD.unpack_from(buf, t)
            off = (buf[t + 12] >> 4) * 4
            yield ts, (sport, dport, seq, buf[t + 13]), ip_len - ihl - off


def tcp_segments(path: Path):
    """(timestamp, (sport, dport, seq, flags), payload bytes) of every IPv4 TCP segment in a capture
    (segment_columns, a tuple a segment)."""
    c = segment_columns(path)
    for ts, sport, dport, seq, flags, payload in zip(c.ts.tolist(), c.sport.tolist(), c.dport.tolist(),
                                                      c.seq.tolist(), c.flags.tolist(), c.payload.tolist()):
        yield ts, (sport, dport, seq, flags), payload


_TCP_SEQ_ACK = struct.Struct("!HHII")


def flow_packets(path: Path, server_port: int) -> list[tuple]:
    """Every packet of the flow whose server port is @server_port, in capture order, as
    (microseconds, direction, seq, ack, flags, payload bytes): direction "s" from the server
    (its data), "c" from the client; seq and ack relative to the server's and the client's initial
    sequence numbers (their SYN-ACK's and SYN's), so that two runs of one flow with other random
    ISNs compare equal when they moved the same bytes at the same times (sslab.analysis.oracle)."""
    out = []
    isn = {"s": None, "c": None}
    with open_pcap(path) as f:
        for ts, buf in pcap_records(f):
            if buf[12:14] != _ETH_IP or len(buf) < 34 or buf[23] != 6:  # IPv4, TCP
                continue
            ihl = (buf[14] & 0x0F) * 4
            t = 14 + ihl
            if len(buf) < t + 14:
                continue
            sport, dport, seq, ack = _TCP_SEQ_ACK.unpack_from(buf, t)
            if server_port not in (sport, dport):
                continue
            side = "s" if sport == server_port else "c"
            flags = buf[t + 13]
            if flags & 0x02:  # SYN: the side's ISN
                isn[side] = seq
            other = "c" if side == "s" else "s"
            rel_seq = (seq - isn[side]) & 0xFFFFFFFF if isn[side] is not None else seq
            rel_ack = (ack - isn[other]) & 0xFFFFFFFF if flags & 0x10 and isn[other] is not None else 0
            ip_len = (buf[16] << 8) | buf[17]
            out.append((round(ts * 1e6), side, rel_seq, rel_ack, flags, ip_len - ihl - (buf[t + 12] >> 4) * 4))
    return out


def analyse_pcap(path: Path, server_port: int) -> PcapFlow:
    """One flow's view at the bottleneck (data from @server_port, SYN towards it)."""
    return analyse_pcap_ports(path, [server_port])[server_port]
