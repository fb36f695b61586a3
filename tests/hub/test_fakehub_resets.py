"""The FakeHub takes a client's reset of a kept-alive connection as a real server does: it ends that connection,
quietly, and answers the next one (a reset used to escape to socketserver, which printed a traceback from the
handler thread into the suite's output while every test passed)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Any

import pytest


def _handlers() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def test_a_reset_connection_ends_quietly(hub: Any, capsys: pytest.CaptureFixture[str]) -> None:
    hub.add_repo("org/x", {"config.json": b"{}"})
    host, port = hub.file_url("org/x", "config.json").split("//", 1)[1].split("/", 1)[0].split(":")
    request = f"GET /org/x/resolve/main/config.json HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    before = _handlers()
    client = socket.create_connection((host, int(port)))
    client.sendall(request)
    assert client.recv(65536).startswith(b"HTTP/1.1 200")  # kept alive: the handler waits for the next request
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()  # linger 0: a reset, not a FIN
    ends = time.monotonic() + 5
    while _handlers() > before and time.monotonic() < ends:
        time.sleep(0.02)
    assert _handlers() == before, "the handler thread did not end with its connection"
    assert "Traceback" not in capsys.readouterr().err
    again = socket.create_connection((host, int(port)))
    again.sendall(request)
    assert again.recv(65536).startswith(b"HTTP/1.1 200")
    again.close()
