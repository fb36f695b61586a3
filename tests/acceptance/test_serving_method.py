"""The serving method is an input (issue 40 item 3): a base-class architecture served with a named method is routed
as each release routes it, and "not a draft" (DSP231) is said only where no method applies. Real tiny checkpoints
through the CLI, one per class. The truth, from the releases' own code:
- vLLM renames the class by method in EAGLEConfig.__init__ (vllm/transformers_utils/configs/eagle.py L14-88 @ v0.33.0,
  L12-73 @ v0.12.0, executed per release: runtimes/release_data/vllm-X/config_rewrites.json), after every draft
  ModelConfig's hf_overrides (SpeculativeConfig.hf_config_override, vllm/config/speculative.py L711-1169 @ v0.33.0:
  model_type deepseek_v3 -> deepseek_mtp, architectures ["DeepSeekMTPModel"]), and update_arch_ (L1872-1887 @ v0.33.0)
  resolves the renamed name in the registry: `Model architectures [...] are not supported for now` where it has none.
- SGLang resolves `architectures[0]` as written: ModelConfig._config_draft_model (sglang/srt/configs/model_config.py
  L1010-1212 @ 0.5.23) rewrites only MTP/NextN heads, so LlamaForCausalLM is built as the target class, whose
  _legacy_load_weights skips every name it has no parameter for (models/llama.py L708-779 @ 0.5.23); EAGLE3's worker
  then reads `model.hot_token_id` (speculative/eagle_worker_v2.py L366 @ 0.5.23), which LlamaForCausalLM lacks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_cli, write_safetensors

V, T, H, I, HEADS, KV, HD = 96, 96, 16, 32, 2, 1, 8
RUNTIMES = ("vllm==0.33.0", "vllm==0.20.0", "vllm==0.12.0", "sglang==0.5.23")


def _rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape, dtype=np.float32)


def _folder(root: Path, config: dict[str, Any], shapes: dict[str, tuple[int, ...]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config))
    write_safetensors(root / "model.safetensors", {n: _rand(*s) for n, s in shapes.items()})
    return root


def _llama(**extra: Any) -> dict[str, Any]:
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": V, "hidden_size": H,
            "num_hidden_layers": 1, "num_attention_heads": HEADS, "num_key_value_heads": KV, "head_dim": HD,
            "intermediate_size": I, "rms_norm_eps": 1e-5, "max_position_embeddings": 2048,
            "tie_word_embeddings": False, **extra}


def eagle1(root: Path, **replace: tuple[int, ...]) -> Path:
    """An EAGLE-1 head as the EAGLE repository ships it: LlamaForCausalLM, fc over [embed, hidden], one layer
    without input_layernorm, un-prefixed names, no lm_head."""
    shapes = {"embed_tokens.weight": (V, H), "fc.weight": (H, 2 * H),
              "layers.0.self_attn.q_proj.weight": (HEADS * HD, H), "layers.0.self_attn.k_proj.weight": (KV * HD, H),
              "layers.0.self_attn.v_proj.weight": (KV * HD, H), "layers.0.self_attn.o_proj.weight": (H, HEADS * HD),
              "layers.0.mlp.gate_proj.weight": (I, H), "layers.0.mlp.up_proj.weight": (I, H),
              "layers.0.mlp.down_proj.weight": (H, I), "layers.0.post_attention_layernorm.weight": (H,)}
    return _folder(root, _llama(), {**shapes, **replace})


def eagle3(root: Path, drop: tuple[str, ...] = ()) -> Path:
    """An EAGLE-3 head in SpecForge's layout (`midlayer.`, fc over three aux states) under a plain Llama config:
    no draft architecture and no draft-only key."""
    shapes = {"embed_tokens.weight": (V, H), "fc.weight": (H, 3 * H), "norm.weight": (H,), "lm_head.weight": (V, H),
              "midlayer.self_attn.q_proj.weight": (HEADS * HD, 2 * H),
              "midlayer.self_attn.k_proj.weight": (KV * HD, 2 * H),
              "midlayer.self_attn.v_proj.weight": (KV * HD, 2 * H), "midlayer.self_attn.o_proj.weight": (H, HEADS * HD),
              "midlayer.mlp.gate_proj.weight": (I, H), "midlayer.mlp.up_proj.weight": (I, H),
              "midlayer.mlp.down_proj.weight": (H, I), "midlayer.input_layernorm.weight": (H,),
              "midlayer.hidden_norm.weight": (H,), "midlayer.post_attention_layernorm.weight": (H,)}
    return _folder(root, _llama(), {n: s for n, s in shapes.items() if n not in drop})


def check(path: Path, method: str | None, *runtimes: str) -> tuple[int, dict[str, Any]]:
    args = ["check", str(path), "--target-vocab-size", str(T), "--format", "json"]
    for rt in runtimes or RUNTIMES:
        args += ["--runtime", rt]
    if method is not None:
        args += ["--speculative-config", json.dumps({"method": method, "model": str(path),
                                                     "num_speculative_tokens": 3})]
    result = run_cli(*args)
    assert "Traceback" not in result.stderr, result.stderr
    (doc,) = json.loads(result.stdout)["checkpoints"]
    return result.returncode, doc


def rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{r['runtime']}=={r['version']}": r for r in doc["compatibility"]}


def codes(doc: dict[str, Any]) -> set[str]:
    return {f["code"] for f in doc["findings"]}


@pytest.mark.parametrize("build", [eagle1, eagle3])
def test_without_a_method_a_base_class_is_still_not_a_draft(tmp_path: Path, build: Any) -> None:
    code, doc = check(build(tmp_path / "d"), None)
    assert code == 1 and "DSP231" in codes(doc)
    assert "--speculative-config names its method" in next(f for f in doc["findings"] if f["code"] == "DSP231")["message"]
    assert all(r["error_code"] == "DSP368" for r in doc["compatibility"])


def test_an_eagle1_llama_head_served_as_eagle_is_judged_per_release(tmp_path: Path) -> None:
    _, doc = check(eagle1(tmp_path / "e1"), "eagle")
    assert "DSP231" not in codes(doc)
    by = rows(doc)
    assert set(by) == set(RUNTIMES)  # every release asked has a row
    # vLLM: LlamaForCausalLM + eagle -> EagleLlamaForCausalLM (eagle.py), judged on the release's generated model
    assert by["vllm==0.33.0"]["loads"] is True and "llama_eagle.py" in by["vllm==0.33.0"]["source"]
    for spec in ("vllm==0.20.0", "vllm==0.12.0"):  # registered as EagleLlamaForCausalLM in every listed release
        assert by[spec]["loads"] is True and not by[spec]["silent_codes"], by[spec]
    # SGLang: the target class, every draft layer skipped: loads, and says so
    sglang = by["sglang==0.5.23"]
    assert sglang["loads"] is True and sglang["silent_codes"] == ["DSP369"]
    assert "target class LlamaForCausalLM" in sglang["silent"][0] and "initial values" in sglang["silent"][0]
    assert next(f for f in doc["findings"] if f["code"] == "DSP369")["severity"] == "error"


def test_a_wrong_fc_width_of_an_eagle1_head_fails_on_vllm(tmp_path: Path) -> None:
    """EagleLlamaForCausalLM sizes fc [H, 2H] (llama_eagle.py): a routed base class is judged, not waved through."""
    _, doc = check(eagle1(tmp_path / "e1", **{"fc.weight": (H, 3 * H)}), "eagle", "vllm==0.33.0")
    row = rows(doc)["vllm==0.33.0"]
    assert row["loads"] is False and row["error_code"] == "DSP361", row


def test_a_plain_llama_config_served_as_eagle3(tmp_path: Path) -> None:
    _, doc = check(eagle3(tmp_path / "p3"), "eagle3")
    assert doc["family"] == "eagle3-llama" and not codes(doc) & {"DSP231", "DSP203"}
    by = rows(doc)
    for spec in ("vllm==0.33.0", "vllm==0.20.0", "vllm==0.12.0"):  # Eagle3LlamaForCausalLM, every release
        assert by[spec]["loads"] is True, by[spec]
        assert "Eagle3LlamaForCausalLM" in by[spec]["source"] or "llama_eagle3" in by[spec]["source"], by[spec]
    sglang = by["sglang==0.5.23"]
    assert sglang["loads"] is False and sglang["error_code"] == "DSP369"
    assert "'LlamaForCausalLM' object has no attribute 'hot_token_id'" in sglang["error"]


def test_a_plain_llama_eagle3_head_missing_a_layer_tensor_is_named(tmp_path: Path) -> None:
    _, doc = check(eagle3(tmp_path / "p3", drop=("midlayer.mlp.down_proj.weight",)), "eagle3", "vllm==0.33.0")
    row = rows(doc)["vllm==0.33.0"]  # EAGLE-3's load_weights reports nothing, so the loader refuses nothing (DSP363)
    assert row["loads"] is True and row["silent_codes"] == ["DSP363"], row
    assert row["silent"][0].endswith("model.layers.0.mlp.down_proj.weight"), row


def test_independent_draft_model_is_not_called_a_target(tmp_path: Path) -> None:
    """method draft_model serves the folder as a model of its own: no DSP231, and each row says why no verdict."""
    _, doc = check(eagle1(tmp_path / "e1"), "draft_model", "vllm==0.33.0")
    assert "DSP231" not in codes(doc)
    row = rows(doc)["vllm==0.33.0"]
    assert row["error_code"] == "DSP368" and "independent model" in row["error"], row


def test_an_eagle3_deepseek_draft_typed_deepseek_v3_fails_in_vllm(tmp_path: Path) -> None:
    """hf_config_override makes it DeepSeekMTPModel; EAGLEConfig then names Eagle3DeepSeekMTPModel, which no release
    registers. The same draft typed kimi_k2 keeps its class (tests/acceptance/test_generated_verdicts.py)."""
    shapes = {"embed_tokens.weight": (V, H), "fc.weight": (H, 3 * H), "norm.weight": (H,), "lm_head.weight": (V, H)}
    config = {"architectures": ["Eagle3DeepseekV2ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": V,
              "hidden_size": H, "num_hidden_layers": 1}
    _, doc = check(_folder(tmp_path / "ds", config, shapes), None, "vllm==0.33.0", "vllm==0.20.0")
    for row in doc["compatibility"]:
        assert row["error_code"] == "DSP309", row
        assert row["error"] == "Model architectures ['Eagle3DeepSeekMTPModel'] are not supported for now."
        assert "hf_config_override: model_type deepseek_v3 -> deepseek_mtp" in row["source"]


def test_a_speculators_config_keeps_its_own_method(tmp_path: Path) -> None:
    """vLLM locks a speculators draft to its speculators_model_type (speculative.py, speculators_override): the
    method given does not reroute it, so check's rows are the same with and without it."""
    from conftest import make_checkpoint

    path = make_checkpoint(tmp_path / "spec", family="eagle3-llama", draft_vocab=64, d2t=True, markov=False,
                           config_extra={"architectures": ["Eagle3Speculator"], "model_type": None})
    config = json.loads((path / "config.json").read_text())
    config.pop("model_type", None)
    config.update({"speculators_model_type": "eagle3", "speculators_config": {
        "algorithm": "eagle3", "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
        "verifier": {"name_or_path": "target", "architectures": ["LlamaForCausalLM"]}},
        "transformer_layer_config": {"model_type": "llama", "vocab_size": V, "hidden_size": 16}})
    (path / "config.json").write_text(json.dumps(config))
    _, plain = check(path, None, "vllm==0.33.0")
    _, given = check(path, "eagle", "vllm==0.33.0")
    strip = ("source",)
    assert [{k: v for k, v in r.items() if k not in strip} for r in plain["compatibility"]] == \
        [{k: v for k, v in r.items() if k not in strip} for r in given["compatibility"]]
    assert "DSP231" not in codes(given)


def test_sglang_dflash_and_an_unread_release(tmp_path: Path) -> None:
    """DFLASH (0.5.19+) reads the draft's candidate_selector at start-up (dflash_worker_v2.py L442 @ 0.5.23); 0.5.16's
    worker calls its project_target_hidden at the first request's prefill (L1092 @ 0.5.16). 0.5.8's files were read
    (release_data/sglang_target_class.json: `_config_draft_model` L266, the skip at models/llama.py L670): under
    EAGLE it loads the target class and says what stays unwritten. A release whose files show no line the table
    reads (0.5.3: no eagle_worker_v2.py) gets no verdict, and says why, rather than a guess."""
    path = eagle1(tmp_path / "e1")
    _, doc = check(path, "dflash", "sglang==0.5.23", "sglang==0.5.16")
    by = rows(doc)
    assert by["sglang==0.5.23"]["error_code"] == "DSP369"
    assert "'LlamaForCausalLM' object has no attribute 'candidate_selector'" in by["sglang==0.5.23"]["error"]
    assert by["sglang==0.5.16"]["error_code"] == "DSP369"
    assert "'LlamaForCausalLM' object has no attribute 'project_target_hidden'" in by["sglang==0.5.16"]["error"]
    _, doc = check(path, "eagle", "sglang==0.5.8", "sglang==0.5.3")
    row = rows(doc)["sglang==0.5.8"]
    assert row["loads"] is True and row["silent_codes"] == ["DSP369"], row
    assert "target class LlamaForCausalLM" in row["silent"][0] and "models/llama.py:670 @ 0.5.8" in row["silent"][0]
    row = rows(doc)["sglang==0.5.3"]
    assert row["error_code"] == "DSP368" and "not a draft class" in row["error"], row
