"""Run a case (one or more flows) through a dumbbell and collect what it did.

The run record (run.json) holds what the guest measured: per flow the
client's FCT and received-byte series, the counters of the bottleneck and
of TCP, the bottleneck's queue over time, and the names of the capture
and trace files.  What the trace says per flow (slow start's end, the
receiver-limited ACKs, the module's events) is read on the host afterwards
(sslab.analysis.traces), so a run costs the guest no parsing.
"""

from __future__ import annotations

import json
import select
import subprocess
import threading
import time
from pathlib import Path
from typing import TypeVar

from ..records import Capture, LinkModel
from .capture import dropped_by_kernel, start_capture
from .dumbbell import Dumbbell
from .ftrace import Ftrace
from .linkreplay import DelayReplay, TraceReplay
from .phases import mark

SERVER_PORT = 5201
#: Kernel counters recorded per run: retransmissions, and the reordering
#: and undo events that reveal spurious loss detection on the path.
COUNTERS = ("RetransSegs", "TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder", "TCPDSACKRecv",
            "TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo", "TCPLossUndo", "TCPSpuriousRTOs",
            "TCPLostRetransmit", "TCPTimeouts")
#: Our transfer tool (images/guest/sslab-transfer.c), on the substrate's PATH.
TRANSFER = ["sslab-transfer"]
#: Flows per run: ports SERVER_PORT .. SERVER_PORT + MAX_FLOWS - 1 (one trace filter for all).
MAX_FLOWS = 64
#: Bottleneck queue sampling period (s).  Each sample runs tc in the guest,
#: which under TCG costs a few ms of CPU: slow enough not to disturb a run.
BACKLOG_PERIOD_S = 0.5


class BacklogSampler(threading.Thread):
    """Samples the bottleneck's queue length and drop counter during a run.

    The boot's one `tc -batch` process answers every sample
    (Dumbbell.bottleneck_counters; a process per sample cost ~30 ms of wall
    time each under UML)."""

    def __init__(self, db: Dumbbell, t0: float):
        super().__init__(daemon=True)
        self.db, self.t0 = db, t0
        self.samples: list[list[float]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(BACKLOG_PERIOD_S):
            try:
                c = self.db.bottleneck_counters()
            except Exception:  # noqa: BLE001 - the topology is going away: no more samples
                return
            self.samples.append([round(time.monotonic() - self.t0, 3), c["backlog_pkts"], c["drops"]])

    def stop(self) -> list[list[float]]:
        self.halt.set()
        self.join(timeout=10)
        return self.samples


class KeptTool:
    """One of the traffic tool's processes kept for the boot on one port of one namespace, a flow a
    run, each ordered by a line on its standard input and answered by lines on its output, so that a
    run starts no process of its own for a flow (each start is host work under UML: a run's largest
    set-up cost, 2026-12-06 in docs/notebook/cost.md).  At the end of its orders it exits."""

    #: The tool's mode: serve or fetch.
    mode = ""

    def __init__(self, db: Dumbbell, ns: str, port: int):
        self.port = port
        self.proc = db.launcher.popen(ns, [*TRANSFER, self.mode, "--port", str(port)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, bufsize=1)

    def _order(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _line(self, deadline: float, what: str) -> str:
        if not select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise RuntimeError(f"{self.mode} on port {self.port}: no {what} in time")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.mode} on port {self.port} ended: {self.proc.stderr.read().strip()}")
        return line

    def close(self) -> None:
        """End it: at the end of its orders it exits; killed if it does not (a flow left unfinished)."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class KeptServer(KeptTool):
    """The server: it sets the flow's congestion control and hint on its listener before it says
    ready, then sends the flow to the one client that connects."""

    mode = "serve"

    def order(self, flow: dict) -> None:
        duration = flow.get("duration") or 0
        size = 0 if duration else flow["size"]
        self._order(f"{flow['cc']} {size} {duration} {flow.get('hint_bytes_per_s') or 0}")

    def wait_ready(self, deadline: float) -> None:
        line = self._line(deadline, "ready")
        if line.strip() != "ready":
            raise RuntimeError(f"server on port {self.port} said {line.strip()!r}, not ready")

    def result(self, flow: dict, cli: dict) -> dict:
        return json.loads(self._line(time.monotonic() + 60, "result"))


class KeptClient(KeptTool):
    """The client: it connects as soon as it reads the flow's order and times the flow."""

    mode = "fetch"

    def fetch(self, host: str, size: int, timeout_s: float) -> str:
        """The flow's JSON line, once its last byte is in."""
        self._order(f"{host} {size}")
        return self._line(time.monotonic() + timeout_s, "result")


Kept = TypeVar("Kept", bound=KeptTool)


def _kept(db: Dumbbell, kind: type[Kept], ns: str, port: int) -> Kept:
    """The boot's @kind on (@ns, @port), started at its first flow (again if it ended)."""
    key = (kind.mode, ns, port)
    if key not in db.kept_tools or db.kept_tools[key].proc.poll() is not None:
        db.kept_tools[key] = kind(db, ns, port)
    return db.kept_tools[key]


class Iperf3Server:
    """iperf3's server for one flow: one test, then exit (the client runs in reverse mode so this side
    sends)."""

    def __init__(self, db: Dumbbell, ns: str, port: int):
        self.port = port
        self.proc = db.launcher.popen(ns, ["iperf3", "-s", "-1", "-p", str(port)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_listening(db, ns, port)

    def wait_ready(self, deadline: float) -> None:
        pass

    def result(self, flow: dict, cli: dict) -> dict:
        _, err = self.proc.communicate(timeout=60)
        if self.proc.returncode != 0:
            raise RuntimeError(f"iperf3 server on port {self.port}: {err.strip()}")
        return {"cc": cli["iperf3"]["cc"] or flow["cc"]}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _server(db: Dumbbell, flow: dict, port: int) -> KeptServer | Iperf3Server:
    """@flow's server on @port: the boot's kept one in its namespace (started at its first flow), or an
    iperf3 server of its own (a kept server on that port and namespace ended first)."""
    ns = db.servers[flow["pair"] - 1]
    if flow.get("tool") == "iperf3":
        if ("serve", ns, port) in db.kept_tools:
            db.kept_tools.pop(("serve", ns, port)).close()
        return Iperf3Server(db, ns, port)
    server = _kept(db, KeptServer, ns, port)
    server.order(flow)
    return server


def _wait_listening(db: Dumbbell, ns: str, port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = db.launcher.run(ns, ["ss", "-Hltn", f"sport = :{port}"]).stdout
        if out.strip():
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} in {ns}")


def _iperf3_result(report: dict) -> dict:
    """The client-side numbers of an iperf3 -J -R report, as the transfer tool reports them."""
    end = report["end"]
    return {"role": "client", "bytes": end["sum_received"]["bytes"],
            "fct_s": end["sum_received"]["seconds"], "connect_s": None,
            "iperf3": {"receiver_mbit": end["sum_received"]["bits_per_second"] / 1e6,
                       "sender_retransmits": end["sum_sent"].get("retransmits"),
                       "cc": end.get("sender_tcp_congestion")}}


def _client(db: Dumbbell, flow: dict, port: int, t0: float, out: dict) -> None:
    # The nominal start plus the run's seeded offset (scenario `variation`).
    delay = flow.get("start", 0.0) + flow.get("start_offset_s", 0.0) - (time.monotonic() - t0)
    if delay > 0:
        time.sleep(delay)
    out["started_s"] = time.monotonic() - t0
    ns = db.clients[flow["pair"] - 1]
    if flow.get("tool") == "iperf3":
        res = db.launcher.run(ns, ["iperf3", "-c", db.server_addr(flow["pair"]), "-p", str(port), "-R", "-J",
                                   "-t", f"{flow['duration']:g}", "-C", flow["cc"]], timeout=3600)
        out["returncode"] = res.returncode
        out["stdout"] = json.dumps(_iperf3_result(json.loads(res.stdout))) if res.returncode == 0 else ""
        out["stderr"] = res.stderr or res.stdout[-500:]
        return
    client = _kept(db, KeptClient, ns, port)
    try:
        out["stdout"] = client.fetch(db.server_addr(flow["pair"]), flow.get("size") or 0, 3600)
        out["returncode"] = 0
    except RuntimeError as e:
        out["returncode"], out["stderr"] = 1, str(e)


def run_case(db: Dumbbell, flows: list[dict], out_dir: Path, tag: str, capture: Capture | None = None,
             tracer: Ftrace | None = None, link: LinkModel | None = None, trace_offset_s: float = 0.0) -> dict:
    """Run @flows together (each from its start time); return per-flow results and run counters.

    @link: the plan's link model (None: no run of the plan, the fidelity check's flow, which measures
    the path's rate without its replays).  With a rate trace, the trace is replayed from
    @trace_offset_s on (and recorded against what the link delivered); with a varying delay, its
    extra is replayed onto the clients' lines; with downlink bursts, a second capture at the first
    flow's client shows the bursts as they arrive (<tag>.client.pcap)."""
    capture = capture or Capture(pcap=False, snaplen=96, traces=True, immediate=True)
    tracer = tracer or Ftrace()
    out_dir.mkdir(parents=True, exist_ok=True)
    if len(flows) > MAX_FLOWS:
        raise ValueError(f"at most {MAX_FLOWS} flows per run")
    ports = [SERVER_PORT + k for k in range(len(flows))]
    pairs = sorted({f["pair"] for f in flows})
    counters0 = db.tcp_counters(pairs)
    bn0 = db.bottleneck_counters()
    def captured(suffix: str, where: tuple[str, str] | None = None):
        return start_capture(db, out_dir / f"{tag}{suffix}.pcap", capture.snaplen, capture.immediate, where)
    pcap = captured("") if capture.pcap else None
    client_pcap = captured(".client", (db.clients[flows[0]["pair"] - 1], db.host_dev)) \
        if capture.pcap and link is not None and link.down else None
    # Every interface of the bottleneck's router: a packet's arrival and its departure past the
    # bottleneck, in the order they happened (sslab.analysis.queuecheck counts the queue from them).
    router_pcap = captured(".router", (db.r1, "any")) if capture.router else None
    replay = TraceReplay(db.r1, db.bottleneck_dev, link.trace, trace_offset_s, 0.0,
                         db.burst_bytes) if link is not None and link.trace else None
    if replay:
        replay.prime()
    variation = db.delay_variation if link is not None else None
    delays = DelayReplay(db, variation.extra_ms, variation.bin_ms, 0.0) if variation else None
    delayed = None
    if capture.traces:
        tracer.start(SERVER_PORT, last_port=SERVER_PORT + MAX_FLOWS - 1)
    servers: list[KeptServer | Iperf3Server] = []
    clients, threads = [], []
    replayed = None
    done = False
    try:
        for flow, port in zip(flows, ports):
            servers.append(_server(db, flow, port))
            if flow.get("tool") != "iperf3":
                # Its client too, before the traffic: a flow's start is then a line written.
                _kept(db, KeptClient, db.clients[flow["pair"] - 1], port)
        deadline = time.monotonic() + 30
        for server in servers:
            server.wait_ready(deadline)
        t0 = time.monotonic()
        mark(f"{tag} traffic")
        if replay:
            replay.t0 = t0
            replay.start()
        if delays:
            delays.t0 = t0
            delays.start()
        sampler = BacklogSampler(db, t0)
        sampler.start()
        for flow, port in zip(flows, ports):
            rec: dict = {}
            th = threading.Thread(target=_client, args=(db, flow, port, t0, rec))
            th.start()
            clients.append(rec)
            threads.append(th)
        for th in threads:
            th.join()
        backlog = sampler.stop()
        replayed = replay.stop() if replay else None
        if replayed is not None:
            replayed["rate_tolerance"] = link.rate_tolerance
            replayed["frame_bytes"] = db.frame_bytes
        replay = None
        delayed = delays.stop() if delays else None
        delays = None
        mark(f"{tag} traffic-done")
        results = []
        for server, rec, flow, port in zip(servers, clients, flows, ports):
            if rec.get("returncode") != 0:
                raise RuntimeError(f"flow on port {port} failed: client {rec.get('stderr', '').strip()}")
            cli = json.loads(rec["stdout"])
            results.append((flow, port, rec, cli, server.result(flow, cli)))
        done = True
    finally:
        # A kept tool with a flow unfinished is ended, and the next run starts a new one.
        for server in servers:
            if isinstance(server, Iperf3Server):
                server.close()
        if not done:
            for key in [k for k, v in db.kept_tools.items() if k[2] in ports]:
                db.kept_tools.pop(key).close()
        if replay:
            replay.stop()
        if delays:
            delays.stop()
        time.sleep(0.2)
        traced = tracer.stop(out_dir / f"{tag}.trace.rb") if capture.traces else 0
        pcap_note = pcap.stop() if pcap else None
        client_note = client_pcap.stop() if client_pcap else None
        router_note = router_pcap.stop() if router_pcap else None
    mark(f"{tag} captured")
    bn1, peak = db.bottleneck_counters_and_peak()
    counters1 = db.tcp_counters(pairs)
    flows_out = []
    for flow, port, rec, cli, srv in results:
        flows_out.append({
            **flow, "port": port, "cc_used": srv["cc"], "bytes_received": cli["bytes"],
            "fct_s": round(cli["fct_s"], 6), "started_s": round(rec["started_s"], 4),
            # The handshake: the client's connect() (inside fct_s), and the SYN's and SYN-ACK's
            # retransmissions as the kernel counted them (None: a tool that does not say, iperf3)
            "connect_s": None if cli.get("connect_s") is None else round(cli["connect_s"], 6),
            "syn_retransmits": cli.get("syn_retransmits"), "synack_retransmits": srv.get("synack_retransmits"),
            # [seconds since the run's t0, bytes received so far], from the client
            "rx_series": [[round(t - t0, 4), b] for t, b in cli.get("rx", [])],
            "iperf3": cli.get("iperf3"),
        })
    return {
        "tag": tag,
        "flows": flows_out,
        # peak_pkts, peak_bytes: the most the bottleneck held at once in this run, as the qdisc counted
        # (None: a kernel without our patches 0007 and 0008; the readings below are then all there is)
        "bottleneck": {**{k: bn1[k] - bn0[k] for k in ("packets", "drops")},
                       "peak_pkts": peak and peak["packets"], "peak_bytes": peak and peak["bytes"]},
        # [seconds since the first flow was due, queued packets, drops so far (cumulative counter)]
        "bottleneck_backlog": backlog,
        "tcp_counters": {p: {k: counters1[p].get(k, 0) - counters0[p].get(k, 0) for k in COUNTERS}
                         for p in pairs},
        "pcap": f"{tag}.pcap" if pcap else None,
        "pcap_mode": pcap.mode if pcap else None,
        "pcap_note": pcap_note,
        "pcap_dropped_by_kernel": dropped_by_kernel(pcap_note),
        "client_pcap": f"{tag}.client.pcap" if client_pcap else None,
        "client_pcap_dropped_by_kernel": dropped_by_kernel(client_note),
        **({"router_pcap": f"{tag}.router.pcap", "router_pcap_dropped_by_kernel": dropped_by_kernel(router_note)}
           if router_pcap else {}),
        # The link against its trace (sslab.guest.linkreplay), or None on a constant-rate link.
        "link_replay": replayed,
        # The delay variation as replayed (sslab.guest.linkreplay.DelayReplay), or None.
        **({"delay_replay": delayed} if delayed is not None else {}),
        # The ring buffer's pages (sslab.guest.ftrace); the host reads them, adds what they say to each
        # flow and compresses them.
        "trace": f"{tag}.trace.rb" if traced else None,
    }
