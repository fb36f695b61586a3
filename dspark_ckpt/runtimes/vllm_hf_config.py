"""Pure: how one vLLM release turns the draft's hf_config into the architecture it builds, the steps check
(runtimes/config_build.py) and the deploy preflight (runtimes/speculative_config.py) both replay, once: the draft
ModelConfig's hf_overrides (config/speculative.py `hf_config_override`, as executed: runtimes/config_rewrites.py),
the registry lookup (registry.py), EAGLEConfig's rename (transformers_utils/configs/eagle.py; tied to its executed
table by tests/unit/test_config_rewrites.py) and method dspark's rewrite (config/speculative.py `__post_init__`).
Every rule reads the release's row (runtimes/vllm_release.py).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.model.families import ARCHITECTURE_FAMILY, traits
from dspark_ckpt.runtimes import config_rewrites
from dspark_ckpt.runtimes.vllm_release import ReleaseRules

EAGLE_METHODS = ("eagle", "eagle3", "dflash")


@functools.cache  # asked per release of the same name
def implied_method(arch: str | None) -> str:
    """The method a draft is served with when the deploy command names the right one: its family's (Traits.method),
    else what its name says (a DSpark, DFlash, EAGLE-3 or EAGLE-1 class no family models), else an independent
    draft."""
    family = ARCHITECTURE_FAMILY.get(arch or "")
    if family is not None:
        return traits(family).method
    if arch is None:
        return "draft_model"
    if "DSpark" in arch:
        return "dspark"
    if arch.startswith("DFlash") or arch.endswith("DFlash"):
        return "dflash"
    if "Eagle3" in arch or arch.startswith(("Peagle", "PEagle")):
        return "eagle3"
    if arch.startswith("Eagle") or arch.endswith("Eagle"):  # EAGLE-1 heads: EagleLlamaForCausalLM, EagleDeepSeekMTPModel
        return "eagle"
    return "draft_model"


DETECTION_SKIPPED = ("eagle", "eagle3", "dflash", "dspark")  # speculative.py: "Automatically detect the method" skips these


def detected_method(r: ReleaseRules, path: str, archs: Sequence[str],
                    model_type: str | None) -> tuple[str, str] | None:
    """SpeculativeConfig.__post_init__'s method detection (0.33 and older; it runs for any method but the four
    DETECTION_SKIPPED, and replaces the one given): the method the draft's model path, architectures or model_type
    name, and why; None where nothing matches."""
    lowered = path.lower()
    for marker, method in (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash")):
        if method not in r.methods:  # no dflash branch before 0.20 (speculative.py L479-519 @ v0.18.0)
            continue
        if marker in lowered:
            return method, f"detected: {marker!r} in the model path"
        if method == "dflash" and (a := next((a for a in archs if a in r.dflash_detect_archs), None)):
            return method, f"detected from architecture {a}"
    if "dspark" in r.methods and "dspark" in lowered:  # no dspark branch before 0.25
        return "dspark", "detected: 'dspark' in the model path"
    if a := next((a for a in archs if a in r.dspark_detect_archs), None):
        return "dspark", f"detected from architecture {a}"
    if r.dspark_detect_qwen3_draft and "DSparkDraftModel" in archs and model_type == "qwen3":
        return "dspark", "detected from architecture DSparkDraftModel with model_type qwen3"
    if r.medusa_detect and model_type in ("medusa", "mlp_speculator"):
        return str(model_type), f"detected from model_type {model_type}"
    if model_type in r.mtp_types:
        return "mtp", f"detected from model_type {model_type}"
    return None


def served_method(r: ReleaseRules, given: str, path: str | None, archs: Sequence[str],
                  model_type: str | None) -> str:
    """The method a release serves a draft with when the deploy names `given` and vLLM reads the draft from `path`:
    0.33 and older replace any method but the four DETECTION_SKIPPED with the one the detection finds (an EAGLE-1
    head named `EAGLE-...` served as mtp is served as eagle); 0.34 keeps a configured method."""
    if r.per_method_configs or given in DETECTION_SKIPPED or path is None:
        return given
    found = detected_method(r, path, archs, model_type)
    return found[0] if found is not None else given


def overridden(r: ReleaseRules, raw: Mapping[str, Any], cites: list[str] | None = None, method: str | None = None,
               target_vocab: int | None = None, tokens: int | None = None) -> dict[str, Any]:
    """`tokens`: the deploy's num_speculative_tokens (None: not served), which a Medusa config's head count becomes
    (medusa_completed)."""
    return medusa_completed(r, _overridden(r, raw, cites, method, target_vocab), cites, tokens)


def medusa_completed(r: ReleaseRules, hf: Mapping[str, Any], cites: list[str] | None,
                     tokens: int | None) -> dict[str, Any]:
    """A Medusa config as MedusaConfig builds it (0.12-0.32, executed by tools/release_config_rewrites.py):
    `from_pretrained` renames FasterDecoding's `medusa_num_heads`/`medusa_num_layers` to num_heads/num_hidden_layers,
    and, served, SpeculativeConfig.__post_init__ sets `num_lookahead_tokens` (the head count) to
    num_speculative_tokens, whatever the config says."""
    keys = config_rewrites.medusa_keys(r.version) if hf.get("model_type") == "medusa" else None
    if keys is None:
        return dict(hf)
    out = dict(hf)
    renamed = {k: v for k, v in keys.renames.items() if k in out}
    for key, name in renamed.items():
        out[name] = out.pop(key)
    if renamed and cites is not None:
        cites.append(f"{keys.renames_where} (MedusaConfig.from_pretrained: "
                     + ", ".join(f"{k} -> {v}" for k, v in renamed.items()) + ")")
    if tokens is not None and keys.lookahead is not None:
        out[keys.lookahead] = tokens
        if cites is not None:
            cites.append(f"{keys.lookahead_where} (num_lookahead_tokens = num_speculative_tokens: "
                         f"{keys.lookahead} {tokens})")
    return out


def _overridden(r: ReleaseRules, raw: Mapping[str, Any], cites: list[str] | None, method: str | None,
                target_vocab: int | None) -> dict[str, Any]:
    """The draft's hf_config as its config class builds it (a Medusa config without architectures gets MedusaConfig's
    ["MedusaModel"], 0.12-0.32) and after `hf_config_override`, which every draft ModelConfig gets whatever the method:
    model_type deepseek_v3 becomes deepseek_mtp and architectures ["DeepSeekMTPModel"], and so on per release (the
    release's function executed over each model_type it names); the config as written where it changes nothing.
    A method __post_init__ gives its own overrides in their place (config_rewrites.method_override: medusa, 0.25-0.32)
    gets those (model_type medusa whatever config.json says), then the target's vocab_size (`target_vocab`, where
    known) where it differs (absent: MedusaConfig's default)."""
    served = config_rewrites.method_override(r.version, method) if method is not None else None
    if served is not None:
        raw = {**raw, **served.hf_overrides}
        if cites is not None:
            cites.append(f"{served.where} (method {method}: hf_overrides {dict(served.hf_overrides)})")
        if target_vocab is not None and served.target_vocab and raw.get("vocab_size") != target_vocab:
            raw.update(dict.fromkeys(served.target_vocab, target_vocab))
            if cites is not None:
                cites.append(f"{served.vocab_where} (method {method}: {', '.join(served.target_vocab)} the target's)")
        return _completed(r, raw, cites)
    model_type = raw.get("model_type")
    raw = _completed(r, raw, cites)
    by_arch = config_rewrites.architecture_override(r.version, raw)
    found = by_arch or config_rewrites.override(r.version, model_type if isinstance(model_type, str) else None)
    if found is None:
        return dict(raw)
    hf = {**raw, "model_type": found.model_type}
    if found.architectures is not None:
        hf["architectures"] = list(found.architectures)
    if cites is not None:
        said = f"architectures {raw.get('architectures')}" if by_arch else f"model_type {model_type}"
        cites.append(f"{found.where} (hf_config_override: {said} -> "
                     + (f"{list(found.architectures)})" if by_arch and found.architectures else
                        f"{found.model_type}" + (f", architectures {list(found.architectures)})"
                                                 if found.architectures else ")")))
    return hf


def _completed(r: ReleaseRules, raw: Mapping[str, Any], cites: list[str] | None) -> dict[str, Any]:
    """A Medusa config without architectures gets MedusaConfig's own default (0.12-0.32, executed)."""
    completed = config_rewrites.medusa_architectures(r.version) if raw.get("model_type") == "medusa" else None
    if completed is None or not completed.architectures or raw.get("architectures"):
        return dict(raw)
    if cites is not None:
        cites.append(f"{completed.where} (MedusaConfig: architectures {list(completed.architectures)})")
    return {**raw, "architectures": list(completed.architectures)}


def eagle_where(r: ReleaseRules) -> str:
    """EAGLEConfig.__init__'s lines in this release (its executed record), `eagle.py @ vX La-b`."""
    return config_rewrites.eagle_where(r.version)


def unsupported(r: ReleaseRules, architectures: Sequence[str]) -> bool:
    """ModelRegistry._raise_for_unsupported: no name of the list is mapped by any `_*_MODELS` dict."""
    return not any(r.registers(a) for a in architectures)


def wraps(method: str | None, config_type: str | None) -> bool:
    """speculative.py: eagle, eagle3 and dflash drafts get an EAGLEConfig, unless the hf_config already is one
    (model_type "eagle") or a SpeculatorsConfig ("speculators")."""
    return method in EAGLE_METHODS and config_type not in ("speculators", "eagle")


def rename(arch: str, method: str, keep: tuple[str, ...] = ()) -> str:
    """transformers_utils/configs/eagle.py: the architecture EAGLEConfig gives a draft under each method (`keep`:
    the names a release leaves alone under dflash, ReleaseRules.dflash_keep_extra)."""
    if method == "eagle":
        return arch if arch.startswith("Eagle") else f"Eagle{arch}"
    if method == "eagle3":
        return arch if arch.startswith("Eagle3") or arch.endswith("Eagle3") else f"Eagle3{arch}"
    return arch if arch.startswith("DFlash") or arch.endswith("DFlash") or arch in keep else f"DFlash{arch}"


def renamed(r: ReleaseRules, architectures: Sequence[str], method: str) -> tuple[str, ...]:
    return tuple(rename(a, method, r.dflash_keep_extra) for a in architectures)


def qwen3_renamed(r: ReleaseRules, architectures: Sequence[str], model_type: str | None) -> bool:
    """A Qwen3-typed DSparkDraftModel becomes Qwen3DSparkModel: under method dspark (0.29-0.33 `qwen3_rename`), or
    for every method as the draft ModelConfig's hf_config override (0.34+ `qwen3_override`, first architecture)."""
    if model_type != "qwen3" or not architectures:
        return False
    if r.has("qwen3_override"):
        return architectures[0] == "DSparkDraftModel"
    return r.has("qwen3_rename") and "DSparkDraftModel" in architectures


@dataclass(frozen=True, slots=True)
class DSparkBuild:
    """The draft's hf_config after method dspark's branch of `__post_init__`."""

    architectures: tuple[str, ...]
    model_type: str | None
    values: Mapping[str, Any]  # the hf_config's attributes, model_type and architectures included
    rule: str | None = None  # the lines.json `spec.` rule that changed it: qwen3_rename (0.34: qwen3_override),
    # deepseek_rewrite (0.34: undeclared_rewrite), ...
    rewritten: tuple[str, ...] | None = None  # the architectures before a DeepSeek-V4 rewrite


def dspark(r: ReleaseRules, architectures: tuple[str, ...], model_type: str | None, values: Mapping[str, Any],
           target_model_type: str | None = None) -> DSparkBuild:
    """A Qwen3-typed DSparkDraftModel becomes Qwen3DSparkModel (0.29+); any architecture the release does not keep
    becomes the DeepSeek-V4(.1) draft that ships inside its target; a Gemma4 draft takes n_predict from block_size
    (0.27-0.30)."""
    if qwen3_renamed(r, architectures, model_type):
        archs = ("Qwen3DSparkModel",)
        rule = "qwen3_rename" if r.has("qwen3_rename") else "qwen3_override"
        return DSparkBuild(archs, model_type, {**values, "architectures": list(archs)}, rule)
    if not any(a in r.dspark_keep for a in architectures):
        v41 = r.dspark_v41 and target_model_type == "deepseek_v41"
        kind, archs = ("deepseek_v41", ("DSparkV41DraftModel",)) if v41 else ("deepseek_v4", ("DSparkDraftModel",))
        rewritten = {**values, "model_type": kind, "architectures": list(archs)}
        if v41:
            rewritten["n_predict"] = values.get("dspark_block_size") or values.get("n_predict")
        rule = "undeclared_rewrite" if r.has("undeclared_rewrite") else "deepseek_rewrite"
        return DSparkBuild(archs, kind, rewritten, rule, architectures)
    if ("Gemma4DSparkModel" in architectures and r.gemma4_n_predict and values.get("n_predict") is None
            and values.get("block_size") is not None):
        return DSparkBuild(architectures, model_type, {**values, "n_predict": values["block_size"]},
                           "gemma4_n_predict")
    return DSparkBuild(architectures, model_type, values)
