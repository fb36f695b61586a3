"""Pure: a draft's config.json dict -> typed draft facts (family, V, D, H, r) plus config findings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.model.families import Family, family_for, speculators_family
from dspark_ckpt.model.findings import Finding, finding, shown_name

MAX_VOCAB = 2**40  # far above any real vocabulary; larger values are corrupt configs
# The DSpark settings vLLM's Qwen3 DSpark reads from the top level only, in every release 0.27-0.33 (markov_rank as a
# plain attribute in Qwen3DSparkModel.__init__; the rest with getattr defaults; docs/upstream-notes.md section 10).
TOP_LEVEL_DSPARK_KEYS = ("markov_rank", "markov_head_type", "enable_confidence_head", "confidence_head_with_markov",
                         "dspark_draft_topk", "block_size")
# Where producers nest them: SpecForge 0.2.0 writes dflash_config (and reads only it); its older Inkling config
# used dspark_config. The first section holding a key wins, as SpecForge built its tensors from dflash_config.
NESTED_SECTIONS = ("dflash_config", "dspark_config", "eagle_config")
# The DSpark families whose vLLM class reads the settings at the top level only (each __init__ reads
# config.markov_rank as a plain attribute: qwen3_dspark.py, gemma4_dspark.py; the generated records agree)
_QWEN3_DSPARK = frozenset({Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK, Family.GEMMA4_DSPARK})


@dataclass(frozen=True, slots=True)
class DraftConfig:
    """The typed view of a draft's config.json (the raw dict is kept beside it): what the checks read."""

    architecture: str | None
    model_type: str | None
    family: Family | None
    vocab_size: int | None  # V
    draft_vocab_size: int | None  # D (defaults to V when absent or null)
    draft_vocab_size_declared: bool
    hidden_size: int | None
    markov_rank: int | None
    enable_confidence_head: bool
    confidence_head_with_markov: bool
    dspark_draft_topk: int | None
    has_own_lm_head_flag: bool  # DFlash `has_own_lm_head` (vLLM 0.31+)
    parallel_drafting: bool
    mask_token_id: int | None
    speculators_type: str | None
    verifier: str | None
    torch_dtype: str | None = None  # the weights' declared dtype (`torch_dtype`, or `dtype` in newer transformers)
    quantized: bool = False  # a quantization_config is declared: tensors beside `.weight` are its parameters
    # (key, section, value): DSpark settings the runtime reads at the top level, found only in a nested section
    nested_settings: tuple[tuple[str, str, Any], ...] = ()


def positive_int(value: object) -> int | None:
    """A vocab-like size: a positive int (not bool) no larger than MAX_VOCAB, else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value > MAX_VOCAB:
        return None
    return value


def _lookup(cfg: dict[str, Any], key: str) -> Any:
    """A top-level key, else the speculators format's `transformer_layer_config` (the draft's own layer config)."""
    if key in cfg:
        return cfg[key]
    layer = cfg.get("transformer_layer_config")
    return layer.get(key) if isinstance(layer, dict) else None


def nested_lookup(cfg: dict[str, Any], key: str) -> Any:
    """vLLM's DFlash merges eagle_config, then dflash_config over the top level: the nested value wins."""
    for section in ("dflash_config", "eagle_config"):
        nested = cfg.get(section)
        if isinstance(nested, dict) and key in nested:
            return nested[key]
    return cfg.get(key)


def _architecture(cfg: dict[str, Any]) -> str | None:
    archs = cfg.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        return archs[0]
    return None


def _architectures_problem(cfg: dict[str, Any]) -> str | None:
    """Why a present `architectures` is unusable (DSP212): vLLM needs a non-empty list of class names."""
    if "architectures" not in cfg:
        return None
    archs = cfg["architectures"]
    if isinstance(archs, str):
        return f"is the string {archs[:80]!r}, not a list of class names"
    if not isinstance(archs, list):
        kind = "null" if archs is None else type(archs).__name__.replace("dict", "object")
        return f"is {kind}, not a list of class names"
    if not archs:
        return "is an empty list"
    bad = [a for a in archs if not isinstance(a, str) or not a]
    if bad:
        return f"holds {len(bad)} of {len(archs)} entries that are not class names (first: {repr(bad[0])[:80]})"
    return None


def _verifier(cfg: dict[str, Any]) -> str | None:
    spec = cfg.get("speculators_config")
    verifier = spec.get("verifier") if isinstance(spec, dict) else None
    name = verifier.get("name_or_path") if isinstance(verifier, dict) else None
    return name if isinstance(name, str) else None


def parse_draft_config(cfg: dict[str, Any], *, file: str = "config.json") -> tuple[DraftConfig, list[Finding]]:
    findings: list[Finding] = []
    architecture = _architecture(cfg)
    if (why := _architectures_problem(cfg)) is not None:
        findings.append(finding("DSP212", f"architectures {why}; vLLM resolves the model class from it.", file=file))
    model_type = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
    speculators_type = cfg.get("speculators_model_type")
    speculators_type = speculators_type if isinstance(speculators_type, str) else None
    family = _family(cfg, architecture, model_type, speculators_type)
    if family is None:
        named = shown_name(architecture) if architecture else (
            f"speculators type {shown_name(speculators_type)!r}" if speculators_type else "no architecture")
        findings.append(finding("DSP203", f"Unknown draft family ({named}): no family contract applies; each runtime's "
                                          "verdict is its own registry's (DSP309 where it has no class for the name).", file=file))

    raw_v = _lookup(cfg, "vocab_size")
    vocab_size = positive_int(raw_v)
    if vocab_size is None:
        findings.append(finding("DSP204", f"vocab_size is {raw_v!r}; expected a positive integer <= 2**40.", file=file))

    raw_d = cfg.get("draft_vocab_size")  # vLLM reads it from the top level only
    declared = raw_d is not None
    draft_vocab_size = positive_int(raw_d) if declared else vocab_size
    if declared and draft_vocab_size is None:
        findings.append(finding("DSP205", f"draft_vocab_size is {raw_d!r}; expected null or a positive integer "
                                          "<= 2**40.", file=file))

    hidden_size = _optional_int(cfg, "hidden_size", file, findings)
    markov_rank = _optional_int(cfg, "markov_rank", file, findings)
    topk = _lookup(cfg, "dspark_draft_topk")
    config = DraftConfig(
        architecture=architecture,
        model_type=model_type,
        family=family,
        vocab_size=vocab_size,
        draft_vocab_size=draft_vocab_size,
        draft_vocab_size_declared=declared,
        hidden_size=hidden_size,
        markov_rank=markov_rank,
        enable_confidence_head=_lookup(cfg, "enable_confidence_head") is True,
        confidence_head_with_markov=_lookup(cfg, "confidence_head_with_markov") is True,
        dspark_draft_topk=topk if isinstance(topk, int) and not isinstance(topk, bool) else None,
        has_own_lm_head_flag=_lookup(cfg, "has_own_lm_head") is True,
        parallel_drafting=_lookup(cfg, "parallel_drafting") is True,
        mask_token_id=_int_or_none(nested_lookup(cfg, "mask_token_id")),
        speculators_type=speculators_type,
        verifier=_verifier(cfg),
        torch_dtype=_dtype_name(cfg),
        quantized=isinstance(cfg.get("quantization_config"), dict),
        nested_settings=nested_settings(cfg) if family in _QWEN3_DSPARK and speculators_type is None else (),
    )
    if config.nested_settings:
        findings.append(nested_finding(config.nested_settings, file, family))
    if architecture == "DSparkDraftModel" and model_type == "qwen3" and speculators_type is None:
        findings.append(finding("DSP218", "architectures names DSparkDraftModel with model_type qwen3: vLLM 0.25-0.28 "
                                          "build the DeepSeek-V4 draft from that name (config/speculative.py), only "
                                          "0.29+ rename it to Qwen3DSparkModel.", file=file))
    return config, findings


def is_speculators_format(cfg: Mapping[str, Any]) -> bool:
    """vLLM's HFConfigParser.parse (transformers_utils/config.py; docs/upstream-notes.md section 2): model_type
    "speculators", or no model_type and a speculators_config, makes SpeculatorsConfig build the config."""
    model_type = cfg.get("model_type")
    return model_type == "speculators" or (model_type is None and cfg.get("speculators_config") is not None)


def _family(cfg: dict[str, Any], architecture: str | None, model_type: str | None,
            speculators_type: str | None) -> Family | None:
    """A speculators-format config is judged by what its type converts to."""
    if speculators_type is not None and is_speculators_format(cfg):
        layer = cfg.get("transformer_layer_config")
        layer_type = layer.get("model_type") if isinstance(layer, dict) else None
        found = speculators_family(speculators_type, layer_type if isinstance(layer_type, str) else None,
                                   architecture)
        if found is not None:
            return found
    return family_for(architecture, model_type)


def nested_settings(cfg: dict[str, Any]) -> tuple[tuple[str, str, Any], ...]:
    """The top-level-only DSpark settings that config.json holds only inside a nested section."""
    found = []
    for key in TOP_LEVEL_DSPARK_KEYS:
        if key in cfg:
            continue
        for section in NESTED_SECTIONS:
            nested = cfg.get(section)
            if isinstance(nested, dict) and nested.get(key) is not None:
                found.append((key, section, nested[key]))
                break
    return tuple(found)


def nested_finding(settings: tuple[tuple[str, str, Any], ...], file: str, family: Family | None = None) -> Finding:
    where = ", ".join(f"{key} (in {section})" for key, section, _ in settings)
    missing_rank = any(key == "markov_rank" for key, _, _ in settings)
    effect = ("Gemma4DSparkModel.__init__ reads config.markov_rank, so every vLLM release that registers it fails "
              "before any weight is loaded (AttributeError: no attribute 'markov_rank')"
              if missing_rank and family is Family.GEMMA4_DSPARK else
              "Qwen3DSparkModel.__init__ reads config.markov_rank, so every vLLM version fails before any weight is "
              "loaded: AttributeError: 'Qwen3Config' object has no attribute 'markov_rank'" if missing_rank else
              "vLLM reads them at the top level only and uses its defaults instead")
    return finding("DSP215", f"DSpark settings only in a nested config: {where}. {effect}.", file=file)


def honoured_draft_vocab(cfg: DraftConfig, rows: tuple[int | None, ...]) -> int | None:
    """The row count every D-sized tensor (lm_head, markov_w2, d2t) agrees on when it contradicts a declared
    draft_vocab_size (SpecForge 0.2.0 builds markov_w2 with vocab_size rows whatever draft_vocab_size says), else
    None. The runtime sizes those tensors from the config, never from the weights."""
    shipped = {r for r in rows if r is not None}
    if not cfg.draft_vocab_size_declared or cfg.draft_vocab_size is None or len(shipped) != 1:
        return None
    honoured = shipped.pop()
    return honoured if honoured != cfg.draft_vocab_size and positive_int(honoured) else None


def _dtype_name(cfg: dict[str, Any]) -> str | None:
    name = cfg.get("torch_dtype") or cfg.get("dtype")
    return name if isinstance(name, str) else None


def _optional_int(cfg: dict[str, Any], key: str, file: str, findings: list[Finding]) -> int | None:
    raw = _lookup(cfg, key)
    if raw is None:
        return None
    value = positive_int(raw)
    if value is None:
        findings.append(finding("DSP208", f"{key} is {raw!r}; expected a positive integer, shape checks that need "
                                          "it were skipped.", file=file))
    return value


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
