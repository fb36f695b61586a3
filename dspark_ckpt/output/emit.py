"""Render a report once with the renderer table, then put it on stdout or atomically into --output."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from dspark_ckpt.output.paths import check_destinations
from dspark_ckpt.output.write import (
    TextBuffer,
    append_step_summary,
    env_columns,
    make_console,
    stream_encoding,
    stream_facts,
    write_atomic,
    write_stdout,
)


def emit(render: Callable[[Console], None], output: Path | None, color: str,
         summary: Callable[[Console], None] | None = None, inputs: Sequence[str | Path] = ()) -> None:
    """`summary` renders the GitHub job summary (markdown), appended when GITHUB_STEP_SUMMARY is set; neither it
    nor `output` may be one of the `inputs` (the checkpoints and target being read) or a device, FIFO or folder."""
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY") if summary is not None else None
    check_destinations(output, step_summary, inputs)
    terminal, width = stream_facts(sys.stdout) if output is None else (False, env_columns() or 100)
    buffer = TextBuffer("utf-8" if output is not None else stream_encoding(sys.stdout))
    render(make_console(buffer, color=color if output is None else "never", terminal=terminal, width=width))
    if output is None:
        write_stdout(buffer.getvalue())
    else:
        write_atomic(output, buffer.getvalue(), inputs=inputs)
    if summary is not None and step_summary:
        text = io.StringIO()
        summary(make_console(text, color="never", terminal=False, width=width))
        append_step_summary(step_summary, text.getvalue(), inputs=inputs)
