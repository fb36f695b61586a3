"""Hooks judge what is committed: the checkpoint files a hook would read that the commit would not hold."""

from __future__ import annotations

import subprocess
from pathlib import Path

from dspark_ckpt.errors import UsageError
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME


def _git(folder: str, *args: str) -> list[str] | None:
    """`git -z` names, run in the folder; None outside a work tree or without git."""
    try:
        done = subprocess.run(["git", *args, "-z", "--", "."], cwd=folder, capture_output=True, timeout=60,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n]


def _checkpoint_file(name: str) -> bool:
    """A file check reads from the folder itself (not one in a sub-folder)."""
    return "/" not in name and (name.endswith(".safetensors") or name in (INDEX_NAME, CONFIG_NAME))


def not_staged(folders: list[str]) -> list[str]:
    """Checkpoint files in the folders that are untracked, or differ from what is staged: what the hook would read
    is not what the commit holds (a d2t shard and an index fix-safe wrote, before `git add`). pre-commit stashes
    unstaged changes of tracked files before its hooks run, so there only untracked files remain."""
    found: list[str] = []
    for folder in folders:
        untracked = _git(folder, "ls-files", "--others", "--exclude-standard")
        if untracked is None:
            continue
        modified = _git(folder, "diff", "--name-only", "--relative") or []
        found += [str(Path(folder) / n) for n in dict.fromkeys([*untracked, *modified]) if _checkpoint_file(n)]
    return found


def refuse_not_staged(folders: list[str]) -> None:
    """DSP-E014 when a hook's checkpoint folder holds checkpoint files the commit would not hold."""
    files = not_staged(folders)
    if files:
        shown = ", ".join(files[:6]) + (f" and {len(files) - 6} more" if len(files) > 6 else "")
        raise UsageError(f"{shown}: not staged, so the commit would not hold what would be checked (a file fix "
                         "wrote, or an edit not added)", code="DSP-E014",
                         hint="stage them (`git add -- " + " ".join(sorted({str(Path(f).parent) for f in files}))
                              + "`) or remove them, then commit again")
