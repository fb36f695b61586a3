"""The generated model of a runtime release: what its own code did with a draft's tensors, read from its data file.

`runtimes/release_data/<runtime>-<release>/` (`release.json`, the behaviour file of each registered draft
architecture, shared with the earlier releases that behave alike, and the release's own line numbers in
`citations.json`: runtimes/release_store.py) is written by `python tools/release_model.py <release>` (vLLM) or
`python tools/sglang_release_model.py <release>` (SGLang, the same schema), which executes that release's wheel on
CPU (never edited by hand; docs/adding-a-runtime-release.md). A record holds, per registered draft architecture,
the parameters its `__init__` builds (each dimension an expression of config keys and of the target's), where its
`load_weights` puts each checkpoint name, what it does with a name it has no parameter for and with a tensor one row
or column off, and what each optional key falls back to. A file is read lazily, once, and only for the (release,
architecture) a run asks about.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from dspark_ckpt.runtimes.release import ordered, resolve
from dspark_ckpt.runtimes.release_store import (
    DATA,
    RELEASE_FILE,
    at,
    behaviour,
    citations,
    cite,
    folder,
    join,
    release_file,
)

SCHEMA = 2  # 2: behaviour files shared between releases, line numbers in citations.json
LAYER = re.compile(r"(?<=layers\.)\d+(?=\.)")
EXPERT = re.compile(r"(?<=\.experts\.)\d+(?=\.)")  # a MoE checkpoint's tensor per expert: `mlp.experts.7.up_proj`
# a draft with several heads, one module each in a list (Medusa's `blocks.{h}`, `lm_heads.{h}`; a checkpoint's
# `medusa_heads.{h}`): the head's index
HEAD = re.compile(r"(?<=heads\.)\d+(?=\.)|(?<=\bblocks\.)\d+(?=\.)")
# a checkpoint saved from a top-level nn.Sequential of per-head nn.Sequentials (FasterDecoding's Medusa:
# `{head}.{layer}.linear.weight`, the head's last module its lm_head `{head}.{layers}.weight`): head, then position
SEQUENTIAL = re.compile(r"^([0-9]+)[.]([0-9]+)(?=[.])")  # a checkpoint name's two leading indices, no version
V = TypeVar("V")


@functools.lru_cache(maxsize=16384)
def normal(name: str) -> str:
    """A tensor or parameter name with its layer, expert and head indices generalised: `layers.3.mlp.experts.7.up_proj`
    -> `layers.{i}.mlp.experts.{e}.up_proj`, `blocks.1.layers.0.weight` -> `blocks.{h}.layers.{i}.weight`, a
    nested Sequential's `1.0.linear.weight` -> `{h}.{i}.linear.weight`."""
    return SEQUENTIAL.sub("{h}.{i}", HEAD.sub("{h}", EXPERT.sub("{e}", LAYER.sub("{i}", name))))


def head_index(name: str) -> int | None:
    """The head a checkpoint or parameter name belongs to (HEAD, SEQUENTIAL); None where it names none."""
    found = HEAD.search(name) or SEQUENTIAL.search(name)
    return int(found.group(1) if found.re is SEQUENTIAL else found.group(0)) if found else None


def sequential_position(name: str) -> int | None:
    """The position within its head of a nested Sequential's name (`1.0.linear.weight`: 0); None otherwise."""
    found = SEQUENTIAL.search(name)
    return int(found.group(2)) if found else None


@dataclass(frozen=True, slots=True)
class Expr:
    """A dimension: sum of coefficient x product of variables (config keys; `target.*` for the target's), over a
    common denominator so that evaluating it is integer arithmetic."""

    terms: tuple[tuple[int, tuple[str, ...]], ...]  # numerators over `denominator`
    denominator: int
    text: str
    variables: frozenset[str]

    def value(self, values: Mapping[str, int]) -> int | None:
        """The dimension for these values; None when a variable it needs is unknown or it is not a whole number."""
        total = 0
        for coef, names in self.terms:
            product = coef
            for v in names:
                known = values.get(v)
                if known is None:
                    return None
                product *= known
            total += product
        whole, rest = divmod(total, self.denominator)
        return whole if rest == 0 else None


_EXPRS: dict[str, Expr] = {}  # by text: every release's files write the same few dimensions, over and over


def _expr(dim: Mapping[str, Any]) -> Expr | None:
    """A dimension of the data file; the same text is the same expression (tools/release_model.py prints the text
    from the terms), built once per process."""
    if "expr" not in dim:
        return None
    text = dim.get("text")
    if isinstance(text, str) and text:
        found = _EXPRS.get(text)
        if found is None:
            found = _EXPRS[text] = _build_expr(dim)
        return found
    return _build_expr(dim)


def _build_expr(dim: Mapping[str, Any]) -> Expr:
    denominator = math.lcm(1, *(int(d) for _, d, _ in dim["expr"]))
    terms = tuple((int(n) * (denominator // int(d)), tuple(vs)) for n, d, vs in dim["expr"])
    return Expr(terms, denominator, str(dim.get("text", "")), frozenset(v for _, vs in terms for v in vs))


@dataclass(frozen=True, slots=True)
class LoadOutcome:
    """What the release did with a tensor off by one along an axis: raised (type, words, where), or not."""

    raises: str | None
    message: str
    where: str
    cuts: bool = False
    leaves_unwritten: bool = False
    pads: bool = False  # a shorter tensor loaded, the rest of its parameter written by the loader
    pad_with: str = ""  # what it writes there ("0.0": zeros; "-inf": an attention sink's padding), where one value


@dataclass(frozen=True, slots=True)
class TensorRule:
    """One checkpoint name (layer index generalised) and what the release does with it."""

    parameter: str | None  # None: the release skips the name (or refuses it)
    shape: tuple[Expr | None, ...] | None
    off_by_one: Mapping[str, LoadOutcome]  # "0+": one row more than expected, "1-": one column fewer, ...
    refused: LoadOutcome | None = None  # the release raises on the name itself (a name that is no parameter)


@dataclass(frozen=True, slots=True, eq=False)
class Appearing:
    """What one value of a structural key makes appear (`structural.<key>.appearing`, `values.<name>.appearing`):
    the parameters' shapes and the checkpoint tensors that fill them, as the architecture's own; compared and hashed
    by identity."""

    parameters: Mapping[str, tuple[Expr | None, ...]]
    tensors: Mapping[str, TensorRule]
    # keys read only at that value that move these shapes -> the value they hold at (elsewhere: unjudged)
    moved_by: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, eq=False)
class ArchitectureModel:
    """One architecture of one release, as its data file says; one object per file (architecture_model caches it),
    compared and hashed by identity."""

    name: str
    cls: str
    where: str
    not_built: Mapping[str, Any] | None
    layers: Expr | None  # how many layers (`layers.{i}`) it builds
    parameters: Mapping[str, tuple[Expr | None, ...]]
    tensors: Mapping[str, TensorRule]
    unknown: Mapping[str, LoadOutcome]  # per probe form: plain, `layers.0.` and `model.layers.0.` names
    nested: LoadOutcome | None  # a bare parameter shipped as `<name>.weight` ({name}, {param} in the words)
    unfilled: frozenset[str]  # parameters no checkpoint name the probe fed could fill
    fallbacks: Mapping[str, str]  # optional key -> what the release uses when the config leaves it out
    required: Mapping[str, Mapping[str, Any]]  # optional key -> the error when the config leaves it out
    # a key the samples do not vary -> {"base": its value there, "changes": the parameters another value moves}
    structural: Mapping[str, Mapping[str, Any]]
    layout: tuple[str, ...] = ()  # the checkpoint names of the layout that fills the most parameters
    # the same as fallbacks/required for a bare PretrainedConfig (vLLM's SpeculatorsConfig: no transformers defaults)
    fallbacks_bare: Mapping[str, str] = field(default_factory=dict)
    required_bare: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # SGLang: the class's `load_lm_head_from_target` after __init__, per way draft_vocab_size is stated ("declared",
    # "null"); True: the speculative worker puts the target's lm_head in place of the draft's (eagle_worker_v2.py)
    head_from_target: Mapping[str, Any] = field(default_factory=dict)
    reads: frozenset[str] = frozenset()  # the top-level keys the class's __init__ reads as attributes
    # the index of its first layer (an MTP head after its target's layers: num_hidden_layers); None: 0
    first_layer: Expr | None = None
    experts: Expr | None = None  # how many experts (`experts.{e}`) a MoE layer loads, one tensor per projection each
    heads: Expr | None = None  # how many heads (`{h}`: HEAD) it builds, where it builds a list of them
    # the model_type the samples were built with, and the config class it picks in this release (transformers' or
    # the runtime's own registered class): a draft of that model_type has that class's defaults
    config_type: tuple[str, str] | None = None
    # a parameter none of whose tensors is shipped -> what the release raises ({parameters}: the set it names);
    # a parameter not here loads without a word when missing (DSP363)
    missing: Mapping[str, LoadOutcome] = field(default_factory=dict)
    # "key=value" -> the first layer's index where the config has that value, otherwise than first_layer says (a
    # NextN head of SGLang: layer 0 for a one-layer config, the exported head's; its target's count otherwise)
    first_layer_exceptions: Mapping[str, int] = field(default_factory=dict)
    runtime: str = ""  # "vllm" or "sglang": whose release built it
    # how many of the samples the class refused (`samples_refused`: a DFlash backbone refuses every sample that
    # varies its layer count, so its fitted count is the base sample's constant)
    samples_refused: int = 0
    # pairs of keys (`target.*`: the target's) whose values the class's __init__ refuses to differ, and its words
    refused_apart: tuple[tuple[str, str, LoadOutcome], ...] = ()
    # each sample of one key's alternate value the class refused (`samples_refused` "key=value"), and its words
    refused_values: tuple[tuple[str, Any, LoadOutcome], ...] = ()
    # a key the base config holds -> what the class builds when the config leaves it out (`appears`, `disappears`,
    # `resized`; `with_absent`: keys it must leave out with it, or the class refuses): where that moves a parameter
    absent_keys: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # a key the base config holds that __init__ requires (absent_keys' `required`: a key a recipe sets, MiniMax's
    # DSpark block_size) -> its error; seen with the record's model_type (config_type), and judged for it only
    required_keys: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # (structural key, value) -> what that value makes appear, where the record says (`appearing`): a flag's or
    # count's alternate, each name of a key whose values are names
    appearing: Mapping[tuple[str, Any], Appearing] = field(default_factory=dict)


@functools.cache
def key_shapes(model: ArchitectureModel) -> Mapping[str, Mapping[str, tuple[Expr | None, ...]]]:
    """structural key -> parameter (layer index generalised) -> its shape as expressions of the key (`len(<key>)`
    for a list) and the sampled sizes, where the record fitted them (`structural.<key>.shapes`): what the release
    builds at the draft's own value of a key the samples held at one value."""
    return {key: {p: tuple(_expr(d) for d in dims) for p, dims in probe["shapes"].items()}
            for key, probe in model.structural.items() if isinstance(probe.get("shapes"), Mapping)}


def key_variable(key: str, value: Any) -> str:
    """The variable a structural key's value is in the record's expressions: the key, `len(<key>)` for a list."""
    return f"len({key})" if isinstance(value, list) else key


def sized_value(value: Any) -> int | None:
    """The number a key's value sizes a parameter by: a positive count (a whole float too), a list's length."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, float) and value > 0 and value.is_integer():
        return int(value)
    if isinstance(value, list) and value:
        return len(value)
    return None


def config_value(config: Mapping[str, Any], key: str) -> Any:
    """A key as the data files name it in a config: `eagle_config.norm_before_fc` is `norm_before_fc` of the
    `eagle_config` mapping; None where either is absent."""
    head, _, sub = key.partition(".")
    value = config.get(head)
    if sub:
        value = value.get(sub) if isinstance(value, Mapping) else None
    return value


class OnLookup(Mapping[str, V], Generic[V]):
    """A read-only mapping whose values are built from the data file's entries when first looked up: a check reads
    the few names its checkpoint ships, not every layout the probe fed (about a hundred tensor names per
    architecture, each with its off-by-one outcomes; docs/architecture.md, "Start-up")."""

    __slots__ = ("_build", "_built", "_raw")

    def __init__(self, raw: Mapping[str, Any], build: Callable[[str, Any], V]) -> None:
        self._raw, self._build = raw, build
        self._built: dict[str, V] = {}

    def __getitem__(self, key: str) -> V:
        built = self._built
        if key not in built:
            built[key] = self._build(key, self._raw[key])  # KeyError for a name the file does not hold
        return built[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def _tensor_rule(lines: Mapping[str, int], prefix: str, fact: Mapping[str, Any]) -> TensorRule:
    return TensorRule(fact.get("parameter"), tuple(_expr(d) for d in fact["shape"]) if fact.get("shape") else None,
                      # read on a mismatch only
                      OnLookup(fact.get("off_by_one", {}),
                               lambda axis, seen: _outcome(seen, lines, at(at(prefix, "off_by_one"), axis))),
                      _outcome(fact["refused"], lines, at(prefix, "refused")) if "refused" in fact else None)


def _outcome(seen: Mapping[str, Any], lines: Mapping[str, int], prefix: str) -> LoadOutcome:
    """One outcome of the behaviour file at `prefix`, its `where` with the line this release's wheel has it at."""
    return LoadOutcome(raises=seen.get("raises"), message=str(seen.get("message", "")),
                       where=str(cite(seen.get("where", ""), lines, prefix)),
                       cuts=bool(seen.get("cuts")), leaves_unwritten=bool(seen.get("leaves_unwritten")),
                       pads=bool(seen.get("pads")), pad_with=str(seen.get("with", "")))


def _outcomes(doc: Mapping[str, Any], section: str, lines: Mapping[str, int]) -> dict[str, LoadOutcome]:
    return {k: _outcome(v, lines, at(section, k)) for k, v in doc.get(section, {}).items()}


def _refused_values(refused: Mapping[str, Any], lines: Mapping[str, int]) -> tuple[tuple[str, Any, LoadOutcome], ...]:
    """The samples that set one key to one alternate value ("num_hidden_layers=2", not a joint sample) and what the
    class raised on each."""
    out = []
    for label, seen in sorted(refused.items()):
        key, eq, text = label.partition("=")
        if not eq or not isinstance(seen, Mapping) or not seen.get("raises"):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        out.append((key, value, _outcome(seen, lines, at("samples_refused", label))))
    return tuple(out)


def _appearing(structural: Mapping[str, Any], lines: Mapping[str, int]) -> dict[tuple[str, Any], Appearing]:
    """(key, value) -> the record of what that value makes appear: the alternate's, and each named value's."""
    out: dict[tuple[str, Any], Appearing] = {}
    for key, probe in structural.items():
        where = at("structural", key)
        named = [(n, seen, at(at(where, "values"), n)) for n, seen in (probe.get("values") or {}).items()]
        for value, seen, prefix in [(probe.get("alternate"), probe, where), *named]:
            found = seen.get("appearing") if isinstance(seen, Mapping) else None
            if not isinstance(found, Mapping) or isinstance(value, (list, dict)):
                continue
            tensors = at(at(prefix, "appearing"), "tensors")
            out[(key, value)] = Appearing(
                {p: tuple(_expr(d) for d in dims) for p, dims in found.get("parameters", {}).items()},
                OnLookup(found.get("tensors", {}),
                         lambda name, fact, tensors=tensors: _tensor_rule(lines, at(tensors, name), fact)),
                dict(found.get("moved_by") or {}))
    return out


def _architecture(name: str, doc: Mapping[str, Any], lines: Mapping[str, int], runtime: str = "") -> ArchitectureModel:
    """The model of a behaviour file (shared by the releases that behave alike) with one release's `lines`."""
    tensors: Mapping[str, TensorRule] = OnLookup(doc.get("tensors", {}),
                                                 lambda key, fact: _tensor_rule(lines, at("tensors", key), fact))
    def falls_back(section: str) -> dict[str, str]:
        return {k: str(v["falls_back_to"]) for k, v in doc.get(section, {}).items()
                if isinstance(v, Mapping) and v.get("falls_back_to") is not None}

    def requires(section: str) -> dict[str, Mapping[str, Any]]:
        return {k: join(v["required"], lines, at(at(section, k), "required"))
                for k, v in doc.get(section, {}).items() if isinstance(v, Mapping) and "required" in v}

    layers = _expr(doc["layers"]) if doc.get("layers") else None
    not_built = doc.get("not_built")
    absent: Mapping[str, Mapping[str, Any]] = join(doc.get("absent_keys", {}), lines, "absent_keys")
    return ArchitectureModel(
        name=name, cls=str(doc.get("class")), where=str(cite(doc.get("where"), lines, "")),
        not_built=join(not_built, lines, "not_built") if not_built is not None else None,
        layers=layers, parameters={k: tuple(_expr(d) for d in dims) for k, dims in doc.get("parameters", {}).items()},
        tensors=tensors, unknown=_outcomes(doc, "unknown_name", lines),
        nested=_outcome(doc["nested_weight"], lines, "nested_weight") if doc.get("nested_weight") else None,
        unfilled=frozenset(doc.get("unfilled", ())), missing=_outcomes(doc, "missing", lines),
        fallbacks=falls_back("fallbacks"), required=requires("fallbacks"),
        fallbacks_bare=falls_back("fallbacks_bare"), required_bare=requires("fallbacks_bare"),
        structural=doc.get("structural", {}), appearing=_appearing(doc.get("structural", {}), lines),
        absent_keys={k: v for k, v in absent.items() if "required" not in v},
        required_keys={k: v["required"] for k, v in absent.items() if "required" in v},
        layout=tuple(doc.get("layout", {}).get("names", ())),
        head_from_target=doc.get("lm_head_from_target", {}), reads=frozenset(doc.get("reads", ())),
        first_layer=_expr(doc["first_layer"]) if doc.get("first_layer") else None,
        experts=_expr(doc["experts"]) if doc.get("experts") else None,
        heads=_expr(doc["heads"]) if doc.get("heads") else None,
        first_layer_exceptions={str(k): int(v) for k, v in doc.get("first_layer_exceptions", {}).items()},
        runtime=runtime, samples_refused=len(doc.get("samples_refused") or {}),
        refused_values=_refused_values(doc.get("samples_refused") or {}, lines),
        refused_apart=tuple((str(r["keys"][0]), str(r["keys"][1]), _outcome(r, lines, at("refused_apart", str(i))))
                            for i, r in enumerate(doc.get("refused_apart", ()))),
        config_type=(str(doc["config"]["model_type"]), str(doc["config"]["class"]))
        if isinstance(doc.get("config"), Mapping) and doc["config"].get("class") else None)


@functools.cache
def release_record(runtime: str, release: str) -> Mapping[str, Any] | None:
    """The release's own file (`release.json`: the registry, the generating command, and for each architecture the
    release whose folder holds its behaviour file), or None when no model was generated for `runtime==release`."""
    doc = release_file(runtime, release, RELEASE_FILE)
    if doc is not None and doc.get("schema") != SCHEMA:
        raise ValueError(f"{folder(runtime, release) / RELEASE_FILE}: schema {doc.get('schema')!r}, this dspark-ckpt "
                         f"reads {SCHEMA}")
    return doc


@functools.cache
def architecture_model(runtime: str, release: str, architecture: str) -> ArchitectureModel | None:
    """What `runtime==release` builds and loads for `architecture` (one small file, read once), or None when no
    model was generated for the release or the release does not register the architecture."""
    record = release_record(runtime, release)
    holder = record["architectures"].get(architecture) if record is not None else None
    if not isinstance(holder, str) or "/" in holder or holder.startswith("."):
        return None
    doc = behaviour(runtime, holder, architecture)
    if doc is None:
        return None
    return _architecture(architecture, doc, citations(runtime, release, architecture), runtime)


@functools.cache
def generated_releases(runtime: str) -> tuple[str, ...]:
    """The releases of `runtime` with a generated model, oldest first."""
    prefix = f"{runtime}-"
    found = [p.name[len(prefix):] for p in DATA.glob(f"{prefix}*") if (p / RELEASE_FILE).is_file()]
    return tuple(ordered(runtime, found))


def built_model(runtime: str, version: str, architecture: str | None) -> ArchitectureModel | None:
    """The generated model a verdict on `runtime==version` reads for `architecture` (modelled_release's), where
    the release's code built the class; None where there is no data, no such class, or it was not built."""
    release = modelled_release(runtime, version)
    model = architecture_model(runtime, release, architecture) if release is not None and architecture else None
    return model if model is not None and model.not_built is None else None


@functools.cache
def modelled_release(runtime: str, release: str) -> str | None:
    """The generated model a verdict on `runtime==release` reads, as release.resolve answers (`modelled`): its own;
    else the newest generated release of its line at or below it (vLLM changes behaviour by minor, so 0.27.1 reads
    0.27.0's, as the contract rows do; SGLang by release, so only a post release reads its base's); else, for a
    release newer than every generated one, the newest (the verdict says DSP220 already). Any other release has
    none: its code may differ in kind."""
    found = resolve(runtime, release, generated_releases(runtime))
    return found.modelled if found is not None else None
