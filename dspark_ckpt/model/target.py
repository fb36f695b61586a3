"""The target vocabulary T and where it came from: the one target fact every stage shares."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TargetVocab:
    size: int
    source: str  # where T came from, for the report
    omni: bool = False  # a Qwen3-Omni target: vLLM 0.29+ validates the draft against it at start-up
    head_rows: int | None = None  # the target lm_head's rows when its text config pads them (padded_vocab_size > T)
