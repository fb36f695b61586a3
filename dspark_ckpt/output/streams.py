"""stdout and stderr as a command sees them: a closed or failing stream is an operational error, a broken pipe the
quiet end of the output (the run goes on to its own exit code), and neither ever reaches the user as a traceback.

main() installs a guard over each stream for the length of a command; every write, whoever makes it (the renderers,
rich, click's help, a bare print), goes through it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final, TextIO

from dspark_ckpt.errors import DsparkCkptError
from dspark_ckpt.output.paths import OutputError

if TYPE_CHECKING:  # a type only: --help and --version load nothing of model/
    from dspark_ckpt.model.codes import ErrorCode

CODES: Final[dict[str, ErrorCode]] = {"stdout": "DSP-E036", "stderr": "DSP-E037"}


class GuardedStream(io.TextIOBase):
    """One of the process's standard streams (None when it was closed at start), with its failures mapped."""

    def __init__(self, real: TextIO | None, name: str) -> None:
        super().__init__()
        self.real = real
        self.name_ = name
        self.broken = False  # the reader went away: the rest of the output is dropped, quietly
        self.failed = False  # the stream failed (closed, full, I/O error): already reported once

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.real, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.real, "errors", None)

    def isatty(self) -> bool:
        try:
            return self.real is not None and not (self.broken or self.failed) and self.real.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self.real is None:
            raise io.UnsupportedOperation(f"{self.name_} is closed")
        return self.real.fileno()

    def writable(self) -> bool:
        return True

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        if self.real is None:
            self._fail(f"{self.name_} is closed")
        try:
            yield
        except BrokenPipeError:
            self.broken = True
            self._silence()
        except (OSError, ValueError) as exc:  # ValueError: a file object closed under us
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._fail(f"cannot write to {self.name_}: {reason}")

    def _fail(self, message: str) -> None:
        self.failed = True
        self._silence()
        raise OutputError(message, code=CODES[self.name_],
                          hint=f"run with {self.name_} open on a writable file, pipe or terminal")

    def _silence(self) -> None:
        """Point the descriptor at /dev/null so nothing buffered fails again when the interpreter exits."""
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            fd = self.real.fileno()  # type: ignore[union-attr]
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes with write(b""): answer as a text stream does
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not text:
            return 0
        if not (self.broken or self.failed):
            with self._guard():
                self.real.write(text)  # type: ignore[union-attr]
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        """Bytes straight to the stream's buffer (utf-8 already), after whatever its text layer holds."""
        if self.broken or self.failed:
            return
        with self._guard():
            assert self.real is not None
            put_bytes(self.real, data)

    def flush(self) -> None:
        if self.real is not None and not (self.broken or self.failed):
            with self._guard():
                self.real.flush()


def install() -> tuple[GuardedStream, GuardedStream]:
    """Guard sys.stdout and sys.stderr for one command (a descriptor closed at start is held by /dev/null, so a
    file opened later can never be written as if it were the stream)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError as exc:
            if exc.errno == errno.EBADF:
                with contextlib.suppress(OSError):
                    os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: this one
    out = sys.stdout if isinstance(sys.stdout, GuardedStream) else GuardedStream(sys.stdout, "stdout")
    err = sys.stderr if isinstance(sys.stderr, GuardedStream) else GuardedStream(sys.stderr, "stderr")
    sys.stdout, sys.stderr = out, err
    return out, err


def say(line: str) -> None:
    """One line on stderr, else on stdout when stderr does not work, else nowhere."""
    for stream in (sys.stderr, sys.stdout):
        if isinstance(stream, GuardedStream) and (stream.failed or stream.broken or stream.real is None):
            continue
        try:
            if isinstance(stream, GuardedStream):
                stream.write_bytes((line + "\n").encode("utf-8", "backslashreplace"))
            elif stream is not None:
                stream.write(line + "\n")
                stream.flush()
            else:
                continue
        except (OutputError, OSError, ValueError):
            continue
        if not (isinstance(stream, GuardedStream) and (stream.failed or stream.broken)):
            return


def report_error(exc: DsparkCkptError, *, hint: bool = True) -> None:
    """The one error printer: `dspark-ckpt: error [CODE]: message` and its hint, a line each (see say()).

    hint=False: a checkpoint of a batch that could not be read, whose report carries the hint (DSP702).
    """
    say(f"dspark-ckpt: error [{exc.code}]: {exc}")
    if hint and exc.hint:
        say(f"hint: {exc.hint}")


def finish() -> OutputError | None:
    """Flush both streams at the end of a command: the first failure, if one happens now."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except OutputError as exc:
            return exc
        except (OSError, ValueError):
            continue
    return None


def put_bytes(real: TextIO, data: bytes) -> None:
    """utf-8 bytes onto a text stream, after whatever its text layer holds: through its buffer where it has one."""
    real.flush()
    buffer = getattr(real, "buffer", None)
    if buffer is None:
        real.write(data.decode("utf-8", "backslashreplace"))
    else:
        buffer.write(data)
    real.flush()
