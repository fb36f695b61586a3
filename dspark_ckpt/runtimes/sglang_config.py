"""Pure: what SGLang's own config parsers read from a draft's config.json (and tensor names), per parser variant.

Ports of `parse_dspark_draft_config` (speculative/dspark_components/dspark_config.py, 0.5.16-0.5.23),
`parse_dflash_draft_config` (speculative/dflash_utils.py, mask token and selector fields) and
`is_nemotron_35_draft_config` (speculative/dflash_utils.py, 0.5.19+), with the key precedence of each release.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.config_classes import config_class

_PREFIXED = ("dspark_block_size", "dspark_markov_rank", "dspark_noise_token_id", "dspark_target_layer_ids")
HEAD_TYPES = ("vanilla", "gated", "rnn")
# models/dflash.py load_weights (0.5.20+): the Domino projector's tensor names, checked after stripping `model.`
DOMINO_PREFIXES = ("prefix_gru.", "embed_proj.")
# The parameters each Markov head class builds (models/dspark.py, 0.5.16-0.5.23), and the class named in errors.
MARKOV_PARAMS: dict[str, tuple[str, frozenset[str]]] = {
    "vanilla": ("VanillaMarkov", frozenset({"markov_w1.weight", "markov_w2.weight"})),
    "gated": ("GatedMarkovHead", frozenset({"markov_w1.weight", "markov_w2.weight", "gate_proj.weight",
                                            "gate_proj.bias"})),
    "rnn": ("RNNHead", frozenset({"markov_w1.weight", "markov_w2.weight", "joint_proj.weight", "joint_proj.bias"})),
}


@dataclass(frozen=True, slots=True)
class DsparkParse:
    """parse_dspark_draft_config's result for one variant: the first ValueError, else the values it validated."""

    error: str | None = None
    markov_rank: int = 0
    markov_head_type: str | None = None
    mask_token_id: int | None = None


@dataclass(frozen=True, slots=True)
class SglangConfig:
    """The config facts SGLang's draft loaders read; defaults describe an empty config.json."""

    architecture: str | None = None
    model_type: str | None = None
    speculators: bool = False  # a speculators-format config whose sizes are not at the top level, where SGLang reads
    tie_word_embeddings: bool = False
    num_hidden_layers: int | None = None
    target_hidden_differs: bool = False  # `target_hidden_size` present and != hidden_size: EAGLE-3 keeps its embed
    layers_named: bool = False  # tensors named `layers.N.*` (vLLM / speculators spelling)
    midlayer_named: bool = False  # tensors named `midlayer.*` (SGLang's EAGLE-3 module before 0.5.12)
    # The params_dict key LlamaForCausalLM.load_weights' stacked branch looks up first (sorted names) for a layer
    # tensor the EAGLE-3 model has no module for: `model.` + the name with its q/k/v or gate/up shard replaced by the
    # fused parameter (0.4.4.post2-0.4.8.post1 raise KeyError on it); None when no such tensor is shipped.
    stacked_layer_key: str | None = None
    dspark: DsparkParse = field(default_factory=DsparkParse)  # 0.5.16-0.5.22 precedence
    dspark_merged: DsparkParse = field(default_factory=DsparkParse)  # 0.5.23: dflash_config merged under dspark
    markov_rank_top: int = 0  # build_markov_head: `int(getattr(config, "markov_rank", 0))`, top level only
    markov_head_type_top: str = "vanilla"
    markov_cols: tuple[int | None, int | None] = (None, None)  # (markov_w1, markov_w2) rank columns as shipped
    markov_names: tuple[str, ...] = ()  # `markov_head.*` tensor names, sorted (the order load_weights sees them)
    confidence_names: tuple[str, ...] = ()  # `confidence_head.*` tensor names, sorted (vLLM's loaders read them too)
    nemotron35: bool = False  # is_nemotron_35_draft_config (0.5.19+): the draft keeps its own embed_tokens
    dflash_error: str | None = None  # parse_dflash_draft_config's mask_token_id validation
    dflash_mask_token_id: int | None = None
    dflash_mask_token: str = "<|MASK|>"  # DEFAULT_DFLASH_MASK_TOKEN
    selector_rank: int = 0
    selector_top_k: int = 0
    # Domino (0.5.20+): parse_dflash_draft_config's projector_type (dflash_config, else the top level), as Python's
    # repr names it in the refusal; whether it selects Domino; the first Domino field error when it does
    projector_repr: str = "None"
    domino: bool = False
    domino_error: str | None = None
    domino_dims: tuple[int | None, int | None] = (None, None)  # (gru_hidden_dim, emb_dim) as parsed
    # `prefix_gru.*` / `embed_proj.*` tensors as shipped (name, shape), sorted by name
    domino_tensors: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @property
    def config_class(self) -> str | None:
        """The class SGLang builds the config with (runtimes/config_classes.py); None for a model_type none knows."""
        return config_class("sglang", self.model_type)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nested(cfg: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = cfg.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def _text(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """_get_text_config: the draft's text_config if it has one, else the config itself."""
    value = cfg.get("text_config")
    return value if isinstance(value, Mapping) else cfg


def _first(*candidates: tuple[bool, Any]) -> Any:
    """The value of the first (present, value) pair that is present, as `d.get(k, default)` chains read."""
    for present, value in candidates:
        if present:
            return value
    return None


def _as_int(value: Any) -> int | None:
    """`int(raw) if raw is not None else ...` on the JSON values a config holds (a float or string as int() would)."""
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity, which Python's json reads
        return None


def _int_call(value: Any) -> tuple[int | None, str | None]:
    """`int(raw)` as the release calls it on a config value: the int, or the error it raises, in Python's words
    (`ValueError: invalid literal for int() with base 10: 'abc'`, `OverflowError: cannot convert float infinity to
    integer`, a TypeError for a list)."""
    try:
        return int(value), None
    except (TypeError, ValueError, OverflowError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def parse_dspark(cfg: Mapping[str, Any], *, merged: bool) -> DsparkParse:
    """parse_dspark_draft_config: markov_rank, markov_head_type and mask_token_id, each from the first source
    present: the `dspark_*` key, the nested dspark_config (0.5.23: dflash_config then dspark_config), text_config,
    the top level; the mask falls back to dflash_config.mask_token_id last (before 0.5.23)."""
    nested = _nested(cfg, "dspark_config")
    if merged:
        nested = {**_nested(cfg, "dflash_config"), **nested}
    text = _text(cfg)
    prefixed = any(cfg.get(k) is not None for k in _PREFIXED)

    def pick(prefix_key: str, key: str, last: tuple[bool, Any]) -> Any:
        if cfg.get(prefix_key) is not None:
            return cfg[prefix_key]
        return _first((key in nested, nested.get(key)), (key in text, text.get(key)), (key in cfg, cfg.get(key)),
                      last)

    raw_rank = pick("dspark_markov_rank", "markov_rank", (True, 0))
    # `int(raw_markov_rank) if raw_markov_rank is not None else 0` (dspark_config.py L249 @ 0.5.23)
    rank, raised = _int_call(raw_rank) if raw_rank is not None else (0, None)
    if rank is None:
        return DsparkParse(raised)
    if rank < 0:
        return DsparkParse(m.E_DSPARK_RANK_NEGATIVE.format(rank=rank), rank)
    kind = pick("dspark_markov_head_type", "markov_head_type", (True, None))
    if rank > 0 and kind is None and not prefixed:
        return DsparkParse(m.E_DSPARK_HEAD_TYPE, rank)
    if kind is not None:
        kind = str(kind).lower()
        if kind not in HEAD_TYPES:
            return DsparkParse(m.E_DSPARK_HEAD_TYPE_PARSE.format(kind=kind), rank)
    dflash_mask = _nested(cfg, "dflash_config").get("mask_token_id")
    raw_mask = pick("dspark_noise_token_id", "mask_token_id", (True, None if merged else dflash_mask))
    mask, raised = _int_call(raw_mask) if raw_mask is not None else (None, None)  # L289 @ 0.5.23
    if raised is not None:
        return DsparkParse(raised, rank, kind)
    if mask is not None and mask < 0:
        return DsparkParse(m.E_DSPARK_MASK_NEGATIVE.format(m=mask), rank, kind)
    return DsparkParse(None, rank, kind, mask)


def _dflash(cfg: Mapping[str, Any]) -> tuple[str | None, int | None, str]:
    """parse_dflash_draft_config's mask fields: dflash_config.mask_token_id (an int >= 0) and mask_token."""
    nested = _nested(cfg, "dflash_config")
    token = nested.get("mask_token")
    token = token if isinstance(token, str) and token else "<|MASK|>"
    raw = nested.get("mask_token_id")
    if raw is None:
        return None, None, token
    if _int(raw) is None:
        return m.E_DFLASH_MASK_TYPE.format(value=raw, kind=type(raw).__name__), None, token
    if raw < 0:
        return m.E_DFLASH_MASK_NEGATIVE.format(m=raw), None, token
    return None, raw, token


def _nemotron35(cfg: Mapping[str, Any]) -> bool:
    """is_nemotron_35_draft_config (speculative/dflash_utils.py:469-506, 0.5.19)."""
    archs = cfg.get("architectures") or []
    # the first match ends the scan: a hostile list of millions is read once per release otherwise
    if not isinstance(archs, list) or not any(isinstance(a, str) and a in ("DFlashDraftModel", "Qwen3DSparkModel")
                                              for a in archs):
        return False
    if not cfg.get("has_embed_tokens") or cfg.get("has_lm_head"):
        return False
    quant = cfg.get("quantization_config") or {}
    if not isinstance(quant, Mapping) or quant.get("quant_algo") != "W4A16_NVFP4":
        return False
    nested = _nested(cfg, "dflash_config")
    targets = nested.get("target_layer_ids", cfg.get("target_layer_ids"))
    aux = cfg.get("eagle_aux_hidden_state_layer_ids")
    if not isinstance(targets, list) or not isinstance(aux, list) or not targets or len(targets) != len(aux):
        return False
    if any(_as_int(a) is None or _as_int(b) is None or _as_int(a) + 1 != _as_int(b)  # type: ignore[operator]
           for a, b in zip(targets, aux)):
        return False
    return nested.get("sample_from_anchor", cfg.get("sample_from_anchor", True)) is False


def _optional_int(value: Any, field: str, minimum: int) -> tuple[int | None, str | None]:
    """_parse_optional_int (speculative/dflash_utils.py:501-516 @ 0.5.23): None passes, int() or an error."""
    if value is None:
        return None, None
    try:
        parsed = int(value)
    except (TypeError, ValueError, OverflowError):
        return None, m.E_DOMINO_INVALID.format(field=field, value=_py_repr(value))
    if parsed < minimum:
        return None, m.E_DOMINO_MIN.format(field=field, cmp="positive" if minimum == 1 else f">= {minimum}",
                                           got=parsed)
    return parsed, None


def _py_repr(value: Any) -> str:
    """repr() of a JSON value as Python prints it (true -> True, null -> None)."""
    return repr(value)


def _domino(cfg: Mapping[str, Any]) -> tuple[str, bool, str | None, tuple[int | None, int | None]]:
    """parse_dflash_draft_config's Domino block (speculative/dflash_utils.py:736-800 @ 0.5.20, :728-791 @ 0.5.23):
    projector_type from dflash_config, else the top level; only "domino" selects it, and then shift_label,
    pure_draft_prefix_len, gru_hidden_dim and emb_dim are required."""
    nested = _nested(cfg, "dflash_config")

    def get(key: str) -> Any:
        return nested[key] if key in nested else cfg.get(key)

    kind = get("projector_type")
    if kind != "domino":
        return _py_repr(kind), False, None, (None, None)
    shift = get("shift_label")
    prefix, error = _optional_int(get("pure_draft_prefix_len"), "DFLASH Domino pure_draft_prefix_len", 0)
    gru, error2 = _optional_int(get("gru_hidden_dim"), "DFLASH Domino gru_hidden_dim", 1)
    nested_emb, error3 = _optional_int(nested.get("emb_dim"), "DFLASH Domino dflash_config.emb_dim", 1)
    top_emb, error4 = _optional_int(cfg.get("emb_dim"), "DFLASH Domino top-level emb_dim", 1)
    first = error or error2 or error3 or error4
    if first is None and nested_emb is not None and top_emb is not None and nested_emb != top_emb:
        first = m.E_DOMINO_EMB_DIFFERS.format(nested=nested_emb, top=top_emb)
    if first is None and not isinstance(shift, bool):
        first = m.E_DOMINO_SHIFT.format(value=_py_repr(shift))
    if first is None and prefix != 1:
        first = m.E_DOMINO_PREFIX.format(value=_py_repr(prefix))
    if first is None and gru is None:
        first = m.E_DOMINO_GRU
    if first is None and nested_emb is None and top_emb is None:
        first = m.E_DOMINO_EMB
    return "'domino'", True, first, (gru, nested_emb if nested_emb is not None else top_emb)


SPECULATORS_UNREAD = ("SGLang reads no speculators-format config: LlamaConfig takes top-level keys only, so the sizes "
                      "in transformer_layer_config are never seen")  # DSP348, in the build and in the rows' check


def unread_speculators(cfg: Mapping[str, Any]) -> bool:
    """A speculators-format config whose sizes are not at the top level, where SGLang reads them (no release reads
    speculators_model_type or transformer_layer_config: docs/upstream-notes.md section 3, Registration)."""
    return isinstance(cfg.get("speculators_model_type"), str) \
        and not all(key in cfg for key in ("vocab_size", "hidden_size"))


def config_fields(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The SglangConfig fields config.json alone decides (a config-only repair changes them)."""
    archs = cfg.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    model_type = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
    hidden, target_hidden = cfg.get("hidden_size"), cfg.get("target_hidden_size")
    error, mask, token = _dflash(cfg)
    nested = _nested(cfg, "dflash_config")
    projector, domino, domino_error, dims = _domino(cfg)
    return {
        "architecture": arch, "model_type": model_type,
        "speculators": unread_speculators(cfg),
        "tie_word_embeddings": cfg.get("tie_word_embeddings") is True,
        "num_hidden_layers": _int(cfg.get("num_hidden_layers")),  # LlamaConfig reads the top level
        "target_hidden_differs": "target_hidden_size" in cfg and target_hidden != hidden,
        "dspark": parse_dspark(cfg, merged=False), "dspark_merged": parse_dspark(cfg, merged=True),
        "markov_rank_top": _as_int(cfg.get("markov_rank", 0)) or 0,
        "markov_head_type_top": str(cfg.get("markov_head_type", "vanilla")).lower(),
        "nemotron35": _nemotron35(cfg), "dflash_error": error, "dflash_mask_token_id": mask,
        "dflash_mask_token": token, "selector_rank": _as_int(nested.get("selector_rank", 0)) or 0,
        "selector_top_k": _as_int(nested.get("selector_top_k", 0)) or 0,
        "projector_repr": projector, "domino": domino, "domino_error": domino_error, "domino_dims": dims,
    }


def draft_vocab_config(cfg: Mapping[str, Any]) -> str:
    """How config.json states draft_vocab_size: "int", "null" or "absent" (SGLang's EAGLE-3 tells them apart)."""
    return "absent" if "draft_vocab_size" not in cfg else "null" if cfg["draft_vocab_size"] is None else "int"


# LlamaForCausalLM.load_weights' stacked_params_mapping (models/llama.py, every release): (fused, shard)
STACKED = ((".qkv_proj", ".q_proj"), (".qkv_proj", ".k_proj"), (".qkv_proj", ".v_proj"),
           (".gate_up_proj", ".gate_proj"), (".gate_up_proj", ".up_proj"))


def stacked_layer_key(names: Iterable[str]) -> str | None:
    """The first key (sorted names) the stacked branch indexes for a `layers.N.*` tensor: EAGLE-3's layer is
    `midlayer`, so none exists. `.bias` names absent from params_dict are skipped there first."""
    for name in sorted(names):
        if not name.startswith(("layers.", "model.layers.")) or name.endswith(".bias"):
            continue
        for fused, shard in STACKED:
            if shard in name:
                return f"model.{name.replace(shard, fused)}"
    return None


def sglang_config(cfg: Mapping[str, Any] | None, shapes: Mapping[str, tuple[int, ...]] | None = None
                  ) -> SglangConfig:
    """The view from a parsed config.json and the checkpoint's tensor names -> shapes."""
    cfg = cfg if isinstance(cfg, Mapping) else {}
    names: Iterable[str] = shapes or {}
    cols = tuple((shapes or {}).get(f"markov_head.{w}.weight", ()) for w in ("markov_w1", "markov_w2"))
    return SglangConfig(
        layers_named=any(n.startswith(("layers.", "model.layers.")) for n in names),
        midlayer_named=any(n.startswith(("midlayer.", "model.midlayer.")) for n in names),
        stacked_layer_key=stacked_layer_key(names),
        markov_cols=tuple(c[1] if len(c) == 2 else None for c in cols),  # type: ignore[arg-type]
        markov_names=tuple(sorted(n for n in names if n.startswith("markov_head."))),
        confidence_names=tuple(sorted(n for n in names if n.startswith("confidence_head."))),
        domino_tensors=tuple(sorted((n, tuple(s)) for n, s in (shapes or {}).items()
                                    if n.removeprefix("model.").startswith(DOMINO_PREFIXES))),
        **config_fields(cfg),
    )


DOMINO_FIELDS = ("projector_type", "shift_label", "pure_draft_prefix_len", "gru_hidden_dim", "emb_dim")


def domino_view(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """The config as the generated record of a DFlash class reads its Domino keys (sampled at the top level,
    tools/sglang_release_model.py DOMINO): each as parse_dflash_draft_config resolves it (dflash_config first, else
    the top level; emb_dim the one both agree on) at the top level and none in dflash_config (whose entries the
    record probed apart, absent at its base), and projector_type left out where it is not "domino", which builds no
    projector (models/dflash.py `if draft_config.is_domino`, L784 @ 0.5.23). The config itself where that changes
    nothing."""
    _, selected, _, (gru, emb) = _domino(cfg)
    nested = _nested(cfg, "dflash_config")
    view = {k: v for k, v in cfg.items() if k != "projector_type"}
    if isinstance(cfg.get("dflash_config"), Mapping):
        view["dflash_config"] = {k: v for k, v in nested.items() if k not in DOMINO_FIELDS}
    if selected:
        def get(key: str) -> Any:
            return nested[key] if key in nested else cfg.get(key)
        view.update(projector_type="domino", shift_label=get("shift_label"),
                    pure_draft_prefix_len=get("pure_draft_prefix_len"), gru_hidden_dim=gru, emb_dim=emb)
    return cfg if view == dict(cfg) else view
