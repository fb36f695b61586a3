"""vLLM's contract rows, one per (version range, family), each citing the released file it was read from."""

from __future__ import annotations

from dataclasses import replace

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.contracts import Contract, Share, Unknown, When

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


VLLM_ROWS: tuple[Contract, ...] = (
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
)
