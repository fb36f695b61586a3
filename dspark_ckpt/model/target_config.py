"""Pure: a target's config.json dict -> its logical text vocabulary T (what vLLM's get_vocab_size() returns)."""

from __future__ import annotations

from typing import Any

from dspark_ckpt.model.draft_config import positive_int

# vLLM reads `hf_text_config.vocab_size`, found by transformers' `get_text_config()` (text_encoder, decoder,
# generator, text_config); Qwen3-Omni's config class overrides it to reach the thinker's text config.
TEXT_CONFIG_PATHS: tuple[tuple[str, ...], ...] = (
    ("thinker_config", "text_config"),
    ("text_encoder",),
    ("decoder",),
    ("generator",),
    ("text_config",),
)


def text_config(cfg: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The sub-config vLLM takes the vocab from, and its dotted path ('' for the top level)."""
    for path in TEXT_CONFIG_PATHS:
        node: Any = cfg
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and "vocab_size" in node:
            return node, ".".join(path)
    return cfg, ""


def target_vocab_size(cfg: dict[str, Any]) -> tuple[int | None, str]:
    """T and the config path it came from; None when the config has no positive integer vocab_size."""
    node, path = text_config(cfg)
    return positive_int(node.get("vocab_size")), path


def target_hidden_size(cfg: dict[str, Any]) -> int | None:
    """The width of the hidden states the target hands an EAGLE-3 draft: vLLM's `get_hidden_size()`, read from the
    same text config as T."""
    node, _ = text_config(cfg)
    return positive_int(node.get("hidden_size"))


def target_head_rows(cfg: dict[str, Any]) -> int | None:
    """The rows of the target's lm_head when its text config pads them beyond T (SGLang's Inkling builds
    ParallelLMHead(padded_vocab_size)): what SGLang's DSpark crops the draft's base logits to."""
    node, _ = text_config(cfg)
    t, padded = positive_int(node.get("vocab_size")), positive_int(node.get("padded_vocab_size"))
    return padded if padded is not None and t is not None and padded > t else None


def target_text_model_type(cfg: dict[str, Any]) -> str | None:
    """`hf_text_config.model_type`, as far as config.json says it: the text config's own `model_type` (a nested one
    without it takes its transformers class's default, which is not read here: None), else the top level's."""
    node, path = text_config(cfg)
    if path == "" and any(isinstance(cfg.get(p[0]), dict) for p in TEXT_CONFIG_PATHS):
        return None  # a nested text config without vocab_size: which one transformers takes is not known here
    value = node.get("model_type")
    return value if isinstance(value, str) and value else None


def is_qwen3_omni_target(cfg: dict[str, Any]) -> bool:
    archs = cfg.get("architectures") or []
    return cfg.get("model_type") == "qwen3_omni_moe" or any(
        a in ("Qwen3OmniMoeForConditionalGeneration", "Qwen3OmniMoeThinkerForConditionalGeneration")
        for a in archs if isinstance(a, str))
