"""A CheckpointSource held in memory, so fuzzers can drive the whole check without touching the disk."""

from __future__ import annotations

import io
from contextlib import AbstractContextManager
from typing import IO, Any

from dspark_ckpt.sources.base import PathStatus


class MemorySource:
    """Files by name; a name mapped to None is present but unreadable (open and read raise OSError)."""

    def __init__(self, files: dict[str, bytes | None]) -> None:
        self.files = files

    def notes(self) -> list[Any]:
        return []

    @property
    def local_folder(self) -> None:
        return None

    @property
    def display(self) -> str:
        return "memory"

    @property
    def revision(self) -> str | None:
        return None

    def read_text_file(self, name: str) -> bytes | None:
        if name not in self.files:
            return None
        data = self.files[name]
        if data is None:
            raise PermissionError(13, "Permission denied")
        return data

    def safetensors_files(self) -> list[str]:
        return sorted(n for n in self.files if n.endswith(".safetensors") and "/" not in n)

    def status(self, name: str) -> PathStatus:
        if not name or name.startswith("/") or ".." in name.split("/") or "\\" in name:
            return PathStatus.ESCAPES
        if name not in self.files:
            return PathStatus.MISSING
        return PathStatus.OK if self.files[name] is not None else PathStatus.UNREADABLE

    def size(self, name: str) -> int:
        data = self.files[name]
        if data is None:
            raise PermissionError(13, "Permission denied")
        return len(data)

    def open(self, name: str) -> AbstractContextManager[IO[bytes]]:
        data = self.files[name]
        if data is None:
            raise PermissionError(13, "Permission denied")
        return io.BytesIO(data)
