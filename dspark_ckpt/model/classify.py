"""Pure: (D, V, T) -> the vocab kind of the draft's output and input sides."""

from __future__ import annotations

from enum import StrEnum


class VocabKind(StrEnum):
    PRUNED = "pruned"  # D < T: own lm_head [D, H] and a d2t offset table
    EQUAL = "equal"  # D == T: identity mapping
    PADDED = "padded"  # D > T: rows [T, D) are illegal ids


class InputKind(StrEnum):
    WITHIN = "within"  # V <= T: the target embedding can be shared
    EXPANDED = "expanded"  # V > T: the draft must ship its own embed_tokens


def vocab_kind(draft_vocab_size: int | None, target_vocab_size: int | None) -> VocabKind | None:
    if draft_vocab_size is None or target_vocab_size is None:
        return None
    if draft_vocab_size < target_vocab_size:
        return VocabKind.PRUNED
    if draft_vocab_size == target_vocab_size:
        return VocabKind.EQUAL
    return VocabKind.PADDED


def input_kind(vocab_size: int | None, target_vocab_size: int | None) -> InputKind | None:
    if vocab_size is None or target_vocab_size is None:
        return None
    return InputKind.EXPANDED if vocab_size > target_vocab_size else InputKind.WITHIN
