"""Pure: the set-target-hidden repair of an EAGLE-3 draft whose config.json says `target_hidden_size: null`
(DSP358): the width fc.weight was trained for, written where vLLM's getattr reads it.

vLLM's llama_eagle3.py / qwen3_eagle3.py build fc from `getattr(config, "target_hidden_size", hidden_size) * n`
(runtimes/eagle3_aux.py, NULL_WIDTH): a key present with the value null is found, and `None * n` raises before any
weight is read. fc.weight is [hidden_size, n x width] for the n aux hidden states the release resolves, so its
width says what the key must be; with `--target` that width must also be the target's hidden size (else the draft
was trained for another target, DSP359, and no edit makes it right).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dspark_ckpt.repair.aux_count import layer_list
from dspark_ckpt.runtimes.config_build import is_speculators
from dspark_ckpt.runtimes.records import DraftFacts

KEY = "target_hidden_size"
Edit = tuple[str, Any, Any]  # (top-level config.json key, old value, new value)


def _trained_width(fc_shape: tuple[int, ...], counts: set[int]) -> tuple[int | None, str | None]:
    """fc.weight's width per aux hidden state, or None and why it cannot be told."""
    if len(counts) != 1:
        return None, (f"the releases judged here size fc for different numbers of aux hidden states "
                      f"({', '.join(map(str, sorted(counts)))}): fc.weight's width does not give one per-state width")
    (n,) = counts
    columns = fc_shape[1] if len(fc_shape) == 2 else None
    if columns is None or n <= 0 or columns % n:
        got = ", ".join(map(str, fc_shape))
        return None, f"fc.weight is [{got}]: its width is not a multiple of the {n} aux hidden states fc is sized for"
    return columns // n, None


def target_hidden_edit(facts: DraftFacts) -> tuple[Edit | None, str | None]:
    """The edit set-target-hidden writes, or None and why it does not apply to this draft."""
    raw: Mapping[str, Any] | None = facts.raw_config
    reads = [b.aux for b in facts.builds if b.aux is not None and b.aux.runtime == "vllm" and b.aux.fc_built]
    if raw is None or not any(r.width_null for r in reads):
        return None, f"no release judged here reads `{KEY}: null` from the draft's config.json"
    if is_speculators(raw) or KEY not in raw or raw[KEY] is not None:
        return None, (f"`{KEY}: null` is not a top-level key of config.json (a speculators config's layer "
                      "config): re-export the draft with the target's hidden size there")
    if facts.fc_shape is None:
        return None, "it ships no fc.weight whose width says which hidden size fc was trained for"
    # a release that sizes fc for three whatever the config says (EAGLE-3 Llama before vLLM 0.22) tells nothing of
    # the count the draft was trained for, where another release reads it
    counted = [r for r in reads if not r.fixed_count] or reads
    counts = {r.count for r in counted if r.width_null and r.count is not None}
    ids = layer_list(raw)
    if ids is not None and counts and counts != {len(ids)}:
        n = ", ".join(map(str, sorted(counts)))
        return None, (f"the aux layer list names {len(ids)} layers while fc is sized for {n}: fc.weight's width "
                      "does not tell the per-layer width until the count is right (set-aux-count, or a re-export)")
    width, why = _trained_width(tuple(facts.fc_shape), counts)
    if width is None:
        return None, why
    target = facts.target_hidden_size
    if target is not None and target != width:
        return None, (f"fc.weight was trained for hidden states of width {width}, but the target's hidden_size is "
                      f"{target}: the draft was trained for another target (DSP359), which no config edit mends")
    return (KEY, None, width), None
