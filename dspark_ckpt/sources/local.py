"""Local checkpoints: a folder (single, sharded or any *.safetensors set) or one file with a separate config."""

from __future__ import annotations

import errno
import os
import re
import stat
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath
from typing import IO

from dspark_ckpt.formats.json_doc import read_bounded
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.sources.base import CONFIG_NAME, FileChanged, PathStatus, is_dir, is_file, is_safe_relative

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
        self._seen: dict[str, tuple[int, int, int, int]] = {}  # name -> identity at first look (see _same_file)
        self._texts: dict[str, bytes] = {}  # name -> the bytes read (config.json, the index)

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
            return read_bounded(self._config)
        if self._only is not None and name != CONFIG_NAME:
            return None
        path = self.folder / name
        if not path.exists() and not path.is_symlink():  # an unsearchable folder raises PermissionError: unreadable
            return None
        if self.status(name) is PathStatus.ESCAPES:
            raise PermissionError(f"{name} is a link that leaves the checkpoint folder")
        raw = read_bounded(path)  # stat-checked on the open descriptor: a FIFO or /dev/zero is refused, not read
        self._texts[name] = raw
        return raw

    def identity_read(self, name: str) -> tuple[int, int, int, int] | None:
        """(device, inode, size, mtime_ns) of the file every read of `name` went through (None: never opened)."""
        return self._seen.get(name)

    def text_read(self, name: str) -> bytes | None:
        """The bytes `read_text_file(name)` returned (None: not read, or absent)."""
        return self._texts.get(name)

    def safetensors_files(self) -> list[str]:
        if self._only is not None:
            return [self._only]
        try:
            return sorted(p.name for p in self.folder.iterdir() if p.name.endswith(".safetensors"))
        except OSError:
            return []

    def status(self, name: str) -> PathStatus:
        if not is_safe_relative(name) or os.path.isabs(name):
            return PathStatus.ESCAPES
        try:
            return self._status(self.folder / PurePosixPath(name))
        except OSError:  # e.g. EACCES on a folder along the way: it exists, but cannot be read
            return PathStatus.UNREADABLE

    def _status(self, path: Path) -> PathStatus:
        if not path.exists() and not path.is_symlink():
            return PathStatus.MISSING
        try:
            real = path.resolve(strict=True)
        except (FileNotFoundError, RuntimeError):
            return PathStatus.MISSING  # a dangling link (RuntimeError: a loop, before Python 3.13)
        except OSError as exc:
            return PathStatus.MISSING if exc.errno == errno.ELOOP else PathStatus.UNREADABLE
        if not any(real == root or root in real.parents for root in self._allowed):
            return PathStatus.ESCAPES
        if not real.is_file():
            return PathStatus.NOT_A_FILE
        if not os.access(real, os.R_OK):
            return PathStatus.UNREADABLE
        return PathStatus.OK

    def size(self, name: str) -> int:
        info = (self.folder / name).stat()
        self._same_file(name, info)
        return info.st_size

    def open(self, name: str) -> AbstractContextManager[IO[bytes]]:
        """Opened without blocking and checked on the descriptor: a FIFO swapped in after `status` is refused,
        not waited on; a file that is no longer the one first seen raises FileChanged."""
        fd = os.open(self.folder / name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(f"{name} is not a regular file")
            self._same_file(name, info)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def _same_file(self, name: str, info: os.stat_result) -> None:
        """The first look at a file records what it was; a later one that finds another file raises FileChanged."""
        identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        first = self._seen.setdefault(name, identity)
        if first != identity:
            raise FileChanged(f"{name} changed while it was being checked (its size, modification time or inode "
                              "differ from the first read)")


def local_source(path: Path, *, config: Path | None = None) -> LocalFolder:
    """A folder, or a single `.safetensors` file whose config comes from `--config` (or sits beside it)."""
    if is_file(path) or path.suffix == ".safetensors" and not is_dir(path):
        beside = path.parent / CONFIG_NAME
        return LocalFolder(path.parent, only=path.name, config=config or (beside if is_file(beside) else None))
    return LocalFolder(path, config=config)
