"""Report -> text (rich) | json; the other formats live in renderers/. Renderers never decide pass or fail."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.findings import Severity
from dspark_ckpt.model.report import CheckpointReport, Compatibility, Report
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.escape import terminal
from dspark_ckpt.output.first_screen import MORE, OFF_TERMINAL, checkpoint_lines, long_hint_lines
from dspark_ckpt.output.plain import on_terminal, table
from dspark_ckpt.output.records import LEGEND, MAX_TEXT_FINDINGS, MAX_TEXT_MESSAGE, summary_line
from dspark_ckpt.output.runs import runs, step_note

if TYPE_CHECKING:
    from dspark_ckpt.model.deploy import Deploy

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_KIND_NOTE = {"pruned": "D < T", "equal": "D == T", "padded": "D > T"}
COMMAND_INDENT = " " * 15  # under a finding's message: `warning DSP305 ` is 15 columns


def _facts(c: CheckpointReport) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")

    def row(label: str, value: str) -> None:  # Text: a value from the checkpoint is never read as rich markup
        grid.add_row(label, Text(terminal(value, MAX_TEXT_MESSAGE)))

    row("family", f"{c.family or 'unknown'} ({c.architecture or 'no architecture'})")
    target = f"T={c.target_vocab_size} ({c.target_vocab_source})" if c.target_vocab_size else "T=unknown"
    row("vocab", f"{target}  V={c.input_vocab_size}  D={c.draft_vocab_size}")
    if c.vocab_kind:
        row("kind", f"{c.vocab_kind} ({_KIND_NOTE.get(c.vocab_kind, '?')}), input {c.input_kind}")
    for t in c.tensors:
        row("tensor", f"{t.name}  {t.dtype} {list(t.shape)}  {t.file}")
    if c.revision:
        row("revision", c.revision)
    return grid


def _noted(e: Compatibility) -> list[str]:
    note = step_note(e)
    return [note] if note else []


def _compatibility(c: CheckpointReport, console: Console) -> RenderableType:
    rows: list[list[str | Text]] = []
    for run in runs(c.compatibility):  # consecutive SGLang releases with one verdict share a row
        name, e = run.label, run.entry
        if not e.judged:
            rows.append([name, Text("no verdict", style="bold red"), Text(terminal(f"{e.error_code}: {e.error}"))])
        elif e.error:
            rows.append([name, Text("no", style="bold red"), Text(terminal(f"{e.error_code}: {e.error}"))])
        elif e.first_step_error:  # it loads, then its first draft step fails
            rows.append([name, Text("1st step", style="bold red"),
                         Text(terminal(f"{e.first_step_error_code}: fails at the first draft step: "
                                       f"{e.first_step_error}"))])
        elif e.silent:
            lines = [terminal(f"{code}: {s}") for code, s in zip(e.silent_codes, e.silent)]
            rows.append([name, Text("yes*", style="yellow"), Text("\n".join(lines + _noted(e)))])
        else:
            rows.append([name, Text("yes", style="green"), Text("\n".join(_noted(e)), style="dim")])
    return table(console, "Compatibility", [("runtime", {"no_wrap": True}), ("loads", {"no_wrap": True}),
                                            ("error / silent misbehaviour", {"overflow": "fold"})], rows)


def _deploy(d: Deploy, console: Console) -> RenderableType:
    """One row per vLLM release: what it builds from the speculative config; the findings carry the messages."""
    title = f"Deploy ({d.source}" + (f", model {d.model})" if d.model else ")")
    rows: list[list[str | Text]] = []
    for r in d.runtimes:
        starts = (Text("no", style="bold red") if r.error else Text("yes*", style="yellow") if r.notes
                  else Text("yes", style="green"))
        codes = ", ".join(dict.fromkeys(([r.error_code] if r.error_code else []) + list(r.note_codes)))
        rows.append([runtime_label.display(r.runtime, r.version), starts, Text(terminal(r.method or "-", 40)),
                     Text(terminal(r.model_class or "-", 60)), str(r.num_speculative_tokens or "-"),
                     str(r.draft_vocab_size or "-"), codes])
    columns = [(name, {"no_wrap": name != "codes", "overflow": "fold"})
               for name in ("runtime", "starts", "method", "model class", "tokens", "D", "codes")]
    return table(console, Text(terminal(title, 500)), columns, rows)


def _findings(c: CheckpointReport, console: Console) -> None:
    """The long form (-v): each finding whole, its hint's prose, then each command the hint names on a line of its
    own (soft-wrapped only by the terminal: a command is never broken inside, so a copied one runs)."""
    for f in c.findings[:MAX_TEXT_FINDINGS]:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        where = terminal(":".join(p for p in (f.file, f.tensor) if p), 200)
        body = Text.assemble((f"{where}: " if where else "", "dim"), terminal(f.message, MAX_TEXT_MESSAGE))
        found: Sequence[str] = ()
        if f.hint:
            said, found = long_hint_lines(f.hint)
            body.append(f"\nhint: {terminal(said, MAX_TEXT_MESSAGE)}", style="dim")
        grid.add_row(Text.assemble((f"{f.severity.value:<7} ", _STYLE[f.severity]), (f.code, "bold")), body)
        console.print(grid)
        for command in found:
            console.print(Text(COMMAND_INDENT + terminal(command, MAX_TEXT_MESSAGE)), soft_wrap=True)
    if (hidden := len(c.findings) - MAX_TEXT_FINDINGS) > 0:
        counts = ", ".join(f"{n:,} {code}" for code, n in Counter(f.code for f in c.findings[MAX_TEXT_FINDINGS:])
                           .most_common(5))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        grid.add_row(Text("...", style="bold"), Text(f"and {hidden:,} more findings not shown ({counts}); "
                                                     "--format json lists every one", style="dim"))
        console.print(grid)


def _first_screen(report: Report, console: Console, ctx: RenderContext | None, *, quiet: bool) -> None:
    """The default: a verdict per checkpoint, a line per finding, each command once on its own line."""
    limit = console.width if on_terminal(console) else OFF_TERMINAL
    for c in report.checkpoints:
        if quiet and not c.findings:
            continue
        for text, style in checkpoint_lines(c, ctx, limit, quiet=quiet, most=MAX_TEXT_FINDINGS):
            console.print(Text(text, style=style), soft_wrap=True)
        if not quiet:
            console.print()
    if not quiet:
        console.print(Text(MORE, style="dim"), soft_wrap=True)


def render_text(report: Report, console: Console, ctx: RenderContext | None = None, *, summary: bool = True,
                legend: bool = True, long: bool | None = None) -> None:
    """`summary=False` leaves the verdict line to a caller that prints more sections (verify) before it; `long`:
    the long form (facts, matrix, whole findings), by default with -v (ctx.verbose) or without a run's context."""
    if not (long if long is not None else ctx is None or ctx.verbose):
        _first_screen(report, console, ctx, quiet=False)
        if summary:
            console.print(summary_line(report, ctx))
        return
    shown = not legend  # the legend goes under the first table, once
    for c in report.checkpoints:
        console.print(Text(terminal(c.source, 500), style="bold underline"))
        console.print(_facts(c))
        if c.compatibility:
            console.print(_compatibility(c, console))
        if c.deploy is not None and c.deploy.runtimes:
            console.print(_deploy(c.deploy, console))
        if not shown and (c.compatibility or c.draft_vocab_size is not None):
            console.print(Text(LEGEND, style="dim"))
            shown = True
        if c.findings:
            console.print(Text("Findings", style="bold"))
            _findings(c, console)
        console.print()
    if summary:
        console.print(summary_line(report, ctx))


def render_text_quiet(report: Report, console: Console, ctx: RenderContext | None = None, *,
                      summary: bool = True) -> None:
    """`-q`: only each checkpoint's verdict and a line per finding, and the summary line, for short logs."""
    _first_screen(report, console, ctx, quiet=True)
    if summary:
        console.print(summary_line(report, ctx))

