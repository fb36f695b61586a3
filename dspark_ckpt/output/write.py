"""Where rendered output goes: stdout, an --output file (atomically), the GitHub job summary; and the consoles.

Pipe-friendly by construction: a stream that is not a terminal is never hard-wrapped (unless COLUMNS asks for a
width), and no line written through here keeps the trailing padding rich puts after table cells and titles.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO, cast

from dspark_ckpt.output import paths
from dspark_ckpt.output.charset import encode_for, encodes_unicode
from dspark_ckpt.output.paths import OutputError
from dspark_ckpt.output.streams import CODES, GuardedStream, put_bytes

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["OutputError", "PlainSink", "TextBuffer", "append_summary_text", "make_console", "plain_width",
           "stderr_console", "stderr_line", "stdout_console", "stream_encoding",
           "stream_facts", "trim_lines", "write_stdout", "write_text_atomic"]

UNBOUNDED_WIDTH = 4096  # a pipe's "width": wide enough that no table cell or line is ever wrapped
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)  # padding, then any closing colour codes


def trim_lines(text: str) -> str:
    """Drop the spaces at the end of every line (kept: the escape codes that close a colour). The regex runs only
    on lines that can match: scanning a 10 MB line (a hostile config string) char by char costs seconds."""
    return "\n".join(_TRAILING.sub(r"\1", line) if line[-1:] in (" ", "\t", "m") else line
                     for line in text.split("\n"))


def env_columns() -> int | None:
    raw = os.environ.get("COLUMNS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def stream_facts(stream: object) -> tuple[bool, int]:
    """(is a terminal, width): a terminal's width (COLUMNS first, as rich does); elsewhere COLUMNS or no limit."""
    from rich.console import Console

    probe = Console(file=stream)  # type: ignore[arg-type]
    if probe.is_terminal:
        return True, probe.width
    return False, env_columns() or UNBOUNDED_WIDTH


def plain_width(stream: object, color: str) -> int | None:
    """The width rich would give `stream` when it is surely no terminal and the text has no colour (stream_facts
    without loading rich); None where rich must decide: a terminal, --color always, or FORCE_COLOR/TTY_COMPATIBLE
    set (rich reads them)."""
    if color == "always" or "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return None
    isatty = getattr(stream, "isatty", None)
    try:
        if isatty is not None and isatty():
            return None
    except ValueError:  # a closed stream: rich calls it no terminal
        pass
    return env_columns() or UNBOUNDED_WIDTH


def stream_encoding(stream: object) -> str:
    """What a stream can show: `utf-8`, or `ascii` when its encoding cannot encode box drawing and icons."""
    return "utf-8" if encodes_unicode(getattr(stream, "encoding", None)) else "ascii"


class TextBuffer(io.StringIO):
    """A report rendered in memory, carrying the encoding of the stream it is for (rich draws ASCII boxes when that
    is ascii)."""

    def __init__(self, encoding: str = "utf-8") -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


def make_console(file: IO[str], *, color: str, terminal: bool, width: int) -> Console:
    """A console that renders into `file` as it would on the real stream; --color always|never beats NO_COLOR.

    Off a terminal, text is soft-wrapped (each line as long as it is) and tables are one record per line
    (output/plain.py): a pipe to grep sees whole lines.
    """
    from dspark_ckpt.output.plain import ReportConsole

    soft = not terminal
    if color == "never":
        return ReportConsole(file=file, color_system=None, force_terminal=False, width=width, soft_wrap=soft,
                             highlight=False, on_terminal=terminal)
    if color == "always":
        return ReportConsole(file=file, force_terminal=True, no_color=False, color_system="standard", width=width,
                             soft_wrap=soft, highlight=False, on_terminal=terminal)
    return ReportConsole(file=file, force_terminal=terminal, width=width, soft_wrap=soft, highlight=False,
                         on_terminal=terminal)


class PlainSink:
    """What a format that writes its own text (every one but rich text, output/table.py) renders into: the file."""

    __slots__ = ("file",)

    def __init__(self, file: IO[str]) -> None:
        self.file = file


class TrimmedStream(io.TextIOBase):
    """A text stream over a real one (stdout, stderr) that trims each complete line; lone surrogates (a hostile
    tensor name) are written escaped rather than crash on encoding."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._pending = ""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return stream_encoding(self._stream)

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
        write_bytes(self._stream, encode_for(text, self.encoding))  # flushes the text layer first


def stdout_console(color: str = "auto") -> Console:
    """A console printing straight to stdout (fix's and rules' text): pipe-friendly, trimmed."""
    terminal, width = stream_facts(sys.stdout)
    stream = cast(IO[str], TrimmedStream(sys.stdout))
    return make_console(stream, color=color, terminal=terminal, width=width)


def stderr_console() -> Console:
    """Messages and notes on stderr: never hard-wrapped, one line each, whatever the stream."""
    from rich.console import Console

    terminal, width = stream_facts(sys.stderr)
    return Console(file=cast(IO[str], TrimmedStream(sys.stderr)), force_terminal=terminal, width=width, soft_wrap=True,
                   highlight=False)


# The control characters rich's Text drops (rich.control.strip_control_codes), dropped here the same way.
_CONTROL = str.maketrans(dict.fromkeys(map(ord, "\x07\x08\x0b\x0c\x0d")))


def stderr_line(text: str) -> None:
    """One line on stderr, as stderr_console() prints plain text (markup off), without loading rich: a JSON run's
    verdict line."""
    stream = TrimmedStream(sys.stderr)
    stream.write(text.translate(_CONTROL) + "\n")
    stream.flush()


def write_stdout(text: str) -> None:
    # A hostile tensor name can hold a lone surrogate; show it escaped rather than crash on encoding. A stream that
    # cannot encode Unicode gets ASCII (output/charset.py).
    write_bytes(sys.stdout, encode_for(trim_lines(text), stream_encoding(sys.stdout)))


def write_bytes(stream: object, data: bytes) -> None:
    """Through the stream's guard when main() installed one (a closed, full or broken stream handled there)."""
    if isinstance(stream, GuardedStream):
        stream.write_bytes(data)
        return
    if stream is None:
        raise OutputError("the output stream is closed", code=CODES["stdout"])
    put_bytes(cast(TextIO, stream), data)


def write_text_atomic(path: Path, text: str, *, inputs: Iterable[str | Path] = ()) -> None:
    """--output: refused unless a regular file (or nothing) outside the inputs; then temp file, fsync, rename."""
    paths.write_atomic(path, trim_lines(text).encode("utf-8", "backslashreplace"), inputs=inputs)


def append_summary_text(path: str, text: str, *, inputs: Iterable[str | Path] = ()) -> None:
    """GitHub collects the job summary from a file each step appends to."""
    paths.append_step_summary(path, (text + "\n").encode("utf-8", "backslashreplace"), inputs=inputs)
