"""Whole files from the Hub for `fix --push`: one bounded GET each, streamed to disk, never more bytes than the
listing states (DSP-E092), within a deadline that grows with the file's size (DSP-E093), and hashing to the LFS
sha256 the listing gives (DSP-E097)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path
from typing import Final

from dspark_ckpt.model.codes import ErrorCode
from dspark_ckpt.sources.hub_http import (
    MALFORMED,
    OVER_BUDGET,
    Refused,
    Retryable,
    RetryPolicy,
    body_chunks,
    check_time,
    network_errors_as_transient,
    open_response,
    refuse_announced_over,
    require_ok,
    with_retries,
)

DIGEST_MISMATCH: Final[ErrorCode] = "DSP-E097"


def file_sha256(path: Path) -> str:
    """The sha256 of a file on disk, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_to(url: str, path: Path, *, size: int, headers: dict[str, str], policy: RetryPolicy,
                what: str, exact: bool = True, sha256: str | None = None) -> None:
    """The `size`-byte file at `url`, written to `path` (through a temporary file beside it, renamed at the end).

    A Content-Length above `size`, or one byte past it as the body arrives, is refused (DSP-E092): a file longer
    than the Hub lists is not the listed file, and an endless body would fill the disk. The request, its redirects
    and retries end by `policy.for_transfer(size)`'s deadline (DSP-E093). Raises Retryable, Refused or HttpStatus;
    the temporary file never outlives the call. `exact=False`: `size` is only a budget (a file the listing gives
    no size), and a shorter body is the file. `sha256`: the listed LFS digest; a body that hashes otherwise is
    refused (DSP-E097) and never put in place.
    """
    policy = policy.for_transfer(size)
    deadline = time.monotonic() + policy.deadline_s
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}.part")

    def once() -> None:
        with network_errors_as_transient(policy, what):
            got = _fetch(url, part, size=size, exact=exact, headers=headers, policy=policy, what=what,
                         deadline=deadline)
        if sha256 is not None and got != sha256:
            raise Refused(DIGEST_MISMATCH, f"{what}: the bytes sent hash to sha256 {got[:16]}..., not the "
                                           f"{sha256[:16]}... the Hub lists for the file")
        os.replace(part, path)

    try:
        with_retries(policy, once, deadline=deadline)
    finally:
        with contextlib.suppress(OSError):
            part.unlink()


def _fetch(url: str, part: Path, *, size: int, exact: bool, headers: dict[str, str], policy: RetryPolicy, what: str,
           deadline: float) -> str:
    """The body written to `part`; its sha256."""
    budget = "the Hub lists" if exact else "allowed"
    with open_response(url, headers={**headers, "Accept-Encoding": "identity"}, policy=policy,
                       deadline=deadline) as resp:
        require_ok(resp)
        encoding = resp.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            raise Refused(MALFORMED, f"{what}: the server sent the file with Content-Encoding {encoding[:40]!r} "
                                     "though it was asked for the bytes as stored")
        refuse_announced_over(resp, size, what, budget)
        written = [0]
        digest = hashlib.sha256()
        with open(part, "wb") as out:
            for chunk in body_chunks(resp, policy, what, written):
                if written[0] + len(chunk) > size:
                    raise Refused(OVER_BUDGET, f"{what}: the server sent more than the {size:,} bytes {budget}; "
                                               "the download was stopped there")
                out.write(chunk)
                digest.update(chunk)
                written[0] += len(chunk)
                check_time(deadline, policy, what, written[0])
    if exact and written[0] < size:
        raise Retryable(f"short body: {written[0]:,} of the {size:,} bytes listed")
    return digest.hexdigest()
