"""What a vLLM release's own first draft step did with the probe's vocabulary matrix, as
tools/probe_vllm_first_step.py recorded it by executing the release on CPU (`release_data/vllm-X/first_step.json`,
T = 96: EAGLE-3 Llama and Qwen3, DFlash, Qwen3 DSpark from 0.30.0; the EAGLE-3 families only on 0.22.0-0.29.0). A
draft whose vocabulary relation, shipped vocab tensors and family name a recorded cell that loaded and then raised
loads, then fails at the first draft step (DSP371), in the release's words with the cell's sizes written as the
draft's."""

from __future__ import annotations

import re
from typing import Any

from dspark_ckpt.runtimes.records import DraftFacts, Issue
from dspark_ckpt.runtimes.release_store import release_file

FILE = "first_step.json"
FAMILIES = ("eagle3-llama", "eagle3-qwen3", "dflash", "qwen3-dspark")
# the matrix's (V, D) per kind, at T = 96 (tools/probe_runtime.py KINDS)
KINDS = {"pruned": (96, 64), "equal": (96, 96), "padded": (128, 128), "expanded": (128, 96)}


def _document(release: str) -> dict[str, Any] | None:
    return release_file("vllm", release, FILE)


def kind(v: int, d: int, t: int) -> str | None:
    """The matrix's kind a draft's relation is: pruned (V = T > D), equal, padded (V = D > T), expanded (V > D = T)."""
    if v == t and d < t:
        return "pruned"
    if v == d == t:
        return "equal"
    if v == d and d > t:
        return "padded"
    if v > t and d == t:
        return "expanded"
    return None


def cell_name(family: str, f: DraftFacts) -> str | None:
    k = kind(f.vocab_size, f.draft_vocab_size, f.target_vocab_size)
    if family not in FAMILIES or k is None:
        return None
    return (f"{family}-{k}-lm{f.has_lm_head:d}-d2t{f.has_d2t:d}-t2d{f.has_t2d:d}-emb{f.has_embed:d}")


def _words(text: str, k: str, f: DraftFacts, t: int) -> str:
    """The cell's sizes (V, D, T of its kind) written as the draft's: each number the cell's V, D or T was."""
    v0, d0 = KINDS[k]
    sizes = {v0: f.vocab_size, d0: f.draft_vocab_size, t: f.target_vocab_size}
    return re.sub(r"\b\d+\b", lambda m: str(sizes.get(int(m.group()), m.group())), text)


def vllm_first_step(release: str, family: str, f: DraftFacts) -> Issue | None:
    """The recorded first-step failure of the cell this draft is, at its sizes; None where it ran, where the cell
    did not load, or where nothing was recorded (another release, family or relation)."""
    doc = _document(release)
    name = cell_name(family, f)
    seen = doc["cells"].get(name) if doc is not None and name is not None else None
    if seen is None or "load" in seen or name is None or doc is None:
        return None
    for anchor in ("capture", "last"):
        outcome = seen[anchor]
        if outcome != "ok":
            k = name.split("-lm")[0].rsplit("-", 1)[1]
            return Issue("DSP371", f"{outcome['raises']}: {_words(outcome['text'], k, f, doc['target_vocab'])}")
    return None
