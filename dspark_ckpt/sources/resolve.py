"""Turn a command-line checkpoint argument into a source: an existing local path wins, else a Hub repo id."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.sources.base import CheckpointSource, exists, is_dir
from dspark_ckpt.sources.local import local_source


def open_source(spec: str, *, config: Path | None = None, token: str | None = None) -> CheckpointSource:
    path = Path(spec)
    if exists(path):
        return local_source(path, config=config)
    from dspark_ckpt.sources.hub import open_hub, parse_repo_spec

    repo = parse_repo_spec(spec)
    if repo is not None and _looks_local(spec, path):
        raise SourceError(f"{spec}: no such file or directory", code="DSP-E010",
                          hint=f"{path.parent} exists locally; for the Hub repo write hf://{spec}")
    if repo is None:
        raise SourceError(f"{spec}: no such file or directory, and not a Hub repo id", code="DSP-E010",
                          hint="give a checkpoint folder, a .safetensors file (with --config), or org/repo[@rev]")
    if config is not None:
        raise UsageError("--config only applies to a local .safetensors file", code="DSP-E057",
                         hint="a Hub repo is read with its own config.json")
    return open_hub(repo, token=token)


def _looks_local(spec: str, path: Path) -> bool:
    """`drafts/typo` whose folder `drafts/` exists is a mistyped path, not a repo: fail now, without the network."""
    return not spec.startswith("hf://") and (path.parent != Path(".") and is_dir(path.parent)
                                              or spec.startswith((".", "/", "~")))


def source_notes(source: CheckpointSource) -> tuple[Finding, ...]:
    """What a remote source noticed about the transport (e.g. DSP701), for the checkpoint's findings."""
    return tuple(source.notes())


def with_source_notes(report: CheckpointReport, source: CheckpointSource) -> CheckpointReport:
    extra = source_notes(source)
    return dataclasses.replace(report, findings=report.findings + extra) if extra else report
