"""Where a finding points: the file it names, as a path from the working directory or a URI for SARIF."""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from dspark_ckpt.model import runtime_label
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


def fingerprint(code: str, path: str, tensor: str | None, occurrence: int) -> str:
    """Stable across runs and message wording: code, file, tensor, and the n-th such finding (SARIF, GitLab)."""
    key = "\0".join((code, path, tensor or "", str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def runtimes_of(c: CheckpointReport, f: Finding) -> list[str]:
    """The runtime releases whose compatibility entry names the finding's code (a runtime contract's finding)."""
    return [runtime_label.selector(e.runtime, e.version) for e in c.compatibility
            if f.code in (e.error_code, e.first_step_error_code, *e.silent_codes)]
