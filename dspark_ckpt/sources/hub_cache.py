"""What offline mode reads: HF cache refs/snapshots, plus the file listing and header bytes a Hub check fetched."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from urllib.parse import quote

from dspark_ckpt.formats.json_doc import Document, decode_document, read_bounded
from dspark_ckpt.sources.base import MAX_JSON_BYTES, is_safe_relative
from dspark_ckpt.sources.hub_ranges import RangedFile

_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")  # the only thing a cache folder is ever named after
LISTING = "files.json"
OFFLINE = "not in the local cache and HF_HUB_OFFLINE=1 is set"


def repo_cache(repo_id: str) -> Path:
    """The repo's folder in the HF hub cache (refs/, snapshots/, blobs/)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="model")


def own_cache(repo_id: str, sha: str) -> Path:
    """dspark-ckpt's own records for one commit, beside (not inside) the HF hub cache."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return Path(constants.HF_HOME) / "dspark-ckpt" / "hub" / repo_folder_name(repo_id=repo_id, repo_type="model") / sha


def _commit_folder(base: Path, sha: str) -> Path:
    """`base/sha`, refused unless sha is 40 hex digits: a server-given string never builds a path by itself."""
    if not _COMMIT.match(sha):
        raise OSError(f"refusing to use {sha[:60]!r} as a commit folder name (not 40 hex digits)")
    return base / sha


def _inside(folder: Path, name: str) -> Path:
    """`folder/name` for a plain relative name only (no `..`, no absolute path, no control character)."""
    if not is_safe_relative(name):
        raise OSError(f"refusing to use {name[:60]!r} as a path inside {folder.name}")
    return folder / name


def snapshot_file(repo_id: str, sha: str, name: str) -> Path:
    return _inside(_commit_folder(repo_cache(repo_id) / "snapshots", sha), name)


def store_snapshot_file(repo_id: str, sha: str, name: str, data: bytes) -> None:
    """A small file fetched at a commit, where hf_hub_download would put it (offline mode reads it there)."""
    with contextlib.suppress(OSError):
        path = snapshot_file(repo_id, sha, name)
        if not path.exists() and not path.is_symlink():
            _write_atomic(path, data)


def read_snapshot_file(repo_id: str, sha: str, name: str) -> bytes:
    """A small file from the cached snapshot (a link into blobs, as HF leaves it, or a file), read with a bound."""
    path = snapshot_file(repo_id, sha, name)
    if not path.exists():
        raise OSError(OFFLINE)
    return read_bounded(path, MAX_JSON_BYTES)


def _write_atomic(path: Path, data: bytes) -> None:
    """Temp file + os.replace; no fsync: these are cache hints (as HF's own refs are), and a reader that finds a
    torn one fails soft (an unparsable listing is ignored, a short header copy reads as 'not cached')."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remember(repo_id: str, revision: str | None, sha: str, sizes: dict[str, int | None]) -> None:
    """Record ref -> commit (as hf_hub_download does for a branch) and the commit's file sizes. Best effort; a
    revision or commit that is not a plain name is not written anywhere."""
    with contextlib.suppress(OSError):
        if revision != sha:
            _write_atomic(_inside(repo_cache(repo_id) / "refs", revision or "main"), sha.encode())
        _write_atomic(_commit_folder(own_cache(repo_id, "x").parent, sha) / LISTING,
                      json.dumps(sizes, sort_keys=True).encode())


def keep_prefix(repo_id: str, sha: str, name: str, prefix: bytes) -> None:
    if prefix and is_safe_relative(name):
        with contextlib.suppress(OSError):
            _write_atomic(_commit_folder(own_cache(repo_id, "x").parent, sha) / (quote(name, safe="") + ".head"),
                          prefix)


def _commit_for(repo_id: str, revision: str | None) -> str | None:
    rev = revision or "main"
    if is_safe_relative(rev) and (ref := repo_cache(repo_id) / "refs" / rev).is_file():
        sha = read_bounded(ref, 4096).decode("ascii", "replace").strip()
        return sha if _COMMIT.match(sha) else None
    if not _HEX.match(rev):
        return None
    known = {p.name for base in (repo_cache(repo_id) / "snapshots", own_cache(repo_id, "x").parent)
             if base.is_dir() for p in base.iterdir() if _COMMIT.match(p.name)}
    hits = [sha for sha in known if sha.startswith(rev)]
    return hits[0] if len(hits) == 1 else None


def _listing(path: Path) -> dict[str, int | None] | None:
    """The file list an online check recorded, or None when it is absent or not what we wrote."""
    if not path.is_file():
        return None
    doc = decode_document(read_bounded(path, MAX_JSON_BYTES))
    if not isinstance(doc, Document):
        return None
    return {k: v for k, v in doc.data.items()
            if is_safe_relative(k) and (v is None or type(v) is int and v >= 0)}


def lookup(repo_id: str, revision: str | None) -> tuple[str, dict[str, int | None], bool] | None:
    """(commit, file sizes, whether that list is the commit's complete one) from the cache alone, or None."""
    try:
        sha = _commit_for(repo_id, revision)
        if sha is None:
            return None
        sizes: dict[str, int | None] = {}
        listed = _listing(own_cache(repo_id, sha) / LISTING)
        complete = listed is not None
        sizes.update(listed or {})
        snapshot = repo_cache(repo_id) / "snapshots" / sha
        if snapshot.is_dir():
            for path in snapshot.rglob("*"):
                if path.is_file():
                    sizes.setdefault(path.relative_to(snapshot).as_posix(), path.stat().st_size)
        return (sha, sizes, complete) if sizes else None
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def open_cached(repo_id: str, sha: str, name: str, size: int) -> Iterator[IO[bytes]]:
    """The cached file if the snapshot holds it, else the header bytes an earlier online check kept."""
    full = snapshot_file(repo_id, sha, name)
    if full.is_file():
        with open(full, "rb") as f:
            yield f
        return
    head = _commit_folder(own_cache(repo_id, "x").parent, sha) / (quote(name, safe="") + ".head")
    if not head.is_file():
        raise OSError(OFFLINE)
    kept = read_bounded(head, 8 + 100_000_000)

    def from_kept(start: int, end: int) -> bytes:
        if end > len(kept):
            raise OSError(f"bytes {start}-{end - 1} are {OFFLINE} (only the header was kept)")
        return kept[start:end]

    yield RangedFile(from_kept, size, prefetch=len(kept))  # type: ignore[misc]
