"""Pure: where each checkpoint tensor lands in one release's draft model (its generated record), and what fails.

For every tensor of the checkpoint, after the release's own name mapping (runtimes/release_model.py): a name the
release has no parameter for raises in its words (or is skipped, where it skips); a tensor whose shape is not the
one the release builds from the config raises, or is silently cut or left partly unwritten, as the release did when
the probe fed it one row or column off. Every backbone parameter no shipped tensor fills stays as initialised: the
release never says so. Every parameter is judged by the one pass of runtimes/parameter_pass.py: by the
record, but for the facets a hand-read annotation answers (the vocab contract's vocabulary parameters, an EAGLE-3
fc's width, what the target may fill after load). A structural key the draft sets to a value
the samples did not build at is judged by its record (`keyed`): the shapes it sizes, as expressions of the key at
the draft's value; a dimension with no such expression is not judged; nor is the presence of a parameter such a key
may add or drop (one it only resizes must still be shipped). A parameter the draft's value makes appear is required,
and its tensor is judged as any other by what the release builds at that value (`appeared`: the record's
`appearing`, fitted at the samples' sizes), its shape unjudged where the record has none. A key the draft leaves
out that the samples held is judged by what the release built without it (`absent_keys`, `left_out`): what
disappears is not required.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import load_phases, past_first_layer
from dspark_ckpt.runtimes.parameter_pass import is_mapping, judgement, unfilled_judged
from dspark_ckpt.runtimes.release import covers
from dspark_ckpt.runtimes.release_model import (
    EXPERT,
    Appearing,
    ArchitectureModel,
    Expr,
    LoadOutcome,
    TensorRule,
    config_value,
    head_index,
    key_shapes,
    key_variable,
    normal,
    sequential_position,
    sized_value,
)
from dspark_ckpt.runtimes.sglang_config import domino_view
from dspark_ckpt.runtimes.vllm_rows import DROPPED_UNSHIPPED as VLLM_DROPPED_UNSHIPPED

# The findings a landing problem becomes (runtimes/release_verdict.landed): no parameter, shape, cut, unfilled, and a
# missing parameter the release refuses.
NO_PARAMETER: Final[FindingCode] = "DSP360"
SHAPE: Final[FindingCode] = "DSP361"
CUT: Final[FindingCode] = "DSP362"
UNFILLED: Final[FindingCode] = "DSP363"
REQUIRED: Final[FindingCode] = "DSP367"  # a parameter no tensor fills, which the release refuses to leave so
CODES: frozenset[FindingCode] = frozenset({NO_PARAMETER, SHAPE, CUT, UNFILLED, REQUIRED})
SILENT_SHAPES = ("cut", "partly-unwritten", "padded")  # a tensor of the wrong shape loaded without a word (CUT)
AUX_PARAMETERS = frozenset({"model.fc.weight", "fc.weight"})  # fc, whose width the target-layer lists set


@dataclass(frozen=True, slots=True)
class Landing:
    """One way a checkpoint's tensors fail to land. `raises`: the release's loader raises (its words in `text`);
    otherwise the problem is silent (`text` is ours)."""

    kind: str  # "no-parameter" | "shape" | "cut" | "partly-unwritten" | "padded" | "unfilled" | "missing" |
    # "missing-key"
    tensor: str | None
    parameter: str | None
    raises: bool
    text: str
    where: str = ""
    filled: tuple[int, int] | None = None  # "unfilled" in part: (rows the shipped tensors fill, rows it has)
    key: str | None = None  # "missing-key": the config key __init__ reads
    count: int = 1  # how many parameters it stands for (a Visit's rest: one per layer past the named ones)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


BARE_CONFIGS = frozenset({"SpeculatorsConfig", "PretrainedConfig"})  # config classes with no transformers defaults


def config_class_of(model: ArchitectureModel, config: Mapping[str, Any], config_class: str) -> str:
    """The config class the release builds this draft with: the one its generated model saw the draft's model_type
    pick (transformers' class, or the runtime's own registered one), where check's build names no class of its own
    for it; a speculators config stays one (it adds no defaults whatever the model_type)."""
    if config_class == "PretrainedConfig" and model.config_type is not None \
            and config.get("model_type") == model.config_type[0]:
        return model.config_type[1]
    return config_class


def variables(model: ArchitectureModel, config: Mapping[str, Any], *, target_hidden: int | None,
              target_vocab: int | None, config_class: str = "") -> dict[str, int]:
    """The value of every variable the record's expressions use, as the release would see it: the config's own,
    else what the release falls back to when the config leaves the key out (learnt by omitting it, under the
    model_type's transformers class or, for a speculators config, a bare one)."""
    fallbacks = model.fallbacks_bare if config_class in BARE_CONFIGS else model.fallbacks
    values: dict[str, int] = {}
    for key, value in config.items():
        if (n := _positive(value)) is not None:
            values[key] = n
    for key in key_shapes(model):  # a structural key whose shapes the record fitted: its value, a list's length
        value = config_value(config, key)
        if (n := sized_value(value)) is not None:
            values[key_variable(key, value)] = n
    if target_vocab is not None:
        values["target.vocab_size"] = target_vocab
    if target_hidden is not None:
        values["target.hidden_size"] = target_hidden
    for _ in range(3):  # a fallback may name another key that itself falls back
        for key, fallback in fallbacks.items():
            if key in values:
                continue
            if fallback.isdigit():
                values[key] = int(fallback)
            elif fallback == "hidden_size // num_attention_heads":
                if "hidden_size" in values and values.get("num_attention_heads"):
                    values[key] = values["hidden_size"] // values["num_attention_heads"]
            elif fallback in values:
                values[key] = values[fallback]
    return values


def _differs(probe: Mapping[str, Any], value: Any) -> bool:
    """Whether the draft's value of a structural key is one the samples did not build the class at: not the base's
    (nor one the record saw build what the base builds); a list always, since the base sample may have left the key
    out and built from a default (a DFlash backbone's one target layer per draft layer)."""
    if value is None:
        return False
    if isinstance(value, list) and value and value != probe.get("base"):
        return True
    if isinstance(value, list) and value and "shapes" in probe:  # judged by its own length
        return True
    return value != probe.get("base") and value not in probe.get("as_base", ())


def keyed(model: ArchitectureModel, config: Mapping[str, Any],
          values: Mapping[str, int]) -> tuple[dict[str, tuple[Expr | None, ...]], frozenset[str]]:
    """The shapes the release builds at the draft's own values of the structural keys it sets (`structural.<key>
    .shapes`, where the record fitted them), and the parameters whose shape stays unjudged: moved by a key the
    draft sets to a value the samples did not build at, with no fitted shape for it."""
    fitted = key_shapes(model)
    moved_by: dict[str, list[str]] = {}
    unjudged: set[str] = set()
    pending: set[str] = set()  # fc, where the draft lists target layers under another key than this one
    lists = _sets_layer_list(config)
    for key, probe in model.structural.items():
        value = config_value(config, key)
        active = _differs(probe, value)
        if not active and not (lists and key.endswith(LAYER_LISTS) and value is None):
            continue
        own = fitted.get(key, {}) if active and sized_value(value) is not None else {}
        for parameter in _named(probe, "changes"):
            if parameter in own:
                moved_by.setdefault(parameter, []).append(key)
            else:
                (unjudged if active else pending).add(parameter)
        if "refused" in probe and "changes" not in probe and active:
            # every alternate the class was offered was refused: the record cannot say what the key moves
            unjudged.update(p for p, exprs in model.parameters.items()
                            if any(e is not None and not e.variables for e in exprs))
    unjudged.update(pending - set(moved_by))
    shapes: dict[str, tuple[Expr | None, ...]] = {}
    for parameter, keys in moved_by.items():
        main = model.parameters.get(parameter)
        if parameter in unjudged or main is None:
            continue
        shapes[parameter] = tuple(_combined(main[d] if d < len(main) else None,
                                            [fitted[k][parameter][d] for k in keys if d < len(fitted[k][parameter])],
                                            values)
                                  for d in range(len(fitted[keys[0]][parameter])))
    return shapes, frozenset(unjudged)


def _combined(main: Expr | None, moved: list[Expr | None], values: Mapping[str, int]) -> Expr | None:
    """One dimension of a parameter several keys the draft sets resize: the record's where no key's fitted shape
    differs from it there, the one key's that does, several that agree at the draft's values; None otherwise (two
    keys that size the same dimension: which one the release reads is not recorded)."""
    if any(e is None for e in moved):
        return None
    differ = [e for e in moved if e is not None and (main is None or e.text != main.text)]
    if not differ:
        return main
    if len({e.value(values) for e in differ}) == 1 and differ[0].value(values) is not None:
        return differ[0]
    return None


def _unjudged(model: ArchitectureModel, config: Mapping[str, Any],
              values: Mapping[str, int] | None = None) -> frozenset[str]:
    """Parameters whose shape moves with a key the draft sets to another value than the release's samples, where the
    record has no shape for it at the draft's value (`keyed`); fc where the draft lists target layers under a key
    the record probed none of."""
    if values is None:
        values = variables(model, config, target_hidden=None, target_vocab=None)
    shapes, out = keyed(model, config, values)
    found = set(out) | left_out(model, config, "resized")
    if _sets_layer_list(config) and (not any(p in shapes for p in AUX_PARAMETERS) or len(_list_lengths(config)) > 1):
        # fc too where the record probed none of the keys this draft sets (SGLang 0.5.11-0.5.17's DFlash)
        found.update(p for p in AUX_PARAMETERS if p in model.parameters)
    if context_width(model, config) is not None:
        found.difference_update(AUX_PARAMETERS)
    # what the draft's value makes appear, where the record has its shapes at that value (`appeared`), is judged
    found.difference_update(p for record in appeared(model, config) for p in record.parameters)
    return frozenset(found)


# The keys that list the target layers fc reads (its width is their count times the target's hidden size). A
# release reads its own few of them, and the conversions before it (speculators, the DFlash and EAGLE renames) copy
# one into another, so the record's width (sampled with none set) is not judged for a draft that sets any of them;
# fc's presence still is (a list only resizes it).
LAYER_LISTS = ("layer_ids",)


def _sets_layer_list(config: Mapping[str, Any]) -> bool:
    return any(isinstance(v, list) and k.endswith(LAYER_LISTS) for mapping in
               (config, *(v for v in config.values() if isinstance(v, Mapping))) for k, v in mapping.items())


def _list_lengths(config: Mapping[str, Any]) -> set[int]:
    """The lengths of every target-layer list the draft sets (the conversions before the class copy one into
    another, so two lengths leave fc's width to whichever the release reads first, which is not recorded)."""
    return {len(v) for mapping in (config, *(v for v in config.values() if isinstance(v, Mapping)))
            for k, v in mapping.items() if isinstance(v, list) and k.endswith(LAYER_LISTS)}


def _sized(value: Any) -> bool:
    """A value that sizes something: a positive count (a ratio too), a non-empty list (not a switch, not an empty
    list)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0) or \
        (isinstance(value, list) and len(value) > 0)


def _resizes(probe: Mapping[str, Any], value: Any) -> bool:
    """Whether another value of a structural key only resizes what it changes: the sampled value, its alternate and
    the draft's all size it (a count, a list of layers; a base left unset, where the alternate is a list, is its
    default list), so a parameter the base built is built at the draft's value too. A switch or a zero may add or
    drop parameters: the record does not say which."""
    base, alternate = probe.get("base"), probe.get("alternate")
    return _sized(value) and _sized(alternate) and (_sized(base) or (base is None and isinstance(alternate, list)))


def unseen(model: ArchitectureModel, config: Mapping[str, Any]) -> frozenset[str]:
    """The parameters whose presence is not judged: those a key set to another value than the samples' may add or
    drop. Where the record says what the key's alternate did (`appears`, `disappears`, `resized`): at the
    alternate's own value, what it dropped; at another value, what it added or dropped (a count may add layers the
    record names by index), and what it resized where the value is no size (a zero, a switch). An older record
    (`changes` only): what it changed, less what a sizing value only resizes."""
    out: set[str] = set()
    for key, probe in model.structural.items():
        value = config_value(config, key)
        if value is None or value == probe.get("base") or value in probe.get("as_base", ()):
            continue
        if any(f in probe for f in EFFECTS):
            dropped, added = _named(probe, "disappears"), _named(probe, "appears")
            if (seen := seen_at(probe, value)) is not None:
                out.update(_named(seen, "disappears"))
            else:
                out.update(dropped | added | (set() if _sized(value) else _named(probe, "resized")))
            continue
        changes = _named(probe, "changes")
        if value == probe.get("alternate"):  # the sample saw this value: what it added is built, what it
            out.update(changes & set(model.parameters))  # changed of the base's may be resized or dropped
        else:
            out.update(changes if not _resizes(probe, value) else changes - set(model.parameters))
    return frozenset(out | left_out(model, config, "disappears"))


def left_out(model: ArchitectureModel, config: Mapping[str, Any], effect: str) -> set[str]:
    """The parameters that appear, disappear or are resized (`effect`) where the draft leaves out keys the base
    sample held, as the release built without them (`absent_keys`; a key it takes only together with others
    counts where the draft leaves those out too)."""
    out: set[str] = set()
    for key, seen in model.absent_keys.items():
        if all(config_value(config, k) is None for k in (key, *seen.get("with_absent", ()))):
            out.update(_named(seen, effect))
    return out


EFFECTS = ("appears", "disappears", "resized")  # what a structural key's alternate did, per parameter


def _named(probe: Mapping[str, Any], field: str) -> set[str]:
    return {normal(p) for p in probe.get(field, ())}


def seen_at(probe: Mapping[str, Any], value: Any) -> Mapping[str, Any] | None:
    """What the record saw a structural key do at the draft's value: its alternate's effects, or, for a key whose
    values are names (`values`: SGLang DSpark's markov_head_type), that name's; None where no sample had it."""
    if value == probe.get("alternate"):
        return probe
    named = probe.get("values")
    return named.get(value) if isinstance(value, str) and isinstance(named, Mapping) else None


def appearing(model: ArchitectureModel, config: Mapping[str, Any]) -> frozenset[str]:
    """Parameters the base sample does not build that the draft's value of a structural key adds, as the key's
    alternate sample (the same value) did: required, their shape unjudged (a switch such as
    `enable_confidence_head` or `attention_bias` set on)."""
    out: set[str] = set()
    for key, probe in model.structural.items():
        value = config_value(config, key)
        if value is None or value == probe.get("base"):
            continue
        if (seen := seen_at(probe, value)) is None:
            out.update(_per_item(model, probe, value))
            continue
        added = _named(seen, "appears") if any(f in seen for f in EFFECTS) else _named(seen, "changes")
        out.update(p for p in added if p not in model.parameters)
    return frozenset(out | {p for p in left_out(model, config, "appears") if p not in model.parameters})


def _per_item(model: ArchitectureModel, probe: Mapping[str, Any], value: Any) -> set[str]:
    """A list key whose alternate sample, one item longer, made a module indexed by that item appear (SGLang's
    DFlash backbone builds `aux_hidden_norms.{k}` per target layer id): the draft's longer list builds one per
    item past the sampled ones."""
    alternate = probe.get("alternate")
    if not isinstance(value, list) or not isinstance(alternate, list) or not alternate or len(value) <= len(alternate):
        return set()
    last = len(alternate) - 1
    added = _named(probe, "appears") if any(f in probe for f in EFFECTS) else _named(probe, "changes")
    indexed = [p for p in added if f".{last}." in f".{p}" and p not in model.parameters]
    return {re.sub(rf"(^|\.){last}\.", rf"\g<1>{k}.", p, count=1) for p in indexed
            for k in range(last, len(value))}


def appeared(model: ArchitectureModel, config: Mapping[str, Any]) -> tuple[Appearing, ...]:
    """The records of what the draft's values of structural keys make appear, where the record has one (`appearing`:
    the shapes the release builds for them at that value, and what its loader does with a tensor one row or column
    off): a tensor filling such a parameter is judged by them as any other. Without one, or where the draft sets a key
    that moves those shapes (`moved_by`, read only at that value) to another value, its shape stays unjudged."""
    out = []
    for key, probe in model.structural.items():
        value = config_value(config, key)
        if value is None or value == probe.get("base") or isinstance(value, (list, dict)) \
                or seen_at(probe, value) is None:
            continue
        found = model.appearing.get((key, value))
        if found is not None and all(config_value(config, k) in (None, v) for k, v in found.moved_by.items()):
            out.append(found)
    return tuple(out)


def appeared_rule(model: ArchitectureModel, appeared: tuple[Appearing, ...], name: str) -> TensorRule | None:
    """The rule of an appearing tensor: by its name, with or without the `model.` prefix the release adds, or under
    the prefix the release renames it from (`prefix_aliases`: EAGLE-3's `midlayer.` for `layers.{i}.`)."""
    key = normal(name)
    forms = [key, key.removeprefix("model."), f"model.{key}"]
    forms += [theirs + key[len(mine):] for mine, theirs in prefix_aliases(model) if key.startswith(mine)]
    return next((found.tensors[form] for found in appeared for form in forms if form in found.tensors), None)


def _appearing_parameter(model: ArchitectureModel, name: str, appear: frozenset[str]) -> str | None:
    """The appearing parameter a checkpoint name fills: by its own name (a prefix the release adds allowed), or a
    bias by its weight's mapping (`q_proj.bias` -> `qkv_proj.bias`, as the release stacks the weight)."""
    key = normal(name)
    hit = next((p for p in sorted(appear) if p == key or p.endswith("." + key)), None)
    if hit is not None or not key.endswith(".bias"):
        return hit
    rule = model.tensors.get(key.removesuffix(".bias") + ".weight")
    if rule is None or rule.parameter is None or not rule.parameter.endswith(".weight"):
        return None
    stacked = normal(rule.parameter.removesuffix(".weight") + ".bias")
    return stacked if stacked in appear else None


# SGLang's DFlash backbone (DFlash, DFlash2, DSpark and their variants; models/dflash.py DFlashDraftModel.__init__)
# sizes fc's input as len(target_layer_ids) x hidden_size, the list read from dflash_config first, then the top
# level (speculative/dflash_utils.py parse_dflash_draft_config), else one per draft layer (build_target_layer_ids),
# and its load_weights raises on another fc width in words that name num_context_features (docs/upstream-notes.md):
# the record's fc, sampled at one list, is rescaled to the draft's
CONTEXT_LISTS = ("dflash_config.target_layer_ids", "target_layer_ids")
CONTEXT_WORDS = r"num_context_features=(\d+)"  # compiled on first use (re caches it): SGLang only
FC = "fc.weight"


def context_width(model: ArchitectureModel, config: Mapping[str, Any],
                  values: Mapping[str, int] | None = None) -> tuple[int, int] | None:
    """fc's shape where the release sizes it from the draft's target-layer list (SGLang's DFlash backbone, known by
    its own words about fc); None elsewhere, or where the list is not a non-empty list."""
    rule = model.tensors.get(FC) if model.runtime == "sglang" and FC in model.parameters else None
    seen = rule.off_by_one.get("1+") if rule is not None and rule.shape is not None else None
    sampled = re.search(CONTEXT_WORDS, seen.message) if seen is not None else None
    if rule is None or rule.shape is None or sampled is None or int(sampled.group(1)) <= 0 \
            or isinstance(config.get("quantization_config"), Mapping):  # a packed fc (Nemotron 3.5's NVFP4): the
        return None  # release compares its logical shape (models/dflash.py _logical_linear_weight_shape), not this
    if values is None:
        values = variables(model, config, target_hidden=None, target_vocab=None)
    chosen = next((v for v in (config_value(config, k) for k in CONTEXT_LISTS) if v is not None), None)
    if chosen is None:
        count = layer_count(model, values)
    else:
        count = len(chosen) if isinstance(chosen, list) and chosen else None
    shape = _shape(rule.shape, values)
    if count is None or shape is None or len(shape) != 2 or None in shape:
        return None
    rows, width = shape
    assert rows is not None and width is not None
    return rows, width // int(sampled.group(1)) * count


def _context_words(message: str, name: str, got: tuple[int, ...], want: tuple[int, ...]) -> str:
    """The release's fc words at the draft's values (the record's were written at its sampled list)."""
    rows, width = want
    text = re.sub(r"shape=\([^)]*\)", f"shape=({rows}, {width})", message)
    text = re.sub(CONTEXT_WORDS, f"num_context_features={width // rows if rows else 0}", text)
    text = text.replace("hidden_size={want_dim}", f"hidden_size={rows}")
    text = re.sub(r"but got \([^)]*\)", "but got (" + ", ".join(str(g) for g in got) + ")", text)
    return text.replace("for weight 'fc.weight'", f"for weight '{name}'")


def wanted(model: ArchitectureModel, rule: TensorRule, at_draft: Mapping[str, tuple[Expr | None, ...]],
           values: Mapping[str, int], context: tuple[int, int] | None) -> tuple[int | None, ...] | None:
    """The shape a tensor must have in this release at the draft's values, as check and verify's torch loader both
    judge it: fc's from the draft's target-layer list where the release sizes it so (`context_width`), else the
    record's, or its parameter's at the draft's values of the structural keys that resize it (`keyed`)."""
    if context is not None and rule.parameter is not None and normal(rule.parameter) == FC:
        return context
    return _keyed_want(model, rule, at_draft.get(normal(rule.parameter)) if rule.parameter else None, values)


def _keyed_want(model: ArchitectureModel, rule: TensorRule, exprs: tuple[Expr | None, ...] | None,
                values: Mapping[str, int]) -> tuple[int | None, ...] | None:
    """The shape a tensor must have: the record's, or where a structural key the draft sets resizes its parameter,
    the parameter's shape at the draft's values (a tensor that is the whole parameter only: one of a stacked q/k/v
    keeps the record's, judged only where no key moves it)."""
    if exprs is None or rule.parameter is None:
        return _shape(rule.shape, values)
    base = model.parameters.get(normal(rule.parameter))
    if base is None or rule.shape is None or len(base) != len(rule.shape) or \
            any((a.text if a else None) != (b.text if b else None) for a, b in zip(base, rule.shape, strict=True)):
        return None
    return _shape(exprs, values)


def _shape(exprs: tuple[Expr | None, ...] | None, values: Mapping[str, int]) -> tuple[int | None, ...] | None:
    if exprs is None:
        return None
    return tuple(e.value(values) if e is not None else None for e in exprs)


def built(parameter: str, values: Mapping[str, int]) -> bool:
    """Whether the release builds this parameter for these values: the d2t mapping only where D differs from a known
    T (unknown, it is not judged)."""
    if not is_mapping(parameter):
        return True
    target = values.get("target.vocab_size")
    return target is not None and values.get("draft_vocab_size", values.get("vocab_size")) != target


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})"


def unknown_outcome(model: ArchitectureModel, name: str, side: str = "") -> LoadOutcome | None:
    """What the release does with a name it has no parameter for (None: it skips it), by the probe of the same form;
    `side`: the name's layer is one the release does not build, "past" its last or "before" its first (an MTP
    head's loader skips its target's layers), where the probe fed one there (otherwise, and for an expert past the
    last, the probe in a layer it builds)."""
    if name.startswith("mtp.") and "mtp.layers.0.unexpected_tensor.weight" in model.unknown:
        # an MTP head whose checkpoint names are its target's `mtp.` (the probe fed that form where it is)
        probe = "mtp.layers.0.unexpected_tensor.weight" if "layers." in name else "mtp.unexpected_tensor.weight"
    else:  # under the longest prefix a probe was fed with (a recipe's naming: MiniMax's `language_model.model.dspark.`)
        prefix = next((p for p in renamed_prefixes(model) if name.startswith(p)), "")
        rest = name[len(prefix):]
        probe = prefix + ("model.layers.0.unexpected_tensor.weight" if rest.startswith("model.") else
                          "layers.0.unexpected_tensor.weight" if "layers." in rest else "unexpected_tensor.weight")
    outcome = model.unknown.get("experts.past") if side == "expert" and "experts.past" in model.unknown \
        else model.unknown.get(probe)
    elsewhere = model.unknown.get(probe.replace("layers.0.", f"layers.{side}.")) \
        if side in ("past", "before") and "layers.0." in probe else None
    if elsewhere is not None and elsewhere.raises is None:
        return None
    if outcome is None or outcome.raises is None:
        return elsewhere
    return outcome


@functools.lru_cache(maxsize=64)
def renamed_prefixes(model: ArchitectureModel) -> tuple[str, ...]:
    """The prefixes other than `model.`/`mtp.` the unknown-name probe was fed under (the layout's naming a recipe
    gives, release_worker.renamed_layouts), longest first."""
    found = {k.split("layers.0.unexpected_tensor.weight")[0] for k in model.unknown
             if k.endswith("layers.0.unexpected_tensor.weight")}
    return tuple(sorted(found - {"", "model.", "mtp."}, key=len, reverse=True))


@functools.lru_cache(maxsize=64)
def prefix_aliases(model: ArchitectureModel) -> tuple[tuple[str, str], ...]:
    """Checkpoint prefixes the release maps alike, learnt from the names the probe fed under both: two names that
    differ only in their first component(s) and land in the same parameter (EAGLE-3's `midlayer.` and
    `layers.{i}.`, its load_weights' rename). A name under one prefix that the record does not hold is then the
    release's own name under the other (a `rotary_emb.inv_freq` it skips under either)."""
    by_parameter: dict[str, list[str]] = {}
    for key in model.tensors:
        parameter = model.tensors[key].parameter
        if parameter is not None:
            by_parameter.setdefault(parameter, []).append(key)
    seen: dict[tuple[str, str], int] = {}
    for keys in by_parameter.values():
        for a in keys:
            for b in keys:
                if a == b:
                    continue
                rest = _common_tail(a, b)
                if rest and a != rest and b != rest:
                    pair = (a[:-len(rest)], b[:-len(rest)])
                    seen[pair] = seen.get(pair, 0) + 1
    return tuple(sorted(pair for pair, n in seen.items() if n >= 2))  # a rename of a module, not of one name


def _common_tail(a: str, b: str) -> str:
    """The longest common dotted suffix of two names."""
    pa, pb = a.split("."), b.split(".")
    n = 0
    while n < min(len(pa), len(pb)) and pa[-1 - n] == pb[-1 - n]:
        n += 1
    return ".".join(pa[len(pa) - n:]) if n else ""


def rule_for(model: ArchitectureModel, name: str) -> TensorRule | None:
    """The record's rule for a checkpoint name: its own, else the one of the name the release renames it to
    (`prefix_aliases`)."""
    key = normal(name)
    rule = model.tensors.get(key)
    if rule is not None:
        return rule
    for mine, theirs in prefix_aliases(model):
        if key.startswith(mine) and (found := model.tensors.get(theirs + key[len(mine):])) is not None:
            return found
    return next((rule for tail, rule in skipped_anywhere(model).items() if key == tail or key.endswith("." + tail)),
                None)


def _tail(key: str) -> str:
    """A name below its layer (`layers.{i}.self_attn.rotary_emb.inv_freq` -> `self_attn.rotary_emb.inv_freq`)."""
    return key.rsplit("{i}.", 1)[-1]


@functools.lru_cache(maxsize=64)
def skipped_anywhere(model: ArchitectureModel) -> Mapping[str, TensorRule]:
    """The layer tensors the release skips by what they are (no parameter, no refusal: its loaders skip a name that
    contains `rotary_emb.inv_freq`, AutoWeightsLoader's skip_substrs), by their name below the layer: skipped under
    any prefix too (EAGLE-1's `midlayer.` form, which its release never renames), not only the one the probe fed."""
    return {_tail(key): rule for key, rule in model.tensors.items()
            if "{i}." in key and rule.parameter is None and rule.refused is None and _tail(key).count(".") >= 2}


# The words of vLLM's AutoWeightsLoader for a name it has no parameter for; from 0.25.0 its load_weights ignores an
# unexpected `.bias` instead (models/utils.py, lines.json build.ignore_bias): `ignored` of land()
AUTO_LOADER_WORDS = "There is no module or parameter named"


def _unknown(model: ArchitectureModel, name: str, side: str = "",
             ignored: tuple[str, ...] = ()) -> Landing | None:
    """A name the release has no parameter for: its error, naming the first component it lacks, as it does; None
    where it skips it (`ignored`: the suffixes its AutoWeightsLoader ignores)."""
    nested = model.nested
    stem = name[:-len(".weight")] if name.endswith(".weight") else None
    bare = model.tensors.get(normal(stem)) if stem is not None else None
    if nested is not None and bare is not None and bare.parameter is not None:
        if nested.raises is None:
            return None
        words = nested.message.replace("{name}", name).replace("{param}", stem or "")
        return Landing("no-parameter", name, None, True, f"{nested.raises}: {words}", nested.where)
    outcome = unknown_outcome(model, name, side)
    if outcome is None or (ignored and name.endswith(ignored) and AUTO_LOADER_WORDS in outcome.message):
        return None
    if "{leaf}" in outcome.message:  # the loader quotes its own rewrite of the name: {i} its layer, {leaf} the rest
        index = _layer_index(name)
        leaf = name.split(f"layers.{index}.", 1)[-1] if index is not None else name
        words = outcome.message.replace("{leaf}", leaf).replace("{i}", str(index if index is not None else 0))
        return Landing("no-parameter", name, None, True, f"{outcome.raises}: {words}", outcome.where)
    if "{name}" in outcome.message and any(name.startswith(p) for p in renamed_prefixes(model)):
        # fed under a recipe's naming, which is no module path of the model: the loader quotes the name as shipped
        return Landing("no-parameter", name, None, True,
                       f"{outcome.raises}: {outcome.message.replace('{name}', name.rpartition('.')[0])}", outcome.where)
    known = {".".join(parts[:k]) for key in model.tensors for parts in [key.split(".")] for k in range(1, len(parts))}

    def depth(form: str) -> int:
        parts = normal(form).split(".")
        # a layer the release does not build: its ModuleList has no such index, and the loader stops there
        # ('layers.1', the probe's words past the last layer)
        index = parts.index("{i}") + 1 if side in ("past", "before") and "{i}" in parts else None
        return next((k for k in range(1, len(parts) + 1) if ".".join(parts[:k]) not in known or k == index),
                    len(parts))

    # a loader that adds the `model.` prefix itself walks the prefixed name (its layout's names carry it)
    form = max([name] if name.startswith("model.") else [name, f"model.{name}"], key=depth)
    reached = depth(form)
    # a loader that walks the class itself quotes the path from there, `model.` included, as its words for the probe
    # past the last layer show (Cohere2's EAGLE: 'model.layers.1'); one walking the inner model, from below it
    past = model.unknown.get("model.layers.past.unexpected_tensor.weight")
    top = past is not None and "'model.layers." in past.message
    missing = _module_path(model, ".".join(normal(form).split(".")[:reached - 1]), form.split(".")[:reached], top)
    return Landing("no-parameter", name, None, True,
                   f"{outcome.raises}: {outcome.message.replace('{name}', missing)}", outcome.where)


def _module_path(model: ArchitectureModel, known: str, parts: list[str], top: bool = False) -> str:
    """The release's name for a checkpoint prefix: the known part mapped as the release maps it (`midlayer` ->
    `layers.0`; the parameter path below the model the loader walks, `model.` dropped unless it walks the class
    itself, `top`), then the missing part."""
    if not known:
        return ".".join(parts)
    sibling = next(((key, rule) for key, rule in sorted(model.tensors.items())
                    if key.startswith(known + ".") and rule.parameter), None)
    if sibling is None:
        return ".".join(parts)
    key, rule = sibling
    tail = key[len(known):]
    assert rule.parameter is not None
    if not rule.parameter.endswith(tail):
        return ".".join(parts)
    index = next((p for p in parts if p.isdigit()), "0")
    mapped = rule.parameter[:-len(tail)].replace("{i}", index)
    mapped = mapped if top else mapped.removeprefix("model.")
    return ".".join([mapped, *parts[len(known.split(".")):]])


def _layer_index(name: str) -> int | None:
    parts = name.split(".")
    for i, part in enumerate(parts[:-1]):
        if part == "layers" and parts[i + 1].isdigit():
            return int(parts[i + 1])
    return None


def layer_of(name: str) -> int | None:
    """A checkpoint name's layer: its `layers.<i>`, else its position in a head's nested Sequential."""
    index = _layer_index(name)
    return index if index is not None else sequential_position(name)


def layer_count(model: ArchitectureModel, values: Mapping[str, int]) -> int | None:
    """How many layers the release builds: the record's expression; where that is a constant because the class
    refused every sample that varied it (a DFlash backbone's layer selection), the num_hidden_layers it reads
    (SGLang models/dflash.py: `num_layers = config.num_hidden_layers`)."""
    if model.layers is None:
        return None
    if not model.layers.variables and model.samples_refused and model.first_layer is None \
            and "num_hidden_layers" in model.reads and "num_hidden_layers" in values:
        return values["num_hidden_layers"]
    return model.layers.value(values)


def built_indices(model: ArchitectureModel, values: Mapping[str, int]) -> tuple[range | None, int | None]:
    """The layer indices the release builds for these values (an MTP head's start after its target's layers), and
    how many experts a MoE layer loads; None where the record does not say or the values do not decide it."""
    layers = layer_count(model, values)
    first = model.first_layer.value(values) if model.first_layer is not None else 0
    for condition, index in model.first_layer_exceptions.items():
        key, _, value = condition.partition("=")
        if str(values.get(key)) == value:
            first = index
    span = range(first, first + layers) if layers is not None and first is not None else None
    return span, model.experts.value(values) if model.experts is not None else None


# A config may declare far more layers than ship (a slip of a digit, a hostile file): past the shipped layers the pass
# names this many one by one and the rest as one range, so that its work grows with the checkpoint, not the config
NAMED_PAST_SHIPPED: Final = 8


@dataclass(frozen=True, slots=True)
class Visit:
    """The indices of a span (layers, heads) the pass judges one by one (every shipped one, then the first
    NAMED_PAST_SHIPPED the checkpoint has no tensor for), and the rest of the span, which the release builds too,
    judged as one."""

    span: range
    named: tuple[int, ...]
    rest: int  # how many indices of the span are not named
    first: int  # the first and last of them (where rest > 0)
    last: int

    @property
    def rest_range(self) -> str:
        """Every index past `named`, as one: `{first..last}`."""
        return f"{{{self.first}..{self.last}}}"

    @property
    def whole(self) -> str:
        """Every index of the span, as one: `{start..last}`."""
        return f"{{{self.span.start}..{self.span[-1]}}}" if self.span else "{}"


def visit(span: range, shipped: frozenset[int]) -> Visit:
    named = {i for i in shipped if i in span}
    unshipped = 0
    for i in span:  # at most len(shipped) + NAMED_PAST_SHIPPED steps
        if unshipped == NAMED_PAST_SHIPPED:
            break
        if i not in named:
            named.add(i)
            unshipped += 1
    # a span's length by arithmetic: len() of a range past sys.maxsize raises OverflowError (a config's
    # num_hidden_layers of 2**63)
    rest = max(0, (span.stop - span.start + span.step - 1) // span.step) - len(named)
    first = next((i for i in span if i not in named), 0)  # each at most len(named) + 1 steps
    last = next((i for i in reversed(span) if i not in named), 0)
    return Visit(span, tuple(sorted(named)), rest, first, last)


def beyond(name: str, span: range | None, experts: int | None) -> str:
    """Whether a checkpoint name's layer (or expert) is one the release does not build, so that it has no parameter:
    "before" its first layer, "past" its last, "expert" past its last expert (in a layer it builds), "" where it
    builds it."""
    index = _layer_index(name)
    if index is not None and span is not None and index not in span:
        return "before" if index < span.start else "past"
    expert = EXPERT.search(name)
    return "expert" if expert is not None and experts is not None and int(expert.group(0)) >= experts else ""


def head_count(model: ArchitectureModel, values: Mapping[str, int]) -> int | None:
    """How many heads the release builds (`{h}`: a draft with a list of heads); None where it builds no list or the
    values do not decide it."""
    return model.heads.value(values) if model.heads is not None else None


def past_heads(name: str, heads: int | None) -> bool:
    """Whether a checkpoint name's head is one the release does not build (its index at or past the count)."""
    index = head_index(name)
    return heads is not None and index is not None and index >= heads


def at_name(template: str, name: str, index: int | None) -> str:
    """A parameter template (`{i}`, `{h}`) at a checkpoint name's layer and head: the layer its `layers.<i>` or a
    nested Sequential's position (`index`: _layer_index of the name), the head its HEAD index."""
    layer = index if index is not None else sequential_position(name)
    head = head_index(name)
    return template.replace("{i}", str(layer if layer is not None else 0)).replace("{h}", str(head or 0))


def each_index(template: str, layers: Visit | None, heads: Visit | None) -> tuple[list[str], list[tuple[str, int]]]:
    """A parameter template at every layer (`{i}`) and head (`{h}`) the release builds: the named indices one by one,
    and the rest as (one name, how many parameters it stands for) -- at each named head, the layers past the named
    ones; then every layer of the heads past the named ones."""
    lay = layers if "{i}" in template and layers is not None else None
    hed = heads if "{h}" in template and heads is not None else None
    lay_named = lay.named if lay is not None else (0,)
    per_head = len(lay.named) + lay.rest if lay is not None else 1

    def at(layer: str, head: str) -> str:
        return template.replace("{i}", layer).replace("{h}", head)

    named = [at(str(i), str(h)) for h in (hed.named if hed is not None else (0,)) for i in lay_named]
    rests = [(at(lay.rest_range, str(h)), lay.rest) for h in (hed.named if hed is not None else (0,))] \
        if lay is not None and lay.rest else []
    if hed is not None and hed.rest:
        rests.append((at(lay.whole if lay is not None else "0", hed.rest_range), hed.rest * per_head))
    return named, rests


def units(shape: tuple[int, ...] | tuple[int | None, ...]) -> int | None:
    """How much of a parameter a tensor fills, in rows of its last axis: [rows, cols] fills rows; an expert's
    [rows, cols] fills rows of a fused [experts, 2 x rows, cols]; a 1-D one, its length."""
    dims = [d for d in shape if d is not None]
    if len(dims) != len(shape):
        return None
    return math.prod(dims[:-1] if len(dims) > 1 else dims)


def _mismatch(rule: TensorRule, name: str, got: tuple[int, ...], want: tuple[int | None, ...],
              parameter: str) -> Landing | None:
    """The release's behaviour for a tensor of the wrong shape, as observed one row or column off (`parameter`:
    the rule's parameter at this tensor's layer index). SGLang's records observed its loaders' CUDA branch, the one
    a deploy runs (the generator sets `_is_cpu` False in them: verify/sglang_worker.py gpu_loaders)."""
    if len(got) != len(want):
        return Landing("shape", name, parameter, True,
                       f"{name}: {len(got)}-D in the checkpoint, the release builds a {len(want)}-D parameter "
                       f"{parameter}")
    for axis, (g, w) in enumerate(zip(got, want, strict=True)):
        if w is None or g == w:
            continue
        seen = rule.off_by_one.get(f"{axis}{'+' if g > w else '-'}")
        full = tuple(int(x) if x is not None else g for x, g in zip(want, got, strict=True))
        if seen is None:
            return None
        if seen.pads:
            fill = "zeros" if seen.pad_with in ("", "0.0", "-0.0") else seen.pad_with
            return Landing("padded", name, parameter, False,
                           f"{name} is {list(got)} but the release builds {list(full)} from the config: it pads the "
                           f"tensor with {fill} to fit, without a word")
        if seen.raises is not None and re.search(CONTEXT_WORDS, seen.message) and None not in want:
            words = _context_words(seen.message, name, got, tuple(int(w) for w in want if w is not None))
            return Landing("shape", name, parameter, True, f"{seen.raises}: {words}", seen.where)
        if seen.raises is not None:
            words = seen.message.replace("{got}", _size(got)).replace("{want}", _size(full)) \
                .replace("{got_tuple}", str(tuple(got))).replace("{want_tuple}", str(tuple(full))) \
                .replace("{got_dim}", str(g)).replace("{want_dim}", str(w))
            context = f"({name} {list(got)}, parameter {parameter} {list(full)})"  # the release's words name neither
            text = f"{seen.raises}: {words} {context}" if words.strip() else f"{seen.raises} at {seen.where} {context}"
            return Landing("shape", name, parameter, True, text, seen.where)
        if seen.cuts:
            return Landing("cut", name, parameter, False,
                           f"{name} is {list(got)} but the release builds {list(full)} from the config: it loads "
                           f"the part that fits and drops the rest, without a word")
        if seen.leaves_unwritten:
            return Landing("partly-unwritten", name, parameter, False,
                           f"{name} is {list(got)} but the release builds {list(full)} from the config: the rest "
                           f"of {parameter} stays as initialised, without a word")
    return None


def missing_key(model: ArchitectureModel, config: Mapping[str, Any], config_class: str) -> Landing | None:
    """A key the class reads as a plain attribute, with no fallback in this config class: __init__ raises (the
    record's `required`; `config_class` as config_class_of resolves it; a key a recipe set, `required_keys`, only
    for a draft of the model_type the record was built with, whose config class defaults what the record's did).
    Also config_build's __init__ step."""
    required = dict(model.required_bare if config_class in BARE_CONFIGS else model.required)
    if model.config_type is not None and config.get("model_type") == model.config_type[0]:
        required.update(model.required_keys)
    for key, error in sorted(required.items()):
        if key not in config and error.get("type") == "AttributeError":
            return Landing("missing-key", None, None, True,
                           f"AttributeError: '{config_class or 'PretrainedConfig'}' object has no attribute '{key}'",
                           str(error.get("where", "")), key=key)
    return None


def dropped_unshipped(model: ArchitectureModel, version: str) -> tuple[str, ...]:
    """The parameter prefixes of the modules this release of this class drops when no tensor of theirs ships (its
    parameters are then no longer the model's, so nothing stays unwritten): vllm_rows.DROPPED_UNSHIPPED."""
    file = model.where.split(":", 1)[0]
    rows = VLLM_DROPPED_UNSHIPPED if model.runtime == "vllm" else ()
    return tuple(prefix for where, prefix, first, last in rows
                 if where == file and covers(model.runtime, first, last, version))


def record_config(model: ArchitectureModel, config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The config as the record's keys read it: SGLang's DFlash classes take the Domino keys from dflash_config
    first, else the top level, where the record holds them (sglang_config.domino_view)."""
    return domino_view(config) if model.runtime == "sglang" else config


def land(model: ArchitectureModel, config: Mapping[str, Any], tensors: Mapping[str, tuple[int, ...]], *,
         target_hidden: int | None, target_vocab: int | None, config_class: str = "",
         family: Family | None, ignored: tuple[str, ...] = (), dropped: tuple[str, ...] = ()) -> tuple[Landing, ...]:
    """Every problem of these tensors in this release's model of this architecture, errors first, for the facets
    the one pass leaves to the record (parameter_pass.judgement; `family`: the family whose vocab contract describes
    the draft, None for a class none describes, runtimes/generated_verdict.py; `ignored`: the name suffixes the
    release's loader skips where it has no parameter for them, release_verdict.ignored_suffixes; `dropped`: the
    prefixes of the modules it drops when none of their tensors ships, dropped_unshipped). A vocabulary parameter the
    release may take from the target is never reported unfilled here, since the release may take the target's after
    loading (which its load_weights does not show)."""
    config = record_config(model, config)
    config_class = config_class_of(model, config, config_class)
    if (missing := missing_key(model, config, config_class)) is not None:
        return (missing,)
    values = variables(model, config, target_hidden=target_hidden, target_vocab=target_vocab,
                       config_class=config_class)
    shapes, _ = keyed(model, config, values)
    unjudged = _unjudged(model, config, values)
    return _landings(model, frozenset(values.items()), unjudged, unseen(model, config),
                     tuple(sorted((name, tuple(shape)) for name, shape in tensors.items())), family,
                     appearing(model, config), context_width(model, config, values), ignored,
                     tuple(sorted((p, e) for p, e in shapes.items() if p not in unjudged)), dropped,
                     appeared(model, config))


@functools.lru_cache(maxsize=256)
def _landings(model: ArchitectureModel, known: frozenset[tuple[str, int]], unjudged: frozenset[str],
              absent: frozenset[str], tensors: tuple[tuple[str, tuple[int, ...]], ...],
              family: Family | None, appear: frozenset[str] = frozenset(),
              context: tuple[int, int] | None = None, ignored: tuple[str, ...] = (),
              keyed_shapes: tuple[tuple[str, tuple[Expr | None, ...]], ...] = (),
              dropped: tuple[str, ...] = (), at_value: tuple[Appearing, ...] = ()) -> tuple[Landing, ...]:
    """land() past the config: a function of the values it resolved, so the fix simulation's many configs that
    resolve alike (a repair of the vocabulary leaves the backbone's values as they were) are judged once."""
    values = dict(known)
    at_draft = dict(keyed_shapes)  # parameter -> its shape at the draft's values of the structural keys it sets
    span, experts = built_indices(model, values)
    heads = head_count(model, values)
    # every shipped layer and head, and the first few past them, one by one; the rest of what the config declares as
    # one name per parameter (Visit), so the pass's work follows the checkpoint, not the config's numbers
    shipped_layers = frozenset(i for name, _ in tensors if (i := layer_of(name)) is not None)
    shipped_heads = frozenset(h for name, _ in tensors if (h := head_index(name)) is not None)
    layers = visit(span, shipped_layers) if span is not None else None
    head_visit = visit(range(heads), shipped_heads) if heads is not None else None
    found: list[Landing] = []
    covered: dict[str, int] = {}  # parameter (layer index kept) -> rows filled (units)
    for name, got in tensors:
        if (later := past_first_layer.parameter_of(model.runtime, model.name, name)) is not None:
            covered[later] = covered.get(later, 0) + 1  # a norm only layers past the first build (hand-read)
            continue
        rule = rule_for(model, name)
        index = _layer_index(name)
        if any(p == normal(name) or p.endswith("." + normal(name)) for p in absent):
            continue  # a tensor of a module another value of a key builds: not what the samples saw
        # a parameter a key's value makes appear: present (its presence judged below, as before); its shape judged as
        # any other's by what the release builds at that value (`appearing`), else (a record without it) unjudged
        if (added := _appearing_parameter(model, name, appear)) is not None:
            concrete = at_name(added, name, index)
            covered[concrete] = covered.get(concrete, 0) + 1
            if (rule := appeared_rule(model, at_value, name)) is None:
                continue
        side = "" if added is not None else beyond(name, span, experts) or ("past" if past_heads(name, heads) else "")
        if rule is None or side:
            if (problem := _unknown(model, name, side, ignored)) is not None:
                found.append(problem)
            continue
        if rule.refused is not None and rule.refused.raises is not None:
            found.append(Landing("no-parameter", name, None, True, f"{rule.refused.raises}: {rule.refused.message}",
                                 rule.refused.where))
            continue
        judged = judgement(model, rule.parameter, family) if rule.parameter is not None else None
        if judged is None or not judged.shape:
            if rule.parameter is not None and judged is not None and judged.presence:
                concrete = at_name(rule.parameter, name, index)
                covered[concrete] = covered.get(concrete, 0) + (units(got) or 1)  # its shape the aux model's
            continue
        want = wanted(model, rule, at_draft, values, context)
        parameter = at_name(rule.parameter, name, index)
        if want is not None and normal(rule.parameter) not in unjudged:
            problem = _mismatch(rule, name, got, want, parameter)
            if problem is not None:
                found.append(problem)
            if problem is not None and problem.raises:
                continue
            if problem is not None and problem.kind == "padded":  # every row of its shard written
                got = tuple(w if w is not None else g for w, g in zip(want, got, strict=True))
        covered[parameter] = covered.get(parameter, 0) + (units(got) or 1)
    # a module the release drops when none of its tensors ships: its parameters are gone, not unwritten
    gone = tuple(prefix for prefix in dropped if not any(p.startswith(prefix) for p in covered))
    refused: dict[LoadOutcome, list[str]] = {}  # what the release raises -> the parameters it raises it for
    for parameter, exprs in sorted(model.parameters.items()):
        if parameter in model.unfilled or parameter in absent or parameter.startswith(gone or ("\0",)) or \
                not judgement(model, parameter, family).presence:
            continue
        # what the release raises when no tensor fills it (the d2t mapping exists only where D differs from T), and
        # whether its absence and its rows are judged (DSP363)
        if not built(parameter, values):
            continue
        required = model.missing.get(parameter)
        sized = unfilled_judged(model, parameter, family)
        if required is None and not sized:
            continue
        rows = _shape(at_draft.get(parameter, exprs), values)
        need = units(rows) if rows is not None and None not in rows else None
        named, rests = each_index(parameter, layers, head_visit)
        for concrete in named:
            have = covered.get(concrete, 0)
            if have == 0 and required is not None:
                refused.setdefault(required, []).append(concrete)
            elif sized and (have == 0 or (need is not None and have < need and normal(parameter) not in unjudged)):
                what = "no tensor fills it" if have == 0 else f"the shipped tensors fill {have} of its {need} rows"
                found.append(Landing("unfilled", None, concrete, False,
                                     f"{concrete}: {what}; the release loads without a word and it keeps its "
                                     f"initial values", filled=(have, need) if have and need else None))
        for name, count in rests:  # no tensor lands past the named layers and heads: wholly unwritten
            if required is not None:
                refused.setdefault(required, []).append(name)
            elif sized:
                found.append(_unfilled_rest(name, count))
    for template in past_first_layer.templates(model.runtime, model.name):
        named, rests = each_index(template, visit(span[1:], shipped_layers) if span is not None else None, None)
        found.extend(_unfilled(concrete) for concrete in named if span is not None and not covered.get(concrete))
        found.extend(_unfilled_rest(name, count) for name, count in rests)
    for parameter in sorted(p for p in appear if not p.startswith(gone or ("\0",))):
        named, rests = each_index(parameter, layers, head_visit)
        checked = loader_check(model, parameter)
        for concrete in (c for c in named if not covered.get(c)):
            if checked is not None:
                refused.setdefault(checked, []).append(concrete)
            else:
                found.append(_unfilled(concrete))
        for name, count in rests:
            if checked is not None:
                refused.setdefault(checked, []).append(name)
            else:
                found.append(_unfilled_rest(name, count))
    found.extend(_refused_missing(refused))
    # what load_weights raises on comes first, in load order (the sorted names, within the loader's passes:
    # load_phases.py); the refusal of what it left unwritten is raised after it returns
    return tuple(sorted(found, key=lambda x: (not x.raises, x.kind == "missing",
                                             load_phases.position(model.runtime, model.name, x.tensor or ""),
                                             x.kind, x.parameter or "")))


def loader_check(model: ArchitectureModel, parameter: str) -> LoadOutcome | None:
    """What the release's loader raises when no tensor fills a parameter a key makes appear (the samples saw it only
    where a tensor filled it): the check of what load_weights filled is the loader's, over every parameter of the
    model (vLLM's DefaultModelLoader: "Following weights were not initialized from checkpoint: {parameters}"), so
    where the record saw it refuse a parameter of the same module, it refuses this one too; None where it did not
    (the record then says the parameter stays as initialised)."""
    module = normal(parameter).rsplit(".", 1)[0]
    return next((seen for other, seen in sorted(model.missing.items())
                 if other.rsplit(".", 1)[0] == module and "{parameters}" in seen.message), None)


def _unfilled(concrete: str) -> Landing:
    return Landing("unfilled", None, concrete, False,
                   f"{concrete}: no tensor fills it; the release loads without a word and it keeps its initial values")


def _unfilled_rest(name: str, count: int) -> Landing:
    return Landing("unfilled", None, name, False, f"{name}: no tensor fills it in any of the {count} places the release "
                                                  "builds past the shipped ones; the release loads without a word and "
                                                  "they keep their initial values", count=count)


_REST = re.compile(r"(?:^|\.)layers\.(\{\d+\.\.\d+\})\.")
_NAME_SET = re.compile(r"\{('[^']*'(?:, '[^']*')*)\}")


def sorted_sets(text: str) -> str:
    """The words with each Python set of names they print sorted (vLLM's loader prints a set, in an order that
    varies from run to run), so that two sayings of the same refusal compare equal."""
    return _NAME_SET.sub(lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)


def quoted_whole(seen: str, said: str) -> bool:
    """check's words quote a runtime's exception text whole and add where it is raised and what (a bare assert:
    `AssertionError at <where> (<tensor> [..], parameter <name> [..])`; words: `<Type>: <words> (<tensor> ..)`)."""
    return bool(seen) and (said.startswith((seen + " at ", seen + " ("))
                           or re.match(r"\w+: " + re.escape(seen) + r"(?: |$)", said) is not None)


def _refused_missing(refused: Mapping[LoadOutcome, list[str]]) -> list[Landing]:
    """The parameters no tensor fills that the release refuses to leave so, in its words: vLLM's loader names all of
    them in one set ({parameters}; its order is a Python set's, here sorted), a class's own check one at a time."""
    out: list[Landing] = []
    for seen, parameters in refused.items():
        for mark, (left, right) in (("{parameters}", "{}"), ("{parameter_list}", "[]")):
            if mark in seen.message:  # a set (vLLM's loader) or a sorted list (SGLang's Domino check) of them all
                named = left + ", ".join(repr(p) for p in sorted(parameters)) + right
                text = f"{seen.raises}: {seen.message.replace(mark, named)}"
                out.extend(Landing("missing", None, parameter, True, text, seen.where) for parameter in parameters)
                break
        else:
            out.extend(_one_by_one(seen, parameters))
    return out


def _one_by_one(seen: LoadOutcome, parameters: list[str]) -> list[Landing]:
    """A class's own check, one parameter at a time ({i}: its layer index)."""
    out: list[Landing] = []
    for parameter in parameters:
        index = _layer_index(parameter)
        span = _REST.search(parameter)  # a Visit's rest: every layer past the named ones, as one name
        at = str(index) if index is not None else span.group(1) if span is not None else None
        text = seen.message.replace("{i}", at) if at is not None else seen.message
        out.append(Landing("missing", None, parameter, True, f"{seen.raises}: {text}", seen.where))
    return out
