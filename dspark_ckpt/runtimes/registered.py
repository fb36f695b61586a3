"""Data: which architecture names each covered release registers, as a draft or as a (target) model.

Read from registered_architectures.json beside this module, which tools/registry_data.py generates from the released
wheels (vLLM: registry.py's `_SPECULATIVE_DECODING_MODELS` and the other tables spread into `_VLLM_MODELS`; SGLang:
every sglang/srt/models/*.py `EntryClass`), each entry with the wheel's file:line. Loaded on first use only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dspark_ckpt.runtimes.versions import SGLANG_RELEASES, VLLM_RELEASES

DATA = Path(__file__).with_name("registered_architectures.json")
RELEASES: dict[str, tuple[str, ...]] = {"vllm": VLLM_RELEASES, "sglang": SGLANG_RELEASES}


@dataclass(frozen=True, slots=True)
class Registration:
    """One release's entry for a name: a draft or a model, and where the wheel registers it."""

    runtime: str
    release: str
    kind: str  # "draft" or "model"
    where: str  # file:line inside the wheel

    @property
    def draft(self) -> bool:
        return self.kind == "draft"


def _expand(span: str, releases: tuple[str, ...]) -> tuple[str, ...]:
    first, _, last = span.partition("..")
    i = releases.index(first)
    return releases[i:releases.index(last) + 1] if last else (first,)


@cache
def _text() -> str:
    return DATA.read_text(encoding="utf-8")


@cache
def _section(runtime: str) -> tuple[int, int, tuple[str, ...]]:
    """Where the runtime's architectures lie in the file, and its releases. tools/registry_data.py writes one
    architecture per line (`  "Name": {...},`) under one line per runtime (`"vllm": {"releases": [...], ...`), so a
    lookup parses that name's line only, not the ~500 KB document (check's start-up: docs/architecture.md)."""
    text = _text()
    head = text.index(f'\n"{runtime}": ') + 1
    line_end = text.index("\n", head)
    releases = json.loads(text[text.index("[", head, line_end):text.index("]", head, line_end) + 1])
    later = text.find('\n"', line_end)
    return line_end, (later if later != -1 else len(text)), tuple(releases)


@cache
def _entries(runtime: str, name: str) -> dict[str, Registration]:
    """release -> the registration of one name, for one runtime (each name read on first use only: a check asks
    about a handful of the ~500 names)."""
    start, end, releases = _section(runtime)
    text = _text()
    needle = f"\n  {json.dumps(name)}: "
    at = text.find(needle, start, end)
    if at == -1:
        return {}
    stop = text.index("\n", at + 1)
    entry = json.loads(text[at + len(needle):stop].rstrip(","))
    return {release: Registration(runtime, release, entry["kind"], where)
            for span, where in entry["where"].items() for release in _expand(span, releases)}


def covered(runtime: str, release: str) -> bool:
    """Whether the data reads this release (a release outside it says nothing about registration)."""
    return release in RELEASES.get(runtime, ())


def registration(runtime: str, release: str, name: str) -> Registration | None:
    """The release's entry for the name; None where it registers no class of that name (or is not covered)."""
    if not covered(runtime, release):
        return None
    return _entries(runtime, name).get(release)


def registrations(name: str) -> tuple[Registration, ...]:
    """Every covered release that registers the name, vLLM's first, each in its list's order."""
    found: list[Registration] = []
    for runtime, releases in RELEASES.items():
        entries = _entries(runtime, name)
        found += [entries[r] for r in releases if r in entries]
    return tuple(found)


def predates(runtime: str, release: str, name: str | None) -> bool:
    """The release does not register `name`, and a later covered release of the runtime does: the architecture is
    newer than the release (vLLM 0.22 and Qwen3DSparkModel), not a mistake of the draft's."""
    if name is None or not covered(runtime, release) or registration(runtime, release, name) is not None:
        return False
    entries = _entries(runtime, name)
    releases = RELEASES[runtime]
    return any(r in entries for r in releases[releases.index(release) + 1:])


def names(runtime: str) -> tuple[str, ...]:
    """Every name some covered release of the runtime registers (the whole document parsed: tests, tools)."""
    return tuple(json.loads(_text())[runtime]["architectures"])
