"""Pure: the Hub's model_info answer -> the commit and its file sizes, every field distrusted before it is used."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from dspark_ckpt.formats.json_doc import JsonProblem, decode_document, json_type
from dspark_ckpt.model.codes import ErrorCode
from dspark_ckpt.sources.base import is_safe_relative
from dspark_ckpt.sources.hub_http import MALFORMED

COMMIT = re.compile(r"^[0-9a-f]{40}$")
BAD_COMMIT: Final[ErrorCode] = "DSP-E095"
MAX_NAME = 1024  # a repo path longer than this is not a real file name
_INVALID = object()


@dataclass(frozen=True, slots=True)
class Listing:
    """A Hub repo's file listing at one commit: sizes and LFS sha256s, and the entries it distrusted."""

    sha: str
    sizes: dict[str, int | None]  # None: the answer gave no usable size
    invalid: tuple[str, ...]  # what was wrong with each entry that was ignored or had its size dropped (DSP703)
    sha256: dict[str, str] = field(default_factory=dict)  # the LFS object's sha256 (64 hex digits), where given


@dataclass(frozen=True, slots=True)
class ListingProblem:
    """Why a Hub listing answer could not be used."""

    code: ErrorCode
    message: str  # completes "<repo>: ..."


def shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_listing(raw: bytes) -> Listing | ListingProblem:
    """sha must be 40 lowercase hex digits (it names cache folders); siblings a list of objects whose rfilename is a
    plain relative path inside the repo and whose size, when given, is a non-negative integer."""
    doc = decode_document(raw)
    if isinstance(doc, JsonProblem):
        return ListingProblem(MALFORMED, f"the Hub's model_info answer {doc.message}")
    sha = doc.data.get("sha")
    if not isinstance(sha, str) or not COMMIT.match(sha):
        what = "no commit sha" if sha is None else f"commit sha {shown(sha)}"
        return ListingProblem(BAD_COMMIT, f"the Hub's model_info answer gives {what}, not 40 hex digits; it names "
                                          "cache folders, so nothing was read or written")
    siblings = doc.data.get("siblings")
    if not isinstance(siblings, list):
        return ListingProblem(MALFORMED, f"the Hub's model_info answer has siblings {json_type(siblings)}, not the "
                                         "list of the commit's files")
    sizes: dict[str, int | None] = {}
    hashes: dict[str, str] = {}
    invalid: list[str] = []
    for i, sibling in enumerate(siblings):
        name = sibling.get("rfilename") if isinstance(sibling, dict) else None
        if not isinstance(name, str):
            invalid.append(f"entry {i} has no rfilename string")
        elif len(name) > MAX_NAME or not is_safe_relative(name):
            invalid.append(f"{shown(name)} is not a relative path inside the repo")
        else:
            size = _size(sibling)
            if size is _INVALID:
                invalid.append(f"{shown(name)} has size {shown(sibling.get('size'), 30)}, not a non-negative integer")
            sizes.setdefault(name, size if isinstance(size, int) else None)
            digest = _lfs_sha256(sibling)
            if digest is _INVALID:
                invalid.append(f"{shown(name)} has an LFS sha256 that is not 64 hex digits")
            elif isinstance(digest, str):
                hashes.setdefault(name, digest)
    return Listing(sha, sizes, tuple(invalid), hashes)


def _lfs_sha256(sibling: dict[str, Any]) -> object:
    """The LFS object's sha256 (what a download must hash to); None when the answer gives none, _INVALID when the
    value is not 64 hex digits."""
    lfs = sibling.get("lfs")
    value = lfs.get("sha256") if isinstance(lfs, dict) else None
    if value is None:
        return None
    return value.lower() if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{64}", value) else _INVALID


def _size(sibling: dict[str, Any]) -> object:
    """The file's size: `size`, else the LFS object's; None when the answer gives none, _INVALID when it is wrong."""
    value = sibling.get("size")
    if value is None:
        lfs = sibling.get("lfs")
        value = lfs.get("size") if isinstance(lfs, dict) else None
    if value is None:
        return None
    return value if type(value) is int and value >= 0 else _INVALID
