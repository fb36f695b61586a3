"""Draft families and how an architecture name (or a speculators type) maps to one."""

from __future__ import annotations

from enum import StrEnum


class Family(StrEnum):
    QWEN3_DSPARK = "qwen3-dspark"
    QWEN3_OMNI_DSPARK = "qwen3-omni-dspark"
    GEMMA4_DSPARK = "gemma4-dspark"
    DFLASH = "dflash"
    EAGLE3_LLAMA = "eagle3-llama"
    EAGLE3_QWEN3 = "eagle3-qwen3"


# vLLM's _SPECULATIVE_DECODING_MODELS registry, restricted to the draft families whose vocab contract is known.
ARCHITECTURE_FAMILY: dict[str, Family] = {
    "Qwen3DSparkModel": Family.QWEN3_DSPARK,
    "Qwen3OmniDSparkModel": Family.QWEN3_OMNI_DSPARK,
    "Gemma4DSparkModel": Family.GEMMA4_DSPARK,
    "DFlashDraftModel": Family.DFLASH,
    "Eagle3LlamaForCausalLM": Family.EAGLE3_LLAMA,
    "LlamaForCausalLMEagle3": Family.EAGLE3_LLAMA,
    "Eagle3Qwen3ForCausalLM": Family.EAGLE3_QWEN3,
}

# The speculators format names its draft type instead of a vLLM architecture.
SPECULATORS_FAMILY: dict[str, Family] = {
    "eagle3": Family.EAGLE3_LLAMA,
    "dflash": Family.DFLASH,
    "dspark": Family.QWEN3_DSPARK,
}

DSPARK_FAMILIES = frozenset({Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK, Family.GEMMA4_DSPARK})


def family_for(architecture: str | None, model_type: str | None) -> Family | None:
    if architecture is None:
        return None
    if architecture == "DSparkDraftModel" and model_type == "qwen3":
        # vLLM 0.29+ rewrites a Qwen3-typed DSparkDraftModel to Qwen3DSparkModel (config/speculative.py).
        return Family.QWEN3_DSPARK
    return ARCHITECTURE_FAMILY.get(architecture)
