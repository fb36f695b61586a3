"""Pure: vLLM's conversion of a speculators-format config.json, per release; check and the deploy preflight both call it.

vLLM detects the format in `HFConfigParser.parse` (transformers_utils/config.py): `model_type` "speculators", or no
`model_type` and a `speculators_config` (model/draft_config.is_speculators_format); such a config is built by
`SpeculatorsConfig.from_pretrained` (configs/speculators/base.py): the hf_config is `transformer_layer_config` updated
by the type's `update_*` function (configs/speculators/algos.py), with model_type "speculators" (the class variable;
`__init__` drops the key). docs/upstream-notes.md section 2 cites the lines per release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.model.draft_config import is_speculators_format
from dspark_ckpt.runtimes.records import Issue
from dspark_ckpt.runtimes.vllm_release import ALGOS_FILE, BASE_FILE, ReleaseRules
from dspark_ckpt.runtimes.vllm_rows import DFLASH2_KEYS

TF_CONFIG = "vllm/transformers_utils/config.py"
__all__ = ["Conversion", "convert", "is_speculators_format"]

# update_dspark's copied keys (algos.py); 0.29+ add use_aux_hidden_state.
_DSPARK_COPIED = ("draft_vocab_size", "target_hidden_size", "mask_token_id", "markov_rank", "markov_head_type",
                  "block_size", "enable_confidence_head", "confidence_head_with_markov")
_DSPARK_SELECTABLE = ("Qwen3DSparkModel", "Qwen3OmniDSparkModel")


@dataclass(frozen=True, slots=True)
class Conversion:
    """What one release's SpeculatorsConfig makes of the config: the hf_config's attributes, the method the type
    runs under, or the error the conversion raises."""

    hf: dict[str, Any]  # transformer_layer_config + the algorithm's keys, model_type "speculators"
    method: str  # "" when the conversion fails
    parallel: bool | None  # build_vllm_speculative_config's parallel_drafting (peagle), else None
    error: Issue | None
    cites: tuple[tuple[str, str], ...]  # (file, lines) of this release, in the order the steps run

    def source(self, release: str) -> str:
        return "; ".join(f"{file} @ v{release} {lines}" for file, lines in self.cites)

    @property
    def architectures(self) -> tuple[str, ...]:
        archs = self.hf.get("architectures")
        return tuple(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ()


def _expected(types: Sequence[str]) -> str:
    listed = ", ".join(f"'{t}': <function update_{t} at 0x...>" for t in types)
    return f"Expected one of: {{{listed}}}. Please ensure you're loading a speculators-format model."


# 0.34 algos.py update_peagle (and base.py build_vllm_speculative_config), in its words
P_EAGLE_REFUSED = "P-EAGLE (parallel drafting EAGLE-3) is not supported."

class _Missing(Exception):
    """What the converter raises, as the runtime words it."""


def _required(cfg: Mapping[str, Any], key: str) -> Any:
    if key not in cfg:
        raise _Missing(f"KeyError: '{key}'")
    return cfg[key]


def convert(cfg: Mapping[str, Any], r: ReleaseRules) -> Conversion:
    """SpeculatorsConfig.extract_transformers_pre_trained_config plus the algorithm's update_* function, as release
    `r.version` runs them (the caller has established is_speculators_format)."""
    kind = cfg.get("speculators_model_type")
    detect = (TF_CONFIG, f"L{r.speculators_detect}")
    if not isinstance(kind, str) or kind not in r.speculators_types:
        return Conversion({}, "", None, Issue("DSP330", _expected(r.speculators_types), verbatim=False),
                          (detect, (BASE_FILE, f"L{r.expected_line}")))
    cites = (detect, (ALGOS_FILE, f"update_{kind} L{r.algos[kind]}"))
    layer = cfg.get("transformer_layer_config", {})
    if not isinstance(layer, dict):
        return Conversion({}, "", None, Issue("DSP330", "transformer_layer_config is not an object: the converter "
                                                        "cannot update it", verbatim=False), cites)
    hf = dict(layer)  # the draft's hf_config *is* the layer config, plus the algorithm's keys
    if kind == "peagle" and r.speculators_peagle_refused:  # 0.34: update_peagle raises before it reads anything
        return Conversion(hf, "", None, Issue("DSP330", P_EAGLE_REFUSED), cites)
    try:
        method, parallel = _update(kind, cfg, hf, r)
    except _Missing as missing:
        return Conversion(hf, "", None, Issue("DSP330", str(missing)), cites)
    hf["model_type"] = "speculators"  # SpeculatorsConfig drops model_type: its class variable is "speculators"
    return Conversion(hf, method, parallel, None, cites)


def _writes(r: ReleaseRules, key: str) -> bool:
    """Whether the release's algos.py has that step (`build.algos_*` of lines.json, tools/release_anchors.py)."""
    return r.citation(f"build.algos_{key}") is not None


def _update(kind: str, cfg: Mapping[str, Any], hf: dict[str, Any], r: ReleaseRules) -> tuple[str, bool | None]:
    if kind in ("eagle3", "peagle"):
        return _eagle3(kind, cfg, hf, r)
    if kind in ("dflash", "dflash2"):
        _dflash(kind, cfg, hf, r)
        return "dflash", None
    _dspark(cfg, hf, r)
    return "dspark", None


def _eagle3(kind: str, cfg: Mapping[str, Any], hf: dict[str, Any], r: ReleaseRules) -> tuple[str, bool | None]:
    """update_eagle3 / update_peagle: norm_before_fc from 0.19, fc_norm and norm_output from 0.25; the layer's
    model_type picks the class from 0.24 (before: always the Llama class, whatever the layer)."""
    hf["draft_vocab_size"] = cfg.get("draft_vocab_size")
    if cfg.get("target_hidden_size") is not None:
        hf["target_hidden_size"] = cfg["target_hidden_size"]
    hf["norm_before_residual"] = cfg.get("norm_before_residual", kind == "eagle3")
    if _writes(r, "norm_before_fc"):
        hf["norm_before_fc"] = cfg.get("norm_before_fc", False)
    if kind == "eagle3" and _writes(r, "fc_norm"):
        hf["fc_norm"] = cfg.get("fc_norm", False)
        hf["norm_output"] = cfg.get("norm_output", False)
    prefix = "Eagle3" if kind == "eagle3" else "Peagle"
    if not _writes(r, "qwen3"):
        hf["architectures"] = [f"{prefix}LlamaForCausalLM"]
    else:
        layer_type = hf.get("model_type", "llama")
        if layer_type not in ("qwen3", "llama"):
            raise _Missing(f"Unsupported model_type {layer_type} for {'Eagle3' if kind == 'eagle3' else 'PEagle'} "
                           "speculator")
        hf["architectures"] = [f"{prefix}{'Qwen3' if layer_type == 'qwen3' else 'Llama'}ForCausalLM"]
    if kind == "peagle":
        hf["pard_token"] = _required(cfg, "mask_token_id")
    if cfg.get("eagle_aux_hidden_state_layer_ids"):  # the only aux key copied to the top (eagle3_aux.TOP)
        hf["eagle_aux_hidden_state_layer_ids"] = cfg["eagle_aux_hidden_state_layer_ids"]
    # build_vllm_speculative_config: peagle runs as {"method": "eagle3", "parallel_drafting": True}
    return ("eagle3", True) if kind == "peagle" else ("eagle3", None)


def _dflash(kind: str, cfg: Mapping[str, Any], hf: dict[str, Any], r: ReleaseRules) -> None:
    """update_dflash (and update_dflash2, 0.29+, which calls it and adds the conv / selector keys): target_layer_ids
    shifted by one from 0.22 (0.20-0.21: the aux ids as given), `causal` from 0.26, `sample_from_anchor` from 0.27."""
    hf["architectures"] = ["DFlashDraftModel"]
    hf["draft_vocab_size"] = cfg.get("draft_vocab_size")
    if cfg.get("target_hidden_size") is not None:
        hf["target_hidden_size"] = cfg["target_hidden_size"]
    aux = _required(cfg, "aux_hidden_state_layer_ids")
    hf["eagle_aux_hidden_state_layer_ids"] = aux
    nested = {"mask_token_id": _required(cfg, "mask_token_id"),
              **(_shifted(aux) if _writes(r, "dflash_shift") else {"target_layer_ids": aux})}
    if _writes(r, "dflash_anchor"):
        nested["sample_from_anchor"] = cfg.get("sample_from_anchor", False)
    if _writes(r, "dflash_causal"):
        nested["causal"] = not cfg.get("sliding_window_non_causal", True)
    if kind == "dflash2":
        hf["architectures"] = ["DFlash2DraftModel"]
        nested.update({k: cfg[k] for k in DFLASH2_KEYS if cfg.get(k) is not None})
    hf["dflash_config"] = nested


def _dspark(cfg: Mapping[str, Any], hf: dict[str, Any], r: ReleaseRules) -> None:
    """update_dspark: 0.25-0.28 always build Qwen3DSparkModel; 0.29+ keep a Qwen3(Omni)DSparkModel named in
    architectures, set dspark_bonus_anchor and copy use_aux_hidden_state."""
    archs = cfg.get("architectures") or []
    kept = [a for a in archs if a in _DSPARK_SELECTABLE] if isinstance(archs, list) else []
    hf["architectures"] = (kept if r.speculators_dspark_keeps_arch else []) or ["Qwen3DSparkModel"]
    if _writes(r, "bonus_always"):  # 0.25-0.26: no sample_from_anchor yet
        hf["dspark_bonus_anchor"] = True
    else:
        anchor = cfg.get("sample_from_anchor", False)
        hf["sample_from_anchor"] = anchor
        if r.speculators_dspark_keeps_arch:
            hf["dspark_bonus_anchor"] = not anchor
    aux = _required(cfg, "aux_hidden_state_layer_ids")
    hf["eagle_aux_hidden_state_layer_ids"] = aux
    hf.update(_shifted(aux))
    keys = _DSPARK_COPIED + (("use_aux_hidden_state",) if r.speculators_dspark_keeps_arch else ())
    hf.update({k: cfg[k] for k in keys if cfg.get(k) is not None})


def _shifted(ids: Any) -> dict[str, Any]:
    """target_layer_ids = `[i - 1 for i in aux_layer_ids]`; ids that are not integers (vLLM's TypeError) are not
    modelled: the key is left out."""
    if isinstance(ids, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return {"target_layer_ids": [i - 1 for i in ids]}
    return {}
