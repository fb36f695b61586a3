"""Every draft architecture a covered release registers is known as such (issue 21 item 1): one the tool does not
model is 'registered, not modelled' (DSP232), never DSP309; a target model's own folder is 'not a draft' (DSP231).
Real tiny checkpoints, one per class, per release (runtimes/registered_architectures.json is the wheels' data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_cli, write_safetensors

from dspark_ckpt.runtimes.versions import VLLM_RELEASES

V, D, T, H = 96, 64, 96, 16


def _folder(root: Path, config: dict[str, Any], tensors: dict[str, np.ndarray]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config))
    write_safetensors(root / "model.safetensors", tensors)
    return root


def _eagle3_mla(root: Path, *, lm_head: bool, **extra: Any) -> Path:
    """A Kimi/DeepSeek-MLA EAGLE-3 draft as SpecForge exports it: pruned, d2t/t2d, one MLA layer."""
    rng = np.random.default_rng(0)
    tensors = {"embed_tokens.weight": rng.standard_normal((V, H), dtype=np.float32),
               "fc.weight": rng.standard_normal((H, 3 * H), dtype=np.float32),
               "layers.0.self_attn.q_a_proj.weight": rng.standard_normal((8, H), dtype=np.float32),
               "norm.weight": np.ones(H, dtype=np.float32),
               "d2t": np.zeros(D, dtype=np.int64), "t2d": np.r_[np.ones(D, bool), np.zeros(T - D, bool)]}
    if lm_head:
        tensors["lm_head.weight"] = rng.standard_normal((D, H), dtype=np.float32)
    config = {"architectures": ["Eagle3DeepseekV2ForCausalLM"], "model_type": "kimi_k2", "vocab_size": V,
              "draft_vocab_size": D, "hidden_size": H, "num_hidden_layers": 1, "tie_word_embeddings": False, **extra}
    return _folder(root, config, tensors)


def _target(root: Path, arch: str) -> Path:
    rng = np.random.default_rng(1)
    config = {"architectures": [arch], "model_type": "qwen2", "vocab_size": T, "hidden_size": H,
              "num_hidden_layers": 1}
    return _folder(root, config, {"model.embed_tokens.weight": rng.standard_normal((T, H), dtype=np.float32),
                                  "lm_head.weight": rng.standard_normal((T, H), dtype=np.float32)})


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


@pytest.mark.parametrize("runtime", ["sglang==0.5.23", "sglang==0.5.12", "vllm==0.33.0", "vllm==0.27.0"])
def test_kimi_eagle3_is_registered_not_modelled(tmp_path: Path, runtime: str) -> None:
    _, doc = _check(_eagle3_mla(tmp_path / "kimi-eagle3", lm_head=True), runtime)
    codes = _codes(doc)
    assert "DSP309" not in codes and "DSP203" not in codes
    note = codes["DSP232"]
    assert note["severity"] == "warning"
    assert "Eagle3DeepseekV2ForCausalLM" in note["message"]
    assert "sglang 0.5.12-0.5.23 (sglang/srt/models/kimi_k25_eagle3.py:523 @ 0.5.23)" in note["message"]
    # registered from vLLM 0.18.0 on (registry.py @ v0.18.0 maps it to deepseek_eagle3.py, which 0.17.x does not
    # ship; @ v0.20.0 L586 .. @ v0.34.0)
    assert f"vllm 0.18.0-{VLLM_RELEASES[-1]}" in note["message"]
    assert not any(c["error_code"] == "DSP309" for c in doc["compatibility"])


@pytest.mark.parametrize("runtime", ["sglang==0.5.23", "sglang==0.5.12"])
def test_kimi_eagle3_without_lm_head_keeps_a_random_head_on_sglang(tmp_path: Path, runtime: str) -> None:
    code, doc = _check(_eagle3_mla(tmp_path / "kimi-eagle3", lm_head=False), runtime)
    head = _codes(doc)["DSP315"]
    assert runtime in head["message"] and "stays random" in head["message"]
    assert "kimi_k25_eagle3.py" in head["message"]
    assert code == 1


def test_kimi_eagle3_without_lm_head_null_draft_vocab_shares_the_target_head(tmp_path: Path) -> None:
    _, doc = _check(_eagle3_mla(tmp_path / "kimi-eagle3", lm_head=False, draft_vocab_size=None), "sglang==0.5.23")
    assert "DSP315" not in _codes(doc)


def test_kimi_eagle3_on_a_release_before_it_is_not_registered(tmp_path: Path) -> None:
    _, doc = _check(_eagle3_mla(tmp_path / "kimi-eagle3", lm_head=False), "sglang==0.5.11")
    codes = _codes(doc)
    assert "sglang==0.5.11" in codes["DSP309"]["message"]  # the release really lacks the EntryClass
    assert "DSP315" not in codes  # not loaded there at all
    assert "DSP232" in codes  # later releases do register it


@pytest.mark.parametrize(("arch", "runtime"), [
    ("MedusaModel", "vllm==0.32.0"), ("DeepSeekMTPModel", "vllm==0.33.0"), ("EagleLlama4ForCausalLM", "vllm==0.33.0"),
    ("DFlash2BeamDraftModel", "vllm==0.33.0"), ("K3DSparkModel", "vllm==0.33.0"),
    ("LingDSparkModel", "sglang==0.5.23"), ("DeepseekV3ForCausalLMNextN", "sglang==0.5.23"),
])
def test_each_unmodelled_draft_class_is_registered_not_modelled(tmp_path: Path, arch: str, runtime: str) -> None:
    config = {"architectures": [arch], "model_type": "llama", "vocab_size": V, "hidden_size": H}
    folder = _folder(tmp_path / "d", config, {"embed_tokens.weight": np.zeros((V, H), np.float32)})
    _, doc = _check(folder, runtime)
    codes = _codes(doc)
    assert arch in codes["DSP232"]["message"] and "DSP309" not in codes and "DSP203" not in codes


def test_unknown_name_stays_unknown_and_unregistered(tmp_path: Path) -> None:
    config = {"architectures": ["FooDraftModel"], "model_type": "llama", "vocab_size": V, "hidden_size": H}
    _, doc = _check(_folder(tmp_path / "d", config, {"embed_tokens.weight": np.zeros((V, H), np.float32)}),
                    "sglang==0.5.23", "vllm==0.33.0")
    codes = _codes(doc)
    assert {"DSP203", "DSP309"} <= set(codes) and "DSP232" not in codes


@pytest.mark.parametrize("runtime", ["sglang==0.5.23", "sglang==0.5.1", "vllm==0.33.0"])
def test_target_folder_as_the_draft_is_not_a_draft(tmp_path: Path, runtime: str) -> None:
    code, doc = _check(_target(tmp_path / "Qwen2.5-0.5B", "Qwen2ForCausalLM"), runtime)
    codes = _codes(doc)
    found = codes["DSP231"]
    assert found["severity"] == "error"
    assert found["message"].startswith("not a draft: config.json names the target model Qwen2ForCausalLM")
    assert "--target" in found["message"]
    assert "DSP309" not in codes and "DSP203" not in codes
    # every requested release still gets its row (issue 42): no verdict, and why; DSP231 alone is the finding
    (row,) = doc["compatibility"]
    assert f"{row['runtime']}=={row['version']}" == runtime and row["loads"] is None
    assert row["error_code"] == "DSP368" and "not a draft (DSP231)" in row["error"] and "DSP368" not in codes
    assert code == 1


@pytest.mark.parametrize("arch", ["Eagle3DeepseekV2ForCausalLM", "Eagle3DeepseekV3ForCausalLM"])
def test_deepseek_eagle3_on_vllm_0_28_is_registered_not_modelled_and_says_why(tmp_path: Path, arch: str) -> None:
    """vLLM 0.28.0 cannot build its DeepSeek EAGLE-3 heads on CPU: its MLA prefill selector falls back to the
    FlashAttention backend where the device has no capability (v1/attention/backends/mla/prefill/selector.py
    L110-115 @ 0.28.0), whose module imports `compile_flash_attn_varlen_func_from_specs`, a name fa_utils.py defines
    only on CUDA, XPU and ROCm (L18-41 @ 0.28.0). 0.29.0 adds the CPU SDPA prefill backend (cpu_sdpa.py) and builds
    them. The release's own failure, recorded as its generated model's `not_built`: the row says so, and why."""
    folder = _eagle3_mla(tmp_path / "deepseek-eagle3", lm_head=True, architectures=[arch], model_type="deepseek_v2",
                         kv_lora_rank=8, q_lora_rank=None, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8)
    _, doc = _check(folder, "vllm==0.28.0")
    codes = _codes(doc)
    assert "DSP232" in codes and "DSP309" not in codes
    (row,) = doc["compatibility"]
    assert row["loads"] is None and row["error_code"] == "DSP368"
    assert f"registered, not modelled: vllm 0.28.0's own code stops building {arch} on CPU" in row["error"]
    assert "cannot import name 'compile_flash_attn_varlen_func_from_specs'" in row["error"]
    assert "vllm/v1/attention/backends/mla/prefill/flash_attn.py" in row["error"]
    _, later = _check(folder, "vllm==0.29.0")  # built there: judged, not "not modelled"
    assert "own code stops building" not in json.dumps(later)


@pytest.mark.parametrize("runtime", ["sglang==0.5.23", "sglang==0.5.19"])
def test_a_class_only_cuda_builds_is_registered_not_modelled_with_the_releases_reason(tmp_path: Path,
                                                                                      runtime: str) -> None:
    """Dots3's MTP head: its recipe (Dots3Config's MLA and SWA geometry) builds up to the release's own CUDA-only
    stop (models/dots3_common/modeling.py `_require_cuda`), which the record keeps and DSP232 says."""
    config = {"architectures": ["Dots3NoteForCausalLMNextN"], "model_type": "dots3_note", "vocab_size": V,
              "hidden_size": H, "num_hidden_layers": 1, "layer_types": ["sliding_attention"]}
    folder = _folder(tmp_path / "d", config, {"model.embed_tokens.weight": np.zeros((V, H), np.float32)})
    _, doc = _check(folder, runtime)
    note = _codes(doc)["DSP232"]["message"]
    assert "Dots3NoteForCausalLMNextN" in note and "Dots3 model only supports CUDA backend." in note
    assert "dots3_common/modeling.py" in note
