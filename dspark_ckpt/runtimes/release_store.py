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
- (vLLM) `lines.json` and `spec.json`, tools/release_lines.py's; `first_step.json`, tools/probe_vllm_first_step.py's,
  its cells one a line (lined_text), as citations.json holds an architecture a line: a run parses only what it asks.
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


def entry_rows(entries: Mapping[str, Any], *, sort_keys: bool = False) -> str:
    """A mapping's entries one a line (`"name": <compact JSON>`), so that a reader parses only the lines it asks for
    (entry); the rows of citation_text and lined_text."""
    return ",\n".join(f"{json.dumps(name)}: {json.dumps(value, sort_keys=sort_keys, separators=(',', ':'))}"
                       for name, value in entries.items())


def citation_text(citations: Mapping[str, Mapping[str, int]]) -> str:
    """citations.json as written: one architecture a line, so that a run parses only the lines of the
    architectures it asks about (a release's file holds every class's lines: ~6,000 for vLLM 0.34)."""
    return "{\n" + entry_rows(citations) + "\n}\n"


def lined_text(doc: Mapping[str, Any], key: str) -> str:
    """A JSON document whose `key` (a mapping, written last) holds one entry a line and the rest indented: a run
    parses the rest and only the entries it asks for (lined_head, lined_entry), e.g. vLLM's first_step.json cells."""
    head = json.dumps({k: v for k, v in doc.items() if k != key}, indent=1, sort_keys=True)
    return f"{head[:-2]},\n {json.dumps(key)}: {{\n{entry_rows(dict(sorted(doc[key].items())), sort_keys=True)}\n}}\n}}\n"


def entry(data: bytes, name: str, start: int = 0) -> Any | None:
    """The entry `name` of a mapping written by entry_rows inside `data` past `start` (None where absent): its line
    alone is decoded and parsed."""
    key = f"\n{json.dumps(name)}: ".encode()
    start = data.find(key, start)
    if start < 0:
        return None
    start += len(key)
    end = data.find(b"\n", start)
    return json.loads(data[start:end].rstrip(b","))


def read_data(path: Path) -> bytes | None:
    """A generated data file's bytes (None where it does not exist): one open, no stat before it."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


@functools.cache
def _file(runtime: str, release: str, name: str) -> bytes | None:
    """A file of `release`'s folder read whole once: its lines are parsed on demand (entry, lined_entry)."""
    return read_data(folder(runtime, release) / name)


def citations(runtime: str, release: str, architecture: str) -> Mapping[str, int]:
    """pointer -> line of `architecture` in `runtime==release` (empty where it has none): its line of the file
    alone is decoded and parsed."""
    found: Mapping[str, int] | None = entry(_file(runtime, release, CITATIONS_FILE) or b"", architecture)
    return found or {}


@functools.cache
def _lined(runtime: str, release: str, name: str, key: str) -> tuple[bytes, int] | None:
    """A lined_text document read once, and where its `key` entries begin (None where the release has no such
    file)."""
    data = _file(runtime, release, name)
    if data is None:
        return None
    at_key = data.rfind(f"\n {json.dumps(key)}: {{\n".encode())
    if at_key < 0:
        raise ValueError(f"{folder(runtime, release) / name}: not a lined document of {key!r}")
    return data, at_key


@functools.cache
def lined_head(runtime: str, release: str, name: str, key: str) -> dict[str, Any] | None:
    """A lined_text document's fields but `key` (None where the release has no such file)."""
    found = _lined(runtime, release, name, key)
    if found is None:
        return None
    data, at_key = found
    head: dict[str, Any] = json.loads(data[:at_key].rstrip(b",") + b"\n}")
    return head


def lined_prefixed(runtime: str, release: str, name: str, key: str, prefix: str) -> bool:
    """Whether an entry of a lined_text document's `key` has a name that starts with `prefix` (no line is parsed)."""
    found = _lined(runtime, release, name, key)
    return found is not None and found[0].find(b'\n"' + json.dumps(prefix)[1:-1].encode(), found[1]) >= 0


def lined_entry(runtime: str, release: str, name: str, key: str, entry_name: str) -> Any | None:
    """One entry of a lined_text document's `key` (None where absent): its line alone is parsed."""
    found = _lined(runtime, release, name, key)
    if found is None:
        return None
    data, at_key = found
    return entry(data, entry_name, at_key)


@functools.cache
def behaviour(runtime: str, holder: str, architecture: str) -> Mapping[str, Any] | None:
    """The behaviour file of `architecture` in `holder`'s folder, parsed once however many releases share it."""
    data = read_data(folder(runtime, holder) / f"{architecture}.json")
    doc: Mapping[str, Any] | None = json.loads(data) if data is not None else None
    return doc


@functools.cache
def release_file(runtime: str, release: str, name: str) -> dict[str, Any] | None:
    """A per-release JSON file of `release`'s own folder (e.g. first_step.json), parsed once; None where absent."""
    data = read_data(folder(runtime, release) / name)
    doc: dict[str, Any] | None = json.loads(data) if data is not None else None
    return doc
