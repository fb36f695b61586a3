"""How a runtime release's generated data is stored: behaviour files, shared between releases, and citations.

`release_data/<runtime>-<release>/` holds
- `release.json`: what the release registers and how its data was generated; `architectures` maps each registered
  draft architecture to the release whose folder holds its behaviour file: this one, or the earlier release whose
  class it behaves like (a release that changes nothing for a class stores no copy of it);
- `<Architecture>.json`: a class's behaviour, only where it is new in this release; every `where` in it names a file
  of the wheel, without its line;
- `citations.json`: the line of every `where` of every class of this release, in this release's wheel:
  architecture -> {pointer: line}, the pointer the `/`-joined path of the `where` in the behaviour file, one
  architecture a line;
- (vLLM) `lines.json` and `spec.json`, tools/release_lines.py's.
So a diff of two releases' behaviour files is what changed in behaviour, and line moves stay in citations.json.
Written by tools/release_layout.py (for tools/release_model.py and tools/sglang_release_model.py); read here.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "release_data"
RELEASE_FILE = "release.json"
CITATIONS_FILE = "citations.json"
WHERE = "where"
_CITED = r"(.+):(\d+)"  # a `where` with its line: `vllm/model_executor/layers/linear.py:408` (compiled on use)


def folder(runtime: str, release: str) -> Path:
    return DATA / f"{runtime}-{release}"


def at(prefix: str, key: str) -> str:
    """The pointer of `key` inside the object at `prefix` (`/` and `~` in a key escaped as in RFC 6901)."""
    part = key.replace("~", "~0").replace("/", "~1")
    return f"{prefix}/{part}" if prefix else part


def cite(where: Any, lines: Mapping[str, int], prefix: str) -> Any:
    """The `where` of the object at `prefix` with its line in this release, where the release has one."""
    line = lines.get(at(prefix, WHERE))
    return where if line is None else f"{where}:{line}"


def join(node: Any, lines: Mapping[str, int], prefix: str) -> Any:
    """A part of a behaviour file with the lines of every `where` in it (a copy; the shared file is not touched)."""
    if isinstance(node, Mapping):
        return {k: cite(v, lines, prefix) if k == WHERE else join(v, lines, at(prefix, k)) for k, v in node.items()}
    if isinstance(node, list):
        return [join(v, lines, at(prefix, str(i))) for i, v in enumerate(node)]
    return node


def split(node: Any, prefix: str = "", lines: dict[str, int] | None = None) -> tuple[Any, dict[str, int]]:
    """A record as the generator builds it (every `where` a `file:line`) -> (behaviour, citations): the same record
    with each `where` its file alone, and pointer -> line. join(behaviour, citations, "") is the record again."""
    found: dict[str, int] = {} if lines is None else lines
    if isinstance(node, Mapping):
        out = {}
        for k, v in node.items():
            cited = re.fullmatch(_CITED, v) if k == WHERE and isinstance(v, str) else None
            if cited is not None:
                out[k] = cited.group(1)
                found[at(prefix, WHERE)] = int(cited.group(2))
            else:
                out[k] = split(v, at(prefix, k), found)[0]
        return out, found
    if isinstance(node, list):
        return [split(v, at(prefix, str(i)), found)[0] for i, v in enumerate(node)], found
    return node, found


def citation_text(citations: Mapping[str, Mapping[str, int]]) -> str:
    """citations.json as written: one architecture a line, so that a run parses only the lines of the
    architectures it asks about (a release's file holds every class's lines: ~6,000 for vLLM 0.34)."""
    rows = [f"{json.dumps(name)}: {json.dumps(lines, separators=(',', ':'))}" for name, lines in citations.items()]
    return "{\n" + ",\n".join(rows) + "\n}\n"


@functools.cache
def _citation_file(runtime: str, release: str) -> bytes:
    path = folder(runtime, release) / CITATIONS_FILE
    return path.read_bytes() if path.is_file() else b"{}"


def citations(runtime: str, release: str, architecture: str) -> Mapping[str, int]:
    """pointer -> line of `architecture` in `runtime==release` (empty where it has none): its line of the file
    alone is decoded and parsed."""
    data = _citation_file(runtime, release)
    key = f"\n{json.dumps(architecture)}: ".encode()
    start = data.find(key)
    if start < 0:
        return {}
    start += len(key)
    end = data.find(b"\n", start)
    lines: Mapping[str, int] = json.loads(data[start:end].rstrip(b","))
    return lines


@functools.cache
def behaviour(runtime: str, holder: str, architecture: str) -> Mapping[str, Any] | None:
    """The behaviour file of `architecture` in `holder`'s folder, parsed once however many releases share it."""
    path = folder(runtime, holder) / f"{architecture}.json"
    if not path.is_file():
        return None
    doc: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


@functools.cache
def release_file(runtime: str, release: str, name: str) -> dict[str, Any] | None:
    """A per-release JSON file of `release`'s own folder (e.g. first_step.json), parsed once; None where absent."""
    path = folder(runtime, release) / name
    if not path.is_file():
        return None
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc
