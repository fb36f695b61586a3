"""Where rendered output goes: stdout, an --output file (atomically), the GitHub job summary; and the consoles.

Pipe-friendly by construction: a stream that is not a terminal is never hard-wrapped (unless COLUMNS asks for a
width), and no line written through here keeps the trailing padding rich puts after table cells and titles.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import IO, TextIO, cast

from rich.console import Console

from dspark_ckpt.errors import DsparkCkptError

UNBOUNDED_WIDTH = 4096  # a pipe's "width": wide enough that no table cell or line is ever wrapped
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)  # padding, then any closing colour codes


class OutputError(DsparkCkptError):
    """The report could not be written where the user asked."""


def trim_lines(text: str) -> str:
    """Drop the spaces at the end of every line (kept: the escape codes that close a colour). The regex runs only
    on lines that can match: scanning a 10 MB line (a hostile config string) char by char costs seconds."""
    return "\n".join(_TRAILING.sub(r"\1", line) if line[-1:] in (" ", "\t", "m") else line
                     for line in text.split("\n"))


def _columns() -> int | None:
    raw = os.environ.get("COLUMNS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def stream_facts(stream: object) -> tuple[bool, int]:
    """(is a terminal, width): a terminal's width (COLUMNS first, as rich does); elsewhere COLUMNS or no limit."""
    probe = Console(file=stream)  # type: ignore[arg-type]
    if probe.is_terminal:
        return True, probe.width
    return False, _columns() or UNBOUNDED_WIDTH


def make_console(file: IO[str], *, color: str, terminal: bool, width: int) -> Console:
    """A console that renders into `file` as it would on the real stream; --color always|never beats NO_COLOR.

    Off a terminal, text is soft-wrapped (each line as long as it is): a pipe to grep sees whole lines.
    """
    soft = not terminal
    if color == "never":
        return Console(file=file, color_system=None, force_terminal=False, width=width, soft_wrap=soft,
                       highlight=False)
    if color == "always":
        return Console(file=file, force_terminal=True, no_color=False, color_system="standard", width=width,
                       soft_wrap=soft, highlight=False)
    return Console(file=file, force_terminal=terminal, width=width, soft_wrap=soft, highlight=False)


class TrimmedStream(io.TextIOBase):
    """A text stream over a real one (stdout, stderr) that trims each complete line; lone surrogates (a hostile
    tensor name) are written escaped rather than crash on encoding."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._pending = ""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        head, newline, self._pending = (self._pending + text).rpartition("\n")
        if newline:
            self._emit(trim_lines(head) + newline)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._emit(self._pending)
            self._pending = ""
        self._stream.flush()

    def _emit(self, text: str) -> None:
        self._stream.flush()  # keep order with anything printed to the text layer before
        buffer = getattr(self._stream, "buffer", None)
        if buffer is None:
            self._stream.write(text)
        else:
            buffer.write(text.encode("utf-8", "backslashreplace"))
        self._stream.flush()


def stdout_console(color: str = "auto") -> Console:
    """A console printing straight to stdout (fix's and rules' text): pipe-friendly, trimmed."""
    terminal, width = stream_facts(sys.stdout)
    stream = cast(IO[str], TrimmedStream(sys.stdout))
    return make_console(stream, color=color, terminal=terminal, width=width)


def stderr_console() -> Console:
    """Messages and notes on stderr: never hard-wrapped, one line each, whatever the stream."""
    terminal, width = stream_facts(sys.stderr)
    return Console(file=cast(IO[str], TrimmedStream(sys.stderr)), force_terminal=terminal, width=width, soft_wrap=True,
                   highlight=False)


def write_stdout(text: str) -> None:
    # A hostile tensor name can hold a lone surrogate; show it escaped rather than crash on encoding.
    sys.stdout.buffer.write(trim_lines(text).encode("utf-8", "backslashreplace"))
    sys.stdout.flush()


def write_atomic(path: Path, text: str) -> None:
    """Temp file in the same folder, fsync, os.replace: a reader sees the old report or the new one, never half."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}", code="DSP-E030") from exc
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # mkstemp makes it 0600; a report is as readable as any file the user writes
        with os.fdopen(fd, "wb") as f:
            f.write(trim_lines(text).encode("utf-8", "backslashreplace"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}", code="DSP-E030") from exc


def append_step_summary(path: str, text: str) -> None:
    """GitHub collects the job summary from a file each step appends to."""
    try:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text + "\n")
    except OSError as exc:
        raise OutputError(f"cannot append to $GITHUB_STEP_SUMMARY ({path}): {exc.strerror or exc}",
                          code="DSP-E031") from exc
