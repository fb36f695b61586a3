"""Pure: parameters a class builds in every decoder layer but its first, which the release's samples (one layer: the
generator builds `num_hidden_layers` 1) never showed, so its record's per-layer template lacks them (hand-read).

SGLang's EAGLE-1 heads drop the first layer's input norm: `if layer_id == 0: del self.input_layernorm` in the
decoder layer of models/llama_eagle.py (L49 @ 0.4.2, L52 @ 0.5.1-0.5.21, L55 @ 0.5.23) and models/qwen2_eagle.py
(L50 @ 0.4.2, L53 @ 0.5.1-0.5.21, L56 @ 0.5.23); every later layer keeps it, and its load_weights fills it from
`layers.{i}.input_layernorm.weight` (the `model.` prefix added). A head with two layers that ships no second
input norm loads without a word and that norm keeps its initial values (DSP363).
"""

from __future__ import annotations

import re

# (runtime, architecture) -> parameter templates built in layers {i} > first only
PAST_FIRST: dict[tuple[str, str], tuple[str, ...]] = {
    ("sglang", "LlamaForCausalLMEagle"): ("model.layers.{i}.input_layernorm.weight",),
    ("sglang", "Qwen2ForCausalLMEagle"): ("model.layers.{i}.input_layernorm.weight",),
}


def templates(runtime: str, architecture: str) -> tuple[str, ...]:
    return PAST_FIRST.get((runtime, architecture), ())


def parameter_of(runtime: str, architecture: str, name: str) -> str | None:
    """The parameter a checkpoint name fills among those templates (with or without the `model.` prefix), layer
    index kept; None where it fills none of them."""
    for template in templates(runtime, architecture):
        pattern = re.escape(template.removeprefix("model.")).replace(r"\{i\}", r"([1-9][0-9]*)")
        found = re.fullmatch(f"(?:model\\.)?{pattern}", name)
        if found is not None:
            return template.replace("{i}", found.group(1))
    return None
