"""`check DIR` where DIR is no checkpoint itself: the draft checkpoints below it, as `ruff check .` finds files.

A folder below DIR is a checkpoint when it holds a config.json and weights (a *.safetensors file or the shard
index); it is checked when its config names a draft (model/families.py `is_draft_config`) and skipped with a note
when it names a target model. The walk never follows a symbolic link, skips hidden folders and the usual caches,
stops descending into a checkpoint it found, and is bounded in depth and in the folders it visits, so a hostile
or huge tree cannot make it hang.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dspark_ckpt.formats.json_doc import Document, decode_document, read_bounded
from dspark_ckpt.model.families import target_architecture
from dspark_ckpt.sources.base import CONFIG_NAME, is_checkpoint_folder

MAX_DEPTH = 8
MAX_FOLDERS = 20_000
_SKIPPED_NAMES = frozenset({"__pycache__", "node_modules", "site-packages", "venv"})


@dataclass(frozen=True, slots=True)
class Discovery:
    """What a folder that is no checkpoint itself holds: the drafts to check and the notes about what was not."""

    drafts: tuple[str, ...]
    notes: tuple[str, ...]


def config_target(folder: Path) -> str | None:
    """The target architecture its config names, or None (a draft, or a config that check itself must judge)."""
    try:
        doc = decode_document(read_bounded(folder / CONFIG_NAME))
    except OSError:
        return None
    return target_architecture(doc.data) if isinstance(doc, Document) else None


def _subfolders(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries
                          if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                          and e.name not in _SKIPPED_NAMES)
    except OSError:
        return []


def discover(root: str) -> Discovery:
    """The draft checkpoints below `root`, in sorted path order, and a note for each target or limit met."""
    drafts: list[str] = []
    notes: list[str] = []
    queue: list[tuple[Path, int]] = [(Path(root), 0)]
    visited = 0
    while queue:
        folder, depth = queue.pop(0)
        visited += 1
        if visited > MAX_FOLDERS:
            notes.append(f"{root}: stopped looking after {MAX_FOLDERS} folders; name the drafts' folders instead")
            break
        if depth > 0 and is_checkpoint_folder(folder):
            target = config_target(folder)
            if target is None:
                drafts.append(str(folder))
            else:
                notes.append(f"skipped {folder}: its config names a target model ({target}), not a draft "
                             "(name the folder itself to check it anyway)")
            continue
        if depth < MAX_DEPTH:
            queue.extend((sub, depth + 1) for sub in _subfolders(folder))
    return Discovery(tuple(sorted(drafts)), tuple(notes))
