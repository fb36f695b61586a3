"""What planning reads from a draft (the planner's Situation): a record the planner and the file writer share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dspark_ckpt.check.hints import Named, target_flags
from dspark_ckpt.formats.vocab_tensors import VocabTensors
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.model.tensors import TensorInfo
from dspark_ckpt.repair.stamps import SourceStamp
from dspark_ckpt.runtimes.records import DraftFacts
from dspark_ckpt.runtimes.serving_method import ServingMethod


@dataclass(frozen=True, slots=True)
class Situation:
    """Everything planning needs, read once from the checkpoint; no I/O happens after this."""

    source: str
    facts: DraftFacts | None
    findings: tuple[Finding, ...]
    vocab: VocabTensors
    tensors: dict[str, TensorInfo]
    shard_metadata: dict[str, dict[str, str] | None]
    config: dict[str, Any]
    config_text: str
    index: dict[str, Any] | None
    index_text: str | None
    d2t_all_zero: bool
    t2d_flags: bytes | None  # a t2d usable to rebuild d2t (BOOL, length T, D ids marked), else None
    fingerprints: tuple[SourceStamp, ...] = ()  # what binds a plan to the bytes it was made from (binding.py)
    nested_settings: tuple[tuple[str, str, Any], ...] = ()  # DraftConfig.nested_settings: what hoisting writes
    d2t_broken: bool = False  # a shipped d2t that maps outside [0, T) or out of order (check's DSP402/DSP403)
    # The offsets of a d2t that holds absolute target ids (formats/mapping.absolute_to_offsets), when a t2d, if
    # any, marks the same ids: what offset-d2t writes. Else why it does not apply.
    d2t_offsets: tuple[int, ...] | None = None
    d2t_offsets_why: str = "it ships no d2t"
    target: TargetVocab | None = None  # the resolved target, whole (head_rows, Omni): what the plan is judged against
    named_as: Named | None = None  # the checkpoint and target as the user gave them (None: source and T)
    method: ServingMethod | None = None  # the serving method check's analysis derived (runtimes/serving_method.py)

    @property
    def named(self) -> Named:
        """How the commands a refusal or warning suggests name this checkpoint and its target."""
        return self.named_as or Named(self.source, target_flags(None, self.facts.target_vocab_size if self.facts
                                                                 else None))
