"""What of a checkpoint folder may enter a fixed copy: every entry, scanned up front without following or opening one.

A link that leaves the checkpoint (other than an HF cache snapshot's links into its own blobs), a dangling or looping
link, and a FIFO, socket or device are refused before anything is created. What is accepted is recorded with its
inode, size and mtime, so the end of the fix can prove the copy was made from the files it scanned.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dspark_ckpt.errors import RepairError
from dspark_ckpt.repair.journal import OWN_NAMES
from dspark_ckpt.sources.local import hf_cache_blobs, is_in_hf_cache

_CACHE_REPO = re.compile(r"^(models|datasets|spaces)--.+")
_CACHE_PARTS = frozenset({"snapshots", "blobs", "refs"})
Stamp = tuple[int, int, int]  # (inode, size, mtime_ns)


def stamp(st: os.stat_result) -> Stamp:
    return st.st_ino, st.st_size, st.st_mtime_ns


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One entry of the checkpoint folder fix copies: a file, a folder or a link, with its stat."""

    rel: str  # path inside the checkpoint, with "/"
    kind: str  # "dir", "file" or "link" (a link to a folder inside the checkpoint, recreated as a relative link)
    real: str  # files: the path to read (links resolved); links: the relative link text
    st: os.stat_result  # of the file or folder itself (a link's target)


def in_hf_cache(path: Path) -> bool:
    """Inside a Hugging Face cache repo folder (snapshots, blobs or refs), on the resolved path as well as as given."""
    if is_in_hf_cache(path):
        return True
    parts = Path(os.path.realpath(path)).parts
    for i, part in enumerate(parts):
        if _CACHE_REPO.match(part):
            if i + 1 < len(parts) and parts[i + 1] in _CACHE_PARTS:
                return True
            if i + 1 == len(parts) and any(os.path.isdir(os.path.join(*parts, p)) for p in _CACHE_PARTS):
                return True
    return False


def _leaves(rel: str, target: str) -> RepairError:
    return RepairError(f"{rel} is a link that leaves the checkpoint ({target}); fix copies nothing from outside "
                       "the checkpoint and refuses rather than follow it; nothing was written", code="DSP-E075",
                       hint=f"replace {rel} by the file it points at, or remove it, then run fix again")


def special_file(rel: str) -> RepairError:
    return RepairError(f"{rel} is not a regular file (a FIFO, socket or device); fix does not open it and refuses "
                       "rather than copy it; nothing was written", code="DSP-E076",
                       hint=f"move {rel} out of the checkpoint, then run fix again")


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def scan(folder: Path) -> list[TreeEntry]:
    """Every entry under `folder` (the resolved checkpoint), parents before children; refusals raise."""
    root = os.path.realpath(folder)
    blobs = hf_cache_blobs(folder)
    roots = (root,) + ((os.path.realpath(blobs),) if blobs is not None else ())
    out: list[TreeEntry] = []
    _walk(Path(root), "", (root,), roots, out, top=True)
    return out


def _walk(folder: Path, prefix: str, inside: tuple[str, ...], readable: tuple[str, ...], out: list[TreeEntry],
          top: bool = False) -> None:
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if top and entry.name in OWN_NAMES:
            continue
        rel = prefix + entry.name
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            _link(entry, rel, inside, readable, out)
        elif stat.S_ISDIR(st.st_mode):
            out.append(TreeEntry(rel, "dir", entry.path, st))
            _walk(Path(entry.path), rel + "/", inside, readable, out)
        elif stat.S_ISREG(st.st_mode):
            out.append(TreeEntry(rel, "file", entry.path, st))
        else:
            raise special_file(rel)


def _link(entry: os.DirEntry[str], rel: str, inside: tuple[str, ...], readable: tuple[str, ...],
          out: list[TreeEntry]) -> None:
    target = os.path.realpath(entry.path)
    try:
        st = os.stat(target)
    except OSError:
        raise _leaves(rel, f"dangling or looping: {os.readlink(entry.path)}") from None
    if stat.S_ISDIR(st.st_mode):
        if not _inside(target, inside) or _inside(os.path.dirname(entry.path), (target,)):
            raise _leaves(rel, os.readlink(entry.path))  # outside, or a folder holding the link itself (a loop)
        out.append(TreeEntry(rel, "link", os.path.relpath(target, os.path.dirname(entry.path)), st))
    elif not _inside(target, readable):
        raise _leaves(rel, os.readlink(entry.path))
    elif stat.S_ISREG(st.st_mode):
        out.append(TreeEntry(rel, "file", target, st))
    else:
        raise special_file(rel)


def changed(entries: Iterable[TreeEntry]) -> list[str]:
    """Entries whose file is no longer the one scanned (replaced, rewritten, removed)."""
    gone = []
    for e in entries:
        if e.kind != "file":
            continue
        try:
            now = os.stat(e.real)
        except OSError:
            gone.append(e.rel)
            continue
        if stamp(now) != stamp(e.st):
            gone.append(e.rel)
    return gone
