"""What each vLLM release's SpeculativeConfig decides: the generated columns, read lazily, and the behaviour changes.

The mechanical columns (the dataclass fields, the `method` Literal, the MTP types, the architectures the method
detection names, and what registry.py maps) are generated: `python tools/release_lines.py X.Y.Z` writes them to
`release_data/vllm-X.Y.Z/spec.json` with `ast` (tools/release_spec.py); a release's file is read once, on first use.
A behaviour a generated citation shows is derived from it (runtimes/vllm_release.py: the release has the rule's
lines, or not). What has no such citation yet, or is a value, is `CHANGES`: each change holds from its `since`
release on, so a release newer than every change inherits the newest behaviour. Each names the lines.json
citations (runtimes/anchors.py) that appear or go away with it in that release; tests/unit/test_spec_facts.py holds
the two in step.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes.release_lines import DATA
from dspark_ckpt.runtimes.versions import release_key

FILE_NAME = "spec.json"


@functools.cache
def _doc(release: str) -> Mapping[str, Any]:
    path = DATA / f"vllm-{release}" / FILE_NAME
    if not path.is_file():
        raise KeyError(f"vLLM {release}: no release_data/vllm-{release}/{FILE_NAME} (python tools/release_lines.py "
                       f"{release})")
    doc: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def columns(release: str) -> dict[str, Any]:
    """ReleaseRules' generated columns for `release`: sets as frozensets, the detection lists as tuples."""
    spec = _doc(release)["speculative_config"]
    topk, adaptive = spec.get("topk_arch"), spec.get("adaptive")
    return {"fields": frozenset(spec["fields"]), "methods": frozenset(spec["methods"]),
            "mtp_types": frozenset(spec["mtp_types"]), "dflash_detect_archs": tuple(spec["dflash_detect_archs"]),
            "dspark_detect_archs": tuple(spec["dspark_detect_archs"]),
            "topk_archs": tuple(topk["archs"]) if topk else None, "topk_arch_message": topk["message"] if topk else "",
            "adaptive_message": adaptive["message"] if adaptive else None,
            "adaptive_needs_argmax": bool(adaptive and adaptive["needs_argmax"]),
            "dflash_keep_extra": tuple(spec["dflash_keep"])}


@functools.cache
def registry_names(release: str) -> frozenset[str]:
    """Every name a `_*_MODELS` dict of the release's registry.py maps."""
    return frozenset(_doc(release)["registry"]["names"])


def drafts(release: str) -> Mapping[str, str]:
    """`_SPECULATIVE_DECODING_MODELS` of the release: draft architecture -> the class it builds."""
    found: Mapping[str, str] = _doc(release)["registry"]["drafts"]
    return found


@dataclass(frozen=True, slots=True)
class Change:
    """Behaviour that holds from vLLM `since` on (until a later change), where it was read, and the lines.json
    citations that first appear (`appear`) or are gone (`gone`) in that release."""

    since: str
    values: Mapping[str, Any]
    where: str
    appear: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()


_SPEC = "vllm/config/speculative.py"
_TF = "vllm/transformers_utils/config.py"

# The first release read (0.27) is ReleaseRules' defaults; each later change, oldest first.
CHANGES: tuple[Change, ...] = (
    Change("0.28.0", {},
           f"{_SPEC} __post_init__: the dspark_block_size floor gone; dspark_draft_topk and adaptive verification",
           appear=("spec.topk_field", "spec.topk_method", "spec.topk_arch", "spec.adaptive"), gone=("spec.min_block",)),
    Change("0.29.0", {"speculators_dspark_keeps_arch": True, "speculators_merge": True, "speculators_dflash2": True},
           f"{_SPEC} __post_init__ (Qwen3 DSparkDraftModel, _validate_qwen3_omni_dspark); {_TF} "
           "maybe_override_with_speculators (the user's config merged over the speculators one); "
           "transformers_utils/configs/speculators/algos.py update_dspark (Qwen3(Omni)DSparkModel kept)",
           appear=("spec.qwen3_rename", "spec.qwen3_draft_detect", "spec.omni_call")),
    Change("0.30.0", {},
           f"{_SPEC} __post_init__: the deepseek_v41 DSpark rewrite; adaptive verification against "
           "use_local_argmax_reduction", appear=("spec.v41_rewrite",)),
    Change("0.31.0", {},
           f"{_SPEC} __post_init__: num_speculative_tokens defaults to block_size; vllm/transformers_utils/configs/"
           "eagle.py keeps LiLiCorrDraftModel under dflash", appear=("spec.block_default",),
           gone=("spec.gemma4_n_predict",)),
    Change("0.33.0", {},
           f"{_SPEC} (no medusa / mlp_speculator; every draft method's max_position_embeddings raised); {_TF} "
           "(a local verifier refused); vllm/config/vllm.py _limit_max_model_len_to_draft",
           appear=("spec.xpress", "spec.speculators_verifier", "spec.rope_cache_only", "spec.limit_to_draft"),
           gone=("spec.medusa_detect",)),
)


def behaviour(release: str) -> dict[str, Any]:
    """The behaviour columns that differ from ReleaseRules' defaults in `release`: every change up to it, in order."""
    key = release_key(release, precision=2)
    found: dict[str, Any] = {}
    for change in CHANGES:
        if release_key(change.since, precision=2) <= key:
            found.update(change.values)
    return found
