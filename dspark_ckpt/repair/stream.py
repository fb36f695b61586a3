"""Copy byte ranges between files without holding them in memory: the kernel's copy_file_range, else a bounded buffer."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

CHUNK = 8 * 2**20  # the most a buffered copy holds at once
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.EPERM}

Progress = Callable[[int], None]


def _buffered(src: int, offset: int, dst: int, nbytes: int, buf: memoryview) -> int:
    n = os.preadv(src, [buf[: min(len(buf), nbytes)]], offset)
    written = 0
    while written < n:
        written += os.write(dst, buf[written:n])
    return n


def copy_range(src: int, offset: int, dst: int, nbytes: int, progress: Progress | None = None, *,
               kernel: bool = True) -> None:
    """Append src[offset:offset+nbytes] at dst's current position; a row prefix of a tensor is such a range."""
    kernel = kernel and hasattr(os, "copy_file_range")
    buf: memoryview | None = None
    done = 0
    while done < nbytes:
        n = -1
        if kernel:
            try:
                n = os.copy_file_range(src, dst, min(nbytes - done, 2**30), offset + done)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                kernel = False  # another filesystem or an old kernel: go on through the bounded buffer
        if n < 0:
            buf = buf if buf is not None else memoryview(bytearray(min(CHUNK, nbytes - done)))
            n = _buffered(src, offset + done, dst, nbytes - done, buf)
        if n == 0:
            raise OSError(errno.EIO, f"the source ended {nbytes - done} bytes early")
        done += n
        if progress:
            progress(n)
