"""An overall deadline on every socket operation of a Hub request: connect, TLS, the status line and headers (each
redirect's too), and the body, however the server trickles its bytes.

httpx bounds each network wait by a timeout, but reads the status line and the headers in a loop of such waits: a
server that sends one byte every 0.3 s keeps a 1 s timeout from ever firing. Here the network backend underneath
httpx clamps every wait to what is left of the request's deadline, and refuses to wait at all once it has passed
(`DeadlinePassed`). No thread, no timer: each recv/send/connect simply gets a shorter timeout, and on
`DeadlinePassed` httpcore closes the connection as for any other error, so no socket is left behind.

The deadline comes from `deadline_scope(...)`, per thread (a context variable); `every_thread=True` also covers
threads the scope's own code starts (huggingface_hub uploads LFS files from a thread pool). Outside a scope the
backend waits exactly as httpx asked.
"""

from __future__ import annotations

import contextlib
import contextvars
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore2
from httpcore2 import NetworkBackend, NetworkStream

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("dspark_hub_deadline", default=None)
_EVERY_THREAD: list[float] = []  # deadlines of the open every_thread scopes (the innermost last)
_LOCK = threading.Lock()


class DeadlinePassed(Exception):
    """A socket operation was asked for after the request's deadline (or its clamped wait ran into it).

    Not an httpcore exception on purpose: httpx lets it through unchanged, so it is never mistaken for a
    per-read timeout and retried."""


def current_deadline() -> float | None:
    own = _DEADLINE.get()
    if own is not None:
        return own
    with _LOCK:
        return _EVERY_THREAD[-1] if _EVERY_THREAD else None


@contextlib.contextmanager
def deadline_scope(deadline: float, *, every_thread: bool = False) -> Iterator[None]:
    """Every socket operation of the Hub client inside the block ends by `deadline` (time.monotonic())."""
    outer = current_deadline()
    deadline = deadline if outer is None else min(deadline, outer)  # a nested scope never extends its parent
    token = _DEADLINE.set(deadline)
    if every_thread:
        with _LOCK:
            _EVERY_THREAD.append(deadline)
    try:
        yield
    finally:
        if every_thread:
            with _LOCK:
                _EVERY_THREAD.remove(deadline)
        _DEADLINE.reset(token)


def _clamped(timeout: float | None) -> tuple[float | None, bool]:
    """`timeout`, shortened to what is left before the deadline, and whether the deadline is what bounds it;
    DeadlinePassed when nothing is left."""
    deadline = current_deadline()
    if deadline is None:
        return timeout, False
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlinePassed("the request's deadline passed")
    return (left, True) if timeout is None or left < timeout else (timeout, False)


class DeadlineStream(NetworkStream):
    """A network stream whose every wait ends by the deadline. A wait the deadline cut short that times out is
    DeadlinePassed; one that ran its own (per-read) timeout stays httpcore's timeout, retried as before."""

    def __init__(self, inner: NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        wait, cut = _clamped(timeout)
        try:
            return self._inner.read(max_bytes, wait)
        except httpcore2.TimeoutException:
            if cut:
                raise DeadlinePassed("the request's deadline passed") from None
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        wait, cut = _clamped(timeout)
        try:
            self._inner.write(buffer, wait)
        except httpcore2.TimeoutException:
            if cut:
                raise DeadlinePassed("the request's deadline passed") from None
            raise

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> NetworkStream:
        wait, cut = _clamped(timeout)
        try:  # CPython bounds the whole handshake by the socket timeout, not each of its reads
            return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, wait))
        except httpcore2.TimeoutException:
            if cut:
                raise DeadlinePassed("the request's deadline passed") from None
            raise

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(NetworkBackend):
    """The sync backend, with every wait clamped to the current scope's deadline. A name with several addresses
    may try each with the clamped timeout; DNS resolution itself is not interruptible and is not bounded here."""

    def __init__(self, inner: NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> NetworkStream:
        wait, cut = _clamped(timeout)
        try:
            stream = self._inner.connect_tcp(host, port, wait, local_address, socket_options)
        except httpcore2.TimeoutException:
            if cut:
                raise DeadlinePassed("the request's deadline passed") from None
            raise
        return DeadlineStream(stream)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> NetworkStream:
        return DeadlineStream(self._inner.connect_unix_socket(path, _clamped(timeout)[0], socket_options))

    def sleep(self, seconds: float) -> None:
        deadline = current_deadline()
        if deadline is not None and time.monotonic() + seconds >= deadline:
            raise DeadlinePassed("the request's deadline passed")
        self._inner.sleep(seconds)


def guard(client: Any) -> Any:
    """`client` (an httpx2.Client), with the deadline backend under its transport and every proxy mount; once.

    httpx2 offers no public way to give HTTPTransport a network backend, so the pool's is wrapped in place; a
    client whose transports are not httpx2's own (a user's custom factory) is refused rather than left unbounded.
    """
    import httpx2

    transports = [client._transport, *(t for t in client._mounts.values() if t is not None)]
    for transport in transports:
        pool: Any = getattr(transport, "_pool", None) if isinstance(transport, httpx2.HTTPTransport) else None
        backend = getattr(pool, "_network_backend", None)
        if not isinstance(backend, NetworkBackend):
            raise TypeError(f"cannot bound the requests of {transport.__class__.__name__}: no httpcore2 "
                               "network backend found (an httpx2 version this release does not know)")
        if not isinstance(backend, DeadlineBackend):
            pool._network_backend = DeadlineBackend(backend)
    return client


def guard_session() -> bool:
    """huggingface_hub's shared client, guarded like ours (for HfApi calls made inside a deadline_scope); False
    when a custom client factory's transport cannot be guarded (its calls then keep their own timeouts)."""
    from huggingface_hub import get_session

    try:
        guard(get_session())
    except TypeError:
        return False
    return True


_CLIENT: list[Any] = []


def client() -> Any:
    """The httpx2 client of dspark-ckpt's own Hub requests (trust_env: proxies and NO_PROXY from the environment)."""
    import httpx2

    with _LOCK:
        if not _CLIENT:
            _CLIENT.append(guard(httpx2.Client(follow_redirects=False, timeout=None, trust_env=True)))
        return _CLIENT[0]
