"""The generated citations of each vLLM release: where each rule is in its wheel's files, read lazily.

`release_data/vllm-X.Y.Z/lines.json` is written by `python tools/release_lines.py X.Y.Z`, which resolves the
anchors of `tools/release_anchors.py` against that release's wheel (never edited by hand). Each key (`spec.detect`,
`omni.block`, `build.expected`, `algos.dspark`, `aux.runner`, `registry.Qwen3DSparkModel`) holds the file and its
lines (`L12`, `L12-34`, `L1, L7`); a rule the release does not have is absent. A release's file is read once, on
first use.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from dspark_ckpt.runtimes.release_store import release_file

FILE_NAME = "lines.json"


@functools.cache
def lines(release: str) -> Mapping[str, tuple[str, str]]:
    """key -> (file, lines) for one release; empty for a release without a lines.json."""
    doc = release_file("vllm", release, FILE_NAME) or {}
    return {key: (entry["file"], entry["lines"]) for key, entry in doc.items()}


def cited(release: str, key: str) -> tuple[str, str] | None:
    """(file, lines) of `key` in `release`, None where the release does not have it."""
    return lines(release).get(key)


def first_line(release: str, key: str) -> int | None:
    """The first line number `key` cites in `release` (`L12-34` -> 12), None where the release does not have it."""
    found = cited(release, key)
    return None if found is None else int(found[1].split("-", 1)[0].split(",", 1)[0].removeprefix("L"))


def span(release: str, key: str) -> tuple[int, int]:
    """(first, last) line of a one-range citation (`L12` -> (12, 12)); KeyError where the release has none."""
    found = cited(release, key)
    if found is None:
        raise KeyError(f"{key} @ v{release}")
    first, _, last = found[1].removeprefix("L").partition("-")
    return int(first), int(last or first)


@functools.cache  # ReleaseRules asks for the speculators types and kept architectures at every build
def keys(prefix: str, release: str) -> tuple[str, ...]:
    """The names under `prefix.` that `release` cites, in the order of their first line (`algos`: the speculators
    types its algos.py registers, in file order)."""
    found = [(first_line(release, k) or 0, k[len(prefix) + 1:]) for k in lines(release) if k.startswith(f"{prefix}.")]
    return tuple(name for _, name in sorted(found))
