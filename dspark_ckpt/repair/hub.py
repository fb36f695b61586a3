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
from dspark_ckpt.sources.hub import RepoSpec, open_hub
from dspark_ckpt.sources.hub_push import (
    FileDiff,
    create_pr,
    file_diff,
    hub_spec,
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
