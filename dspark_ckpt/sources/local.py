"""Local checkpoints: a folder (single, sharded or any *.safetensors set) or one file with a separate config."""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath
from typing import IO

from dspark_ckpt.model.findings import Finding
from dspark_ckpt.sources.base import CONFIG_NAME, MAX_JSON_BYTES, PathStatus, too_large

_HF_SNAPSHOT = re.compile(r"^models--[^/]+$")


def hf_cache_blobs(folder: Path) -> Path | None:
    """The blobs folder that an HF cache snapshot (`.../models--org--name/snapshots/<sha>`) links into."""
    if folder.parent.name == "snapshots" and _HF_SNAPSHOT.match(folder.parent.parent.name):
        return folder.parent.parent / "blobs"
    return None


def is_in_hf_cache(path: Path) -> bool:
    path = path.absolute()
    return any(hf_cache_blobs(p) is not None for p in (path, *path.parents))


class LocalFolder:
    """A checkpoint folder. Files must stay inside it (or, for an HF cache snapshot, in its blobs)."""

    def __init__(self, folder: Path, *, only: str | None = None, config: Path | None = None) -> None:
        self.folder = folder
        self._only = only  # a single-file source exposes just this file
        self._config = config
        root = folder.resolve()
        blobs = hf_cache_blobs(folder.absolute())
        self._allowed = (root,) + ((blobs.resolve(),) if blobs is not None else ())

    def notes(self) -> list[Finding]:
        return []

    @property
    def local_folder(self) -> Path | None:
        return self.folder

    @property
    def display(self) -> str:
        return str(self.folder / self._only) if self._only else str(self.folder)

    @property
    def revision(self) -> str | None:
        return None

    def read_text_file(self, name: str) -> bytes | None:
        if name == CONFIG_NAME and self._config is not None:
            return self._config.read_bytes()
        if self._only is not None and name != CONFIG_NAME:
            return None
        path = self.folder / name
        if not path.exists() and not path.is_symlink():
            return None
        if self.status(name) is PathStatus.ESCAPES:
            raise PermissionError(f"{name} is a link that leaves the checkpoint folder")
        if path.exists() and not path.is_file() and not path.is_dir():  # a FIFO or device: reading it may block
            raise OSError(f"{name} is not a regular file")
        if path.is_file() and (size := path.stat().st_size) > MAX_JSON_BYTES:
            raise too_large(name, size)
        return path.read_bytes()

    def safetensors_files(self) -> list[str]:
        if self._only is not None:
            return [self._only]
        try:
            return sorted(p.name for p in self.folder.iterdir() if p.name.endswith(".safetensors"))
        except OSError:
            return []

    def status(self, name: str) -> PathStatus:
        pure = PurePosixPath(name)
        if not name or pure.is_absolute() or os.path.isabs(name) or ".." in pure.parts or "\\" in name:
            return PathStatus.ESCAPES
        path = self.folder / pure
        if not path.exists() and not path.is_symlink():
            return PathStatus.MISSING
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return PathStatus.MISSING  # a dangling or looping link
        if not any(real == root or root in real.parents for root in self._allowed):
            return PathStatus.ESCAPES
        if not real.is_file():
            return PathStatus.NOT_A_FILE
        if not os.access(real, os.R_OK):
            return PathStatus.UNREADABLE
        return PathStatus.OK

    def size(self, name: str) -> int:
        return (self.folder / name).stat().st_size

    def open(self, name: str) -> AbstractContextManager[IO[bytes]]:
        return open(self.folder / name, "rb")


def local_source(path: Path, *, config: Path | None = None) -> LocalFolder:
    """A folder, or a single `.safetensors` file whose config comes from `--config` (or sits beside it)."""
    if path.is_file() or path.suffix == ".safetensors" and not path.is_dir():
        beside = path.parent / CONFIG_NAME
        return LocalFolder(path.parent, only=path.name, config=config or (beside if beside.is_file() else None))
    return LocalFolder(path, config=config)
