"""Resolve the target vocabulary T from `--target DIR|config.json` or `--target-vocab-size N`."""

from __future__ import annotations

from pathlib import Path

from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.formats.json_doc import Document, JsonProblem, decode_document, load_document
from dspark_ckpt.model.draft_config import MAX_VOCAB
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.model.target_config import (
    is_qwen3_omni_target,
    target_head_rows,
    target_hidden_size,
    target_text_model_type,
    target_vocab_size,
)

_TARGET_HINT = "--target takes the target model's folder, its config.json, or org/repo[@rev]"


def target_from_document(doc: Document | JsonProblem, where: str) -> TargetVocab:
    """T from a target config read by the one bounded JSON reader; whatever is wrong with it is DSP-E035."""
    if isinstance(doc, JsonProblem):
        raise SourceError(f"target config {where} {doc.message}", code="DSP-E035", hint=_TARGET_HINT)
    cfg = doc.data
    size, path = target_vocab_size(cfg)
    if size is None:
        raise SourceError(f"target config {where} has no positive integer vocab_size"
                          + (f" under {path}" if path else ""), code="DSP-E035",
                          hint="pass --target-vocab-size N")
    return TargetVocab(size, f"{where}:{path + '.' if path else ''}vocab_size", omni=is_qwen3_omni_target(cfg),
                       head_rows=target_head_rows(cfg), hidden=target_hidden_size(cfg),
                       text_model_type=target_text_model_type(cfg))


def target_from_config_bytes(raw: bytes, where: str) -> TargetVocab:
    return target_from_document(decode_document(raw), where)


def local_target(path: Path) -> TargetVocab:
    try:
        config = path / "config.json" if path.is_dir() else path
    except OSError as exc:  # e.g. EACCES on a folder along the way
        raise SourceError(f"cannot read target config {path}: {exc.strerror or exc}", code="DSP-E035",
                          hint=_TARGET_HINT) from exc
    return target_from_document(load_document(config), str(config))


def parse_vocab_size(text: str) -> int:
    """--target-vocab-size as an integer, or DSP-E003 (never click's error echoing a 5,000-digit value whole)."""
    digits = text.strip().removeprefix("+")
    if not digits.isascii() or not digits.isdigit():
        shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text):,} characters)"
        raise UsageError(f"--target-vocab-size must be a positive integer <= 2**40, got {shown}", code="DSP-E003")
    if len(digits.lstrip("0")) > 13:  # 2**40 has 13 digits; int() of more could pass Python's digit limit
        raise UsageError("--target-vocab-size must be a positive integer <= 2**40, got an integer of "
                         f"{len(digits.lstrip('0')):,} digits", code="DSP-E003")
    return int(digits)


def explicit_target(size: int) -> TargetVocab:
    if not 0 < size <= MAX_VOCAB:
        shown = str(size) if len(str(size)) <= 40 else f"an integer of {len(str(size))} digits"
        raise UsageError(f"--target-vocab-size must be a positive integer <= 2**40, got {shown}", code="DSP-E003")
    return TargetVocab(size, "--target-vocab-size")


def resolve_target(target: str | None, target_vocab_size: int | None, *,
                   token: str | None = None) -> TargetVocab | None:
    """T from exactly one of --target / --target-vocab-size, or None when neither is given."""
    if target is not None and target_vocab_size is not None:
        raise UsageError("give --target or --target-vocab-size, not both", code="DSP-E004")
    if target_vocab_size is not None:
        return explicit_target(target_vocab_size)
    if target is not None:
        return hub_or_local_target(target, token)
    return None


def hub_or_local_target(target: str, token: str | None) -> TargetVocab:
    """Local paths first (sources/resolve.py `hub_spec`); an org/repo[@rev] on the Hub fetches only its config.json."""
    from dspark_ckpt.sources.resolve import hub_spec, tried_the_hub

    spec = hub_spec(target, what="target")
    if spec is None:
        return local_target(Path(target))
    from dspark_ckpt.sources.hub import hub_target_config

    try:
        doc, where = hub_target_config(spec, token=token)
    except SourceError as exc:
        raise tried_the_hub(exc, target) from None
    if doc is None:
        raise SourceError(f"target {spec.display} has no config.json", code="DSP-E035", hint=_TARGET_HINT)
    return target_from_document(doc, where)
