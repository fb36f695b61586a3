"""Turn a command-line checkpoint argument into a source: a local path, or (later) a Hub repo."""

from __future__ import annotations

from pathlib import Path

from dspark_ckpt.errors import SourceError
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.base import CheckpointSource


def open_source(spec: str, *, config: Path | None = None) -> CheckpointSource:
    path = Path(spec)
    if path.exists() or path.is_symlink():
        return local_source(path, config=config)
    raise SourceError(f"{spec}: no such file or directory", code="DSP-E010",
                      hint="give a checkpoint folder, a .safetensors file (with --config), or org/repo[@rev]")
