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
from typing import Any

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
def _doc() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def _entries(runtime: str, name: str) -> dict[str, Registration]:
    """release -> the registration of one name, for one runtime (each name expanded on first use only: a check
    asks about a handful of the ~500 names)."""
    doc = _doc()[runtime]
    entry = doc["architectures"].get(name)
    if entry is None:
        return {}
    releases = tuple(doc["releases"])
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
    """Every name some covered release of the runtime registers."""
    return tuple(_doc()[runtime]["architectures"])
