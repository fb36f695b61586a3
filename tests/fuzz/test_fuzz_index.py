"""Hypothesis fuzzing of the shard index reader and its cross-checks against the shards' headers."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_source import MemorySource

from dspark_ckpt.check.analysis import load
from dspark_ckpt.formats.layout import ShardIndex, index_findings, parse_index, shard_status_findings
from dspark_ckpt.formats.safetensors_header import SafetensorsHeader, TensorEntry
from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.sources.base import PathStatus

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SHARDS = ["a.safetensors", "b.safetensors", "../x.safetensors", "/abs.safetensors", "", "c"]
TENSORS = ["w", "lm_head.weight", "d2t", "t2d", "x"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6),
                    st.sampled_from(SHARDS + TENSORS))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=10)
weight_maps = st.dictionaries(st.sampled_from(TENSORS), st.sampled_from(SHARDS), max_size=5)
index_docs = st.fixed_dictionaries({}, optional={
    "weight_map": st.one_of(weight_maps, values),
    "metadata": st.one_of(st.fixed_dictionaries({"total_size": st.one_of(st.integers(-5, 500), values)}), values),
})


def assert_findings(findings: list[Any], prefixes: tuple[str, ...] = ("DSP1",)) -> None:
    for f in findings:
        assert f.code in RULES and f.code.startswith(prefixes), f
        assert isinstance(f.message, str)


@FUZZ
@given(st.one_of(st.binary(max_size=200), index_docs.map(lambda d: json.dumps(d).encode()),
                 values.map(lambda v: json.dumps(v).encode())))
def test_parse_index_any_bytes(raw: bytes) -> None:
    index, findings = parse_index(raw)
    assert (index is None) == bool(findings)
    assert_findings(findings)
    if index is not None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in index.weight_map.items())
        assert index.total_size is None or type(index.total_size) is int


headers = st.dictionaries(
    st.sampled_from(SHARDS[:2] + ["c"]),
    st.lists(st.tuples(st.sampled_from(TENSORS), st.integers(0, 64)), max_size=4).map(
        lambda items: SafetensorsHeader(64, tuple(TensorEntry(n, "U8", (k,), 0, k) for n, k in items), None)),
    max_size=3,
)


@FUZZ
@given(weight_maps, st.one_of(st.none(), st.integers(-5, 500)), headers,
       st.lists(st.sampled_from(SHARDS[:2] + ["c", "d.safetensors"]), max_size=4, unique=True))
def test_index_findings(weight_map: dict[str, str], total: int | None, shard_headers: dict[str, SafetensorsHeader],
                        on_disk: list[str]) -> None:
    assert_findings(index_findings(ShardIndex(weight_map, total), shard_headers, on_disk))


@FUZZ
@given(st.dictionaries(st.sampled_from(SHARDS), st.sampled_from(list(PathStatus)), max_size=5),
       st.sets(st.sampled_from(SHARDS), max_size=4))
def test_shard_status_findings(statuses: dict[str, PathStatus], indexed: set[str]) -> None:
    findings = shard_status_findings(statuses, indexed)
    assert_findings(findings, ("DSP1", "DSP018"))
    assert len(findings) == sum(status is not PathStatus.OK for status in statuses.values())


def _shard(names: list[str]) -> bytes:
    specs = [TensorSpec(n, "U8", (2,)) for n in names]
    return encode_header(specs) + bytes(2 * len(specs))


@FUZZ
@given(index_docs, st.dictionaries(st.sampled_from(SHARDS[:2] + ["c.safetensors"]),
                                   st.one_of(st.none(), st.lists(st.sampled_from(TENSORS), unique=True, max_size=3)
                                             .map(_shard), st.binary(max_size=40)), max_size=3))
def test_load_with_any_index_and_shards(doc: dict[str, Any], shards: dict[str, bytes | None]) -> None:
    source = MemorySource({"model.safetensors.index.json": json.dumps(doc).encode(), **shards})
    loaded = load(source)
    assert_findings(loaded.findings, ("DSP0", "DSP1", "DSP2"))
    assert set(loaded.headers) <= {name for name, data in shards.items() if data is not None}
