"""Tables as the stream wants them: a rich table on a terminal; elsewhere one record per line, so that grep finds
a row whole (`vllm 0.29.0  no   DSP302: ...`) and a CI log never holds a 900-column box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

Cell = str | Text


class ReportConsole(Console):
    """A console that knows whether the stream its text ends up on is a terminal (the text is rendered into a
    buffer first, and `--color always` forces colour into a pipe, so rich's own is_terminal cannot tell)."""

    def __init__(self, *args: Any, on_terminal: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_terminal = on_terminal


def on_terminal(console: Console) -> bool:
    return console.on_terminal if isinstance(console, ReportConsole) else console.is_terminal


def table(console: Console, title: Cell, columns: Sequence[tuple[str, dict[str, Any]]],
          rows: Sequence[Sequence[Cell]]) -> RenderableType:
    """`columns`: (header, rich add_column keywords). On a terminal a rich table; elsewhere the title, the headers
    and one line per row, every column but the last padded to its widest cell, a cell's lines joined by `; `."""
    if on_terminal(console):
        t = Table(title=title, title_justify="left")
        for header, options in columns:
            t.add_column(header, **options)
        for row in rows:
            t.add_row(*row)
        return t
    cells = [[_one_line(c) for c in row] for row in [[h for h, _ in columns], *rows]]
    widths = [max(row[i].cell_len for row in cells) for i in range(len(columns) - 1)]
    lines: list[RenderableType] = [title if isinstance(title, Text) else Text(title)]
    for n, row in enumerate(cells):
        line = Text(no_wrap=True, overflow="ignore")  # a record is never wrapped, whatever the console's width
        for i, cell in enumerate(row):
            if i < len(widths):
                cell.pad_right(widths[i] - cell.cell_len + 2)
            line.append_text(cell)
        line.rstrip()
        lines.append(Text(line.plain, style="dim") if n == 0 else line)
    return Group(*lines)


def _one_line(cell: Cell) -> Text:
    text = cell.copy() if isinstance(cell, Text) else Text(cell)
    if "\n" in text.plain:
        text = Text("; ").join(text.split("\n"))
    return text
