"""A run's trace as ring-buffer pages (sslab.guest.ftrace, read by sslab.analysis.ringbuf) says what the
kernel's own text says, event for event.

Why a guest test: the pages, their headers and the events' layouts are the guest kernel's (UML's 6.1
here), and whether splice() hands over every page of trace_pipe_raw is too.  The guest's `trace` file
is read first (it leaves the buffer as it is), then the pages are consumed from the same buffer: the
same events twice, in the kernel's text and in its binary form.  The traffic is a connection of our
module's (cubic_suss) over the loopback, a segment of 1000 bytes a send, so that tcp_probe, sslab_ack and
sslab_event all fill pages, more than a splice's pipe holds."""

from __future__ import annotations

import json

import pytest

from sslab.analysis import ringbuf
from sslab.analysis.traces import read_trace, trace_facts
from sslab.experiment.archive import event_names
from sslab.guest.ftrace import PIPE_BYTES
from sslab.substrate.job import JobSpec
from sslab.substrate.uml import UMLConfig, UMLTestbed

pytestmark = pytest.mark.vm

GUEST = """
import json, os, socket, subprocess, threading
from pathlib import Path
import sslab.guest.ftrace as ftrace
out = Path(os.environ["SSLAB_OUT_DIR"])
subprocess.run(["modprobe", "tcp_sslab"], check=True)
splices = []
real_splice = os.splice
ftrace.os.splice = lambda *a, **k: splices.append(1) or real_splice(*a, **k)
tracer = ftrace.Ftrace()
tracer.setup(5201, 5210)
tracer.start()
SENDS = 40_000
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 5201))
server.listen()
def send():
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic_suss")
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for _ in range(SENDS):              # a segment a send (the loopback would send 64 KB ones)
        conn.sendall(b"x" * 1000)
    conn.close()
sender = threading.Thread(target=send)
sender.start()
client = socket.socket()
client.connect(("127.0.0.1", 5201))
received = 0
while chunk := client.recv(1 << 16):
    received += len(chunk)
sender.join()
(ftrace.TRACEFS / "tracing_on").write_text("0")
with open(ftrace.TRACEFS / "trace", "rb") as src, open(out / "flow.trace", "wb") as dst:
    ftrace.copy_out(src, dst)
pages = tracer.stop(out / "flow.trace.rb")
print(json.dumps({"received": received, "pages": pages, "splices": len(splices)}))
"""


def test_the_ring_buffer_pages_say_what_the_kernels_text_says(image, tmp_path):
    res = UMLTestbed(image, UMLConfig()).run(JobSpec(argv=["python3", "-c", GUEST], timeout_s=600), tmp_path / "job")
    assert res.ok, res.stderr()[-3000:]
    seen = json.loads(res.stdout().strip().splitlines()[-1])
    out = tmp_path / "job" / "out"
    assert seen["received"] == 40_000_000
    # More pages than one splice's pipe holds (PIPE_BYTES): the splices ran several times, and the last,
    # partly filled page came by read() (a splice of the pipe into the file follows each of the first).
    assert seen["pages"] > PIPE_BYTES // 4096 and seen["splices"] > 4
    named = out / "named.trace.rb"
    named.write_bytes(ringbuf.with_header((out / "flow.trace.rb").read_bytes(), event_names=event_names()))
    text, pages = read_trace(out / "flow.trace"), read_trace(named)
    assert len(text) > 20_000
    assert {r.event for r in text} >= {"tcp_probe", "sslab_ack", "sslab_event"}
    assert pages == text                     # every event: its time, its name, every field as printed
    assert ringbuf.read(named).missed == 0
    facts = trace_facts(named.read_bytes(), [5201])
    assert facts == trace_facts((out / "flow.trace").read_bytes(), [5201])
    assert facts[5201]["probe_records"] > 10_000 and facts[5201]["events"]

