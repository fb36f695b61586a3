"""One typed runtime release, parsed once, and the one policy that says which listed release's facts answer it.

Nothing else in the package parses, splits or compares version text (tests/unit/test_one_release_parser.py): a
version becomes a `Release` here (`parse`), and every per-release table (the contract rows, vLLM's release rules,
the generated release models, the EAGLE-3 aux-state lines, the registrations) asks `resolve` which of its listed
releases answers. The policy (docs/architecture.md, "Releases"):

- OWN: the release is listed.
- LINE: the newest listed release of its line at or before it: a post release reads its base (or the post release
  listed before it: SGLang 0.5.4.post3 reads 0.5.4.post2), a vLLM patch reads the listed one of its minor (0.27.3:
  0.27.1). A line is what a runtime's behaviour changes by: vLLM a minor, SGLang a release (`PRECISION`).
- NEWER: newer than every listed release: the newest (the verdict says DSP220).
- BEFORE: inside the listed span on a line nothing lists: the nearest listed release before it.
- OLDER: older than every listed release: the oldest (tables that cannot assume that refuse it: `Resolution.modelled`).

Versions are PEP 440: a plain X.Y.Z[.postN] is read directly, any other form by packaging's parser, imported only
then (its import costs check's start-up ~2.5 ms; docs/architecture.md, "Start-up").
"""

from __future__ import annotations

import re
from functools import cache

# How many release components a runtime's behaviour changes by (the rest, and rc/dev/local parts, are ignored).
PRECISION = {"vllm": 2, "sglang": 3}
POST_ANY = 1 << 30  # an upper bound without `.postN` covers every post release of that release
_PLAIN = re.compile(r"(\d+(?:\.\d+)*)(?:\.post(\d+))?")
_LEADING_ZERO = re.compile(r"(?:^|\.)0\d")
_BOUND = re.compile(r"(>=|<=)([0-9]+(?:\.[0-9]+)*(?:\.post[0-9]+)?)")  # what check/hints.py `selectors` writes


class InvalidVersion(ValueError):
    """Text that is not a PEP 440 version."""


class Release:
    """One release of one runtime, as packaging's `Version` reads it; immutable, equal and ordered as PEP 440 orders
    them (0.30 == 0.30.0 < 0.30.0.post1 < 0.30.1; an rc before its final release). A plain slotted class, its order
    key computed once: a check compares releases a few thousand times, and a frozen dataclass costs start-up
    (docs/architecture.md, "Start-up")."""

    __slots__ = ("_hash", "dev", "key", "line", "local", "numbers", "post", "pre", "runtime")
    runtime: str
    numbers: tuple[int, ...]
    post: int | None
    pre: tuple[str, int] | None
    dev: int | None
    local: str | None
    key: tuple[object, ...]
    line: tuple[int, ...]  # what the runtime's behaviour changes by: vLLM (major, minor), SGLang (major, minor, micro)
    _hash: int

    def __init__(self, runtime: str, numbers: tuple[int, ...], post: int | None = None,
                 pre: tuple[str, int] | None = None, dev: int | None = None, local: str | None = None) -> None:
        trimmed = numbers
        while len(trimmed) > 1 and trimmed[-1] == 0:
            trimmed = trimmed[:-1]
        pre_key: tuple[object, ...] = (0, pre) if pre is not None else (-1,) if post is None and dev is not None \
            else (1,)
        key = (trimmed, pre_key, -1 if post is None else post, (0, dev) if dev is not None else (1,))
        for name, value in (("runtime", runtime), ("numbers", tuple(numbers)), ("post", post), ("pre", pre),
                            ("dev", dev), ("local", local), ("key", key), ("_hash", hash((runtime, key))),
                            ("line", (numbers + (0, 0, 0))[: PRECISION.get(runtime, 3)])):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Release is immutable ({name})")

    def __repr__(self) -> str:
        return f"Release({self.runtime!r}, {self.numbers!r}, post={self.post!r}, pre={self.pre!r}, " \
               f"dev={self.dev!r}, local={self.local!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Release) and self.runtime == other.runtime and self.key == other.key

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: Release) -> bool:
        return self.key < other.key

    def __le__(self, other: Release) -> bool:
        return self.key <= other.key

    def __gt__(self, other: Release) -> bool:
        return self.key > other.key

    def __ge__(self, other: Release) -> bool:
        return self.key >= other.key

    @property
    def name(self) -> str:
        """As the tables name it: at least X.Y.Z, a post release kept (0.5.4.post2), rc/dev/local parts dropped."""
        base = ".".join(str(p) for p in (self.numbers + (0, 0))[: max(3, len(self.numbers))])
        return f"{base}.post{self.post}" if self.post is not None else base

    @property
    def final(self) -> Release:
        """The release without its rc/dev/local parts: what a run evaluates (`vllm==0.34.0rc1` is 0.34.0)."""
        if self.pre is None and self.dev is None and self.local is None:
            return self
        return Release(self.runtime, self.numbers, self.post)

    @property
    def base(self) -> Release:
        """The release without its post release (0.5.13.post1: 0.5.13)."""
        return self if self.post is None and self.pre is None and self.dev is None and self.local is None \
            else Release(self.runtime, self.numbers)

    @property
    def upper(self) -> Release:
        """As an upper bound: a release without a post covers its post releases (0.5.4 up to 0.5.4.postN)."""
        return self if self.post is not None else Release(self.runtime, self.numbers, POST_ANY)

    def __str__(self) -> str:
        return self.name


def _parts(text: str) -> tuple[tuple[int, ...], int | None, tuple[str, int] | None, int | None, str | None]:
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        return tuple(int(p) for p in plain[1].split(".")), (int(plain[2]) if plain[2] is not None else None), \
            None, None, None
    from packaging.version import InvalidVersion as NotPep440
    from packaging.version import Version

    try:
        version = Version(text)
    except NotPep440 as exc:
        raise InvalidVersion(str(exc)) from exc
    return version.release, version.post, version.pre, version.dev, version.local


@cache  # every table asks for the releases it lists and the one a run evaluates: each text is parsed once
def parse(runtime: str, text: str) -> Release:
    """`text` as a release of `runtime`. Raises InvalidVersion for text that is no PEP 440 version."""
    return Release(runtime, *_parts(text))


def parses(runtime: str, text: str) -> bool:
    try:
        parse(runtime, text)
    except InvalidVersion:
        return False
    return True


@cache
def listed(runtime: str, names: tuple[str, ...]) -> tuple[Release, ...]:
    """A table's releases, oldest first."""
    return tuple(sorted(parse(runtime, n) for n in names))


def ordered(runtime: str, names: tuple[str, ...] | list[str]) -> list[str]:
    """Release names, oldest first."""
    return sorted(names, key=lambda n: parse(runtime, n))


class How:
    """How a table's listed release answers for the release asked about (the module docstring): constants, not an
    Enum, whose class creation a check would pay for at start-up."""

    OWN = "own"
    LINE = "line"
    NEWER = "newer"
    BEFORE = "before"
    OLDER = "older"


class Resolution:
    """Which listed release's facts answer `asked`, and `how` (a How constant)."""

    __slots__ = ("answer", "asked", "how")

    def __init__(self, asked: Release, answer: Release, how: str) -> None:
        self.asked, self.answer, self.how = asked, answer, how

    def __repr__(self) -> str:
        return f"Resolution({self.asked.name}, {self.answer.name}, {self.how})"

    @property
    def name(self) -> str:
        return self.answer.name

    @property
    def modelled(self) -> str | None:
        """The answer where its facts describe the release (its own, its line's, the newest for a newer one), else
        None: a release on a line no table lists, or before them all, may differ in kind."""
        return self.answer.name if self.how in (How.OWN, How.LINE, How.NEWER) else None


@cache
def resolve(runtime: str, version: str, names: tuple[str, ...]) -> Resolution | None:
    """Which of `names` (a table's listed releases) answers `runtime==version`; None for text that is no version
    or an empty table."""
    try:
        asked = parse(runtime, version).final
    except InvalidVersion:
        return None
    table = listed(runtime, names)
    if not table:
        return None
    if asked in table:
        return Resolution(asked, table[table.index(asked)], How.OWN)
    before = [r for r in table if r <= asked]
    same = [r for r in table if r.line == asked.line]
    if same:  # the newest of its line at or before it, else the oldest of its line
        return Resolution(asked, ([r for r in same if r <= asked] or same[:1])[-1], How.LINE)
    if asked.line > table[-1].line:
        return Resolution(asked, table[-1], How.NEWER)
    if before:
        return Resolution(asked, before[-1], How.BEFORE)
    return Resolution(asked, table[0], How.OLDER)


@cache  # every row is tested against every release a run evaluates
def covers(runtime: str, first: str, last: str, version: str) -> bool:
    """first <= version <= last at the runtime's granularity (vLLM by minor; SGLang by release and post, a `last`
    without a post covering its post releases). False for text that is no version."""
    try:
        asked, lo, hi = parse(runtime, version).final, parse(runtime, first), parse(runtime, last)
    except InvalidVersion:
        return False
    if runtime != "sglang":
        return lo.line <= asked.line <= hi.line
    return (lo.line, _post(lo)) <= (asked.line, _post(asked)) <= (hi.line, _post(hi, upper=True))


def _post(r: Release, *, upper: bool = False) -> int:
    return r.post if r.post is not None else (POST_ANY if upper else -1)


def at_or_before(runtime: str, a: str, b: str, *, upper: bool = False) -> bool:
    """a <= b at the runtime's granularity (`upper`: b without a post covers its post releases)."""
    ra, rb = parse(runtime, a), parse(runtime, b)
    if runtime != "sglang":
        return ra.line <= rb.line
    return (ra.line, _post(ra)) <= (rb.line, _post(rb, upper=upper))


# -- refusing a version that is no release (DSP-E009) and a range (`vllm>=0.30`) ---------------------------------


def malformed(text: str) -> bool:
    """A version no runtime release is written as, though PEP 440 reads it: a number with a leading zero (`033`,
    read as 33) or a bare major (`33`). A typo, not a release newer than the list (issue 41)."""
    numbers = text.split("+", 1)[0]
    return bool(_LEADING_ZERO.search(numbers)) or "." not in numbers


def never_released(runtime: str, names: tuple[str, ...], release: Release) -> bool:
    """Inside the listed span (oldest..newest listed) but not listed itself: a release that does not exist
    (`vllm==0.33.2`). A version past the newest listed one is not this: it may be new (DSP220)."""
    table = listed(runtime, names)
    return table[0] <= release <= table[-1] and release not in table


def nearest_releases(runtime: str, names: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The listed releases a user most likely meant: for a malformed text those whose numbers hold every non-zero
    number it gives (`033` -> 0.33.0), else the listed release just before and just after it."""
    table = listed(runtime, names)
    given = {int(n) for n in re.findall(r"\d+", text.split("+", 1)[0]) if int(n)}
    if malformed(text) and given:
        hits = [r.name for r in table if given <= set(r.numbers)]
        if hits:
            return tuple(dict.fromkeys((hits[0], hits[-1])))
    try:
        asked = parse(runtime, text)
    except InvalidVersion:
        return (table[-1].name,)
    before = [r.name for r in table if r < asked]
    after = [r.name for r in table if r > asked]
    return tuple(r for r in (before[-1] if before else None, after[0] if after else None) if r is not None)


def refusal(runtime: str, names: tuple[str, ...], posts_read: tuple[str, ...],
            text: str) -> tuple[str, tuple[str, ...]] | None:
    """Why `runtime==text` names no release (malformed, never released) and the listed releases nearest it, or
    None. An SGLang post release of a listed base may be one nobody read: DSP220's path, not a refusal; a vLLM post
    release is its base's (rows name minors)."""
    asked = parse(runtime, text).final
    if runtime != "sglang":
        asked = asked.base
    base = asked.base
    if malformed(text):
        return "is malformed (a leading zero or a bare major)", nearest_releases(runtime, names, text)
    if asked.name in names or asked.name in posts_read or base.name in names \
            or not never_released(runtime, names, base):
        return None
    return "was never released", nearest_releases(runtime, names, base.name)


def plain_bounds(runtime: str, spec: str, names: tuple[str, ...]) -> list[str] | None:
    """The listed releases a range of plain `>=X`/`<=Y` bounds holds (what hint planning writes), compared as PEP 440
    orders them, as SpecifierSet does for a release without a local part; None for any other range."""
    bounds = [_BOUND.fullmatch(part) for part in spec.split(",")]
    if not all(bounds):
        return None
    limits = [(m[1], parse(runtime, m[2])) for m in bounds if m is not None]
    return [n for n in names
            if all(parse(runtime, n) >= b if op == ">=" else parse(runtime, n) <= b for op, b in limits)]


def within(runtime: str, spec: str, names: tuple[str, ...]) -> list[str]:
    """The listed releases a PEP 440 range holds (prereleases included): plain bounds here, any other range through
    packaging.specifiers (~3 ms to import), only then. Raises InvalidVersion for a range that is no specifier."""
    plain = plain_bounds(runtime, spec, names)
    if plain is not None:
        return plain
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifiers = SpecifierSet(spec)
    except InvalidSpecifier as exc:
        raise InvalidVersion(str(exc)) from exc
    return [n for n in names if specifiers.contains(n, prereleases=True)]


def release_key(text: str, *, precision: int = 3, upper: bool = False) -> tuple[int, ...]:
    """(major, minor[, micro], post) of a version, for tools and tests that sort release names outside a runtime;
    `upper` makes a bound without a post cover its post releases. Raises InvalidVersion."""
    r = parse("", text)
    numbers = (r.numbers + (0, 0, 0))[:precision]
    if precision < 3:
        return numbers
    return (*numbers, _post(r, upper=upper))
