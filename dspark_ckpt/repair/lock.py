"""One fix at a time per destination: an O_EXCL lock file holding the owner's pid, broken only when that pid is gone."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dspark_ckpt.errors import RepairError

EMPTY_LOCK_GRACE_S = 10.0  # a lock file with no pid yet may belong to a writer between open() and write()


def lock_path(dest: Path) -> Path:
    # Beside the destination, not inside it: an in-place fix swaps the folder itself.
    return dest.parent / f".{dest.name}.dspark-fix.lock"


def _owner(path: Path) -> int | None:
    try:
        pid = json.loads(path.read_text()).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 0 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _held(path: Path, pid: int | None) -> RepairError:
    who = f"pid {pid}" if pid else "another process"
    return RepairError(f"another dspark-ckpt fix ({who}) is working on this checkpoint; nothing was written",
                       code="DSP-E071", hint=f"wait for it, or remove {path} if no fix is running")


def _is_stale(path: Path, pid: int | None) -> bool:
    if pid is not None:
        return not _alive(pid)
    try:
        return time.time() - path.stat().st_mtime > EMPTY_LOCK_GRACE_S
    except FileNotFoundError:
        return True


def _break(path: Path, stale_pid: int | None) -> None:
    """Move the stale lock aside; if what moved was a fresh lock taken meanwhile, put it back."""
    aside = path.with_name(f"{path.name}.stale-{os.getpid()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    moved = _owner(aside)
    if moved != stale_pid and moved is not None and _alive(moved):
        try:
            os.link(aside, path)
        except FileExistsError:
            pass
        os.unlink(aside)
        raise _held(path, moved)
    os.unlink(aside)


def acquire(path: Path) -> None:
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            pid = _owner(path)
            if not _is_stale(path, pid):
                raise _held(path, pid) from None
            _break(path, pid)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"pid": os.getpid(), "started": time.time()}))
            f.flush()
            os.fsync(f.fileno())
        return
    raise _held(path, _owner(path))


@contextmanager
def fix_lock(dest: Path) -> Iterator[Path]:
    path = lock_path(dest)
    acquire(path)
    try:
        yield path
    finally:
        if _owner(path) == os.getpid():
            path.unlink(missing_ok=True)
