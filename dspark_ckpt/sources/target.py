"""Resolve the target vocabulary T from `--target DIR|config.json` or `--target-vocab-size N`."""

from __future__ import annotations

import json
from pathlib import Path

from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.model.draft_config import MAX_VOCAB
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.model.target_config import is_qwen3_omni_target, target_vocab_size


def target_from_config_bytes(raw: bytes, where: str) -> TargetVocab:
    try:
        cfg = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise SourceError(f"target config {where} is not valid JSON ({exc.__class__.__name__})",
                          code="DSP-E035") from exc
    if not isinstance(cfg, dict):
        raise SourceError(f"target config {where} is not a JSON object", code="DSP-E035")
    size, path = target_vocab_size(cfg)
    if size is None:
        raise SourceError(f"target config {where} has no positive integer vocab_size"
                          + (f" under {path}" if path else ""), code="DSP-E035",
                          hint="pass --target-vocab-size N")
    return TargetVocab(size, f"{where}:{path + '.' if path else ''}vocab_size", omni=is_qwen3_omni_target(cfg))


def local_target(path: Path) -> TargetVocab:
    config = path / "config.json" if path.is_dir() else path
    try:
        raw = config.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read target config {config}: {exc.strerror or exc}", code="DSP-E035",
                          hint="--target takes the target model's folder or its config.json") from exc
    return target_from_config_bytes(raw, str(config))


def explicit_target(size: int) -> TargetVocab:
    if not 0 < size <= MAX_VOCAB:
        raise UsageError(f"--target-vocab-size must be a positive integer <= 2**40, got {size}", code="DSP-E003")
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
    """An existing path wins; otherwise an org/repo[@rev] on the Hub (only its config.json is fetched)."""
    path = Path(target)
    if not (path.exists() or path.is_symlink()):
        from dspark_ckpt.sources.hub import hub_target_config, parse_repo_spec

        spec = parse_repo_spec(target)
        if spec is not None:
            return target_from_config_bytes(*hub_target_config(spec, token=token))
    return local_target(path)
