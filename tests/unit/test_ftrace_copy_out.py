"""copy_out (sslab.guest.ftrace), the run's trace out of tracefs: by sendfile() where the kernel splices
the source, by read() where it refuses (a source without splice: here a socket), the same bytes either way.
The guest's own kernel and tracefs: tests/integration/test_ftrace_copy.py."""

from __future__ import annotations

import socket

from sslab.guest import ftrace


def test_a_file_is_copied_whole_by_sendfile(tmp_path, monkeypatch):
    data = b"".join(f"record {i} {'x' * (i % 300)}\n".encode() for i in range(20_000))
    (tmp_path / "trace").write_bytes(data)

    class ReadIsNotAllowed:
        @staticmethod
        def copyfileobj(*args, **kwargs):
            raise AssertionError("copy_out fell back to read()")
    monkeypatch.setattr(ftrace, "shutil", ReadIsNotAllowed)
    with open(tmp_path / "trace", "rb") as src, open(tmp_path / "out", "wb") as out:
        assert ftrace.copy_out(src, out) == len(data)
    assert (tmp_path / "out").read_bytes() == data


def test_a_source_the_kernel_will_not_splice_is_copied_by_read(tmp_path, monkeypatch):
    data = b"0123456789abcdef" * 4096
    read_copies = []
    copyfileobj = ftrace.shutil.copyfileobj
    monkeypatch.setattr(ftrace.shutil, "copyfileobj", lambda *a, **k: read_copies.append(1) or copyfileobj(*a, **k))
    a, b = socket.socketpair()
    with a, b:
        a.sendall(data)
        a.shutdown(socket.SHUT_WR)
        with b.makefile("rb") as src, open(tmp_path / "out", "wb") as out:
            assert ftrace.copy_out(src, out) == len(data)
    assert (tmp_path / "out").read_bytes() == data
    assert read_copies == [1]
