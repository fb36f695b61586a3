"""Where a report may be written: a regular file (or nothing yet) outside every input, never a device or a FIFO.

The check runs before anything is created, and is repeated on the open file itself where that matters (the step
summary is opened non-blocking, then its kind is checked on the descriptor, so a FIFO can never hang the run).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from dspark_ckpt.errors import DsparkCkptError

if TYPE_CHECKING:  # a type only: --help and --version load nothing of model/
    from dspark_ckpt.model.codes import ErrorCode

MAX_INPUT_FILES = 10_000  # a checkpoint folder holds tens of files; this only bounds a hostile one


class OutputError(DsparkCkptError):
    """The report could not be written where the user asked."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _inputs(inputs: Iterable[str | Path]) -> tuple[list[str], set[tuple[int, int]]]:
    """Each input's real path, and the (device, inode) of every file it holds (a hard link has no other name)."""
    roots: list[str] = []
    inodes: set[tuple[int, int]] = set()
    for given in inputs:
        real = os.path.realpath(given)
        if not os.path.exists(real):
            continue  # a Hub id, or a path that will fail to load on its own
        roots.append(real)
        files = [real] if not os.path.isdir(real) else [os.path.join(real, n) for n in _listing(real)]
        for name in files:
            try:
                st = os.stat(name)
            except OSError:
                continue
            inodes.add((st.st_dev, st.st_ino))
    return roots, inodes


def _listing(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [e.name for _, e in zip(range(MAX_INPUT_FILES), entries, strict=False)]
    except OSError:
        return []


_STREAM_LINKS = ("/proc/", "/dev/fd/", "/dev/stdin", "/dev/stdout", "/dev/stderr")
_KERNEL = ("/proc/", "/sys/")
MAX_LINK_HOPS = 40  # the kernel's own limit on symlinks followed in one lookup


def _through_stream(path: Path) -> str | None:
    """The first link on the way that names a process's descriptor (/dev/stdout -> /proc/self/fd/1): realpath
    would resolve it to whatever that descriptor is open on, a file that is not the report's to replace."""
    here = os.path.abspath(path)
    for _ in range(MAX_LINK_HOPS):
        if here.startswith(_STREAM_LINKS) or os.path.realpath(here).startswith(_KERNEL):
            return here
        parent = os.path.realpath(os.path.dirname(here))
        here = os.path.join(parent, os.path.basename(here))
        if not os.path.islink(here):
            return None
        here = os.path.normpath(os.path.join(parent, os.readlink(here)))
    return None


def _inside(real: str, roots: list[str]) -> str | None:
    for root in roots:
        if real == root or (os.path.isdir(root) and real.startswith(root.rstrip(os.sep) + os.sep)):
            return root
    return None


def writable_target(path: Path, *, what: str, inputs: Iterable[str | Path] = (), code: ErrorCode) -> Path:
    """The real file to replace for `path`, or OutputError: nothing has been touched when it is raised.

    Written: an absent path, a regular file, or a symlink that resolves to one; never inside an input (a
    checkpoint folder or file being read), never a device, FIFO, socket or folder, never through a dangling link.
    """
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        link = None
    except OSError as exc:
        raise OutputError(f"cannot write {what} {path}: {exc.strerror or exc}", code=code) from exc
    if link is not None and stat.S_ISLNK(link.st_mode) and not os.path.exists(path):
        raise OutputError(f"{what} {path} is a symlink to {os.readlink(path)}, which does not exist; nothing was "
                          "written", code="DSP-E034",
                          hint="write to a regular file, or point the link at an existing regular file")
    stream = _through_stream(path)
    if stream is not None:
        raise OutputError(f"{what} {path} leads to {stream}, a process's stream or a kernel file, not a regular "
                          "file; nothing was written", code="DSP-E033",
                          hint="leave the option out to write to stdout, or give the path of a regular file")
    real = os.path.realpath(path)
    try:
        st: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"cannot write {what} {path}: {exc.strerror or exc}", code=code) from exc
    if st is not None and not stat.S_ISREG(st.st_mode):
        shown = path if real == os.path.abspath(path) else f"{path} (-> {real})"
        raise OutputError(f"{what} {shown} is {_kind(st.st_mode)}; only a regular file is written to; nothing was "
                          "written", code="DSP-E033", hint="give the path of a regular file (it is created if "
                                                            "absent); for stdout, leave the option out")
    roots, inodes = _inputs(inputs)
    root = _inside(real, roots)
    if root is not None or (st is not None and (st.st_dev, st.st_ino) in inodes):
        where = root or "a hard link to one of its files"
        raise OutputError(f"{what} {path} is part of the checkpoint being read ({where}); nothing was written",
                          code="DSP-E032",
                          hint="write the report outside the checkpoint folder")
    return Path(real)


def check_destinations(output: Path | None, step_summary: str | None, inputs: Iterable[str | Path]) -> None:
    """Both of a run's report files refused or accepted before either is written."""
    inputs = tuple(inputs)
    if output is not None:
        writable_target(output, what="--output", inputs=inputs, code="DSP-E030")
    if step_summary:
        writable_target(Path(step_summary), what="$GITHUB_STEP_SUMMARY", inputs=inputs, code="DSP-E031")


def check_report_files(files: Iterable[Path], inputs: Iterable[str | Path]) -> None:
    """Every `--report FORMAT=FILE` file refused or accepted, as --output is, before any report is written."""
    inputs = tuple(inputs)
    for file in files:
        writable_target(file, what="--report", inputs=inputs, code="DSP-E030")


def open_for_append(path: Path, *, what: str, inputs: Iterable[str | Path] = (), code: ErrorCode) -> int:
    """An fd appending to `path` (created if absent) after writable_target's checks, opened without blocking."""
    real = writable_target(path, what=what, inputs=inputs, code=code)
    try:
        fd = os.open(real, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise OutputError(f"cannot append to {what} ({path}): {exc.strerror or exc}", code=code) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # swapped in since the check
        os.close(fd)
        raise OutputError(f"{what} {path} is {_kind(mode)}; nothing was written", code="DSP-E033")
    os.set_blocking(fd, True)
    return fd


def write_atomic(path: Path, data: bytes, *, what: str = "--output", inputs: Iterable[str | Path] = ()) -> None:
    """Temp file beside the real target, fsync, os.replace: a reader sees the old report or the new one, never half.

    A symlink to a regular file outside the inputs is written through (the link stays, its file is replaced).
    """
    real = writable_target(path, what=what, inputs=inputs, code="DSP-E030")
    folder = real.parent
    try:  # `-o results/x.sarif`: the folder is made, as the Action's script makes it (issue 41)
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: cannot create {folder}: {exc.strerror or exc}",
                          code="DSP-E030") from exc
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}", code="DSP-E030") from exc
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # mkstemp makes it 0600; a report is as readable as any file the user writes
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}", code="DSP-E030") from exc


def append_step_summary(path: str, data: bytes, *, inputs: Iterable[str | Path] = ()) -> None:
    """GitHub collects the job summary from a file each step appends to; only a regular file is appended to."""
    fd = open_for_append(Path(path), what="$GITHUB_STEP_SUMMARY", inputs=inputs, code="DSP-E031")
    try:
        with os.fdopen(fd, "ab") as f:
            f.write(data)
    except OSError as exc:
        raise OutputError(f"cannot append to $GITHUB_STEP_SUMMARY ({path}): {exc.strerror or exc}",
                          code="DSP-E031") from exc
