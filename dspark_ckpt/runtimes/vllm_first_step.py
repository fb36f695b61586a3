"""What a vLLM release's own first draft step did with the probe's vocabulary matrix, as
tools/probe_vllm_first_step.py recorded it by executing the release on CPU (`release_data/vllm-X/first_step.json`,
T = 96: EAGLE-3 Llama and Qwen3 from 0.22.0, DFlash and Qwen3 DSpark where the release's loaders can be run, 0.26+;
nine relations of V and D to T where a file lists them, the first four in the files written before). A
draft whose vocabulary relation, shipped vocab tensors and family name a recorded cell that loaded and then raised
loads, then fails at the first draft step (DSP371), in the release's words with the cell's sizes written as the
draft's; one whose cell ran, ran; anything the recording does not hold (another release, family or relation of V, D
and T) is not modelled, and the answer says which (runtimes/step_reasons.py), never "ran"."""

from __future__ import annotations

import functools
import re
from typing import Any

from dspark_ckpt.runtimes.records import DraftFacts, FirstStep, Issue
from dspark_ckpt.runtimes.release_store import lined_entry, lined_head, lined_prefixed
from dspark_ckpt.runtimes.step_reasons import not_modelled

FILE = "first_step.json"
FAMILIES = ("eagle3-llama", "eagle3-qwen3", "dflash", "qwen3-dspark")
# The relations of (V, D) to T the probe records, at T = 96 (tools/probe_vllm_first_step.py builds one draft per
# relation and shipped subset): a draft is the relation whose comparisons V:T, D:T, V:D it shares. A file lists the
# relations it recorded ("relations"); the first files (schema 1) recorded the first four only.
RELATIONS: dict[str, tuple[int, int]] = {
    "pruned": (96, 64),  # V = T > D
    "equal": (96, 96),  # V = D = T
    "padded": (128, 128),  # V = D > T
    "expanded": (128, 96),  # V > D = T
    "pruned-both": (64, 64),  # V = D < T: a pruned draft with a pruned embedding
    "narrow-input": (64, 96),  # V < D = T: a pruned embedding, the full head
    "narrow-pruned": (48, 64),  # V < D < T
    "expanded-pruned": (128, 64),  # V > T > D
    "expanded-padded": (128, 112),  # V > D > T
}
SCHEMA_1 = ("pruned", "equal", "padded", "expanded")  # tools/probe_runtime.py KINDS


CELLS = "cells"  # the file's one-a-line mapping (release_store.lined_text): a run parses only the cells it asks for


def _head(release: str) -> dict[str, Any] | None:
    """The recording's fields but its cells (relations, target_vocab); None where the release was not run."""
    return lined_head("vllm", release, FILE, CELLS)


def _cell(release: str, name: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = lined_entry("vllm", release, FILE, CELLS, name)
    return found


@functools.lru_cache(maxsize=64)
def _families_run(release: str) -> frozenset[str]:
    """The families the release's recorded step ran (a cell's name starts with its family), read once per release."""
    return frozenset(family for family in FAMILIES if lined_prefixed("vllm", release, FILE, CELLS, f"{family}-"))


def _cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def signature(v: int, d: int, t: int) -> tuple[int, int, int]:
    """The comparisons V:T, D:T, V:D: what a relation is, whatever the sizes."""
    return _cmp(v, t), _cmp(d, t), _cmp(v, d)


def relation(v: int, d: int, t: int, recorded: tuple[str, ...] = tuple(RELATIONS)) -> str | None:
    """The recorded relation (at T = 96) a draft's (V, D, T) is, among `recorded`; None where none is."""
    want = signature(v, d, t)
    return next((k for k in recorded if signature(*RELATIONS[k], 96) == want), None)


def recorded_relations(doc: dict[str, Any]) -> tuple[str, ...]:
    return tuple(doc.get("relations") or SCHEMA_1)


def cell_name(family: str, f: DraftFacts, recorded: tuple[str, ...] = tuple(RELATIONS)) -> str | None:
    k = relation(f.vocab_size, f.draft_vocab_size, f.target_vocab_size, recorded)
    if family not in FAMILIES or k is None:
        return None
    return f"{family}-{k}-lm{f.has_lm_head:d}-d2t{f.has_d2t:d}-t2d{f.has_t2d:d}-emb{f.has_embed:d}"


def _words(text: str, k: str, f: DraftFacts, t: int) -> str:
    """The cell's sizes (V, D, T of its relation) written as the draft's: each number the cell's V, D or T was."""
    v0, d0 = RELATIONS[k]
    sizes = {v0: f.vocab_size, d0: f.draft_vocab_size, t: f.target_vocab_size}
    return re.sub(r"\b\d+\b", lambda m: str(sizes.get(int(m.group()), m.group())), text)


def first_step(release: str, family: str, f: DraftFacts) -> FirstStep:
    """What the release's recorded first step says of a draft that loads: it fails (DSP371, the cell's failure at
    the draft's sizes), it ran, or it is not modelled and why: no recording for the release, none of the family in
    it, or no recorded relation of V, D and T like the draft's."""
    doc = _head(release)
    if doc is None:
        return not_modelled("vllm-release-not-run")
    if family not in FAMILIES:
        return not_modelled("vllm-family-not-probed", family=family)
    if family not in _families_run(release):
        return not_modelled("vllm-family-not-run", family=family)
    name = cell_name(family, f, recorded_relations(doc))
    seen = _cell(release, name) if name is not None else None
    if name is None or seen is None:
        return not_modelled("vllm-relation-not-recorded", family=family,
                            relation=f"V = {f.vocab_size}, D = {f.draft_vocab_size}, T = {f.target_vocab_size}")
    if "load" in seen:  # the release refused the cell at load: check's own load model answers, not the step
        return not_modelled("vllm-cell-refused-at-load", family=family)
    for anchor in ("capture", "last"):
        outcome = seen[anchor]
        if outcome != "ok":
            k = name.removeprefix(f"{family}-").split("-lm")[0]
            text = f"{outcome['raises']}: {_words(outcome['text'], k, f, doc['target_vocab'])}"
            return FirstStep("fails", Issue("DSP371", text))
    return FirstStep("ran")

