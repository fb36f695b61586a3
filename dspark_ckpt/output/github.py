"""Report -> GitHub Actions workflow commands (`::error file=...::message`), escaped as @actions/core does."""

from __future__ import annotations

from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.output.context import RenderContext, Sink
from dspark_ckpt.output.escape import visible_keep_lines
from dspark_ckpt.output.locations import finding_path, relative_to
from dspark_ckpt.output.records import summary_line

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """A message: other control characters (an ANSI escape in a tensor name) as visible escapes, then `%` first, so
    the escapes it introduces are not escaped again; CR and LF cannot end the command."""
    return visible_keep_lines(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value additionally may not contain the `:` and `,` that delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(c: CheckpointReport, f: Finding, ctx: RenderContext) -> str:
    slug = RULES[f.code].slug if f.code in RULES else ""
    gated = ctx.is_gated(c, f)
    level = COMMAND[f.severity] if gated or f.severity is not Severity.ERROR else "warning"
    title = f"{f.code} {slug}".strip() + ("" if gated or not f.severity.rank >= ctx.fail_on.rank else " (not gated)")
    props = {"file": relative_to(finding_path(c, f), ctx.root), "line": "1", "title": title}
    where = f"{f.tensor}: " if f.tensor else ""
    message = f"{where}{f.message}" + (f"\nhint: {f.hint}" if f.hint else "")
    joined = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"::{level} {joined}::{escape_data(message)}"


def render(report: Report, console: Sink, ctx: RenderContext) -> None:
    for c in report.checkpoints:
        for f in c.findings:
            console.file.write(annotation(c, f, ctx) + "\n")
    # A plain line; it cannot be read as a command because it does not start with `::`.
    console.file.write(f"dspark-ckpt: {summary_line(report, ctx)}\n")
