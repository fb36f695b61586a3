"""The runtime contracts as data: one row per (runtime, version range, family), each citing its upstream file."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.messages import VLLM, Messages
from dspark_ckpt.runtimes.sglang_columns import SglangColumns


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


def nested_weights(names: Iterable[str], bare: Collection[str]) -> tuple[str, ...]:
    """The `<name>.weight` tensors among `names` whose `<name>` is one of the `bare` nn.Parameters (no `.weight`
    there): what a nested loader refuses (DSP331) and unnest-weights renames; sorted, the order a loader meets them."""
    return tuple(sorted(n for n in names if n.endswith(".weight") and n.removesuffix(".weight") in bare))


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
    """One row of the contract table: what a runtime's releases first..last do with one family's draft."""

    runtime: str
    first: str  # first version this row describes (inclusive)
    last: str  # last version (inclusive)
    family: Family | None  # None: a placeholder for an architecture no family describes (runtimes/config_build.py)
    model_class: str
    source: str  # upstream file and versions read
    supported: bool = True
    d2t_param: When = When.NEVER  # when __init__ creates draft_id_to_target_id
    reduced_checks: When | None = None  # load_weights' `uses_reduced_vocab`; None: no vocab checks at load
    embed_check: bool = False  # V > T without embed_tokens is a load error
    lm_head_rows: str = "D"  # "D" or "V": what the lm_head's row count is checked against
    markov_w2_rows: str = "D"  # likewise for markov_head.markov_w2
    # markov_w1 is an nn.Embedding(V, r) loaded by default_weight_loader in every vLLM release (qwen3_dspark.py
    # L56 @ 0.27.0 .. L71 @ 0.33.0): an exact-shape assert with a message, not VocabParallelEmbedding's bare one.
    markov_w1_exact: bool = True
    unknown_weights: Unknown = Unknown.REJECT
    lm_head_share: Share = Share.IF_NOT_OWN
    embed_share: Share = Share.IF_NOT_OWN
    omni_config_check: bool = False
    omni_target_validated: bool = False  # _validate_qwen3_omni_dspark runs for a Qwen3-Omni target (0.29+)
    topk_check: bool = False
    mask_hidden_rejected: bool = False
    parallel_drafting_needs_mask_hidden: bool = False
    model_prefix_rejected: bool = False
    bare_parameters: tuple[str, ...] = ()  # bare nn.Parameters (no `.weight`): a `<name>.weight` tensor is refused
    # The backbone class whose nested AutoWeightsLoader refuses a `markov_head.*` / `confidence_head.*` tensor the
    # family builds no module for (models/utils.py; vLLM DFlash and EAGLE-3, every release read); None: such a
    # tensor is dropped (vLLM DSpark's mapper for a disabled confidence head; SGLang's `if name in params_dict`).
    stray_heads_class: str | None = None
    # The parameters of the Markov head this row builds, by first name under markov_head (vLLM Qwen3 DSpark: the
    # vanilla DSparkMarkovHead, markov_head_type never read); another `markov_head.*` tensor is refused by name
    # (messages.E_STRAY_MARKOV, class `markov_backbone`). (): not modelled (dropped, or the SGLang columns decide).
    markov_params: tuple[str, ...] = ()
    markov_backbone: str = "Qwen3DSparkModel"
    candidates_mapped: bool = True  # False: the speculator proposes lm_head candidates without d2t (vLLM DFlash2)
    verbatim_errors: bool = True  # False where the error text is dspark-ckpt's description, not the runtime's
    messages: Messages = VLLM  # the runtime's wording of each error, for this row
    architectures: tuple[str, ...] = ()  # the names this release range registers; () = every name of the family
    reads_speculators: bool = True  # False: a speculators-format config is not read at all (SGLang)
    sglang: SglangColumns | None = None  # SGLang's load path (runtimes/sglang_eval.py); None for vLLM rows
