"""The analysis facts the per-release config build needs: T recorded by the draft, the declared draft_vocab_size
the tensors contradict, and the facts each release's contract is evaluated on (runtimes/config_build.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dspark_ckpt.formats.vocab_tensors import VocabTensors
from dspark_ckpt.model.classify import VocabKind
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig, honoured_draft_vocab
from dspark_ckpt.model.families import traits
from dspark_ckpt.model.findings import Finding, finding, rule
from dspark_ckpt.model.rule_catalog import Category
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.contracts import nested_weights
from dspark_ckpt.runtimes.records import BuiltConfig, DraftFacts
from dspark_ckpt.runtimes.vllm_rows import BARE_PARAMETERS


def recorded_target(v: VocabTensors) -> TargetVocab | None:
    """T as the draft records it: the length of its t2d (one flag per target id). transformer_layer_config's
    vocab_size is not T: vLLM builds the draft's own input vocabulary V from it."""
    t2d = v.t2d
    if t2d is None or len(t2d.shape) != 1 or t2d.shape[0] <= 0:
        return None
    return TargetVocab(t2d.shape[0], f"length of {t2d.name} in {t2d.file}")


def recorded_target_finding(target: TargetVocab) -> Finding:
    return finding("DSP217", f"T = {target.size} is the {target.source} (no --target given); pass --target DIR "
                             "or --target-vocab-size N to check against the target you deploy.")


def _d_rows(cfg: DraftConfig, v: VocabTensors) -> tuple[int | None, ...]:
    head = v.lm_head.shape[0] if v.lm_head is not None and traits(cfg.family).lm_head_rows == "D" else None
    markov = v.markov_w2.shape[0] if v.markov_w2 is not None and len(v.markov_w2.shape) == 2 else None
    d2t = v.d2t.shape[0] if v.d2t is not None and len(v.d2t.shape) == 1 else None
    return head, markov, d2t


def contradiction(cfg: DraftConfig | None, v: VocabTensors) -> int | None:
    return honoured_draft_vocab(cfg, _d_rows(cfg, v)) if cfg is not None else None


def _explained(code: FindingCode) -> bool:
    """A shape finding sized by draft_vocab_size: a contradicting draft_vocab_size explains it."""
    r = rule(code)
    return r.d_sized and r.category is Category.SHAPE


def contradiction_findings(cfg: DraftConfig, v: VocabTensors, honoured: int,
                           findings: Sequence[Finding]) -> list[Finding]:
    """DSP216 in place of the per-tensor shape findings it explains (each would suggest trimming a tensor)."""
    named = [x.name for x in (v.lm_head, v.markov_w2, v.d2t) if x is not None]
    kept = [f for f in findings if not (_explained(f.code) and f.tensor in named)]
    rows = ", ".join(named)
    found = finding("DSP216", f"draft_vocab_size is {cfg.draft_vocab_size} but {rows} "
                              f"{'has' if len(named) == 1 else 'all have'} {honoured} rows: config.json contradicts "
                              "the tensors, and the runtime sizes them from config.json.", file="config.json")
    return [*kept, found]


def with_build(facts: DraftFacts, builds: tuple[BuiltConfig, ...], raw: Mapping[str, Any] | None,
               v: VocabTensors, tensors: Mapping[str, Any], d2t_targets: list[int] | None, d2t_all_zero: bool,
               kind: VocabKind | None, honoured: int | None) -> DraftFacts:
    """The facts every release's verdict starts from, plus what only some releases' loaders look at."""
    d2t_range = None
    if d2t_targets:
        rows = d2t_targets if kind is VocabKind.PRUNED else d2t_targets[:facts.target_vocab_size]
        d2t_range = (min(rows), max(rows)) if rows else None
    nested = nested_weights(tensors, BARE_PARAMETERS)
    fc = tensors.get("fc.weight")  # EAGLE-3's fc: its shape is checked against what each release builds
    return replace(facts, builds=builds, raw_config=raw, honoured_draft_vocab=honoured, nested_weights=nested,
                   fc_shape=tuple(fc.shape) if fc is not None else None,
                   tensor_shapes=tuple(sorted((n, tuple(t.shape)) for n, t in tensors.items())),
                   d2t_all_zero=d2t_all_zero, d2t_range=d2t_range,
                   t2d_length=v.t2d.shape[0] if v.t2d is not None and len(v.t2d.shape) == 1 else None)
