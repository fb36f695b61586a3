"""The report model: what a check found for each checkpoint, as frozen data that renderers turn into text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.tensors import TensorInfo

if TYPE_CHECKING:
    from dspark_ckpt.model.deploy import Deploy


@dataclass(frozen=True, slots=True)
class FixState:
    """One runtime's verdict before or after the repair (what check says, or would say, about it):
    repair/ predicts it, output/ renders it."""

    loads: bool
    error_code: FindingCode | None
    silent_codes: tuple[FindingCode, ...]


@dataclass(frozen=True, slots=True)
class Compatibility:
    """One runtime version's outcome as every report publishes it (runtimes.compatibility.Verdict's form)."""

    runtime: str
    version: str
    loads: bool
    error: str | None
    error_code: FindingCode | None
    silent: tuple[str, ...]
    silent_codes: tuple[FindingCode, ...]
    verbatim: bool  # False where `error` is dspark-ckpt's description rather than the runtime's own text
    source: str
    first_step_error: str | None = None  # it loads, then fails at the first draft step (SGLang; CUDA-graph capture)
    first_step_error_code: FindingCode | None = None
    first_step_verbatim: bool = True
    # it loads, and no execution of the release's step vouches for its first step: the registered reason
    # (runtimes/step_reasons.py REASONS key) and its words; not a failure
    first_step_not_modelled_why: str | None = None
    first_step_not_modelled: str | None = None

    @property
    def first_step(self) -> str | None:
        """fails | ran | not_modelled for a row that loads; None where it does not load or was not judged."""
        if not self.judged or not self.loads:
            return None
        if self.first_step_error is not None:
            return "fails"
        return "not_modelled" if self.first_step_not_modelled_why is not None else "ran"

    @property
    def judged(self) -> bool:
        """False for a release dspark-ckpt could not judge: its row says "no verdict" and why (DSP368)."""
        return self.error_code != "DSP368"

    @property
    def loads_or_none(self) -> bool | None:
        """`loads` as the documents publish it: null where the release was not judged."""
        return self.loads if self.judged else None


@dataclass(frozen=True, slots=True)
class CheckpointReport:
    """What a check found for one checkpoint: its facts, each runtime's outcome and the findings."""

    source: str
    revision: str | None
    family: str | None
    architecture: str | None
    draft_vocab_size: int | None
    input_vocab_size: int | None
    target_vocab_size: int | None
    target_vocab_source: str | None
    vocab_kind: str | None
    input_kind: str | None
    hidden_size: int | None
    tensors: tuple[TensorInfo, ...]
    compatibility: tuple[Compatibility, ...]
    findings: tuple[Finding, ...]
    shards: int = 0
    deploy: Deploy | None = None  # with --speculative-config (or the settings key), for the checkpoint it names
    is_checkpoint: bool = True  # False: neither a config.json nor any weights (check/load.py's Loaded.empty)

    def at_or_above(self, severity: Severity) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity.rank >= severity.rank)


@dataclass(frozen=True, slots=True)
class Report:
    """Every checkpoint's report of one run, and the runtime selectors it evaluated."""

    checkpoints: tuple[CheckpointReport, ...]
    runtimes: tuple[str, ...] = field(default=())  # the runtime selectors evaluated, e.g. ("vllm==0.29.0",)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for c in self.checkpoints for f in c.findings)
