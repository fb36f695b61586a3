"""File-system steps of apply: the crash hook, atomic file writes, fsync of folders, and the atomic folder swap."""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import stat
from pathlib import Path

CRASH_ENV = "DSPARK_CKPT_CRASH_AT"  # test-only: kill this process at the named write step
CRASH_SIGNAL_ENV = "DSPARK_CKPT_CRASH_SIGNAL"  # test-only: STOP instead of KILL, to hold a step open
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


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


def open_temp(folder: Path, name: str) -> tuple[int, Path]:
    """A new temporary file in the destination folder, so the final os.replace never crosses a file system."""
    tmp = folder / f".{name}.tmp-{os.getpid()}"
    return os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644), tmp


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def atomic_text(folder: Path, name: str, text: str) -> int:
    data = text.encode("utf-8")
    fd, tmp = open_temp(folder, name)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    crash_point(f"temp:{name}")
    os.replace(tmp, folder / name)
    crash_point(f"replace:{name}")
    return len(data)


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))
