"""A page opened in headless Chromium (Debian's `chromium`), driven over the DevTools protocol: what
it loaded, what it could not, what its console said, and a screenshot.

The protocol runs over a WebSocket; the few frames this needs (text, masked from the client, any
length) are written here with the standard library, so the test needs nothing but the browser.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


class WebSocket:
    """A client WebSocket (RFC 6455) over one TCP connection: text frames only."""

    def __init__(self, url: str, timeout: float = 30.0):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"no WebSocket upgrade: {head[:200]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the browser closed the connection")
            buf += chunk
        return buf

    def recv(self) -> str:
        parts = []
        while True:
            b0, b1 = self._exactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exactly(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exactly(8))[0]
            payload = self._exactly(n)
            if b0 & 0x0F in (0x1, 0x0):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode()

    def close(self) -> None:
        self.sock.close()


@dataclass
class PageVisit:
    url: str
    broken_images: list[str] = field(default_factory=list)
    images: int = 0
    console_errors: list[str] = field(default_factory=list)
    screenshot: Path | None = None
    #: What @until's expression returned first that was not null (None: it never did in time).
    value: object = None


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def visit(page: Path, screenshot: Path, width: int = 1280, height: int = 1400, act: str | None = None,
          until: str | None = None, wait_s: float = 20.0) -> PageVisit:
    """Open @page (a file) in headless Chromium: count its images and those that did not load, collect
    console and log errors, and save a screenshot to @screenshot.  With @act, that JavaScript runs once
    the page has loaded; with @until, that expression is evaluated every 0.2 s for up to @wait_s until
    it gives something other than null, which is kept (PageVisit.value), before the screenshot."""
    profile = tempfile.mkdtemp(prefix="sslab-chromium-")
    proc = subprocess.Popen([chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             f"--user-data-dir={profile}", "--remote-debugging-port=0",
                             f"--window-size={width},{height}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if m := re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line):
                port = int(m.group(1))
            elif not line and proc.poll() is not None:
                raise RuntimeError("chromium exited before it listened")
        url = Path(page).resolve().as_uri()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
        target = json.loads(urllib.request.urlopen(req, timeout=30).read())
        ws = WebSocket(target["webSocketDebuggerUrl"])
        out = PageVisit(url)
        ids = iter(range(1, 10_000))

        def call(method: str, **params) -> dict:
            n = next(ids)
            ws.send(json.dumps({"id": n, "method": method, "params": params}))
            while True:
                msg = json.loads(ws.recv())
                note(msg)
                if msg.get("id") == n:
                    if "error" in msg:
                        raise RuntimeError(f"{method}: {msg['error']}")
                    return msg.get("result", {})

        loaded = {"done": False}

        def note(msg: dict) -> None:
            method, p = msg.get("method"), msg.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.console_errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif method == "Runtime.exceptionThrown":
                out.console_errors.append(p["exceptionDetails"].get("text", "exception"))
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.console_errors.append(f"{p['entry'].get('text')} {p['entry'].get('url', '')}".strip())
            elif method == "Page.loadEventFired":
                loaded["done"] = True

        for domain in ("Page", "Runtime", "Log"):
            call(f"{domain}.enable")
        call("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while not loaded["done"] and time.monotonic() < deadline:
            note(json.loads(ws.recv()))
        if act is not None:
            call("Runtime.evaluate", expression=act, returnByValue=True)
        deadline = time.monotonic() + wait_s
        while until is not None and time.monotonic() < deadline:
            got = call("Runtime.evaluate", expression=until, returnByValue=True)["result"].get("value")
            if got is not None:
                out.value = got
                break
            time.sleep(0.2)
        js = ("JSON.stringify({n: document.images.length, broken: Array.from(document.images)"
              ".filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src'))})")
        res = json.loads(call("Runtime.evaluate", expression=js, returnByValue=True)["result"]["value"])
        out.images, out.broken_images = res["n"], res["broken"]
        shot = call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        screenshot.write_bytes(base64.b64decode(shot["data"]))
        out.screenshot = screenshot
        ws.close()
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
