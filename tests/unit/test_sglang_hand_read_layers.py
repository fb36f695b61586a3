"""The hand-read SGLang facts the release records cannot hold (runtimes/sglang_null_refusals.py,
runtimes/past_first_layer.py): tied to the registry, and read as their docstrings say."""

from __future__ import annotations

from dspark_ckpt.runtimes import past_first_layer
from dspark_ckpt.runtimes.registered import registrations
from dspark_ckpt.runtimes.sglang_null_refusals import refused_null, table


def test_each_null_refusal_names_every_sglang_release_that_registers_its_class() -> None:
    assert table()
    for arch, keys in table().items():
        registered = {r.release for r in registrations(arch) if r.runtime == "sglang"}
        assert registered, arch
        for key, said in keys.items():
            assert set(said["lines"]) == registered, (arch, key, sorted(registered ^ set(said["lines"])))


def test_a_null_is_refused_and_an_absent_or_numeric_key_is_not() -> None:
    arch = "Eagle3DeepseekV2ForCausalLM"
    refused = refused_null("0.5.23", arch, {"q_lora_rank": None})
    assert refused is not None and refused.code == "DSP372" and "requires q_lora_rank" in refused.text
    assert refused_null("0.5.23", arch, {}) is None  # the config class's default (1536) builds
    assert refused_null("0.5.23", arch, {"q_lora_rank": 8}) is None
    assert refused_null("0.5.11", arch, {"q_lora_rank": None}) is None  # not registered there: not read
    assert refused_null("0.5.23", "LlamaForCausalLMEagle3", {"q_lora_rank": None}) is None


def test_the_input_norm_of_layers_past_the_first_is_found_under_either_prefix() -> None:
    arch = "LlamaForCausalLMEagle"
    assert past_first_layer.parameter_of("sglang", arch, "layers.1.input_layernorm.weight") == \
        "model.layers.1.input_layernorm.weight"
    assert past_first_layer.parameter_of("sglang", arch, "model.layers.12.input_layernorm.weight") == \
        "model.layers.12.input_layernorm.weight"
    assert past_first_layer.parameter_of("sglang", arch, "layers.0.input_layernorm.weight") is None  # deleted
    assert past_first_layer.parameter_of("sglang", arch, "layers.1.post_attention_layernorm.weight") is None
    assert past_first_layer.parameter_of("vllm", arch, "layers.1.input_layernorm.weight") is None
    for (runtime, name) in past_first_layer.PAST_FIRST:
        assert runtime == "sglang" and registrations(name), name
