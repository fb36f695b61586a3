"""Sharded checkpoints and their index: every consistency rule on real files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from conftest import make_checkpoint, write_safetensors
from listed import vllm_before

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source

INDEX = "model.safetensors.index.json"


def check_codes(path: Path, **kwargs: object) -> list[str]:
    report = inspect_checkpoint(local_source(path, **kwargs), target=TargetVocab(96, "test"), runtimes=[])
    return [f.code for f in report.findings]


def edit_index(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads((path / INDEX).read_text())
    change(doc)
    (path / INDEX).write_text(json.dumps(doc))


def test_clean_sharded_checkpoint(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=3)
    assert check_codes(path) == []


def test_missing_shard(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=2)
    (path / "model-00002-of-00002.safetensors").unlink()
    assert "DSP103" in check_codes(path)


def test_paths_that_escape(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=2)
    outside = tmp_path / "outside.safetensors"
    write_safetensors(outside, {"x": np.zeros(2, dtype=np.float32)})
    os.symlink(outside, path / "link.safetensors")

    def point(doc: dict) -> None:
        doc["weight_map"]["a"] = "../../etc/passwd"
        doc["weight_map"]["b"] = "/etc/passwd"
        doc["weight_map"]["c"] = "link.safetensors"

    edit_index(path, point)
    codes = check_codes(path)
    assert codes.count("DSP104") == 3


def test_tensor_in_wrong_shard_two_shards_and_unindexed(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=2)
    first = "model-00001-of-00002.safetensors"
    second = "model-00002-of-00002.safetensors"

    def misplace(doc: dict) -> None:
        name = next(n for n, f in doc["weight_map"].items() if f == first)
        doc["weight_map"][name] = second
        doc["metadata"]["total_size"] += 1

    edit_index(path, misplace)
    write_safetensors(path / "extra.safetensors", {"norm.weight": np.ones(16, dtype=np.float32)})
    codes = check_codes(path)
    assert {"DSP105", "DSP106", "DSP107", "DSP108"} <= set(codes)


def test_tensor_missing_from_index(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=2)
    edit_index(path, lambda doc: doc["weight_map"].pop("norm.weight"))
    assert "DSP109" in check_codes(path)


def test_bad_index(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=2)
    (path / INDEX).write_text('{"weight_map": ["a"]}')
    assert "DSP102" in check_codes(path)


def test_any_set_of_safetensors_without_index(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=2)
    (path / INDEX).unlink()
    assert check_codes(path) == []


def test_single_file_with_config(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d")
    config = tmp_path / "draft-config.json"
    (path / "config.json").rename(config)
    assert check_codes(path / "model.safetensors", config=config) == []
    assert "DSP201" in check_codes(path / "model.safetensors")


def test_no_weights(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d")
    (path / "model.safetensors").unlink()
    assert "DSP101" in check_codes(path)


def test_hf_cache_snapshot_links_into_blobs_are_fine(tmp_path: Path) -> None:
    repo = tmp_path / "hub" / "models--org--draft"
    src = make_checkpoint(tmp_path / "src")
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    for name in ("config.json", "model.safetensors"):
        blob = repo / "blobs" / f"blob-{name}"
        (src / name).rename(blob)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / name)
    assert check_codes(snapshot) == []


def test_an_unreadable_shard_loads_nowhere(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", shards=2)
    shard = path / "model-00002-of-00002.safetensors"
    shard.write_bytes(shard.read_bytes()[:-4])  # truncated: safetensors refuses it before any model code runs
    report = inspect_checkpoint(local_source(path), target=TargetVocab(96, "test"),
                                runtimes=parse_selectors(["vllm"]))
    assert report.compatibility and all(not e.loads for e in report.compatibility)
    # before 0.25 the architecture is refused first: the draft's ModelConfig resolves it before any weight file is
    # opened, and no Qwen3DSparkModel is registered (registry.py @ v0.25.0 L597 first)
    older = vllm_before("0.25.0")
    assert {e.version: e.error_code for e in report.compatibility} == {
        e.version: "DSP309" if e.version in older else "DSP015" for e in report.compatibility}
    assert all(not e.verbatim for e in report.compatibility if e.error_code == "DSP015")
    assert [f.code for f in report.findings].count("DSP015") == 1


def test_an_oversized_config_is_not_read_into_memory(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d")
    with open(path / "config.json", "r+b") as f:
        f.truncate(65 * 2**20)  # sparse: a hostile multi-megabyte config costs nothing to build
    codes = check_codes(path)
    assert "DSP213" in codes  # config-too-large (issue 14; it was the generic DSP202 before)
