"""SGLang's merged-column and row loaders on the CUDA branch users run: from 0.5.3 a tensor shorter than its shard is
padded with zeros (`pad_or_narrow_weight`), before that narrowed (torch raises). The generated record observed the CPU
engine's branch (the rest of the parameter left as initialised); check says what the CUDA branch does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import landing
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


PADS = tuple((p, True) for p in ("gate_up_proj.weight", "down_proj.weight", "o_proj.weight"))
NARROWS = tuple((p, False) for p, _ in PADS)


def test_the_releases_that_pad() -> None:
    assert landing.cuda_padding("sglang", "0.5.2") == NARROWS == landing.cuda_padding("sglang", "0.4.10")
    assert landing.cuda_padding("sglang", "0.5.3") == PADS == landing.cuda_padding("sglang", "0.5.23")
    assert landing.cuda_padding("sglang", "0.5.13.post1") == PADS
    assert landing.cuda_padding("vllm", "0.33.0") is None  # vLLM's record is the branch it runs
    assert landing.cuda_padding("sglang", "not a release") == NARROWS


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


def _landed(padded: landing.Padding | None) -> tuple[landing.Landing, ...]:
    from dspark_ckpt.runtimes.release_model import architecture_model

    model = architecture_model("sglang", "0.5.23", "DFlashDraftModel")
    assert model is not None
    config = {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 16,
              "intermediate_size": 32, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
              "num_hidden_layers": 1, "vocab_size": T, "rms_norm_eps": 1e-6,
              "dflash_config": {"mask_token_id": 0, "target_layer_ids": [0, 1]}}
    values = landing.variables(model, config, target_hidden=16, target_vocab=T)
    from conftest import layout_checkpoint

    tensors = layout_checkpoint(model, values)
    name = next(n for n in tensors if n.endswith("mlp.gate_proj.weight"))
    tensors[name] = (tensors[name][0] - 1, tensors[name][1])
    return landing.land(model, config, tensors, target_hidden=16, target_vocab=T, family=None, padded=padded)


def test_each_branch_of_the_loader() -> None:
    """The same shorter gate_proj: padded (0.5.3+), narrowed and refused in torch's words (before 0.5.3), and, where
    the caller names no branch, the record's own CPU-engine outcome (verify's engine runs that branch)."""
    (padded,) = [p for p in _landed(PADS) if p.tensor and p.tensor.endswith("gate_proj.weight")]
    assert padded.kind == "zero-padded" and not padded.raises
    assert not [p for p in _landed(PADS) if p.kind == "unfilled" and "mlp" in (p.parameter or "")]
    refused = next(p for p in _landed(NARROWS) if p.raises and (p.tensor or "").endswith("gate_proj.weight"))
    assert refused.text.startswith("RuntimeError: start (0) + length (32) exceeds dimension size (31).")
    (cpu,) = [p for p in _landed(None) if p.tensor and p.tensor.endswith("gate_proj.weight")]
    assert cpu.kind == "partly-unwritten"
    assert any(p.kind == "unfilled" and "mlp" in (p.parameter or "") for p in _landed(None))


def test_a_shorter_attention_sink_bias_is_narrowed_on_the_cuda_branch(tmp_path: Path) -> None:
    """sharded_weight_loader asks `is_cpu()` at load time: the CUDA branch narrows a shorter sink bias and torch
    raises (the CPU engine the record ran pads it); a sink bias of the right length loads."""
    verdict = _verdict(tmp_path, "dflash-0.1.0-dflash", "sink-short", "0.5.23")
    assert not verdict.loads and verdict.error is not None
    assert verdict.error.text.startswith("RuntimeError: start (0) + length (2) exceeds dimension size (1).")
    assert _verdict(tmp_path, "dflash-0.1.0-dflash", "sink-shipped", "0.5.23").loads
