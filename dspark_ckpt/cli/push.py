"""`fix --push` and `fix org/repo --dry-run`: call repair/hub.py with the resolved run, render, the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from dspark_ckpt.check.hints import command_line, target_flags
from dspark_ckpt.cli.exits import EXIT_NOT_FIXED, EXIT_OK
from dspark_ckpt.cli.run import Run
from dspark_ckpt.output.documents import fix_document, fix_entry, push_document
from dspark_ckpt.output.push_text import (
    PushRecord,
    pull_request_text,
    push_quiet_line,
    render_hub_dry_run,
    render_push_text,
)
from dspark_ckpt.output.records import checkpoint_json
from dspark_ckpt.output.write import stdout_console
from dspark_ckpt.repair.actions import FixPlan
from dspark_ckpt.repair.hub import PushResult, plan_hub, push_fix
from dspark_ckpt.repair.render import fix_record
from dspark_ckpt.sources.hub import RepoSpec
from dspark_ckpt.sources.hub_push import FileDiff, hub_spec, local_options_refused

if TYPE_CHECKING:
    from dspark_ckpt.check.deploy import DeployRequest


def dry_run_command(checkpoint: str, run: Run, strategy: str | None, *, output_format: str,
                    served: DeployRequest | None = None) -> int:
    """`fix org/repo --dry-run`: the plan and its JSON diffs at the pinned commit; exit 1 when it would change it.
    `served`: the deploy's speculative config where it goes with the repo (check's DeployPlan.request_for)."""
    plan = plan_hub(hub_spec(checkpoint), run.target, run.repair_runtimes, strategy, selectors=run.repair_selectors,
                    hints=run.hints, token=run.token, served=served)
    record = fix_record(plan, None, in_place=False, dry_run=True)
    console = stdout_console(run.common.color.value)  # pipe-friendly: no hard wraps, no trailing padding
    if output_format == "json":
        console.file.write(json.dumps(fix_document([fix_entry(record)]), indent=2) + "\n")
    else:
        render_hub_dry_run(record, console, quiet=run.common.quiet)
    return EXIT_NOT_FIXED if plan.refusal is not None or plan.changes_anything else EXIT_OK


def push_target(checkpoint: str, *, target: str | None, target_vocab_size: int | None, runtimes: list[str] | None,
                strategy: str | None, out: Path | None, in_place: bool, dry_run: bool) -> RepoSpec:
    """What `fix --push` refuses before anything is resolved or read (DSP-E059): a local folder, a local output.
    The flags as given: the hint repeats them as a `--dry-run`, which reads the same settings file."""
    if out is not None or in_place or dry_run:
        strategy_flags = ("--strategy", strategy) if strategy is not None else ()
        raise local_options_refused(command_line("fix", checkpoint, target_flags(target, target_vocab_size) or (),
                                                 runtimes or (), "--dry-run", options=strategy_flags))
    return hub_spec(checkpoint)


def _describe(plan: FixPlan, parent: str, diff: FileDiff) -> tuple[str, str]:
    return pull_request_text(fix_record(plan, None, in_place=False, dry_run=False), parent, diff.upload, diff.delete)


def push_record(checkpoint: str, result: PushResult) -> PushRecord:
    diff = result.diff
    return PushRecord(checkpoint, fix_record(result.plan, None, in_place=False, dry_run=False), result.parent,
                      result.pr_url, result.pr_revision, result.commit, diff.upload if diff else (),
                      diff.delete if diff else (), result.report)


def push_command(checkpoint: str, spec: RepoSpec, run: Run, strategy: str | None, *, output_format: str,
                 served: DeployRequest | None = None) -> int:
    """The `fix --push` command body: push, print the PR URL and the check of its revision; the exit code."""
    result = push_fix(spec, run.target, run.repair_runtimes, strategy, describe=_describe, selectors=run.repair_selectors,
                      hints=run.hints, token=run.token, served=served)
    push = push_record(checkpoint, result)
    console = stdout_console(run.common.color.value)  # pipe-friendly: no hard wraps, no trailing padding
    if output_format == "json":
        doc = push_document(push.status, parent=push.parent, pr_url=push.pr_url, pr_revision=push.pr_revision,
                            commit=push.commit, files=push.files, deleted=push.deleted, plan=fix_entry(push.fix),
                            check=checkpoint_json(push.report) if push.report else None)
        console.file.write(json.dumps(doc, indent=2) + "\n")
    elif run.common.quiet:
        if (line := push_quiet_line(push)) is not None:
            console.print(line, markup=False, highlight=False)
    else:
        render_push_text(push, console)
    return EXIT_NOT_FIXED if result.plan.refusal is not None or push.errors else EXIT_OK
