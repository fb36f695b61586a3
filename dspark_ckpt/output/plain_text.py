"""The text report off a terminal without colour, written without rich: the same bytes rich lays out there (one
record per table row, output/plain.py; grids at their natural widths), for the common case that nothing wraps.

rich costs ~17 ms of imports, more than the rest of a `check`'s rendering. `render` returns None where rich would
do more than put cells side by side (a grid row wider than the stream, a summary line rich would read as markup
or emoji): the caller then renders through rich as before (tests/unit/test_plain_text.py compares the two).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.escape import terminal
from dspark_ckpt.output.first_screen import MORE, OFF_TERMINAL, checkpoint_lines, long_hint_lines
from dspark_ckpt.output.records import LEGEND, MAX_TEXT_FINDINGS, MAX_TEXT_MESSAGE, summary_line
from dspark_ckpt.output.runs import runs, step_note

if TYPE_CHECKING:
    from dspark_ckpt.model.deploy import Deploy

_KIND_NOTE = {"pruned": "D < T", "equal": "D == T", "padded": "D > T"}
_MARKUP = re.compile(r"\[|:\S*?:")  # what console.print would read in a str as rich markup or an :emoji: code


class _Wraps(Exception):
    """A grid row is wider than the stream: rich would wrap it."""


def cell_len(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len as rich_cell_len  # only rich's width table, not its console

    return rich_cell_len(text)


def _grid(rows: Sequence[tuple[str, str]], padding: int, width: int) -> list[str]:
    """Table.grid(padding=(0, padding)): the first column padded to its widest cell, then the second, whose cell
    may hold several lines (each under the first's blank)."""
    first = max(cell_len(a) for a, _ in rows)
    second = max(cell_len(line) for _, b in rows for line in b.split("\n"))
    if first + padding + second > width:
        raise _Wraps
    out = []
    for a, b in rows:
        for n, line in enumerate(b.split("\n")):
            head = a if n == 0 else ""
            out.append(head + " " * (first - cell_len(head) + padding) + line)  # trailing padding: trim_lines
    return out


def _one_line(cell: str) -> str:
    parts = cell.split("\n")
    if len(parts) > 1 and cell.endswith("\n"):
        parts.pop()
    return "; ".join(parts)


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """output/plain.py `table` off a terminal: the title, the headers and one record per row."""
    cells = [[_one_line(c) for c in row] for row in [list(headers), *rows]]
    widths = [max(cell_len(row[i]) for row in cells) for i in range(len(headers) - 1)]
    lines = [title]
    for row in cells:
        lines.append("".join(c + " " * (widths[i] - cell_len(c) + 2) if i < len(widths) else c
                             for i, c in enumerate(row)).rstrip())
    return lines


def _facts(c: CheckpointReport, width: int) -> list[str]:
    rows = [("family", f"{c.family or 'unknown'} ({c.architecture or 'no architecture'})")]
    target = f"T={c.target_vocab_size} ({c.target_vocab_source})" if c.target_vocab_size else "T=unknown"
    rows.append(("vocab", f"{target}  V={c.input_vocab_size}  D={c.draft_vocab_size}"))
    if c.vocab_kind:
        rows.append(("kind", f"{c.vocab_kind} ({_KIND_NOTE.get(c.vocab_kind, '?')}), input {c.input_kind}"))
    rows.extend(("tensor", f"{t.name}  {t.dtype} {list(t.shape)}  {t.file}") for t in c.tensors)
    if c.revision:
        rows.append(("revision", c.revision))
    return _grid([(label, terminal(value, MAX_TEXT_MESSAGE)) for label, value in rows], 2, width)


def _compatibility(c: CheckpointReport) -> list[str]:
    rows: list[list[str]] = []
    for run in runs(c.compatibility):
        name, e = run.label, run.entry
        if e.error:
            rows.append([name, "no" if e.judged else "no verdict", terminal(f"{e.error_code}: {e.error}")])
        elif e.first_step_error:
            rows.append([name, "1st step", terminal(f"{e.first_step_error_code}: fails at the first draft step: "
                                                    f"{e.first_step_error}")])
        elif e.silent:
            lines = [terminal(f"{code}: {s}") for code, s in zip(e.silent_codes, e.silent)]
            rows.append([name, "yes*", "\n".join(lines + ([note] if (note := step_note(e)) else []))])
        else:
            rows.append([name, "yes", step_note(e) or ""])
    return _table("Compatibility", ("runtime", "loads", "error / silent misbehaviour"), rows)


def _deploy(d: Deploy) -> list[str]:
    title = f"Deploy ({d.source}" + (f", model {d.model})" if d.model else ")")
    rows: list[list[str]] = []
    for r in d.runtimes:
        starts = "no" if r.error else "yes*" if r.notes else "yes"
        codes = ", ".join(dict.fromkeys(([r.error_code] if r.error_code else []) + list(r.note_codes)))
        rows.append([runtime_label.display(r.runtime, r.version), starts, terminal(r.method or "-", 40),
                     terminal(r.model_class or "-", 60), str(r.num_speculative_tokens or "-"),
                     str(r.draft_vocab_size or "-"), codes])
    return _table(terminal(title, 500), ("runtime", "starts", "method", "model class", "tokens", "D", "codes"), rows)


def _findings(c: CheckpointReport, width: int) -> list[str]:
    """output/render.py `_findings`: each finding a one-row grid, then its hint's commands on lines of their own."""
    lines: list[str] = []
    for f in c.findings[:MAX_TEXT_FINDINGS]:
        where = terminal(":".join(p for p in (f.file, f.tensor) if p), 200)
        body = (f"{where}: " if where else "") + terminal(f.message, MAX_TEXT_MESSAGE)
        found: Sequence[str] = ()
        if f.hint:
            said, found = long_hint_lines(f.hint)
            body += f"\nhint: {terminal(said, MAX_TEXT_MESSAGE)}"
        lines += _grid([(f"{f.severity.value:<7} {f.code}", body)], 1, width)
        lines += [" " * 15 + terminal(command, MAX_TEXT_MESSAGE) for command in found]
    if (hidden := len(c.findings) - MAX_TEXT_FINDINGS) > 0:
        counts = ", ".join(f"{n:,} {code}" for code, n in Counter(f.code for f in c.findings[MAX_TEXT_FINDINGS:])
                           .most_common(5))
        lines += _grid([("...", f"and {hidden:,} more findings not shown ({counts}); --format json lists every one")],
                       1, width)
    return lines


def _first_screen(report: Report, ctx: RenderContext | None, *, quiet: bool) -> list[str]:
    """output/render.py `_first_screen` off a terminal: no line longer than OFF_TERMINAL but a command."""
    lines: list[str] = []
    for c in report.checkpoints:
        if quiet and not c.findings:
            continue
        lines += [text for text, _ in checkpoint_lines(c, ctx, OFF_TERMINAL, quiet=quiet, most=MAX_TEXT_FINDINGS)]
        if not quiet:
            lines.append("")
    return lines if quiet else [*lines, MORE]


def _lines(report: Report, ctx: RenderContext | None, width: int) -> list[str]:
    quiet = ctx is not None and ctx.quiet
    long = ctx is None or ctx.verbose
    lines: list[str] = _first_screen(report, ctx, quiet=quiet) if quiet or not long else []
    shown = False
    for c in report.checkpoints if long and not quiet else ():
        lines += [terminal(c.source, 500), *_facts(c, width)]
        if c.compatibility:
            lines += _compatibility(c)
        if c.deploy is not None and c.deploy.runtimes:
            lines += _deploy(c.deploy)
        if not shown and (c.compatibility or c.draft_vocab_size is not None):
            lines.append(LEGEND)
            shown = True
        if c.findings:
            lines += ["Findings", *_findings(c, width)]
        lines.append("")
    summary = summary_line(report, ctx)
    if _MARKUP.search(summary):
        raise _Wraps
    lines.append(summary)
    return lines


def render(report: Report, ctx: RenderContext | None, width: int) -> str | None:
    """What output/render.py's render_text (render_text_quiet with ctx.quiet) prints on a console `width` columns
    wide that is no terminal and has no colour, trailing spaces left out (write.trim_lines drops them there); None
    where that needs rich."""
    try:
        return "\n".join(_lines(report, ctx, width)) + "\n"
    except _Wraps:
        return None
