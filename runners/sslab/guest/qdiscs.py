"""Which qdiscs this kernel can instantiate.  Runs on the substrate (VM, UML or a native host).

Each qdisc is tried on the loopback device of a scratch network namespace
that the probe creates and deletes, so the machine's own devices are never
touched.  `python3 -m sslab.guest.qdiscs` prints the verdict as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

#: qdisc -> arguments that make a minimal valid instance of it.
QDISC_PROBES = {
    "netem": ["delay", "1ms"],
    "fq": [],
    "tbf": ["rate", "1mbit", "burst", "32kbit", "latency", "50ms"],
    "htb": ["default", "1"],
}


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def probe_qdiscs() -> dict[str, bool]:
    """Try each qdisc on lo of a scratch namespace (never on the machine's own devices)."""
    ns = f"sslab-probe-{uuid.uuid4().hex[:8]}"
    if _run(["ip", "netns", "add", ns]).returncode != 0:
        return {q: False for q in QDISC_PROBES}
    try:
        found = {}
        for qdisc, args in QDISC_PROBES.items():
            res = _run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "lo", "root", qdisc, *args])
            found[qdisc] = res.returncode == 0
        return found
    finally:
        _run(["ip", "netns", "del", ns])


if __name__ == "__main__":
    print(json.dumps(probe_qdiscs()))
    sys.exit(0)
