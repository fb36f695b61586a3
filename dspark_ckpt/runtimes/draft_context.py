"""Pure: the draft's context (max_position_embeddings) against the served max_model_len, per vLLM release.

What each release's start-up does with three numbers: the draft config's `max_position_embeddings` P, the speculative
config's own `max_model_len` S (the draft's), and the served target's max_model_len L (`vllm serve --max-model-len`,
else derived from the target's config). Read from the wheels (docs/upstream-notes.md section 9.1) and observed by
running 0.27.1, 0.28.0, 0.30.0 and 0.33.0's `SpeculativeConfig` on CPU:

1. The draft ModelConfig is built with `max_model_len=S` (`draft_config_len`); `_get_and_verify_max_len` raises when
   S exceeds the length derived from the draft config (`derived_len`; `{P}.0`: the RoPE factor multiplication makes
   it a float). Without S its max_model_len is P.
2. `_maybe_override_draft_max_position_embeddings` (`raise_positions`, `positions_raised`) raises P to L in place,
   logged at info level only: for methods eagle and eagle3 in 0.27-0.32; for every method but draft_model in 0.33
   (when every RoPE type only sizes the cos/sin cache, `rope_cache_only`). Other drafts keep P, and the proposer
   still feeds them positions up to L.
3. `_maybe_override_draft_max_model_len` (`spec_len`) raises when S exceeds L; otherwise the draft's max_model_len is
   S, or min(P, L). In 0.27-0.32 nothing else reads it; in 0.33 `VllmConfig._limit_max_model_len_to_draft`
   (`limit_to_draft`) lowers the served max_model_len to it on the V2 model runner when the draft does not share
   the target's positions (method draft_model here).

P decides the draft's length only when no other length key is set and every RoPE type applies no factor to it in
any release (default, llama3); otherwise, and when the key is absent (the config class's transformers default then
applies: Qwen3Config 32768, LlamaConfig 2048), nothing is judged: skipped rather than guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dspark_ckpt.model.codes import FindingCode

# The rules' lines in each release's wheel (`max_len_field`, `draft_config_len`, `length_keys`, `derived_len`,
# `rope_factor`, `raise_positions`, `positions_raised`, `rope_cache_only`, `spec_len`, `limit_to_draft`,
# `draft_rotary`; the DFlash layers Qwen3 DSpark builds on size their rotary cache from the config) are generated
# with speculative_config's: tools/release_anchors.py SPEC_ANCHORS, read through speculative_config.cite.

# The runtimes' own words (`{}` fields filled per draft).
M_DERIVED = ("User-specified max_model_len ({s}) is greater than the derived max_model_len ({key}={derived} or "
             "model_max_length=None in model's config.json). To allow overriding this maximum, set the env var "
             "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If "
             "the model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to "
             "nan. If the model uses absolute position encoding, positions exceeding derived_max_model_len will "
             "cause a CUDA array out-of-bounds error.")
M_SPEC_LEN = "speculative_max_model_len={s} cannot be larger than target_max_model_len={t}"
# 0.20 builds the draft's ModelConfig without S (no `draft_config_len`): _maybe_override_draft_max_model_len refuses an
# S above the draft's own length (speculative.py L769-773 @ 0.20.0); VLLM_ALLOW_LONG_MAX_MODEL_LEN does not apply
M_SPEC_DRAFT_LEN = "speculative_max_model_len={s} cannot be larger than draft_max_model_len={d}"
# _maybe_override_draft_max_position_embeddings's docstring, on what a smaller P does (every release).
OUT_OF_BOUNDS = "makes that cache gather go out of bounds"

# derive_max_model_len_and_key's keys (the same list in 0.27-0.33); the smallest present wins.
LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
               "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
# RoPE types whose length is max_position_embeddings in every release (`rope_factor`: llama3 is exempt from the
# factor, default defines none) and which 0.33 counts as only sizing the cache (`rope_cache_only`).
PLAIN_ROPE = frozenset({"default", "llama3"})


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _plain_rope(config: Mapping[str, Any]) -> bool:
    """`rope_parameters` (flat, or one dict per layer type), else the legacy `rope_scaling` (`type` the old key):
    every entry llama3, or default without a factor."""
    rope = config.get("rope_parameters")
    if not isinstance(rope, Mapping) or not rope:
        rope = config.get("rope_scaling")
    if not isinstance(rope, Mapping) or not rope:
        return True
    entries = [rope] if not all(isinstance(v, Mapping) for v in rope.values()) else list(rope.values())
    types = [(e.get("rope_type", e.get("type", "default")), "factor" in e) for e in entries]
    return all(t in PLAIN_ROPE and (t == "llama3" or not factor) for t, factor in types)


def positions(config: Mapping[str, Any]) -> int | None:
    """P when it alone is the model's length in every release: the only length key set, RoPE without a factor."""
    p = _int(config.get("max_position_embeddings"))
    if p is None or any(config.get(k) is not None for k in LENGTH_KEYS[1:]):
        return None
    return p if _plain_rope(config) else None


def draft_length_error(s: int | None, p: int | None, *, draft_config_len: bool = True) -> str | None:
    """Step 1: the speculative config's max_model_len above the draft config's length (`draft_config_len`: the
    draft's ModelConfig is built with it, 0.21+; before, step 3 refuses it in its own words)."""
    if s is None or p is None or s <= p:
        return None
    if not draft_config_len:
        return M_SPEC_DRAFT_LEN.format(s=s, d=p)
    return M_DERIVED.format(s=s, key="max_position_embeddings", derived=float(p))


def served_length_error(s: int | None, served: int | None) -> str | None:
    """Step 3: the speculative config's max_model_len above the served one."""
    return M_SPEC_LEN.format(s=s, t=served) if s is not None and served is not None and s > served else None


def _methods(raised_for: tuple[str, ...]) -> str:
    return ("method " if len(raised_for) == 1 else "methods ") + " and ".join(raised_for)


def context_note(p: int | None, s: int | None, served: int | None, served_from: str, method: str | None,
                 raised_for: tuple[str, ...] | None, *,
                 limits_served: bool) -> tuple[FindingCode, str, tuple[str, ...]] | None:
    """What a started server does with a draft context shorter than the served one: (code, text, rules), or None.
    `raised_for`: the methods whose P the release raises (None: all but draft_model; (): none, before 0.27);
    `limits_served`: step 3's V2 limit (0.33)."""
    if p is None or served is None or method is None:
        return None
    where = f"the served max_model_len {served} ({served_from})"
    if (method != "draft_model") if raised_for is None else (method in raised_for):
        if p >= served:
            return None
        return ("DSP827", (f"the draft's max_position_embeddings is {p}, below {where}: vLLM raises it to {served} "
                           f"for method {method!r} (logged at info level only), so the draft does not run off its "
                           f"rotary cache, but from position {p} on it runs at positions it was not trained on: its "
                           "proposals on longer requests may be poorer (lower acceptance); the output stays the "
                           "target's"), ("raise_positions", "positions_raised"))
    beyond = (f"from position {p} on the draft's rotary cache, sized by max_position_embeddings, is indexed past its "
              f"end (vLLM: a smaller value '{OUT_OF_BOUNDS}'): a crash or junk proposals on any request longer than "
              f"{p} tokens") if p < served else None
    kept = ("this release raises the draft's max_position_embeddings for every method but draft_model"
            if raised_for is None else
            "this release never raises the draft's max_position_embeddings (vLLM 0.27 does, for eagle and eagle3)"
            if not raised_for else
            f"this release raises the draft's max_position_embeddings only for {_methods(raised_for)}, not {method!r}")
    # the rules cited: where this release raises P for other methods, else its min(P, L) of the draft's length
    rules = ("raise_positions", "positions_raised") if raised_for is None or raised_for else ("spec_len",)
    if limits_served:
        draft_len = s if s is not None else min(p, served)
        if draft_len >= served:
            return None
        return ("DSP826", f"the draft's max_model_len is {draft_len}, below {where}, and {kept}: with the V2 model "
                          f"runner VllmConfig lowers the served max_model_len to {draft_len} (a warning in the log; "
                          "longer requests are refused)" + (f"; on the V1 runner, {beyond}" if beyond else ""),
                ("raise_positions", "limit_to_draft"))
    if beyond is None:
        return None
    return ("DSP826", (f"the draft's max_position_embeddings is {p}, below {where}, and {kept}; the proposer "
                       f"still feeds the draft positions up to {served}, so {beyond}"), rules)
