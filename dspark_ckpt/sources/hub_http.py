"""HTTP for the Hub source: bounded retries with backoff, and a seekable file that fetches only the ranges read."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

PREFETCH = 100 * 1024  # one ranged read covers the 8-byte length and any header up to ~100 KiB
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """At most `attempts` tries; waits double from `base_s`, capped; a Retry-After above `max_wait_s` is not waited."""

    attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 8.0
    max_wait_s: float = 30.0
    timeout_s: float = 10.0

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """DSPARK_CKPT_HUB_TIMEOUT (seconds per request) and DSPARK_CKPT_HUB_RETRIES (extra tries) tune it."""
        default = cls()
        timeout = _env_float("DSPARK_CKPT_HUB_TIMEOUT", default.timeout_s)
        retries = int(_env_float("DSPARK_CKPT_HUB_RETRIES", default.attempts - 1))
        backoff = _env_float("DSPARK_CKPT_HUB_BACKOFF", default.base_s)
        return cls(attempts=max(1, retries + 1), timeout_s=timeout, base_s=backoff)

    def wait_for(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to sleep before try `attempt + 1`, or None when retrying is pointless or over budget."""
        if attempt + 1 >= self.attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_wait_s else None
        return min(self.cap_s, self.base_s * 2.0**attempt)  # 2**int is typed Any (negative powers are floats)


def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value >= 0 else default


def retry_after_seconds(headers: object) -> float | None:
    value = getattr(headers, "get", lambda _k: None)("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff


class Retryable(Exception):
    """One failed try that may succeed later (rate limit, 5xx, timeout, cut connection)."""

    def __init__(self, why: str, retry_after: float | None = None, *, rate_limited: bool = False) -> None:
        super().__init__(why)
        self.retry_after = retry_after
        self.rate_limited = rate_limited


def with_retries(policy: RetryPolicy, attempt_once: Callable[[], T], sleep: Callable[[float], None] = time.sleep) -> T:
    """Run `attempt_once` until it stops raising Retryable or the policy says stop (the last Retryable escapes)."""
    attempt = 0
    while True:
        try:
            return attempt_once()
        except Retryable as exc:
            wait = policy.wait_for(attempt, exc.retry_after)
            if wait is None:
                raise
            sleep(wait)
            attempt += 1


@dataclass
class FetchLog:
    """What a source fetched: ranged requests and body bytes, and whether a server ignored a Range header."""

    requests: int = 0
    bytes: int = 0
    range_ignored: list[str] = field(default_factory=list)


# fetch(start, end) -> the bytes [start, end) of the file; raises OSError when it cannot.
Fetch = Callable[[int, int], bytes]


class RangedFile(io.RawIOBase):
    """A read-only, seekable view of a remote file of known size: reads are served from fetched ranges.

    The first read fetches [0, PREFETCH) in one request; a read that runs past the prefix extends it; any other
    read (a d2t/t2d table deep in the file) fetches exactly the bytes asked for.
    """

    def __init__(self, fetch: Fetch, size: int, prefetch: int = PREFETCH) -> None:
        super().__init__()
        self._fetch, self._size, self._prefetch = fetch, size, prefetch
        self._pos = 0
        self._prefix = b""
        self._ranges: dict[int, bytes] = {}

    @property
    def prefix(self) -> bytes:
        """The bytes fetched from the start of the file (the header), for the offline cache."""
        return self._prefix

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        end = min(self._size, self._pos + len(buffer))
        if end <= self._pos:
            return 0
        data = self._span(self._pos, end)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def _span(self, start: int, end: int) -> bytes:
        if end <= len(self._prefix):
            return self._prefix[start:end]
        if start <= len(self._prefix):
            # Contiguous with what we have (the header read): extend the prefix, at least to PREFETCH.
            want = min(self._size, max(end, self._prefetch))
            self._prefix += self._checked(len(self._prefix), want)
            return self._prefix[start:end]
        for begin, chunk in self._ranges.items():
            if begin <= start and end <= begin + len(chunk):
                return chunk[start - begin : end - begin]
        chunk = self._checked(start, end)
        self._ranges[start] = chunk
        return chunk

    def _checked(self, start: int, end: int) -> bytes:
        data = self._fetch(start, end)
        if len(data) != end - start:
            raise OSError(f"short read: bytes {start}-{end - 1} gave {len(data)} of {end - start} bytes")
        return data


def _status_message(status: int) -> str:
    why = {401: "authentication required (gated or private repo: pass --token or set HF_TOKEN)",
           403: "access denied for this token", 404: "not found at this revision",
           416: "range not satisfiable (the file is shorter than the Hub reports)"}
    return f"HTTP {status}: {why.get(status, 'unexpected answer')}"


def fetch_range(url: str, start: int, end: int, *, headers: dict[str, str], policy: RetryPolicy, log: FetchLog,
                name: str) -> bytes:
    """Bytes [start, end) of `url` through one ranged GET (retried within `policy`); raises OSError when it fails.

    A server that ignores Range answers 200 with the whole file: only the bytes up to `end` are read, then the
    connection is closed, so a multi-GB shard is never downloaded.
    """
    import httpx2
    from huggingface_hub import get_session

    def once() -> bytes:
        try:
            with get_session().stream("GET", url, headers={**headers, "Range": f"bytes={start}-{end - 1}"},
                                      timeout=policy.timeout_s) as resp:
                log.requests += 1
                status = resp.status_code
                if status in RETRY_STATUSES:
                    raise Retryable(f"HTTP {status}", retry_after_seconds(resp.headers), rate_limited=status == 429)
                if status not in (200, 206):
                    raise OSError(_status_message(status))
                skip = start if status == 200 else _content_range_start(resp.headers, start)
                if status == 200 and name not in log.range_ignored:
                    log.range_ignored.append(name)
                data = _read_span(resp.iter_bytes(), skip, end - start, log)
        except httpx2.TimeoutException as exc:
            raise Retryable(f"timed out after {policy.timeout_s:g} s") from exc
        except httpx2.TransportError as exc:  # refused, reset, or a body cut short (RemoteProtocolError)
            raise Retryable(f"connection failed ({exc.__class__.__name__})") from exc
        if len(data) < end - start:
            raise Retryable(f"short body: {len(data)} of {end - start} bytes")
        return data

    try:
        return with_retries(policy, once)
    except Retryable as exc:
        tries = f"{policy.attempts} attempt{'s' if policy.attempts > 1 else ''}"
        raise OSError(f"{'rate limited' if exc.rate_limited else 'failed'}: {exc} ({tries})") from None


def _content_range_start(headers: object, expected: int) -> int:
    value = getattr(headers, "get", lambda _k: None)("Content-Range") or ""
    try:
        first = int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        raise OSError(f"206 answer with an unreadable Content-Range {value!r}") from None
    if first != expected:
        raise OSError(f"asked for bytes from {expected}, the server sent bytes from {first}")
    return 0


def _read_span(chunks: object, skip: int, want: int, log: FetchLog) -> bytes:
    """The `want` bytes after the first `skip` of a streamed body; stops reading as soon as it has them."""
    got = bytearray()
    for chunk in chunks:  # type: ignore[attr-defined]
        log.bytes += len(chunk)
        got += chunk
        if len(got) >= skip + want:
            break
    return bytes(got[skip : skip + want])
