"""FixPlan / FixResult -> text (rich) or JSON. Renderers only present; the CLI decides the exit code."""

from __future__ import annotations

import difflib
from typing import Any

from rich.console import Console
from rich.text import Text

from dspark_ckpt.model.severity import Severity
from dspark_ckpt.output.records import finding_json, human_bytes
from dspark_ckpt.output.runs import fold, split_selector
from dspark_ckpt.repair.actions import FixPlan, Outcome, action_json, describe
from dspark_ckpt.repair.apply import FixResult
from dspark_ckpt.repair.files import write_steps
from dspark_ckpt.repair.hints import command, spans
from dspark_ckpt.runtimes.selectors import RuntimeVersion


def state_text(o: Outcome) -> str:
    if not o.loads:
        return f"fails ({o.error_code})"
    return f"loads* ({', '.join(dict.fromkeys(o.silent_codes))})" if o.silent_codes else "loads"


def _state(o: Outcome) -> dict[str, Any]:
    return {"loads": o.loads, "error_code": o.error_code, "silent_codes": list(dict.fromkeys(o.silent_codes))}


def json_diffs(plan: FixPlan) -> list[str]:
    if plan.changes is None:
        return []
    out = []
    for t in plan.changes.texts:
        lines = difflib.unified_diff((t.old or "").splitlines(keepends=True), t.new.splitlines(keepends=True),
                                     fromfile=f"a/{t.file}" if t.old is not None else "/dev/null",
                                     tofile=f"b/{t.file}")
        out.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return out


def _files(plan: FixPlan) -> list[str]:
    c = plan.changes
    if c is None:
        return []
    rows = [f"{'add' if s.new else 'rewrite'} {s.file} ({len(s.tensors)} tensors, "
            f"{human_bytes(sum(t.nbytes for t in s.tensors))} of data)" for s in c.shards]
    rows += [f"remove {name}" for name in c.removed]
    rows += [f"{'create' if t.old is None else 'update'} {t.file}" for t in c.texts]
    return rows


def render_plan_text(plan: FixPlan, console: Console, *, diff: bool) -> None:
    console.print(Text(plan.source, style="bold underline"))
    if plan.recovered:
        console.print(Text(f"recovered: {plan.recovered}", style="yellow"))
    console.print(f"fix for {spans(plan.runtimes)} (T={plan.target_vocab_size})")
    if plan.refusal is not None:
        console.print(Text.assemble(("refused ", "bold red"), (plan.refusal.code, "bold"), f": {plan.refusal.message}"))
        if plan.refusal.hint:
            console.print(f"hint: {plan.refusal.hint}", style="dim", markup=False, soft_wrap=True)
    elif not plan.actions:
        console.print(Text(f"nothing to do: {plan.note}", style="green"))
    else:
        console.print(Text.assemble("strategy ", (plan.strategy or "", "bold")))
        for action in plan.actions:
            console.print(f"  [{action.reason}] {describe(action)}", markup=False)
        for row in _files(plan):
            console.print(f"  file: {row}", markup=False)
    # Consecutive SGLang releases with the same before -> after share a line, as in check's table.
    for run in fold(list(zip(plan.before, plan.after)), lambda pair: split_selector(pair[0].runtime),
                    lambda pair: (state_text(pair[0]), state_text(pair[1]))):
        before, after = run.entry
        console.print(f"  {run.label:<20} {state_text(before)} -> {state_text(after)}", markup=False)
    for w in plan.warnings:
        console.print(Text.assemble(("warning ", "bold yellow"), (w.code, "bold"), f": {w.message}"))
        if w.hint:
            console.print(f"hint: {w.hint}", style="dim", markup=False, soft_wrap=True)
    if diff:
        for text in json_diffs(plan):
            console.print(text, end="", markup=False, highlight=False, soft_wrap=True)


def render_result_text(result: FixResult, console: Console) -> None:
    if result.recovered:
        console.print(Text(f"recovered: {result.recovered}", style="yellow"))
    mode = "in place" if result.in_place else "to a new folder"
    carried = result.linked + len(result.copied)  # how they were carried over (linked or copied) is in the JSON
    unchanged = ("other files untouched" if result.in_place else f"{carried} unchanged file(s) carried over")
    console.print(f"wrote {result.destination} {mode}: {len(result.written)} file(s) written, "
                  f"{human_bytes(result.bytes_written)}; {unchanged}"
                  + (f"; removed {', '.join(result.removed)}" if result.removed else ""), markup=False)
    if result.via_link:
        console.print(f"  (given as the link {result.via_link}, which still points at it)", markup=False)
    for name, size in result.written:
        console.print(f"  wrote {name} ({human_bytes(size)})", markup=False)
    report = result.report
    if report is not None:
        errors = result.errors
        runtimes = spans([str(RuntimeVersion(c.runtime, c.version)) for c in report.compatibility
                          if c.loads and not c.first_step_error])
        verdict = "check passes" if not errors else f"check FAILS with {len(errors)} error(s)"
        kept = sorted({f.code for f in report.findings if f.severity is Severity.ERROR} - {f.code for f in errors})
        console.print(f"{verdict}; loads on {runtimes or 'none'}"
                      + (f" (left by design: {', '.join(kept)}, ids >= T remain possible)" if kept else ""),
                      markup=False)


def quiet_line(plan: FixPlan, result: FixResult | None, status: str) -> str | None:
    """`fix -q`: one line per checkpoint that needs attention or got a repair; nothing when there is nothing to do."""
    if status == "nothing-to-do":
        return None
    if plan.refusal is not None:
        return f"{plan.source}: refused {plan.refusal.code}: {plan.refusal.message}"
    if status == "skipped":
        return f"{plan.source}: skipped {plan.strategy} (--safe-only: it rewrites tensor data); nothing written"
    if status == "planned":
        return f"{plan.source}: would apply {plan.strategy} for {spans(plan.runtimes)} (dry run; nothing written)"
    if result is None:
        return f"{plan.source}: {status}"
    verdict = "check passes" if not result.errors else f"check FAILS with {len(result.errors)} error(s)"
    return f"{plan.source}: applied {plan.strategy}, wrote {result.destination}; {verdict}"


def render_skip_text(message: str, console: Console, plan: FixPlan | None = None) -> None:
    console.print(Text(message, style="bold yellow"))
    run = (f"`{command('fix', plan.named, plan.runtimes)}`" if plan is not None
           else "`dspark-ckpt fix` on it")
    console.print(f"hint: run {run} without --safe-only (it writes NAME-fixed beside the checkpoint), "
                  "or force a metadata-only --strategy", style="dim", markup=False, soft_wrap=True)


def fix_json(plan: FixPlan, result: FixResult | None, *, in_place: bool, dry_run: bool,
             skipped: list[str] | None = None) -> dict[str, Any]:
    """`skipped`: why --safe-only left a planned repair alone (status `skipped`, nothing written)."""
    status = ("refused" if plan.refusal else "nothing-to-do" if not plan.actions else "skipped" if skipped
              else "planned" if dry_run else "applied")
    doc: dict[str, Any] = {
        "source": plan.source, "status": status,
        "target_vocab_size": plan.target_vocab_size, "runtimes": list(plan.runtimes), "strategy": plan.strategy,
        "actions": [action_json(x) for x in plan.actions], "files": _files(plan),
        "refusal": ({"code": plan.refusal.code, "message": plan.refusal.message, "hint": plan.refusal.hint}
                    if plan.refusal else None),
        "note": plan.note,
        "compatibility": [{"runtime": b.runtime, "before": _state(b), "after": _state(a)}
                          for b, a in zip(plan.before, plan.after)],
        "steps": list(write_steps(plan.changes, in_place)) if plan.changes and plan.actions else [],
        "diff": json_diffs(plan),
        "skipped": skipped or [],
        "warnings": [finding_json(w) for w in plan.warnings],
        "not_repaired_for": list(plan.not_repaired_for),
        "recovered": plan.recovered,
    }
    if result is not None:
        doc["result"] = {
            "destination": result.destination, "in_place": result.in_place, "atomic": result.atomic,
            "written": [{"file": f, "bytes": n} for f, n in result.written],
            "copied": [{"file": f, "bytes": n} for f, n in result.copied], "linked": result.linked,
            "removed": list(result.removed), "bytes_written": result.bytes_written,
            "check_findings": [finding_json(f) for f in result.report.findings] if result.report else [],
            "check_errors": [f.code for f in result.errors],
            "via_link": result.via_link, "recovered": result.recovered,
        }
    return doc
