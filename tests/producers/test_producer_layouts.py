"""The fixture builder writes what each producer wrote: the same config.json, the same safetensors headers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from producers import layout, materialise, names
from safetensors import safe_open

from dspark_ckpt.formats.safetensors_header import read_header


@pytest.mark.parametrize("name", names())
def test_the_builder_reproduces_the_recorded_layout(tmp_path: Path, name: str) -> None:
    doc = layout(name)
    folder = materialise(tmp_path / name, name)
    assert json.loads((folder / "config.json").read_text()) == doc["config"]
    assert sorted(p.name for p in folder.glob("*.safetensors")) == sorted(doc["shards"])
    for file, shard in doc["shards"].items():
        with open(folder / file, "rb") as stream:
            header = read_header(stream, (folder / file).stat().st_size).header
        assert header is not None, file
        assert {e.name: [e.dtype, list(e.shape)] for e in header.entries} == shard["tensors"]
        assert header.metadata == shard["metadata"]
        with safe_open(folder / file, framework="numpy") as f:  # the reference reader accepts the file
            assert sorted(f.keys()) == sorted(shard["tensors"])


def test_the_recorded_layouts_cover_each_producer_and_family() -> None:
    recorded = {name: layout(name) for name in names()}
    producers = {name.split("-")[0] + "-" + name.split("-")[1] for name in recorded}
    assert producers == {"speculators-0.9.0", "specforge-0.2.0", "dflash-0.1.0"}
    speculators_types = {d["config"].get("speculators_model_type") for d in recorded.values()}
    assert {"dspark", "dflash", "dflash2", "eagle3", "peagle"} <= speculators_types
    archs = {d["config"]["architectures"][0] for d in recorded.values()}
    assert {"DSparkDraftModel", "DFlash2DraftModel", "LlamaForCausalLMEagle3", "Eagle3Speculator"} <= archs


def test_valid_mappings_are_the_producers_construction(tmp_path: Path) -> None:
    folder = materialise(tmp_path / "d", "speculators-0.9.0-eagle3-qwen3-pruned")
    with safe_open(folder / "model.safetensors", framework="numpy") as f:
        d2t, t2d = f.get_tensor("d2t"), f.get_tensor("t2d")
    ids = d2t + range(len(d2t))
    assert t2d.sum() == len(d2t) and list(t2d.nonzero()[0]) == list(ids)
