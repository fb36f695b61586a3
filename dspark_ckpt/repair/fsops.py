"""File-system steps of apply: the crash hook, new files that keep an original's mode and owner, safe opens, fsync."""

from __future__ import annotations

import errno
import os
import signal
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CRASH_ENV = "DSPARK_CKPT_CRASH_AT"  # test-only: kill this process at the named write step
CRASH_SIGNAL_ENV = "DSPARK_CKPT_CRASH_SIGNAL"  # test-only: STOP instead of KILL, to hold a step open
_NEW_FILE = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a FIFO or a device for reading never waits for a writer (S_ISREG is checked right after).
_READ = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class SpecialFile(OSError):
    """A path fix must read is a FIFO, socket or device: it is refused, never read."""


def crash_point(step: str) -> None:
    """Let crash-safety tests kill the process exactly here; a no-op unless the variable names this step."""
    if os.environ.get(CRASH_ENV) != step:
        return
    sig = signal.SIGSTOP if os.environ.get(CRASH_SIGNAL_ENV) == "STOP" else signal.SIGKILL
    os.kill(os.getpid(), sig)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_only(folder: Path) -> bool:
    """No write bit at all counts as read-only even for root, who os.access would always let through."""
    try:
        mode = folder.stat().st_mode
    except OSError:
        return False
    return not (mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) or not os.access(folder, os.W_OK)


@dataclass(frozen=True, slots=True)
class Ownership:
    """Mode bits, owner and group a written file takes from the file it replaces (or a sibling, for a new one)."""

    mode: int
    uid: int
    gid: int

    @classmethod
    def of(cls, st: os.stat_result) -> Ownership:
        return cls(stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)


def keep_ownership(target: int | Path, owner: Ownership | None) -> None:
    """chown where permitted (root, or a group the user is in), then chmod: chown may clear set-id bits."""
    if owner is None:
        return
    chown: Any = os.fchown if isinstance(target, int) else os.chown
    chmod: Any = os.fchmod if isinstance(target, int) else os.chmod
    try:
        chown(target, owner.uid, owner.gid)
    except PermissionError:
        try:
            chown(target, -1, owner.gid)  # the owner cannot be given away, but the group may be kept
        except PermissionError:
            pass
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
    chmod(target, owner.mode)


def create(path: Path) -> int:
    """A new file that did not exist (never follows a link, never opens a FIFO left in its place)."""
    return os.open(path, _NEW_FILE, 0o600)


def open_regular(path: Path | str) -> tuple[int, os.stat_result]:
    """Open for reading without ever blocking; a FIFO, socket or device is refused (SpecialFile)."""
    fd = os.open(path, _READ)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise SpecialFile(errno.EINVAL, "not a regular file", str(path))
    return fd, st


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_file(path: Path, data: bytes, owner: Ownership | None) -> int:
    """Write a complete new file: data, mode and owner, fsync."""
    fd = create(path)
    try:
        write_all(fd, data)
        keep_ownership(fd, owner)
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(data)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C waits until the block ends (the commit, a rollback): it is then raised as usual. Only in the main
    thread, where Python runs signal handlers; elsewhere the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    if not caught or previous is signal.SIG_IGN:
        return
    if callable(previous):
        previous(signal.SIGINT, None)  # the default handler raises KeyboardInterrupt here
    else:
        os.kill(os.getpid(), signal.SIGINT)
