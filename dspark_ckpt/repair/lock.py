"""Readers share, writers exclude: a kernel lock (flock) on the checkpoint folder itself.

A fix that writes the checkpoint (`--in-place`, or finishing an interrupted one) holds it exclusively; a fix that only
reads it (`--out`) holds it shared, so any number of those run at once, and none beside a writer. The kernel drops the lock when the process ends, however it ends, so a killed fix never leaves a stale lock and no
file is written for it (a read-only source can be locked too). Only where the file system has no flock is a pid file
inside the folder used instead (`.dspark-fix.lock`, O_EXCL, broken only when its pid is gone), and there every
fix excludes every other.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dspark_ckpt.errors import RepairError

LOCK_NAME = ".dspark-fix.lock"  # the fallback pid file, inside the checkpoint
EMPTY_LOCK_GRACE_S = 10.0  # a lock file with no pid yet may belong to a writer between open() and write()
_NO_FLOCK = {errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.EBADF, errno.ENOSYS}
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def lock_path(folder: Path) -> Path:
    return folder / LOCK_NAME


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one we may not signal counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _held(folder: Path, pid: int | None, hint: str | None = None) -> RepairError:
    who = f"pid {pid}" if pid else "another process"
    return RepairError(f"another dspark-ckpt fix ({who}) is working on {folder}; nothing was written",
                       code="DSP-E071", hint=hint or "wait for it to finish, then run fix again")


def held_by_writer(folder: Path) -> RepairError:
    """A fix found another's journal under its shared lock: an in-place fix is (or was) writing the folder."""
    return _held(folder, holder(folder), "wait for the in-place fix to finish (or `dspark-ckpt check` the folder to "
                                         "finish an interrupted one), then run fix again")


def _not_a_file(path: Path) -> RepairError:
    return RepairError(f"{path} is in the way of fix's lock: it is not a regular file; nothing was written",
                       code="DSP-E077", hint=f"remove or rename {path} (fix never deletes it for you)")


def flock_holder(fd: int) -> int | None:
    """The pid holding a flock on the same inode as `fd`, from /proc/locks (Linux), for the error message."""
    st = os.fstat(fd)
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and "->" not in parts and parts[5] == device:
            return int(parts[4]) if parts[4].isdigit() else None
    return None


class FixLock:
    """A held lock: the open folder (flock) or the fallback pid file."""

    def __init__(self, folder: Path, fd: int | None, file: Path | None) -> None:
        self.folder, self._fd, self._file = folder, fd, file
        self.kernel = fd is not None  # a flock, which the kernel drops with the process


    def release(self) -> None:
        if self._file is not None and _owner(self._file) == os.getpid():
            self._file.unlink(missing_ok=True)
        if self._fd is not None:
            os.close(self._fd)  # closing the folder drops the flock
        self._fd = self._file = None


def try_lock(folder: Path, *, writable: bool = True, shared: bool = False) -> FixLock | None:
    """Take the lock on `folder`, or None when a live fix holds it (exclusively, or at all when not `shared`).
    `writable`: the fallback may create its file."""
    fd = os.open(folder, _DIR_FLAGS)
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        return FixLock(folder, fd, None)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError as exc:
        os.close(fd)
        if exc.errno not in _NO_FLOCK:
            raise
    if not writable:
        return FixLock(folder, None, None)  # nothing can lock it, and nobody can fix it in place either
    path = lock_path(folder)
    return FixLock(folder, None, path) if acquire_file(path, raise_held=False) else None


def holder(folder: Path) -> int | None:
    """Who holds the lock on `folder` (best effort), for messages."""
    pid = _owner(lock_path(folder))
    if pid is not None:
        return pid
    try:
        fd = os.open(folder, _DIR_FLAGS)
    except OSError:
        return None
    try:
        return flock_holder(fd)
    finally:
        os.close(fd)


@contextmanager
def fix_lock(folder: Path, *, writable: bool = True, shared: bool = False) -> Iterator[FixLock]:
    """Hold the lock on the source checkpoint `folder` for the duration, exclusive or `shared`; DSP-E071 when
    another fix holds it in a way that excludes this one."""
    held = try_lock(folder, writable=writable, shared=shared)
    if held is None:
        raise _held(folder, holder(folder))
    try:
        yield held
    finally:
        held.release()


# --- the fallback pid file (file systems without flock) ---

def _owner(path: Path) -> int | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        pid = json.loads(os.read(fd, 4096)).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    finally:
        os.close(fd)
    return pid if isinstance(pid, int) and pid > 0 else None


def _is_stale(path: Path, pid: int | None) -> bool:
    if pid is not None:
        return not pid_alive(pid)
    try:
        return time.time() - os.lstat(path).st_mtime > EMPTY_LOCK_GRACE_S
    except FileNotFoundError:
        return True


def _regular_or_absent(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_file(path)


def _break(path: Path, stale_pid: int | None) -> None:
    """Move the stale lock aside; if what moved was a fresh lock taken meanwhile, put it back."""
    aside = path.with_name(f"{path.name}.stale-{os.getpid()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    moved = _owner(aside)
    if moved != stale_pid and moved is not None and pid_alive(moved):
        try:
            os.link(aside, path)
        except FileExistsError:
            pass
        os.unlink(aside)
        raise _held(path.parent, moved)
    os.unlink(aside)


def acquire_file(path: Path, *, raise_held: bool = True) -> bool:
    """Create the pid file with O_EXCL. A path that is not a regular file (a folder, a FIFO) is an error, and is
    never opened, renamed or removed."""
    for _ in range(3):
        _regular_or_absent(path)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            pid = _owner(path)
            _regular_or_absent(path)
            if not _is_stale(path, pid):
                if raise_held:
                    raise _held(path.parent, pid) from None
                return False
            _break(path, pid)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"pid": os.getpid(), "started": time.time()}))
            f.flush()
            os.fsync(f.fileno())
        return True
    if raise_held:
        raise _held(path.parent, _owner(path))
    return False
