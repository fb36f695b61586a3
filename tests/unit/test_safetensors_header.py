"""Header reader: one hostile byte literal per code, real-library round trips, sparse files, properties."""

from __future__ import annotations

import ast
import io
import json
import math
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import pytest
import safetensors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from dspark_ckpt.formats import safetensors_header
from dspark_ckpt.formats.safetensors_header import (
    DTYPE_BITS,
    MAX_HEADER_SIZE,
    HeaderProblem,
    HeaderResult,
    SafetensorsHeader,
    TensorEntry,
    header_bytes_needed,
    parse_header,
    read_header,
)

REPO = Path(__file__).resolve().parents[2]
U64_MAX = 2**64 - 1
Parse = Callable[[bytes], HeaderResult]


def frame(header: bytes | dict[str, Any], data: bytes | int = b"") -> bytes:
    """Length prefix, header (a dict is JSON-encoded), then data (an int means that many zero bytes)."""
    raw = json.dumps(header).encode() if isinstance(header, dict) else header
    return struct.pack("<Q", len(raw)) + raw + (bytes(data) if isinstance(data, int) else data)


def entry(dtype: str, shape: list[Any], begin: int, end: int) -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def codes(result: HeaderResult) -> list[str]:
    return [problem.code for problem in result.problems]


class CountingReader(io.RawIOBase):
    """Wraps a binary file and counts the bytes handed out, to prove the data buffer is never read."""

    def __init__(self, inner: IO[bytes], chunk: int | None = None) -> None:
        self.inner, self.chunk, self.bytes_read = inner, chunk, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.inner.seekable()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.inner.seek(offset, whence)

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size if self.chunk is None else min(size, self.chunk))
        self.bytes_read += len(data)
        return data


def read_via(stream: io.RawIOBase | IO[bytes], size: int) -> HeaderResult:
    return read_header(cast(IO[bytes], stream), size)


@pytest.fixture(params=["parse_header", "bytes_io", "real_file"])
def parse(request: pytest.FixtureRequest, tmp_path: Path) -> Parse:
    """The same bytes through each door: bytes in memory, a BytesIO, and a real file on disk."""
    def via_file(blob: bytes) -> HeaderResult:
        path = tmp_path / "model.safetensors"
        path.write_bytes(blob)
        with path.open("rb") as stream:
            return read_header(stream, os.path.getsize(path))

    doors: dict[str, Parse] = {
        "parse_header": lambda blob: parse_header(blob, len(blob)),
        "bytes_io": lambda blob: read_header(io.BytesIO(blob), len(blob)),
        "real_file": via_file,
    }
    return doors[request.param]


# ---------------------------------------------------------------- one hostile byte literal per code

LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
               b"size 1342177280\n")
VALID_ONE = frame(b'{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}', 8)


def test_dsp016_git_lfs_pointer_is_reported_alone(parse: Parse) -> None:
    result = parse(LFS_POINTER)
    assert codes(result) == ["DSP016"] and result.header is None
    assert "LFS" in result.problems[0].message


@pytest.mark.parametrize("blob", [b"", b"\x00", b"\x02\x00\x00\x00\x00\x00\x00"], ids=["empty", "1", "7"])
def test_dsp001_shorter_than_the_length_prefix(parse: Parse, blob: bytes) -> None:
    result = parse(blob)
    assert codes(result) == ["DSP001"] and result.header is None
    assert f"{len(blob)} bytes" in result.problems[0].message


@pytest.mark.parametrize("length", [MAX_HEADER_SIZE + 1, 2**63, U64_MAX])
def test_dsp002_header_length_over_the_limit(parse: Parse, length: int) -> None:
    result = parse(struct.pack("<Q", length) + b"{}")
    assert codes(result) == ["DSP002"]
    assert str(length) in result.problems[0].message


def test_dsp002_hints_at_lfs_when_only_the_length_prefix_is_known() -> None:
    assert "LFS" in parse_header(LFS_POINTER[:8], len(LFS_POINTER)).problems[0].message


def test_dsp003_header_runs_past_the_end_of_the_file(parse: Parse) -> None:
    blob = struct.pack("<Q", 100) + b"{}"
    result = parse(blob)
    assert codes(result) == ["DSP003"]
    assert "108" in result.problems[0].message and "10 bytes" in result.problems[0].message


def test_dsp003_at_the_exact_size_limit_is_not_dsp002(parse: Parse) -> None:
    assert codes(parse(struct.pack("<Q", MAX_HEADER_SIZE) + b"{}")) == ["DSP003"]


def test_dsp003_when_the_caller_fetched_too_few_bytes() -> None:
    result = parse_header(VALID_ONE[:20], len(VALID_ONE))
    assert codes(result) == ["DSP003"] and "only 20" in result.problems[0].message


@pytest.mark.parametrize(
    "header", [b'{"w\xff":1}', b'{"\xc3":1}', b"\xed\xa0\x80{}"], ids=["ff", "cut", "utf16-surrogate"]
)
def test_dsp004_header_is_not_utf8(parse: Parse, header: bytes) -> None:
    assert codes(parse(frame(header))) == ["DSP004"]


@pytest.mark.parametrize(
    "header",
    [b'{"w": }', b'{"w": NaN}', b'{"w": -Infinity}', b"{'w': 1}", b'{"w":1}x', b"", b"\xef\xbb\xbf{}",
     b'{"\\ud800": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}'],
    ids=["no-value", "nan", "infinity", "single-quotes", "trailing-junk", "empty", "bom", "lone-surrogate"],
)
def test_dsp005_header_is_not_json(parse: Parse, header: bytes) -> None:
    assert codes(parse(frame(header))) == ["DSP005"]


@pytest.mark.parametrize("opener,closer", [(b"[", b"]"), (b'{"a":', b"}")], ids=["arrays", "objects"])
def test_dsp005_pathological_nesting_is_refused_at_depth_64(parse: Parse, opener: bytes, closer: bytes) -> None:
    # No RecursionError, no decode: the depth scan refuses it. Its cost is held by the hostile corpus's CPU limit
    # (header-nested-100000-deep, run by the real CLI in a subprocess), not by a timer here.
    for header in (opener * 100_000, opener * 100_000 + b"1" + closer * 100_000):
        result = parse(frame(header))
        assert codes(result) == ["DSP005"] and "deeper than 64" in result.problems[0].message


def test_nesting_limit_is_exactly_64_and_ignores_brackets_in_names(parse: Parse) -> None:
    def nested(levels: int) -> bytes:  # top object + entry object + `levels` arrays in an extra field
        extra = "[" * levels + "]" * levels
        name = "[[{{" * 40
        header = f'{{"{name}": {{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":{extra}}}}}'
        return frame(header.encode(), 1)

    assert parse(nested(62)).ok
    assert codes(parse(nested(63))) == ["DSP005"]


@pytest.mark.parametrize("header", [b"[]", b'"w"', b"5", b"null", b"true"])
def test_dsp006_header_is_not_an_object(parse: Parse, header: bytes) -> None:
    result = parse(frame(header))
    assert codes(result) == ["DSP006"] and result.header is None


@pytest.mark.parametrize(
    "tensor,expected",
    [(5, "number"), ([0, 1], "array"), ("F16", "string"), (None, "null"),
     ({"dtype": "U8", "shape": [1]}, "data_offsets"), ({}, "dtype, shape, data_offsets")],
)
def test_dsp006_tensor_entry_is_not_a_tensor(parse: Parse, tensor: Any, expected: str) -> None:
    result = parse(frame({"w": tensor}))
    assert codes(result) == ["DSP006"] and result.header is None
    assert result.problems[0].tensor == "w" and expected in result.problems[0].message


def test_dsp006_reports_every_malformed_entry() -> None:
    blob = frame({"a": 1, "ok": entry("U8", [1], 0, 1), "b": {"dtype": "U8"}}, 1)
    problems = parse_header(blob, len(blob)).problems
    assert [(p.code, p.tensor) for p in problems] == [("DSP006", "a"), ("DSP006", "b")]


def test_leading_whitespace_is_accepted_like_the_reference_reader(parse: Parse) -> None:
    blob = frame(b' \n\t{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}   ', 1)
    assert parse(blob).ok
    assert [name for name, _ in safetensors.deserialize(blob)] == ["w"]  # safetensors 0.8 agrees


def test_dsp007_duplicate_keys_are_named(parse: Parse) -> None:
    header = (b'{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
              b'"v":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[1,2]},'
              b'"__metadata__":{"k":"1","k":"2"},'
              b'"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}')
    result = parse(frame(header, 2))
    assert codes(result) == ["DSP007", "DSP007", "DSP007"]
    first, second, third = result.problems
    assert first.tensor == "w" and '"w"' in first.message
    assert second.tensor == "v" and '"dtype"' in second.message
    assert third.tensor is None and "__metadata__" in third.message and '"k"' in third.message
    assert result.header is not None and result.header.metadata == {"k": "2"}  # the last wins, as in readers


@pytest.mark.parametrize(
    "metadata,kept", [([], None), ("x", None), ({"a": "1", "b": 2, "c": None}, {"a": "1"})]
)
def test_dsp008_metadata_is_not_strings(parse: Parse, metadata: Any, kept: dict[str, str] | None) -> None:
    result = parse(frame({"__metadata__": metadata}))
    assert set(codes(result)) == {"DSP008"}
    assert result.header is not None and result.header.metadata == kept


def test_null_metadata_is_accepted_like_the_reference_reader(parse: Parse) -> None:
    result = parse(frame({"__metadata__": None}))
    assert result.ok and result.header is not None and result.header.metadata is None


@pytest.mark.parametrize("dtype", ["F9", "f16", "", 16, None, ["F16"]])
def test_dsp009_unknown_dtype_is_named(parse: Parse, dtype: Any) -> None:
    result = parse(frame({"w": entry(dtype, [1], 0, 1)}, 1))
    assert codes(result) == ["DSP009"] and result.problems[0].tensor == "w"
    assert json.dumps(dtype) in result.problems[0].message
    assert result.header is not None and result.header.entries == ()


@pytest.mark.parametrize("shape", [[-1], [1.0], ["1"], [True], [None], "1", 1, None, {"0": 1}])
def test_dsp010_shape_is_not_naturals(parse: Parse, shape: Any) -> None:
    result = parse(frame({"w": entry("U8", shape, 0, 1)}, 1))
    assert codes(result) == ["DSP010"] and result.problems[0].tensor == "w"
    assert result.header is not None and result.header.get("w") is None


@pytest.mark.parametrize(
    "dtype,shape",
    [("U8", [2**32, 2**32, 0]), ("F64", [2**61]), ("U8", [2**64]), ("F4", [2**31, 2**31])],
    ids=["before-a-zero-dim", "times-bits", "one-dim", "sub-byte"],
)
def test_dsp011_size_overflows_u64(parse: Parse, dtype: str, shape: list[int]) -> None:
    result = parse(frame({"w": entry(dtype, shape, 0, 0)}))
    assert codes(result) == ["DSP011"] and result.problems[0].tensor == "w"
    assert result.header is not None and result.header.entries == ()


@pytest.mark.parametrize(
    "offsets", [[0], [0, 1, 2], [1, 0], [-1, 0], [0, 2**64], [0.0, 1], [False, True], "0,1", None, []]
)
def test_dsp012_bad_data_offsets(parse: Parse, offsets: Any) -> None:
    result = parse(frame({"w": {"dtype": "U8", "shape": [1], "data_offsets": offsets}}))
    assert codes(result)[0] == "DSP012" and set(codes(result)) <= {"DSP012", "DSP015"}
    assert result.problems[0].tensor == "w"


@pytest.mark.parametrize(
    "tensors,culprit,words",
    [({"a": (0, 4), "b": (8, 12)}, "b", "gap of 4"),
     ({"a": (0, 4), "b": (2, 6)}, "b", "overlap of 2"),
     ({"a": (4, 8)}, "a", "data buffer starts at 0")],
    ids=["gap", "overlap", "not-from-zero"],
)
def test_dsp013_offsets_not_contiguous(parse: Parse, tensors: dict[str, tuple[int, int]], culprit: str,
                                       words: str) -> None:
    header = {name: entry("U8", [end - begin], begin, end) for name, (begin, end) in tensors.items()}
    result = parse(frame(header, max(end for _, end in tensors.values())))
    assert codes(result) == ["DSP013"] and result.problems[0].tensor == culprit
    assert words in result.problems[0].message
    assert result.header is not None and len(result.header.entries) == len(tensors)  # still kept


def test_offsets_are_checked_after_sorting_like_the_reference(parse: Parse) -> None:
    header = {"z": entry("U8", [2], 2, 4), "a": entry("U8", [2], 0, 2), "e": entry("U8", [0], 4, 4)}
    result = parse(frame(header, 4))
    assert result.ok and result.header is not None
    assert [e.name for e in result.header.entries] == ["a", "z", "e"]


@pytest.mark.parametrize("dtype,count", [("F4", 3), ("F6_E2M3", 1), ("F6_E3M2", 5)])
def test_dsp017_sub_byte_tensor_not_on_a_byte_boundary(parse: Parse, dtype: str, count: int) -> None:
    nbytes = count * DTYPE_BITS[dtype] // 8
    result = parse(frame({"w": entry(dtype, [count], 0, nbytes)}, nbytes))
    assert codes(result) == ["DSP017"] and result.problems[0].tensor == "w"


@pytest.mark.parametrize("dtype,count", [("F4", 2), ("F6_E2M3", 4), ("F6_E3M2", 8)])
def test_sub_byte_tensors_on_a_byte_boundary_are_fine(parse: Parse, dtype: str, count: int) -> None:
    nbytes = count * DTYPE_BITS[dtype] // 8
    assert parse(frame({"w": entry(dtype, [count], 0, nbytes)}, nbytes)).ok


def test_dsp014_byte_range_does_not_match_shape(parse: Parse) -> None:
    result = parse(frame({"w": entry("F32", [2, 2], 0, 12)}, 12))
    assert codes(result) == ["DSP014"] and result.problems[0].tensor == "w"
    assert "12 bytes" in result.problems[0].message and "16" in result.problems[0].message


@pytest.mark.parametrize("data,words", [(6, "truncated: "), (13, "5 trailing bytes")], ids=["short", "long"])
def test_dsp015_data_does_not_end_at_the_end_of_the_file(parse: Parse, data: int, words: str) -> None:
    result = parse(frame({"w": entry("F16", [2, 2], 0, 8)}, data))
    assert codes(result) == ["DSP015"] and words in result.problems[0].message
    if data < 8:
        assert "2 bytes missing" in result.problems[0].message


def test_dsp015_with_no_tensors_the_data_buffer_is_empty(parse: Parse) -> None:
    assert parse(frame(b"{}")).ok
    assert codes(parse(frame(b"{}", 3))) == ["DSP015"]


def test_every_validation_problem_is_collected_in_check_order(parse: Parse) -> None:
    header = (b'{"__metadata__":{"n":1},"a":{"dtype":"F9","shape":[1],"data_offsets":[0,1]},'
              b'"b":{"dtype":"U8","shape":[-2],"data_offsets":[1,2]},'
              b'"c":{"dtype":"U8","shape":[3],"data_offsets":[9,10]},'
              b'"d":{"dtype":"F4","shape":[1],"data_offsets":[10,11]},'
              b'"c":{"dtype":"U8","shape":[3],"data_offsets":[9,10]}}')
    result = parse(frame(header, 20))
    assert codes(result) == ["DSP007", "DSP008", "DSP009", "DSP010", "DSP013", "DSP014", "DSP017", "DSP015"]
    assert result.header is not None and [e.name for e in result.header.entries] == ["c", "d"]


# ---------------------------------------------------------------- the model itself

def test_dtype_table_is_the_reference_list() -> None:
    assert DTYPE_BITS == {
        "BOOL": 8, "U8": 8, "I8": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32,
        "F32": 32, "F64": 64, "I64": 64, "U64": 64, "C64": 64, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
        "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
    }  # fmt: skip


def test_header_model(parse: Parse) -> None:
    result = parse(VALID_ONE)
    assert result.ok and result.problems == ()
    header = result.header
    assert isinstance(header, SafetensorsHeader)
    assert header.data_start == 8 + header.header_size == len(VALID_ONE) - 8
    assert header.get("w") == TensorEntry("w", "F16", (2, 2), 0, 8) and header.get("v") is None
    assert (header.entries[0].numel, header.entries[0].nbytes) == (4, 8)
    assert TensorEntry("s", "F32", (), 0, 4).numel == 1
    assert not HeaderResult(None, (HeaderProblem("DSP001", "x"),)).ok


def test_header_bytes_needed() -> None:
    assert header_bytes_needed(b"") is None and header_bytes_needed(b"\x01" * 7) is None
    assert header_bytes_needed(struct.pack("<Q", 48) + b"{...") == 56
    assert header_bytes_needed(b"\xff" * 8) == 8 + U64_MAX


def test_read_header_rewinds_a_seekable_stream() -> None:
    stream = io.BytesIO(VALID_ONE)
    stream.seek(17)
    assert read_header(stream, len(VALID_ONE)).ok


def test_read_header_survives_one_byte_reads() -> None:
    reader = CountingReader(io.BytesIO(VALID_ONE), chunk=1)
    assert read_via(reader, len(VALID_ONE)) == parse_header(VALID_ONE, len(VALID_ONE))
    assert reader.bytes_read == len(VALID_ONE) - 8


def test_read_header_sniffs_at_most_the_lfs_marker() -> None:
    reader = CountingReader(io.BytesIO(LFS_POINTER))
    assert codes(read_via(reader, len(LFS_POINTER))) == ["DSP016"]
    assert reader.bytes_read == len(b"version https://git-lfs")


def test_stream_errors_propagate() -> None:
    class Broken(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        read_via(Broken(), 100)


# ---------------------------------------------------------------- against real files

def test_round_trip_against_the_safetensors_library(tmp_path: Path) -> None:
    tensors = {
        "lm_head.weight": np.ones((5, 3), dtype=np.float16),
        "d2t": np.arange(5, dtype=np.int64),
        "t2d": np.zeros(9, dtype=bool),
        "norm.weight": np.ones(3, dtype=np.float32),
        "scalar": np.array(2.0, dtype=np.float64),
        "empty": np.zeros((0, 4), dtype=np.uint8),
        "fc": np.ones((2, 2), dtype=np.int8),
    }
    path = tmp_path / "model.safetensors"
    save_file(tensors, str(path), metadata={"format": "np", "note": "round trip"})
    with path.open("rb") as stream:
        result = read_header(stream, path.stat().st_size)
    assert result.ok, result.problems
    assert result.header is not None and result.header.metadata == {"format": "np", "note": "round trip"}
    numpy_dtypes = {"F16": np.float16, "I64": np.int64, "BOOL": np.bool_, "F32": np.float32,
                    "F64": np.float64, "U8": np.uint8, "I8": np.int8}
    for name, array in tensors.items():
        found = result.header.get(name)
        assert found is not None and found.shape == array.shape and found.nbytes == array.nbytes
        assert np.dtype(numpy_dtypes[found.dtype]) == array.dtype
    with safetensors.safe_open(str(path), "np") as handle:
        assert sorted(handle.keys()) == sorted(e.name for e in result.header.entries)
        for item in result.header.entries:
            assert handle.get_slice(item.name).get_shape() == list(item.shape)


def test_sparse_64_gib_file_reads_only_the_header(tmp_path: Path) -> None:
    numel = 2**35
    header = json.dumps({"lm_head.weight": entry("BF16", [numel], 0, 2 * numel)}).encode()
    path = tmp_path / "huge.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    os.truncate(path, 8 + len(header) + 64 * 2**30)
    with path.open("rb") as raw:
        reader = CountingReader(raw)
        result = read_via(reader, path.stat().st_size)
    assert result.ok, result.problems
    assert reader.bytes_read == 8 + len(header)
    assert result.header is not None and result.header.entries[0].nbytes == 64 * 2**30


def test_module_imports_neither_torch_nor_numpy() -> None:
    probe = "import sys, dspark_ckpt.formats.safetensors_header; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    tree = ast.parse(Path(safetensors_header.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


# ---------------------------------------------------------------- properties

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
sizes = st.integers(0, 2**64)


def well_formed(result: HeaderResult) -> None:
    assert (result.header is None) <= bool(result.problems)
    assert all(p.code.startswith("DSP0") and p.message for p in result.problems)
    for item in result.header.entries if result.header else ():
        assert item.dtype in DTYPE_BITS and 0 <= item.begin <= item.end <= U64_MAX


@PROPERTY
@given(st.binary(max_size=300), sizes)
def test_arbitrary_bytes_never_raise(blob: bytes, size: int) -> None:
    well_formed(parse_header(blob, size))
    well_formed(read_header(io.BytesIO(blob), size))


@PROPERTY
@given(st.one_of(st.binary(max_size=300), st.text(max_size=200).map(str.encode)), st.integers(0, 64))
def test_arbitrary_headers_with_an_honest_length_never_raise(header: bytes, data: int) -> None:
    blob = frame(header, data)
    result = parse_header(blob, len(blob))
    well_formed(result)
    assert read_header(io.BytesIO(blob), len(blob)) == result


@st.composite
def honest_files(draw: st.DrawFn) -> tuple[bytes, list[TensorEntry], dict[str, str] | None]:
    names = draw(st.lists(st.text(min_size=1, max_size=8).filter(lambda n: n != "__metadata__"),
                          unique=True, max_size=6))
    entries, offset = [], 0
    for name in names:
        dtype = draw(st.sampled_from(sorted(DTYPE_BITS)))
        shape = tuple(draw(st.lists(st.integers(0, 5), max_size=3)))
        bits = DTYPE_BITS[dtype] * math.prod(shape)
        if bits % 8:  # sub-byte dtypes must end on a byte boundary: scale the outer dimension until they do
            factor = 2 if bits % 8 == 4 else 4
            shape = (factor * shape[0], *shape[1:]) if shape else (factor,)
            bits = DTYPE_BITS[dtype] * math.prod(shape)
        entries.append(TensorEntry(name, dtype, shape, offset, offset + bits // 8))
        offset += bits // 8
    metadata = draw(st.none() | st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3))
    document: dict[str, Any] = {e.name: entry(e.dtype, list(e.shape), e.begin, e.end)
                                for e in draw(st.permutations(entries))}
    if metadata is not None:
        document["__metadata__"] = metadata
    text = json.dumps(document, ensure_ascii=draw(st.booleans())) + " " * draw(st.integers(0, 7))
    return frame(text.encode(), offset), entries, metadata


@PROPERTY
@given(honest_files())
def test_honest_files_round_trip_and_the_reference_agrees(case: tuple[bytes, list[TensorEntry], Any]) -> None:
    blob, entries, metadata = case
    result = parse_header(blob, len(blob))
    assert result.ok, result.problems
    assert result.header is not None and result.header.metadata == metadata
    assert list(result.header.entries) == sorted(entries, key=lambda e: (e.begin, e.end, e.name))
    assert read_header(io.BytesIO(blob), len(blob)) == result
    reference = dict(safetensors.deserialize(blob))
    assert {name: (t["dtype"], tuple(t["shape"])) for name, t in reference.items()} == \
        {e.name: (e.dtype, e.shape) for e in entries}


@st.composite
def damaged_files(draw: st.DrawFn) -> bytes:
    """Honest files with one field bent: what the reference reader accepts, this reader must accept too."""
    blob, entries, _ = draw(honest_files())
    document = json.loads(blob[8 : header_bytes_needed(blob[:8])])
    names = [e.name for e in entries]
    if names:
        victim = document[draw(st.sampled_from(names))]
        field = draw(st.sampled_from(["dtype", "shape", "data_offsets"]))
        victim[field] = draw(st.one_of(st.sampled_from(["F9", "F4", "U8", -1, 2**64, 1.5, True, None]),
                                       st.lists(st.integers(-1, 2**64), max_size=3)))
    data = max((e.end for e in entries), default=0) + draw(st.sampled_from([0, 0, 1, -1]))
    return frame(json.dumps(document).encode(), max(data, 0))


@PROPERTY
@given(damaged_files())
def test_ok_exactly_when_the_reference_reader_accepts(blob: bytes) -> None:
    result = parse_header(blob, len(blob))
    try:
        safetensors.deserialize(blob)
        accepted = True
    except safetensors.SafetensorError:
        accepted = False
    assert result.ok == accepted, result.problems


def test_dsp019_a_header_dense_with_values_is_refused_before_decoding() -> None:
    body = b'{"__metadata__":{"a":[' + b"[]," * 1_200_000 + b'[]]}}'
    result = parse_header(struct.pack("<Q", len(body)) + body, 8 + len(body))
    assert result.header is None and [p.code for p in result.problems] == ["DSP019"]
    # Separators inside strings do not count: one long string of commas is decoded normally.
    text = b'{"__metadata__":{"a":"' + b"," * 1_200_000 + b'"}}'
    result = parse_header(struct.pack("<Q", len(text)) + text, 8 + len(text))
    assert result.ok, result.problems
