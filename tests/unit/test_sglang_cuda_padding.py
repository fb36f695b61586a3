"""SGLang's weight loaders on the CUDA branch users run, as the generator observed them (it sets `_is_cpu` False in
layers/linear.py, parameter.py and the fused MoE layer: verify/sglang_worker.py gpu_loaders): from 0.5.3 the
merged-column and row loaders pad a tensor shorter than its shard with zeros (`pad_or_narrow_weight`), the QKV loader
narrows it and torch raises, and the fused MoE experts' loader has changed from release to release (narrowed and
refused; the rest left as initialised; zeros). The CPU engine's branch, which the records held before, no longer
needs translating: check reads what each record says."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import (
    ArchitectureModel,
    architecture_model,
    generated_releases,
    release_record,
)
from dspark_ckpt.runtimes.release_store import behaviour
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.local import local_source

sys.path.insert(0, str(Path(__file__).parents[1] / "producers"))
from test_sglang_whole_agreement import _write  # the recorded mutations, as the agreement test writes them

T = 96


def _verdict(tmp_path: Path, layout: str, mutation: str, release: str) -> object:
    folder = _write(tmp_path / f"{layout}--{mutation}", layout, mutation)
    assert folder is not None
    (verdict,) = analyze(local_source(folder), target=TargetVocab(T, "test"),
                         runtimes=[RuntimeVersion("sglang", release)]).verdicts
    return verdict


def _built(release: str) -> dict[str, dict[str, Any]]:
    record = release_record("sglang", release)
    assert record is not None
    docs = {name: behaviour("sglang", holder, name) for name, holder in record["architectures"].items()}
    return {name: dict(doc) for name, doc in docs.items() if doc is not None and "not_built" not in doc}


@pytest.mark.parametrize("release", generated_releases("sglang"))
def test_every_built_sglang_record_observed_the_cuda_loaders(release: str) -> None:
    for name, doc in _built(release).items():
        assert doc.get("loaders") == "cuda", (release, name)


def _short(release: str, architecture: str, tensor: str) -> dict[str, Any]:
    doc = _built(release)[architecture]
    (fact,) = [f for name, f in doc["tensors"].items() if name.endswith(tensor) and "off_by_one" in f]
    return dict(json.loads(json.dumps(fact["off_by_one"]["0-"])))


@pytest.mark.parametrize("release", ["0.5.16", "0.5.21", "0.5.23"])
def test_a_shorter_merged_shard_is_padded_and_a_shorter_qkv_shard_refused(release: str) -> None:
    assert _short(release, "DFlashDraftModel", "mlp.gate_proj.weight") == {"pads": True, "with": "0.0"}
    refused = _short(release, "DFlashDraftModel", "self_attn.q_proj.weight")
    assert refused["raises"] == "RuntimeError" and "exceeds dimension size" in refused["message"]


@pytest.mark.parametrize(("release", "seen"), [("0.5.16", "raises"), ("0.5.21", "leaves_unwritten"),
                                               ("0.5.23", "pads")])
def test_the_moe_experts_loader_as_each_release_runs_it(release: str, seen: str) -> None:
    assert seen in _short(release, "Glm4MoeForCausalLMNextN", "experts.{e}.gate_proj.weight")


@pytest.mark.parametrize(("mutation", "tensor"), [("mlp-gate-short", "layers.0.mlp.gate_proj.weight"),
                                                  ("mlp-down-narrow", "layers.0.mlp.down_proj.weight")])
def test_a_shorter_mlp_tensor_is_padded_with_zeros_and_every_row_is_written(tmp_path: Path, mutation: str,
                                                                             tensor: str) -> None:
    verdict = _verdict(tmp_path, "dflash-0.1.0-dflash", mutation, "0.5.23")
    assert verdict.loads and verdict.error is None
    codes = {i.code: i.text for i in verdict.silent}
    assert "pads the tensor with zeros to fit" in codes["DSP362"] and tensor in codes["DSP362"]
    assert "stays as initialised" not in codes["DSP362"]
    assert "DSP363" not in codes  # SGLang writes every row (zeros): nothing keeps its initial values


def test_a_config_counting_a_wider_mlp_than_shipped_pads_every_mlp_tensor(tmp_path: Path) -> None:
    verdict = _verdict(tmp_path, "dflash-0.1.0-dflash", "intermediate-over", "0.5.23")
    codes = {i.code: i.text for i in verdict.silent}
    assert verdict.loads and "DSP363" not in codes
    assert all(f"layers.0.mlp.{p}_proj.weight" in codes["DSP362"] for p in ("gate", "up", "down"))


# A DFlash draft of 0.5.23's record with its gate_proj a row short (the merged loader pads it on the CUDA branch)
SHORT_GATE_CONFIG = {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 16,
                     "intermediate_size": 32, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                     "num_hidden_layers": 1, "vocab_size": T, "rms_norm_eps": 1e-6,
                     "dflash_config": {"mask_token_id": 0, "target_layer_ids": [0, 1]}}


def _short_gate() -> tuple[ArchitectureModel, dict[str, tuple[int, ...]], str]:
    """The record's model, the draft's tensors (the record's layout at the config's values) and the shorter one."""
    from conftest import layout_checkpoint

    model = architecture_model("sglang", "0.5.23", "DFlashDraftModel")
    assert model is not None
    tensors = layout_checkpoint(model, landing.variables(model, SHORT_GATE_CONFIG, target_hidden=16, target_vocab=T))
    name = next(n for n in tensors if n.endswith("mlp.gate_proj.weight"))
    tensors[name] = (tensors[name][0] - 1, tensors[name][1])
    return model, tensors, name


def test_check_reads_the_branch_from_the_record() -> None:
    """The same shorter gate_proj in the record's model: padded, every row of its shard written (no DSP363)."""
    model, tensors, name = _short_gate()
    found = landing.land(model, SHORT_GATE_CONFIG, tensors, target_hidden=16, target_vocab=T, family=None)
    (padded,) = [p for p in found if p.tensor == name]
    assert padded.kind == "padded" and not padded.raises and "with zeros" in padded.text
    assert not [p for p in found if p.kind == "unfilled" and "mlp" in (p.parameter or "")]


def test_a_shorter_attention_sink_bias_is_narrowed_on_the_cuda_branch(tmp_path: Path) -> None:
    """sharded_weight_loader asks `is_cpu()` at load time: the CUDA branch narrows a shorter sink bias and torch
    raises (the CPU engine pads it); a sink bias of the right length loads."""
    verdict = _verdict(tmp_path, "dflash-0.1.0-dflash", "sink-short", "0.5.23")
    assert not verdict.loads and verdict.error is not None
    assert verdict.error.text.startswith("RuntimeError: start (0) + length (2) exceeds dimension size (1).")
    assert _verdict(tmp_path, "dflash-0.1.0-dflash", "sink-shipped", "0.5.23").loads


def test_verifys_torch_replay_of_the_record_counts_a_padded_shard_written() -> None:
    """verify's torch loader over the record (verify/landing_load.py) reads `pads` as check does: the shorter
    gate_proj is a silent shape (DSP362), its merged parameter written whole (no DSP363), and the two agree."""
    pytest.importorskip("torch")
    from dspark_ckpt.verify.landing_load import against_check, load_landing

    model, tensors, name = _short_gate()
    run = load_landing(model, "sglang", "0.5.23", SHORT_GATE_CONFIG, tensors, sorted(tensors), target_hidden=16,
                       target_vocab=T)
    found = landing.land(model, SHORT_GATE_CONFIG, tensors, target_hidden=16, target_vocab=T, family=None)
    assert run.cut == (name,) and name not in run.refused
    assert not [p for p in run.unfilled if "mlp" in p]
    assert against_check(run, found) is None
