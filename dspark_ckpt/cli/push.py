"""`fix --push` and `fix org/repo --dry-run`: render what repair/hub.py planned or pushed; the exit code."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from dspark_ckpt.check.hints import command_line, target_flags
from dspark_ckpt.cli.exits import EXIT_NOT_FIXED, EXIT_OK
from dspark_ckpt.model.report import Report
from dspark_ckpt.model.severity import Severity
from dspark_ckpt.output.documents import fix_document, fix_entry, push_document
from dspark_ckpt.output.fix_text import render_plan_text
from dspark_ckpt.output.records import checkpoint_json
from dspark_ckpt.output.render import render_text
from dspark_ckpt.output.write import stdout_console
from dspark_ckpt.repair.hub import plan_hub, push_fix
from dspark_ckpt.repair.render import fix_record
from dspark_ckpt.sources.hub_push import local_options_refused


def dry_run_command(checkpoint: str, target: Any, runtimes: Sequence[Any], strategy: str | None, *,
                    selectors: Sequence[str] | None, token: str | None, output_format: str) -> int:
    """`fix org/repo --dry-run`: the plan and its JSON diffs at the pinned commit; exit 1 when it would change it."""
    plan = plan_hub(checkpoint, target, runtimes, strategy, selectors=selectors, token=token)
    console = stdout_console()  # pipe-friendly: no hard wraps, no trailing padding
    if output_format == "json":
        doc = fix_entry(fix_record(plan, None, in_place=False, dry_run=True))
        console.file.write(json.dumps(fix_document([doc]), indent=2) + "\n")
    else:
        render_plan_text(fix_record(plan, None, in_place=False, dry_run=True), console, diff=True)
        if plan.changes_anything:
            console.print("dry run: nothing was written or pushed; --push opens a pull request with this plan",
                          style="dim", markup=False)
    return EXIT_NOT_FIXED if plan.refusal is not None or plan.changes_anything else EXIT_OK


def push_command(checkpoint: str, *, target: str | None, target_vocab_size: int | None,
                 runtimes: Sequence[str] | None, strategy: str | None, token: str | None, output_format: str,
                 out: Path | None, in_place: bool, dry_run: bool) -> int:
    """The `fix --push` command body: push, print the PR URL and the check of its revision; the exit code."""
    if out is not None or in_place or dry_run:
        strategy_flags = ("--strategy", strategy) if strategy is not None else ()
        raise local_options_refused(command_line("fix", checkpoint, target_flags(target, target_vocab_size) or (),
                                                 runtimes or (), "--dry-run", options=strategy_flags))
    result = push_fix(checkpoint, target=target, target_vocab_size=target_vocab_size, runtimes=runtimes,
                      strategy=strategy, token=token)
    console = stdout_console()  # pipe-friendly: no hard wraps, no trailing padding
    failed = result.report is not None and any(f.severity is Severity.ERROR for f in result.report.findings)
    if output_format == "json":
        doc = push_document("refused" if result.plan.refusal else "pushed" if result.pr_url else "nothing-to-do",
                            parent=result.parent, pr_url=result.pr_url, pr_revision=result.pr_revision,
                            commit=result.commit, files=result.diff.upload if result.diff else (),
                            deleted=result.diff.delete if result.diff else (),
                            plan=fix_entry(fix_record(result.plan, None, in_place=False, dry_run=False)),
                            check=checkpoint_json(result.report) if result.report else None)
        console.file.write(json.dumps(doc, indent=2) + "\n")
    else:
        record = fix_record(result.plan, None, in_place=False, dry_run=False)
        render_plan_text(replace(record, source=f"{checkpoint} @ {result.parent}"), console, diff=False)
        if result.pr_url is None:
            console.print("nothing pushed" + ("" if result.plan.refusal else ": nothing to repair"))
        elif result.diff is not None and result.report is not None:
            files = ", ".join([*result.diff.upload, *(f"{n} (deleted)" for n in result.diff.delete)])
            console.print(f"opened pull request: {result.pr_url}", markup=False)
            console.print(f"commit {result.commit} on {result.pr_revision}, parent {result.parent}: {files}",
                          markup=False)
            console.print(f"check of {result.pr_revision}:")
            render_text(Report((result.report,), runtimes=tuple(result.plan.runtimes)), console)
    return EXIT_NOT_FIXED if result.plan.refusal is not None or failed else EXIT_OK
