"""The one interface the core reads checkpoints through; the core never touches paths or HTTP directly."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

# The names and the path statuses live beneath the readers (formats/names.py); sources hands them on.
from dspark_ckpt.formats.names import CONFIG_NAME as CONFIG_NAME  # noqa: PLC0414 -- explicit re-export
from dspark_ckpt.formats.names import INDEX_NAME as INDEX_NAME  # noqa: PLC0414 -- explicit re-export
from dspark_ckpt.formats.names import MAX_JSON_BYTES as MAX_JSON_BYTES  # noqa: PLC0414 -- explicit re-export
from dspark_ckpt.formats.names import PathStatus as PathStatus  # noqa: PLC0414 -- explicit re-export

if TYPE_CHECKING:
    from dspark_ckpt.model.findings import Finding


def too_large(name: str, size: int) -> OSError:
    return OSError(f"{name} is {size:,} bytes, above the {MAX_JSON_BYTES:,}-byte limit for a JSON file")


class FileChanged(OSError):
    """A file's size, modification time or inode changed between two reads of one check (DSP020)."""


def exists(path: Path) -> bool:
    """Whether a path (or a dangling link) is there; a folder on the way that cannot be searched counts as there,
    so the reader that follows reports it as unreadable instead of this check raising PermissionError."""
    try:
        return path.exists() or path.is_symlink()
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def has_weights(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(e.name == INDEX_NAME or e.name.endswith(".safetensors") for e in entries)
    except OSError:
        return False


def is_checkpoint_folder(folder: Path) -> bool:
    return (folder / CONFIG_NAME).is_file() and has_weights(folder)


def is_container(spec: str) -> bool:
    """An existing folder that holds neither a config.json nor weights: the checkpoints are below it."""
    path = Path(spec)
    try:
        return path.is_dir() and not path.is_symlink() and not (path / CONFIG_NAME).exists() and not has_weights(path)
    except OSError:
        return False


def is_safe_relative(name: str) -> bool:
    """A plain relative path that stays inside its folder: what a checkpoint or a server may name and we may open.

    Not empty, not absolute, no `..` part, no backslash (a Windows separator), no NUL or other control character.
    """
    if not name or name.startswith("/") or "\\" in name or ".." in name.split("/"):
        return False
    return not any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in name)


class CheckpointSource(Protocol):
    @property
    def display(self) -> str:
        """How reports name this checkpoint (a path, or org/repo@sha)."""

    @property
    def revision(self) -> str | None:
        """The pinned commit for remote sources, None for local ones."""

    @property
    def local_folder(self) -> Path | None:
        """The folder on disk holding the files (verify reads tensor data from it); None for remote sources."""

    def read_text_file(self, name: str) -> bytes | None:
        """A small JSON file (config, index) or None when absent. Raises OSError when present but unreadable."""

    def safetensors_files(self) -> list[str]:
        """Every `*.safetensors` file at the top of the checkpoint, sorted."""

    def status(self, name: str) -> PathStatus:
        """Whether a file named by the index (or found) can be read, without reading it."""

    def size(self, name: str) -> int:
        """The file's size in bytes (from metadata, never by reading it)."""

    def open(self, name: str) -> AbstractContextManager[IO[bytes]]:
        """A seekable binary stream; remote sources fetch only the ranges read."""

    def notes(self) -> list[Finding]:
        """What the transport noticed while reading (e.g. DSP701: a server ignored Range); [] for local files."""
