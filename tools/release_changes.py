"""The changelog beside the generated release data: what changed in each vLLM release, in words (pure data).

Documentation held to the data by the tests, kept out of the package: no run reads it.

What execution and reading cannot say is what a change means. One `Change` per listed release whose behaviour
changed, naming the lines.json citations (tools/release_anchors.py) that appear or go away with it; every behaviour flag
itself is derived from those citations (runtimes/vllm_release.py), so nothing here is read by a run: the
changelog is documentation that tests/unit/test_spec_facts.py holds to the generated files (each change shows in
them, and every rule that appears or goes inside the list is named by its release's change).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Change:
    """What changed in vLLM `since`, in words, where it was read, and the lines.json citations that first appear
    (`appear`) or are gone (`gone`) in that release: the flags of ReleaseRules that follow from them."""

    since: str
    where: str
    appear: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()


_SPEC = "vllm/config/speculative.py"
_TF = "vllm/transformers_utils/config.py"

# Each release after the first one read (0.12) whose behaviour changed, oldest first.
CHANGES: tuple[Change, ...] = (
    Change("0.15.0",
           f"{_SPEC} __post_init__: method draft_model is served (0.14: the detection's fallback refuses every draft "
           "it does not recognise, draft_model included, `Speculative decoding with draft model is not supported "
           "yet`), and _verify_args checks its vocabulary against the target's; a `tensor_parallel_size` field "
           "refused in words (0.14: no such field, the key is dropped)",
           appear=("spec.equal_vocab", "spec.tensor_parallel"), gone=("spec.draft_model_refused",)),
    Change("0.16.0",
           "vllm/config/utils.py: the `config` decorator makes SpeculativeConfig a pydantic dataclass with "
           "extra=\"forbid\" (0.15: a plain `@dataclass`, extra keys dropped without a word)",
           appear=("spec.extra_forbid",), gone=("spec.extra_ignored",)),
    Change("0.17.0",
           f"{_SPEC} __post_init__: an unset method defaults to draft_model (0.16: stays None, and a path the "
           "detection does not recognise raises `Unsupported speculative method: 'None'`); an unset "
           "num_speculative_tokens is refused in words (0.16: `range(None)` building the token tree, a TypeError); "
           "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py: model runner V2 takes EAGLE-3 aux layers",
           appear=("spec.default_method", "spec.missing", "aux.runner2"), gone=("spec.token_tree",)),
    Change("0.20.0",
           "vllm/model_executor/models/registry.py: DFlash registered (qwen3_dflash.py, whose rotary cache the draft's "
           "max_position_embeddings sizes)", appear=("spec.draft_rotary",)),
    Change("0.21.0",
           f"{_SPEC} __post_init__: the draft's ModelConfig is built with the speculative config's max_model_len (0.20: "
           "without it, and _maybe_override_draft_max_model_len refuses one above the draft's own length)",
           appear=("spec.draft_config_len",)),
    Change("0.22.0",
           f"{_SPEC} __post_init__: method custom_class; a `model` with a dot and no `/` is read as a class path, "
           "whatever the method given; _verify_args no longer refuses eagle3, extract_hidden_states and dflash for "
           "a target model type outside its list", appear=("spec.dotted_model",), gone=("spec.aux_targets",)),
    Change("0.25.0",
           f"{_SPEC}: method dspark (the DeepSeek-V4 rewrite of every draft but Qwen3DSparkModel), "
           "use_heterogeneous_vocab (method draft_model only)", appear=("spec.deepseek_rewrite", "spec.heterogeneous")),
    Change("0.26.0",
           "vllm/engine/arg_utils.py: `-` becomes `_` in the speculative config's keys (0.20-0.25 refuse a dashed key "
           f"as an unexpected keyword); {_SPEC} __post_init__: Gemma4 DSpark's n_predict from block_size, the "
           "dspark_block_size floor; custom_class only for a dotted import path with no method given",
           appear=("spec.dash_keys", "spec.gemma4_n_predict", "spec.min_block"), gone=("spec.dotted_model",)),
    Change("0.27.0",
           f"{_SPEC} __post_init__: the draft's max_position_embeddings raised to the served max_model_len for "
           "methods eagle and eagle3 (_maybe_override_draft_max_position_embeddings; before, the proposer fed "
           "positions past the draft's rotary cache)", appear=("spec.raise_positions", "spec.positions_raised")),
    Change("0.28.0",
           f"{_SPEC} __post_init__: the dspark_block_size floor gone; dspark_draft_topk and adaptive verification",
           appear=("spec.topk_field", "spec.topk_method", "spec.topk_range", "spec.topk_arch", "spec.adaptive"),
           gone=("spec.min_block",)),
    Change("0.29.0",
           f"{_SPEC} __post_init__ (Qwen3 DSparkDraftModel, _validate_qwen3_omni_dspark, index_share_for_mtp_iteration "
           f"only with mtp); {_TF} "
           "maybe_override_with_speculators (the user's config merged over the speculators one); "
           "transformers_utils/configs/speculators/algos.py update_dspark (Qwen3(Omni)DSparkModel kept)",
           appear=("spec.qwen3_rename", "spec.qwen3_draft_detect", "spec.omni_call", "spec.index_share",
                   "spec.speculators_merge",
                   "spec.speculators_dflash2", "spec.speculators_keep_arch")),
    Change("0.30.0",
           f"{_SPEC} __post_init__: the deepseek_v41 DSpark rewrite; adaptive verification against "
           "use_local_argmax_reduction", appear=("spec.v41_rewrite",)),
    Change("0.31.0",
           f"{_SPEC} __post_init__: num_speculative_tokens defaults to block_size; vllm/transformers_utils/configs/"
           "eagle.py keeps LiLiCorrDraftModel under dflash", appear=("spec.block_default",),
           gone=("spec.gemma4_n_predict",)),
    Change("0.33.0",
           f"{_SPEC} (no medusa / mlp_speculator; every draft method's max_position_embeddings raised); {_TF} "
           "(a local verifier refused); vllm/config/vllm.py _limit_max_model_len_to_draft",
           appear=("spec.xpress", "spec.speculators_verifier", "spec.rope_cache_only", "spec.limit_to_draft"),
           gone=("spec.medusa_detect",)),
    Change("0.34.0",
           f"{_SPEC} __post_init__ hands the method's setup to one SpeculatorConfig class per method "
           "(vllm/v1/worker/gpu/spec_decode/speculator_config.py, dspark/config.py, eagle/config.py): `method` also "
           "takes plugin-registered names (_validate_method) and custom_class is gone; with no method the class the "
           "draft's model declares decides it, then the path markers and MTP model types; a configured method is kept "
           "and checked against the declared one; each method-specific option is refused unless the method's class "
           "supports it (xpress_topc, index_share_for_mtp_iteration, the dspark_draft_topk method check); the Qwen3 "
           "DSparkDraftModel rename is an hf_config override for every method; method dspark rewrites every draft "
           "whose class declares no DSpark config to the DeepSeek-V4 one (no keep list); use_heterogeneous_vocab "
           "gone; parallel_drafting ignored, refused outside dflash/dspark; draft_lm_head_quantization only for the "
           "DeepSeek-V4/V4.1 DSpark drafters; transformers_utils/configs/speculators/base.py refuses peagle; "
           "Model Runner V1 (gpu_model_runner.py) gone",
           appear=("spec.method_validator", "spec.default_method_unset", "spec.checkpoint_detect",
                   "spec.qwen3_override", "spec.undeclared_rewrite", "spec.method_options", "spec.parallel_drafting",
                   "spec.lm_head_quant_arch", "spec.speculators_peagle_refused",
                   "spec.speculators_peagle_update"),
           gone=("spec.method_field", "spec.default_method", "spec.detect", "spec.qwen3_rename",
                 "spec.deepseek_rewrite", "spec.qwen3_draft_detect", "spec.topk_method", "spec.xpress",
                 "spec.index_share", "spec.heterogeneous", "aux.runner")),
)

