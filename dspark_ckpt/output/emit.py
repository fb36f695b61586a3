"""Render a report once with the renderer table, then put it on stdout or atomically into --output."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from dspark_ckpt.output.write import (
    append_step_summary,
    make_console,
    stream_facts,
    write_atomic,
    write_stdout,
)


def emit(render: Callable[[Console], None], output: Path | None, color: str,
         summary: Callable[[Console], None] | None = None) -> None:
    """`summary` renders the GitHub job summary (markdown), appended when GITHUB_STEP_SUMMARY is set."""
    terminal, width = stream_facts(sys.stdout) if output is None else (False, int(os.environ.get("COLUMNS", "100")))
    buffer = io.StringIO()
    render(make_console(buffer, color=color if output is None else "never", terminal=terminal, width=width))
    if output is None:
        write_stdout(buffer.getvalue())
    else:
        write_atomic(output, buffer.getvalue())
    if summary is not None and os.environ.get("GITHUB_STEP_SUMMARY"):
        text = io.StringIO()
        summary(make_console(text, color="never", terminal=False, width=width))
        append_step_summary(os.environ["GITHUB_STEP_SUMMARY"], text.getvalue())
