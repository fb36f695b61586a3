"""What one emulated runtime load leaves, shared by the vLLM loader (runtime_load.py) and SGLang's (sglang_load.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.records import Issue

D2T_PARAM = "draft_id_to_target_id"
LM_HEAD, EMBED = "lm_head.weight", "model.embed_tokens.weight"


class LoadFailure(Exception):
    """What the runtime raises, with the finding code it maps to; `text` is the runtime's own message."""

    def __init__(self, code: FindingCode, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text


@dataclass(slots=True)
class LoadState:
    """The state a runtime's load left: an error, or the loaded parameters and what was shared from the target."""

    contract: Contract
    version: str
    error: Issue | None = None
    params: dict[str, torch.Tensor] = field(default_factory=dict)
    d2t: torch.Tensor | None = None  # the draft_id_to_target_id parameter, None when __init__ made none
    d2t_loaded: bool = False
    head_rows: int = 0  # rows of lm_head the sampler sees (org rows, padding excluded)
    lm_head: str = "none"  # own | target | uninitialised
    embed_tokens: str = "none"
    own: dict[str, bool] = field(default_factory=dict)  # has_own_* flags set from the weight names
    first_step: Issue | None = None  # loaded, then the first draft step failed (SGLang)
    silent: list[Issue] | None = None  # observed by the runtime's own model (SGLang); None: verdicts.py derives them
    sglang_facts: dict[str, bool] = field(default_factory=dict)  # what SGLang's load observed beyond the params
