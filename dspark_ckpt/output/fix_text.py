"""fix's text: the plan, what was written and its check, the --safe-only skip, the -q line (from FixRecord)."""

from __future__ import annotations

import os

from rich.console import Console
from rich.text import Text

from dspark_ckpt.check.ranges import spans
from dspark_ckpt.model.report import FixState
from dspark_ckpt.model.severity import Severity
from dspark_ckpt.output.fix_records import FixRecord, FixWritten, file_rows, json_diffs
from dspark_ckpt.output.records import human_bytes
from dspark_ckpt.output.runs import fold, split_selector
from dspark_ckpt.runtimes.selectors import RuntimeVersion


def shown(path: str) -> str:
    """A path as check prints it: relative to the working folder where it lies inside it (issue 41)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return relative if os.path.isabs(path) and not relative.startswith(os.pardir) else path


def state_text(s: FixState) -> str:
    if not s.loads:
        return f"fails ({s.error_code})"
    return f"loads* ({', '.join(dict.fromkeys(s.silent_codes))})" if s.silent_codes else "loads"


def render_plan_text(fix: FixRecord, console: Console, *, diff: bool) -> None:
    console.print(Text(shown(fix.source), style="bold underline"))
    if fix.stays_broken:  # said first: the gate check applies still fails there, whatever is written below
        console.print(Text.assemble(("FAILS ", "bold red"), f"{spans(list(fix.stays_broken))} stays broken after "
                                    "this fix, and check gates on it (DSP505 below says why)"))
    if fix.recovered:
        console.print(Text(f"recovered: {fix.recovered}", style="yellow"))
    if fix.replanned:
        console.print(Text(f"re-planned: {fix.replanned}", style="yellow"))
    served = f", served as {fix.serving_method[0]} ({fix.serving_method[1]})" if fix.serving_method else ""
    console.print(f"fix for {spans(fix.runtimes)} (T={fix.target_vocab_size}{served})", markup=False)
    if fix.refusal is not None:
        console.print(Text.assemble(("refused ", "bold red"), (fix.refusal.code, "bold"), f": {fix.refusal.message}"))
        if fix.refusal.hint:
            console.print(f"hint: {fix.refusal.hint}", style="dim", markup=False, soft_wrap=True)
    elif not fix.actions:  # "nothing to do" only when nothing gated is left failing
        console.print(Text(f"no repair: {fix.note}", style="red") if fix.stays_broken
                      else Text(f"nothing to do: {fix.note}", style="green"))
    else:
        console.print(Text.assemble("strategy ", (fix.strategy or "", "bold")))
        for action in fix.actions:
            console.print(f"  [{action.reason}] {action.text}", markup=False)
        for row in file_rows(fix.changes):
            console.print(f"  file: {row}", markup=False)
    # Consecutive SGLang releases with the same before -> after share a line, as in check's table.
    for run in fold(list(fix.compatibility), lambda r: split_selector(r.runtime),
                    lambda r: (state_text(r.before), state_text(r.after))):
        change = run.entry
        console.print(f"  {run.label:<20} {state_text(change.before)} -> {state_text(change.after)}", markup=False)
    for w in fix.warnings:
        console.print(Text.assemble(("warning ", "bold yellow"), (w.code, "bold"), f": {w.message}"))
        if w.hint:
            console.print(f"hint: {w.hint}", style="dim", markup=False, soft_wrap=True)
    if diff:
        for text in json_diffs(fix.changes):
            console.print(text, end="", markup=False, highlight=False, soft_wrap=True)


def _verdict(result: FixWritten) -> str:
    return "check passes" if not result.errors else f"check FAILS with {len(result.errors)} error(s)"


def render_result_text(result: FixWritten, console: Console) -> None:
    if result.recovered:
        console.print(Text(f"recovered: {result.recovered}", style="yellow"))
    mode = "in place" if result.in_place else "to a new folder"
    carried = result.linked + len(result.copied)  # how they were carried over (linked or copied) is in the JSON
    unchanged = ("other files untouched" if result.in_place else f"{carried} unchanged file(s) carried over")
    console.print(f"wrote {shown(result.destination)} {mode}: {len(result.written)} file(s) written, "
                  f"{human_bytes(result.bytes_written)}; {unchanged}"
                  + (f"; removed {', '.join(result.removed)}" if result.removed else ""), markup=False)
    if result.via_link:
        console.print(f"  (given as the link {result.via_link}, which still points at it)", markup=False)
    for name, size in result.written:
        console.print(f"  wrote {name} ({human_bytes(size)})", markup=False)
    report = result.report
    if report is not None:
        runtimes = spans([str(RuntimeVersion(c.runtime, c.version)) for c in report.compatibility
                          if c.loads and not c.first_step_error])
        kept = sorted({f.code for f in report.findings if f.severity is Severity.ERROR}
                      - {f.code for f in result.errors})
        console.print(f"{_verdict(result)}; loads on {runtimes or 'none'}"
                      + (f" (left by design: {', '.join(kept)}, ids >= T remain possible)" if kept else ""),
                      markup=False)


def render_skip_text(fix: FixRecord, console: Console) -> None:
    console.print(Text(fix.skip_message or "", style="bold yellow"))
    console.print(f"hint: run `{fix.skip_command}` without --safe-only (it writes NAME-fixed beside the checkpoint), "
                  "or force a metadata-only --strategy", style="dim", markup=False, soft_wrap=True)


def quiet_line(fix: FixRecord) -> str | None:
    """`fix -q`: one line per checkpoint that needs attention or got a repair; nothing when there is nothing to do.
    A gated runtime the fix leaves failing is said first."""
    line = _quiet(fix)
    if not fix.stays_broken:
        return line
    rest = line.split(": ", 1)[1] if line is not None else "no repair"
    return (f"{shown(fix.source)}: FAILS: {spans(list(fix.stays_broken))} stays broken after this fix (check gates "
            f"on it); {rest}")


def _quiet(fix: FixRecord) -> str | None:
    if fix.status == "nothing-to-do":
        return None
    if fix.refusal is not None:
        return f"{shown(fix.source)}: refused {fix.refusal.code}: {fix.refusal.message}"
    if fix.status == "skipped":
        return f"{shown(fix.source)}: skipped {fix.strategy} (--safe-only: it rewrites tensor data); nothing written"
    if fix.status == "planned":
        return f"{shown(fix.source)}: would apply {fix.strategy} for {spans(fix.runtimes)} (dry run; nothing written)"
    if fix.result is None:
        return f"{shown(fix.source)}: {fix.status}"
    return f"{shown(fix.source)}: applied {fix.strategy}, wrote {shown(fix.result.destination)}; {_verdict(fix.result)}"
