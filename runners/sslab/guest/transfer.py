"""An FCT-accurate transfer: the server sends N bytes, the client times them.

The congestion control is set on the listening socket before any client
connects, so the accepted connection starts with it: its init runs once,
at connection establishment, and no other algorithm's init has touched the
connection (iperf3 sets it only after connect, so the namespace default's
init runs first).

The client's flow completion time runs from just before connect() to the
arrival of the last byte; the client then closes, and the server, which
never half-closes, sees the close and exits.

    python3 -m sslab.guest.transfer serve --port P --bytes N --cc NAME
    python3 -m sslab.guest.transfer fetch --host H --port P --bytes N
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time

CHUNK = 1 << 16


def serve(port: int, nbytes: int, cc: str, ready_file: str | None = None,
          duration: float | None = None) -> dict:
    """Send @nbytes (or, with @duration, as much as possible for that long)."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    except OSError as e:
        raise SystemExit(f"congestion control {cc!r} is not available here: {e}")
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    if ready_file:
        open(ready_file, "w").close()
    conn, peer = ls.accept()
    used = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    payload = memoryview(bytes(CHUNK))
    sent = 0
    t0 = time.monotonic()
    if duration is not None:
        while time.monotonic() - t0 < duration:
            sent += conn.send(payload)
        # A timed flow ends when the server says so: the FIN tells the client.
        conn.shutdown(socket.SHUT_WR)
    while sent < nbytes:
        sent += conn.send(payload[: min(CHUNK, nbytes - sent)])
    # No shutdown(SHUT_WR) for sized flows: a FIN queued behind unsent data would move
    # the socket out of ESTABLISHED (to FIN_WAIT1) long before the last
    # byte leaves, and the stack's per-ACK tracepoint (tcp:tcp_probe) only
    # fires in ESTABLISHED.  The client knows the size and closes first.
    conn.recv(1)
    conn.close()
    ls.close()
    return {"role": "server", "cc": used, "bytes": sent, "peer": peer[0],
            "send_seconds": time.monotonic() - t0}


#: The client's received-bytes series: one sample per this many seconds at
#: most.  It gives goodput over time without a packet capture (which, in
#: the TCG guest, drops most packets of a busy 50 Mbit/s link).
RX_SAMPLE_S = 0.05


def fetch(host: str, port: int, nbytes: int, connect_timeout: float = 10.0) -> dict:
    """Receive @nbytes (0: until the server closes) and time it.

    rx: [CLOCK_MONOTONIC seconds, bytes received so far] samples, the same
    clock for every process on the machine, so flows can be lined up.
    """
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(connect_timeout)
    t0 = time.monotonic()
    s.connect((host, port))
    t_conn = time.monotonic()
    s.settimeout(None)
    got = 0
    buf = bytearray(CHUNK)
    rx = [[round(t_conn, 4), 0]]
    next_sample = t_conn + RX_SAMPLE_S
    while nbytes == 0 or got < nbytes:
        n = s.recv_into(buf)
        if n == 0:
            break
        got += n
        now = time.monotonic()
        if now >= next_sample:
            rx.append([round(now, 4), got])
            next_sample = now + RX_SAMPLE_S
    t_last = time.monotonic()
    rx.append([round(t_last, 4), got])
    s.close()
    if nbytes and got != nbytes:
        raise SystemExit(f"received {got} of {nbytes} bytes")
    return {"role": "client", "bytes": got, "fct_s": t_last - t0, "connect_s": t_conn - t0,
            "local_port": None, "rx": rx}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="transfer")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, default=0)
    s.add_argument("--duration", type=float)
    s.add_argument("--cc", required=True)
    s.add_argument("--ready-file")
    f = sub.add_parser("fetch")
    f.add_argument("--host", required=True)
    f.add_argument("--port", type=int, required=True)
    f.add_argument("--bytes", type=int, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "serve":
        out = serve(a.port, a.bytes, a.cc, a.ready_file, a.duration)
    else:
        out = fetch(a.host, a.port, a.bytes)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
