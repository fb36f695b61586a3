"""Where rendered output goes: stdout, an --output file (atomically), the GitHub job summary; and the console."""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from dspark_ckpt.errors import DsparkCkptError


class OutputError(DsparkCkptError):
    """The report could not be written where the user asked."""


def make_console(file: io.StringIO, *, color: str, terminal: bool, width: int) -> Console:
    """A console that renders into `file` as it would on the real stream; --color always|never beats NO_COLOR."""
    if color == "never":
        return Console(file=file, color_system=None, force_terminal=False, width=width, soft_wrap=False,
                       highlight=False)
    if color == "always":
        return Console(file=file, force_terminal=True, no_color=False, color_system="standard", width=width,
                       soft_wrap=False, highlight=False)
    return Console(file=file, force_terminal=terminal, width=width, soft_wrap=False, highlight=False)


def stream_facts(stream: object) -> tuple[bool, int]:
    """(is a terminal, width) of a real stream as rich sees it (COLUMNS, then the terminal, then 80)."""
    probe = Console(file=stream)  # type: ignore[arg-type]
    return probe.is_terminal, probe.width


def write_stdout(text: str) -> None:
    # A hostile tensor name can hold a lone surrogate; show it escaped rather than crash on encoding.
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
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
            f.write(text.encode("utf-8", "backslashreplace"))
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
