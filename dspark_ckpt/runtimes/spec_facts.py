"""What each vLLM release's SpeculativeConfig decides, as generated data read lazily.

The columns (the dataclass fields, the `method` Literal, the MTP types, the architectures the method detection
names, the dspark_draft_topk and adaptive-verification checks with their words, the target check of the methods fed
the target's aux hidden states (0.21 and older), the names EAGLEConfig keeps under dflash, and what registry.py
maps) are generated: `python tools/release_lines.py X.Y.Z` writes them to
`release_data/vllm-X.Y.Z/spec.json` with `ast` (tools/release_spec.py); a release's file is read once, on first use.
Every behaviour flag is derived from the release's generated citations (runtimes/vllm_release.py); what a change
means, in words, is tools/release_changes.py.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dspark_ckpt.runtimes.release_store import release_file
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

FILE_NAME = "spec.json"


@functools.cache
def _doc(release: str) -> Mapping[str, Any]:
    doc = release_file("vllm", release, FILE_NAME)
    if doc is None:
        raise KeyError(f"vLLM {release}: no release_data/vllm-{release}/{FILE_NAME} (python tools/release_lines.py "
                       f"{release})")
    return doc


def columns(release: str) -> dict[str, Any]:
    """ReleaseRules' generated columns for `release`: sets as frozensets, the detection lists as tuples."""
    spec = _doc(release)["speculative_config"]
    topk, adaptive, targets = spec.get("topk_arch"), spec.get("adaptive"), spec.get("aux_targets")
    return {"fields": frozenset(spec["fields"]), "methods": frozenset(spec["methods"]),
            "mtp_types": frozenset(spec["mtp_types"]), "dflash_detect_archs": tuple(spec["dflash_detect_archs"]),
            "dspark_detect_archs": tuple(spec["dspark_detect_archs"]),
            "topk_archs": tuple(topk["archs"]) if topk else None, "topk_arch_message": topk["message"] if topk else "",
            "adaptive_message": adaptive["message"] if adaptive else None,
            "adaptive_needs_argmax": bool(adaptive and adaptive["needs_argmax"]),
            "dflash_keep_extra": tuple(spec["dflash_keep"]),
            "method_specific_options": tuple(spec.get("method_specific_options", ())),
            "aux_target_methods": frozenset(targets["methods"]) if targets else frozenset(),
            "aux_targets": tuple(targets["supported"]) if targets else None,
            "aux_target_message": targets["message"] if targets else "",
            "method_options": tuple((m, frozenset(o)) for m, o in spec.get("method_options", {}).items())}


def drafts(release: str) -> Mapping[str, str]:
    """`_SPECULATIVE_DECODING_MODELS` of the release: draft architecture -> the class it builds."""
    found: Mapping[str, str] = _doc(release)["registry"]["drafts"]
    return found


@functools.cache
def draft_class(name: str) -> str | None:
    """The class `_SPECULATIVE_DECODING_MODELS` maps a draft name to, whichever release is asked: the newest listed
    release's that maps it (every release that maps a modelled name maps it to one class: test_focused_runtimes.py
    holds each to every release record's `registry`). None where no listed release maps it."""
    return next((cls for release in reversed(VLLM_RELEASES) if (cls := drafts(release).get(name)) is not None), None)


def drafting_token(release: str) -> Mapping[str, Any] | None:
    """What the release's proposer requires to start parallel drafting (tools/release_drafting_token.py, executed):
    the methods that turn it on and each function that resolves the masked slots' token id; None where the release
    has no parallel drafting, or no spec.json."""
    try:
        found: Mapping[str, Any] | None = _doc(release).get("drafting_token")
    except KeyError:
        return None
    return found


def document(release: str) -> Mapping[str, Any]:
    """The release's whole spec.json (`dspark-ckpt diff` compares two); KeyError where it has none."""
    return _doc(release)
