"""Hostile answers for the FakeHub: each builds a `respond(handler, answer)` hook for `hub.fault(..., respond=...)`.

A hook writes raw bytes to the socket itself, so it can do what no honest server does: lie about lengths,
trickle, stall after the headers, redirect anywhere, compress a bomb, or never end a chunked body. Every hook
stops as soon as the client hangs up (a write fails) or the server closes, so a test never leaves a thread behind.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable
from typing import Any

Respond = Callable[[Any, Any], None]
_ZEROS = bytes(64 * 1024)


def _head(handler: Any, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.flush()


def _stopped(handler: Any) -> bool:
    return handler.hub._stop.is_set()


def _plain(answer: Any, **extra: str) -> dict[str, str]:
    headers = {k: v for k, v in answer.headers.items() if k.lower() not in ("content-length", "content-encoding")}
    return {**headers, **extra}


def trickle(delay_s: float = 0.2, chunk: int = 1) -> Respond:
    """The honest answer, `chunk` bytes every `delay_s`: every read returns something, the whole never arrives."""
    def respond(handler: Any, answer: Any) -> None:
        _head(handler, answer.status, _plain(answer, **{"Content-Length": str(len(answer.body))}))
        for i in range(0, len(answer.body), chunk):
            if _stopped(handler):
                return
            handler.wfile.write(answer.body[i : i + chunk])
            handler.wfile.flush()
            handler.hub._stop.wait(delay_s)
    return respond


def stall_after_headers(seconds: float = 30.0) -> Respond:
    """Status line and headers, then silence (the socket stays open)."""
    def respond(handler: Any, answer: Any) -> None:
        _head(handler, answer.status, _plain(answer, **{"Content-Length": str(len(answer.body))}))
        handler.hub._stop.wait(seconds)
    return respond


def redirect(location: str | Callable[[Any], str], status: int = 302) -> Respond:
    """A redirect to `location` (a URL, or a function of the handler giving one)."""
    def respond(handler: Any, answer: Any) -> None:
        target = location(handler) if callable(location) else location
        _head(handler, status, {"Location": target, "Content-Length": "0"})
    return respond


def redirect_to_self(status: int = 302) -> Respond:
    """A redirect to the very URL asked for: a loop of one."""
    return redirect(lambda handler: handler.path, status)


def wrong_length(delta: int) -> Respond:
    """Content-Length off by `delta` (positive: the body ends early; negative: more bytes than announced)."""
    def respond(handler: Any, answer: Any) -> None:
        _head(handler, answer.status, _plain(answer, **{"Content-Length": str(max(0, len(answer.body) + delta))}))
        handler.wfile.write(answer.body)
        handler.wfile.flush()
    return respond


def gzip_bomb(expands_to: int = 4 * 2**30, level: int = 9) -> Respond:
    """Content-Encoding: gzip, whatever was asked: a small body that inflates to `expands_to` zero bytes."""
    def respond(handler: Any, answer: Any) -> None:
        body = _bomb(expands_to, level)
        _head(handler, 200, _plain(answer, **{"Content-Encoding": "gzip", "Content-Length": str(len(body)),
                                              "Content-Type": "application/json"}))
        handler.wfile.write(body)
        handler.wfile.flush()
    return respond


_BOMBS: dict[tuple[int, int], bytes] = {}


def _bomb(size: int, level: int) -> bytes:
    if (size, level) not in _BOMBS:
        piece = gzip.compress(bytes(2**24), compresslevel=level)  # 16 MiB of zeros, ~16 KiB compressed
        _BOMBS[size, level] = piece * max(1, size // 2**24)  # concatenated gzip members are one valid stream
    return _BOMBS[size, level]


def endless_chunked(piece: bytes = b" " * 65536, limit: int = 8 * 2**30) -> Respond:
    """Transfer-Encoding: chunked, chunks of `piece` until the client hangs up (at most `limit` bytes)."""
    def respond(handler: Any, answer: Any) -> None:
        _head(handler, 200, _plain(answer, **{"Transfer-Encoding": "chunked", "Content-Type": "application/json"}))
        sent = 0
        handler.wfile.write(b"%x\r\n{\"x\": \"\r\n" % 7)
        while sent < limit and not _stopped(handler):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
    return respond


def endless_body(prefix_of_answer: bool = True, limit: int = 64 * 2**30) -> Respond:
    """200 and a Content-Length of `limit`: the whole file (Range ignored), then zeros, until the client hangs up."""
    def respond(handler: Any, answer: Any) -> None:
        _head(handler, 200, _plain(answer, **{"Content-Length": str(limit)}))
        sent = 0
        if prefix_of_answer:
            handler.wfile.write(answer.full)
            sent += len(answer.full)
        while sent < limit and not _stopped(handler):
            handler.wfile.write(_ZEROS)
            sent += len(_ZEROS)
    return respond


def whole_file_for_ranges_after(offset: int = 1) -> Respond:
    """A ranged read starting at or after `offset` (a d2t deep in the file) gets 200 and the whole file; the
    header read (from 0) is answered honestly."""
    def respond(handler: Any, answer: Any) -> None:
        start = int((answer.range or "bytes=0-").split("=")[1].split("-")[0] or 0)
        body, status = (answer.full, 200) if start >= offset else (answer.body, answer.status)
        headers = _plain(answer, **{"Content-Length": str(len(body))})
        if status == 200:
            headers.pop("Content-Range", None)
        _head(handler, status, headers)
        handler.wfile.write(body)
        handler.wfile.flush()
    return respond


def padded(extra: int, filler: bytes = b" ") -> Respond:
    """The file with `extra` more bytes (honestly announced): longer than model_info says it is."""
    def respond(handler: Any, answer: Any) -> None:
        body = answer.full + filler * extra
        _head(handler, 200, _plain(answer, **{"Content-Length": str(len(body))}))
        for i in range(0, len(body), 1 << 20):
            if _stopped(handler):
                return
            handler.wfile.write(body[i : i + (1 << 20)])
        handler.wfile.flush()
    return respond


def altered(at: int = 100) -> Respond:
    """The file with one byte flipped at offset `at`, honestly sized: the listed length, not the listed sha256."""
    def respond(handler: Any, answer: Any) -> None:
        body = bytearray(answer.full)
        body[at % len(body)] ^= 0xFF
        _head(handler, 200, _plain(answer, **{"Content-Length": str(len(body))}))
        handler.wfile.write(bytes(body))
        handler.wfile.flush()
    return respond


def slow_start(seconds: float) -> Respond:
    """The honest answer, after `seconds` of silence (before the status line)."""
    def respond(handler: Any, answer: Any) -> None:
        handler.hub._stop.wait(seconds)
        _head(handler, answer.status, _plain(answer, **{"Content-Length": str(len(answer.body))}))
        handler.wfile.write(answer.body)
        handler.wfile.flush()
    return respond


def _drip(handler: Any, head: bytes, pad: bytes, delay_s: float, limit_s: float) -> None:
    """`head` at once, then `pad` one byte every `delay_s`, for at most `limit_s` (or until the client hangs up):
    each read the client makes returns something, and the status line or headers never end."""
    handler.wfile.write(head)
    handler.wfile.flush()
    ends = time.monotonic() + limit_s
    while not _stopped(handler) and time.monotonic() < ends:
        for byte in pad:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            if handler.hub._stop.wait(delay_s) or time.monotonic() >= ends:
                return


def trickle_status_line(delay_s: float = 0.3, limit_s: float = 60.0) -> Respond:
    """A status line that never ends: `HTTP/1.1 200 ` and then its reason phrase, one byte every `delay_s`."""
    def respond(handler: Any, answer: Any) -> None:
        _drip(handler, b"HTTP/1.1 200 ", b"OK", delay_s, limit_s)
    return respond


def trickle_headers(delay_s: float = 0.3, limit_s: float = 60.0) -> Respond:
    """The status line, then headers one byte every `delay_s` that never reach the blank line ending them."""
    def respond(handler: Any, answer: Any) -> None:
        _drip(handler, b"HTTP/1.1 %d OK\r\nContent-Type: application/json\r\nX-Slow: " % answer.status, b"a",
              delay_s, limit_s)
    return respond


def trickle_redirect(location: str | Callable[[Any], str], delay_s: float = 0.3, limit_s: float = 60.0) -> Respond:
    """A 302 to `location` (within the host: it would be followed) whose headers trickle and never end."""
    def respond(handler: Any, answer: Any) -> None:
        target = location(handler) if callable(location) else location
        _drip(handler, b"HTTP/1.1 302 Found\r\nLocation: %s\r\nX-Slow: " % target.encode(), b"a", delay_s,
              limit_s)
    return respond


def longer_than_stated(extra: int, chunk: int = 1 << 20) -> Respond:
    """The whole file, then `extra` more bytes of zeros, sent with no Content-Length (the connection's end ends
    it): a download longer than model_info states, which only counting the bytes catches."""
    def respond(handler: Any, answer: Any) -> None:
        _head(handler, 200, _plain(answer, Connection="close"))
        handler.wfile.write(answer.full)
        sent = 0
        while sent < extra and not _stopped(handler):
            handler.wfile.write(bytes(min(chunk, extra - sent)))
            sent += min(chunk, extra - sent)
        handler.wfile.flush()
    return respond


def monotonic() -> float:  # re-exported for tests that time a hook
    return time.monotonic()
