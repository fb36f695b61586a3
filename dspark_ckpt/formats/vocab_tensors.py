"""Pure: find the vocab-relevant tensors by the runtimes' own substring tests and check their shapes and dtypes."""

from __future__ import annotations

from dataclasses import dataclass

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.families import traits
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.model.tensors import TensorInfo

INTEGER_DTYPES = frozenset({"I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64"})


@dataclass(frozen=True, slots=True)
class VocabTensors:
    """The vocabulary-sized tensors found among a checkpoint's headers, each None where absent."""

    lm_head: TensorInfo | None
    embed_tokens: TensorInfo | None
    d2t: TensorInfo | None
    t2d: TensorInfo | None
    markov_w1: TensorInfo | None
    markov_w2: TensorInfo | None
    confidence_weight: TensorInfo | None
    confidence_bias: TensorInfo | None
    has_mask_hidden: bool
    model_prefixed: tuple[str, ...]

    def present(self) -> tuple[TensorInfo, ...]:
        found = (self.lm_head, self.embed_tokens, self.d2t, self.t2d, self.markov_w1, self.markov_w2,
                 self.confidence_weight, self.confidence_bias)
        return tuple(t for t in found if t is not None)


def _pick(tensors: dict[str, TensorInfo], substring: str, preferred: str) -> TensorInfo | None:
    """vLLM tests names by substring; prefer the canonical name when several match."""
    if preferred in tensors:
        return tensors[preferred]
    matches = sorted(n for n in tensors if substring in n)
    return tensors[matches[0]] if matches else None


def _exact_suffix(tensors: dict[str, TensorInfo], suffix: str) -> TensorInfo | None:
    matches = sorted(n for n in tensors if n == suffix or n.endswith("." + suffix))
    return tensors[matches[0]] if matches else None


def find_vocab_tensors(tensors: dict[str, TensorInfo]) -> VocabTensors:
    return VocabTensors(
        lm_head=_pick(tensors, "lm_head", "lm_head.weight"),
        embed_tokens=_pick(tensors, "embed_tokens", "embed_tokens.weight"),
        d2t=_pick(tensors, "d2t", "d2t"),
        t2d=_pick(tensors, "t2d", "t2d"),
        markov_w1=_exact_suffix(tensors, "markov_head.markov_w1.weight"),
        markov_w2=_exact_suffix(tensors, "markov_head.markov_w2.weight"),
        confidence_weight=_exact_suffix(tensors, "confidence_head.proj.weight"),
        confidence_bias=_exact_suffix(tensors, "confidence_head.proj.bias"),
        has_mask_hidden=any("mask_hidden" in n for n in tensors),
        model_prefixed=tuple(sorted(n for n in tensors if n.startswith("model."))),
    )


def _shape_finding(code: FindingCode, info: TensorInfo, expected: tuple[int | None, ...],
                   what: str) -> Finding | None:
    if len(info.shape) == len(expected) and all(e is None or s == e for s, e in zip(info.shape, expected)):
        return None
    want = "[" + ", ".join("?" if e is None else str(e) for e in expected) + "]"
    return finding(code, f"{info.name} is {list(info.shape)}, expected {want} ({what}).",
                   file=info.file, tensor=info.name)


def shape_findings(v: VocabTensors, cfg: DraftConfig, target_vocab_size: int | None) -> list[Finding]:
    d, vocab, h, r = cfg.draft_vocab_size, cfg.vocab_size, cfg.hidden_size, cfg.markov_rank
    family = traits(cfg.family)
    head_rows = vocab if family.lm_head_rows == "V" else d
    checks: list[tuple[FindingCode, TensorInfo | None, tuple[int | None, ...], str]] = [
        ("DSP320", v.lm_head, (head_rows, h), "draft output vocab x hidden_size"),
        ("DSP321", v.embed_tokens, (vocab, h), "vocab_size x hidden_size"),
        ("DSP322", v.markov_w1, (vocab, r), "vocab_size x markov_rank"),
        ("DSP323", v.markov_w2, (d, r), "draft output vocab x markov_rank"),
        ("DSP324", v.d2t, (d,), "one offset per draft id"),
        ("DSP327", v.t2d, (target_vocab_size,), "one flag per target id"),
    ]
    if cfg.enable_confidence_head and h is not None:
        width = h + (r or 0) if cfg.confidence_head_with_markov else h
        checks += [("DSP328", v.confidence_weight, (1, width), "confidence_head.proj.weight"),
                   ("DSP328", v.confidence_bias, (1,), "confidence_head.proj.bias")]
    found = [_shape_finding(code, info, shape, what) for code, info, shape, what in checks if info is not None]
    findings = [f for f in found if f is not None]
    if v.d2t is not None and v.d2t.dtype not in INTEGER_DTYPES:
        findings.append(finding("DSP325", f"{v.d2t.name} is {v.d2t.dtype}; a mapping needs int64.",
                                file=v.d2t.file, tensor=v.d2t.name))
    elif v.d2t is not None and v.d2t.dtype != "I64":
        findings.append(finding("DSP326", f"{v.d2t.name} is {v.d2t.dtype}; runtimes copy it into int64.",
                                file=v.d2t.file, tensor=v.d2t.name))
    if v.t2d is not None and v.t2d.dtype != "BOOL":
        findings.append(finding("DSP327", f"{v.t2d.name} is {v.t2d.dtype}, expected BOOL.",
                                file=v.t2d.file, tensor=v.t2d.name))
    if family.model_prefix_flagged and v.model_prefixed:
        findings.append(finding("DSP313", f"{len(v.model_prefixed)} tensor names start with 'model.' "
                                          f"(e.g. {v.model_prefixed[0]}).", tensor=v.model_prefixed[0]))
    if family.mask_hidden_rejected and v.has_mask_hidden:
        findings.append(finding("DSP312", "the checkpoint ships a mask_hidden weight."))
    return findings
