"""Hypothesis fuzzing of the safetensors header reader: any bytes give a well-formed result, never an exception."""

from __future__ import annotations

import io
import json
import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dspark_ckpt.formats.safetensors_header import (
    DTYPE_BITS,
    MAX_HEADER_SIZE,
    HeaderResult,
    parse_header,
    read_header,
)
from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header
from dspark_ckpt.model.rule_catalog import RULES

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
U64 = 2**64 - 1

names = st.text(min_size=1, max_size=12)
ints = st.one_of(st.integers(-3, 70), st.integers(-(2**65), 2**65), st.sampled_from([2**32, 2**63, U64, 2**64]))
json_scalars = st.one_of(st.none(), st.booleans(), ints, st.floats(allow_nan=False), st.text(max_size=8))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
dtypes = st.one_of(st.sampled_from(sorted(DTYPE_BITS)), st.sampled_from(["F128", "f32", "", "Q4"]), json_values)
shapes = st.one_of(st.lists(st.integers(0, 8), max_size=3), st.lists(ints, max_size=4), json_values)
offsets = st.one_of(st.tuples(st.integers(0, 64), st.integers(0, 64)).map(list), st.lists(ints, max_size=3),
                    json_values)
entries = st.fixed_dictionaries({"dtype": dtypes, "shape": shapes, "data_offsets": offsets},
                                optional={"extra": json_values})
headers = st.dictionaries(names, st.one_of(entries, json_values), max_size=5).flatmap(
    lambda doc: st.one_of(st.just(doc), st.dictionaries(st.text(max_size=4), st.one_of(st.text(max_size=4), ints),
                                                        max_size=2).map(lambda m: {**doc, "__metadata__": m})))


def framed(body: bytes, data_len: int) -> bytes:
    return struct.pack("<Q", len(body)) + body + bytes(data_len)


def assert_well_formed(result: HeaderResult) -> None:
    assert isinstance(result, HeaderResult)
    if result.header is None:
        assert result.problems, "a refused header must say why"
    for problem in result.problems:
        assert problem.code in RULES and problem.code.startswith("DSP0")
        assert isinstance(problem.message, str) and len(problem.message) < 2000
        assert problem.tensor is None or isinstance(problem.tensor, str)
    if result.header is not None:
        for entry in result.header.entries:
            assert entry.dtype in DTYPE_BITS
            assert all(type(d) is int and d >= 0 for d in entry.shape)
            assert 0 <= entry.begin <= entry.end <= U64


@FUZZ
@given(st.binary(max_size=300), st.integers(0, 2**64))
def test_any_bytes(prefix: bytes, file_size: int) -> None:
    assert_well_formed(parse_header(prefix, file_size))


@FUZZ
@given(headers, st.integers(0, 128), st.sampled_from([0, 1, -1, 7]))
def test_json_shaped_headers(doc: dict[str, Any], data_len: int, size_skew: int) -> None:
    raw = framed(json.dumps(doc).encode(), data_len)
    assert_well_formed(parse_header(raw, max(0, len(raw) + size_skew)))


@FUZZ
@given(st.binary(max_size=200), st.integers(0, 2**64))
def test_read_header_reads_only_the_header(data: bytes, file_size: int) -> None:
    stream = io.BytesIO(data)
    result = read_header(stream, file_size)
    assert_well_formed(result)
    declared = int.from_bytes(data[:8], "little") if len(data) >= 8 else 0
    accepted = declared <= MAX_HEADER_SIZE and 8 + declared <= file_size
    assert stream.tell() <= (8 + declared if accepted else 8 + len("https://git-lfs"))  # LFS sniffing reads 15 more
    assert result.header is None or result == parse_header(data[: result.header.data_start], file_size)


tensor_specs = st.lists(
    st.tuples(st.sampled_from(sorted(DTYPE_BITS)), st.lists(st.integers(0, 6), max_size=3)), max_size=5
).map(lambda specs: [TensorSpec(f"t{i}", dtype, tuple(shape)) for i, (dtype, shape) in enumerate(specs)])


@FUZZ
@given(tensor_specs, st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3))
def test_honest_headers_round_trip(specs: list[TensorSpec], metadata: dict[str, str]) -> None:
    data_len = sum(t.nbytes for t in specs)
    raw = encode_header(specs, metadata) + bytes(data_len)
    result = parse_header(raw, len(raw))
    subbyte = [t for t in specs if (DTYPE_BITS[t.dtype] * _numel(t.shape)) % 8]
    if subbyte:  # the writer floors a ragged F4/F6 size, which the reader must refuse
        assert {p.code for p in result.problems} >= {"DSP017"}
        return
    assert result.ok, result.problems
    assert result.header is not None
    assert {(e.name, e.dtype, e.shape, e.nbytes) for e in result.header.entries} == \
        {(t.name, t.dtype, t.shape, t.nbytes) for t in specs}
    assert result.header.metadata == (metadata or None)


@FUZZ
@given(st.binary(min_size=8, max_size=120), st.integers(0, 200), st.integers(0, 255))
def test_single_byte_flips_of_an_honest_file(noise: bytes, position: int, value: int) -> None:
    raw = bytearray(encode_header([TensorSpec("a", "F32", (2, 2)), TensorSpec("b", "F4", (4,))], {"k": "v"}))
    raw += bytes(18)
    raw[position % len(raw)] = value
    assert_well_formed(parse_header(bytes(raw), len(raw)))  # one byte changed
    assert_well_formed(parse_header(bytes(raw[: position % len(raw)]) + noise, len(raw)))  # cut short, then junk


def _numel(shape: tuple[int, ...]) -> int:
    total = 1
    for dim in shape:
        total *= dim
    return total
