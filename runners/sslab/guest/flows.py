"""Run one measured flow through a dumbbell and collect what it did."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

from .dumbbell import Dumbbell
from .ftrace import Ftrace, parse, receiver_limited_samples, slow_start_exit

SERVER_PORT = 5201
#: Kernel counters recorded per flow: retransmissions, and the reordering
#: and undo events that reveal spurious loss detection on the path.
COUNTERS = ("RetransSegs", "TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder", "TCPDSACKRecv",
            "TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo", "TCPLossUndo", "TCPSpuriousRTOs",
            "TCPLostRetransmit", "TCPTimeouts")


def run_flow(db: Dumbbell, pair: int, cc: str, nbytes: int, out_dir: Path, tag: str,
             tracer: Ftrace | None = None, port: int = SERVER_PORT) -> dict:
    """One transfer of @nbytes from server @pair to its client with @cc."""
    tracer = tracer or Ftrace()
    out_dir.mkdir(parents=True, exist_ok=True)
    ready = out_dir / f".ready-{tag}"
    bn0, tc0 = db.bottleneck_counters(), db.tcp_counters(pair)
    tracer.start(port)
    py = [sys.executable, "-m", "sslab.guest.transfer"]
    server = subprocess.Popen(["ip", "netns", "exec", db.servers[pair - 1], *py, "serve", "--port", str(port),
                               "--bytes", str(nbytes), "--cc", cc, "--ready-file", str(ready)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {server.communicate()[1].strip()}")
            time.sleep(0.05)
        ready.unlink()
        client = subprocess.run(["ip", "netns", "exec", db.clients[pair - 1], *py, "fetch",
                                 "--host", db.server_addr(pair), "--port", str(port), "--bytes", str(nbytes)],
                                capture_output=True, text=True, timeout=600)
        if client.returncode != 0:
            raise RuntimeError(f"client failed: {client.stderr.strip()}")
        srv_out, srv_err = server.communicate(timeout=60)
        if server.returncode != 0:
            raise RuntimeError(f"server failed: {srv_err.strip()}")
    finally:
        if server.poll() is None:
            server.kill()
    time.sleep(0.2)
    text = tracer.stop()
    with gzip.open(out_dir / f"{tag}.trace.gz", "wt") as f:
        f.write(text)
    bn1, tc1 = db.bottleneck_counters(), db.tcp_counters(pair)
    records = parse(text)
    probes = [r for r in records if r.event == "tcp_probe"]
    events = [{"ts": r.ts, **r.fields} for r in records if r.event == "sslab_event"]
    cli, srv = json.loads(client.stdout), json.loads(srv_out)
    return {
        "tag": tag,
        "cc": cc,
        "cc_used": srv["cc"],
        "bytes": nbytes,
        "fct_s": round(cli["fct_s"], 4),
        "bottleneck_drops": bn1["drops"] - bn0["drops"],
        "bottleneck_packets": bn1["packets"] - bn0["packets"],
        "retrans_segs": tc1["RetransSegs"] - tc0["RetransSegs"],
        "tcp_counters": {k: tc1.get(k, 0) - tc0.get(k, 0) for k in COUNTERS},
        "slow_start": slow_start_exit(probes),
        "probe_records": len(probes),
        "receiver_limited_acks": receiver_limited_samples(probes),
        "events": events,
    }
