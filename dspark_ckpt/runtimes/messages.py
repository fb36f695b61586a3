"""The runtimes' error texts, quoted exactly (users grep for them), and the per-row wording a contract carries."""

from __future__ import annotations

from dataclasses import dataclass

# Exact error strings (vllm-contracts.md 2.1, 4, 5). `{cls}`, `{n}`, `{d}`, `{t}`, `{v}` are filled per draft.
E_GEMMA4_FUSED_KV = "Gemma4 DSpark fused precompute assumes uniform attention_k_eq_v layers"
E_EMBED = ("Qwen3 DSpark checkpoints whose input vocab_size is larger than the target vocabulary must include "
           "embed_tokens weights.")
E_LM_HEAD = ("Reduced-vocabulary Qwen3 DSpark checkpoints must include lm_head weights; the full target lm_head "
             "cannot be shared.")
E_D2T = ("Reduced-vocabulary Qwen3 DSpark checkpoints must include a d2t mapping so sampled draft ids can be "
         "converted to target ids.")
E_NOPARAM = ("There is no module or parameter named 'draft_id_to_target_id' in {cls}. The available parameters "
             "belonging to  ({cls}) are:")
E_MODEL_PREFIX = "There is no module or parameter named 'model' in Qwen3DSparkModel. The available parameters"
E_ROWS = "AssertionError"  # VocabParallelEmbedding.weight_loader: a bare `assert` with no message
E_HIDDEN = "The size of tensor a ({h}) must match the size of tensor b ({got}) at non-singleton dimension 1"
E_D2T_LEN = "Attempted to load weight (torch.Size([{n}])) into parameter (torch.Size([{d}]))"
E_OMNI_VOCAB = ("Qwen3-Omni DSpark draft_vocab_size must be a positive integer no larger than target vocab_size "
                "({t}); got {d}.")
E_OMNI_MASK = "Qwen3-Omni DSpark requires a valid mask/noise token id within the draft input vocabulary [0, {last}]."
E_OMNI_GENERIC = ("Qwen3-Omni DSpark requires a standalone draft checkpoint with architectures=['Qwen3OmniDSparkModel']; "
                  "generic Qwen3DSparkModel checkpoints must be converted first.")
E_OMNI_UNREGISTERED = ("Qwen3OmniDSparkModel is not registered before vLLM 0.29.0: with method dspark the "
                       "architecture is rewritten to the DeepSeek-V4 DSparkDraftModel, which cannot load this draft.")
E_MASK_HIDDEN = ("DFlash embeds masked slots via mask_token_id (optionally overridden by a mask_embedding.pt file); "
                 "it should not ship a mask_hidden weight.")
# qwen3_dflash.py before 0.25 (L598-600 @ 0.20.0): the same refusal, other words
E_MASK_HIDDEN_OLD = "DFlash should use mask_token_id to embed the padding hidden state"
E_PARALLEL = ("mask_hidden not found in weights but model is configured for parallel drafting. Please provide "
              "mask_hidden in the weights.")
E_TOPK = "dspark_draft_topk must be between 1 and the draft vocabulary size ({d})"
# models/utils.py AutoWeightsLoader (0.27 L276, 0.28 L275, 0.29-0.30 L304, 0.31-0.33 L320): a `.weight` tensor for a
# bare nn.Parameter, named relative to the nested loader (DFlash2's candidate_selector codebooks).
E_NESTED_WEIGHT = "Attempted to load nested weight '{name}' into a single parameter '{param}'"
# models/utils.py AutoWeightsLoader._load_module (0.27 L390-392, 0.28 L389-391, 0.29-0.30 L412-414, 0.31 L427-429,
# 0.32-0.33 L443-445), raised by the backbone's own nested loader (base_prefix "", hence the two spaces) for a
# `markov_head.*` / `confidence_head.*` tensor a DFlash or EAGLE-3 backbone has no module for. `{name}` is the first
# name component the backbone lacks, `{cls}` the backbone class (DFlashQwen3Model, LlamaModel, Qwen3Eagle3Model).
E_STRAY_HEAD = ("There is no module or parameter named '{name}' in {cls}. The available parameters belonging to  "
                "({cls}) are:")
# The same loader one level down: a `markov_head.*` tensor vLLM's vanilla DSparkMarkovHead has no parameter for (a
# gated/rnn head's gate_proj/joint_proj; vLLM never reads markov_head_type). `{name}` is the name after the
# backbone's stacked-parameter renaming (qwen3_dflash.py orig_to_new_stacked: .gate_proj/.up_proj -> .gate_up_proj).
# Before AutoWeightsLoader, the backbones' own load_weights looked each name up in params_dict: a KeyError naming the
# tensor (llama_eagle3.py LlamaModel.load_weights L225-270 @ 0.20.0 .. 0.24.0, qwen3_eagle3.py L258-290 @ 0.24.0,
# qwen3_dflash.py DFlashQwen3Model.load_weights @ 0.20.0 .. 0.25.1; observed by tools/probe_runtime.py).
E_STRAY_KEY = "'{tensor}'"
E_STRAY_MARKOV = ("There is no module or parameter named 'markov_head.{name}' in {cls}. The available parameters "
                  "belonging to markov_head (DSparkMarkovHead) are:")
# qwen3_dflash.py orig_to_new_stacked (0.27 L350-354 .. 0.33 L404-408): applied to every name the backbone loads.
STACKED_RENAMES = ((".q_proj", ".qkv_proj"), (".k_proj", ".qkv_proj"), (".v_proj", ".qkv_proj"),
                   (".gate_proj", ".gate_up_proj"), (".up_proj", ".gate_up_proj"))


def markov_param(tensor: str) -> str:
    """`markov_head.<x>...` -> <x> as vLLM's loader names it in the error (after the stacked renaming)."""
    name = tensor
    for old, new in STACKED_RENAMES:
        if old + "." in name or name.endswith(old):
            name = name.replace(old, new, 1)
            break
    return name.removeprefix("markov_head.").split(".")[0]

# SGLang, quoted from the released wheels (docs/research/sglang-facts.md; file and lines per release range are in
# each row's source in sglang_rows.py). `{arch}`, `{cls}`, `{m}`, `{t}`, `{w}`, `{v}`, `{rank}` are filled per draft.
E_SGLANG_UNREGISTERED = ("Cannot find model module. '{arch}' is not a registered model in the Transformers library "
                         "(only relevant if the model is meant to be in Transformers) and 'AutoModel' is not present "
                         "in the model config's 'auto_map' (relevant if the model is custom).")
# 0.4.2-0.4.6.post5: no resolve_transformers_arch yet, so an unregistered name reaches models/registry.py
# _raise_for_unsupported (:33), which lists every class the release imported (not reproduced: not verbatim).
E_SGLANG_UNSUPPORTED = ("Model architectures ['{arch}'] are not supported for now. Supported architectures: "
                        "dict_keys([...])")
# 0.4.4.post2-0.4.8.post1: the EAGLE worker asks the draft for get_hot_token_id(), whose attribute only a d2t sets
# (models/llama_eagle3.py load_weights; torch.nn.Module.__getattr__'s words).
E_SGLANG_NO_HOT_TOKEN = "'LlamaForCausalLMEagle3' object has no attribute 'hot_token_id'"
E_SGLANG_ROWS = ("self.org_vocab_size={expected} self.use_presharded_weights=False "
                 "loaded_weight.shape[output_dim]={got}")
E_SGLANG_SHAPE = "Attempted to load weight (torch.Size({got})) into parameter (torch.Size({expected}))"
E_EAGLE3_LAYERS = "EAGLE3 currently only supports 1 layer"
E_EAGLE3_NO_DRAFT_VOCAB = "'{cls}' object has no attribute 'draft_vocab_size'"
E_EAGLE3_NULL_DRAFT_VOCAB = "unsupported operand type(s) for -: 'NoneType' and 'NoneType'"
E_EAGLE3_NULL_CROP = "'>' not supported between instances of 'int' and 'NoneType'"
E_DSPARK_RANK_AUX = "DSPARK requires markov_rank > 0 in the draft config, got markov_rank={rank}."
E_DSPARK_RANK_HEAD = ("DSpark requires markov_rank > 0 (the Markov head is the core of the semi-AR draft); "
                      "got markov_rank={rank}.")
E_DSPARK_RANK_NEGATIVE = "DSpark markov_rank must be >= 0, got {rank}."
E_DSPARK_HEAD_TYPE = "DSpark requires markov_head_type when markov_rank > 0, got None."
E_DSPARK_HEAD_TYPE_PARSE = "Unsupported DSpark markov_head_type={kind!r}. Supported: ('vanilla', 'gated', 'rnn')."
E_DSPARK_HEAD_TYPE_BUILD = "Unsupported DSpark markov_head_type={kind!r}."
E_DSPARK_MASK_NEGATIVE = "DSpark mask_token_id must be non-negative, got {m}."
E_DSPARK_MASK_UNSET = "DSpark requires mask_token_id to be set in the draft model config."
E_DSPARK_MASK_OUTSIDE = "DSpark mask_token_id={m} is outside the target vocab size {t}."
E_DSPARK_MARKOV_UNKNOWN = ("DSpark unexpected markov weight {name!r} not found in model parameters (known markov "
                           "params require a {head} head).")
E_DSPARK_WIDTH = "The size of tensor a ({w}) must match the size of tensor b ({v}) at non-singleton dimension 1"
E_DSPARK_WIDTH_KERNEL = "AssertionError"  # 0.5.22+: `assert bias.shape[1] <= base_logits.shape[1]`, no message
# The Markov head's lookup of the previous token, an id the target head proposed (models/dspark.py
# get_prev_embeddings: markov_w1 is nn.Embedding(V, r)); `observed`: what the release raised on CPU, as recorded by
# tools/probe_first_step.py (release_data/sglang-X/first_step.json)
E_DSPARK_LOOKUP = ("the previous token, an id the target proposes (up to {last}), is looked up in markov_w1 "
                   "(V = {v} rows): {observed} (a device-side assert on CUDA)")
E_DFLASH_MASK_OUTSIDE = ("DFLASH mask_token_id is outside the target vocab size. mask_token_id={m}, vocab_size={t}. "
                         "This likely means mask_token={token!r} requires vocab expansion beyond the model's "
                         "embedding size. SGLang does not support resizing target embeddings for DFLASH yet.")
E_DFLASH_MASK_TYPE = "DFLASH dflash_config.mask_token_id must be an integer, got {value!r} (type={kind})."
E_DFLASH_MASK_NEGATIVE = "DFLASH dflash_config.mask_token_id must be non-negative, got {m}."
E_DFLASH2_SELECTOR = "DFlash selector draft requires dflash_config.selector_rank."
E_DFLASH2_SELECTOR_PAIR = "DFLASH selector needs rank and top_k together. Got rank={rank}, top_k={k}."
E_INDEX = "index {i} is out of bounds for dimension 0 with size {n}"  # torch's own IndexError text (CPU)
# Domino (0.5.20+): models/dflash.py load_weights (:804-810 @ 0.5.20, :923-929 @ 0.5.23; the projector's own
# shapes and presence are the generated record's), speculative/domino_utils.py:148-152 @ 0.5.20 (:157-161 @
# 0.5.22) via dflash_worker_v2.py validate_domino_runtime; the config fields in speculative/dflash_utils.py
# parse_dflash_draft_config.
E_DOMINO_UNSET = "DFLASH checkpoint contains Domino projector weights but projector_type={kind}."
E_DOMINO_VOCAB = "DFLASH Domino requires identical target and draft vocab sizes, got target={t}, draft={v}."
E_DOMINO_INVALID = "Invalid {field}={value}."
E_DOMINO_MIN = "{field} must be {cmp}, got {got}."
E_DOMINO_EMB_DIFFERS = ("DFLASH Domino emb_dim differs between dflash_config and the top-level config: "
                        "{nested} != {top}.")
E_DOMINO_SHIFT = "DFLASH Domino requires dflash_config.shift_label to be a bool, got {value}."
E_DOMINO_PREFIX = "DFLASH Domino currently requires pure_draft_prefix_len=1, got {value}."  # {value}: repr
E_DOMINO_GRU = "DFLASH Domino requires dflash_config.gru_hidden_dim."
E_DOMINO_EMB = "DFLASH Domino requires dflash_config.emb_dim."


E_WEIGHT_SHAPE = "Attempted to load weight (torch.Size([{got}])) into parameter (torch.Size([{want}]))"
# layers/linear.py ReplicatedLinear.weight_loader (0.27 L391-394, 0.28 L373-376, 0.29 L397-400, 0.30 L402-405,
# 0.31-0.32 L405-408, 0.33 L408-411): EAGLE-3's fc. The f-string pieces join with no space before "to".
E_REPLICATED_SHAPE = "Tried to load weights of size torch.Size([{got}])to a parameter of size torch.Size([{want}])"


@dataclass(frozen=True, slots=True)
class Messages:
    """What one contract row's runtime says for each failure: a column of the contract table, so a family or a
    release that words an error differently is a row change, never an `if` in the evaluator."""

    embed: str = E_EMBED
    lm_head: str = E_LM_HEAD
    d2t: str = E_D2T
    noparam: str = E_NOPARAM
    model_prefix: str = E_MODEL_PREFIX
    rows: str = E_ROWS
    hidden: str = E_HIDDEN
    d2t_len: str = E_D2T_LEN
    omni_vocab: str = E_OMNI_VOCAB
    omni_mask: str = E_OMNI_MASK
    omni_generic: str = E_OMNI_GENERIC
    omni_unregistered: str = E_OMNI_UNREGISTERED
    mask_hidden: str = E_MASK_HIDDEN
    parallel: str = E_PARALLEL
    topk: str = E_TOPK
    # SGLang only (the vLLM rows never reach these)
    unregistered: str = E_SGLANG_UNREGISTERED
    unregistered_verbatim: bool = True  # False: the release's words name what it imported (E_SGLANG_UNSUPPORTED)
    no_hot_token: str = E_SGLANG_NO_HOT_TOKEN
    layers: str = E_EAGLE3_LAYERS
    no_draft_vocab: str = E_EAGLE3_NO_DRAFT_VOCAB
    null_draft_vocab: str = E_EAGLE3_NULL_DRAFT_VOCAB
    null_crop: str = E_EAGLE3_NULL_CROP
    rank_aux: str = E_DSPARK_RANK_AUX
    rank_head: str = E_DSPARK_RANK_HEAD
    rank_negative: str = E_DSPARK_RANK_NEGATIVE
    head_type: str = E_DSPARK_HEAD_TYPE
    head_type_parse: str = E_DSPARK_HEAD_TYPE_PARSE
    head_type_build: str = E_DSPARK_HEAD_TYPE_BUILD
    mask_negative: str = E_DSPARK_MASK_NEGATIVE
    mask_unset: str = E_DSPARK_MASK_UNSET
    mask_outside: str = E_DSPARK_MASK_OUTSIDE
    markov_unknown: str = E_DSPARK_MARKOV_UNKNOWN
    width: str = E_DSPARK_WIDTH
    dflash_mask_outside: str = E_DFLASH_MASK_OUTSIDE
    dflash_mask_type: str = E_DFLASH_MASK_TYPE
    dflash_mask_negative: str = E_DFLASH_MASK_NEGATIVE
    selector: str = E_DFLASH2_SELECTOR
    selector_pair: str = E_DFLASH2_SELECTOR_PAIR
    index: str = E_INDEX
    weight_shape: str = E_WEIGHT_SHAPE  # default_weight_loader's exact-size assert
    fc_shape: str = E_REPLICATED_SHAPE  # EAGLE-3 fc: ReplicatedLinear.weight_loader's exact-size assert
    stray_head: str = E_STRAY_HEAD  # a head tensor the backbone has no module for (vLLM DFlash / EAGLE-3)
    stray_markov: str = E_STRAY_MARKOV  # a Markov-head tensor the vanilla head has no parameter for (vLLM DSpark)


VLLM = Messages()
VLLM_PARAMS_DICT = Messages(stray_head=E_STRAY_KEY)  # the backbones' params_dict lookup (E_STRAY_KEY)
VLLM_DFLASH_OLD = Messages(stray_head=E_STRAY_KEY, mask_hidden=E_MASK_HIDDEN_OLD)  # DFlash 0.20-0.24
# SGLang's VocabParallelEmbedding asserts with a message (vLLM's is bare), and the released wheels quote no vLLM text.
SGLANG = Messages(rows=E_SGLANG_ROWS, d2t_len=E_SGLANG_SHAPE)
SGLANG_REGISTRY = Messages(rows=E_SGLANG_ROWS, d2t_len=E_SGLANG_SHAPE, unregistered=E_SGLANG_UNSUPPORTED,
                           unregistered_verbatim=False)  # 0.4.2-0.4.6.post5
SGLANG_KERNEL = Messages(rows=E_SGLANG_ROWS, d2t_len=E_SGLANG_SHAPE, width=E_DSPARK_WIDTH_KERNEL)  # 0.5.22+
