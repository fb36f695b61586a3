"""The target vocabulary T and where it came from: the one target fact every stage shares."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TargetVocab:
    """The target's vocabulary size T, where it came from, and what else the target's config decides."""

    size: int
    source: str  # where T came from, for the report
    omni: bool = False  # a Qwen3-Omni target: vLLM 0.29+ validates the draft against it at start-up
    # The target's padded_vocab_size when its text config pads beyond T (None with --target-vocab-size): the rows of
    # SGLang's Inkling lm_head, and SGLang DSpark's mask_token_id bound from 0.5.18 (runtimes/sglang_eval.mask_bound)
    head_rows: int | None = None
    hidden: int | None = None  # the target text config's hidden_size: the width an EAGLE-3 draft's fc is fed
    # hf_text_config.model_type (None where config.json does not say it): vLLM 0.21 and older refuse EAGLE-3 (and
    # DFlash) for a target whose text model_type contains none of a list's names (ReleaseRules.refuses_target)
    text_model_type: str | None = None
