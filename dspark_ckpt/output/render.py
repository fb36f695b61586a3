"""Report -> text (rich) | json; the other formats live in renderers/. Renderers never decide pass or fail."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.findings import Severity
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.escape import terminal
from dspark_ckpt.output.plain import table
from dspark_ckpt.output.records import LEGEND, MAX_TEXT_FINDINGS, MAX_TEXT_MESSAGE, summary_line
from dspark_ckpt.output.runs import runs

if TYPE_CHECKING:
    from dspark_ckpt.model.deploy import Deploy

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_KIND_NOTE = {"pruned": "D < T", "equal": "D == T", "padded": "D > T"}


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


def _compatibility(c: CheckpointReport, console: Console) -> RenderableType:
    rows: list[list[str | Text]] = []
    for run in runs(c.compatibility):  # consecutive SGLang releases with one verdict share a row
        name, e = run.label, run.entry
        if e.error:
            rows.append([name, Text("no", style="bold red"), Text(terminal(f"{e.error_code}: {e.error}"))])
        elif e.first_step_error:  # it loads, then its first draft step fails
            rows.append([name, Text("1st step", style="bold red"),
                         Text(terminal(f"{e.first_step_error_code}: fails at the first draft step: "
                                       f"{e.first_step_error}"))])
        elif e.silent:
            rows.append([name, Text("yes*", style="yellow"),
                         Text("\n".join(terminal(f"{code}: {s}") for code, s in zip(e.silent_codes, e.silent)))])
        else:
            rows.append([name, Text("yes", style="green"), ""])
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


def _findings(c: CheckpointReport) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for f in c.findings[:MAX_TEXT_FINDINGS]:
        where = terminal(":".join(p for p in (f.file, f.tensor) if p), 200)
        body = Text.assemble((f"{where}: " if where else "", "dim"), terminal(f.message, MAX_TEXT_MESSAGE))
        if f.hint:
            body.append(f"\nhint: {terminal(f.hint, MAX_TEXT_MESSAGE)}", style="dim")
        grid.add_row(Text.assemble((f"{f.severity.value:<7} ", _STYLE[f.severity]), (f.code, "bold")), body)
    if (hidden := len(c.findings) - MAX_TEXT_FINDINGS) > 0:
        counts = ", ".join(f"{n:,} {code}" for code, n in Counter(f.code for f in c.findings[MAX_TEXT_FINDINGS:])
                           .most_common(5))
        grid.add_row(Text("...", style="bold"), Text(f"and {hidden:,} more findings not shown ({counts}); "
                                                     "--format json lists every one", style="dim"))
    return grid


def render_text(report: Report, console: Console, ctx: RenderContext | None = None, *, summary: bool = True,
                legend: bool = True) -> None:
    """`summary=False` leaves the verdict line to a caller that prints more sections (verify) before it."""
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
            console.print(_findings(c))
        console.print()
    if summary:
        console.print(summary_line(report, ctx))


def render_text_quiet(report: Report, console: Console, ctx: RenderContext | None = None, *,
                      summary: bool = True) -> None:
    """`-q`: only the findings and the summary line, for logs that should stay short."""
    for c in report.checkpoints:
        if c.findings:
            console.print(Text(terminal(c.source, 500), style="bold underline"))
            console.print(_findings(c))
    if summary:
        console.print(summary_line(report, ctx))

