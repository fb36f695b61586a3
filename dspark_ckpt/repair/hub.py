"""`fix --push` and `fix org/repo --dry-run`: plan a Hub repo's checked commit; for a push, apply the plan into a
temporary folder, open a pull request with exactly the changed files, and check the pull request's revision."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.model.severity import Severity
from dspark_ckpt.sources.hub import RepoSpec, open_hub
from dspark_ckpt.sources.hub_push import (
    FileDiff,
    create_pr,
    file_diff,
    hub_spec,
    local_options_refused,
    materialize,
)
from dspark_ckpt.version import __version__


@dataclass(frozen=True, slots=True)
class PushResult:
    plan: Any  # the repair.FixPlan made on the checked commit
    parent: str  # the commit that was checked and repaired
    diff: FileDiff | None  # None when there was nothing to push
    pr_url: str | None = None
    pr_revision: str | None = None
    commit: str | None = None
    report: CheckpointReport | None = None  # check of the PR's revision


def fixed_codes(plan: Any) -> list[str]:
    """The finding codes that fail or misbehave on a chosen runtime before the repair and not after."""
    def codes(outcomes: Any) -> set[str]:
        return {c for o in outcomes for c in ((o.error_code,) if o.error_code else ()) + tuple(o.silent_codes)}
    return sorted(codes(plan.before) - codes(plan.after))


def commit_message(plan: Any, parent: str, diff: FileDiff) -> tuple[str, str]:
    """The PR title and description: the rule codes repaired, the runtimes targeted, and what changed."""
    from dspark_ckpt.repair.actions import describe

    codes = fixed_codes(plan)
    title = f"dspark-ckpt fix: {', '.join(codes) or 'repair'} for {', '.join(plan.runtimes)}"
    lines = ["Automated repair by dspark-ckpt " + __version__ + ".", "",
             f"Checked commit: {parent}", f"Target vocab T: {plan.target_vocab_size}",
             f"Runtimes targeted: {', '.join(plan.runtimes)}", "", "Findings repaired:"]
    lines += [f"- {c} {RULES[c].slug}: {RULES[c].summary}" for c in codes if c in RULES] or ["- (none)"]
    lines += ["", "Actions:"] + [f"- {describe(a)}" for a in plan.actions]
    lines += ["", "Files changed:"] + [f"- {n}" for n in diff.upload] + [f"- {n} (deleted)" for n in diff.delete]
    lines += ["", "Verify: `dspark-ckpt check <repo>@<this PR's revision> --runtime ...` before merging."]
    return title[:250], "\n".join(lines) + "\n"


def push_fix(checkpoint: str, *, target: str | None, target_vocab_size: int | None,
             runtimes: Sequence[str] | None, strategy: str | None, token: str | None = None) -> PushResult:
    """Plan on the checked commit, apply into a temporary folder, commit only what changed as a PR, re-check it."""
    from dspark_ckpt.repair import apply_fix, fix_runtimes, plan_fix

    spec = hub_spec(checkpoint)
    source = open_hub(spec, token=token)
    before = materialize(source)
    plan = plan_fix(before, target=target, target_vocab_size=target_vocab_size, runtimes=runtimes,
                    strategy=strategy)
    if not plan.changes_anything:
        return PushResult(plan, source.resolved.sha, None)
    with tempfile.TemporaryDirectory(prefix="dspark-push-") as tmp:
        fixed = Path(tmp) / "fixed"
        apply_fix(plan, out=fixed)
        diff = file_diff(before, fixed, plan.changes.removed if plan.changes else ())
        title, description = commit_message(plan, source.resolved.sha, diff)
        info = create_pr(source, fixed, diff, title, description, token)
    report = _check_revision(spec, info.pr_revision, target, target_vocab_size, fix_runtimes(runtimes), token)
    return PushResult(plan, source.resolved.sha, diff, info.pr_url, info.pr_revision, info.oid, report)


def _check_revision(spec: RepoSpec, revision: str, target: str | None, target_vocab_size: int | None,
                    runtimes: Any, token: str | None) -> CheckpointReport:
    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.sources.resolve import with_source_notes
    from dspark_ckpt.sources.target import resolve_target

    pr = open_hub(RepoSpec(spec.repo_id, revision), token=token)
    target_vocab = resolve_target(target, target_vocab_size, token=token)
    return with_source_notes(inspect_checkpoint(pr, target=target_vocab, runtimes=runtimes), pr)


def plan_hub(checkpoint: str, target: Any, runtimes: Sequence[Any], strategy: str | None, *,
             selectors: Sequence[str] | None = None, token: str | None = None) -> Any:
    """The repair plan of a Hub repo at its pinned commit, read as check reads it (the JSON files through the HF
    cache, one ranged request per shard header, the small d2t/t2d): no shard is downloaded, nothing is written or
    pushed. `target`, `runtimes`: resolved as for a local folder (repair.plan_for)."""
    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.repair import best_effort, checked_inputs
    from dspark_ckpt.repair.plan import plan_repair
    from dspark_ckpt.repair.read import situation_from

    target_vocab = checked_inputs(strategy, target)
    spec = hub_spec(checkpoint)
    source = open_hub(spec, token=token)
    name = f"hf://{spec.repo_id}@{source.resolved.sha}"
    # No local files to fingerprint: the commit is pinned. os.devnull/<name> is never a folder, so nothing is found.
    situation = replace(situation_from(analyze(source, target=target_vocab, runtimes=runtimes), Path(os.devnull)),
                        source=name, fingerprints=())
    return plan_repair(situation, runtimes, strategy, best_effort=best_effort(selectors))


def dry_run_command(checkpoint: str, target: Any, runtimes: Sequence[Any], strategy: str | None, *,
                    selectors: Sequence[str] | None, token: str | None, output_format: str) -> int:
    """`fix org/repo --dry-run`: the plan and its JSON diffs at the pinned commit; exit 1 when it would change it."""
    import json

    from dspark_ckpt.output.documents import fix_document
    from dspark_ckpt.output.write import stdout_console
    from dspark_ckpt.repair.render import fix_json, render_plan_text

    plan = plan_hub(checkpoint, target, runtimes, strategy, selectors=selectors, token=token)
    console = stdout_console()  # pipe-friendly: no hard wraps, no trailing padding
    if output_format == "json":
        doc = fix_json(plan, None, in_place=False, dry_run=True)
        console.file.write(json.dumps(fix_document([doc]), indent=2) + "\n")
    else:
        render_plan_text(plan, console, diff=True)
        if plan.changes_anything:
            console.print("dry run: nothing was written or pushed; --push opens a pull request with this plan",
                          style="dim", markup=False)
    return 1 if plan.refusal is not None or plan.changes_anything else 0


def push_command(checkpoint: str, *, target: str | None, target_vocab_size: int | None,
                 runtimes: Sequence[str] | None, strategy: str | None, token: str | None, output_format: str,
                 out: Path | None, in_place: bool, dry_run: bool) -> int:
    """The `fix --push` command body: push, print the PR URL and the check of its revision; the exit code."""
    import json

    from dspark_ckpt.model.report import Report
    from dspark_ckpt.output.documents import push_document
    from dspark_ckpt.output.records import checkpoint_json
    from dspark_ckpt.output.render import render_text
    from dspark_ckpt.output.write import stdout_console
    from dspark_ckpt.repair.render import fix_json, render_plan_text

    if out is not None or in_place or dry_run:
        from dspark_ckpt.check.hints import command_line, target_flags

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
                            plan=fix_json(result.plan, None, in_place=False, dry_run=False),
                            check=checkpoint_json(result.report) if result.report else None)
        console.file.write(json.dumps(doc, indent=2) + "\n")
    else:
        render_plan_text(replace(result.plan, source=f"{checkpoint} @ {result.parent}"), console, diff=False)
        if result.pr_url is None:
            console.print("nothing pushed" + ("" if result.plan.refusal else ": nothing to repair"))
        elif result.diff is not None and result.report is not None:
            files = ", ".join([*result.diff.upload, *(f"{n} (deleted)" for n in result.diff.delete)])
            console.print(f"opened pull request: {result.pr_url}", markup=False)
            console.print(f"commit {result.commit} on {result.pr_revision}, parent {result.parent}: {files}",
                          markup=False)
            console.print(f"check of {result.pr_revision}:")
            render_text(Report((result.report,), runtimes=tuple(result.plan.runtimes)), console)
    return 1 if result.plan.refusal is not None or failed else 0
