"""The one bounded reader of small JSON documents (config.json, the shard index, a target config, a Hub answer).

A document is read only if it is a regular file under the size limit, with a bounded read; it must be plain UTF-8
(no byte-order mark, no UTF-16/32, no lone surrogate escape), hold no integer longer than Python parses, and stay
under a weighted count of the values the decoder would build. Anything else is a `JsonProblem`, never an exception.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from dspark_ckpt.formats.names import CONFIG_NAME, INDEX_NAME, MAX_JSON_BYTES
from dspark_ckpt.formats.safetensors_header import value_cost
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding, finding

# About 1.2 million index entries (an entry weighs 5, see safetensors_header.VALUE_WEIGHTS); real indexes hold at most ~10^5.
MAX_DOCUMENT_VALUES = 6_000_000
_CHUNK = 1 << 20
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # may also match an escaped backslash: only costs time
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


class ProblemKind(StrEnum):
    """What is wrong with a document; each caller maps these onto its own finding or error codes."""

    UNREADABLE = "unreadable"
    NOT_A_FILE = "not-a-file"
    TOO_LARGE = "too-large"
    TOO_COMPLEX = "too-complex"
    ENCODING = "encoding"
    NUMBER = "number"
    SYNTAX = "syntax"
    NOT_OBJECT = "not-object"


@dataclass(frozen=True, slots=True)
class JsonProblem:
    """Why a JSON file could not be read as a document (its kind, and words that complete its name)."""

    kind: ProblemKind
    message: str  # completes "<file name> ...", e.g. "starts with a UTF-8 byte-order mark"


@dataclass(frozen=True, slots=True)
class Document:
    """A JSON object read from a file, with the text it was decoded from."""

    data: dict[str, Any]
    text: str  # the UTF-8 text it was decoded from


class RefusedFile(OSError):
    """A file that is not read at all (not a regular file, or too large), with the problem kind it reports as."""

    def __init__(self, kind: ProblemKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# --- reading -------------------------------------------------------------------------------------------------


def read_bounded(path: Path | str, limit: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. A FIFO, a device, a directory or a socket is refused
    without blocking (opened non-blocking, then checked on the open descriptor, so a swap after a stat cannot make
    it block); a larger file is refused from its size, and a file that grows (or a /proc file that reports size 0)
    is read only up to the limit."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise RefusedFile(ProblemKind.NOT_A_FILE, "is a directory, not a regular file") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile(ProblemKind.NOT_A_FILE, f"is {_file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise RefusedFile(ProblemKind.TOO_LARGE, f"is {info.st_size:,} bytes, above the {limit:,}-byte limit")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, _CHUNK))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if left <= 0:
        raise RefusedFile(ProblemKind.TOO_LARGE, f"holds more than {limit:,} bytes (it grew while read, or is not what "
                                             "its size says)")
    return b"".join(chunks)


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def problem_from_error(exc: OSError) -> JsonProblem:
    if isinstance(exc, RefusedFile):
        return JsonProblem(exc.kind, str(exc))
    return JsonProblem(ProblemKind.UNREADABLE, f"cannot be read: {exc.strerror or exc}")


def read_document(read: Callable[[], bytes | None], max_values: int = MAX_DOCUMENT_VALUES
                  ) -> Document | JsonProblem | None:
    """`read()` gives the bytes (None: absent; OSError: unreadable); the decoded object or what is wrong with it."""
    try:
        raw = read()
    except OSError as exc:
        return problem_from_error(exc)
    return None if raw is None else decode_document(raw, max_values)


def load_document(path: Path | str, limit: int = MAX_JSON_BYTES) -> Document | JsonProblem:
    """A JSON object file on disk: stat-checked, read with a bound, decoded as `decode_document` does."""
    found = read_document(lambda: read_bounded(path, limit))
    assert found is not None  # read_bounded never answers None
    return found


# --- decoding ------------------------------------------------------------------------------------------------


def decode_text(raw: bytes) -> str | JsonProblem:
    """Plain UTF-8, as transformers reads config.json (`open(..., encoding="utf-8")` then `json.loads`)."""
    if raw.startswith(_UTF8_BOM):
        return JsonProblem(ProblemKind.ENCODING, "starts with a UTF-8 byte-order mark (U+FEFF), which a UTF-8 "
                                             "reader takes as text: save it as UTF-8 without a BOM")
    if raw.startswith(_UTF16_32_BOMS) or b"\x00" in raw[:4]:
        return JsonProblem(ProblemKind.ENCODING, "is UTF-16 or UTF-32 text, not UTF-8; save it as UTF-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonProblem(ProblemKind.SYNTAX, f"is not valid JSON: not UTF-8 (bad byte at offset {exc.start})")
    if "\x00" in text:
        return JsonProblem(ProblemKind.ENCODING, "holds a NUL byte, which JSON text cannot")
    return text


def decode_document(raw: bytes, max_values: int = MAX_DOCUMENT_VALUES) -> Document | JsonProblem:
    text = decode_text(raw)
    if isinstance(text, JsonProblem):
        return text
    values = value_cost(raw, max_values)
    if values > max_values:
        return JsonProblem(ProblemKind.TOO_COMPLEX, f"holds about {values:,} weighted JSON values, above the "
                                                f"{max_values:,} dspark-ckpt decodes; it was not decoded")
    try:
        doc: Any = json.loads(text)
        if _SURROGATE_ESCAPE.search(raw):  # json.loads keeps lone surrogates; any later encode would fail on them
            json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        return JsonProblem(ProblemKind.SYNTAX, "is not valid JSON: it nests too deeply")
    except UnicodeEncodeError:
        return JsonProblem(ProblemKind.ENCODING, "holds a lone surrogate escape (\\ud800-\\udfff without its pair), "
                                             "which is not a character; strict JSON readers reject it")
    except json.JSONDecodeError as exc:
        return JsonProblem(ProblemKind.SYNTAX, f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})")
    except ValueError as exc:  # CPython's int() digit limit, the only other ValueError json.loads raises
        if "digits" in str(exc):
            return JsonProblem(ProblemKind.NUMBER, "holds an integer with more than "
                                               f"{_int_digit_limit():,} digits, which Python (and so every "
                                               "runtime's config reader) refuses to parse")
        return JsonProblem(ProblemKind.SYNTAX, f"is not valid JSON ({exc})")
    if not isinstance(doc, dict):
        return JsonProblem(ProblemKind.NOT_OBJECT, f"is a JSON {json_type(doc)}, not an object")
    return Document(doc, text)


def _int_digit_limit() -> int:
    import sys

    return sys.get_int_max_str_digits() or 4300


def json_type(value: Any) -> str:
    kinds = ((bool, "boolean"), (dict, "object"), (list, "array"), (str, "string"), ((int, float), "number"))
    return "null" if value is None else next((name for t, name in kinds if isinstance(value, t)), "value")


# What each problem is reported as, per document (the rest of each document's problems share its generic code).
FINDING_CODES: dict[str, tuple[FindingCode, dict[ProblemKind, FindingCode]]] = {
    CONFIG_NAME: ("DSP202", {ProblemKind.ENCODING: "DSP211", ProblemKind.TOO_LARGE: "DSP213", ProblemKind.TOO_COMPLEX: "DSP213"}),
    INDEX_NAME: ("DSP102", {ProblemKind.ENCODING: "DSP110", ProblemKind.TOO_LARGE: "DSP112", ProblemKind.TOO_COMPLEX: "DSP112"}),
}


def document_finding(name: str, problem: JsonProblem) -> Finding:
    """config.json's or the index's problem as the finding check reports."""
    generic, specific = FINDING_CODES[name]
    return finding(specific.get(problem.kind, generic), f"{name} {problem.message}.", file=name)
