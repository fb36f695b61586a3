"""Release ordering for the contract table: PEP 440 versions compared at the granularity a runtime's rows use.

vLLM rows name minors (0.29.x all behave alike); SGLang rows name releases down to the post release, because
0.5.4.post2 already carries 0.5.5's EAGLE-3 code while 0.5.4.post1 does not.
"""

from __future__ import annotations

import re
from functools import cache

# The releases whose released code dspark-ckpt has read, oldest first: the one list per runtime. Every other release
# list and every per-release table in runtimes/ derives from these or is keyed by them
# (tests/unit/test_release_list.py fails on a second hand-kept list). A new release is one entry here.
VLLM_RELEASES: tuple[str, ...] = (
    "0.12.0", "0.13.0", "0.14.0", "0.14.1",
    "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.1", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1", "0.26.0",
    "0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0",
)
# SGLang: every base release read, plus the one post release whose behaviour differs from its base.
SGLANG_RELEASES: tuple[str, ...] = (
    "0.4.2", "0.4.3", "0.4.3.post1", "0.4.4", "0.4.4.post2", "0.4.5", "0.4.6", "0.4.6.post5", "0.4.7", "0.4.8",
    "0.4.9", "0.4.9.post5", "0.4.10", "0.5.1", "0.5.2", "0.5.3", "0.5.4", "0.5.4.post2", "0.5.5", "0.5.6", "0.5.7",
    "0.5.8", "0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18",
    "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23",
)
# SGLang post releases read too, whose files that matter here equal their base release (`sglang==X` takes them as
# known); not rows of their own.
SGLANG_POSTS_READ: tuple[str, ...] = (
    "0.4.2.post1", "0.4.2.post2", "0.4.2.post3", "0.4.2.post4", "0.4.3.post2", "0.4.3.post3", "0.4.3.post4",
    "0.4.4.post1", "0.4.4.post3", "0.4.4.post4", "0.4.5.post1", "0.4.5.post2", "0.4.5.post3", "0.4.6.post1",
    "0.4.6.post2", "0.4.6.post3", "0.4.6.post4", "0.4.7.post1", "0.4.8.post1", "0.4.9.post1", "0.4.9.post2",
    "0.4.9.post3", "0.4.9.post4", "0.4.9.post6", "0.4.10.post1", "0.4.10.post2", "0.5.1.post1", "0.5.1.post2",
    "0.5.1.post3", "0.5.3.post1", "0.5.3.post2", "0.5.3.post3", "0.5.4.post1", "0.5.4.post3", "0.5.5.post1",
    "0.5.5.post2", "0.5.5.post3", "0.5.6.post1", "0.5.6.post2", "0.5.8.post1", "0.5.10.post1", "0.5.12.post1",
    "0.5.13.post1", "0.5.15.post1",
)
POST_ANY = 1 << 30  # an upper bound without `.postN` covers every post release of that release
# How many release components a runtime's rows distinguish (the rest, and rc/dev/local parts, are ignored).
PRECISION = {"vllm": 2, "sglang": 3}


# Every release the lists hold and every version a run usually names: X.Y.Z, optionally .postN.
_PLAIN = re.compile(r"(\d+(?:\.\d+)*)(?:\.post(\d+))?")


class InvalidVersion(ValueError):
    """Text that is not a PEP 440 version."""


def parts(text: str) -> tuple[tuple[int, ...], int | None]:
    """The release numbers and the post release of a version (rc/dev/local parts dropped). A plain X.Y.Z[.postN] is
    read directly; anything else by packaging's PEP 440 parser, imported only then (its import and pattern cost
    check's start-up ~2.5 ms; docs/architecture.md, "Start-up"). Raises InvalidVersion for text that is no version."""
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        return tuple(int(p) for p in plain[1].split(".")), (int(plain[2]) if plain[2] is not None else None)
    from packaging.version import InvalidVersion as NotPep440
    from packaging.version import Version

    try:
        version = Version(text)
    except NotPep440 as exc:
        raise InvalidVersion(str(exc)) from exc
    return version.release, version.post


@cache  # nearest_listed compares every listed release per lookup
def order_key(text: str) -> tuple[tuple[int, ...], int]:
    """Orders versions as PEP 440 orders final and post releases: 0.30 == 0.30.0 < 0.30.0.post1 < 0.30.1. Raises
    InvalidVersion."""
    release, post = parts(text)
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    return release, -1 if post is None else post


@cache  # the rows' bounds are compared for every (row, release) a run evaluates: parse each text once
def release_key(text: str, *, precision: int = 3, upper: bool = False) -> tuple[int, ...]:
    """(major, minor[, micro], post) for ordering; `upper` makes a bound without a post cover all of its posts.
    Raises InvalidVersion for text that is not a version."""
    release, post = parts(text)
    numbers = (release + (0, 0, 0))[:precision]
    if precision < 3:
        return numbers
    return (*numbers, post if post is not None else (POST_ANY if upper else -1))


def in_range(runtime: str, first: str, last: str, version: str) -> bool:
    """first <= version <= last at the runtime's row granularity (vLLM by minor, SGLang by release and post)."""
    precision = PRECISION.get(runtime, 3)
    try:
        key = release_key(version, precision=precision)
        return (release_key(first, precision=precision) <= key
                <= release_key(last, precision=precision, upper=True))
    except InvalidVersion:
        return False


def normalise(text: str) -> str:
    """A release as the table names it: at least X.Y.Z, with a post release kept (0.5.4.post2), rc/dev/local
    parts dropped. Raises InvalidVersion for text that is not a version."""
    release, post = parts(text)
    base = ".".join(str(p) for p in (release + (0, 0))[: max(3, len(release))])
    return f"{base}.post{post}" if post is not None else base


def distance(a: str, b: str) -> tuple[int, ...]:
    """How far apart two releases are, for picking the nearest row: component-wise absolute differences."""
    ka, kb = release_key(a), release_key(b)
    return tuple(abs(x - y) for x, y in zip(ka, kb))


def nearest_listed(releases: tuple[str, ...], version: str) -> str:
    """The listed release whose data describes `version`: itself, else the newest listed release before it (0.27.3:
    0.27.1; a release newer than every listed one: the newest), else the oldest listed (a release before them all).
    `releases` is in ascending order; text that is no version gets the newest."""
    try:
        key = order_key(version)
    except InvalidVersion:
        return releases[-1]
    before = [r for r in releases if order_key(r) <= key]
    return before[-1] if before else releases[0]


_LEADING_ZERO = re.compile(r"(?:^|\.)0\d")


def malformed(text: str) -> bool:
    """A version no runtime release is written as, though PEP 440 reads it: a number with a leading zero (`033`,
    read as 33) or a bare major (`33`). A typo, not a release newer than the list (issue 41)."""
    numbers = text.split("+", 1)[0]
    return bool(_LEADING_ZERO.search(numbers)) or "." not in numbers


def never_released(releases: tuple[str, ...], version: str) -> bool:
    """Inside the listed range (oldest..newest listed release) but not listed itself: a release that does not
    exist (`vllm==0.33.2`). A version past the newest listed one is not this: it may be new (DSP220)."""
    key = order_key(version)
    return order_key(releases[0]) <= key <= order_key(releases[-1]) and all(order_key(r) != key for r in releases)


def nearest_releases(releases: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The listed releases a user most likely meant: for a malformed text those whose numbers hold every non-zero
    number it gives (`033` -> 0.33.0), else the listed release just before and just after it."""
    given = {int(n) for n in re.findall(r"\d+", text.split("+", 1)[0]) if int(n)}
    if malformed(text) and given:
        hits = [r for r in releases if given <= set(parts(r)[0])]
        if hits:
            return tuple(dict.fromkeys((hits[0], hits[-1])))
    try:
        key = order_key(text)
    except InvalidVersion:
        return releases[-1:]
    before = [r for r in releases if order_key(r) < key]
    after = [r for r in releases if order_key(r) > key]
    return tuple(r for r in (before[-1] if before else None, after[0] if after else None) if r is not None)
