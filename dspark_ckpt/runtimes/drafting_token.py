"""Pure: whether a vLLM release's proposer starts parallel drafting with this draft's config (DSP373).

DFlash and DSpark draft every query slot of a block at once, and feed the masked ones a token id that the draft's
config names. The release's proposer resolves it from the hf_config when the engine builds its model runner, before
any weight is loaded, and refuses a config that names none (or, in Model Runner V2, one whose first key it takes is
null, or one whose value `int()` refuses). tools/release_drafting_token.py executed the release's own functions that
do it (the V1 proposer's `_init_parallel_drafting_params`, Model Runner V2's `get_parallel_drafting_token_id`) and
recorded, in spec.json's `drafting_token`: the keys each takes, in its order, what it does with each kind of value
(null, a text, a fraction, a list, ...), its refusal in its words, where the release calls it, and the methods that
turn parallel drafting on. A function runs for a draft where its method turns parallel drafting on, or, for the one
the proposer calls on the speculative config's own `parallel_drafting` flag (V1's), where a deploy or a conversion
sets it (P-EAGLE: Model Runner V2 does not run parallel drafting for EAGLE). Which runner a deployment gets depends
on the release and the features it supports, so the draft is refused only where every function that runs for it
refuses it; the words are each one's. A value of a kind the functions were not fed (a string mixing digits with
other characters, ...) is not judged.
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


def kind(value: Any) -> str | None:
    """The kind of a config value, as tools/release_drafting_token.py's VALUES name them ("id" for a token id the
    functions take as it is); None for a kind they were not fed."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "negative" if value < 0 else "id"
    if isinstance(value, float):
        return "whole_float" if value.is_integer() else "fraction"
    if isinstance(value, str):
        if value.isascii() and value.isdigit():
            return "digits"
        return "text" if not any(c.isdigit() for c in value) else None
    return "list" if isinstance(value, list) else "object" if isinstance(value, Mapping) else None


SAMPLE_TEXT = "mask"  # the text tools/release_drafting_token.py feeds (VALUES["text"]), quoted by int()'s refusal


def _in_words(refused: Mapping[str, str], value: Any) -> Mapping[str, str]:
    """The function's words at the draft's own value where they quote the text it was fed (int()'s "invalid
    literal ... 'mask'")."""
    if not isinstance(value, str):
        return refused
    return {**refused, "message": refused["message"].replace(repr(SAMPLE_TEXT), repr(value))}


def _refusal(resolver: Mapping[str, Any], hf: Mapping[str, Any]) -> Mapping[str, str] | None:
    """What one recorded function does with the config: its raise; None where it resolves an id, or where the value
    is of a kind it was not fed (not judged)."""
    for entry in resolver["order"]:
        present, value = _lookup(hf, entry["key"])
        if not present:
            continue
        seen = kind(value)  # None: a kind never fed, which no entry of `values` holds
        done = "taken" if seen == "id" else entry["values"].get(seen)
        if done == "skipped":
            continue
        return _in_words(done, value) if isinstance(done, Mapping) else None
    none: Mapping[str, str] = resolver["none"]
    return none


def _runs(resolver: Mapping[str, Any], by_method: bool, parallel: bool) -> bool:
    """Whether the release calls this function for the draft: every one where its method turns parallel drafting on;
    the one called on the flag (V1's proposer) where only the flag is set."""
    return by_method or (parallel and bool(resolver["called"]["on_flag"]))


def refusal(release: str, method: str | None, parallel: bool,
            hf: Mapping[str, Any] | None) -> tuple[Issue, str] | None:
    """DSP373, and where the release says it (each function's file:line), where `release` runs parallel drafting for
    this draft (its method turns it on, or a deploy, the config or a conversion sets `parallel_drafting`) and every
    recorded function that runs for it refuses its hf_config; None otherwise."""
    record = spec_facts.drafting_token(release)
    if record is None or hf is None:
        return None
    running = [r for r in record["resolvers"] if _runs(r, method in record["methods"], parallel)]
    refusals = [(r, seen) for r in running if (seen := _refusal(r, hf)) is not None]
    if not running or len(refusals) < len(running):
        return None
    texts = list(dict.fromkeys(f"{seen['raises']}: {seen['message']}" for _, seen in refusals))
    where = "; ".join(f"{r['file']}:{r['line']} ({r['function']})" for r, _ in refusals)
    # the runners' words differ (V1's, then V2's): both, so that whichever the deployment gets is quoted
    text = texts[0] if len(texts) == 1 else f"{texts[0]} Model Runner V2: {texts[1]}"
    return Issue(CODE, text), f"refused by {where} @ {release}"
