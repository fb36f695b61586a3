"""Render a report once with the renderer table, then put it on stdout or atomically into --output."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dspark_ckpt.output.context import Sink
from dspark_ckpt.output.paths import check_destinations
from dspark_ckpt.output.write import (
    PlainSink,
    TextBuffer,
    append_summary_text,
    env_columns,
    make_console,
    plain_width,
    stream_encoding,
    stream_facts,
    write_stdout,
    write_text_atomic,
)


def emit(render: Callable[[Any], None], output: Path | None, color: str,
         summary: Callable[[Sink], None] | None = None, inputs: Sequence[str | Path] = (), *,
         rich: bool = True, plain: Callable[[int], str | None] | None = None) -> None:
    """`rich`: `render` draws rich text and gets a rich console; otherwise it writes its text to a PlainSink (the
    JSON, SARIF, JUnit, ... formats never import rich). `summary` renders the GitHub job summary (markdown, plain),
    appended when GITHUB_STEP_SUMMARY is set; neither it nor `output` may be one of the `inputs` (the checkpoints
    and target being read) or a device, FIFO or folder. `plain(width)`: the same text as `render` draws on a console
    that is no terminal and has no colour, without rich (output/plain_text.py), or None where it needs rich."""
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY") if summary is not None else None
    check_destinations(output, step_summary, inputs)
    buffer = TextBuffer("utf-8" if output is not None else stream_encoding(sys.stdout))
    columns = None if plain is None else plain_width(sys.stdout, color) if output is None else env_columns() or 100
    drawn = plain(columns) if plain is not None and columns is not None else None
    if drawn is not None:
        buffer.write(drawn)
    elif rich:
        terminal, width = stream_facts(sys.stdout) if output is None else (False, env_columns() or 100)
        render(make_console(buffer, color=color if output is None else "never", terminal=terminal, width=width))
    else:
        render(PlainSink(buffer))
    if output is None:
        write_stdout(buffer.getvalue())
    else:
        write_text_atomic(output, buffer.getvalue(), inputs=inputs)
    if summary is not None and step_summary:
        text = io.StringIO()
        summary(PlainSink(text))
        append_summary_text(step_summary, text.getvalue(), inputs=inputs)
