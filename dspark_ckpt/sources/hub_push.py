"""`fix --push` on the Hub side: the checked commit's files, which files differ, and the pull request itself.

The command (plan, apply into a temporary folder, push, re-check; and `fix org/repo --dry-run`) is repair/hub.py.
"""

from __future__ import annotations

import filecmp
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.hub import HubSource, RepoSpec, with_hub_errors
from dspark_ckpt.sources.resolve import hub_repo


@dataclass(frozen=True, slots=True)
class FileDiff:
    """What a pull request to the Hub changes: files to upload and to delete."""

    upload: tuple[str, ...]  # changed or new files, relative paths
    delete: tuple[str, ...]


def hub_spec(checkpoint: str) -> RepoSpec:
    spec = hub_repo(checkpoint)  # a path, or a name shaped like one (`drafts/typo`, `x.json`), is no repo to push to
    if spec is None:
        raise UsageError(f"--push needs a Hub repo (org/repo[@rev]), not {checkpoint!r}", code="DSP-E059",
                         hint="for a local folder use --out DIR or --in-place")
    return spec


def local_options_refused(dry_run_command: str) -> UsageError:
    """`dry_run_command`: the same fix as a `--dry-run`, which shows the plan without pushing."""
    return UsageError("--push writes nowhere locally: drop --out/--in-place/--dry-run", code="DSP-E059",
                      hint=f"`{dry_run_command}` shows the plan without pushing")


def is_hub_checkpoint(spec: str) -> bool:
    """A repo id fix should read from the Hub: `hf://...`, or `org/repo[@rev]` that is no local path (the rule check
    follows: sources/resolve.py `hub_repo`; a mistyped path such as `drafts/typo` or `org/x.json` is local)."""
    return hub_repo(spec) is not None


def materialize(source: HubSource) -> Path:
    """The files a repair reads (config, index, shards) at the checked commit, via the HF cache: its snapshot folder."""
    wanted = [n for n in (CONFIG_NAME, INDEX_NAME) if n in source.resolved.sizes] + source.safetensors_files()
    # SourceError (DSP-E05x, DSP-E09x): the push cannot go on; each download has its byte budget and deadline
    paths = {name: source.download(name) for name in wanted}
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


def create_pr(source: HubSource, folder: Path, diff: FileDiff, title: str, description: str,
               token: str | None) -> Any:
    """Open the pull request: one commit on the checked commit with exactly the changed and deleted files."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    from dspark_ckpt.sources.hub_deadline import deadline_scope, guard_session

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

    # The commit and its LFS uploads (huggingface_hub's own client, from a thread pool) end by one deadline that
    # grows with the bytes uploaded; guard_session() puts the deadline backend under that client.
    policy = source.client.policy.for_transfer(sum((folder / n).stat().st_size for n in diff.upload))
    guard_session()
    with deadline_scope(time.monotonic() + policy.deadline_s, every_thread=True):
        return with_hub_errors(source.spec, source.client, commit, policy)
