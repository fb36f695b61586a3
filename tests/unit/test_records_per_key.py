"""Records per key (issue 40 item 4): what a structural key does, judged at the draft's own value of it.

Hermetic: tiny checkpoints written to disk (real safetensors headers), checked through the real entry point on vLLM
0.34.0's committed release model. Each structural key's record says what its other value does (`appears`,
`disappears`, `resized`), the values the class refused (another one sampled then), and, for a key that sizes what
it resizes, the shapes as expressions of it (`len(<key>)` for a list); the landing computes them at the draft's own
value. What each case expects was observed running vLLM 0.34.0's own `__init__` and `load_weights` over the same
configs and shapes (the worker's load mode; docs/upstream-notes.md section 26).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from cli_runner import run_cli
from conftest import layout_checkpoint, write_safetensors

from dspark_ckpt.runtimes.landing import keyed, variables
from dspark_ckpt.runtimes.release_model import architecture_model

RELEASE = "0.34.0"
H, T = 16, 128
BACKBONE: dict[str, Any] = {"model_type": "qwen3", "hidden_size": H, "num_attention_heads": 2, "num_key_value_heads": 1,
                            "head_dim": 8, "intermediate_size": 24, "vocab_size": T, "draft_vocab_size": T,
                            "num_hidden_layers": 1, "target_hidden_size": H}
DFLASH2 = {"conv_kernel_size": 5, "conv_group_size": 2, "selector_rank": 6, "selector_top_k": 2,
           "target_layer_ids": [1, 2, 3], "mask_token_id": 0}  # kernel 5, rank 6 and three layers: none a value the samples built at
LILICORR = {"target_layer_ids": [1, 2, 3], "block_size": 8, "mask_token_id": 0, "lilicorr_hidden_size": 0, "lilicorr_candidate_topk": 8,
            "lilicorr_num_layers": 1, "lilicorr_num_heads": 4, "lilicorr_mlp_ratio": 2.0, "lilicorr_factor_dim": 8,
            "lilicorr_vector_eps": 1e-6, "lilicorr_logit_scale": 1.0}
CONFIDENCE = {"confidence_head.proj.weight": (1, H), "confidence_head.proj.bias": (1,)}


def config(architecture: str, **extra: Any) -> dict[str, Any]:
    return {"architectures": [architecture], **BACKBONE, **extra}


def shapes(cfg: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The checkpoint the release builds for this config: every name of its layout at the draft's values."""
    model = architecture_model("vllm", RELEASE, cfg["architectures"][0])
    assert model is not None
    found = layout_checkpoint(model, variables(model, cfg, target_hidden=H, target_vocab=T), {"d2t": (T,)}, cfg)
    assert found is not None
    return {name: shape for name, shape in found.items() if name != "d2t"}  # D == T: no mapping


def check(root: Path, cfg: dict[str, Any], tensors: dict[str, tuple[int, ...]]) -> list[dict[str, Any]]:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps(cfg))
    write_safetensors(root / "model.safetensors", {n: np.zeros(s, dtype=np.float32) for n, s in tensors.items()})
    done = run_cli("check", str(root), "--target-vocab-size", str(T), "--runtime", f"vllm=={RELEASE}",
                   "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    findings: list[dict[str, Any]] = json.loads(done.stdout)["checkpoints"][0]["findings"]
    return findings


NOTES = frozenset({"DSP232"})  # "judged by the release's generated model" (a class no vocab contract describes)


def codes(findings: list[dict[str, Any]]) -> list[str]:
    return sorted(f["code"] for f in findings if f["code"] not in NOTES)


def said(findings: list[dict[str, Any]], code: str) -> str:
    return " ".join(str(f.get("message", "")) for f in findings if f["code"] == code)


def test_the_record_says_what_each_key_does_and_sizes_with_the_draft_value() -> None:
    model = architecture_model("vllm", RELEASE, "DFlash2DraftModel")
    assert model is not None
    kernel = model.structural["dflash_config.conv_kernel_size"]
    assert kernel["resized"] and not kernel.get("appears") and "shapes" in kernel
    group = model.structural["dflash_config.conv_group_size"]  # 5 refused (must divide hidden_size): 4 sampled
    assert group["alternate"] == 4 and "5" in group["refused_values"]
    dspark = architecture_model("vllm", RELEASE, "Qwen3DSparkModel")
    assert dspark is not None
    head = dspark.structural["enable_confidence_head"]
    assert head["appears"] == ["model.confidence_head.proj.bias", "model.confidence_head.proj.weight"]
    assert False in head["as_base"]  # false builds what the base (absent) builds
    cfg = config("DFlash2DraftModel", dflash_config=DFLASH2)
    values = variables(model, cfg, target_hidden=H, target_vocab=T)
    at_draft, unjudged = keyed(model, cfg, values)
    assert not unjudged
    assert tuple(e.value(values) for e in at_draft["model.fc.weight"] if e is not None) == (H, 3 * H)
    assert tuple(e.value(values) for e in at_draft["model.layers.{i}.attention_conv.base_kernel"]
                 if e is not None) == (2, 5, H)


def test_dflash2_missing_a_conv_kernel_under_an_unsampled_kernel_size_is_reported(tmp_path: Path) -> None:
    cfg = config("DFlash2DraftModel", dflash_config=DFLASH2)
    complete = shapes(cfg)
    assert complete["layers.0.attention_conv.base_kernel"] == (2, 5, H)
    assert codes(check(tmp_path / "ok", cfg, complete)) == []
    missing = {n: s for n, s in complete.items() if n != "layers.0.attention_conv.base_kernel"}
    found = check(tmp_path / "missing", cfg, missing)
    assert codes(found) == ["DSP363"] and "attention_conv.base_kernel" in said(found, "DSP363")
    narrow = {**complete, "layers.0.attention_conv.base_kernel": (2, 3, H)}  # the sampled kernel size, not 5
    assert "DSP361" in codes(check(tmp_path / "narrow", cfg, narrow))


def test_a_confidence_head_is_required_exactly_when_enabled(tmp_path: Path) -> None:
    """vLLM 0.34.0 builds the head only where enable_confidence_head is set (qwen3_dspark.py L220-228) and skips its
    tensors otherwise (L355-356): unshipped under true, it keeps its initial values (DSP363)."""
    base = config("Qwen3DSparkModel", markov_rank=4, target_layer_ids=[1, 2], mask_token_id=0)
    for flag in (True, False, None):
        cfg = {**base, "enable_confidence_head": flag} if flag is not None else base
        without = shapes(cfg)
        assert not any(n.startswith("confidence_head") for n in without)
        missing = check(tmp_path / f"{flag}-missing", cfg, without)
        shipped = check(tmp_path / f"{flag}-shipped", cfg, {**without, **CONFIDENCE})
        if flag:
            assert codes(missing) == ["DSP363"] and "confidence_head.proj.weight" in said(missing, "DSP363")
            assert codes(shipped) == []
        else:
            assert codes(missing) == [] and codes(shipped) == []


def test_a_correct_lilicorr_draft_at_values_the_samples_did_not_take_loads(tmp_path: Path) -> None:
    """candidate_topk 8 and num_heads 4 (the samples' alternates 5 were refused, 4 taken), block_size 8, factor_dim
    8, three target layers: each sized at the draft's value, no false DSP361."""
    cfg = config("LiLiCorrDraftModel", dflash_config=LILICORR)
    complete = shapes(cfg)
    assert complete["model.lilicorr.rank_embedding"] == (1, 1, 1, 8, H)
    assert complete["model.lilicorr.relative_slot_bias"] == (4, 15)
    assert codes(check(tmp_path / "ok", cfg, complete)) == []
    wrong = {**complete, "model.lilicorr.rank_embedding": (1, 1, 1, 2, H)}  # the sampled topk, not the draft's
    assert "DSP361" in codes(check(tmp_path / "wrong", cfg, wrong))


def test_a_wrong_fc_width_under_an_unsampled_target_layer_count_is_reported(tmp_path: Path) -> None:
    for architecture, extra in (("DFlashDraftModel", {"target_layer_ids": [1, 2, 3], "mask_token_id": 0}),
                                ("Qwen3DSparkModel", {"target_layer_ids": [1, 2, 3], "markov_rank": 4,
                                                      "mask_token_id": 0}),
                                ("DFlash2DraftModel", {"dflash_config": DFLASH2})):
        cfg = config(architecture, **extra)
        complete = shapes(cfg)
        assert complete["fc.weight"] == (H, 3 * H), architecture
        assert codes(check(tmp_path / f"{architecture}-ok", cfg, complete)) == [], architecture
        found = check(tmp_path / f"{architecture}-wrong", cfg, {**complete, "fc.weight": (H, 2 * H)})
        assert "DSP361" in codes(found) and "fc.weight" in said(found, "DSP361"), architecture


def test_the_worker_and_the_evaluator_read_a_keys_value_alike() -> None:
    """verify/release_worker.py imports nothing of dspark_ckpt (it runs inside the release), so it keeps its own
    copy of how a key's value sizes a parameter and names its variable; the landing computes the recorded shapes
    with release_model's. Both must answer alike for every kind of value, or the fitted shapes mean another thing."""
    from dspark_ckpt.runtimes import release_model
    from dspark_ckpt.verify import release_worker

    values = [True, False, 0, 1, 7, -3, 2.0, 2.5, 0.0, -1.0, [], [4], [1, 2, 3], "3", None, {"a": 1}]
    for value in values:
        assert release_worker._sized_value(value) == release_model.sized_value(value), value
        assert release_worker.key_variable("k", value) == release_model.key_variable("k", value), value
