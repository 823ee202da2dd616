"""Units of the scenario language: sizes, rates and times as people write them.

Sizes use SI units (5MB = 5 000 000 bytes; KiB, MiB, GiB for powers of two);
rates accept bit, kbit, mbit, gbit (per second); times accept us, ms, s, and a sum of
times (2s+4s).
Standard library only.
"""

from __future__ import annotations

import re
from typing import Any

#: An Ethernet header without FCS or VLAN tag: what a veth and a pcap count beyond the IP packet.
ETH_HEADER_BYTES = 14


def frame_bytes(mtu: int) -> int:
    """The bytes of a full-sized frame on a link of this MTU (the IP packet plus its Ethernet header)."""
    return mtu + ETH_HEADER_BYTES


#: A full-sized frame at the default MTU (1500): 1514 bytes.
FRAME_BYTES = frame_bytes(1500)

_NUM = r"(?P<n>[0-9]+(?:\.[0-9]+)?)\s*"
_SIZE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_RATE_UNITS = {"bit": 1e-6, "kbit": 1e-3, "mbit": 1.0, "gbit": 1e3}
_TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def _parse(value: Any, units: dict[str, float], what: str, default_unit: str | None = None) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if default_unit is None:
            raise ValueError(f"{what} needs a unit ({', '.join(units)}), got {value!r}")
        return float(value) * units[default_unit]
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string like '50mbit', got {value!r}")
    m = re.fullmatch(_NUM + r"(?P<u>[a-zA-Z]+)", value.strip())
    if not m or m["u"].lower() not in units:
        raise ValueError(f"cannot read {what} {value!r}; units: {', '.join(units)}")
    return float(m["n"]) * units[m["u"].lower()]



def parse_size(value: Any) -> int:
    """Bytes from '5MB', '64KiB', or a plain integer number of bytes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(round(_parse(value, _SIZE_UNITS, "size")))


def parse_rate_mbit(value: Any) -> float:
    return _parse(value, _RATE_UNITS, "rate")


def parse_seconds(value: Any) -> float:
    """Seconds from '100ms', '2s', or a sum of such times ('2s+22s'): a matrix template writes the
    small flows' starts as the first one's plus a spacing ("{first_start}+4s")."""
    if isinstance(value, str) and "+" in value:
        terms = value.split("+")
        if any(not t.strip() for t in terms):
            raise ValueError(f"cannot read time {value!r}: a sum of times, each with a unit (2s+4s)")
        return sum(_parse(t, _TIME_UNITS, "time") for t in terms)
    return _parse(value, _TIME_UNITS, "time")

