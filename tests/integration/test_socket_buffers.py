"""The hosts' socket buffers on the real UML guest (SOCKET_BUFFERS=).

One Reno flow (slow start until a loss, no HyStart to stop it early) of 20 MB on a 40 ms path through
a 100 Mbit/s bottleneck with a 3,000-packet buffer: its window can grow past the BDP (330 packets)
plus the buffer, so with the testbed's raised buffers the queue fills and drops.  With Linux's
send buffer on the server (4 MB, counted in the memory each queued packet takes: one segment a
packet here, about 2.7 KB each) the sender can keep about 1,550 segments unacknowledged, so the
queue peaks near 1,200 packets and nothing is dropped (measured: 1,208).  Read back from the run's
bottleneck counters.
"""

import pytest

from .helpers import one_cubic_flow

pytestmark = pytest.mark.vm


def bottleneck(buffers: str, tmp_path) -> dict:
    _, run = one_cubic_flow(tmp_path, f"sockbuf-{buffers}", {"socket_buffers": buffers}, "100mbit", 3000,
                            "20MB", cc="reno")
    assert run["flows"][0]["bytes_received"] == 20_000_000
    return run["bottleneck"]


def test_linux_send_buffers_hold_the_window_the_raised_ones_do_not(tmp_path, image):
    raised = bottleneck("raised", tmp_path)
    assert raised["peak_pkts"] == 3000 and raised["drops"] > 0, raised
    linux = bottleneck("linux-senders", tmp_path)
    # 4 MB over 2.6-2.9 KB a segment, less the 330 packets the path itself holds.
    assert 1000 <= linux["peak_pkts"] <= 1400 and linux["drops"] == 0, linux
