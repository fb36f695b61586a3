"""The runtime contracts as data: one row per (runtime, version range, family), each citing its upstream file."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.messages import VLLM, Messages


class When(StrEnum):
    """A predicate on D (draft output vocab) against T (target vocab)."""

    ALWAYS = "always"
    NEVER = "never"
    D_NE_T = "D != T"
    D_LT_T = "D < T"
    D_EQ_T = "D == T"

    def holds(self, d: int, t: int) -> bool:
        return {
            When.ALWAYS: True, When.NEVER: False, When.D_NE_T: d != t, When.D_LT_T: d < t, When.D_EQ_T: d == t,
        }[self]


class Share(StrEnum):
    """When load_*_model replaces a draft module by the target's."""

    IF_NOT_OWN = "if the draft has none of its own (no vocab check)"
    IF_NOT_OWN_AND_FITS = "if the draft has none of its own and the vocab sizes match"
    IF_NOT_OWN_NOR_FLAGGED = "if the draft has none of its own and config has_own_lm_head is not true"
    ALWAYS = "always (the draft's own copy is replaced)"
    ALWAYS_IF_FITS = "whenever the vocab sizes match (the draft's own copy is replaced)"
    NEVER = "never"


class Unknown(StrEnum):
    REJECT = "reject"  # "There is no module or parameter named ..."
    IGNORE = "ignore"


@dataclass(frozen=True, slots=True)
class Contract:
    runtime: str
    first: str  # first version this row describes (inclusive)
    last: str  # last version (inclusive)
    family: Family
    model_class: str
    source: str  # upstream file and versions read
    supported: bool = True
    d2t_param: When = When.NEVER  # when __init__ creates draft_id_to_target_id
    reduced_checks: When | None = None  # load_weights' `uses_reduced_vocab`; None: no vocab checks at load
    embed_check: bool = False  # V > T without embed_tokens is a load error
    lm_head_rows: str = "D"  # "D" or "V": what the lm_head's row count is checked against
    markov_w2_rows: str = "D"  # likewise for markov_head.markov_w2
    unknown_weights: Unknown = Unknown.REJECT
    lm_head_share: Share = Share.IF_NOT_OWN
    embed_share: Share = Share.IF_NOT_OWN
    omni_config_check: bool = False
    omni_target_validated: bool = False  # _validate_qwen3_omni_dspark runs for a Qwen3-Omni target (0.29+)
    topk_check: bool = False
    mask_hidden_rejected: bool = False
    parallel_drafting_needs_mask_hidden: bool = False
    model_prefix_rejected: bool = False
    mapping_tensors_rejected: bool = False  # SGLang Qwen3 DSpark: any d2t/t2d is an error
    verbatim_errors: bool = True  # False where the error text is dspark-ckpt's description, not the runtime's
    messages: Messages = VLLM  # the runtime's wording of each error, for this row


_Q = "vllm/model_executor/models/qwen3_dspark.py + vllm/spec_decode/dspark/utils.py"
_G = "vllm/model_executor/models/gemma4_dspark.py"
_F = "vllm/model_executor/models/qwen3_dflash.py"
_E = "vllm/model_executor/models/{}.py + vllm/spec_decode/eagle/utils.py"


def _qwen3_dspark(family: Family, *, omni: bool) -> tuple[Contract, ...]:
    v027 = Contract("vllm", "0.27.0", "0.27.0", family, "Qwen3DSparkForCausalLM", f"{_Q} @ v0.27.0",
                    d2t_param=When.D_NE_T, model_prefix_rejected=True, omni_config_check=omni)
    v028 = replace(v027, first="0.28.0", last="0.28.0", source=f"{_Q} @ v0.28.0", topk_check=True)
    v029 = replace(v028, first="0.29.0", last="0.29.0", source=f"{_Q} @ v0.29.0", reduced_checks=When.D_NE_T,
                   omni_target_validated=True,
                   embed_check=True, lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN_AND_FITS)
    v030 = replace(v029, first="0.30.0", last="0.33.0", source=f"{_Q} @ v0.30.0-v0.33.0 (PR #55133)",
                   d2t_param=When.D_LT_T, reduced_checks=When.D_LT_T)
    if not omni:
        return v027, v028, v029, v030
    # 0.27/0.28 have no Qwen3OmniDSparkModel: method dspark rewrites it to the DeepSeek-V4 draft.
    unregistered = Contract("vllm", "0.27.0", "0.28.0", family, "DSparkDeepseekV4ForCausalLM",
                            "vllm/config/speculative.py @ v0.27.0, v0.28.0 (no Qwen3OmniDSparkModel in registry)",
                            supported=False, verbatim_errors=False)
    return unregistered, v029, v030


def _eagle3(family: Family, module: str, cls: str) -> tuple[Contract, ...]:
    return (
        Contract("vllm", "0.27.0", "0.29.0", family, cls, f"{_E.format(module)} @ v0.27.0-v0.29.0",
                 d2t_param=When.ALWAYS, parallel_drafting_needs_mask_hidden=True),
        Contract("vllm", "0.30.0", "0.33.0", family, cls, f"{_E.format(module)} @ v0.30.0-v0.33.0",
                 d2t_param=When.D_NE_T, parallel_drafting_needs_mask_hidden=True),
    )


CONTRACTS: tuple[Contract, ...] = (
    *_qwen3_dspark(Family.QWEN3_DSPARK, omni=False),
    *_qwen3_dspark(Family.QWEN3_OMNI_DSPARK, omni=True),
    Contract("vllm", "0.27.0", "0.28.0", Family.GEMMA4_DSPARK, "Gemma4DSparkForCausalLM", f"{_G} @ v0.27.0, v0.28.0",
             lm_head_rows="V", unknown_weights=Unknown.IGNORE, lm_head_share=Share.ALWAYS, embed_share=Share.ALWAYS),
    Contract("vllm", "0.29.0", "0.33.0", Family.GEMMA4_DSPARK, "Gemma4DSparkForCausalLM", f"{_G} @ v0.29.0-v0.33.0",
             lm_head_rows="V", unknown_weights=Unknown.IGNORE, lm_head_share=Share.ALWAYS_IF_FITS,
             embed_share=Share.ALWAYS_IF_FITS),
    Contract("vllm", "0.27.0", "0.30.0", Family.DFLASH, "DFlashQwen3ForCausalLM", f"{_F} @ v0.27.0-v0.30.0",
             d2t_param=When.D_NE_T, mask_hidden_rejected=True),
    Contract("vllm", "0.31.0", "0.33.0", Family.DFLASH, "DFlashQwen3ForCausalLM", f"{_F} @ v0.31.0-v0.33.0",
             d2t_param=When.D_NE_T, mask_hidden_rejected=True, lm_head_share=Share.IF_NOT_OWN_NOR_FLAGGED),
    *_eagle3(Family.EAGLE3_LLAMA, "llama_eagle3", "Eagle3LlamaForCausalLM"),
    *_eagle3(Family.EAGLE3_QWEN3, "qwen3_eagle3", "Eagle3Qwen3ForCausalLM"),
    # SGLang: hot_token_id = d2t + arange(D) with no checks, t2d ignored (python/sglang/srt/models/llama_eagle3.py).
    Contract("sglang", "*", "*", Family.EAGLE3_LLAMA, "LlamaForCausalLMEagle3",
             "sglang python/sglang/srt/models/llama_eagle3.py", d2t_param=When.ALWAYS, unknown_weights=Unknown.IGNORE,
             lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN),
    Contract("sglang", "*", "*", Family.EAGLE3_QWEN3, "LlamaForCausalLMEagle3",
             "sglang python/sglang/srt/models/llama_eagle3.py", d2t_param=When.ALWAYS, unknown_weights=Unknown.IGNORE,
             lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN),
    # SGLang Qwen3 DSpark never reads draft_vocab_size: lm_head and markov_w2 have V rows, and any d2t/t2d is an
    # error raised when that tensor's turn comes (after the row-checked heads in sorted-name order).
    Contract("sglang", "*", "*", Family.QWEN3_DSPARK, "Qwen3DSparkForCausalLM",
             "sglang python/sglang/srt/models/qwen3_dspark.py", lm_head_rows="V", markov_w2_rows="V",
             mapping_tensors_rejected=True,
             lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN_AND_FITS),
)

VLLM_VERSIONS: tuple[str, ...] = ("0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0")
RUNTIMES = ("vllm", "sglang")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def covers(contract: Contract, version: str) -> bool:
    if contract.first == "*":
        return True
    major_minor = version_key(version)[:2]
    return version_key(contract.first)[:2] <= major_minor <= version_key(contract.last)[:2]


def contract_for(runtime: str, version: str, family: Family) -> Contract | None:
    for contract in CONTRACTS:
        if contract.runtime == runtime and contract.family == family and covers(contract, version):
            return contract
    return None
