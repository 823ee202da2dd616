"""Module lifecycle check (runs on the substrate): load, select, unload.

Prints one JSON object: the congestion controls available after loading
tcp_sslab, which of our names a socket can select, whether unloading is
refused while a socket uses the module and works once none does.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from ..ccas import OUR_CCAS as NAMES
MODULE = "tcp_sslab"


def available() -> list[str]:
    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
        return f.read().split()


def selectable(name: str) -> bool:
    s = socket.socket()
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, name.encode())
        got = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
        return got == name
    except OSError:
        return False
    finally:
        s.close()


def rmmod() -> tuple[bool, str]:
    res = subprocess.run(["rmmod", MODULE], capture_output=True, text=True)
    return res.returncode == 0, res.stderr.strip()


def suss_version_writes() -> dict:
    """suss_version: its default, then what writing each value does (a year the module does not
    know must be refused, not stored); the default is put back."""
    path = "/sys/module/tcp_sslab/parameters/suss_version"
    with open(path) as f:
        out: dict = {"default": int(f.read())}
    for value in ("2025", "0", "2023", "abc", "2024"):
        try:
            with open(path, "w") as f:
                f.write(value)
            with open(path) as f:
                out[value] = int(f.read())
        except OSError as e:
            out[value] = f"refused: {e.strerror}"
    return out


def parameters() -> dict[str, int]:
    """Every parameter the module has, as its writable files in /sys show them after a load."""
    where = f"/sys/module/{MODULE}/parameters"
    return {name: int(open(os.path.join(where, name)).read())
            for name in sorted(os.listdir(where)) if os.stat(os.path.join(where, name)).st_mode & 0o200}


def descriptions() -> dict[str, str]:
    """Each parameter's description, as the module's own information gives it (modinfo's parm lines:
    "name:description (type)", the type only where the module gave one)."""
    out = subprocess.run(["modinfo", "-F", "parm", MODULE], check=True, capture_output=True, text=True).stdout
    return dict(line.split(":", 1) for line in out.splitlines() if ":" in line)


def main() -> int:
    out: dict = {}
    subprocess.run(["modprobe", MODULE], check=True)
    out["available_after_load"] = available()
    out["selectable"] = {n: selectable(n) for n in NAMES}
    holder = socket.socket()
    holder.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic_suss")
    out["rmmod_while_in_use"] = rmmod()
    holder.close()
    out["rmmod_when_unused"] = rmmod()
    out["available_after_unload"] = available()
    subprocess.run(["modprobe", MODULE], check=True)
    out["reloaded"] = all(n in available() for n in NAMES)
    out["params"] = parameters()
    out["descriptions"] = descriptions()
    out["suss_version"] = suss_version_writes()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
