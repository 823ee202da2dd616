"""A pair's idle round trip, measured by ICMP echoes sent from the job's own process, as ping does.

Why not ping: under UML every process a job starts costs wall time (its exec, page faults and
system calls are each a round trip through the host's ptrace).  A run measured its pairs' base
RTT with a `ping` process a pair, 13 a Table 1 run, about 12k of the run's 66k ptrace stops
(`make bench BENCH=syscalls`, 27 Nov 2026).  Here the job opens a raw ICMP socket in the server's
namespace and sends the echoes itself.

What is measured is what iputils' ping measures, to its microsecond:

    ping_rtt_us = rx_us - tx_us
      tx_us  the wall clock in whole microseconds just before the request is sent
             (ping writes gettimeofday() into the request and reads it back from the reply)
      rx_us  the kernel's receive timestamp of the reply in whole microseconds
             (SO_TIMESTAMP; here SO_TIMESTAMPNS, cut to the microsecond)

and the pair's RTT is the least of @count, in ms (ping's "min", printed to 3 decimals: whole us).
A request is ping's size: 56 data bytes, so the frame is 98 bytes on Ethernet and waits as long
at a bottleneck.  Where this differs from ping: one request is in flight at a time, the next
leaving once the last is answered and at least @interval after it (ping -i sends every interval
whatever is in flight).  Why: with ping's schedule, on a pair whose RTT is the interval (100 ms at
ping's 0.1 s) or a multiple, the reply and the next request cross the router in the same
microseconds, and under virtual time that shows: on 8 Table 1 cells (13 pairs, 2 runs each) the
100 ms pairs read 100.017 in 36 of 48 measurements with the echoes sent on ping's schedule from
this process, 19 of 48 one at a time, 4 of 48 with ping itself (expected 100.0157: a reading of
100.017 means over 0.3 us more).  Over Table 1's 640 runs at ITER=10 (30 Nov 2026) the check's
2 us failed in 2 runs one at a time, 5 on ping's schedule, none with ping: a 100 ms pair read
100.018.  What adds that microsecond is not established (docs/notebook/cost.md).

Measured against ping beside it, under UML virtual time (29 Nov 2026, a throwaway tree): on
100 ms pairs 100.0164-100.0172 ms by the kernel's timestamp where ping read 100.016-100.017; on
Table 1's 13 pairs the least of three, cut to the microsecond, was ping's in 27 of 39 and one
microsecond below in 12 (that tree cut the difference, not each stamp, as ping and this do).
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from dataclasses import dataclass
from itertools import count as counter

ICMP_ECHO_REPLY = 0
ICMP_ECHO_REQUEST = 8
#: ping's default payload; with ICMP's 8 and IPv4's 20 bytes of header a 84-byte packet.
PING_DATA_BYTES = 56
#: <asm-generic/socket.h>: the receive timestamp as a struct timespec (Python names it only on
#: some builds).
SO_TIMESTAMPNS = 35
#: How long the last request's reply is waited for (ping's -W default): on an idle path it comes
#: within the RTT; under virtual time the wait costs no wall time.
REPLY_WAIT_S = 10.0

_idents = counter(1)


class EchoError(RuntimeError):
    pass


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of
    @data's 16-bit big-endian words (an odd last byte padded with zero)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def echo_request(ident: int, seq: int, data: bytes) -> bytes:
    """An ICMP echo request (type 8, code 0) with its checksum."""
    head = struct.pack("!BBHHH", ICMP_ECHO_REQUEST, 0, 0, ident, seq)
    return struct.pack("!BBHHH", ICMP_ECHO_REQUEST, 0, checksum(head + data), ident, seq) + data


def echo_reply_of(packet: bytes) -> tuple[int, int] | None:
    """(identifier, sequence) of an ICMP echo reply as a raw IPv4 socket reads it (the IP header
    first), or None for any other packet."""
    if len(packet) < 20:
        return None
    header = (packet[0] & 0x0F) * 4
    icmp = packet[header:header + 8]
    if len(icmp) < 8:
        return None
    kind, code, _, ident, seq = struct.unpack("!BBHHH", icmp)
    return (ident, seq) if kind == ICMP_ECHO_REPLY and code == 0 else None


def rx_stamp_ns(ancillary: list[tuple[int, int, bytes]]) -> int | None:
    """The kernel's receive timestamp (SO_TIMESTAMPNS) in ns, from recvmsg's ancillary data."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("@qq", data[:16])
            return sec * 1_000_000_000 + nsec
    return None


def ping_rtt_us(tx_ns: int, rx_ns: int) -> int:
    """A round trip as ping computes it: each stamp cut to the whole microsecond, then subtracted."""
    return rx_ns // 1000 - tx_ns // 1000


@dataclass(frozen=True)
class Echoes:
    """What a measurement saw: requests sent, replies, each reply's RTT in us (ping's arithmetic)."""
    sent: int
    rtts_us: tuple[int, ...]

    @property
    def min_ms(self) -> float:
        """The least RTT in ms, to the microsecond (ping's "min")."""
        if not self.rtts_us:
            raise EchoError(f"no reply to {self.sent} echo request(s)")
        return min(self.rtts_us) / 1000


def open_echo_socket(address: str) -> socket.socket:
    """A raw ICMP socket connected to @address (the kernel then hands it only packets from there),
    with receive timestamps on; opened in the calling thread's network namespace."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.connect((address, 0))
    except OSError:
        sock.close()
        raise
    return sock


def echoes(sock: socket.socket, count: int, interval_s: float, wait_s: float = REPLY_WAIT_S) -> Echoes:
    """Send @count echo requests on @sock (open_echo_socket), one at a time: each once the one
    before it is answered (or @wait_s has passed) and at least @interval_s after it."""
    ident = (os.getpid() + next(_idents)) & 0xFFFF
    data = bytes(PING_DATA_BYTES)
    rtts: list[int] = []
    sent_at = None
    for seq in range(count):
        if sent_at is not None:
            time.sleep(max(0.0, sent_at + interval_s - time.monotonic()))
        request = echo_request(ident, seq, data)
        sent_at = time.monotonic()
        tx_ns = time.time_ns()   # the last thing before the send, as ping's gettimeofday()
        sock.send(request)
        if (rtt := _reply_rtt_us(sock, ident, seq, tx_ns, sent_at + wait_s)) is not None:
            rtts.append(rtt)
    return Echoes(sent=count, rtts_us=tuple(rtts))


def _reply_rtt_us(sock: socket.socket, ident: int, seq: int, tx_ns: int, due: float) -> int | None:
    """The round trip (ping's arithmetic) of request @seq, sent at wall time @tx_ns, once its reply
    is read; None if none comes by monotonic time @due.  Other packets are passed over."""
    while (left := due - time.monotonic()) > 0 and select.select([sock], [], [], left)[0]:
        packet, ancillary, _, _ = sock.recvmsg(2048, socket.CMSG_SPACE(16))
        if echo_reply_of(packet) != (ident, seq):
            continue
        rx_ns = rx_stamp_ns(ancillary)
        if rx_ns is None:
            raise EchoError("the reply carries no receive timestamp (SO_TIMESTAMPNS)")
        return ping_rtt_us(tx_ns, rx_ns)
    return None
