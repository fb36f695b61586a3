"""Pure: whether a vLLM release's proposer starts parallel drafting with this draft's config (DSP373).

DFlash and DSpark draft every query slot of a block at once, and feed the masked ones a token id that the draft's
config names. The release's proposer resolves it from the hf_config when the engine builds its model runner, before
any weight is loaded, and refuses a config that names none (or, in Model Runner V2, one whose first key it takes is
null). tools/release_drafting_token.py executed the release's own functions that do it (the V1 proposer's
`_init_parallel_drafting_params`, Model Runner V2's `get_parallel_drafting_token_id`) and recorded, in spec.json's
`drafting_token`: the keys each takes, in its order, what a null one does, its refusal in its words, and the methods
that turn parallel drafting on. Which runner a deployment gets depends on the release and the features it
supports, so the draft is refused only where every function the release ships refuses it; the words are each one's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dspark_ckpt.runtimes import spec_facts
from dspark_ckpt.runtimes.records import Issue

CODE = "DSP373"


def _lookup(hf: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """Whether the hf_config holds `key` (`section.entry` inside a dict section), and its value."""
    head, _, sub = key.partition(".")
    section, leaf = (hf.get(head), sub) if sub else (hf, head)
    if not isinstance(section, Mapping):
        return False, None
    return leaf in section, section.get(leaf)


def _refusal(resolver: Mapping[str, Any], hf: Mapping[str, Any]) -> Mapping[str, str] | None:
    """What one recorded function does with the config: None where it resolves an id, else its raise."""
    for entry in resolver["order"]:
        present, value = _lookup(hf, entry["key"])
        if not present or (value is None and entry["null"] == "skipped"):
            continue
        if value is not None or entry["null"] == "taken":
            return None
        refused: Mapping[str, str] = entry["null"]
        return refused
    none: Mapping[str, str] = resolver["none"]
    return none


def refusal(release: str, method: str | None, parallel: bool,
            hf: Mapping[str, Any] | None) -> tuple[Issue, str] | None:
    """DSP373, and where the release says it (each function's file:line), where `release` runs parallel drafting for
    this draft (its method turns it on, or the config or a conversion sets `parallel_drafting`) and every recorded
    function refuses its hf_config; None otherwise."""
    record = spec_facts.drafting_token(release)
    if record is None or hf is None or not (method in record["methods"] or parallel):
        return None
    refusals = [(r, seen) for r in record["resolvers"] if (seen := _refusal(r, hf)) is not None]
    if not refusals or len(refusals) < len(record["resolvers"]):
        return None
    texts = list(dict.fromkeys(f"{seen['raises']}: {seen['message']}" for _, seen in refusals))
    where = "; ".join(f"{r['file']}:{r['line']} ({r['function']})" for r, _ in refusals)
    # the runners' words differ (V1's, then V2's): both, so that whichever the deployment gets is quoted
    text = texts[0] if len(texts) == 1 else f"{texts[0]} Model Runner V2: {texts[1]}"
    return Issue(CODE, text), f"refused by {where} @ {release}"
