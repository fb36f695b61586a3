"""Turn a command-line checkpoint argument into a source: an existing local path wins, else a Hub repo id."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.sources.base import CheckpointSource, exists, is_dir
from dspark_ckpt.sources.local import local_source

if TYPE_CHECKING:
    from dspark_ckpt.sources.hub import RepoSpec


# A name shaped like a file or a nested path is a local path even when it does not exist: never a Hub repo id.
_FILE_SUFFIXES = (".json", ".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt", ".onnx", ".txt", ".yaml")


def hub_spec(spec: str, *, what: str = "checkpoint") -> RepoSpec | None:
    """Local paths first: None for an existing path; the RepoSpec of an unambiguous Hub repo id (`org/repo[@rev]`,
    or anything after hf://); and for a missing name shaped like a local path (`./x`, `~/x`, `a/b/`, `x.json`,
    or `drafts/typo` whose `drafts/` exists here) a DSP-E010 at once, without the network."""
    path = Path(spec)
    if exists(path):
        return None
    from dspark_ckpt.sources.hub import parse_repo_spec

    repo = parse_repo_spec(spec)
    if repo is not None and not _looks_local(spec, path):
        return repo
    if repo is not None:
        raise SourceError(f"{spec}: no such file or directory", code="DSP-E010",
                          hint=f"{path.parent}/ exists here, so {spec} was taken for a local path; for the Hub repo "
                               f"write hf://{spec}")
    raise SourceError(f"{spec}: no such file or directory, and not a Hub repo id", code="DSP-E010",
                      hint=_HINTS.get(what, _HINTS["checkpoint"]))


_HINTS = {"checkpoint": "give a checkpoint folder, a .safetensors file (with --config), or org/repo[@rev]",
          "target": "give the target's folder, its config.json, or org/repo[@rev] (or --target-vocab-size N)"}


def tried_the_hub(exc: SourceError, spec: str) -> SourceError:
    """The Hub's error for a name that is no local path: say that both were tried."""
    if spec.startswith("hf://"):
        return exc
    return SourceError(f"{spec} is no local path, so the Hub was asked: {exc}", code=exc.code, hint=exc.hint)


def open_source(spec: str, *, config: Path | None = None, token: str | None = None) -> CheckpointSource:
    repo = hub_spec(spec)
    if repo is None:
        return local_source(Path(spec), config=config)
    if config is not None:
        raise UsageError("--config only applies to a local .safetensors file", code="DSP-E057",
                         hint="a Hub repo is read with its own config.json")
    from dspark_ckpt.sources.hub import open_hub

    try:
        return open_hub(repo, token=token)
    except SourceError as exc:
        raise tried_the_hub(exc, spec) from None


def _looks_local(spec: str, path: Path) -> bool:
    """`drafts/typo` whose folder `drafts/` exists is a mistyped path, not a repo: fail now, without the network."""
    if spec.startswith("hf://"):
        return False
    return (spec.startswith((".", "/", "~")) or spec.endswith(("/", "\\")) or "\\" in spec
            or path.suffix.lower() in _FILE_SUFFIXES or (path.parent != Path(".") and is_dir(path.parent)))


def source_notes(source: CheckpointSource) -> tuple[Finding, ...]:
    """What a remote source noticed about the transport (e.g. DSP701), for the checkpoint's findings."""
    return tuple(source.notes())


def with_source_notes(report: CheckpointReport, source: CheckpointSource) -> CheckpointReport:
    extra = source_notes(source)
    return dataclasses.replace(report, findings=report.findings + extra) if extra else report
