"""Groups of listed vLLM releases for tests, derived from the one list (runtimes/versions.py) by minor, the
granularity vLLM's contract rows cover: a release appended to the list joins its group with no test edit."""

from __future__ import annotations

from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.versions import VLLM_RELEASES


def _minor(version: str) -> tuple[int, ...]:
    return release_key(version, precision=2)


def vllm_minors(first: str, last: str | None = None) -> tuple[str, ...]:
    """The listed vLLM releases of the minors first..last (last None: through the newest listed release)."""
    return tuple(v for v in VLLM_RELEASES
                 if _minor(first) <= _minor(v) and (last is None or _minor(v) <= _minor(last)))


def vllm_before(first: str) -> tuple[str, ...]:
    """The listed vLLM releases of minors older than `first`'s (e.g. those before a family's registration)."""
    return tuple(v for v in VLLM_RELEASES if _minor(v) < _minor(first))
