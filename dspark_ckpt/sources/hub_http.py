"""HTTP for the Hub source: every GET has a byte budget and an overall deadline, follows redirects only within the
endpoint's host (or the Hub's own CDN), decodes a compressed body with a bound, and retries what may pass."""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar
from urllib.parse import urljoin, urlsplit

from dspark_ckpt.model.codes import ErrorCode

PREFETCH = 100 * 1024  # one ranged read covers the 8-byte length and any header up to ~100 KiB
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
# The operational codes of a refused answer; a per-file refusal carries its code in the finding's message.
REDIRECT_REFUSED: Final[ErrorCode] = "DSP-E090"
REDIRECT_LOOP: Final[ErrorCode] = "DSP-E091"
OVER_BUDGET: Final[ErrorCode] = "DSP-E092"
PAST_DEADLINE: Final[ErrorCode] = "DSP-E093"
MALFORMED: Final[ErrorCode] = "DSP-E094"
_HUB_HOSTS = ("huggingface.co", "hf.co")  # the official endpoint may redirect to its CDN under these domains
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """At most `attempts` tries; waits double from `base_s`, capped; a Retry-After above `max_wait_s` is not waited.

    `timeout_s` bounds each network wait (connect, each read); `deadline_s` bounds a whole request, its retries and
    waits included, however the server trickles its bytes.
    """

    attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 8.0
    max_wait_s: float = 30.0
    timeout_s: float = 10.0
    deadline_s: float = 30.0
    min_rate: float = 1_000_000.0  # bytes/s: a whole-file download may take deadline_s + size / min_rate
    deadline_knob: str = "DSPARK_CKPT_HUB_DEADLINE"  # what a DSP-E093 message says raises the deadline

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """DSPARK_CKPT_HUB_TIMEOUT (seconds per wait), DSPARK_CKPT_HUB_RETRIES (extra tries), DSPARK_CKPT_HUB_BACKOFF
        (first wait), DSPARK_CKPT_HUB_DEADLINE (seconds per request, retries included; default three timeouts) and
        DSPARK_CKPT_HUB_MIN_RATE (bytes per second a whole-file download must average; default 1 MB/s) tune it."""
        default = cls()
        timeout = _env_float("DSPARK_CKPT_HUB_TIMEOUT", default.timeout_s) or default.timeout_s
        retries = int(min(_env_float("DSPARK_CKPT_HUB_RETRIES", default.attempts - 1), 100))
        backoff = _env_float("DSPARK_CKPT_HUB_BACKOFF", default.base_s)
        deadline = _env_float("DSPARK_CKPT_HUB_DEADLINE", 3 * timeout) or 3 * timeout
        rate = _env_float("DSPARK_CKPT_HUB_MIN_RATE", default.min_rate) or default.min_rate
        return cls(attempts=max(1, retries + 1), timeout_s=timeout, base_s=backoff, deadline_s=deadline,
                   min_rate=rate)

    def for_transfer(self, size: int) -> RetryPolicy:
        """The policy of one whole-file transfer of `size` bytes (a `fix --push` download, or its pull request's
        upload): its deadline grows with the size."""
        return replace(self, deadline_s=self.deadline_s + size / self.min_rate,
                       deadline_knob="DSPARK_CKPT_HUB_MIN_RATE (lower) or DSPARK_CKPT_HUB_DEADLINE")

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
    return value if 0 <= value < float("inf") else default


def retry_after_seconds(headers: object) -> float | None:
    value = getattr(headers, "get", lambda _k: None)("Retry-After")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff
    return max(0.0, seconds) if seconds is not None and seconds < float("inf") else None


class Retryable(Exception):
    """One failed try that may succeed later (rate limit, 5xx, timeout, cut connection)."""

    def __init__(self, why: str, retry_after: float | None = None, *, rate_limited: bool = False) -> None:
        super().__init__(why)
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        self.attempts = 1


class Refused(OSError):
    """An answer refused for a reason retrying cannot fix (a redirect off the host, too many bytes, too slow, a
    malformed answer); `code` is its operational code, which the message starts with."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.detail = message


def with_retries(policy: RetryPolicy, attempt_once: Callable[[], T], sleep: Callable[[float], None] = time.sleep,
                 deadline: float | None = None) -> T:
    """Run `attempt_once` until it stops raising Retryable, the policy says stop, or the next wait would end past
    `deadline` (a request's overall deadline covers its retries too). The last Retryable escapes, with `attempts`
    set to the number of tries made; so does the one before a retry that the deadline cut short (DSP-E093 only
    when the deadline, not a failure that retrying could not fix in time, is the cause)."""
    attempt = 0
    last: Retryable | None = None
    while True:
        try:
            return attempt_once()
        except Refused as exc:
            if exc.code == PAST_DEADLINE and last is not None:
                last.attempts = attempt + 1
                raise last from None
            raise
        except Retryable as exc:
            last = exc
            exc.attempts = attempt + 1
            wait = policy.wait_for(attempt, exc.retry_after)
            if wait is None or (deadline is not None and time.monotonic() + wait >= deadline):
                raise
            sleep(wait)
            attempt += 1


def tries(exc: Retryable) -> str:
    return f"{exc.attempts} attempt{'s' if exc.attempts != 1 else ''}"


@dataclass
class FetchLog:
    """What a source fetched: ranged requests and body bytes, and whether a server ignored a Range header."""

    requests: int = 0
    bytes: int = 0
    range_ignored: list[str] = field(default_factory=list)


# --- one GET, bounded ------------------------------------------------------------------------------------------


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return parts.scheme, (parts.hostname or "").lower(), port


def _may_follow(start: str, target: str) -> bool:
    """Same scheme, host and port as the request began with; or, from the official Hub, its CDN over https."""
    (scheme, host, _), (to_scheme, to_host, _) = _origin(start), _origin(target)
    if _origin(start) == _origin(target):
        return True
    official = host in _HUB_HOSTS or any(host.endswith("." + h) for h in _HUB_HOSTS)
    return (official and scheme == "https" and to_scheme == "https"
            and any(to_host == h or to_host.endswith("." + h) for h in _HUB_HOSTS))


def shown_url(url: str, limit: int = 120) -> str:
    """A URL for a message: no query (a signed CDN URL carries credentials there), cut short."""
    parts = urlsplit(url)
    text = f"{parts.scheme}://{parts.netloc}{parts.path}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _timeout(policy: RetryPolicy, deadline: float) -> Any:
    """Each wait's own timeout; the network backend shortens every one to what is left before the deadline
    (hub_deadline.py), so that a timeout and the deadline passing stay two answers (DSP-E054, DSP-E093)."""
    import httpx2

    return httpx2.Timeout(policy.timeout_s, pool=max(0.05, min(policy.timeout_s, deadline - time.monotonic())))


@contextlib.contextmanager
def open_response(url: str, *, headers: dict[str, str], policy: RetryPolicy, deadline: float) -> Iterator[Any]:
    """The final response of a GET (its body not yet read), redirects followed by hand: only those `_may_follow`
    allows, each URL once, at most MAX_REDIRECTS; the Authorization header never leaves the starting host. Every
    socket operation, each redirect's included, ends by `deadline` (DeadlinePassed, which `transient` makes
    DSP-E093)."""
    from dspark_ckpt.sources.hub_deadline import client, deadline_scope

    seen = {url}
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        sent = headers if _origin(current) == _origin(url) else {k: v for k, v in headers.items()
                                                               if k.lower() != "authorization"}
        # every socket operation (connect, TLS, status line, headers, body) ends by the deadline: hub_deadline.py
        with deadline_scope(deadline), client().stream("GET", current, headers=sent,
                                                       timeout=_timeout(policy, deadline)) as resp:
            location = resp.headers.get("location")
            if resp.status_code not in REDIRECT_STATUSES or not location:
                yield resp
                return
            target = urljoin(current, location)
        if not _may_follow(url, target):
            raise Refused(REDIRECT_REFUSED, f"the server redirected {shown_url(current)} to another host "
                                            f"({shown_url(target)}); redirects are followed within "
                                            f"{_origin(url)[1]} only")
        if target in seen:
            raise Refused(REDIRECT_LOOP, f"the server's redirects loop back to {shown_url(target)}")
        seen.add(target)
        current = target
    raise Refused(REDIRECT_LOOP, f"more than {MAX_REDIRECTS} redirects from {shown_url(url)}")


def _decoder(encoding: str, what: str) -> Callable[[bytes, int], bytes]:
    """Bytes as sent -> bytes of the body, producing at most `room` bytes per call (a gzip bomb stays bounded)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return lambda chunk, _room: chunk
    if encoding in ("gzip", "x-gzip", "deflate"):
        state = [zlib.decompressobj(wbits=32 + zlib.MAX_WBITS)]  # gzip or zlib framing, from the header

        def decode(chunk: bytes, room: int) -> bytes:
            out = b""
            try:
                while chunk or state[0].unconsumed_tail:
                    inflate = state[0]
                    out += inflate.decompress(inflate.unconsumed_tail + chunk, max(1, room - len(out)))
                    chunk = b""
                    if inflate.eof and inflate.unused_data:  # another gzip member follows: it counts too
                        chunk = inflate.unused_data
                        state[0] = zlib.decompressobj(wbits=32 + zlib.MAX_WBITS)
                    if len(out) >= room:
                        break
            except zlib.error as exc:
                raise Refused(MALFORMED, f"{what}: the {encoding} body does not decompress ({exc})") from None
            return out

        return decode
    raise Refused(MALFORMED, f"{what}: the server sent it with Content-Encoding {encoding[:40]!r}, which "
                             "dspark-ckpt does not decode")


def _seconds(value: float) -> str:
    return f"{value:g}" if value < 100 else f"{value:,.0f}"


def past_deadline(what: str, policy: RetryPolicy, got: int | None = None) -> Refused:
    by_then = f"{got:,} bytes of the body by then" if got is not None else "before the answer was complete"
    return Refused(PAST_DEADLINE, f"{what}: the request took longer than its {_seconds(policy.deadline_s)} s deadline "
                                  f"({by_then}; {policy.deadline_knob} raises the limit)")


def check_time(deadline: float, policy: RetryPolicy, what: str, got: int) -> None:
    """DSP-E093, with the `got` bytes read by then, once `deadline` has passed."""
    if time.monotonic() > deadline:
        raise past_deadline(what, policy, got)


def require_ok(resp: Any) -> None:
    """A 200 answer goes on; a status worth retrying is Retryable (with its Retry-After), any other HttpStatus."""
    status = resp.status_code
    if status in RETRY_STATUSES:
        raise Retryable(f"HTTP {status}", retry_after_seconds(resp.headers), rate_limited=status == 429)
    if status != 200:
        raise HttpStatus(status, resp.headers)


def refuse_announced_over(resp: Any, limit: int, what: str, budget: str = "allowed") -> None:
    """DSP-E092 before any byte is read when the Content-Length announces more than `limit` (`budget`: whose)."""
    declared = resp.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Refused(OVER_BUDGET, f"{what}: the server announces {int(declared):,} bytes, more than the {limit:,} "
                                   f"{budget}")


def read_body(resp: Any, *, limit: int, deadline: float, policy: RetryPolicy, what: str) -> bytes:
    """The whole body, decoded, of at most `limit` bytes (more is refused as it arrives, never buffered)."""
    encoding = resp.headers.get("content-encoding", "")
    decode = _decoder(encoding, what)
    if not encoding:  # a compressed body's length says nothing of what it decompresses to
        refuse_announced_over(resp, limit, what)
    got = bytearray()
    for chunk in body_chunks(resp, policy, what, got):  # as the bytes arrive: no chunk size to fill
        got += decode(chunk, limit + 1 - len(got))
        if len(got) > limit:
            why = "decompresses to" if encoding else "is"
            raise Refused(OVER_BUDGET, f"{what}: the answer {why} more than the {limit:,} bytes allowed")
        check_time(deadline, policy, what, len(got))
    return bytes(got)


def body_chunks(resp: Any, policy: RetryPolicy, what: str, got: bytearray | list[int]) -> Iterator[bytes]:
    """The body as it arrives; the deadline passing mid-body is DSP-E093 with the bytes read by then (`got`: the
    caller's bytes so far, or a one-item list of their count)."""
    from dspark_ckpt.sources.hub_deadline import DeadlinePassed

    try:
        yield from resp.iter_raw()
    except DeadlinePassed:
        raise past_deadline(what, policy, len(got) if isinstance(got, bytearray) else got[0]) from None


def status_message(status: int) -> str:
    why = {401: "authentication required (gated or private repo: pass --token or set HF_TOKEN)",
           403: "access denied for this token", 404: "not found at this revision",
           416: "range not satisfiable (the file is shorter than the Hub reports)"}
    return f"HTTP {status}: {why.get(status, 'unexpected answer')}"


class HttpStatus(OSError):
    """A definitive answer other than the one asked for (4xx, an unexpected 3xx or 2xx); `headers` say why."""

    def __init__(self, status: int, headers: Any) -> None:
        super().__init__(status_message(status))
        self.status = status
        self.error_code = str(headers.get("x-error-code", ""))[:64]
        self.error_message = str(headers.get("x-error-message", ""))[:200]


def get_once(url: str, *, headers: dict[str, str], policy: RetryPolicy, limit: int, what: str,
             deadline: float) -> bytes:
    """One bounded GET of a whole (small) document, to end by `deadline`. Raises Retryable (may pass on a retry),
    Refused (never will), or HttpStatus (a definitive other answer)."""
    with network_errors_as_transient(policy, what), open_response(
            url, headers={**headers, "Accept-Encoding": "gzip, identity"}, policy=policy, deadline=deadline) as resp:
        require_ok(resp)
        return read_body(resp, limit=limit, deadline=deadline, policy=policy, what=what)


def read_prefix(resp: Any, want: int, *, deadline: float, policy: RetryPolicy, what: str, log: FetchLog) -> bytes:
    """The first `want` bytes of an identity body; reading stops as soon as they are in (then the connection goes)."""
    encoding = resp.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise Refused(MALFORMED, f"{what}: the server compressed a byte range (Content-Encoding "
                                 f"{encoding[:40]!r}), so its offsets are not the file's")
    got = bytearray()
    for chunk in body_chunks(resp, policy, what, got):
        log.bytes += len(chunk)
        got += chunk
        if len(got) >= want:
            break
        check_time(deadline, policy, what, len(got))
    return bytes(got[:want])


def transient(exc: Exception, policy: RetryPolicy, what: str = "the request") -> Retryable | Refused | None:
    """A network failure as a Retryable (timeouts, refused or cut connections), the request's deadline passing
    (in the headers, or in a wait clamped to it) as Refused DSP-E093, None for anything else."""
    import httpx2

    from dspark_ckpt.sources.hub_deadline import DeadlinePassed

    if isinstance(exc, DeadlinePassed):
        return past_deadline(what, policy)
    if isinstance(exc, httpx2.TimeoutException):
        return Retryable(f"timed out after {policy.timeout_s:g} s")
    if isinstance(exc, httpx2.TransportError):  # refused, reset, or a body cut short (RemoteProtocolError)
        return Retryable(f"connection failed ({exc.__class__.__name__})")
    return None


@contextlib.contextmanager
def network_errors_as_transient(policy: RetryPolicy, what: str,
                                own: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Inside: a network failure leaves as `transient`'s Retryable or Refused; this module's own answers
    (Refused, Retryable, HttpStatus, and `own`) and anything else leave unchanged."""
    passthrough: tuple[type[BaseException], ...] = (Refused, Retryable, HttpStatus, *own)
    try:
        yield
    except passthrough:
        raise
    except Exception as exc:
        retry = transient(exc, policy, what)
        if retry is None:
            raise
        raise retry from exc
