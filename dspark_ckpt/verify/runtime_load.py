"""Emulate one runtime version's draft load with real tensors: startup checks, load_weights, then target sharing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.families import traits
from dspark_ckpt.runtimes.compatibility import startup_error as config_startup_error
from dspark_ckpt.runtimes.contracts import Contract, Share, Unknown
from dspark_ckpt.runtimes.messages import E_NESTED_WEIGHT, markov_param
from dspark_ckpt.runtimes.records import DraftFacts, Issue
from dspark_ckpt.runtimes.sglang_config import DOMINO_PREFIXES
from dspark_ckpt.verify.load_state import D2T_PARAM, EMBED, LM_HEAD, LoadFailure, LoadState
from dspark_ckpt.verify.runtime_model import Dims, ParamSpec, ParamStore, param_specs
from dspark_ckpt.verify.sglang_load import run_sglang


@dataclass(frozen=True, slots=True)
class Names:
    """How a runtime renames a draft's checkpoint names, and which vocab tensors it ships."""

    renamed: tuple[tuple[str, str | None], ...]  # (checkpoint name, runtime name; None when skipped)
    lm_head: bool
    embed: bool
    d2t: bool
    mask_hidden: bool


def needs_data(name: str) -> bool:
    """The vocab-relevant tensors whose data verify streams to the device; everything else is names only."""
    return any(s in name for s in ("lm_head", "embed_tokens", "d2t", "t2d", "markov_head.", "confidence_head."))


def rename(order: Sequence[str]) -> Names:
    """The renaming loop every supported loader runs (t2d dropped, d2t renamed, `model.` prefixed)."""
    renamed: list[tuple[str, str | None]] = []
    for name in order:
        if "t2d" in name:
            renamed.append((name, None))
        elif "d2t" in name:
            renamed.append((name, name.replace("d2t", D2T_PARAM)))
        else:
            renamed.append((name, name if "lm_head" in name else "model." + name))
    runtime_names = [r for _, r in renamed if r is not None]
    return Names(tuple(renamed), any("lm_head" in r for r in runtime_names),
                 any("embed_tokens" in r for r in runtime_names), any("d2t" in n for n in order),
                 any("mask_hidden" in n for n in order))


def config_time_error(k: Contract, cfg: DraftConfig, dims: Dims) -> Issue | None:
    """Config-time validation is pure configuration, shared with check: no tensor is involved yet."""
    return config_startup_error(k, draft_vocab=dims.draft_vocab, vocab=dims.vocab, target_vocab=dims.target_vocab,
                                mask_token_id=cfg.mask_token_id, topk=cfg.dspark_draft_topk,
                                target_is_omni=dims.target_omni)


def _name_checks(k: Contract, cfg: DraftConfig, dims: Dims, names: Names) -> None:
    """What load_weights raises after its naming loop and before loading anything, in upstream order."""
    d, v, t = dims.draft_vocab, dims.vocab, dims.target_vocab
    if k.mask_hidden_rejected and names.mask_hidden:
        raise LoadFailure("DSP312", k.messages.mask_hidden)
    if k.embed_check and v > t and not names.embed:
        raise LoadFailure("DSP304", k.messages.embed)
    if k.reduced_checks is not None and k.reduced_checks.holds(d, t):
        if not names.lm_head:
            raise LoadFailure("DSP301" if d < t else "DSP306", k.messages.lm_head)
        if not names.d2t:
            raise LoadFailure("DSP302", k.messages.d2t)
    if k.parallel_drafting_needs_mask_hidden and cfg.parallel_drafting and not names.mask_hidden:
        raise LoadFailure("DSP314", k.messages.parallel)
    nested = next((n for n, _ in sorted(names.renamed) if n.endswith(".weight") and n[:-7] in k.bare_parameters),
                  None)
    if nested is not None:  # a bare nn.Parameter (DFlash2's codebooks) cannot take a `.weight` tensor
        raise LoadFailure("DSP331", E_NESTED_WEIGHT.format(name=nested, param=nested.removesuffix(".weight")))


_MODULES: tuple[tuple[str, FindingCode], ...] = (
    ("draft_id_to_target_id", "DSP303"), ("lm_head", "DSP320"), ("model.embed_tokens", "DSP321"),
    ("model.markov_head", "DSP322"), ("model.confidence_head", "DSP328"))
_DOMINO = tuple(f"model.{p.rstrip('.')}" for p in DOMINO_PREFIXES)  # SGLang's Domino projector, as vLLM names it


def _available(specs: dict[str, ParamSpec], prefix: str = "") -> str:
    return "{" + ", ".join(repr(n) for n in sorted(specs) if n.startswith(prefix)) + "}"


def _resolve(k: Contract, dims: Dims, name: str, specs: dict[str, ParamSpec]) -> ParamSpec | None:
    """The parameter a runtime name loads into; None for weights this emulation does not model or the runtime drops."""
    if name in specs:
        return specs[name]
    if name.startswith("model.model."):
        if k.model_prefix_rejected:
            raise LoadFailure("DSP313", f"{k.messages.model_prefix} belonging to model (Qwen3DSparkModel) are: "
                                        f"{_available(specs, 'model.')}")
        return _resolve(k, dims, name[len("model."):], specs)  # check treats these by substring too
    domino = next((p for p in _DOMINO if name.startswith(p + ".")), None)
    if domino is not None and k.stray_heads_class is not None:  # no vLLM release has a Domino projector module
        raise LoadFailure("DSP350", f"{k.messages.stray_head.format(name=domino[6:], cls=k.stray_heads_class, tensor=name[6:])} "
                                    f"{_available(specs, 'model.')}")
    module = next(((m, code) for m, code in _MODULES if name == m or name.startswith(m + ".")), None)
    if module is None:
        return None  # a backbone weight: its loading is not modelled
    prefix, code = module
    if prefix in ("model.markov_head", "model.confidence_head") and not any(s.startswith(prefix) for s in specs):
        head = prefix.removeprefix("model.")
        if k.stray_heads_class is not None and k.family is not None and not traits(k.family).builds(head):
            raise LoadFailure("DSP350", f"{k.messages.stray_head.format(name=head, cls=k.stray_heads_class, tensor=name[6:])} "
                                        f"{_available(specs, 'model.')}")  # DFlash/EAGLE-3 build no such head
        return None  # a head this runtime builds no module for is dropped (e.g. confidence_head when disabled)
    if dims.quantized and prefix != D2T_PARAM and not name.endswith(".weight"):
        return None  # scales/zero points of a quantization_config: not modelled
    if prefix == "model.markov_head" and k.markov_params:  # the vanilla head's own nested loader refuses it
        param = markov_param(name.removeprefix("model."))
        raise LoadFailure("DSP350", f"{k.messages.stray_markov.format(name=param, cls=k.markov_backbone)} "
                                    f"{_available(specs, 'model.markov_head.')}")
    if k.unknown_weights is Unknown.IGNORE:
        return None
    cls = k.model_class
    raise LoadFailure(code, f"There is no module or parameter named '{name}' in {cls}. The available "
                                 f"parameters belonging to  ({cls}) are: {_available(specs)}")


def _init(k: Contract, dims: Dims, store: ParamStore, out: LoadState) -> dict[str, ParamSpec]:
    """`__init__`: the parameter set; draft_id_to_target_id starts as zeros, as upstream creates it."""
    specs = param_specs(k, dims)
    out.head_rows = specs[LM_HEAD].org_rows or 0
    if D2T_PARAM in specs:
        out.d2t = torch.zeros(dims.draft_vocab, dtype=torch.long, device=store.device)
    return specs


def _load_all(k: Contract, dims: Dims, specs: dict[str, ParamSpec], names: Names, tensors: dict[str, torch.Tensor],
              store: ParamStore, out: LoadState) -> None:
    for ckpt, name in names.renamed:
        spec = _resolve(k, dims, name, specs) if name is not None else None
        if spec is None:
            continue
        try:
            out.params[spec.name] = store.load(spec, ckpt, tensors[ckpt])
        except (AssertionError, RuntimeError) as exc:
            raise LoadFailure(spec.code, str(exc) or type(exc).__name__) from exc
    if D2T_PARAM in out.params:
        out.d2t, out.d2t_loaded = out.params[D2T_PARAM], True


def _replaced(policy: Share, own: bool, fits: bool, flagged: bool = False) -> bool:
    """load_*_model: does the target's module replace the draft's?"""
    return {Share.IF_NOT_OWN: not own, Share.IF_NOT_OWN_AND_FITS: not own and fits,
            Share.IF_NOT_OWN_NOR_FLAGGED: not own and not flagged, Share.ALWAYS: True,
            Share.ALWAYS_IF_FITS: fits, Share.NEVER: False}[policy]


def _share(k: Contract, cfg: DraftConfig, dims: Dims, names: Names, out: LoadState) -> None:
    d, v, t = dims.draft_vocab, dims.vocab, dims.target_vocab
    out.own = {"lm_head": names.lm_head, "embed_tokens": names.embed}
    if _replaced(k.lm_head_share, names.lm_head, d == t, cfg.has_own_lm_head_flag):
        out.lm_head = "target"
    else:
        out.lm_head = "own" if LM_HEAD in out.params else "uninitialised"
    if _replaced(k.embed_share, names.embed, v <= t):
        out.embed_tokens = "target"
    else:
        out.embed_tokens = "own" if EMBED in out.params else "uninitialised"


def run_runtime(k: Contract, version: str, cfg: DraftConfig, dims: Dims, order: Sequence[str],
                tensors: dict[str, torch.Tensor], store: ParamStore, *, facts: DraftFacts | None = None) -> LoadState:
    """Startup checks, load_weights (names, vocab checks, weight loaders in checkpoint order), then sharing."""
    if k.sglang is not None:  # SGLang's loaders differ in kind (verify/sglang_load.py); they need check's facts
        assert facts is not None, "SGLang rows are emulated from the analysis' facts"
        return run_sglang(k, version, facts, dims, order, tensors, store)
    out = LoadState(k, version)
    out.error = config_time_error(k, cfg, dims)
    if out.error is not None:
        return out
    specs = _init(k, dims, store, out)
    names = rename(order)
    try:
        _name_checks(k, cfg, dims, names)
        _load_all(k, dims, specs, names, tensors, store, out)
    except LoadFailure as failure:
        out.error = Issue(failure.code, failure.text)
        return out
    _share(k, cfg, dims, names, out)
    return out
