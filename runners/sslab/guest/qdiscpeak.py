"""The bottleneck queue's peak, as the qdisc itself counted it (our patches 0007 to netem, the
constant-rate bottleneck, and 0008 to pfifo, the FIFO under the HTB shaper of a varying link).

Either keeps the most packets and bytes it has held at once since it was made or changed, and
reports them as its application statistics (TCA_STATS_APP, two u32: packets, then bytes).  `tc -s`
prints no application statistics for either, so they are read here over rtnetlink: one
RTM_GETQDISC dump in the namespace the qdisc lives in, once a run's flows are done (a read during
the run would be an observer, and under virtual time an observer moves a run).  A kernel without
the patch (another KERNEL_SOURCE=) reports none: the peak is then None, and the reports fall back
to the queue's readings.

Standard library only (guest code).  The message layouts are Linux's uapi:

    nlmsghdr  u32 len, u16 type, u16 flags, u32 seq, u32 pid                  (16 bytes)
    tcmsg     u8 family, u8 pad, u16 pad, s32 ifindex, u32 handle, parent, info (20 bytes)
    rtattr    u16 len, u16 type, then the payload, each padded to 4 bytes
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

NETLINK_ROUTE = 0
RTM_NEWQDISC, RTM_GETQDISC = 36, 38
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCA_KIND, TCA_STATS2 = 1, 7
TCA_STATS_APP = 4
TC_H_ROOT = 0xFFFFFFFF

NLMSGHDR = struct.Struct("=IHHII")
TCMSG = struct.Struct("=BBHiIII")
RTATTR = struct.Struct("=HH")
PEAK = struct.Struct("=II")


@dataclass(frozen=True)
class QdiscPeak:
    """A qdisc's application statistics as patch 0007 has netem give them."""
    ifindex: int
    kind: str
    handle: int
    parent: int
    packets: int
    bytes: int


def _align(n: int) -> int:
    return (n + 3) & ~3


def attributes(data: bytes) -> dict[int, bytes]:
    """The rtattrs of @data by type (the last of a type wins; none repeats in a qdisc's message)."""
    out, off = {}, 0
    while off + RTATTR.size <= len(data):
        length, kind = RTATTR.unpack_from(data, off)
        if length < RTATTR.size:
            break
        out[kind & 0x7FFF] = data[off + RTATTR.size: off + length]  # without NLA_F_NESTED's bit
        off += _align(length)
    return out


def parse_qdisc(payload: bytes) -> QdiscPeak | None:
    """An RTM_NEWQDISC message's payload (after its nlmsghdr): the qdisc's peak, None when it reports
    no application statistics of that size (an unpatched netem, another kind of qdisc)."""
    _, _, _, ifindex, handle, parent, _ = TCMSG.unpack_from(payload)
    attrs = attributes(payload[TCMSG.size:])
    kind = attrs.get(TCA_KIND, b"").split(b"\0", 1)[0].decode()
    app = attributes(attrs.get(TCA_STATS2, b"")).get(TCA_STATS_APP)
    if app is None or len(app) != PEAK.size:
        return None
    packets, nbytes = PEAK.unpack(app)
    return QdiscPeak(ifindex, kind, handle, parent, packets, nbytes)


def messages(data: bytes) -> list[tuple[int, bytes]]:
    """(type, payload) of each netlink message in @data."""
    out, off = [], 0
    while off + NLMSGHDR.size <= len(data):
        length, kind, _, _, _ = NLMSGHDR.unpack_from(data, off)
        if length < NLMSGHDR.size:
            break
        out.append((kind, data[off + NLMSGHDR.size: off + length]))
        off += _align(length)
    return out


def dump_request(seq: int = 1) -> bytes:
    """An RTM_GETQDISC dump request (every qdisc of the namespace)."""
    body = TCMSG.pack(socket.AF_UNSPEC, 0, 0, 0, 0, 0, 0)
    return NLMSGHDR.pack(NLMSGHDR.size + len(body), RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body


def qdisc_peaks() -> list[QdiscPeak]:
    """Every qdisc of the calling thread's network namespace that reports a peak."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE) as s:
        s.bind((0, 0))
        s.send(dump_request())
        found: list[QdiscPeak] = []
        while True:
            for kind, payload in messages(s.recv(65536)):
                if kind == NLMSG_DONE:
                    return found
                if kind == NLMSG_ERROR:
                    (err,) = struct.unpack_from("=i", payload)
                    if err:
                        raise OSError(-err, f"RTM_GETQDISC: {err}")
                    continue
                if kind == RTM_NEWQDISC and (peak := parse_qdisc(payload)) is not None:
                    found.append(peak)


def tc_handle(major: int, minor: int) -> int:
    """A qdisc's or class's handle as the kernel holds it (tc's "1:1" is 0x00010001)."""
    return (major << 16) | minor


def qdisc_peak(dev: str, kind: str, parent: int = TC_H_ROOT) -> dict[str, int] | None:
    """The peak of the qdisc of @dev under @parent (the root, or an HTB class: tc_handle) when it is a
    @kind that reports one (in the calling thread's namespace): {"packets", "bytes"}, else None."""
    index = socket.if_nametoindex(dev)
    for p in qdisc_peaks():
        if p.ifindex == index and p.parent == parent and p.kind == kind:
            return {"packets": p.packets, "bytes": p.bytes}
    return None
