"""`fix --push` and `fix org/repo --dry-run`: plan a Hub repo's checked commit; for a push, apply the plan into a
temporary folder, open a pull request with exactly the changed files, and check the pull request's revision.

Every input arrives resolved (cli/run.py resolve_run: T, the runtimes, the selectors as given); the pull request's
words come from the caller (output/push_text.py). Nothing here prints or decides an exit code."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dspark_ckpt.check.hints import HintInputs, Named, target_words
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.hub import RepoSpec, open_hub
from dspark_ckpt.sources.hub_push import FileDiff, create_pr, file_diff, materialize

if TYPE_CHECKING:
    from dspark_ckpt.check.deploy import DeployRequest
    from dspark_ckpt.repair.actions import FixPlan
    from dspark_ckpt.repair.situation import Situation

# The pull request's title and description, from the plan, the checked commit and the files that change.
Describe = Callable[["FixPlan", str, FileDiff], tuple[str, str]]


@dataclass(frozen=True, slots=True)
class PushResult:
    """What `fix --push` did: the plan made on the checked commit, and the pull request (None: nothing pushed)."""

    plan: FixPlan
    parent: str  # the commit that was checked and repaired
    diff: FileDiff | None  # None when there was nothing to push
    pr_url: str | None = None
    pr_revision: str | None = None
    commit: str | None = None
    report: CheckpointReport | None = None  # check of the PR's revision


def _plan(situation: Situation, name: str, target: TargetVocab, runtimes: Sequence[RuntimeVersion],
          strategy: str | None, selectors: Sequence[str] | None, hints: HintInputs | None) -> FixPlan:
    """Plan as `repair.plan_for` does for a folder; the commands its hints suggest name the repo at `name`."""
    from dspark_ckpt.repair import best_effort, pinned_runtimes, required_runtimes
    from dspark_ckpt.repair.plan import plan_repair

    named = Named(name, target_words(hints.target if hints else None, target.size))
    return plan_repair(replace(situation, named_as=named), runtimes, strategy, best_effort=best_effort(selectors),
                       required=required_runtimes(selectors), pinned=pinned_runtimes(selectors))


def push_fix(spec: RepoSpec, target: TargetVocab | None, runtimes: Sequence[RuntimeVersion], strategy: str | None,
             *, describe: Describe, selectors: Sequence[str] | None = None, hints: HintInputs | None = None,
             token: str | None = None, served: DeployRequest | None = None) -> PushResult:
    """Plan on the checked commit, apply into a temporary folder, commit only what changed as a PR, re-check it.
    `selectors`: the --for values as given (best effort or required, as for a folder); `describe`: the PR's words;
    `served`: the deploy's speculative config where it goes with this repo (repair.plan_for's)."""
    from dspark_ckpt.repair import apply_fix, checked_inputs, for_deploy
    from dspark_ckpt.repair.read import read_situation

    target_vocab = checked_inputs(strategy, target)  # DSP-E060/E061 before anything is downloaded
    source = open_hub(spec, token=token)
    sha = source.resolved.sha
    before = materialize(source)
    situation = read_situation(before, target_vocab, runtimes, served.spec if served else None)
    plan = for_deploy(_plan(situation, f"hf://{spec.repo_id}@{sha}", target_vocab, runtimes, strategy, selectors,
                            hints), served, situation.method)
    if not plan.changes_anything:
        return PushResult(plan, sha, None)
    with tempfile.TemporaryDirectory(prefix="dspark-push-") as tmp:
        fixed = Path(tmp) / "fixed"
        apply_fix(plan, out=fixed)
        diff = file_diff(before, fixed, plan.changes.removed if plan.changes else ())
        title, description = describe(plan, sha, diff)
        info = create_pr(source, fixed, diff, title, description, token)
    report = _check_revision(RepoSpec(spec.repo_id, info.pr_revision), target_vocab, runtimes, token, plan.speculative)
    return PushResult(plan, sha, diff, info.pr_url, info.pr_revision, info.oid, report)


def _check_revision(pr_spec: RepoSpec, target: TargetVocab, runtimes: Sequence[RuntimeVersion],
                    token: str | None, speculative: Mapping[str, Any] | None = None) -> CheckpointReport:
    """The check of the pull request's revision, against the same T, runtimes and serving method the plan was made
    for."""
    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.sources.resolve import with_source_notes

    pr = open_hub(pr_spec, token=token)
    return with_source_notes(analyze(pr, target=target, runtimes=runtimes, speculative=speculative).report, pr)


def plan_hub(spec: RepoSpec, target: TargetVocab | None, runtimes: Sequence[RuntimeVersion], strategy: str | None,
             *, selectors: Sequence[str] | None = None, hints: HintInputs | None = None,
             token: str | None = None, served: DeployRequest | None = None) -> FixPlan:
    """The repair plan of a Hub repo at its pinned commit, read as check reads it (the JSON files through the HF
    cache, one ranged request per shard header, the small d2t/t2d): no shard is downloaded, nothing is written or
    pushed. `target`, `runtimes`, `selectors`, `hints`: resolved once by the CLI, as for a folder (repair.plan_for)."""
    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.repair import checked_inputs, for_deploy
    from dspark_ckpt.repair.read import situation_from

    target_vocab = checked_inputs(strategy, target)
    source = open_hub(spec, token=token)
    name = f"hf://{spec.repo_id}@{source.resolved.sha}"
    # No local files to bind the plan to: the commit is pinned.
    analysis = analyze(source, target=target_vocab, runtimes=runtimes, speculative=served.spec if served else None)
    situation = replace(situation_from(analysis), source=name)
    return for_deploy(_plan(situation, name, target_vocab, runtimes, strategy, selectors, hints), served,
                      situation.method)
