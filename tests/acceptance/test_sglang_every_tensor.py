"""Every tensor of an SGLang draft is judged on the release's generated model (issue 21), as for vLLM: the release's
own class, built and fed on CPU by tools/sglang_release_model.py (runtimes/release_data/sglang-0.5.23), decides
what a tensor of the wrong shape or a layer the checkpoint lacks does. Real tiny checkpoints, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from conftest import make_checkpoint, run_cli, write_safetensors

from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

T = 96
NEWEST = "sglang==0.5.23"
DSPARK = {"markov_head_type": "vanilla", "mask_token_id": 0}


def _check(path: Path, *runtimes: str) -> tuple[int, dict[str, Any]]:
    args = ["check", str(path), "--target-vocab-size", str(T), "--format", "json"]
    for rt in runtimes:
        args += ["--runtime", rt]
    result = run_cli(*args)
    assert "Traceback" not in result.stderr, result.stderr
    (doc,) = json.loads(result.stdout)["checkpoints"]
    return result.returncode, doc


def _codes(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["code"]: f for f in doc["findings"]}


def _verdict(doc: dict[str, Any], version: str) -> dict[str, Any]:
    return next(c for c in doc["compatibility"] if c["runtime"] == "sglang" and c["version"] == version)


def _retensor(path: Path, **changes: np.ndarray) -> Path:
    """Rewrite model.safetensors with these tensors replaced (`__` in a keyword for `.`)."""
    from safetensors.numpy import load_file

    tensors = load_file(str(path / "model.safetensors"))
    tensors.update({name.replace("__", "."): value for name, value in changes.items()})
    write_safetensors(path / "model.safetensors", tensors)
    return path


def test_the_generated_sglang_release_is_read() -> None:
    model = architecture_model("sglang", "0.5.23", "Qwen3DSparkModel")
    assert model is not None and model.not_built is None
    assert model.where.startswith("sglang/srt/models/dspark.py:")


def test_a_complete_dspark_draft_loads_clean_on_the_newest_sglang(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", config_extra=DSPARK)
    _, doc = _check(path, NEWEST)
    verdict = _verdict(doc, "0.5.23")
    assert verdict["loads"] and not {"DSP360", "DSP361", "DSP362", "DSP363"} & set(verdict["silent_codes"])


def test_a_non_vocab_tensor_of_the_wrong_shape_gets_the_releases_own_error(tmp_path: Path) -> None:
    """o_proj one row more than 0.5.23 builds from the config: its RowParallelLinear weight_loader asserts
    (sglang/srt/layers/linear.py); one column more it narrows to fit without a word (DSP362)."""
    path = _retensor(make_checkpoint(tmp_path / "d", config_extra=DSPARK),
                     layers__0__self_attn__o_proj__weight=np.zeros((17, 16), np.float32))
    # every listed release is generated today (tools/sglang_release_model.py); one listed without data is the
    # comparison: there the backbone is not judged
    unmodelled = next((r for r in reversed(SGLANG_RELEASES) if r not in generated_releases("sglang")), None)
    code, doc = _check(path, NEWEST, *([f"sglang=={unmodelled}"] if unmodelled else []))
    newest = _verdict(doc, "0.5.23")
    assert not newest["loads"] and newest["error_code"] == "DSP361"
    assert newest["error"].startswith("AssertionError: param_data.shape=torch.Size([16, 16]) "
                                      "loaded_weight.shape=torch.Size([17, 16])")  # the release's words
    assert "layers.0.self_attn.o_proj.weight [17, 16]" in newest["error"]
    assert "DSP361" in _codes(doc) and "sglang==0.5.23" in _codes(doc)["DSP361"]["message"]
    if unmodelled:
        assert _verdict(doc, unmodelled)["error_code"] != "DSP361"
    assert code == 1


def test_a_column_too_many_is_cut_without_a_word(tmp_path: Path) -> None:
    path = _retensor(make_checkpoint(tmp_path / "d", config_extra=DSPARK),
                     layers__0__self_attn__o_proj__weight=np.zeros((16, 17), np.float32))
    _, doc = _check(path, NEWEST)
    verdict = _verdict(doc, "0.5.23")
    assert verdict["loads"] and "DSP362" in verdict["silent_codes"]


def test_an_eagle3_layer_the_checkpoint_lacks_keeps_its_initial_values(tmp_path: Path) -> None:
    """num_hidden_layers 2 with one layer shipped: 0.5.23's LlamaForCausalLMEagle3 builds two (one layer only
    before 0.5.12) and loads without a word (DSP363)."""
    path = make_checkpoint(tmp_path / "d", family="eagle3-llama", draft_vocab=64, d2t=True, markov=False,
                           config_extra={"model_type": "llama", "num_hidden_layers": 2})
    _, doc = _check(path, NEWEST)
    verdict = _verdict(doc, "0.5.23")
    assert verdict["loads"] and "DSP363" in verdict["silent_codes"]
    assert "model.layers.1.self_attn.o_proj.weight" in " ".join(verdict["silent"])


def _kimi_eagle3(root: Path, *, lm_head: bool) -> Path:
    """A Kimi/DeepSeek-MLA EAGLE-3 draft, its layer complete as 0.5.23's Eagle3DeepseekV2ForCausalLM loads it."""
    model = architecture_model("sglang", "0.5.23", "Eagle3DeepseekV2ForCausalLM")
    assert model is not None and model.not_built is None
    config = {"architectures": ["Eagle3DeepseekV2ForCausalLM"], "model_type": "kimi_k2", "vocab_size": T,
              "draft_vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
              "intermediate_size": 24, "q_lora_rank": 8, "kv_lora_rank": 8, "qk_rope_head_dim": 4,
              "qk_nope_head_dim": 4, "v_head_dim": 4, "tie_word_embeddings": False}
    shapes = {"embed_tokens.weight": (T, 16), "fc.weight": (16, 48), "norm.weight": (16,),
              "midlayer.hidden_norm.weight": (16,), "midlayer.input_layernorm.weight": (16,),
              "midlayer.post_attention_layernorm.weight": (16,), "midlayer.mlp.gate_proj.weight": (24, 16),
              "midlayer.mlp.up_proj.weight": (24, 16), "midlayer.mlp.down_proj.weight": (16, 24),
              "midlayer.self_attn.q_a_proj.weight": (8, 32), "midlayer.self_attn.q_a_layernorm.weight": (8,),
              "midlayer.self_attn.kv_a_proj_with_mqa.weight": (12, 32),
              "midlayer.self_attn.kv_a_layernorm.weight": (8,), "midlayer.self_attn.q_b_proj.weight": (16, 8),
              "midlayer.self_attn.kv_b_proj.weight": (16, 8), "midlayer.self_attn.o_proj.weight": (16, 8)}
    if lm_head:
        shapes["lm_head.weight"] = (64, 16)
    tensors: dict[str, np.ndarray] = {name: np.zeros(shape, np.float32) for name, shape in shapes.items()}
    tensors["d2t"] = np.zeros(64, np.int64)
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps(config))
    write_safetensors(root / "model.safetensors", tensors)
    return root


def test_kimi_eagle3_draft_is_judged_tensor_by_tensor_on_the_newest_sglang(tmp_path: Path) -> None:
    """A registered class with no vocab contract (DSP232): 0.5.23's generated model still builds it, so a complete
    draft (its MLA q_a_proj/kv_a_proj_with_mqa fused by the release's own load_weights) loads without a problem."""
    _, doc = _check(_kimi_eagle3(tmp_path / "kimi", lm_head=True), NEWEST)
    assert "DSP232" in _codes(doc)
    verdict = _verdict(doc, "0.5.23")
    assert verdict["loads"] and not set(verdict["silent_codes"]), verdict


def test_kimi_eagle3_without_lm_head_keeps_a_random_head_on_the_newest_sglang(tmp_path: Path) -> None:
    """The generated model says so: 0.5.23's class, built on CPU, has its own lm_head.weight [draft_vocab_size,
    hidden_size] and leaves load_lm_head_from_target False when draft_vocab_size is declared, so the speculative
    worker never puts the target's head there (eagle_worker_v2.py): DSP315 cites that, not a hand-kept line."""
    code, doc = _check(_kimi_eagle3(tmp_path / "kimi", lm_head=False), NEWEST)
    head = _codes(doc)["DSP315"]
    model = architecture_model("sglang", "0.5.23", "Eagle3DeepseekV2ForCausalLM")
    assert model is not None and model.head_from_target == {"declared": False, "null": True}
    assert [e.text if e else None for e in model.parameters["lm_head.weight"]] == ["draft_vocab_size", "hidden_size"]
    assert NEWEST in head["message"] and "stays random" in head["message"]
    assert f"{model.where} @ 0.5.23: load_lm_head_from_target is False with draft_vocab_size declared" \
        in head["message"]
    assert code == 1


def test_kimi_eagle3_without_lm_head_and_a_null_draft_vocab_takes_the_targets_head(tmp_path: Path) -> None:
    path = _kimi_eagle3(tmp_path / "kimi", lm_head=False)
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, "draft_vocab_size": None}))
    _, doc = _check(path, NEWEST)
    assert "DSP315" not in _codes(doc)
