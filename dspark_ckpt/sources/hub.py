"""Hub repos as checkpoint sources: one revision resolved to a commit, JSON files cached, shard headers ranged."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final
from urllib.parse import quote

from dspark_ckpt.errors import SourceError
from dspark_ckpt.formats.json_doc import Document, JsonProblem, ProblemKind, RefusedFile, read_document
from dspark_ckpt.model.codes import ErrorCode
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.sources import hub_cache
from dspark_ckpt.sources.base import CONFIG_NAME, MAX_JSON_BYTES, PathStatus, is_safe_relative
from dspark_ckpt.sources.hub_download import DIGEST_MISMATCH, download_to, file_sha256
from dspark_ckpt.sources.hub_http import (
    OVER_BUDGET,
    PAST_DEADLINE,
    REDIRECT_REFUSED,
    RETRY_STATUSES,
    FetchLog,
    HttpStatus,
    Refused,
    Retryable,
    RetryPolicy,
    get_once,
    retry_after_seconds,
    tries,
    with_retries,
)
from dspark_ckpt.sources.hub_listing import ListingProblem, parse_listing
from dspark_ckpt.sources.hub_ranges import RangedFile, fetch_range

TOKEN_HINT = "pass --token, set HF_TOKEN, or run `hf auth login`"
_NOT_LIKE_THE_HUB = "the endpoint does not answer like the Hub: check HF_ENDPOINT"
_NOT_THE_LISTED_FILE = "the file is not the one the Hub lists: check HF_ENDPOINT, or retry later"
_REFUSED_HINT = {OVER_BUDGET: _NOT_THE_LISTED_FILE, DIGEST_MISMATCH: _NOT_THE_LISTED_FILE,
                 PAST_DEADLINE: "lower DSPARK_CKPT_HUB_MIN_RATE (bytes per second) or raise DSPARK_CKPT_HUB_DEADLINE",
                 REDIRECT_REFUSED: "point HF_ENDPOINT at a server that answers itself, or at the Hub"}
CACHE_UNWRITABLE: Final[ErrorCode] = "DSP-E096"
# A file's answer that speaks for the whole repo (not found or private, gated): raised as it is, not as one file's
# read error.
_REPO_UNREACHABLE: frozenset[ErrorCode] = frozenset({"DSP-E050", "DSP-E051"})


@dataclass(frozen=True, slots=True)
class RepoSpec:
    """A Hub repo id and the revision asked for."""

    repo_id: str
    revision: str | None  # as asked (a branch, tag, PR ref or commit); None means main

    @property
    def display(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.revision else self.repo_id


def parse_repo_spec(spec: str) -> RepoSpec | None:
    """`org/repo`, `org/repo@rev` or `hf://org/repo[@rev]`; None when `spec` cannot be a Hub model id."""
    # validate_repo_id is public, but huggingface_hub.utils builds __all__ at runtime: mypy sees no re-export
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]

    body = spec.removeprefix("hf://")
    repo_id, at, revision = body.partition("@")
    if repo_id.count("/") != 1 or (at and not revision):
        return None
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        return None
    return RepoSpec(repo_id, revision or None)


@dataclass(frozen=True, slots=True)
class HubClient:
    """How to talk to the Hub: the token (None: HF_TOKEN or the login file) and the retry/timeout policy."""

    token: str | None = None
    policy: RetryPolicy = field(default_factory=RetryPolicy.from_env)

    @property
    def offline(self) -> bool:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)

    def headers(self) -> dict[str, str]:
        # public at runtime, but huggingface_hub.utils builds __all__ dynamically, so mypy sees no re-export
        from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]

        return build_hf_headers(token=self.token, library_name="dspark-ckpt")


@dataclass(frozen=True, slots=True)
class Resolved:
    """A revision pinned to one commit, with every file the commit holds and its size."""

    spec: RepoSpec
    sha: str
    sizes: dict[str, int | None]
    complete: bool = True  # False offline when only a partial cache snapshot lists the files
    invalid: tuple[str, ...] = ()  # listing entries that were ignored or lost their size (DSP703)
    sha256: dict[str, str] = field(default_factory=dict)  # LFS files' sha256 as listed (a download must match)


def resolve(spec: RepoSpec, client: HubClient) -> Resolved:
    """The single place a branch or tag becomes a commit; every later request names the commit."""
    if client.offline:
        return resolve_offline(spec)
    listing = parse_listing(_model_info(spec, client))
    if isinstance(listing, ListingProblem):
        raise SourceError(f"{spec.display}: {listing.message}", code=listing.code,
                          hint=_NOT_LIKE_THE_HUB)
    hub_cache.remember(spec.repo_id, spec.revision, listing.sha, listing.sizes)
    return Resolved(spec, listing.sha, listing.sizes, invalid=listing.invalid, sha256=listing.sha256)


def _model_info(spec: RepoSpec, client: HubClient) -> bytes:
    """model_info with every file's size, as raw JSON: one bounded GET (retried within the policy)."""
    from huggingface_hub import constants

    revision = f"/revision/{quote(spec.revision, safe='')}" if spec.revision else ""
    url = f"{constants.ENDPOINT}/api/models/{spec.repo_id}{revision}?blobs=true"
    try:
        deadline = time.monotonic() + client.policy.deadline_s
        return with_retries(client.policy, lambda: get_once(url, headers=client.headers(), policy=client.policy,
                                                            limit=MAX_JSON_BYTES, what="model_info",
                                                            deadline=deadline), deadline=deadline)
    except Retryable as exc:
        raise _transient_error(spec, client, exc) from None
    except HttpStatus as exc:
        raise answer_error(spec, exc, api=True) from None
    except Refused as exc:
        raise SourceError(f"{spec.display}: {exc.detail}", code=exc.code,
                          hint=_NOT_LIKE_THE_HUB) from None


def resolve_offline(spec: RepoSpec) -> Resolved:
    found = hub_cache.lookup(spec.repo_id, spec.revision)
    if found is None:
        raise SourceError(f"{spec.display} is not in the local Hugging Face cache and HF_HUB_OFFLINE=1 is set",
                          code="DSP-E056", hint="check it once online (or download it), or unset HF_HUB_OFFLINE")
    sha, sizes, complete = found
    return Resolved(spec, sha, sizes, complete)


def with_hub_errors(spec: RepoSpec, client: HubClient, call: Any, policy: RetryPolicy | None = None) -> Any:
    """Run a Hub API call with bounded retries; map what still fails to a SourceError with a stable code. A call
    made inside a deadline scope (hub_deadline.py) that runs past it is DSP-E093, never retried."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    from dspark_ckpt.sources.hub_deadline import DeadlinePassed
    from dspark_ckpt.sources.hub_http import past_deadline

    def once() -> Any:
        try:
            return call()
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            if status in RETRY_STATUSES:
                raise Retryable(f"HTTP {status}", retry_after_seconds(exc.response.headers),
                                rate_limited=status == 429) from exc
            raise
        except httpx2.TimeoutException as exc:
            raise Retryable(f"timed out after {client.policy.timeout_s:g} s") from exc
        except httpx2.TransportError as exc:
            raise Retryable(f"connection failed ({exc.__class__.__name__})") from exc

    try:
        return with_retries(client.policy, once)
    except Retryable as exc:
        raise _transient_error(spec, client, exc) from None
    except HfHubHTTPError as exc:
        raise hub_error(spec, exc) from None
    except DeadlinePassed:
        late = past_deadline("the Hub API call", policy or client.policy)
        raise SourceError(f"{spec.display}: {late.detail}", code=late.code,
                          hint=_REFUSED_HINT[PAST_DEADLINE]) from None


def _transient_error(spec: RepoSpec, client: HubClient, exc: Retryable) -> SourceError:
    from huggingface_hub import constants

    tried = f"after {tries(exc)}"
    if exc.rate_limited:
        wait = f"; the Hub asks to wait {exc.retry_after:g} s" if exc.retry_after is not None else ""
        return SourceError(f"{spec.display}: rate limited by the Hub (HTTP 429) {tried}{wait}", code="DSP-E053",
                           hint="wait and retry, use a token (higher limits), or lower --jobs")
    return SourceError(f"{spec.display}: cannot reach the Hub at {constants.ENDPOINT}: {exc} {tried}",
                       code="DSP-E054", hint="check the network, HF_ENDPOINT, or raise DSPARK_CKPT_HUB_TIMEOUT")


def hub_error(spec: RepoSpec, exc: Exception) -> SourceError:
    """A definitive Hub answer (not worth retrying) as an operational error; the token never appears."""
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, GatedRepoError) or (status in (401, 403) and not isinstance(exc, RepositoryNotFoundError)):
        return SourceError(f"{spec.repo_id}: access denied (HTTP {status}): the repo is gated or private and "
                           "no token with access was sent", code="DSP-E051",
                           hint=f"accept the repo's conditions on the Hub, then {TOKEN_HINT}")
    if isinstance(exc, RepositoryNotFoundError):
        return SourceError(f"{spec.repo_id}: repository not found on the Hub (or private)", code="DSP-E050",
                           hint=f"check the name; for a private repo {TOKEN_HINT}")
    if isinstance(exc, RevisionNotFoundError):
        return SourceError(f"{spec.repo_id}: revision {spec.revision!r} not found", code="DSP-E052",
                           hint="give a branch, tag, PR ref (refs/pr/N) or commit that exists")
    return SourceError(f"{spec.display}: the Hub answered HTTP {status}", code="DSP-E054")


def answer_error(spec: RepoSpec, exc: HttpStatus, *, api: bool = False) -> SourceError:
    """An HTTP answer of our own transport, classified as huggingface_hub classifies it (X-Error-Code first)."""
    status, code = exc.status, exc.error_code
    if code == "RevisionNotFound":
        return SourceError(f"{spec.repo_id}: revision {spec.revision!r} not found", code="DSP-E052",
                           hint="give a branch, tag, PR ref (refs/pr/N) or commit that exists")
    not_found = code == "RepoNotFound" or (api and status in (401, 404) and code != "GatedRepo"
                                             and "Invalid credentials" not in exc.error_message)
    if not_found:
        return SourceError(f"{spec.repo_id}: repository not found on the Hub (or private)", code="DSP-E050",
                           hint=f"check the name; for a private repo {TOKEN_HINT}")
    if code == "GatedRepo" or status in (401, 403):
        return SourceError(f"{spec.repo_id}: access denied (HTTP {status}): the repo is gated or private and "
                           "no token with access was sent", code="DSP-E051",
                           hint=f"accept the repo's conditions on the Hub, then {TOKEN_HINT}")
    return SourceError(f"{spec.display}: the Hub answered HTTP {status}", code="DSP-E054")


class HubSource:
    """A Hub repo at one commit, behind the CheckpointSource protocol. Reads never follow a moved branch."""

    def __init__(self, resolved: Resolved, client: HubClient) -> None:
        self.resolved, self.client = resolved, client
        self.spec = resolved.spec
        self.fetch_log = FetchLog()
        self._files: dict[str, RangedFile] = {}

    @property
    def display(self) -> str:
        return self.spec.display

    @property
    def local_folder(self) -> Path | None:
        return None  # only ranges of the files are ever fetched

    @property
    def revision(self) -> str | None:
        return self.resolved.sha

    @property
    def repo_id(self) -> str:
        return self.spec.repo_id

    def read_text_file(self, name: str) -> bytes | None:
        if name not in self.resolved.sizes:
            return None
        size = self.resolved.sizes[name]
        if size is not None and size > MAX_JSON_BYTES:
            raise RefusedFile(ProblemKind.TOO_LARGE, f"is {size:,} bytes (as the Hub lists it), above the "
                                                 f"{MAX_JSON_BYTES:,}-byte limit")
        if self.client.offline:
            return hub_cache.read_snapshot_file(self.repo_id, self.resolved.sha, name)
        data = self._fetch_small(name, size)
        hub_cache.store_snapshot_file(self.repo_id, self.resolved.sha, name, data)  # offline mode finds it there
        return data

    def _fetch_small(self, name: str, size: int | None) -> bytes:
        """A small file at the pinned commit, in one bounded GET: no more bytes than the listing gives it."""
        from huggingface_hub import hf_hub_url

        url = hf_hub_url(self.repo_id, name, revision=self.resolved.sha)
        policy = self.client.policy
        limit = size if size is not None else MAX_JSON_BYTES
        what = f"{name} (listed as {size:,} bytes)" if size is not None else name
        try:
            deadline = time.monotonic() + policy.deadline_s
            data = with_retries(policy, lambda: self._exactly(get_once(
                url, headers=self.client.headers(), policy=policy, limit=limit, what=what, deadline=deadline), size),
                deadline=deadline)
        except HttpStatus as exc:
            error = answer_error(self.spec, exc)
            if error.code in _REPO_UNREACHABLE:
                raise error from None  # the whole repo is out of reach, not just this file
            raise OSError(str(exc)) from None
        except Retryable as exc:
            raise OSError(f"failed: {exc} ({tries(exc)})") from None
        return data

    def download(self, name: str) -> str:
        """The whole file, at the pinned commit, in the HF cache's snapshot folder (for `fix --push`, which rewrites
        files); its local path. One bounded GET (hub_download.py): no more bytes than the listing gives the file,
        within a deadline that grows with its size. `check` never calls this: it reads small files with
        `_fetch_small` and shards by ranges. Raises SourceError with the code of what went wrong."""
        from huggingface_hub import hf_hub_url

        if not is_safe_relative(name):
            raise OSError(f"refusing to download {name[:60]!r}: not a relative path inside the repo")
        path = hub_cache.snapshot_file(self.repo_id, self.resolved.sha, name)
        listed = self.resolved.sizes.get(name)
        size = listed if listed is not None else MAX_JSON_BYTES if name.endswith(".json") else None
        digest = self.resolved.sha256.get(name)
        if path.is_file() and (listed is None or path.stat().st_size == listed) and (
                digest is None or file_sha256(path) == digest):
            return str(path)  # already in the snapshot (an earlier push, or hf_hub_download), and the listed file
        if self.client.offline:
            raise SourceError(f"{self.display}: {name} is {hub_cache.OFFLINE}", code="DSP-E056",
                              hint="download it once online, or unset HF_HUB_OFFLINE")
        if size is None:
            raise SourceError(f"{self.display}: the Hub lists no size for {name}, so its download would have no "
                              "byte budget", code=OVER_BUDGET, hint=_NOT_LIKE_THE_HUB)
        url = hf_hub_url(self.repo_id, name, revision=self.resolved.sha)
        what = f"{name} ({size:,} bytes listed)" if listed is not None else name
        try:
            download_to(url, path, size=size, headers=self.client.headers(), policy=self.client.policy, what=what,
                        exact=listed is not None, sha256=digest)
        except Refused as exc:
            raise SourceError(f"{self.display}: {exc.detail}", code=exc.code,
                              hint=_REFUSED_HINT.get(exc.code, _NOT_LIKE_THE_HUB)) from None
        except HttpStatus as exc:
            raise answer_error(self.spec, exc) from None
        except Retryable as exc:
            raise _transient_error(self.spec, self.client, exc) from None
        except OSError as exc:  # the local side: the cache folder cannot be written
            raise SourceError(f"{self.display}: cannot write {name} into the Hugging Face cache ({exc})",
                              code=CACHE_UNWRITABLE, hint="check the free space and permissions of HF_HOME") from None
        return str(path)

    @staticmethod
    def _exactly(data: bytes, size: int | None) -> bytes:
        if size is not None and len(data) < size:
            raise Retryable(f"short body: {len(data)} of the {size} bytes listed")
        return data

    def safetensors_files(self) -> list[str]:
        return sorted(n for n in self.resolved.sizes if n.endswith(".safetensors") and "/" not in n)

    def status(self, name: str) -> PathStatus:
        if not is_safe_relative(name):
            return PathStatus.ESCAPES
        if name in self.resolved.sizes or not self.resolved.complete:
            return PathStatus.OK  # offline from a partial snapshot: absent here is not absent on the Hub
        return PathStatus.MISSING

    def size(self, name: str) -> int:
        size = self.resolved.sizes.get(name)
        if size is None:
            raise OSError(hub_cache.OFFLINE if not self.resolved.complete else f"the Hub reports no size for {name}")
        return size

    def open(self, name: str) -> contextlib.AbstractContextManager[IO[bytes]]:
        return self._open(name)

    @contextlib.contextmanager
    def _open(self, name: str) -> Iterator[IO[bytes]]:
        if self.client.offline:
            with hub_cache.open_cached(self.repo_id, self.resolved.sha, name, self.size(name)) as cached:
                yield cached
            return
        stream = self._files.get(name)
        if stream is None:  # one per file: the d2t read after the header is served from the same fetched bytes
            stream = self._files[name] = RangedFile(lambda start, end: self._fetch(name, start, end), self.size(name))
        stream.seek(0)
        kept = len(stream.prefix)
        try:
            # a RawIOBase with every method the readers call; typeshed types only concrete files as IO[bytes]
            yield stream  # type: ignore[misc]
        finally:
            if len(stream.prefix) > kept:
                hub_cache.keep_prefix(self.repo_id, self.resolved.sha, name, stream.prefix)

    def _fetch(self, name: str, start: int, end: int) -> bytes:
        from huggingface_hub import hf_hub_url

        url = hf_hub_url(self.repo_id, name, revision=self.resolved.sha)
        return fetch_range(url, start, end, headers=self.client.headers(), policy=self.client.policy,
                           log=self.fetch_log, name=name)

    def notes(self) -> list[Finding]:
        """Findings about how the Hub answered (not about the checkpoint itself)."""
        found = [finding("DSP701", f"the server ignored the Range header for {name} and started sending the "
                                   "whole file; only the bytes needed were read, then the connection was closed.",
                         file=name) for name in self.fetch_log.range_ignored]
        if invalid := self.resolved.invalid:
            more = f" and {len(invalid) - 5:,} more" if len(invalid) > 5 else ""
            found.append(finding("DSP703", f"model_info listed {len(invalid):,} file entr"
                                           f"{'y' if len(invalid) == 1 else 'ies'} that were ignored or lost their "
                                           f"size: {'; '.join(invalid[:5])}{more}."))
        return found


def open_hub(spec: RepoSpec, *, token: str | None = None) -> HubSource:
    client = HubClient(token=token or None)
    return HubSource(resolve(spec, client), client)


def hub_target_config(spec: RepoSpec, *, token: str | None = None) -> tuple[Document | JsonProblem | None, str]:
    """A target model's config.json at a pinned commit (cached like the draft's), read by the one bounded JSON
    reader, and where it came from; None when the commit has no config.json."""
    source = open_hub(spec, token=token)
    where = f"{spec.repo_id}@{source.resolved.sha[:12]}/config.json"
    return read_document(lambda: source.read_text_file(CONFIG_NAME)), where
