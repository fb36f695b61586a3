"""Report -> one line per finding, as ruff's `--output-format concise`: `path:tensor: CODE [severity] message`."""

from __future__ import annotations

from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.output.context import RenderContext, Sink
from dspark_ckpt.output.escape import cut, visible
from dspark_ckpt.output.locations import finding_path, relative_to
from dspark_ckpt.output.records import MAX_TEXT_MESSAGE, summary_line


def line(c: CheckpointReport, f: Finding, ctx: RenderContext) -> str:
    """An error outside the gate reads `[warning, not gated]`: it does not fail the run, so it is not shown as one."""
    where = relative_to(finding_path(c, f), ctx.root) + (f":{f.tensor}" if f.tensor else "")
    severity = ctx.shown_severity(c, f).value + (", not gated" if ctx.not_gated_note(c, f) else "")
    return visible(f"{cut(where, 500)}: {f.code} [{severity}] {cut(f.message, MAX_TEXT_MESSAGE)}")


def render(report: Report, console: Sink, ctx: RenderContext) -> None:
    for c in report.checkpoints:
        for f in c.findings:
            console.file.write(line(c, f, ctx) + "\n")
    if not ctx.quiet or report.findings:
        console.file.write(summary_line(report, ctx) + "\n")
