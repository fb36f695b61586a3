"""Pure: vLLM's `--speculative-config` start-up rules per release, as data, and the evaluator that applies them.

Each release's `SpeculativeConfig` (vllm/config/speculative.py) is read from that release's one record
(runtimes/vllm_release.py: its generated spec.json and lines.json), and the draft hf_config steps shared with check
from runtimes/vllm_hf_config.py; every rule cites the file, version and lines it was read from in the released wheel (docs/upstream-notes.md, section "Deploy
preflight").
`evaluate()` replays `SpeculativeConfig.__post_init__` and `_verify_args` in upstream order for one release: the
method vLLM settles on, the model class, num_speculative_tokens, the draft vocabulary it sees, and the first error.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import Family, traits
from dspark_ckpt.model.findings import shown_names
from dspark_ckpt.runtimes import draft_context, release_lines, speculators, vllm_hf_config
from dspark_ckpt.runtimes.serving_method import speculative_tokens
from dspark_ckpt.runtimes.versions import VLLM_RELEASES
from dspark_ckpt.runtimes.vllm_release import ReleaseRules, earlier_field, later_field, nearest_rules

SPEC = "vllm/config/speculative.py"
REGISTRY = "vllm/model_executor/models/registry.py"
TF_CONFIG = "vllm/transformers_utils/config.py"

# --- the runtimes' own words (quoted exactly; `{}` fields are filled per draft) ---
M_NO_MODEL = "num_speculative_tokens was provided but without speculative model."
M_UNSUPPORTED = "Unsupported speculative method: '{method}'"
# 0.14 and older: no independent draft models at all (speculative.py L388-393 @ v0.14.0)
M_DRAFT_REFUSED = ("Speculative decoding with draft model is not supported yet. Please consider using other "
                   "speculative decoding methods such as ngram, medusa, eagle, or mtp.")
M_UNREGISTERED = "Model architectures {archs} are not supported for now. Supported architectures: [...]"
M_MISSING = "A speculative model was provided, but `num_speculative_tokens` was not provided"
# 0.16 and older raise nothing of their own: the chain of tokens is built from it (speculative.py L492-496 @ 0.16.0)
M_TOKEN_TREE = "TypeError: 'NoneType' object cannot be interpreted as an integer"
# where SpeculativeConfig still has a speculative_token_tree field (0.17-0.20: speculative.py L672-678 @ 0.20.0)
M_MISSING_TREE = ("A speculative model was provided, but neither `speculative_token_tree` nor `num_speculative_tokens` "
                  "was provided")
M_DIVISIBLE = "num_speculative_tokens:{n} must be divisible by n_predict={p}"
M_MIN_BLOCK = ("DSpark requires num_speculative_tokens >= dspark_block_size ({b}); got {n}. Smaller values produce "
               "incorrect output. Use num_speculative_tokens={b} or larger (e.g. 7).")
M_TOPK_METHOD = "dspark_draft_topk is only supported by DSpark"
M_TOPK_RANGE = "dspark_draft_topk must be between 1 and the draft vocabulary size ({d})"
M_EQUAL_VOCAB = ("Target and draft model should have the same vocabulary size. Target model vocab_size={t}. Draft "
                 "model vocab_size={v}. Using models with different tokenizers can cause out-of-bounds errors during "
                 "speculative decoding.")
M_TP = ("'tensor_parallel_size' is not a valid argument in the speculative_config. Please pass "
        "'draft_tensor_parallel_size' instead.")
M_HETERO = "use_heterogeneous_vocab only works with method='draft_model'"
M_INDEX_SHARE = "index_share_for_mtp_iteration is only supported with method='mtp'"
M_XPRESS = "xpress_topc is only supported by XPress"
# 0.34's per-method SpeculatorConfig classes (speculative.py __post_init__, _verify_args; speculator_config.py;
# dspark/config.py; speculators/base.py), quoted exactly
M_OPTION = "{option} is not supported with speculative method {method!r}."
M_DECLARED = ("speculative_config requested method={requested!r}, but the draft model {model!r} is a {declared!r} "
              "checkpoint (model_type={model_type!r}, architectures={archs}). Pass a matching method or a matching "
              "draft checkpoint. Use method={declared!r} if that is what you intended.")
M_LM_HEAD_QUANT = "draft_lm_head_quantization is only supported by the DeepSeek-V4/V4.1 DSpark drafters"
M_PARALLEL = "parallel_drafting is only supported by the dflash and dspark methods, not {method!r}."
M_PEAGLE = speculators.P_EAGLE_REFUSED
M_UNKNOWN_METHOD = "Unknown speculative method {method!r}. Built-in methods: {builtin}; registered custom methods: []."
M_VERIFIER = ("Speculators verifier must name a remote model repository. Select local verifiers explicitly with "
              "--model and --speculative-config.")
# _validate_qwen3_omni_dspark, in its order (0.29 L157-370; the body is identical in 0.29-0.33).
OMNI = "Qwen3-Omni DSpark "
M_OMNI_GENERIC = (OMNI + "requires a standalone draft checkpoint with architectures=['Qwen3OmniDSparkModel']; generic "
                  "Qwen3DSparkModel checkpoints must be converted first.")
M_OMNI_BLOCK = OMNI + "requires a positive integer block_size in the draft config."
M_OMNI_TOKENS = OMNI + "requires num_speculative_tokens to match the trained block_size ({b}); got {n}."
M_OMNI_TEXT = OMNI + "could not resolve the target thinker text_config."
M_OMNI_TGT_HIDDEN = OMNI + "draft target_hidden_size must match the target text hidden size ({t}); got {d}."
M_OMNI_HIDDEN = OMNI + "draft hidden_size must match the target thinker hidden size ({t}); got {d}."
M_OMNI_TGT_ATTN = OMNI + "requires a positive integer {name} in the target thinker text_config; got {t}."
M_OMNI_ATTN = OMNI + "draft {name} must match the target thinker value ({t}); got {d}."
M_OMNI_LAYERS = OMNI + "requires a non-empty target_layer_ids list in the draft config."
M_OMNI_LAYER_INTS = OMNI + "target_layer_ids must contain only integers."
M_OMNI_LAYER_ORDER = OMNI + "target_layer_ids must be unique and strictly increasing."
M_OMNI_LAYER_RANGE = OMNI + "target_layer_ids must be zero-based text-layer indices in [0, {last}]; got {ids}."
M_OMNI_AUX = (OMNI + "requires use_aux_hidden_state=true because Omni conditioning is supplied through thinker hidden "
              "states.")
M_OMNI_RANK = OMNI + "requires a positive integer markov_rank in the draft config."
M_OMNI_HEAD = OMNI + "currently requires markov_head_type='vanilla'; got {got}."
M_OMNI_ANCHOR = OMNI + "requires sample_from_anchor=true and dspark_bonus_anchor=false."
M_OMNI_V = OMNI + "input vocab_size must be a positive integer; got {v}."
M_OMNI_D = OMNI + "draft_vocab_size must be a positive integer no larger than target vocab_size ({t}); got {d}."
M_OMNI_MASK = OMNI + "requires a valid mask/noise token id within the draft input vocabulary [0, {last}]."
M_OMNI_MROPE = OMNI + "draft checkpoints must use logical 1-D RoPE and must not define mrope_section."
# pydantic's wording (the vLLM wheels pin pydantic 2; read from pydantic 2.14's messages, not from vLLM).
P_EXTRA = "Unexpected keyword argument"
P_INT = "Input should be a valid integer"
P_GT0 = "Input should be greater than 0"
P_GE1 = "Input should be greater than or equal to 1"
P_STR = "Input should be a valid string"
P_LITERAL = "Input should be one of the methods of this release"

@dataclass(frozen=True, slots=True)
class Cite:
    """Where a rule was read: a file of the released wheel, its version, the lines."""

    file: str
    version: str
    lines: str

    def __str__(self) -> str:
        return f"{self.file} @ v{self.version} {self.lines}"


# Per rule, per release: the lines of the wheel it was read from, generated from the wheel
# (`tools/release_lines.py`: `spec.<rule>` and `omni.<check>` of release_data/vllm-X/lines.json, located by the
# anchors of tools/release_anchors.py). A release without a rule's entry does not have the rule.
def cite(rule: str, version: str) -> Cite:
    found = release_lines.cited(version, f"spec.{rule}")
    if found is None:
        raise KeyError(f"vLLM {version} has no rule {rule!r} (release_data/vllm-{version}/lines.json)")
    return Cite(found[0], version, found[1])


def omni_cite(check: str, version: str) -> Cite:
    """A check of _validate_qwen3_omni_dspark (0.29+)."""
    found = release_lines.cited(version, f"omni.{check}")
    if found is None:
        raise KeyError(f"vLLM {version} has no Qwen3-Omni check {check!r}")
    return Cite(found[0], version, found[1])


def releases_with(rule: str) -> tuple[str, ...]:
    """The releases of the list that have `rule`."""
    return tuple(v for v in VLLM_RELEASES if release_lines.cited(v, f"spec.{rule}") is not None)


_NO_CHECKPOINT = frozenset({"ngram", "ngram_gpu", "suffix", "custom_class", "extract_hidden_states"})


# --- inputs ---
@dataclass(frozen=True, slots=True)
class TargetView:
    """What vLLM's target ModelConfig says that the speculative config consults."""

    vocab_size: int | None = None  # T (get_vocab_size())
    omni: bool = False  # _is_qwen3_omni_target
    model_type: str | None = None  # hf_config.model_type (deepseek_v41 sends the DSpark rewrite to V4.1)
    text_model_type: str | None = None  # hf_text_config.model_type (0.21 and older: the aux-state target check)
    text_config: Mapping[str, Any] | None = None  # thinker_config.text_config, else the text config (Omni checks)
    max_model_len: int | None = None  # the served max_model_len (`vllm serve --max-model-len`, or its default)
    max_model_len_from: str = "--max-model-len"  # where that came from, in words


@dataclass(frozen=True, slots=True)
class DeployInput:
    """What the deploy preflight reads: the --speculative-config, the draft's config, the target's view."""

    spec: Mapping[str, Any]  # the --speculative-config object, as the user wrote it
    checkpoint: str  # the checkpoint checked, as given (what `vllm serve` gets as --model in the speculators form)
    draft: Mapping[str, Any] | None  # the draft's config.json, None when it could not be read
    family: Family | None = None
    target: TargetView = field(default_factory=TargetView)
    verifier_exists: bool = False  # Path(verifier).exists(): the 0.33 speculators refusal (I/O done by the caller)


@dataclass(frozen=True, slots=True)
class Problem:
    """One refusal or note of the deploy preflight, with the release lines that hold it."""

    code: FindingCode
    text: str
    where: tuple[Cite, ...] = ()
    verbatim: bool = True  # False where the text is dspark-ckpt's description, not vLLM's own message


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one release builds from the speculative config, and the first error it raises (None: it starts)."""

    version: str
    method: str | None = None
    method_from: str | None = None
    architecture: str | None = None
    model_class: str | None = None
    num_speculative_tokens: int | None = None
    num_speculative_tokens_from: str | None = None
    draft_vocab_size: int | None = None  # `draft_vocab_size or vocab_size` of the draft hf_config, as vLLM computes it
    error: Problem | None = None
    notes: tuple[Problem, ...] = ()  # what goes wrong without an error (the wrong method or class, ignored keys)


def normalize_keys(spec: Mapping[str, Any], dashes: bool = True) -> dict[str, Any]:
    """engine/arg_utils.py: `-` becomes `_` in every key before SpeculativeConfig(**spec) (`dashes`: the release
    does so, ReleaseRules.dash_keys; 0.20-0.25 pass the keys as written)."""
    return {str(k).replace("-", "_") if dashes else str(k): v for k, v in spec.items()}


def closest_key(key: str, known: frozenset[str]) -> str | None:
    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return match[0] if match else None


# --- the draft's hf_config as vLLM builds it ---
@dataclass(frozen=True, slots=True)
class HfView:
    """The draft's hf_config as vLLM builds it: architectures, model_type, and every attribute's value."""

    architectures: tuple[str, ...]
    model_type: str | None
    values: Mapping[str, Any]  # what getattr(hf_config, key, None) returns

    def get(self, key: str) -> Any:
        return self.values.get(key)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _posint(value: Any) -> bool:
    return _int(value) is not None and value > 0


def _archs(raw: Mapping[str, Any]) -> tuple[str, ...]:
    archs = raw.get("architectures")
    return tuple(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ()


def speculators_view(version: str, raw: Mapping[str, Any]) -> HfView | Problem:
    """The hf_config of a speculators-format draft: runtimes/speculators.py's conversion, the one check uses too."""
    conversion = speculators.convert(raw, nearest_rules(version)[0])
    if conversion.error is not None:
        where = tuple(Cite(file, version, lines) for file, lines in conversion.cites)
        return Problem(conversion.error.code, conversion.error.text, where, conversion.error.verbatim)
    return HfView(conversion.architectures, "speculators", conversion.hf)


def hf_view(r: ReleaseRules, raw: Mapping[str, Any]) -> HfView | Problem:
    if speculators.is_speculators_format(raw):
        return speculators_view(r.version, raw)
    model_type = raw.get("model_type")
    return HfView(_archs(raw), model_type if isinstance(model_type, str) else None, raw)


def _nested(values: Mapping[str, Any], name: str) -> Any:
    """_get_qwen3_dspark_value: dflash_config, then eagle_config, then the top level."""
    for section in ("dflash_config", "eagle_config"):
        nested = values.get(section)
        if isinstance(nested, Mapping) and nested.get(name) is not None:
            return nested.get(name)
    return values.get(name)


def custom_proposer_path(model: Any) -> bool:
    """SpeculativeConfig._is_custom_proposer_path: a dotted import path (no `/`, not a URL) names a proposer class."""
    if not isinstance(model, str) or model.startswith(("http://", "https://", "file://")) or "/" in model:
        return False
    parts = model.split(".")
    return len(parts) >= 2 and all(p.isidentifier() for p in parts)


def dotted_model(model: Any) -> bool:
    """speculative.py 0.22-0.25: a `model` with a dot and no `/`, not a URL, is a custom class path (a relative
    folder such as `EAGLE3-LLaMA3.1-8B` too, and whatever the method given)."""
    return isinstance(model, str) and "." in model and "/" not in model \
        and not model.startswith(("http://", "https://", "file://"))


def lax_int(value: Any) -> int | None | str:
    """pydantic 2's lax int: ints, bools, integral floats and integer strings; a str return is its error."""
    if value is None or isinstance(value, int):
        return int(value) if value is not None else None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,4000}\s*", value):
        return int(value)
    return P_INT


# --- the evaluator ---
class _Stop(Exception):
    """The release raised (or loads nothing to evaluate): `problem` is the first error, None when it just stops."""

    def __init__(self, problem: Problem | None) -> None:
        super().__init__(problem.text if problem else "")
        self.problem = problem


class _Run:
    """One release replaying SpeculativeConfig.__post_init__ on one draft; mutable only inside evaluate()."""

    def __init__(self, r: ReleaseRules, inp: DeployInput) -> None:
        self.r, self.inp, self.v = r, inp, r.version
        self.spec: dict[str, Any] = {}
        self.notes: list[Problem] = []
        self.method: str | None = None
        self.method_from: str | None = None
        self.model = ""
        self.hf: HfView | None = None
        self.archs: tuple[str, ...] = ()
        self.model_type: str | None = None
        self.values: dict[str, Any] = {}
        self.n: int | None = None
        self.n_from: str | None = None
        self.rewritten: tuple[str, ...] | None = None  # the architectures before a DeepSeek-V4 rewrite
        self.rewrite_rule = "deepseek_rewrite"  # its lines.json rule (0.34: undeclared_rewrite)
        self.shortcut = False  # `vllm serve <speculators checkpoint>`: the speculators config builds the spec
        self.explicit = False  # the method was given
        self.positions: int | None = None  # the draft's max_position_embeddings, where it alone is its length

    def stop(self, code: FindingCode, text: str, rule: str | Cite, verbatim: bool = True) -> _Stop:
        where = rule if isinstance(rule, Cite) else cite(rule, self.v)
        return _Stop(Problem(code, text, (where,), verbatim))

    def note(self, code: FindingCode, text: str, rule: str, verbatim: bool = False) -> None:
        self.notes.append(Problem(code, text, (cite(rule, self.v),), verbatim))

    # 1. what reaches SpeculativeConfig(**spec): the user's object, or the speculators form's own
    def effective_spec(self) -> None:
        spec = normalize_keys(self.inp.spec, self.r.dash_keys)
        draft = self.inp.draft
        if spec.get("model") is not None or draft is None or draft.get("speculators_config") is None:
            self.spec = spec
            return
        built = self.speculators_spec(draft)
        method = built["method"]
        if self.r.speculators_merge:
            given = spec.get("method")
            self.spec = {**built, **spec, "method": method}
            if given is not None and given != method:
                self.note("DSP823", f"`vllm serve {self.inp.checkpoint}` locks method to {method!r} (the speculators "
                                    f"format's); the method {given!r} given is ignored", "speculators_override")
        else:
            self.spec = built
            if spec:
                self.note("DSP823", f"`vllm serve {self.inp.checkpoint}` builds the speculative config from the "
                                    f"speculators config alone: {', '.join(sorted(spec))} given are discarded",
                          "speculators_override")
        self.spec["model"] = self.inp.checkpoint
        self.shortcut = True
        if self.r.speculators_local_verifier_refused:
            self.check_verifier(draft)

    def speculators_spec(self, draft: Mapping[str, Any]) -> dict[str, Any]:
        """SpeculatorsConfig.build_vllm_speculative_config."""
        config = draft.get("speculators_config")
        proposals = config.get("proposal_methods") if isinstance(config, dict) else None
        first = proposals[0] if isinstance(proposals, list) and proposals else None
        if not isinstance(first, dict):
            raise self.stop("DSP811", "No proposal methods found in speculators config", "speculators_override")
        if first.get("speculative_tokens") is None:
            raise self.stop("DSP811", f"Missing 'speculative_tokens' in proposal method. Got: {first}",
                            "speculators_override")
        method = draft.get("speculators_model_type")
        built: dict[str, Any] = {"method": method, "num_speculative_tokens": first["speculative_tokens"]}
        if method == "peagle" and self.r.has("speculators_peagle_refused"):
            raise self.stop("DSP810", M_PEAGLE, "speculators_peagle_refused")
        if method == "peagle":
            built.update(method="eagle3", parallel_drafting=True)
        elif method == "dflash2" and self.r.speculators_dflash2:
            built["method"] = "dflash"
        return built

    def check_verifier(self, draft: Mapping[str, Any]) -> None:
        """0.33 maybe_override_with_speculators: the verifier must be a remote repo id that is not a local path."""
        config = draft.get("speculators_config")
        verifier = config.get("verifier") if isinstance(config, dict) else None
        name = verifier.get("name_or_path") if isinstance(verifier, dict) else None
        if not isinstance(name, str) or not valid_repo_id(name) or self.inp.verifier_exists:
            raise self.stop("DSP822", M_VERIFIER, "speculators_verifier")

    # 2. pydantic: extra="forbid" and the typed fields
    def validate(self) -> None:
        unknown = [k for k in self.spec if k not in self.r.fields]
        if unknown and not self.r.has("extra_forbid"):  # 0.15 and older: dropped without a word
            self.note("DSP828", "; ".join(self.ignored_text(k) for k in unknown), "extra_ignored")
            self.spec = {k: v for k, v in self.spec.items() if k in self.r.fields}  # what the dataclass keeps
            unknown = []
        bad = self.bad_values()
        if unknown:
            if bad:
                self.notes.append(bad)
            raise self.stop("DSP803", "; ".join(self.unknown_text(k) for k in unknown), "extra_forbid", False)
        if bad:
            raise _Stop(bad)

    def ignored_text(self, key: str) -> str:
        later = later_field(key, self.v)
        near = closest_key(key, self.r.fields)
        return (f"vLLM {self.v} drops {key!r}: SpeculativeConfig has no such field and ignores extra keys"
                + (f" (a field from vLLM {later})" if later else f"; did you mean {near!r}?" if near else ""))

    def unknown_text(self, key: str) -> str:
        later = later_field(key, self.v)
        earlier = None if later else earlier_field(key, self.v)
        near = closest_key(key, self.r.fields)
        return (f"SpeculativeConfig has no field {key!r} ({P_EXTRA})"
                + (f": it is a field from vLLM {later}" if later else "")
                + (f": it is a field of vLLM {earlier} and earlier, gone from {self.v}" if earlier else "")
                + (f"; did you mean {near!r}?" if near and not later and not earlier else ""))

    def bad_values(self) -> Problem | None:
        problems = []
        for key, floor, message in (("num_speculative_tokens", 1, P_GT0), ("dspark_draft_topk", 1, P_GE1),
                                    ("max_model_len", 1, P_GE1)):
            if key not in self.r.fields or key not in self.spec:
                continue
            value = lax_int(self.spec[key])
            if isinstance(value, str):
                problems.append(f"{key}: {value}, got {self.spec[key]!r}")
            elif value is not None and value < floor:
                problems.append(f"{key}: {message}, got {value}")
            else:
                self.spec[key] = value
        method, model = self.spec.get("method"), self.spec.get("model")
        if method is not None and not isinstance(method, str):
            problems.append(f"method: {P_STR}, got {method!r}")
        elif method is not None and method not in self.r.methods and self.r.per_method_configs:
            problems.append("method: " + M_UNKNOWN_METHOD.format(method=method, builtin=sorted(self.r.methods))
                            + " (a name a vLLM plugin registers with register_speculative_method is accepted)")
        elif method is not None and method not in self.r.methods:
            known = ", ".join(repr(m) for m in ("dspark", "dflash", "eagle3", "draft_model") if m in self.r.methods)
            problems.append(f"method: {P_LITERAL} (such as {known}), got {method!r}")  # the release's own methods
        if model is not None and not isinstance(model, str):
            problems.append(f"model: {P_STR}, got {model!r}")
        if not problems:
            return None
        first = problems[0].split(":", 1)[0]
        method_rule = "method_validator" if self.r.per_method_configs else "method_field"
        rule = {"method": method_rule, "max_model_len": "max_len_field"}.get(first, "num_tokens_field")
        return Problem("DSP804", "; ".join(problems), (cite(rule, self.v),), verbatim=False)

    # 3. the method from the user's arguments, and whether a checkpoint is loaded at all
    def default_method(self) -> None:
        self.method, model = self.spec.get("method"), self.spec.get("model")
        self.explicit = self.method is not None
        if self.method is None and self.r.per_method_configs:  # 0.34: no custom_class; the checkpoint decides
            if model in ("ngram", "[ngram]") or model is None:
                self.method = "ngram" if model is not None else "draft_model"
                self.method_from = "vLLM's default when no method is given"
            else:
                self.method_from = "undecided until the draft checkpoint is read"
        elif self.r.has("dotted_model") and dotted_model(model):  # 0.22-0.25: even with a method given
            self.method, self.method_from = "custom_class", "a `model` with a dot and no `/` (read as a class path)"
            self.explicit = False
        elif self.method is None and "custom_class" in self.r.methods and custom_proposer_path(model):
            self.method, self.method_from = "custom_class", "a dotted class path in `model`"
        elif self.method is None and model in ("ngram", "[ngram]"):
            self.method, self.method_from = "ngram", "vLLM's default when no method is given"
        elif self.method is None and self.r.has("default_method"):
            self.method, self.method_from = "draft_model", "vLLM's default when no method is given"
        elif self.method is None:  # 0.16 and older: no default; the detection decides, or raises
            self.method_from = "no method given (this release has no default method)"
        else:
            self.method_from = ("the speculators config (speculators_model_type)" if self.shortcut
                                else "given in the speculative config")
        if self.method in self.r.mtp_types:
            self.method = "mtp"
        given = self.spec.get("num_speculative_tokens")
        if given is not None:  # what the config says, shown even when start-up fails before it is checked
            self.n, self.n_from = _int(given), self.tokens_from()
        if model is None:
            raise self.no_model()
        self.model = str(model)
        if self.method in _NO_CHECKPOINT:
            rule = ("default_method_unset" if self.r.per_method_configs else
                    "dotted_model" if self.r.has("dotted_model") and dotted_model(model) else "default_method")
            text = (f"vLLM reads `model` {self.model!r} as a custom proposer class path (method custom_class), not "
                    "as a checkpoint" if self.method == "custom_class" else
                    f"method {self.method!r} loads no draft checkpoint: vLLM never reads {self.model}")
            raise self.stop("DSP805", text, rule, False)

    def no_model(self) -> _Stop:
        if self.method is None:  # 0.34: no method and no model is draft_model's (DraftModelSpeculatorConfig)
            self.method, self.method_from = "draft_model", "vLLM's default when no method is given"
        if self.method in ("mtp", "dspark"):
            return self.stop("DSP805", f"the speculative config names no `model`: method {self.method!r} drafts with "
                                       "the target's own weights (target_model_config.model), so vLLM never loads "
                                       f"{self.inp.checkpoint}", "no_model", False)
        if self.spec.get("num_speculative_tokens") is not None:
            return self.stop("DSP805", M_NO_MODEL, "no_model")
        return self.stop("DSP805", f"the speculative config names no `model`, so vLLM loads no draft checkpoint "
                                   f"({self.inp.checkpoint} is never read)", "no_model", False)

    # 4. the draft ModelConfig, and the registry it resolves its architecture with
    def draft_config(self) -> None:
        if self.inp.draft is None:
            raise _Stop(None)
        view = hf_view(self.r, self.inp.draft)
        if isinstance(view, Problem):  # the speculators conversion raised: the draft ModelConfig is never built
            raise _Stop(view)
        self.hf = view
        self.archs, self.model_type, self.values = self.hf.architectures, self.hf.model_type, dict(self.hf.values)
        if view.model_type != "speculators":  # the draft ModelConfig's hf_overrides (check replays the same)
            self.values = vllm_hf_config.overridden(self.r, view.values, method=self.method,
                                                    target_vocab=self.inp.target.vocab_size,
                                                    tokens=speculative_tokens(self.inp.spec))
            model_type = self.values.get("model_type")
            self.model_type = model_type if isinstance(model_type, str) else None
            self.archs = _archs(self.values) or self.archs
        if not self.archs:  # MedusaConfig names one where config.json does not (overridden)
            raise _Stop(None)
        if self.r.has("qwen3_override") and vllm_hf_config.qwen3_renamed(self.r, self.archs, self.model_type):
            self.archs = ("Qwen3DSparkModel",)  # hf_config_override, for every method (0.34)
            self.values["architectures"] = list(self.archs)
        self.registered(self.archs, "inspect_arch")
        self.positions = draft_context.positions(self.values)
        within = self.r.has("draft_config_len")
        if error := draft_context.draft_length_error(_int(self.spec.get("max_model_len")), self.positions,
                                                     draft_config_len=within):
            rules = ("draft_config_len", "derived_len") if within else ("spec_len",)
            raise _Stop(Problem("DSP825", error, tuple(cite(rule, self.v) for rule in rules)))

    def registered(self, archs: tuple[str, ...], rule: str) -> None:
        if not vllm_hf_config.unsupported(self.r, archs):
            return
        raise _Stop(Problem("DSP809", M_UNREGISTERED.format(archs=shown_names(archs)),
                            (cite(rule, self.v), cite("unsupported_arch", self.v))))

    # 5. "Automatically detect the method", skipped for eagle, eagle3, dflash and dspark
    def detect(self) -> None:
        if self.r.per_method_configs:
            self.resolve_checkpoint_config()
            return
        if self.method in vllm_hf_config.DETECTION_SKIPPED:
            return
        given = self.method
        path = self.model.lower()
        found = self.detected(path)
        if found is None:
            if self.r.has("draft_model_refused"):  # 0.14 and older: whatever the method given
                self.method, self.method_from = "draft_model", "the detection's fallback"
                raise self.stop("DSP810", M_DRAFT_REFUSED, "draft_model_refused")
            if self.method != "draft_model":
                raise self.stop("DSP810", M_UNSUPPORTED.format(method=self.method), "detect")
            return
        self.method, why = found
        self.method_from = why + (f", replacing the method {given!r} given" if self.explicit else "")

    def resolve_checkpoint_config(self) -> None:
        """0.34 _resolve_checkpoint_config_class: a configured method is kept, and refused where the draft's model
        declares another; else the declared method, then each method's `matches` in order, else draft_model."""
        declared = self.r.declared_method(self.archs)
        if self.method is not None:
            if declared is not None and declared != self.method:
                text = M_DECLARED.format(requested=self.method, model=self.model, declared=declared,
                                         model_type=self.model_type, archs=list(self.archs))
                raise self.stop("DSP810", text, "checkpoint_detect")
            return
        if declared is not None:
            self.method = declared
            self.method_from = f"declared by the class of architecture {self.archs[0]}"
            return
        path = self.model.lower()
        for marker, method in (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash"), ("dspark", "dspark")):
            if marker in path:
                self.method, self.method_from = method, f"detected: {marker!r} in the model path"
                return
        if self.model_type in self.r.mtp_types:
            self.method, self.method_from = "mtp", f"detected from model_type {self.model_type}"
            return
        self.method = "draft_model"
        self.method_from = "vLLM's default when no method is given and the checkpoint declares none"

    def detected(self, path: str) -> tuple[str, str] | None:
        return vllm_hf_config.detected_method(self.r, path, self.archs, self.model_type)

    # 6. EAGLEConfig wraps eagle/eagle3/dflash drafts and renames their architecture; DSpark rewrites its own
    def rewrite(self) -> None:
        if vllm_hf_config.wraps(self.method, self.model_type):
            renamed = vllm_hf_config.renamed(self.r, self.archs, str(self.method))
            self.archs = renamed
            self.registered(renamed, "eagle_wrap")
        if self.method != "dspark":
            return
        built = vllm_hf_config.dspark(self.r, self.archs, self.model_type, self.values, self.inp.target.model_type)
        self.archs, self.model_type, self.values = built.architectures, built.model_type, dict(built.values)
        self.rewritten = built.rewritten
        self.rewrite_rule = built.rule or "deepseek_rewrite"

    def tokens_from(self) -> str:
        user = "num_speculative_tokens" in normalize_keys(self.inp.spec, self.r.dash_keys) and (self.r.speculators_merge or
                                                                               not self.shortcut)
        return ("the speculative config" if user or not self.shortcut
                else "speculators_config.proposal_methods[0].speculative_tokens")

    # 7. num_speculative_tokens: the default and the checks on it
    def tokens(self) -> None:
        n_predict = _int(self.values.get("n_predict"))
        if self.r.dspark_block_default and self.method == "dspark":
            if self.n is None:
                for key in ("block_size", "dspark_block_size"):
                    if self.values.get(key) is not None:
                        self.n, self.n_from = _int(self.values[key]), f"the draft config's {key}"
                        break
        elif n_predict is not None and n_predict > 0:
            if self.n is None:
                self.n, self.n_from = n_predict, "the draft config's n_predict"
            elif self.n > n_predict and self.n % n_predict:
                raise self.stop("DSP812", M_DIVISIBLE.format(n=self.n, p=n_predict), "n_predict")
        if self.n is None and not self.r.has("missing"):  # 0.16 and older: the token tree from `range(None)`
            raise self.stop("DSP811", M_TOKEN_TREE, "token_tree")
        if self.n is None:
            raise self.stop("DSP811", M_MISSING_TREE if "speculative_token_tree" in self.r.fields else M_MISSING,
                            "missing")
        block = _int(self.values.get("dspark_block_size"))
        if self.r.dspark_min_block and self.method == "dspark" and block is not None and self.n < block:
            raise self.stop("DSP813", M_MIN_BLOCK.format(b=block, n=self.n), "min_block")

    # 8. xpress_topc (0.33; no draft dspark-ckpt knows is an XPress refiner) and dspark_draft_topk (0.28+)
    def method_options(self) -> None:
        """0.34 __post_init__: each method-specific option set is refused unless the method's config class
        supports it; then DSparkSpeculatorConfig.apply_options (the topk checks, draft_lm_head_quantization's
        architectures; _validate_qwen3_omni_dspark follows)."""
        for option in self.r.method_specific_options:
            if self.spec.get(option) is not None and not self.r.supports_option(self.method, option):
                code: FindingCode = "DSP815" if option == "dspark_draft_topk" else "DSP824"
                raise self.stop(code, M_OPTION.format(option=option, method=self.method), "method_options")
        if self.method != "dspark":
            return
        self.dspark_topk(self.spec.get("dspark_draft_topk"))
        if self.spec.get("draft_lm_head_quantization") is not None and not {
                "DSparkDraftModel", "DSparkV41DraftModel"} & set(self.archs):
            raise self.stop("DSP824", M_LM_HEAD_QUANT, "lm_head_quant_arch")

    def topk(self) -> None:
        if self.r.per_method_configs:
            self.method_options()
            return
        if self.r.has("xpress") and self.spec.get("xpress_topc") is not None:
            raise self.stop("DSP824", M_XPRESS, "xpress")
        if self.r.topk_archs is None:
            return
        given = self.spec.get("dspark_draft_topk")
        if given is not None and self.method != "dspark":
            raise self.stop("DSP815", M_TOPK_METHOD, "topk_method")
        if self.method != "dspark":
            return
        self.dspark_topk(given)

    def dspark_topk(self, given: Any) -> None:
        """dspark_draft_topk (given, else the draft config's) within [1, D], then on a Qwen3(-Omni) DSpark class."""
        if self.r.topk_archs is None:
            return
        k = _int(given if given is not None else self.values.get("dspark_draft_topk"))
        if k is None:
            return
        d = self.seen_draft_vocab()
        if d is not None and not 1 <= k <= d:
            raise self.stop("DSP816" if given is not None else "DSP209", M_TOPK_RANGE.format(d=d), "topk_range")
        if not any(a in self.r.topk_archs for a in self.archs):
            raise self.stop("DSP817", self.r.topk_arch_message, "topk_arch")

    def seen_draft_vocab(self) -> int | None:
        return _int(self.values.get("draft_vocab_size") or self.values.get("vocab_size"))

    # 9. _validate_qwen3_omni_dspark (0.29+), for a Qwen3-Omni target only
    def omni(self) -> None:
        if not (self.r.omni_validation and self.method == "dspark" and self.inp.target.omni):
            return
        problem = omni_problem(self.v, self.values, self.archs, self.n, self.inp.target)
        if problem is not None:
            raise _Stop(problem)

    # 9b. _maybe_override_draft_max_model_len: the config's max_model_len (the draft's) against the served one
    def served_length(self) -> None:
        if error := draft_context.served_length_error(_int(self.spec.get("max_model_len")),
                                                      self.inp.target.max_model_len):
            raise self.stop("DSP825", error, "spec_len")

    # 10. options that need a method: index_share_for_mtp_iteration, adaptive verification; then _verify_args
    def options_after(self) -> None:
        spec, method = self.spec, self.method
        if self.r.has("index_share") and spec.get("index_share_for_mtp_iteration") is not None and method != "mtp":
            raise self.stop("DSP824", M_INDEX_SHARE, "index_share")
        adaptive = self.r.adaptive_message
        if adaptive is not None and method != "dspark" and spec.get("enable_adaptive_verification") and (
                not self.r.adaptive_needs_argmax or spec.get("use_local_argmax_reduction")):
            raise self.stop("DSP824", adaptive, "adaptive")
        if self.r.has("tensor_parallel") and spec.get("tensor_parallel_size") is not None:  # 0.14-: no field
            raise self.stop("DSP824", M_TP, "tensor_parallel")
        if spec.get("use_heterogeneous_vocab") and method != "draft_model":
            raise self.stop("DSP824", M_HETERO, "heterogeneous")
        if self.r.has("parallel_drafting") and spec.get("parallel_drafting") and method not in ("dflash", "dspark"):
            raise self.stop("DSP824", M_PARALLEL.format(method=method), "parallel_drafting")

    # 10b. _verify_args (0.21 and older): the methods fed the target's aux hidden states need a listed target type
    def aux_targets(self) -> None:
        if (text := self.r.refuses_target(self.method, self.inp.target.text_model_type)) is not None:
            raise self.stop("DSP365", text, "aux_targets")

    # 11. _verify_args: a plain draft model must share the target's vocabulary
    def equal_vocab(self) -> None:
        t, v = self.inp.target.vocab_size, _int(self.values.get("vocab_size"))
        if (self.r.has("equal_vocab") and self.method == "draft_model" and not self.spec.get("use_heterogeneous_vocab")
                and t and v and t != v):
            raise self.stop("DSP814", M_EQUAL_VOCAB.format(t=t, v=v), "equal_vocab")

    def outcome(self, error: Problem | None) -> Outcome:
        model_class = next((c for a in self.archs if (c := self.r.model_class(a)) is not None), None)
        return Outcome(self.v, self.method, self.method_from, self.archs[0] if self.archs else None, model_class,
                       self.n, self.n_from, self.seen_draft_vocab(), error,
                       tuple(self.notes) + self.wrong(error) + self.context(error))

    def context(self, error: Problem | None) -> tuple[Problem, ...]:
        """A server that starts with a draft context below the served one (DSP826, DSP827)."""
        target = self.inp.target
        note = None if error is not None else draft_context.context_note(
            self.positions, _int(self.spec.get("max_model_len")), target.max_model_len, target.max_model_len_from,
            self.method, self.r.positions_raised_for, limits_served=self.r.limit_to_draft)
        if note is None:
            return ()
        code, text, rules = note
        return (Problem(code, text, tuple(cite(rule, self.v) for rule in rules), verbatim=False),)

    def wrong(self, error: Problem | None) -> tuple[Problem, ...]:
        """The method or class the draft ends up with when it is not its family's (DSP810 already says so)."""
        family, found = self.inp.family, []
        if family is None or self.hf is None or self.method is None:
            return ()
        expected = traits(family).method
        if self.method != expected and (error is None or error.code != "DSP810"):
            how = " as an independent draft model" if self.method == "draft_model" else ""
            found.append(Problem("DSP807", f"vLLM runs this {family.value} draft{how} with method "
                                           f"{self.method!r} ({self.method_from}), not {expected!r}",
                                 (cite("checkpoint_detect" if self.r.per_method_configs else "detect", self.v),),
                                 verbatim=False))
        if self.rewritten is not None:
            found.append(Problem("DSP808", f"method 'dspark' rewrites architectures {list(self.rewritten)} to "
                                           f"{list(self.archs)} with model_type {self.model_type!r}: vLLM "
                                           "builds DSparkDeepseekV4ForCausalLM, the DeepSeek-V4 draft that ships "
                                           f"inside its target, not this {family.value} draft",
                                 (cite(self.rewrite_rule, self.v),), verbatim=False))
        return tuple(found)


def evaluate(r: ReleaseRules, inp: DeployInput) -> Outcome:
    """One release's start-up of the speculative config, in upstream order; the first error wins."""
    run = _Run(r, inp)
    try:
        run.effective_spec()
        run.validate()
        run.default_method()
        run.draft_config()
        run.detect()
        run.rewrite()
        run.tokens()
        if r.per_method_configs:  # 0.34: configure() checks the served length before the method's options
            run.served_length()
        run.topk()
        run.omni()
        if not r.per_method_configs:
            run.served_length()
        run.options_after()
        run.aux_targets()
        run.equal_vocab()
    except _Stop as stop:
        return run.outcome(stop.problem)
    return run.outcome(None)


def _omni_target(version: str, values: Mapping[str, Any], text: Mapping[str, Any]) -> Problem | None:
    """Checks 5-8, against the target thinker's text config. A key absent from either config takes a transformers
    default dspark-ckpt does not know, so that comparison is skipped rather than guessed."""
    hidden = text.get("hidden_size")
    if hidden is not None:
        for key, message in (("target_hidden_size", M_OMNI_TGT_HIDDEN), ("hidden_size", M_OMNI_HIDDEN)):
            if (key == "target_hidden_size" or key in values) and values.get(key) != hidden:
                return Problem("DSP820", message.format(t=hidden, d=values.get(key)), (omni_cite("hidden", version),))
    for name in ("num_attention_heads", "num_key_value_heads", "head_dim"):
        t, d = _attention(text, name), _attention(values, name)
        if t is None:
            continue
        if not _posint(t):
            return Problem("DSP820", M_OMNI_TGT_ATTN.format(name=name, t=t), (omni_cite("attention", version),))
        if d is not None and d != t:
            return Problem("DSP820", M_OMNI_ATTN.format(name=name, t=t, d=d), (omni_cite("attention", version),))
    return None


def _attention(config: Mapping[str, Any], name: str) -> Any:
    if name == "num_key_value_heads" and config.get(name) is None:
        return config.get("num_attention_heads")
    if name == "head_dim" and config.get(name) is None:
        hidden, heads = _int(config.get("hidden_size")), _int(config.get("num_attention_heads"))
        return hidden // heads if hidden is not None and heads and hidden % heads == 0 else None
    return config.get(name)


def _layer_ids(version: str, values: Mapping[str, Any], text: Mapping[str, Any] | None) -> Problem | None:
    nested = values.get("dflash_config")
    ids = nested.get("target_layer_ids") if isinstance(nested, Mapping) else None
    for key in ("dspark_target_layer_ids", "target_layer_ids"):
        ids = values.get(key) if ids is None else ids
    where = (omni_cite("layers", version),)
    if not isinstance(ids, (list, tuple)) or not ids:
        return Problem("DSP820", M_OMNI_LAYERS, where)
    if any(_int(i) is None for i in ids):
        return Problem("DSP820", M_OMNI_LAYER_INTS, where)
    if list(ids) != sorted(set(ids)):
        return Problem("DSP820", M_OMNI_LAYER_ORDER, where)
    layers = _int(text.get("num_hidden_layers")) if text is not None else None
    if layers is not None and (ids[0] < 0 or ids[-1] >= layers):
        return Problem("DSP820", M_OMNI_LAYER_RANGE.format(last=layers - 1, ids=list(ids)), where)
    return None


def _omni_draft(version: str, values: Mapping[str, Any], t: int | None) -> Problem | None:
    """Checks 9-16: the draft config alone (and T)."""
    def at(check: str) -> tuple[Cite, ...]:
        return (omni_cite(check, version),)
    if _nested(values, "use_aux_hidden_state") is not True:
        return Problem("DSP820", M_OMNI_AUX, at("aux"))
    if not _posint(values.get("markov_rank")):
        return Problem("DSP820", M_OMNI_RANK, at("rank"))
    if values.get("markov_head_type") != "vanilla":
        return Problem("DSP820", M_OMNI_HEAD.format(got=repr(values.get("markov_head_type"))), at("head"))
    if values.get("sample_from_anchor", True) is not True or values.get("dspark_bonus_anchor", False) is not False:
        return Problem("DSP820", M_OMNI_ANCHOR, at("anchor"))
    v = _int(values.get("vocab_size"))
    if v is None or v <= 0:
        return Problem("DSP820", M_OMNI_V.format(v=values.get("vocab_size")), at("v"))
    d = values.get("draft_vocab_size")
    d = v if d is None else d
    if t is not None and (not _posint(d) or not 0 < d <= t):
        return Problem("DSP308", M_OMNI_D.format(t=t, d=d), at("d"))
    noise = _nested({"dflash_config": values.get("dflash_config")}, "mask_token_id")
    for key in ("mask_token_id", "dspark_noise_token_id", "pard_token", "ptd_token_id"):
        noise = values.get(key) if noise is None else noise
    if _int(noise) is None or not 0 <= noise < v:
        return Problem("DSP308", M_OMNI_MASK.format(last=v - 1), at("mask"))
    ropes = (values.get("rope_parameters"), values.get("rope_scaling"))
    if values.get("mrope_section") is not None or any(isinstance(r, Mapping) and "mrope_section" in r for r in ropes):
        return Problem("DSP820", M_OMNI_MROPE, at("mrope"))
    return None


def omni_problem(version: str, values: Mapping[str, Any], archs: tuple[str, ...], n: int | None,
                 target: TargetView) -> Problem | None:
    """_validate_qwen3_omni_dspark, checks 1-16 in order; the first failure wins."""
    if "Qwen3OmniDSparkModel" not in archs:
        return Problem("DSP309", M_OMNI_GENERIC, (omni_cite("generic", version),))
    block = _nested(values, "block_size")
    block = _nested(values, "dspark_block_size") if block is None else block
    if not _posint(block):
        return Problem("DSP818", M_OMNI_BLOCK, (omni_cite("block", version),))
    if n != block:
        return Problem("DSP819", M_OMNI_TOKENS.format(b=block, n=n), (omni_cite("tokens", version),))
    text = target.text_config
    found = _omni_target(version, values, text) if text is not None else None
    t = _int(text.get("vocab_size")) if text is not None and text.get("vocab_size") is not None else target.vocab_size
    return found or _layer_ids(version, values, text) or _omni_draft(version, values, t)


_REPO_PART = re.compile(r"(\b[\w\-.]{1,96}\b/)?\b[\w\-.]{1,96}\b", re.ASCII)


def valid_repo_id(name: str) -> bool:
    """huggingface_hub's validate_repo_id (the 0.33 speculators refusal calls it): `name` or `namespace/name`, word
    characters, `-` and `.`, no `--` or `..`, not ending in `.git`, at most 96 characters per part."""
    return (name.count("/") <= 1 and _REPO_PART.fullmatch(name) is not None and "--" not in name
            and ".." not in name and not name.endswith(".git"))
