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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.eagle3_aux import NESTED, TOP, AuxRead, _count, _int
from dspark_ckpt.runtimes.release import resolve
from dspark_ckpt.runtimes.release_model import config_value

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


_RUNNER, _COMPONENTS = "model_runner", "model_runner_components/spec_aux_hidden_state"
LINES: dict[str, SgLines] = {
    # 0.4.4.post2-0.4.8: fc = Linear(target_hidden_size * 3 if set else hidden_size * 3) on one line (width = fc)
    "0.4.4.post2": SgLines(109, None, None, 109, _RUNNER, 213, 531, 630, reads_ids=False),
    "0.4.5": SgLines(109, None, None, 109, _RUNNER, 223, 534, 641, reads_ids=False),
    "0.4.6": SgLines(109, None, None, 109, _RUNNER, 229, 536, 642, reads_ids=False),
    "0.4.6.post5": SgLines(110, None, None, 110, _RUNNER, 312, 536, 706, reads_ids=False),
    "0.4.7": SgLines(110, None, None, 110, _RUNNER, 294, 536, 706, reads_ids=False),
    "0.4.8": SgLines(110, None, None, 110, _RUNNER, 307, 545, 706, reads_ids=False),
    "0.4.9": SgLines(120, None, None, 124, _RUNNER, 335, 648, 707),
    "0.4.9.post5": SgLines(120, None, None, 124, _RUNNER, 341, 648, 750),
    "0.4.10": SgLines(120, None, None, 124, _RUNNER, 355, 648, 750),
    "0.5.1": SgLines(120, None, None, 124, _RUNNER, 374, 650, 733),
    "0.5.2": SgLines(130, None, None, 134, _RUNNER, 410, 651, 733),
    "0.5.3": SgLines(130, None, None, 134, _RUNNER, 464, 805, 737),
    "0.5.4": SgLines(130, None, None, 134, _RUNNER, 495, 824, 737),
    "0.5.4.post2": SgLines(131, None, None, 135, _RUNNER, 500, 824, 737),
    "0.5.5": SgLines(131, None, None, 135, _RUNNER, 503, 824, 737),
    "0.5.6": SgLines(131, None, None, 135, _RUNNER, 546, 846, 737),
    "0.5.7": SgLines(131, None, None, 135, _RUNNER, 569, 947, 742),
    "0.5.8": SgLines(131, None, None, 135, _RUNNER, 340, 1003, 781),
    "0.5.9": SgLines(131, None, None, 135, _RUNNER, 364, 1028, 785),
    "0.5.10": SgLines(134, None, None, 138, _RUNNER, 375, 1018, 790),
    "0.5.11": SgLines(134, None, None, 138, _RUNNER, 410, 1213, 803),
    "0.5.12": SgLines(149, 154, 157, 160, _RUNNER, 437, 1302, 805),
    "0.5.13": SgLines(144, 149, 152, 155, _RUNNER, 471, 1315, 820),
    "0.5.14": SgLines(144, 149, 152, 155, _RUNNER, 468, 1313, 819),
    "0.5.15": SgLines(144, 149, 152, 155, _RUNNER, 475, 1356, 818),
    "0.5.16": SgLines(144, 149, 152, 155, _COMPONENTS, 90, 1356, 815),
    "0.5.17": SgLines(144, 149, 152, 155, _COMPONENTS, 90, 1377, 892),
    "0.5.18": SgLines(144, 149, 152, 155, _COMPONENTS, 92, 1505, 898),
    "0.5.19": SgLines(144, 149, 152, 155, _COMPONENTS, 121, 1497, 898),
    "0.5.20": SgLines(144, 149, 152, 155, _COMPONENTS, 122, 1597, 897),
    "0.5.21": SgLines(144, 149, 152, 155, _COMPONENTS, 122, 1486, 896),
    "0.5.22": SgLines(151, 156, 159, 162, _COMPONENTS, 140, 1598, 929),
    "0.5.23": SgLines(152, 157, 160, 163, _COMPONENTS, 193, 1583, 936),
}


def _lines(release: str) -> tuple[str, SgLines]:
    """The lines of the release whose code answers for `release` (release.resolve: its own; a post release its
    base's, or the post release listed before it; the newest for a newer one; the oldest for an older one)."""
    found = resolve("sglang", release, tuple(LINES))
    read = found.name if found is not None else next(reversed(LINES))
    return read, LINES[read]


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
    if family not in (Family.EAGLE3_LLAMA, Family.EAGLE3_QWEN3):
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
