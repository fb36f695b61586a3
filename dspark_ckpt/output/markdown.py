"""Report -> GitHub-flavoured Markdown, for a job summary ($GITHUB_STEP_SUMMARY) or a pull-request comment."""

from __future__ import annotations

from dspark_ckpt.model.findings import Severity
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.output.context import RenderContext, Sink
from dspark_ckpt.output.escape import cut, visible_keep_lines
from dspark_ckpt.output.records import summary_line
from dspark_ckpt.output.runs import runs, step_note

_ICON = {Severity.ERROR: "🔴", Severity.WARNING: "🟡", Severity.INFO: "🔵"}


CELL_LIMIT = 2000
_PUNCTUATION = str.maketrans({c: "\\" + c for c in "\\`*_[]~|"} | {"@": "&#64;"})


def cell(text: str, limit: int = CELL_LIMIT) -> str:
    """One table cell: no raw HTML, no pipe or newline that would break the row, no backtick run that opens code,
    no link, emphasis or @mention made of a checkpoint's text, and control characters as visible escapes. The
    backslash is escaped with the rest (a `\\|` in the text must not turn the pipe back into a cell border).
    Cut after `limit` characters: a job summary or a PR comment has a size limit of its own."""
    lines = visible_keep_lines(cut(text, limit)).replace("\r", " ").split("\n")
    escaped = [line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").translate(_PUNCTUATION)
               for line in lines]
    return "<br>".join(escaped)


def _facts(c: CheckpointReport) -> list[str]:
    t = f"{c.target_vocab_size} ({cell(c.target_vocab_source or '')})" if c.target_vocab_size else "unknown"
    return [f"- family: {cell(c.family or 'unknown')} ({cell(c.architecture or 'no architecture')})",
            f"- vocab: T={t}, V={c.input_vocab_size}, D={c.draft_vocab_size}"
            + (f", kind **{c.vocab_kind}**, input {c.input_kind}" if c.vocab_kind else "")]


def _compatibility(c: CheckpointReport) -> list[str]:
    rows = ["| runtime | loads | error / silent misbehaviour |", "|---|---|---|"]
    for run in runs(c.compatibility):  # consecutive SGLang releases with one verdict share a row
        name, e = run.label, run.entry
        if e.error:
            rows.append(f"| {cell(name)} | ❌ {'no' if e.judged else 'no verdict'} | {e.error_code}: {cell(e.error)} |")
        elif e.first_step_error:
            rows.append(f"| {name} | ❌ 1st step | {e.first_step_error_code}: fails at the first draft step: "
                        f"{cell(e.first_step_error)} |")
        elif e.silent:
            issues = "<br>".join(f"{code}: {cell(s)}" for code, s in zip(e.silent_codes, e.silent))
            note = f"<br>{cell(n)}" if (n := step_note(e)) else ""
            rows.append(f"| {name} | ⚠️ yes* | {issues}{note} |")
        else:
            rows.append(f"| {name} | ✅ yes | {cell(n) + ' ' if (n := step_note(e)) else ''}|")
    return rows


def _findings(c: CheckpointReport) -> list[str]:
    rows = ["| severity | code | where | message |", "|---|---|---|---|"]
    for f in c.findings:
        where = ":".join(p for p in (f.file, f.tensor) if p)
        hint = f"<br>hint: {cell(f.hint)}" if f.hint else ""
        rows.append(f"| {_ICON[f.severity]} {f.severity.value} | `{f.code}` | {cell(where)} | {cell(f.message)}{hint} |")
    return rows


def markdown(report: Report, ctx: RenderContext) -> str:
    failing = sum(1 for f in report.findings if f.severity.rank >= ctx.fail_on.rank) - ctx.outside_gate
    verdict = f"❌ {failing} finding(s)" if failing else "✅ no finding"
    lines = [f"## dspark-ckpt: {verdict} at or above {ctx.fail_on.value}", "", summary_line(report, ctx), ""]
    for c in report.checkpoints:
        lines += [f"### {cell(c.source)}", "", *_facts(c), ""]
        if c.compatibility:
            lines += [*_compatibility(c), ""]
        if c.findings:
            lines += [*_findings(c), ""]
    return "\n".join(lines)


def render(report: Report, console: Sink, ctx: RenderContext) -> None:
    console.file.write(markdown(report, ctx) + "\n")
