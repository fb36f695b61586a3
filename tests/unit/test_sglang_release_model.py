"""The generated SGLang release model (runtimes/release_data/sglang-X, tools/sglang_release_model.py): read through
the same loader as vLLM's, and looked up per release, since SGLang changes behaviour per release, not per minor."""

from __future__ import annotations

import json

from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.release_model import (
    DATA,
    architecture_model,
    generated_releases,
    modelled_release,
    release_record,
)
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES


def test_the_newest_sglang_release_has_generated_data() -> None:
    assert SGLANG_RELEASES[-1] in generated_releases("sglang")
    record = release_record("sglang", SGLANG_RELEASES[-1])
    assert record is not None and record["runtime"] == "sglang"
    assert record["generated_by"] == f"python tools/sglang_release_model.py {SGLANG_RELEASES[-1]}"
    assert record["stubbed"] and all("inert module" in s for s in record["stubbed"])


def test_every_registered_architecture_has_a_file_built_or_not() -> None:
    for release in generated_releases("sglang"):
        record = release_record("sglang", release)
        assert record is not None
        for arch in record["architectures"]:
            model = architecture_model("sglang", release, arch)
            assert model is not None, (release, arch)
            if model.not_built is not None:  # the error that stopped the build, with its file:line
                assert model.not_built.get("where", "").startswith("sglang/") or "message" in model.not_built
            else:
                assert model.where.startswith("sglang/srt/models/"), (release, arch, model.where)


def test_an_sglang_release_reads_its_own_data_and_a_post_release_its_base() -> None:
    known = generated_releases("sglang")
    newest = known[-1]
    assert modelled_release("sglang", newest) == newest
    assert modelled_release("sglang", f"{newest}.post1") == newest
    major, minor, micro = (int(x) for x in newest.split(".")[:3])
    assert modelled_release("sglang", f"{major}.{minor}.{micro + 1}") == newest  # newer than all: the newest
    # never a neighbour's code: a listed release without data (none today), a release below the listed
    older = [r for r in SGLANG_RELEASES if r not in known and release_key(r) < release_key(newest)]
    assert all(modelled_release("sglang", r) is None for r in [*older, "0.5.0", "0.4.1"])


def test_every_listed_sglang_release_has_generated_data() -> None:
    assert set(SGLANG_RELEASES) <= set(generated_releases("sglang"))


def test_the_data_files_are_the_schema_vllm_s_are() -> None:
    vllm = json.loads((DATA / "vllm-0.33.0" / "release.json").read_text())
    sglang = json.loads((DATA / f"sglang-{SGLANG_RELEASES[-1]}" / "release.json").read_text())
    assert sglang["schema"] == vllm["schema"] and set(vllm) <= set(sglang)
    model = architecture_model("sglang", SGLANG_RELEASES[-1], "LlamaForCausalLMEagle3")
    assert model is not None and model.layers is not None and model.layers.text == "num_hidden_layers"
    assert "model.layers.{i}.self_attn.qkv_proj.weight" in model.parameters
