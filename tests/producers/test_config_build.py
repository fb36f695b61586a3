"""The pure build stage (runtimes/config_build.py) on configs no producer fixture covers: each step's error."""

from __future__ import annotations

from typing import Any

import pytest

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.config_build import build_config

QWEN3_DSPARK: dict[str, Any] = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": 96,
                                "hidden_size": 16, "markov_rank": 4}


def test_omni_before_029_fails_in_the_registry() -> None:
    omni = {**QWEN3_DSPARK, "architectures": ["Qwen3OmniDSparkModel"]}
    built = build_config(omni, "vllm", "0.28.0")
    assert built.error is not None and built.error.code == "DSP309"
    assert built.error.text == "Model architectures ['Qwen3OmniDSparkModel'] are not supported for now."
    assert build_config(omni, "vllm", "0.29.0").family is Family.QWEN3_OMNI_DSPARK


def test_eagle3_renames_a_name_it_does_not_know_into_one_nobody_registers() -> None:
    """configs/eagle.py: method eagle3 prefixes `Eagle3` unless the name starts or ends with it."""
    built = build_config({"architectures": ["PEagleDraftModel"], "model_type": "llama", "vocab_size": 96}, "vllm",
                         "0.33.0")
    assert (built.architecture, built.error and built.error.code) == ("Eagle3PEagleDraftModel", "DSP309")
    kept = build_config({"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "vocab_size": 96},
                        "vllm", "0.33.0")
    assert (kept.architecture, kept.family, kept.error) == ("LlamaForCausalLMEagle3", Family.EAGLE3_LLAMA, None)


@pytest.mark.parametrize(("dflash_config", "text"), [
    (None, "AttributeError: 'EAGLEConfig' object has no attribute 'dflash_config'"),
    ({"conv_kernel_size": 2, "conv_group_size": 4, "selector_rank": 4}, "KeyError: 'selector_top_k'"),
])
def test_dflash2_reads_its_dflash_config_keys(dflash_config: dict[str, Any] | None, text: str) -> None:
    cfg: dict[str, Any] = {"architectures": ["DFlash2DraftModel"], "model_type": "qwen3", "vocab_size": 96}
    if dflash_config is not None:
        cfg["dflash_config"] = dflash_config
    built = build_config(cfg, "vllm", "0.29.0")
    assert built.error is not None and (built.error.code, built.error.text) == ("DSP333", text)
    assert not built.before_validation  # the model's __init__, after the speculative config's own checks


def test_markov_rank_missing_everywhere_is_not_a_nesting_problem() -> None:
    cfg = {k: v for k, v in QWEN3_DSPARK.items() if k != "markov_rank"}
    built = build_config(cfg, "vllm", "0.31.0")
    assert built.error is not None and built.error.code == "DSP333"
    nested = build_config({**cfg, "dflash_config": {"markov_rank": 4}}, "vllm", "0.31.0")
    assert nested.error is not None and nested.error.code == "DSP215"


def test_speculators_required_keys_and_layer_types() -> None:
    base: dict[str, Any] = {"speculators_model_type": "dspark", "speculators_config": {},
                            "transformer_layer_config": {"model_type": "qwen3", "vocab_size": 96}}
    missing = build_config(base, "vllm", "0.30.0")
    assert missing.error is not None and missing.error.text == "KeyError: 'aux_hidden_state_layer_ids'"
    peagle = {**base, "speculators_model_type": "peagle"}
    assert build_config(peagle, "vllm", "0.30.0").error.text == "KeyError: 'mask_token_id'"  # type: ignore[union-attr]
    omni = {**base, "aux_hidden_state_layer_ids": [1], "markov_rank": 4, "architectures": ["Qwen3OmniDSparkModel"]}
    assert build_config(omni, "vllm", "0.28.0").family is Family.QWEN3_DSPARK  # 0.27/0.28 always generic
    assert build_config(omni, "vllm", "0.29.0").family is Family.QWEN3_OMNI_DSPARK


def test_a_release_not_read_takes_the_nearest_rules_and_says_so() -> None:
    built = build_config(QWEN3_DSPARK, "vllm", "0.35.0")
    assert built.source.endswith("assumed for v0.35.0") and built.error is None
    assert build_config(QWEN3_DSPARK, "sglang", "0.5.23").family is Family.QWEN3_DSPARK  # no builder: as written
