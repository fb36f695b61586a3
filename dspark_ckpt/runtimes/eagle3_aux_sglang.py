"""Pure: how each SGLang release reads an EAGLE-3 draft's aux hidden states (LlamaForCausalLMEagle3, the one EAGLE-3
class SGLang has for Llama and Qwen3 drafts alike): how many fc is sized for, and which target layers it is handed.

Read in every wheel 0.4.4.post2-0.5.23 (docs/upstream-notes.md sections 11 and 3.1, SGLang): `sglang/srt/models/llama_eagle3.py`
builds `fc = torch.nn.Linear(hidden_size_in * n, hidden_size)`, hidden_size_in = target_hidden_size if set, else
hidden_size; n is 3, fixed, through 0.5.11, and from 0.5.12 `num_aux_hidden_states`, then
len(eagle_config["eagle_aux_hidden_state_layer_ids"]), else 3 (the top-level list is never read). The target side
(model_runner.py, from 0.5.16 model_runner_components/spec_aux_hidden_state.py) reads only
`eagle_config["eagle_aux_hidden_state_layer_ids"]`, else None: the target's `[2, L // 2, L - 3]` (models/llama.py).
fc is a plain nn.Linear: a fc.weight of another shape fails default_weight_loader's assert (weight_utils.py).
0.4.4.post2-0.4.8 size fc for 3 the same way but their runner reads no ids at all (model_runner.py
`set_eagle3_layers_to_capture()`): the target always hands its default layers.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.eagle3_aux import NESTED, TOP, AuxRead, _count, _int
from dspark_ckpt.runtimes.release import resolve
from dspark_ckpt.runtimes.release_model import config_value
from dspark_ckpt.runtimes.release_store import DATA

RUNNER = "SGLang"  # the name AuxRead.runners gives SGLang's one model runner
COUNT_KEYS_FROM_0_5_12 = ("num_aux_hidden_states", NESTED)
_MODEL = "sglang/srt/models/llama_eagle3.py"
_LOADER = "sglang/srt/model_loader/weight_utils.py"
_DEFAULT = "sglang/srt/models/llama.py"


@dataclass(frozen=True, slots=True)
class SgLines:
    """Where one SGLang release reads each fact (line numbers in its wheel)."""

    width: int  # `self.hidden_size_in = config.target_hidden_size`
    count: int | None  # `getattr(config, "num_aux_hidden_states", None)`; None: n is the literal 3
    nested: int | None  # `eagle_config.get("eagle_aux_hidden_state_layer_ids")`
    fc: int  # `self.fc = torch.nn.Linear(`
    runner: str  # sglang/srt/model_executor/<runner>.py
    runner_line: int  # `eagle_config["eagle_aux_hidden_state_layer_ids"]` (or, reads_ids False, the bare call)
    assert_line: int  # default_weight_loader's `f"Attempted to load weight ..."`
    default: int  # `self.model.layers_to_capture = [2, num_layers // 2, num_layers - 3]`
    # 0.4.4.post2-0.4.8: the runner calls `set_eagle3_layers_to_capture()` with no ids: the target's default layers
    reads_ids: bool = True


FILE = "sglang_aux_lines.json"  # generated from each wheel: tools/sglang_aux_lines.py (no line typed by hand)


@functools.cache
def lines() -> Mapping[str, SgLines]:
    """Every listed release that registers LlamaForCausalLMEagle3 -> where it reads each fact, in release order
    (release_data/sglang_aux_lines.json); empty where the file cannot be read (then no release answers)."""
    try:
        doc = json.loads((DATA / FILE).read_text(encoding="utf-8"))
        return {release: SgLines(**row) for release, row in doc["releases"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _lines(release: str) -> tuple[str, SgLines]:
    """The lines of the release whose code answers for `release` (release.resolve: its own; a post release its
    base's, or the post release listed before it; the newest for a newer one; the oldest for an older one)."""
    table = lines()
    found = resolve("sglang", release, tuple(table))
    read = found.name if found is not None else next(reversed(table))
    return read, table[read]  # read_aux asks only with a table (an empty one: no aux facts)


def cite(release: str) -> str:
    read, ln = _lines(release)
    n = f"L{ln.count}-{ln.nested + 2} (n)" if ln.count and ln.nested else \
        f"L{ln.fc} (n = 3)" if ln.width == ln.fc else f"L{ln.fc + 1} (n = 3)"
    runner = "" if ln.reads_ids else " (set_eagle3_layers_to_capture() with no ids: the default layers)"
    return (f"{_MODEL} @ v{read} L{ln.width} (hidden_size_in), {n}, L{ln.fc} (fc); sglang/srt/model_executor/"
            f"{ln.runner}.py @ v{read} L{ln.runner_line}{runner}; {_DEFAULT} @ v{read} L{ln.default}; {_LOADER} @ "
            f"v{read} L{ln.assert_line} (default_weight_loader)")


def read_aux(raw: Mapping[str, Any], family: Family, release: str) -> AuxRead | None:
    """The aux-state facts of one SGLang release for the draft's config.json (SGLang converts nothing)."""
    if family not in (Family.EAGLE3_LLAMA, Family.EAGLE3_QWEN3) or not lines():
        return None
    read, ln = _lines(release)
    count: int | None = 3
    key: str | None = None
    if ln.count is not None:
        for name in COUNT_KEYS_FROM_0_5_12:
            value = config_value(raw, name)
            if (name == NESTED and value) or (name != NESTED and value is not None):
                count, key = _count(value), name
                break
    width_key = "target_hidden_size" if "target_hidden_size" in raw else "hidden_size"
    nested = config_value(raw, NESTED)
    runner = (RUNNER, NESTED, len(nested)) if ln.reads_ids and isinstance(nested, list | tuple) and nested \
        else (RUNNER, None, 3)
    written = tuple((name, n) for name in ("num_aux_hidden_states", "num_aux_layers", TOP, NESTED)
                    if (n := _count(config_value(raw, name))) is not None)
    return AuxRead(read, family, True, count, key, _int(raw.get(width_key)), width_key, _int(raw.get("hidden_size")),
                   written, (runner,), cite(release), runtime="sglang", fixed_count=ln.count is None)
