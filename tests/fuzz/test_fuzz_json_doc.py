"""The one bounded JSON reader on arbitrary bytes, and the value guard against what the decoder really builds."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dspark_ckpt.formats.json_doc import (
    Document,
    JsonProblem,
    ProblemKind,
    RefusedFile,
    decode_document,
    load_document,
    read_bounded,
)
from dspark_ckpt.formats.safetensors_header import outside_strings, value_cost

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
                    | st.sampled_from(['"', "\\", ",", ":", "[", "{", "\\u0022", '\\"', "][", "}{"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
    st.text(max_size=6) | st.sampled_from([",", ":", '"', "\\", "{["]), inner, max_size=5), max_leaves=40)


def built(value: Any) -> int:
    """How many Python objects json.loads builds for the value: every value, and every object key."""
    if isinstance(value, dict):
        return 1 + sum(1 + built(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(built(v) for v in value)
    return 1


@FUZZ
@given(values, st.booleans())
def test_the_value_guard_never_undercounts_what_the_decoder_builds(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    precise = value_cost(raw, limit=0)  # 0 forces the string-aware count
    assert precise + 1 >= built(json.loads(raw))
    assert value_cost(raw, limit=10**12) >= precise  # the cheap count is an upper bound of it


@FUZZ
@given(st.binary(max_size=300))
def test_outside_strings_keeps_no_byte_of_a_string(raw: bytes) -> None:
    outside = b"".join(outside_strings(raw))
    assert len(outside) <= len(raw) and b'"' not in outside


@FUZZ
@given(st.one_of(st.binary(max_size=300), values.map(lambda v: json.dumps(v).encode()),
                 values.map(lambda v: json.dumps(v).encode("utf-16")),
                 values.map(lambda v: b"\xef\xbb\xbf" + json.dumps(v).encode())))
def test_any_bytes_give_a_document_or_a_problem(raw: bytes) -> None:
    doc = decode_document(raw)
    assert isinstance(doc, (Document, JsonProblem))
    if isinstance(doc, Document):
        assert isinstance(doc.data, dict) and raw.decode("utf-8") == doc.text
        json.dumps(doc.data, ensure_ascii=False).encode("utf-8")  # no lone surrogate got through
    else:
        assert doc.kind in ProblemKind and doc.message


@pytest.mark.parametrize("raw, kind", [
    (b"\xef\xbb\xbf{}", ProblemKind.ENCODING), ("{}".encode("utf-16"), ProblemKind.ENCODING),
    ("{}".encode("utf-16-be"), ProblemKind.ENCODING), ("{}".encode("utf-32"), ProblemKind.ENCODING),
    (b'{"a": "\\ud800"}', ProblemKind.ENCODING), (b'{"\\udfff": 1}', ProblemKind.ENCODING),
    (b'{"a": ' + b"9" * 5000 + b"}", ProblemKind.NUMBER), (b"[" * 100_000, ProblemKind.SYNTAX),
    (b'{"a": "\xff"}', ProblemKind.SYNTAX), (b"[]", ProblemKind.NOT_OBJECT), (b'{"a": [' + b"[]," * 3_000_000 + b"[]]}",
                                                                       ProblemKind.TOO_COMPLEX),
])
def test_problem_kinds(raw: bytes, kind: ProblemKind) -> None:
    doc = decode_document(raw)
    assert isinstance(doc, JsonProblem) and doc.kind is kind, doc


def test_a_valid_surrogate_pair_is_a_character() -> None:
    doc = decode_document(b'{"a": "\\ud83d\\ude00"}')
    assert isinstance(doc, Document) and doc.data == {"a": "\U0001f600"}


def test_special_files_are_refused_without_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")  # opening it for reading would block forever
    sparse = tmp_path / "sparse.json"
    with open(sparse, "wb") as f:
        f.truncate(3 * 2**30)
    for path, kind in ((tmp_path / "fifo", ProblemKind.NOT_A_FILE), (Path("/dev/zero"), ProblemKind.NOT_A_FILE),
                       (tmp_path, ProblemKind.NOT_A_FILE), (sparse, ProblemKind.TOO_LARGE)):
        with pytest.raises(RefusedFile) as exc:
            read_bounded(path)
        assert exc.value.kind is kind, path
        doc = load_document(path)
        assert isinstance(doc, JsonProblem) and doc.kind is kind
    proc = load_document("/proc/self/status")  # regular, size 0: read up to the bound, then judged as JSON
    assert isinstance(proc, JsonProblem) and proc.kind is ProblemKind.SYNTAX
    assert read_bounded("/proc/self/status", limit=10**6)
    with pytest.raises(RefusedFile) as exc:
        read_bounded("/proc/self/status", limit=16)  # reports size 0, holds more: the bound still holds
    assert exc.value.kind is ProblemKind.TOO_LARGE
