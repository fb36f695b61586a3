"""What each vLLM release's SpeculativeConfig decides, as generated data read lazily, and the changelog beside it.

The columns (the dataclass fields, the `method` Literal, the MTP types, the architectures the method detection
names, the dspark_draft_topk and adaptive-verification checks with their words, the names EAGLEConfig keeps under
dflash, and what registry.py maps) are generated: `python tools/release_lines.py X.Y.Z` writes them to
`release_data/vllm-X.Y.Z/spec.json` with `ast` (tools/release_spec.py); a release's file is read once, on first use.
Every behaviour flag is derived from the release's generated citations (runtimes/vllm_release.py: the release has
the rule's lines, or not). What execution and reading cannot say is what a change means: `CHANGES`, one entry per
release where behaviour changed, in words, naming the lines.json citations (runtimes/anchors.py) that appear or go
away with it; tests/unit/test_spec_facts.py holds the two in step.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes.release_lines import DATA

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
    """What changed in vLLM `since`, in words, where it was read, and the lines.json citations that first appear
    (`appear`) or are gone (`gone`) in that release: the flags of ReleaseRules that follow from them."""

    since: str
    where: str
    appear: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()


_SPEC = "vllm/config/speculative.py"
_TF = "vllm/transformers_utils/config.py"

# Each release after the first one read (0.27) whose behaviour changed, oldest first.
CHANGES: tuple[Change, ...] = (
    Change("0.28.0",
           f"{_SPEC} __post_init__: the dspark_block_size floor gone; dspark_draft_topk and adaptive verification",
           appear=("spec.topk_field", "spec.topk_method", "spec.topk_range", "spec.topk_arch", "spec.adaptive"),
           gone=("spec.min_block",)),
    Change("0.29.0",
           f"{_SPEC} __post_init__ (Qwen3 DSparkDraftModel, _validate_qwen3_omni_dspark, index_share_for_mtp_iteration "
           f"only with mtp); {_TF} "
           "maybe_override_with_speculators (the user's config merged over the speculators one); "
           "transformers_utils/configs/speculators/algos.py update_dspark (Qwen3(Omni)DSparkModel kept)",
           appear=("spec.qwen3_rename", "spec.qwen3_draft_detect", "spec.omni_call", "spec.index_share",
                   "spec.speculators_merge",
                   "spec.speculators_dflash2", "spec.speculators_keep_arch")),
    Change("0.30.0",
           f"{_SPEC} __post_init__: the deepseek_v41 DSpark rewrite; adaptive verification against "
           "use_local_argmax_reduction", appear=("spec.v41_rewrite",)),
    Change("0.31.0",
           f"{_SPEC} __post_init__: num_speculative_tokens defaults to block_size; vllm/transformers_utils/configs/"
           "eagle.py keeps LiLiCorrDraftModel under dflash", appear=("spec.block_default",),
           gone=("spec.gemma4_n_predict",)),
    Change("0.33.0",
           f"{_SPEC} (no medusa / mlp_speculator; every draft method's max_position_embeddings raised); {_TF} "
           "(a local verifier refused); vllm/config/vllm.py _limit_max_model_len_to_draft",
           appear=("spec.xpress", "spec.speculators_verifier", "spec.rope_cache_only", "spec.limit_to_draft"),
           gone=("spec.medusa_detect",)),
)

