"""Pure: the speculative method a draft is served with, derived once per checkpoint and handed to every builder.

In order: the deploy's `--speculative-config` `method` (vLLM's `SpeculativeConfig.method`, the deploy preflight's
input too), the producer's own word (a speculators-format config's `speculators_model_type`, which vLLM's conversion
makes the method: transformers_utils/configs/speculators/base.py), else what the architecture's name implies
(vllm_hf_config.implied_method, as before the method was an input). Only a method *named* (the first two) routes a
base-class architecture (`LlamaForCausalLM`) as a draft; one inferred from the name never does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes import speculators, vllm_hf_config

GIVEN = "--speculative-config"
PRODUCER = "the speculators config (speculators_model_type)"
INFERRED = "implied by the architecture's name"


@dataclass(frozen=True, slots=True)
class ServingMethod:
    """The method (vLLM's spelling: eagle, eagle3, dflash, dspark, mtp, draft_model, ...) and who said so."""

    name: str
    given_by: str
    model: str | None = None  # the path vLLM reads the draft from: the speculative config's `model`, else the
    # checkpoint as given (a release's method detection reads its words: vllm_hf_config.served_method)
    tokens: int | None = None  # the speculative config's num_speculative_tokens (a Medusa draft's head count)
    parallel: bool = False  # the speculative config sets `parallel_drafting` (P-EAGLE, PARD): the proposer's flag

    @property
    def named(self) -> bool:
        """Stated by the deploy or the producer, not guessed from the architecture's name."""
        return self.given_by != INFERRED


def speculative_tokens(speculative: Mapping[str, Any] | None) -> int | None:
    """The speculative config's num_speculative_tokens where it is a positive integer (None otherwise: vLLM refuses
    it, DSP8xx, before any head is built)."""
    found = speculative.get("num_speculative_tokens") if speculative is not None else None
    return found if isinstance(found, int) and not isinstance(found, bool) and found > 0 else None


def serving_method(speculative: Mapping[str, Any] | None, raw: Mapping[str, Any] | None,
                   checkpoint: str | None = None) -> ServingMethod:
    """The one derivation: `speculative` the deploy's speculative config (None without one), `raw` config.json,
    `checkpoint` the draft as given (the path vLLM reads where the speculative config names no `model`)."""
    given = speculative.get("method") if speculative is not None else None
    parallel = speculative is not None and speculative.get("parallel_drafting") is True
    if isinstance(given, str) and given:
        model = speculative.get("model") if speculative is not None else None
        return ServingMethod(given, GIVEN, model if isinstance(model, str) and model else checkpoint,
                             speculative_tokens(speculative), parallel)
    if raw is not None and speculators.is_speculators_format(raw):
        declared = raw.get("speculators_model_type")
        if isinstance(declared, str) and declared:
            return ServingMethod(declared, PRODUCER, parallel=parallel)
    archs = raw.get("architectures") if raw is not None else None
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    return ServingMethod(vllm_hf_config.implied_method(arch), INFERRED, parallel=parallel)
