"""Where a finding points: the file it names, as a path from the working directory or a URI for SARIF."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from urllib.parse import quote

from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport

CONFIG = "config.json"


def finding_path(c: CheckpointReport, f: Finding) -> str:
    """The file a finding is about; a finding that names no file is about the checkpoint's config.json."""
    source = PurePosixPath(c.source.replace("\\", "/"))
    if c.source.endswith(".safetensors"):  # a single-file source: its other files are --config or beside it
        return str(source.parent / f.file) if f.file and f.file != CONFIG else str(source)
    return str(source / (f.file or CONFIG))


def relative_to(path: str, root: Path) -> str:
    """A path relative to root when it lies under it; otherwise unchanged (absolute, or a Hub repo id)."""
    p = Path(path)
    if p.is_absolute():
        try:
            return p.relative_to(root.absolute()).as_posix()
        except ValueError:
            return path
    return PurePosixPath(path).as_posix()


def artifact_uri(path: str, root: Path) -> tuple[str, bool]:
    """(uri, is_relative): relative URIs resolve against %SRCROOT%, the working directory."""
    rel = relative_to(path, root)
    if Path(rel).is_absolute():
        return Path(rel).as_uri(), False
    return quote(rel, safe="/"), True
