"""Draft families and how an architecture name (or a speculators type) maps to one."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Family(StrEnum):
    QWEN3_DSPARK = "qwen3-dspark"
    QWEN3_OMNI_DSPARK = "qwen3-omni-dspark"
    GEMMA4_DSPARK = "gemma4-dspark"
    DFLASH = "dflash"
    DFLASH2 = "dflash2"  # DFlash2DraftModel: vLLM 0.28+ (qwen3_dflash2.py), SGLang 0.5.19+
    EAGLE3_LLAMA = "eagle3-llama"
    EAGLE3_QWEN3 = "eagle3-qwen3"


# vLLM's _SPECULATIVE_DECODING_MODELS registry, restricted to the draft families whose vocab contract is known.
ARCHITECTURE_FAMILY: dict[str, Family] = {
    "Qwen3DSparkModel": Family.QWEN3_DSPARK,
    "Qwen3OmniDSparkModel": Family.QWEN3_OMNI_DSPARK,
    "Gemma4DSparkModel": Family.GEMMA4_DSPARK,
    "DFlashDraftModel": Family.DFLASH,
    "DFlash2DraftModel": Family.DFLASH2,
    "Eagle3LlamaForCausalLM": Family.EAGLE3_LLAMA,
    "LlamaForCausalLMEagle3": Family.EAGLE3_LLAMA,
    "Eagle3Qwen3ForCausalLM": Family.EAGLE3_QWEN3,
    # P-EAGLE names map to the EAGLE-3 classes (registry.py 0.22+ / 0.24+): same load path, parallel drafting on.
    "PEagleDraftModel": Family.EAGLE3_LLAMA,
    "PeagleLlamaForCausalLM": Family.EAGLE3_LLAMA,
    "PeagleQwen3ForCausalLM": Family.EAGLE3_QWEN3,
}

# The speculators format names its draft type instead of a vLLM architecture. EAGLE-3 and P-EAGLE pick the class
# from `transformer_layer_config.model_type` (vllm/transformers_utils/configs/speculators/algos.py, every release).
SPECULATORS_FAMILY: dict[str, Family] = {
    "eagle3": Family.EAGLE3_LLAMA,
    "peagle": Family.EAGLE3_LLAMA,
    "dflash": Family.DFLASH,
    "dflash2": Family.DFLASH2,
    "dspark": Family.QWEN3_DSPARK,
}
SPECULATORS_QWEN3_FAMILY: dict[str, Family] = {"eagle3": Family.EAGLE3_QWEN3, "peagle": Family.EAGLE3_QWEN3}

DSPARK_FAMILIES = frozenset({Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK, Family.GEMMA4_DSPARK})


@dataclass(frozen=True, slots=True)
class Traits:
    """What a family's model code builds whatever the runtime version: the columns the checks read by family."""

    markov_head: bool = False  # markov_head.markov_w1 [V, r] / markov_w2 [D, r]
    confidence_head: bool = False  # confidence_head.proj, when enable_confidence_head
    lm_head_rows: str = "D"  # "D" or "V": the rows the family's own lm_head is built with
    d2t_applied: bool = True  # False: no d2t is ever applied at sampling time (Gemma4 DSpark)
    norm_offset: float = 0.0  # Gemma's RMSNorm scales by (1 + weight)
    model_prefix_flagged: bool = False  # a `model.`-prefixed checkpoint name doubles the prefix (Qwen3 DSpark)
    mask_hidden_rejected: bool = False  # DFlash embeds masked slots itself: a mask_hidden weight is refused
    method: str = "draft_model"  # the speculative method the family's draft is served with (vLLM's `method`)

    def builds(self, head: str) -> bool:
        """Whether the family's model has a module for an optional head ("markov_head" or "confidence_head")."""
        return self.markov_head if head == "markov_head" else self.confidence_head


_DSPARK = Traits(markov_head=True, confidence_head=True, method="dspark")
TRAITS: dict[Family, Traits] = {
    Family.QWEN3_DSPARK: Traits(markov_head=True, confidence_head=True, model_prefix_flagged=True, method="dspark"),
    Family.QWEN3_OMNI_DSPARK: _DSPARK,
    Family.GEMMA4_DSPARK: Traits(markov_head=True, confidence_head=True, lm_head_rows="V", d2t_applied=False,
                                 norm_offset=1.0, method="dspark"),
    Family.DFLASH: Traits(mask_hidden_rejected=True, method="dflash"),
    Family.DFLASH2: Traits(method="dflash"),
    Family.EAGLE3_LLAMA: Traits(method="eagle3"),
    Family.EAGLE3_QWEN3: Traits(method="eagle3"),
}


def traits(family: Family | None) -> Traits:
    return TRAITS[family] if family is not None else Traits()


def speculators_family(speculators_type: str, layer_model_type: str | None,
                       architecture: str | None = None) -> Family | None:
    """The family a speculators-format config converts to (as the newest vLLM converter does)."""
    if layer_model_type == "qwen3" and speculators_type in SPECULATORS_QWEN3_FAMILY:
        return SPECULATORS_QWEN3_FAMILY[speculators_type]
    if speculators_type == "dspark" and architecture == "Qwen3OmniDSparkModel":
        return Family.QWEN3_OMNI_DSPARK
    return SPECULATORS_FAMILY.get(speculators_type)


def family_for(architecture: str | None, model_type: str | None) -> Family | None:
    if architecture is None:
        return None
    if architecture == "DSparkDraftModel" and model_type == "qwen3":
        # vLLM 0.29+ rewrites a Qwen3-typed DSparkDraftModel to Qwen3DSparkModel (config/speculative.py).
        return Family.QWEN3_DSPARK
    return ARCHITECTURE_FAMILY.get(architecture)


# What marks a config as a draft's even where its architecture is a plain model class (an EAGLE-1/3 head exported
# as LlamaForCausalLM, a speculators config): a draft architecture name, or a key only drafts carry.
_DRAFT_WORDS = ("eagle", "dflash", "dspark", "medusa", "speculator", "mtp", "draft")
_DRAFT_KEYS = frozenset({"draft_vocab_size", "speculators_config", "speculators_model_type", "eagle_config",
                         "dflash_config", "dspark_config", "target_hidden_size", "eagle_aux_hidden_state_layer_ids",
                         "num_aux_hidden_states", "medusa_num_heads", "n_predict", "markov_rank"})
_DRAFT_MODEL_TYPES = frozenset({"speculators", "eagle", "medusa", "mlp_speculator"})
_MODEL_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "LMHeadModel", "Model")


def target_architecture(config: dict[str, object]) -> str | None:
    """The architecture of a config that names a target model and nothing of a draft, else None (a draft, or a
    config without architectures, which check itself judges)."""
    archs = config.get("architectures")
    if not isinstance(archs, list) or not archs or not all(isinstance(a, str) for a in archs):
        return None
    names = [str(a) for a in archs]
    if any(a in ARCHITECTURE_FAMILY or any(w in a.lower() for w in _DRAFT_WORDS) for a in names):
        return None
    model_type = config.get("model_type")  # any JSON value: a list or an object is no name
    if _DRAFT_KEYS & config.keys() or isinstance(model_type, str) and model_type in _DRAFT_MODEL_TYPES:
        return None
    return names[0] if all(a.endswith(_MODEL_SUFFIXES) for a in names) else None
