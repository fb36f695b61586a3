"""The runtimes' error texts, quoted exactly (users grep for them), and the per-row wording a contract carries."""

from __future__ import annotations

from dataclasses import dataclass

# Exact error strings (vllm-contracts.md 2.1, 4, 5). `{cls}`, `{n}`, `{d}`, `{t}`, `{v}` are filled per draft.
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
E_PARALLEL = ("mask_hidden not found in weights but model is configured for parallel drafting. Please provide "
              "mask_hidden in the weights.")
E_TOPK = "dspark_draft_topk must be between 1 and the draft vocabulary size ({d})"
E_SGLANG_MAPPING = ("Qwen3DSparkModel: checkpoint tensor '{name}' has no known destination parameter and no stated "
                    "drop reason -- add it to the mapping.")


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
    sglang_mapping: str = E_SGLANG_MAPPING


VLLM = Messages()
