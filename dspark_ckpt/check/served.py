"""Pure: the draft as the serving method routes it. A base-class architecture (`LlamaForCausalLM`) served with a
named method is the draft class vLLM's EAGLEConfig renames it to (runtimes/vllm_hf_config.rename), so its family's
contract applies and "unknown family" (DSP203) is not said; without a named method nothing changes."""

from __future__ import annotations

from dataclasses import replace

from dspark_ckpt.check.load import Loaded
from dspark_ckpt.model.families import family_for
from dspark_ckpt.runtimes.serving_method import ServingMethod
from dspark_ckpt.runtimes.vllm_hf_config import EAGLE_METHODS, rename


def served_config(loaded: Loaded, method: ServingMethod) -> Loaded:
    cfg = loaded.config
    if cfg is None or cfg.family is not None or cfg.architecture is None or not method.named \
            or method.name not in EAGLE_METHODS:
        return loaded
    family = family_for(rename(cfg.architecture, method.name), cfg.model_type)
    if family is None:
        return loaded
    return replace(loaded, config=replace(cfg, family=family),
                   findings=[f for f in loaded.findings if f.code != "DSP203"])
