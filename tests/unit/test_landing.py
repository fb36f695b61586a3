"""runtimes/landing.py on the committed vLLM 0.33.0 model: each kind of problem, from headers alone (no wheel)."""

from __future__ import annotations

from typing import Any

from conftest import layout_checkpoint

from dspark_ckpt.model.families import ARCHITECTURE_FAMILY
from dspark_ckpt.runtimes.landing import built_indices, land, variables
from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases, modelled_release

H = 16
LLAMA: dict[str, Any] = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": H,
                         "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 32,
                         "num_hidden_layers": 1, "vocab_size": 96, "draft_vocab_size": 96}
LAYER = {"self_attn.q_proj.weight": (16, 32), "self_attn.k_proj.weight": (8, 32), "self_attn.v_proj.weight": (8, 32),
         "self_attn.o_proj.weight": (16, 16), "mlp.gate_proj.weight": (32, 16), "mlp.up_proj.weight": (32, 16),
         "mlp.down_proj.weight": (16, 32), "input_layernorm.weight": (16,), "hidden_norm.weight": (16,),
         "post_attention_layernorm.weight": (16,)}


def eagle3(prefix: str = "layers.0.", **changes: Any) -> dict[str, tuple[int, ...]]:
    out = {f"{prefix}{k}": v for k, v in LAYER.items()} | {"norm.weight": (H,), "fc.weight": (H, 3 * H),
                                                             "lm_head.weight": (96, H), "embed_tokens.weight": (96, H)}
    for name, shape in changes.items():
        if shape is None:
            out.pop(name, None)
        else:
            out[name] = shape
    return out


def model(arch: str = "LlamaForCausalLMEagle3") -> Any:
    found = architecture_model("vllm", "0.33.0", arch)
    assert found is not None
    return found


def run(tensors: dict[str, tuple[int, ...]], config: dict[str, Any] | None = None, **kw: Any) -> list[Any]:
    kw.setdefault("family", ARCHITECTURE_FAMILY.get(model().name))
    return list(land(model(), config or LLAMA, tensors, target_hidden=H, target_vocab=96, **kw))


def test_the_data_lists_its_release() -> None:
    assert "0.33.0" in generated_releases("vllm")


def test_a_release_without_its_own_data_reads_its_minors_or_the_newest() -> None:
    """A patch release reads its minor's model, as the contract rows do; a release newer than every generated one
    the newest (its verdict carries DSP220); an older one none (its code may differ in kind)."""
    known = generated_releases("vllm")
    newest = known[-1]
    assert modelled_release("vllm", "0.33.0") == "0.33.0"
    assert modelled_release("vllm", "0.28.5") == "0.28.0"
    major, minor = (int(x) for x in newest.split(".")[:2])
    assert modelled_release("vllm", f"{major}.{minor + 5}.0") == newest
    oldest = known[0]
    major, minor = (int(x) for x in oldest.split(".")[:2])
    assert modelled_release("vllm", f"{major}.{minor - 1}.9") is None
    assert modelled_release("vllm", "not-a-version") is None
    assert modelled_release("vllm", "0.20.2") == "0.20.2" and modelled_release("vllm", "0.22.5") == "0.22.1"


def test_a_complete_layer_in_either_naming_lands() -> None:
    assert run(eagle3()) == [] and run(eagle3("midlayer.")) == []


def test_a_name_with_no_parameter_raises_in_vllms_words() -> None:
    (found,) = run(eagle3(**{"midlayer.stray.weight": (4,)}, **{f"layers.0.{k}": None for k in LAYER}) |
                   {f"midlayer.{k}": v for k, v in LAYER.items()})
    assert found.raises and found.text == ("ValueError: There is no module or parameter named 'layers.0.stray' "
                                           "in LlamaModel.")


def test_model_prefixed_names_raise_as_vllm_does() -> None:
    found = run({("model." + n if n.startswith("layers.") else n): s for n, s in eagle3().items()})
    assert found[0].raises and "named 'model' in LlamaModel" in found[0].text


def test_a_narrow_down_proj_raises_and_a_wide_q_proj_is_cut() -> None:
    shape = run(eagle3(**{"layers.0.mlp.down_proj.weight": (16, 30)}))[0]  # errors first
    assert shape.raises and shape.text.startswith("RuntimeError: start (0) + length (32) exceeds dimension size (30).")
    assert "(layers.0.mlp.down_proj.weight [16, 30], parameter model.layers.0.mlp.down_proj.weight [16, 32])" \
        in shape.text  # the release's words name neither the tensor nor the parameter
    cut = run(eagle3(), {**LLAMA, "head_dim": 4})
    assert cut and {p.kind for p in cut} == {"cut"} and not any(p.raises for p in cut)


def test_a_missing_projection_leaves_rows_unfilled() -> None:
    (found,) = run(eagle3(**{"layers.0.self_attn.q_proj.weight": None}))
    assert found.kind == "unfilled" and found.parameter == "model.layers.0.self_attn.qkv_proj.weight"
    assert "fill 16 of its 32 rows" in found.text


def test_fallbacks_follow_the_config_class() -> None:
    no_head_dim = {k: v for k, v in LLAMA.items() if k != "head_dim"}
    assert variables(model(), no_head_dim, target_hidden=H, target_vocab=96)["head_dim"] == H // 2
    qwen3 = model("Eagle3Qwen3ForCausalLM")
    assert variables(qwen3, no_head_dim, target_hidden=H, target_vocab=96)["head_dim"] == 128  # Qwen3Config's
    bare = variables(qwen3, no_head_dim, target_hidden=H, target_vocab=96, config_class="SpeculatorsConfig")
    assert bare["head_dim"] == H // 2  # vLLM's own getattr default, no transformers class behind it


def test_a_key_that_builds_other_modules_is_not_judged() -> None:
    # eagle_config.norm_before_fc adds input_norm: the samples never built it, so its tensor is not called stray
    found = run(eagle3(**{"input_norm.weight": (3 * H,)}), {**LLAMA, "eagle_config": {"norm_before_fc": True}})
    assert found == []
    assert run(eagle3(**{"input_norm.weight": (3 * H,)}))[0].kind == "no-parameter"


def test_layers_beyond_the_config_are_names_with_no_parameter() -> None:
    (found,) = run(eagle3(**{"layers.1.input_layernorm.weight": (H,)}))
    assert found.kind == "no-parameter" and "layers.1" in found.text


# DeepSeek's MTP head (DeepSeekMTPModel, deepseek_mtp.py @ 0.33.0): built from its target's config, its one layer
# after the target's num_hidden_layers, a MoE layer whose experts the checkpoint ships one tensor per projection.
DEEPSEEK: dict[str, Any] = {"architectures": ["DeepSeekMTPModel"], "model_type": "deepseek_v3", "hidden_size": H,
                            "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 24,
                            "num_hidden_layers": 3, "num_nextn_predict_layers": 1, "vocab_size": 128,
                            "kv_lora_rank": 8, "q_lora_rank": 12, "qk_nope_head_dim": 4, "qk_rope_head_dim": 4,
                            "v_head_dim": 4, "n_routed_experts": 4, "moe_intermediate_size": 8, "n_shared_experts": 1,
                            "num_experts_per_tok": 2, "first_k_dense_replace": 0, "n_group": 1, "topk_group": 1,
                            "rms_norm_eps": 1e-6}


def mtp(arch: str, config: dict[str, Any]) -> tuple[Any, dict[str, tuple[int, ...]]]:
    """The head's model and a complete checkpoint of it, from the record's own layout (its layers and experts
    expanded at the indices the record gives for this config)."""
    found = model(arch)
    tensors = layout_checkpoint(found, variables(found, config, target_hidden=H, target_vocab=128))
    assert tensors is not None
    return found, tensors


def test_an_mtp_head_follows_its_targets_layers_and_loads_every_expert() -> None:
    found, tensors = mtp("DeepSeekMTPModel", DEEPSEEK)
    values = variables(found, DEEPSEEK, target_hidden=H, target_vocab=128)
    assert built_indices(found, values) == (range(3, 4), 4)  # num_hidden_layers, n_routed_experts
    assert "model.layers.3.mlp.experts.3.down_proj.weight" in tensors
    assert tensors["model.layers.3.mlp.experts.0.gate_proj.weight"] == (8, H)  # moe_intermediate_size x hidden
    assert land(found, DEEPSEEK, tensors, target_hidden=H, target_vocab=128, family=None) == ()


def test_a_missing_expert_leaves_its_fused_parameter_partly_unfilled() -> None:
    found, tensors = mtp("DeepSeekMTPModel", DEEPSEEK)
    del tensors["model.layers.3.mlp.experts.2.up_proj.weight"]
    (problem,) = land(found, DEEPSEEK, tensors, target_hidden=H, target_vocab=128, family=None)
    assert problem.kind == "unfilled" and not problem.raises
    assert problem.parameter == "model.layers.3.mtp_block.mlp.experts.routed_experts.w13_weight"
    assert "fill 56 of its 64 rows" in problem.text  # 4 experts x (gate 8 + up 8), one up_proj short


def test_an_expert_past_the_count_and_a_stray_in_the_head_raise_a_stray_in_the_targets_layers_is_skipped() -> None:
    found, tensors = mtp("DeepSeekMTPModel", DEEPSEEK)
    fifth = {"model.layers.3.mlp.experts.4.gate_proj.weight": (8, H)}
    (problem,) = land(found, DEEPSEEK, tensors | fifth, target_hidden=H, target_vocab=128, family=None)
    assert problem.raises and problem.text.startswith("KeyError:") and "experts.4.gate_proj" in problem.text
    (stray,) = land(found, DEEPSEEK, tensors | {"model.layers.3.stray_norm.weight": (H,)}, target_hidden=H,
                    target_vocab=128, family=None)
    assert stray.raises and "stray_norm" in stray.text
    # the target's own layers, shipped beside the head (a whole target checkpoint): its loader skips them
    target_layer = {"model.layers.0.self_attn.o_proj.weight": (H, 8), "model.layers.0.stray_norm.weight": (H,)}
    assert land(found, DEEPSEEK, tensors | target_layer, target_hidden=H, target_vocab=128, family=None) == ()


def test_an_mtp_head_in_its_targets_checkpoint_names_lands_and_under_the_draft_prefix_is_skipped() -> None:
    qwen = {"architectures": ["Qwen3NextMTP"], "model_type": "qwen3_next", "hidden_size": H, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 24, "num_hidden_layers": 1,
            "num_nextn_predict_layers": 1, "vocab_size": 128, "num_experts": 4, "num_experts_per_tok": 2,
            "moe_intermediate_size": 8, "shared_expert_intermediate_size": 8, "rms_norm_eps": 1e-6}
    found, tensors = mtp("Qwen3NextMTP", qwen)
    assert any(n.startswith("mtp.layers.0.mlp.experts.3.") for n in tensors)  # the target checkpoint's names
    assert land(found, qwen, tensors, target_hidden=H, target_vocab=128, family=None) == ()
    # the same tensors under `model.` (an export that renamed them): qwen3_next_mtp.py skips every name that is not
    # `mtp.`, and vLLM's loader then refuses the norms it left unwritten (the linear layers, exempt from its check
    # since 0.21, would keep their initial values)
    renamed = {(n.replace("mtp.", "model.", 1) if n.startswith("mtp.") else n): s for n, s in tensors.items()}
    problems = land(found, qwen, renamed, target_hidden=H, target_vocab=128, family=None)
    refused = [p for p in problems if p.raises]
    assert refused and {p.kind for p in refused} == {"missing"}
    assert refused[0].text.startswith("ValueError: Following weights were not initialized from checkpoint: {")
    assert "'model.layers.0.input_layernorm.weight'" in refused[0].text and "'model.norm.weight'" in refused[0].text
    assert refused[0].where.startswith("vllm/model_executor/model_loader/default_loader.py:")
    silent = {p.parameter for p in problems if not p.raises}
    assert "model.layers.0.self_attn.qkv_proj.weight" in silent and "model.layers.0.input_layernorm.weight" not in silent


def test_a_norm_no_tensor_fills_is_refused_where_the_releases_loader_checks_it() -> None:
    """vLLM's DefaultModelLoader.load_weights refuses a parameter the class's load_weights reports unloaded
    (observed for each parameter: the record's `missing`): a norm of an MTP head on 0.33.0; from 0.21 it exempts
    linear layers, which stay silent (DSP363), and before 0.21 it refuses them too; EAGLE-3's load_weights reports
    nothing, so nothing is refused."""
    qwen = {"architectures": ["Qwen3NextMTP"], "model_type": "qwen3_next", "hidden_size": H, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 24, "num_hidden_layers": 1,
            "num_nextn_predict_layers": 1, "vocab_size": 128, "num_experts": 4, "num_experts_per_tok": 2,
            "moe_intermediate_size": 8, "shared_expert_intermediate_size": 8, "rms_norm_eps": 1e-6}
    found, tensors = mtp("Qwen3NextMTP", qwen)
    norm = next(n for n in tensors if n.endswith("post_attention_layernorm.weight"))
    (problem,) = land(found, qwen, {n: s for n, s in tensors.items() if n != norm}, target_hidden=H, target_vocab=128, family=None)
    assert problem.kind == "missing" and problem.raises
    assert problem.text == ("ValueError: Following weights were not initialized from checkpoint: "
                            "{'model.layers.0.post_attention_layernorm.weight'}")
    proj = next(n for n in tensors if n.endswith("self_attn.o_proj.weight"))
    (silent,) = land(found, qwen, {n: s for n, s in tensors.items() if n != proj}, target_hidden=H, target_vocab=128, family=None)
    assert silent.kind == "unfilled" and not silent.raises
    old = architecture_model("vllm", "0.20.0", "Qwen3NextMTP")
    assert old is not None and "model.layers.{i}.self_attn.o_proj.weight" in old.missing  # no exemption before 0.21
    assert not model().missing  # EAGLE-3 Llama: its load_weights reports nothing, the loader checks nothing
    assert [p.kind for p in run(eagle3(**{"layers.0.input_layernorm.weight": None}))] == ["unfilled"]


def test_a_model_type_the_release_has_a_class_for_keeps_that_classs_defaults() -> None:
    """K3 DSpark's config class is vLLM's own (k3_dspark, transformers_utils/config.py _CONFIG_REGISTRY): a draft
    without draft_vocab_size gets its default there, where a bare config (a speculators draft, or another
    model_type) has none and __init__ raises (dspark_mla.py:190 @ 0.33.0, observed)."""
    from dspark_ckpt.runtimes.landing import config_class_of

    k3 = model("K3DSparkModel")
    assert k3.config_type == ("k3_dspark", "K3DSparkConfig")
    assert "draft_vocab_size" not in k3.required and "draft_vocab_size" in k3.required_bare
    config = {"architectures": ["K3DSparkModel"], "model_type": "k3_dspark", "hidden_size": H,
              **{key: 4 for key in k3.required}}  # every key its class has no default for (none of them D)
    assert config_class_of(k3, config, "PretrainedConfig") == "K3DSparkConfig"
    assert not [p for p in land(k3, config, {}, target_hidden=H, target_vocab=128, config_class="PretrainedConfig",
                  family=None)
                if p.kind == "missing-key"]
    other = {**config, "model_type": "llama"}
    assert config_class_of(k3, other, "PretrainedConfig") == "PretrainedConfig"
    (missing,) = land(k3, other, {}, target_hidden=H, target_vocab=128, config_class="PretrainedConfig",
                  family=None)
    assert missing.kind == "missing-key" and "'draft_vocab_size'" in missing.text
    assert config_class_of(k3, config, "SpeculatorsConfig") == "SpeculatorsConfig"  # no defaults, whatever the type


def test_a_key_whose_values_are_names_adds_what_each_name_builds() -> None:
    """SGLang DSpark's markov_head_type (the record's `values`, sampled per name: CHOICES): "gated" adds gate_proj,
    "rnn" joint_proj, to the vanilla head's factors; a name no sample had leaves the head's presence unjudged."""
    from dspark_ckpt.runtimes.landing import appearing, unseen

    for release in ("0.5.16", "0.5.23"):
        dspark = architecture_model("sglang", release, "Qwen3DSparkModel")
        assert dspark is not None and dspark.not_built is None
        gated = appearing(dspark, {"markov_head_type": "gated"})
        rnn = appearing(dspark, {"markov_head_type": "rnn"})
        assert {"markov_head.gate_proj.weight", "markov_head.gate_proj.bias"} <= gated, release
        assert {"markov_head.joint_proj.weight", "markov_head.joint_proj.bias"} <= rnn, release
        assert not any("joint_proj" in p for p in gated) and not any("gate_proj" in p for p in rnn)
        assert not appearing(dspark, {"markov_head_type": "vanilla"})
        assert not appearing(dspark, {"markov_head_type": "lstm"})  # never built: the class refuses it
        # what the base builds stays judged at each name the samples had (the rest of the config as the base's)
        base = unseen(dspark, {"markov_head_type": "vanilla"})
        assert unseen(dspark, {"markov_head_type": "rnn"}) == unseen(dspark, {"markov_head_type": "gated"}) == base
