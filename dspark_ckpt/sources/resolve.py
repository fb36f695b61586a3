"""Turn a command-line checkpoint argument into a source: an existing local path wins, else a Hub repo id."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.sources.base import CheckpointSource, exists, is_dir
from dspark_ckpt.sources.local import local_source

if TYPE_CHECKING:
    from dspark_ckpt.sources.hub import RepoSpec


# A name shaped like a file or a nested path is a local path even when it does not exist: never a Hub repo id.
_FILE_SUFFIXES = (".json", ".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt", ".onnx", ".txt", ".yaml")
_SHOWN = 4  # entries of an existing folder a DSP-E010 hint names
_LISTED = 1000  # entries read to find the nearest one: a huge folder costs no more than this


def local_reason(spec: str, base: Path = Path()) -> str | None:
    """Why `spec`, which does not exist, is a local path all the same: it starts like one (`./`, `../`, `/`, `~`),
    holds a backslash, ends with `/`, names a file (`x.json`), has more than two parts, or its first part is a
    folder here (`drafts/typo`, relative to `base`). None: it may be a Hub repo id (`org/name`, or `hf://...`)."""
    if spec.startswith("hf://"):
        return None
    path = Path(spec)
    if spec.startswith((".", "/", "~")):
        return f"it starts with {spec[:2] if spec.startswith(('./', '~/', '..')) else spec[0]}"
    if "\\" in spec:
        return "it holds a backslash"
    if spec.endswith("/"):
        return "it ends with /"
    if path.suffix.lower() in _FILE_SUFFIXES:
        return f"it names a {path.suffix} file"
    if spec.partition("@")[0].count("/") > 1:  # a revision may hold slashes (`org/name@refs/pr/1`)
        return "it has more than two parts"
    if path.parent != Path(".") and is_dir(base / path.parent):
        return f"{path.parent}/ exists here"
    return None


def hub_repo(spec: str, base: Path = Path()) -> RepoSpec | None:
    """The Hub repo an argument names, without raising: `hf://...`, or an `org/repo[@rev]` that is no local path
    (it does not exist and `local_reason` has none). None: a local path, existing or not."""
    if exists(base / spec) and not spec.startswith("hf://"):
        return None
    if local_reason(spec, base) is not None:
        return None
    from dspark_ckpt.sources.hub import parse_repo_spec

    return parse_repo_spec(spec)


def hub_spec(spec: str, *, what: str = "checkpoint") -> RepoSpec | None:
    """Local paths first: None for an existing path; the RepoSpec of an unambiguous Hub repo id (`org/repo[@rev]`,
    or anything after hf://); and for a missing name shaped like a local path (`./x`, `~/x`, `a/b/`, `x.json`,
    `a/b/c`, or `drafts/typo` whose `drafts/` exists here) a DSP-E010 at once, without the network."""
    path = Path(spec)
    if exists(path):
        return None
    repo = hub_repo(spec)
    if repo is not None:
        return repo
    raise missing_path(spec, what=what)


def missing_path(spec: str, *, what: str = "checkpoint", base: Path = Path()) -> SourceError:
    """DSP-E010 for a local path that does not exist: why it was taken for one, and what is there instead."""
    from dspark_ckpt.sources.hub import parse_repo_spec

    reason = local_reason(spec, base)
    nearest = _nearest(spec, base)
    if reason is not None and parse_repo_spec(spec) is not None:
        message = f"{spec}: no such file or directory"
        hint = f"{reason}, so {spec} was taken for a local path; for the Hub repo write hf://{spec}"
    else:
        message = f"{spec}: no such file or directory, and not a Hub repo id"
        hint = _HINTS.get(what, _HINTS["checkpoint"])
    return SourceError(message, code="DSP-E010", hint=f"{hint}; {nearest}" if nearest else hint)


def _nearest(spec: str, base: Path) -> str | None:
    """What exists where the path was expected: the closest name in its folder (`did you mean drafts/typo2?`),
    else a few of that folder's entries; None where that folder does not exist either, or is `.` unnamed."""
    path = Path(spec)
    folder = base / path.parent
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name + ("/" if e.is_dir() else "") for _, e in zip(range(_LISTED), entries)
                           if not e.name.startswith("."))
    except (OSError, ValueError):
        return None
    import difflib  # here: only an error names the nearest entry

    close = difflib.get_close_matches(path.name, [n.rstrip("/") for n in names], n=1, cutoff=0.6)
    shown = spec[: spec.rstrip("/").rfind("/") + 1]  # the folder as the user wrote it (`./`, `drafts/`, or none)
    if close:
        return f"did you mean {shown}{close[0]}?"
    if not shown or not names:
        return None
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"{shown} holds {', '.join(names[:_SHOWN])}{more}"


_HINTS = {"checkpoint": "give a checkpoint folder, a .safetensors file (with --config), or org/repo[@rev]",
          "target": "give the target's folder, its config.json, or org/repo[@rev] (or --target-vocab-size N)"}


def tried_the_hub(exc: SourceError, spec: str) -> SourceError:
    """The Hub's error for a name that is no local path: say that both were tried."""
    if spec.startswith("hf://"):
        return exc
    return SourceError(f"{spec} is no local path, so the Hub was asked: {exc}", code=exc.code, hint=exc.hint)


def open_source(spec: str, *, config: Path | None = None, token: str | None = None) -> CheckpointSource:
    repo = hub_spec(spec)
    if repo is None:
        return local_source(Path(spec), config=config)
    if config is not None:
        raise UsageError("--config only applies to a local .safetensors file", code="DSP-E057",
                         hint="a Hub repo is read with its own config.json")
    from dspark_ckpt.sources.hub import open_hub

    try:
        return open_hub(repo, token=token)
    except SourceError as exc:
        raise tried_the_hub(exc, spec) from None


def source_notes(source: CheckpointSource) -> tuple[Finding, ...]:
    """What a remote source noticed about the transport (e.g. DSP701), for the checkpoint's findings."""
    return tuple(source.notes())


def with_source_notes(report: CheckpointReport, source: CheckpointSource) -> CheckpointReport:
    extra = source_notes(source)
    return dataclasses.replace(report, findings=report.findings + extra) if extra else report
