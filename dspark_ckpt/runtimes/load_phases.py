"""Pure: the order a release's load_weights meets a checkpoint's tensors where the sorted names alone do not say it
(hand-read: the probe judges one tensor at a time, so no record sees two raise and which comes first).

By default a loader meets the names sorted (safetensors lists a file's names sorted, and load_weights walks them in
turn): that is the landing's load order (runtimes/landing.py) and the order a hand-read error of one tensor is
weighed against the record's (release_verdict.raised_before).

SGLang's DSpark drafts load in buckets: DSparkDraftMixin.load_weights (models/dspark.py L397-428 @ 0.5.16,
L627-665 @ 0.5.23) sets aside the names that start `markov_head.` and `confidence_head.` (the raw name: a
`model.markov_head.*` stays with the backbone), loads the backbone (DFlashDraftModel.load_weights), then the Markov
head, then the confidence head. So a mis-shaped backbone tensor is raised before any Markov one, whatever the names.
Lfm2DSparkDraftModel (models/lfm2_dspark.py, 0.5.19+) and LingDSparkModel inherit it; DSparkMiniMaxDraftModel
(models/dspark_minimax.py L270 @ 0.5.23) has a one-pass loader of its own, so it is not listed.
"""

from __future__ import annotations

_DSPARK_BUCKETS = ("markov_head.", "confidence_head.")

# (runtime, architecture) -> the name prefixes its load_weights loads after the rest, in that order
BUCKETS: dict[tuple[str, str], tuple[str, ...]] = {
    ("sglang", arch): _DSPARK_BUCKETS
    for arch in ("Qwen3DSparkModel", "DSparkDraftModel", "LingDSparkModel", "Lfm2DSparkDraftModel")
}


def phase(runtime: str, architecture: str, name: str) -> int:
    """Which of the loader's passes meets the tensor `name`: 0 the first (the backbone), then one per bucket."""
    buckets = BUCKETS.get((runtime, architecture), ())
    return next((i for i, prefix in enumerate(buckets, 1) if name.startswith(prefix)), 0)


def position(runtime: str, architecture: str, name: str) -> tuple[int, str]:
    """Where the loader meets `name`: tensors compare in load order by this key."""
    return phase(runtime, architecture, name), name
