"""Pure: how each vLLM release reads an EAGLE-3 draft's auxiliary hidden states from its built config: how many it
sizes `fc` for (and so fc.weight's shape), and which target layers its model runners take them from.

Read from the wheels 0.27.0-0.33.0 (docs/upstream-notes.md section 11). The model's __init__ sizes
`fc = ReplicatedLinear(target_hidden_size * n, hidden_size)`; n comes from the keys in `COUNT_KEYS` (first one set
wins, default 3). The target side is separate: the model runner picks the layers whose hidden states it hands the
draft from the keys in `RUNNER_KEYS`, else the target model's default `(2, L // 2, L - 3)`, three layers. When the
two disagree, fc.weight fails to load, or fc meets a wider or narrower input at the first draft step.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import release_lines
from dspark_ckpt.runtimes.release import resolve
from dspark_ckpt.runtimes.release_model import config_value
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

TOP = "eagle_aux_hidden_state_layer_ids"
NESTED = "eagle_config.eagle_aux_hidden_state_layer_ids"
DEFAULT_COUNT = 3  # `len(layer_ids) if layer_ids else 3`
DEFAULT_LAYERS = "(2, L // 2, L - 3)"  # SupportsEagle3.get_eagle3_default_aux_hidden_state_layers (interfaces.py)

# The keys each class's __init__ reads for n, in its order (a count, or a list whose length is n).
COUNT_KEYS: dict[Family, tuple[str, ...]] = {
    # llama_eagle3.py: getattr(config, "num_aux_hidden_states", None), then eagle_config's list; never the top level
    Family.EAGLE3_LLAMA: ("num_aux_hidden_states", NESTED),
    # qwen3_eagle3.py: num_aux_layers, num_aux_hidden_states, then `getattr(config, TOP) or eagle_config.get(...)`
    Family.EAGLE3_QWEN3: ("num_aux_layers", "num_aux_hidden_states", TOP, NESTED),
}
# Every key a producer uses to say how many aux layers the draft was trained on.
AUX_KEYS = ("num_aux_layers", "num_aux_hidden_states", TOP, NESTED)
# The model runners' target-layer lookups, in order: V1 (gpu_model_runner.py _get_eagle3_aux_layers_from_config)
# and V2 (v1/worker/gpu/spec_decode/eagle/eagle3_utils.py get_eagle3_aux_layers_from_config, the default runner on
# CUDA from 0.29 for eagle3). `target_layer_ids` / `dspark_target_layer_ids` are read by V2 shifted by one.
RUNNER_KEYS: dict[str, tuple[str, ...]] = {
    "V1": (TOP, NESTED),
    "V2": (TOP, "dspark_target_layer_ids", "target_layer_ids", "eagle_config.layer_ids"),
}
# The keys of RUNNER_KEYS each runner reads only in the releases that have the anchor (aux.* of lines.json): V1
# eagle_config's list from 0.22 (gpu_model_runner.py L4961-4965 @ 0.20.0 reads the top level and dflash_config only);
# V2 the DSpark keys from 0.25 and the drafter configs' layer_ids from 0.27 (eagle3_utils.py L41-46 @ 0.20.0: the top
# level only).
RUNNER_KEY_ANCHOR: dict[str, str] = {NESTED: "runner_nested", "dspark_target_layer_ids": "runner2_dspark",
                                     "target_layer_ids": "runner2_dspark", "eagle_config.layer_ids": "runner2_drafter"}

_LLAMA = "vllm/model_executor/models/llama_eagle3.py"
_QWEN3 = "vllm/model_executor/models/qwen3_eagle3.py"
_LINEAR = "vllm/model_executor/layers/linear.py"
_RUNNER = "vllm/v1/worker/gpu_model_runner.py"
_RUNNER2 = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"
_ALGOS = "vllm/transformers_utils/configs/speculators/algos.py"


@dataclass(frozen=True, slots=True)
class Lines:
    """Where one release reads each of these facts (line numbers in its wheel)."""

    llama: tuple[int, int, int]  # use_aux_hidden_state, the count (first..last line), fc_input_size
    llama_count_end: int
    llama_fixed: bool  # 0.20-0.21: fc sized for 3 aux states, no count key read (aux.llama_fixed)
    qwen3: tuple[int, int, int] | None  # None: no qwen3_eagle3.py (before 0.24)
    qwen3_count_end: int | None
    assert_line: int  # ReplicatedLinear.weight_loader's `assert param.size() == loaded_weight.size()`
    runner: int | None  # V1 _get_eagle3_aux_layers_from_config; None: no V1 runner (0.34: gpu_model_runner.py gone)
    runner2: int | None  # V2 get_eagle3_aux_layers_from_config; None: no V2 EAGLE-3 runner (0.16 and older)
    default: int  # `return (2, num_layers // 2, num_layers - 3)`
    algos: tuple[int, int]  # update_eagle3: target_hidden_size copied, the top-level aux list copied


RELEASES = VLLM_RELEASES  # the releases read (runtimes/versions.py): each one's Lines come from its lines.json


@functools.cache
def lines_of(release: str) -> Lines:
    """One release's Lines, from the `aux.*` citations its wheel generated (runtimes/release_lines.py)."""
    def first(key: str) -> int:
        return release_lines.span(release, f"aux.{key}")[0]
    def has(key: str) -> bool:
        return release_lines.cited(release, f"aux.{key}") is not None
    runner = first("runner") if has("runner") else None
    runner2 = first("runner2") if has("runner2") else None
    fixed = has("llama_fixed")
    llama_first, llama_end = release_lines.span(release, "aux.llama_fixed" if fixed else "aux.llama_count")
    qwen3, qwen3_end = None, None
    if has("qwen3_count"):
        qwen3_first, qwen3_end = release_lines.span(release, "aux.qwen3_count")
        qwen3 = (first("qwen3_use"), qwen3_first, first("qwen3_width"))
    return Lines((first("llama_use"), llama_first, first("llama_width")), llama_end, fixed, qwen3, qwen3_end,
                 first("assert"), runner, runner2, first("default"),
                 (first("algos_width"), first("algos_layers")))


@dataclass(frozen=True, slots=True)
class AuxRead:
    """What one release makes of a draft's aux-hidden-state keys."""

    release: str  # the release whose lines were read (the nearest one for a release outside RELEASES)
    family: Family
    fc_built: bool  # eagle_config.use_aux_hidden_state (default true); false: no fc, `fc.` weights dropped
    count: int | None  # n, the aux hidden states fc is sized for; None: a value dspark-ckpt cannot follow
    count_key: str | None  # the key n came from; None: the default 3
    width: int | None  # target_hidden_size, else hidden_size
    width_key: str
    hidden: int | None  # fc's output width (hidden_size)
    written: tuple[tuple[str, int], ...]  # the aux keys the draft's config.json sets, with the layers each names
    runners: tuple[tuple[str, str | None, int], ...]  # (runner, key its target layers come from or None, count)
    source: str
    runtime: str = "vllm"  # "sglang": runtimes/eagle3_aux_sglang.py (one runner, one class)
    fixed_count: bool = False  # SGLang before 0.5.12, vLLM before 0.22: fc is `width * 3`, no key read
    width_null: bool = False  # `target_hidden_size: null`: getattr finds None, and `None * n` raises building fc

    @property
    def fc_shape(self) -> tuple[int, int] | None:
        """[hidden_size, width * n]: the shape fc.weight must have."""
        if not self.fc_built or self.count is None or self.width is None or self.hidden is None:
            return None
        return self.hidden, self.width * self.count

    @property
    def ignored(self) -> tuple[tuple[str, int], ...]:
        """The aux keys the draft sets that name another count than the n this release sized fc for: not read at
        all (the top-level list in llama_eagle3.py, a key the speculators conversion does not copy) or shadowed."""
        return tuple((k, n) for k, n in self.written if k != self.count_key and n != self.count)



def _count(value: Any) -> int | None:
    """A count key's value as the layer count it states (a list: its length)."""
    if isinstance(value, list | tuple):
        return len(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _resolve_count(hf: Mapping[str, Any], family: Family) -> tuple[int | None, str | None]:
    for key in COUNT_KEYS[family]:
        value = config_value(hf, key)
        is_list = key in (TOP, NESTED)
        if is_list and not value:  # `len(layer_ids) if layer_ids else 3`, `getattr(...) or eagle_config.get(...)`
            continue
        if not is_list and value is None:  # `if num_aux is None`
            continue
        count = _count(value)
        return (count if count is not None and count >= 0 else None), key
    return DEFAULT_COUNT, None


def runner_keys(release: str, name: str) -> tuple[str, ...]:
    """The keys runner `name` of `release` (a listed one) reads, in its order."""
    return tuple(k for k in RUNNER_KEYS[name]
                 if k not in RUNNER_KEY_ANCHOR or release_lines.cited(release, f"aux.{RUNNER_KEY_ANCHOR[k]}"))


def _runner(hf: Mapping[str, Any], name: str, release: str) -> tuple[str, str | None, int]:
    for key in runner_keys(release, name):
        value = config_value(hf, key)
        if value and isinstance(value, list | tuple):
            return name, key, len(value)
    return name, None, DEFAULT_COUNT


def lines_for(release: str) -> tuple[str, Lines]:
    """The lines of `release`, or of the newest release read for a newer one, of the oldest for an older one."""
    found = resolve("vllm", release, RELEASES)
    read = found.name if found is not None else RELEASES[-1]
    return read, lines_of(read)


def cite(family: Family, release: str) -> str:
    read, ln = lines_for(release)
    if family is not Family.EAGLE3_LLAMA and (ln.qwen3 is None or ln.qwen3_count_end is None):
        # no qwen3_eagle3.py yet (the family is unregistered there): the first release that ships it
        read = next(r for r in RELEASES if lines_of(r).qwen3 is not None)
        ln = lines_of(read)
    module, lines, end = ((_LLAMA, ln.llama, ln.llama_count_end) if family is Family.EAGLE3_LLAMA
                          else (_QWEN3, ln.qwen3, ln.qwen3_count_end))
    assert lines is not None  # the fallback above
    use, first, width = lines
    return (f"{module} @ v{read} L{use} (use_aux_hidden_state), L{first}-{end} (n), L{width} (fc_input_size); "
            f"{_LINEAR} @ v{read} L{ln.assert_line} (ReplicatedLinear.weight_loader)")


def runner_cite(release: str) -> str:
    read, ln = lines_for(release)
    v1 = f"{_RUNNER} @ v{read} L{ln.runner}, " if ln.runner is not None else ""
    v2 = f"{_RUNNER2} @ v{read} L{ln.runner2}, " if ln.runner2 is not None else ""
    default = release_lines.cited(read, "aux.default")
    assert default is not None  # every release has a default (tools/release_anchors.py: aux.default)
    return f"{v1}{v2}{default[0]} @ v{read} L{ln.default}"


def read_aux(hf: Mapping[str, Any], raw: Mapping[str, Any], family: Family, release: str) -> AuxRead | None:
    """The aux-state facts of one release for the config it built (`hf`) from the draft's config.json (`raw`)."""
    if family not in COUNT_KEYS:
        return None
    eagle = hf.get("eagle_config")
    eagle = eagle if isinstance(eagle, Mapping) else {}
    built = bool(eagle["use_aux_hidden_state"]) if "use_aux_hidden_state" in eagle else True
    read, ln = lines_for(release)
    fixed = family is Family.EAGLE3_LLAMA and ln.llama_fixed
    count, key = (DEFAULT_COUNT, None) if fixed else _resolve_count(hf, family)
    hidden = _int(hf.get("hidden_size"))
    width_key = "target_hidden_size" if "target_hidden_size" in hf else "hidden_size"
    width = _int(hf.get(width_key))
    layer = raw.get("transformer_layer_config")
    written = []
    for name in AUX_KEYS:  # top level, or (speculators) inside transformer_layer_config
        value = config_value(raw, name)
        if not value and isinstance(layer, Mapping):
            value = config_value(layer, name)
        stated = _count(value) if value or value == 0 else None
        if stated is not None:
            written.append((name, stated))
    runners = tuple(_runner(hf, name, read) for name, line in (("V1", ln.runner), ("V2", ln.runner2))
                    if line is not None)
    source = f"{cite(family, release)}; {runner_cite(release)}"
    if "speculators_config" in raw:
        source += f"; {_ALGOS} @ v{read} update_eagle3 L{ln.algos[0]}, L{ln.algos[1]}"
    return AuxRead(read, family, built, count, key, width, width_key, hidden, tuple(written), runners, source,
                   fixed_count=fixed, width_null=width_key == "target_hidden_size" and hf.get(width_key) is None)


def _said(key: str | None, count: int | None) -> str:
    return f"{key} ({count})" if key else f"the default of {DEFAULT_COUNT}"


def _layers(key: str | None, count: int) -> str:
    return f"the {count} layers of {key}" if key else f"the target's default layers {DEFAULT_LAYERS}"


def first_step(aux: AuxRead | None, fc_shape: tuple[int, ...] | None) -> str | None:
    """fc loaded, but a runner hands it another number of target hidden states: combine_hidden_states' fc (or its
    input_norm / fc_norm chunks) meets an input of the wrong width at the first draft step."""
    if aux is None or aux.fc_shape is None or fc_shape is None or tuple(fc_shape) != aux.fc_shape:
        return None
    wrong = [(name, key, n) for name, key, n in aux.runners if n != aux.count]
    if not wrong:
        return None
    which = " and ".join(f"model runner {name} hands it {_layers(key, n)}" for name, key, n in wrong)
    scope = "" if len(wrong) == len(aux.runners) else " (only under that runner)"
    return (f"fc is sized for {aux.count} aux hidden states ({_said(aux.count_key, aux.count)}) but {which}: "
            f"an input of width {wrong[0][2]} x {aux.width} meets fc's {aux.count} x {aux.width}, a shape-mismatch "
            f"RuntimeError{scope}")


def ignored_text(aux: AuxRead) -> str | None:
    """DSP356: the keys the draft sets that this release does not size fc from, and what it uses instead."""
    if not aux.fc_built or not aux.ignored:
        return None
    keys = ", ".join(f"{k} ({n} layers)" for k, n in aux.ignored)
    module = ("llama_eagle3.py" if aux.family is Family.EAGLE3_LLAMA or aux.runtime == "sglang"
              else "qwen3_eagle3.py")
    if aux.fixed_count:
        newer = "SGLang 0.5.12" if aux.runtime == "sglang" else "vLLM 0.22.0"
        return (f"({module}) always sizes fc for 3 aux hidden states x {aux.width_key} and reads no key for the count, "
                f"not the draft's {keys}; {newer} and newer read num_aux_hidden_states")
    return (f"({module}) sizes fc from {_said(aux.count_key, aux.count)} x {aux.width_key}, not from the draft's {keys}; "
            f"set num_aux_hidden_states to the number of aux layers the draft was trained on")


def runner_text(aux: AuxRead) -> str | None:
    """DSP356 on the target side: the draft's list is read by model runner V1 only (eagle_config's list), or, from
    vLLM 0.34 (V2 alone), by no runner; SGLang's runner reads eagle_config's list only, never the top-level one."""
    if aux.runtime == "sglang":
        top = dict(aux.written).get(TOP)
        if aux.runners[0][1] is not None or top is None:
            return None
        return (f"(model_executor) reads the target layers only from {NESTED}, not from the top-level {TOP} "
                f"({top} layers), and takes the target's default layers [2, L // 2, L - 3] instead. Put the list in "
                f"eagle_config as well")
    nested = dict(aux.written).get(NESTED)
    if len(aux.runners) == 1:  # one runner (0.34: V2 alone; 0.16 and older: V1 alone): a list it does not read
        if aux.runners[0][1] is not None or nested is None:
            return None
        return (f"(model runner {aux.runners[0][0]}, its only model runner for EAGLE-3) does not read {NESTED} "
                f"({nested} layers) and takes {_layers(None, DEFAULT_COUNT)} instead. Put the list at the top level "
                f"({TOP})")
    if nested is not None and all(key is None for _, key, _ in aux.runners):  # V1 reads it from 0.22 only
        return (f"(neither model runner, V1 or V2) reads {NESTED} ({nested} layers): both take "
                f"{_layers(None, DEFAULT_COUNT)} instead. Put the list at the top level ({TOP})")
    v1, v2 = aux.runners
    if v1[1] == v2[1] or v1[1] is None:
        return None
    return (f"(model runner V2, vLLM's default on CUDA for eagle3 from 0.29) does not read {v1[1]} and takes "
            f"{_layers(v2[1], v2[2])} instead; model runner V1 reads it. Put the list at the top level ({TOP}), "
            "where both runners read it")


def absent_text(aux: AuxRead) -> str | None:
    """DSP357: no model runner finds the draft's layer list: the target's default layers are used (a list in
    eagle_config alone, which vLLM 0.34's one runner does not read, is DSP356's)."""
    if any(key is not None for _, key, _ in aux.runners) or (aux.runtime == "sglang" and TOP in dict(aux.written)) \
            or (aux.runtime == "vllm" and NESTED in dict(aux.written)):  # not read where it is: DSP356's
        return None
    return (f"finds no {TOP} (top level or in eagle_config) and takes the target's default aux layers "
            f"{DEFAULT_LAYERS}, EAGLE-3's usual choice; a draft trained on other layers gets the wrong hidden "
            "states and its acceptance collapses, with no error")


# vLLM's llama_eagle3.py / qwen3_eagle3.py: `target_hidden_size = getattr(self.config, "target_hidden_size",
# self.config.hidden_size)`, then `self.fc_input_size = target_hidden_size * n` (every release 0.27-0.33).
NULL_WIDTH = "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'"


def null_width_text(aux: AuxRead | None) -> str | None:
    """DSP358: config.json says `target_hidden_size: null`; the model's __init__ raises building fc."""
    if aux is None or aux.runtime != "vllm" or not aux.fc_built or not aux.width_null:
        return None
    return NULL_WIDTH


def target_width_text(aux: AuxRead | None, target_hidden: int | None) -> str | None:
    """DSP359: fc is sized for `width` per aux state, the target hands hidden states of its own hidden_size: the
    first draft step's fc (or input_norm / fc_norm) meets an input of another width."""
    if aux is None or aux.runtime != "vllm" or not aux.fc_built or target_hidden is None or aux.width is None \
            or aux.width == target_hidden or aux.count is None:
        return None
    return (f"fc is built for {aux.count} x {aux.width_key} ({aux.width}) = {aux.count * aux.width} inputs, but the "
            f"target's hidden_size is {target_hidden}: combine_hidden_states gets {aux.count} x {target_hidden} = "
            f"{aux.count * target_hidden}, a shape-mismatch RuntimeError at the first draft step")
