"""Pure: the set-aux-count repair of an EAGLE-3 draft: the config.json keys that make each release size fc for, and
hand fc, the aux layers the draft's list names, where fc.weight's width says that is what it was trained on.

The facts are runtimes/eagle3_aux.py's (docs/upstream-notes.md section 11): llama_eagle3.py sizes fc from
`num_aux_hidden_states` (never the top-level list), qwen3_eagle3.py from `num_aux_layers` first; both model runners
read the top-level list; the speculators conversion copies the top-level list but only the layer config's count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dspark_ckpt.runtimes.config_build import is_speculators
from dspark_ckpt.runtimes.records import DraftFacts

if TYPE_CHECKING:
    from dspark_ckpt.runtimes.eagle3_aux import AuxRead

# eagle3_aux.TOP (a test holds them equal): planning imports eagle3_aux.py only for a draft with aux facts
TOP = "eagle_aux_hidden_state_layer_ids"

COUNT = "num_aux_hidden_states"
FIRST_COUNT = "num_aux_layers"  # qwen3_eagle3.py reads it before num_aux_hidden_states
LAYER = "transformer_layer_config"  # a speculators config: update_eagle3 keeps only what is inside it
Edit = tuple[str, Any, Any]  # (top-level config.json key, old value, new value)


def layer_list(raw: Mapping[str, Any]) -> list[Any] | None:
    """The aux layer ids the draft names: the top-level list, else eagle_config's."""
    top = raw.get(TOP)
    if isinstance(top, list) and top:
        return top
    eagle = raw.get("eagle_config")
    nested = eagle.get(TOP) if isinstance(eagle, Mapping) else None
    return nested if isinstance(nested, list) and nested and not is_speculators(raw) else None


def _counts(section: Mapping[str, Any], n: int) -> dict[str, int]:
    """The count keys to write in `section` (config.json, or a speculators layer config) so every class reads n."""
    edits = {COUNT: n} if section.get(COUNT) != n else {}
    if FIRST_COUNT in section and section[FIRST_COUNT] != n:
        edits[FIRST_COUNT] = n
    return edits


def _wrong(reads: Sequence[AuxRead], n: int) -> bool:
    return any(r.count != n or any(count != n for _, _, count in r.runners) for r in reads)


def aux_edits(facts: DraftFacts) -> tuple[tuple[Edit, ...], str | None]:
    """The edits set-aux-count writes, or () and why it does not apply to this draft."""
    raw = facts.raw_config
    reads = [b.aux for b in facts.builds if b.aux is not None]
    if raw is None or not reads:
        return (), "the draft is not an EAGLE-3 head whose fc a release judged here builds"
    reads = [r for r in reads if r.fc_built]
    if not reads:
        return (), "eagle_config.use_aux_hidden_state is false: the release builds no fc"
    if facts.fc_shape is None:
        return (), "it ships no fc.weight whose width says how many aux layers it was trained on"
    ids = layer_list(raw)
    if ids is None:
        return (), (f"config.json names no aux layer list ({TOP}) whose length the count could be set to: re-export "
                    f"the draft with {TOP} (the training run's layer ids) at the top level")
    n, width, hidden = len(ids), reads[0].width, reads[0].hidden
    if width is None or hidden is None:
        return (), "hidden_size / target_hidden_size are not positive integers"
    if tuple(facts.fc_shape) != (hidden, width * n):
        got = ", ".join(map(str, facts.fc_shape))
        return (), (f"fc.weight is [{got}], not [{hidden}, {n} x {reads[0].width_key} {width}] for the {n} layers "
                    f"the aux layer list names: fc was not trained on that list, and which of the two is right "
                    "cannot be told from the checkpoint")
    if not _wrong(reads, n):
        return (), f"every release judged here already sizes fc for, and hands it, the {n} layers the list names"
    edits = _edits(raw, ids, n)
    return (edits, None) if edits else ((), f"config.json already sets {COUNT} = {n} and the list where it is read")


def _edits(raw: Mapping[str, Any], ids: list[Any], n: int) -> tuple[Edit, ...]:
    if is_speculators(raw):  # update_eagle3 copies the top-level list, and a count only inside the layer config
        layer = raw.get(LAYER)
        old = dict(layer) if isinstance(layer, Mapping) else {}
        counts = _counts(old, n)
        return ((LAYER, layer, {**old, **counts}),) if counts else ()
    out: list[Edit] = [(key, raw.get(key), value) for key, value in _counts(raw, n).items()]
    if raw.get(TOP) != ids:  # only in eagle_config: vLLM's model runner V2 never reads it there
        out.append((TOP, raw.get(TOP), list(ids)))
    eagle = raw.get("eagle_config")
    if not isinstance(eagle, Mapping) or eagle.get(TOP) != ids:  # SGLang's runner reads only eagle_config's list
        old = dict(eagle) if isinstance(eagle, Mapping) else {}
        out.append(("eagle_config", eagle, {**old, TOP: list(ids)}))
    return tuple(out)

