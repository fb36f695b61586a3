"""A remote file read by ranges: a seekable view that fetches only what is read, through one bounded GET each."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from dspark_ckpt.sources.hub_http import (
    MALFORMED,
    OVER_BUDGET,
    PREFETCH,
    RETRY_STATUSES,
    FetchLog,
    Refused,
    Retryable,
    RetryPolicy,
    network_errors_as_transient,
    open_response,
    read_prefix,
    retry_after_seconds,
    status_message,
    tries,
    with_retries,
)

# A server that ignores Range is read through at most this many bytes to reach the range asked for (a header
# sits within its first 100 MB; a d2t deep in a multi-GB shard is not worth downloading the shard for).
MAX_SKIP = 8 + 100_000_000


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


def fetch_range(url: str, start: int, end: int, *, headers: dict[str, str], policy: RetryPolicy, log: FetchLog,
                name: str) -> bytes:
    """Bytes [start, end) of `url` through one ranged GET (retried within `policy`); raises OSError when it fails.

    A server that ignores Range answers 200 with the whole file: only the bytes up to `end` are read, then the
    connection is closed, so a multi-GB shard is never downloaded; a range deeper than MAX_SKIP is refused.
    """
    asked = {**headers, "Range": f"bytes={start}-{end - 1}", "Accept-Encoding": "identity"}

    deadline = time.monotonic() + policy.deadline_s  # the whole request, its retries included

    def once() -> bytes:
        with network_errors_as_transient(policy, name, own=(OSError,)), open_response(
                url, headers=asked, policy=policy, deadline=deadline) as resp:
            log.requests += 1
            status = resp.status_code
            if status in RETRY_STATUSES:
                raise Retryable(f"HTTP {status}", retry_after_seconds(resp.headers), rate_limited=status == 429)
            if status not in (200, 206):
                raise OSError(status_message(status))
            skip = start if status == 200 else _content_range_start(resp.headers, start)
            if status == 200:
                if name not in log.range_ignored:
                    log.range_ignored.append(name)
                if start > MAX_SKIP:
                    raise Refused(OVER_BUDGET, f"the server ignores Range, and reaching byte {start:,} of "
                                               f"{name} would mean downloading {start:,} bytes first")
            data = read_prefix(resp, skip + end - start, deadline=deadline, policy=policy, what=name,
                               log=log)[skip:]
        if len(data) < end - start:
            raise Retryable(f"short body: {len(data)} of {end - start} bytes")
        return data

    try:
        return with_retries(policy, once, deadline=deadline)
    except Retryable as exc:
        raise OSError(f"{'rate limited' if exc.rate_limited else 'failed'}: {exc} ({tries(exc)})") from None


def _content_range_start(headers: object, expected: int) -> int:
    value = getattr(headers, "get", lambda _k: None)("Content-Range") or ""
    try:
        first = int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        raise Refused(MALFORMED, f"206 answer with an unreadable Content-Range {value[:60]!r}") from None
    if first != expected:
        raise Refused(MALFORMED, f"asked for bytes from {expected}, the server sent bytes from {first}")
    return 0
