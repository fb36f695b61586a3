"""`fix --push`: repair a Hub repo's checked commit in a temporary folder and open a pull request with the result."""

from __future__ import annotations

import filecmp
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dspark_ckpt import __version__
from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.hub import HubSource, RepoSpec, open_hub, parse_repo_spec, with_hub_errors


@dataclass(frozen=True, slots=True)
class FileDiff:
    upload: tuple[str, ...]  # changed or new files, relative paths
    delete: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PushResult:
    plan: Any  # the repair.FixPlan made on the checked commit
    parent: str  # the commit that was checked and repaired
    diff: FileDiff | None  # None when there was nothing to push
    pr_url: str | None = None
    pr_revision: str | None = None
    commit: str | None = None
    report: CheckpointReport | None = None  # check of the PR's revision


def hub_spec(checkpoint: str) -> RepoSpec:
    spec = None if Path(checkpoint).exists() else parse_repo_spec(checkpoint)
    if spec is None:
        raise UsageError(f"--push needs a Hub repo (org/repo[@rev]), not {checkpoint!r}", code="DSP-E059",
                         hint="for a local folder use --out DIR or --in-place")
    return spec


def materialize(source: HubSource) -> Path:
    """The files a repair reads (config, index, shards) at the checked commit, via the HF cache: its snapshot folder."""
    wanted = [n for n in (CONFIG_NAME, INDEX_NAME) if n in source.resolved.sizes] + source.safetensors_files()
    paths = {name: source.download(name) for name in wanted}  # OSError: the push cannot go on
    snapshot = {Path(p).parent if "/" not in n else None for n, p in paths.items()} - {None}
    if len(snapshot) != 1:
        raise SourceError(f"{source.display}: the downloaded files are not in one cache snapshot", code="DSP-E055")
    return snapshot.pop()  # type: ignore[return-value]


def file_diff(before: Path, after: Path, removed: Sequence[str]) -> FileDiff:
    """Files of `after` that are new or differ byte for byte from `before`, and the files the repair removed."""
    upload = []
    for path in sorted(p for p in after.rglob("*") if p.is_file()):
        name = path.relative_to(after).as_posix()
        old = before / name
        if not old.exists() or not filecmp.cmp(old, path, shallow=False):
            upload.append(name)
    return FileDiff(tuple(upload), tuple(sorted(set(removed))))


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
        info = _create_pr(source, fixed, diff, title, description, token)
    report = _check_revision(spec, info.pr_revision, target, target_vocab_size, fix_runtimes(runtimes), token)
    return PushResult(plan, source.resolved.sha, diff, info.pr_url, info.pr_revision, info.oid, report)


def _create_pr(source: HubSource, folder: Path, diff: FileDiff, title: str, description: str,
               token: str | None) -> Any:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    ops: list[Any] = [CommitOperationAdd(path_in_repo=n, path_or_fileobj=str(folder / n)) for n in diff.upload]
    ops += [CommitOperationDelete(path_in_repo=n) for n in diff.delete]
    api = HfApi(token=token, library_name="dspark-ckpt")

    def commit() -> Any:
        try:
            return api.create_commit(source.repo_id, ops, commit_message=title, commit_description=description,
                                     create_pr=True, parent_commit=source.resolved.sha)
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            if status in (401, 403):
                raise SourceError(f"{source.repo_id}: the Hub refused the pull request (HTTP {status}): no token, "
                                  "or one that may not open pull requests on this repo", code="DSP-E051",
                                  hint="--push needs a token with access: --token or HF_TOKEN") from None
            raise

    return with_hub_errors(source.spec, source.client, commit)


def _check_revision(spec: RepoSpec, revision: str, target: str | None, target_vocab_size: int | None,
                    runtimes: Any, token: str | None) -> CheckpointReport:
    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.sources.resolve import with_source_notes
    from dspark_ckpt.sources.target import resolve_target

    pr = open_hub(RepoSpec(spec.repo_id, revision), token=token)
    target_vocab = resolve_target(target, target_vocab_size, token=token)
    return with_source_notes(inspect_checkpoint(pr, target=target_vocab, runtimes=runtimes), pr)


def is_hub_checkpoint(spec: str) -> bool:
    """A repo id fix should read from the Hub: `hf://...`, or `org/repo[@rev]` that is no local path (and whose
    folder part does not exist locally either: that is a mistyped path, as for check)."""
    if spec.startswith("hf://"):
        return True
    path = Path(spec)
    if os.path.lexists(spec) or parse_repo_spec(spec) is None or spec.startswith((".", "/", "~")):
        return False
    return path.parent == Path(".") or not path.parent.is_dir()


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
    from dspark_ckpt.output.render import checkpoint_json, render_text
    from dspark_ckpt.output.write import stdout_console
    from dspark_ckpt.repair.render import fix_json, render_plan_text

    if out is not None or in_place or dry_run:
        raise UsageError("--push writes nowhere locally: drop --out/--in-place/--dry-run", code="DSP-E059",
                         hint=f"`dspark-ckpt fix {checkpoint} --dry-run` (with the same --target-vocab-size and "
                              "--for) shows the plan without pushing")
    result = push_fix(checkpoint, target=target, target_vocab_size=target_vocab_size, runtimes=runtimes,
                      strategy=strategy, token=token)
    console = stdout_console()  # pipe-friendly: no hard wraps, no trailing padding
    failed = result.report is not None and any(f.severity == "error" for f in result.report.findings)
    if output_format == "json":
        doc = {"status": "refused" if result.plan.refusal else "pushed" if result.pr_url else "nothing-to-do",
               "parent_commit": result.parent, "pr_url": result.pr_url, "pr_revision": result.pr_revision,
               "commit": result.commit, "files": list(result.diff.upload) if result.diff else [],
               "deleted": list(result.diff.delete) if result.diff else [],
               "plan": fix_json(result.plan, None, in_place=False, dry_run=False),
               "check": checkpoint_json(result.report) if result.report else None}
        console.file.write(json.dumps(doc, indent=2) + "\n")
    else:
        render_plan_text(replace(result.plan, source=f"{checkpoint} @ {result.parent}"), console, diff=False)
        if result.pr_url is None:
            console.print("nothing pushed" + ("" if result.plan.refusal else ": nothing to repair"))
        elif result.diff is not None and result.report is not None:
            files = ", ".join([*result.diff.upload, *(f"{n} (deleted)" for n in result.diff.delete)])
            console.print(f"opened pull request: {result.pr_url}", overflow="fold")
            console.print(f"commit {result.commit} on {result.pr_revision}, parent {result.parent}: {files}",
                          overflow="fold")
            console.print(f"check of {result.pr_revision}:")
            render_text(Report((result.report,), runtimes=tuple(result.plan.runtimes)), console)
    return 1 if result.plan.refusal is not None or failed else 0
