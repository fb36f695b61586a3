"""Pure safetensors header reader: the first 8 + N bytes -> a header model plus every problem found."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import IO, Any, Literal

# The finding codes this reader reports (the header section of model/rule_catalog.py). A Literal of its own keeps
# the parser free of the package (stdlib only); mypy holds it to model/codes.FindingCode where check/load.py makes
# a finding of a problem.
HeaderCode = Literal["DSP001", "DSP002", "DSP003", "DSP004", "DSP005", "DSP006", "DSP007", "DSP008", "DSP009",
                     "DSP010", "DSP011", "DSP012", "DSP013", "DSP014", "DSP015", "DSP016", "DSP017", "DSP019"]
MAX_HEADER_SIZE = 100_000_000
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "U8": 8, "I8": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
    "F64": 64, "I64": 64, "U64": 64, "C64": 64, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}  # fmt: skip

_U64_MAX = 2**64 - 1
_LFS_MARKER = b"version https://git-lfs"
_METADATA_KEY = "__metadata__"
_ENTRY_FIELDS = ("dtype", "shape", "data_offsets")
# A real header nests 3 deep; serde_json gives up at 128 and CPython's json recurses in C once per level.
_MAX_DEPTH = 64
_ONE_BRACKET_KIND = bytes.maketrans(b"{}", b"[]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB]")  # may also match an escaped backslash: only costs time
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_DEPTH_STEP = {ord("["): 1, ord("]"): -1}
# Above this many brackets (outside strings), most must close what was never opened (the value guard bounds
# the openers), so the text is not JSON and its depth is not scanned.
_MAX_BRACKETS = 8_000_000
# Python objects cost 15-40x the JSON text they come from, so what the decoder would build is bounded before
# json.loads: separators outside strings, weighted by what their value costs (json_doc.VALUE_WEIGHTS; a tensor
# entry weighs about 29). Real shards hold a few thousand tensors; this admits about 110,000.
MAX_HEADER_VALUES = 3_300_000
# What each separator outside strings costs the decoder, relative to a plain value: every value but the first is
# preceded by exactly one of these; an object or a key/value pair costs several times a string or a number.
VALUE_WEIGHTS = ((b",", 1), (b"[", 2), (b":", 4), (b"{", 4))
_GUARD_CHUNK = 1 << 20
# Beyond this many problems of one code in one header, the rest are counted in one summary problem: a header of
# 100,000 broken entries stays a readable report and bounded work downstream.
MAX_PROBLEMS_PER_CODE = 1000


@dataclass(frozen=True, slots=True)
class TensorEntry:
    """One tensor of a safetensors header: name, dtype, shape and its byte range in the data buffer."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int  # relative to the data buffer, which starts at SafetensorsHeader.data_start
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True, slots=True)
class HeaderProblem:
    """One way a safetensors header breaks the format (a code of its own, the tensor where it applies)."""

    code: HeaderCode
    message: str
    tensor: str | None = None


@dataclass(frozen=True, slots=True)
class SafetensorsHeader:
    """A validated safetensors header: its length, its tensors in file order, its __metadata__."""

    header_size: int
    entries: tuple[TensorEntry, ...]
    metadata: dict[str, str] | None

    @property
    def data_start(self) -> int:
        return 8 + self.header_size

    def get(self, name: str) -> TensorEntry | None:
        return next((entry for entry in self.entries if entry.name == name), None)


@dataclass(frozen=True, slots=True)
class HeaderResult:
    """A header read leniently: the header where one could be built, and every problem found."""

    header: SafetensorsHeader | None
    problems: tuple[HeaderProblem, ...]

    @property
    def ok(self) -> bool:
        return self.header is not None and not self.problems


class _Fatal(Exception):
    """Problems after which the reference reader stops; they are its args."""

    args: tuple[HeaderProblem, ...]


class _JsonObject(dict[str, Any]):
    """A JSON object that remembers keys seen more than once, which json.loads drops silently."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)  # at C speed; only an object that lost keys pays for finding which
        self.duplicates: list[str] = [] if len(self) == len(pairs) else _repeated(pairs)


def _repeated(pairs: list[tuple[str, Any]]) -> list[str]:
    seen: set[str] = set()
    repeated = []
    for key, _ in pairs:
        if key in seen:
            repeated.append(key)
        seen.add(key)
    return repeated


_JSON_TYPES = {_JsonObject: "object", list: "array", str: "string", int: "number", float: "number",
               bool: "boolean", type(None): "null"}  # fmt: skip


def header_bytes_needed(first8: bytes) -> int | None:
    """8 + N from the length prefix; a remote reader should cap what it fetches at 8 + MAX_HEADER_SIZE."""
    if len(first8) < 8:
        return None
    return 8 + int.from_bytes(first8[:8], "little")


def read_header(stream: IO[bytes], file_size: int) -> HeaderResult:
    if stream.seekable():
        stream.seek(0)
    prefix = _read_up_to(stream, 8)
    if prefix == _LFS_MARKER[:8]:
        # "version " read as a length is ~2.3e18, so these 15 bytes only decide DSP016 against DSP002.
        prefix += _read_up_to(stream, len(_LFS_MARKER) - 8)
    needed = header_bytes_needed(prefix)
    if needed is not None and needed - 8 <= MAX_HEADER_SIZE and needed <= file_size:
        prefix += _read_up_to(stream, needed - len(prefix))
    return parse_header(prefix, file_size)


def parse_header(prefix: bytes, file_size: int) -> HeaderResult:
    try:
        size = _check_framing(prefix, file_size)
        top = _decode_object(prefix[8 : 8 + size])
        tensors = _entry_objects(top)
    except _Fatal as fatal:
        return HeaderResult(None, capped(fatal.args))
    result = _validate(size, top, tensors, file_size)
    return HeaderResult(result.header, capped(result.problems))


def capped(problems: tuple[HeaderProblem, ...], limit: int = MAX_PROBLEMS_PER_CODE) -> tuple[HeaderProblem, ...]:
    """The first `limit` problems of each code, then one that counts the rest: work downstream stays bounded."""
    counts = Counter(p.code for p in problems)
    if all(n <= limit for n in counts.values()):
        return problems
    kept: list[HeaderProblem] = []
    seen: Counter[str] = Counter()
    for problem in problems:
        seen[problem.code] += 1
        if seen[problem.code] <= limit:
            kept.append(problem)
    for code, n in counts.items():
        if n > limit:
            kept.append(HeaderProblem(code, f"and {n - limit:,} more tensors with a {code} problem ({n:,} in all; "
                                            f"the first {limit:,} are listed)"))
    return tuple(kept)


def _read_up_to(stream: IO[bytes], size: int) -> bytes:
    # Raw streams and sockets may return short reads well before the end of the file.
    chunks: list[bytes] = []
    while size > 0 and (chunk := stream.read(size)):
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _fatal(code: HeaderCode, message: str) -> _Fatal:
    return _Fatal(HeaderProblem(code, message))


def _check_framing(prefix: bytes, file_size: int) -> int:
    if prefix.startswith(_LFS_MARKER):
        raise _fatal("DSP016", "file is a Git LFS pointer, not safetensors data (fetch it: `git lfs pull`)")
    available = min(len(prefix), file_size)
    if available < 8:
        raise _fatal("DSP001", f"file has {available} bytes, fewer than the 8-byte header length")
    size = int.from_bytes(prefix[:8], "little")
    if size > MAX_HEADER_SIZE:
        lfs = " (the file starts with 'version ': a Git LFS pointer?)" if prefix[:8] == b"version " else ""
        raise _fatal("DSP002", f"header length {size} exceeds the {MAX_HEADER_SIZE}-byte limit{lfs}")
    if 8 + size > len(prefix) or 8 + size > file_size:
        short = 8 + size > file_size
        have = f"the file is only {file_size} bytes" if short else f"only {len(prefix)} were read"
        raise _fatal("DSP003", f"header length {size} puts the header end at byte {8 + size}, but {have}")
    return size


def _decode_object(raw: bytes) -> _JsonObject:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _fatal("DSP004", f"header is not valid UTF-8 (bad byte at header offset {err.start})") from err
    if (values := value_cost(raw, MAX_HEADER_VALUES)) > MAX_HEADER_VALUES:
        raise _fatal("DSP019", f"header holds about {values:,} weighted JSON values, above the {MAX_HEADER_VALUES:,} "
                               "dspark-ckpt decodes (about 110,000 tensors); it was not decoded")
    if _nesting_too_deep(raw):
        raise _fatal("DSP005", f"header is not valid JSON: it nests deeper than {_MAX_DEPTH} levels")
    try:
        top = json.loads(text, object_pairs_hook=_JsonObject, parse_constant=_reject_constant)
        # serde_json rejects lone surrogate escapes; Python keeps them, and they would break any later encode.
        # Re-encoding a 100 MB header costs most of a second, so only when a surrogate escape may be present.
        if _SURROGATE_ESCAPE.search(raw):
            json.dumps(top, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError) as err:
        raise _fatal("DSP005", f"header is not valid JSON: {err}") from err
    # Leading whitespace is allowed: safetensors 0.8 accepts it (its `{`-first check is commented out).
    if not isinstance(top, _JsonObject):
        raise _fatal("DSP006", f"header is a JSON {_json_type(top)}, not an object")
    return top


def _nesting_too_deep(raw: bytes) -> bool:
    # Brackets inside strings can spoil the cheap count (unbalanced, or too deep), so the string-aware one runs
    # only when it is inconclusive: a tensor name with brackets in it, or a hostile header.
    if _deeper_than_limit(raw.translate(_ONE_BRACKET_KIND, _NOT_BRACKET)) is False:
        return False
    outside = b"".join(piece.translate(_ONE_BRACKET_KIND, _NOT_BRACKET) for piece in outside_strings(raw))
    return _deeper_than_limit(outside) is True


def _deeper_than_limit(brackets: bytes) -> bool | None:
    """True: deeper than _MAX_DEPTH; False: well nested within it; None: not JSON, and not found too deep.

    Each pass removes the innermost level of a well-nested sequence, in C, and keeps the running depth of every
    bracket it leaves; so at most 64 passes decide a well-nested one, and what is left of another is scanned
    against the limit lowered by the passes made (the removed levels sat at most that much higher).
    """
    if len(brackets) > _MAX_BRACKETS:
        return None  # more closing brackets than the value guard lets anything open: the decoder stops early
    for passes in range(_MAX_DEPTH):
        if not brackets:
            return False
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            break
        brackets = shorter
    else:
        return bool(brackets)
    limit = _MAX_DEPTH - passes
    return True if any(map(limit.__lt__, accumulate(map(_DEPTH_STEP.__getitem__, brackets)))) else None


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")


def _entry_objects(top: _JsonObject) -> dict[str, _JsonObject]:
    entries = {name: value for name, value in top.items() if name != _METADATA_KEY}
    problems = []
    for name, value in entries.items():
        if not isinstance(value, _JsonObject):
            what = f"a JSON {_json_type(value)}, not an object with dtype, shape, data_offsets"
        elif missing := [field for field in _ENTRY_FIELDS if field not in value]:
            what = f"missing {', '.join(missing)}"
        else:
            continue
        problems.append(HeaderProblem("DSP006", f"tensor {_show(name)} is {what}", name))
    if problems:
        raise _Fatal(*problems)
    return entries  # the loop above proved every value is a _JsonObject


def _validate(size: int, top: _JsonObject, tensors: dict[str, _JsonObject], file_size: int) -> HeaderResult:
    problems = _duplicate_problems(top)
    metadata = _metadata(top.get(_METADATA_KEY), problems)
    entries: list[TensorEntry] = []
    located: list[tuple[int, int, str]] = []  # a rejected entry with good offsets still occupies its bytes
    for name, raw in tensors.items():
        entry, span = _lenient_entry(name, raw, problems)
        if span is not None:
            located.append((*span, name))
        if entry is not None:
            entries.append(entry)
    data_end = _check_layout(sorted(located), problems)
    entries.sort(key=lambda entry: (entry.begin, entry.end, entry.name))
    for entry in entries:
        _check_size(entry, problems)
    _check_file_end(8 + size + data_end, file_size, problems)
    return HeaderResult(SafetensorsHeader(size, tuple(entries), metadata), tuple(problems))


def _duplicate_problems(top: _JsonObject) -> list[HeaderProblem]:
    problems = []
    for key in dict.fromkeys(top.duplicates):
        tensor = None if key == _METADATA_KEY else key
        problems.append(HeaderProblem("DSP007", f"header defines {_show(key)} more than once", tensor))
    for name, value in top.items():
        if not getattr(value, "duplicates", ()):
            continue
        tensor, where = (None, _METADATA_KEY) if name == _METADATA_KEY else (name, f"tensor {_show(name)}")
        for key in dict.fromkeys(value.duplicates):
            what = f"{where} defines key {_show(key)} more than once"
            problems.append(HeaderProblem("DSP007", what, tensor))
    return problems


def _metadata(raw: Any, problems: list[HeaderProblem]) -> dict[str, str] | None:
    if raw is None:  # absent or null: the reference reader accepts both
        return None
    if not isinstance(raw, _JsonObject):
        what = f"{_METADATA_KEY} is a JSON {_json_type(raw)}, not an object"
        problems.append(HeaderProblem("DSP008", what))
        return None
    for key, value in raw.items():
        if not isinstance(value, str):
            what = f"{_METADATA_KEY} value for {_show(key)} is a JSON {_json_type(value)}, not a string"
            problems.append(HeaderProblem("DSP008", what))
    return {key: value for key, value in raw.items() if isinstance(value, str)}


def _lenient_entry(
    name: str, raw: _JsonObject, problems: list[HeaderProblem]
) -> tuple[TensorEntry | None, tuple[int, int] | None]:
    found = len(problems)
    dtype, shape, offsets = raw["dtype"], _naturals(raw["shape"]), _naturals(raw["data_offsets"])
    bits = DTYPE_BITS.get(dtype) if isinstance(dtype, str) else None
    if bits is not None and shape is not None and offsets is not None and len(offsets) == 2:
        begin, end = offsets
        if begin <= end <= _U64_MAX and not _size_overflows(shape, bits):  # the common case, without messages
            return TensorEntry(name, dtype, shape, begin, end), (begin, end)
    tensor = f"tensor {_show(name)}"  # only a broken entry pays for its name in JSON spelling
    if bits is None:
        problems.append(HeaderProblem("DSP009", f"{tensor} has unknown dtype {_show(dtype)}", name))
    if shape is None:
        what = f"{tensor} has shape {_show(raw['shape'])}, not a list of non-negative integers"
        problems.append(HeaderProblem("DSP010", what, name))
    elif bits is not None and _size_overflows(shape, bits):
        what = f"{tensor} of {dtype} {_show(list(shape))} has a size in bits that overflows 64 bits"
        problems.append(HeaderProblem("DSP011", what, name))
    if offsets is None or len(offsets) != 2 or offsets[0] > offsets[1] or offsets[1] > _U64_MAX:
        what = f"{tensor} has data_offsets {_show(raw['data_offsets'])}, not [begin, end] with begin <= end"
        problems.append(HeaderProblem("DSP012", what, name))
        offsets = None
    span = None if offsets is None else (offsets[0], offsets[1])
    if len(problems) > found or span is None or shape is None:
        return None, span
    return TensorEntry(name, dtype, shape, *span), span


def _naturals(value: Any) -> tuple[int, ...] | None:
    # bool is an int subclass in Python but a distinct JSON type, which serde rejects as a usize.
    if isinstance(value, list) and all(type(item) is int and item >= 0 for item in value):
        return tuple(value)
    return None


def _size_overflows(shape: tuple[int, ...], bits: int) -> bool:
    # The reference's u64 checked_mul fold, in its order: [2**32, 2**32, 0] overflows before reaching the 0.
    total = 1
    for factor in (*shape, bits):
        total *= factor
        if total > _U64_MAX:
            return True
    return False


def _check_layout(located: list[tuple[int, int, str]], problems: list[HeaderProblem]) -> int:
    expected = 0
    for index, (begin, end, name) in enumerate(located):
        if begin != expected:
            where = "the previous tensor ends" if index else "the data buffer starts"
            kind = f"a gap of {begin - expected}" if begin > expected else f"an overlap of {expected - begin}"
            what = f"tensor {_show(name)} begins at offset {begin} but {where} at {expected} ({kind} bytes)"
            problems.append(HeaderProblem("DSP013", what, name))
        expected = end
    return expected


def _check_size(entry: TensorEntry, problems: list[HeaderProblem]) -> None:
    bits = entry.numel * DTYPE_BITS[entry.dtype]
    if not bits % 8 and entry.nbytes == bits // 8:
        return
    tensor = f"tensor {_show(entry.name)} of {entry.dtype} {_show(list(entry.shape))}"
    if bits % 8:
        what = f"{tensor} holds {bits} bits, which does not end on a byte boundary"
        problems.append(HeaderProblem("DSP017", what, entry.name))
    elif entry.nbytes != bits // 8:
        what = f"{tensor} spans {entry.nbytes} bytes but needs {bits // 8}"
        problems.append(HeaderProblem("DSP014", what, entry.name))


def _check_file_end(data_end: int, file_size: int, problems: list[HeaderProblem]) -> None:
    if data_end > file_size:
        what = f"truncated: the data ends at byte {data_end} but the file at {file_size}"
        what += f", {data_end - file_size} bytes missing"
        problems.append(HeaderProblem("DSP015", what))
    elif data_end < file_size:
        what = f"{file_size - data_end} trailing bytes after the data buffer, which ends at byte {data_end}"
        problems.append(HeaderProblem("DSP015", what))


# --- the value guard (shared with json_doc) ------------------------------------------------------------------


def weighted_separators(text: bytes) -> int:
    return sum(text.count(char) * weight for char, weight in VALUE_WEIGHTS)


def outside_strings(raw: bytes) -> Iterator[bytes]:
    """The JSON text outside string literals, in pieces, at C speed and in bounded memory.

    Escaped backslashes and escaped quotes are removed first (left to right, as the decoder reads them), so every
    quote left opens or closes a string; then each chunk is split on quotes and the pieces outside are joined.
    Up to the first thing the decoder would reject, this agrees with the decoder, so it never undercounts what
    the decoder builds before it stops.
    """
    text = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    inside = False
    for start in range(0, len(text), _GUARD_CHUNK):
        pieces = text[start : start + _GUARD_CHUNK].split(b'"')
        yield b"".join(pieces[1 if inside else 0 :: 2])
        if len(pieces) % 2 == 0:  # an odd number of quotes in this chunk
            inside = not inside


def value_cost(raw: bytes, limit: int) -> int:
    """The weighted number of values json.loads would build: separators outside strings, each weighted.

    The count over the whole text is an upper bound (separators inside strings only overstate it); only when it
    is above `limit` are the strings taken out, so an honest document costs four `bytes.count` calls.
    """
    cheap = weighted_separators(raw)
    if cheap <= limit:
        return cheap
    return sum(weighted_separators(piece) for piece in outside_strings(raw))


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _show(value: Any, limit: int = 80) -> str:
    # JSON spelling, as in the file, cut short so that a megabyte-long hostile name cannot flood a report; only
    # what can be shown is spelled (a shape of three million dimensions costs its first few).
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    elif isinstance(value, (list, dict)) and len(value) > limit // 2:
        value = list(value)[: limit // 2] if isinstance(value, list) else dict(list(value.items())[: limit // 2])
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
