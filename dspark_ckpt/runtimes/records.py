"""The evaluator's records, at the bottom of runtimes/: what a release builds from a draft config (BuiltConfig), what
its load path looks at (DraftFacts, built once by check/analysis.py), and what it answers (Verdict, Issue). Data only:
the builder (config_build.py), the verdict (release_verdict.py) and the evaluators (compatibility.py, sglang_eval.py)
import these and not each other's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dspark_ckpt.model.classify import VocabKind, vocab_kind
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import Family, traits
from dspark_ckpt.runtimes import parameter_pass
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.sglang_config import SglangConfig

if TYPE_CHECKING:  # an EAGLE-3 draft's aux facts: eagle3_aux.py loads only for those (AUX_FAMILIES)
    from dspark_ckpt.runtimes.eagle3_aux import AuxRead

# The families whose aux hidden states a release reads (eagle3_aux.COUNT_KEYS, eagle3_aux_sglang.read_aux; a test
# holds them equal): the builders import those modules for a draft of these only; the one pass's fc annotation too.
AUX_FAMILIES = parameter_pass.AUX_FAMILIES


@dataclass(frozen=True, slots=True)
class Issue:
    """One thing a runtime does with a draft: a finding code and its text (the runtime's words where verbatim)."""

    code: FindingCode
    text: str
    verbatim: bool = True  # False where the text is dspark-ckpt's description, not the runtime's own message
    tensor: str | None = None  # the checkpoint tensor whose load raises it (load order decides which comes first)


@dataclass(frozen=True, slots=True)
class FirstStep:
    """What is known of a loading draft's first draft step in one release: it `fails` (the issue), it `ran` (an
    execution of the release's own step vouches for it), or it is `not_modelled` (why: a key of
    runtimes/step_reasons.py REASONS; text: that reason in this release's and draft's words)."""

    state: str  # ran | fails | not_modelled
    issue: Issue | None = None
    why: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class BuiltConfig:
    """What one runtime release makes of a draft config: the class it builds, the sizes it reads, and the error it
    raises before any weight is loaded, if any."""

    runtime: str
    version: str
    architecture: str | None  # after the speculators conversion and the method's rewrites
    model_type: str | None  # hf_config.model_type after the rewrites ("speculators" for a converted config)
    config_class: str  # the transformers class holding the attributes (what an AttributeError names)
    method: str | None  # the speculative method it runs under (None: a runtime with no builder here)
    family: Family | None  # whose contract rows apply; None: no class dspark-ckpt models
    vocab_size: int | None  # V, as the model reads it
    draft_vocab_size: int | None  # D, as the model reads it (V when absent or null)
    parallel_drafting: bool | None = None  # forced by the conversion (speculators peagle), else None
    error: Issue | None = None  # the first error raised while building
    before_validation: bool = True  # the error comes before SpeculativeConfig's own checks (False: __init__)
    source: str = ""  # the files and lines each step was read from
    aux: AuxRead | None = None  # EAGLE-3: the aux hidden states fc is sized for, the runners' layers
    hf: Mapping[str, Any] | None = field(default=None, compare=False)  # the config the class is built from
    silent: tuple[Issue, ...] = ()  # what the build alone shows goes wrong without an error (sglang_target_class)


@dataclass(frozen=True, slots=True)
class DraftFacts:
    """What a runtime's load path looks at: the vocab sizes and which tensors (by substring) exist."""

    family: Family
    draft_vocab_size: int  # D
    vocab_size: int  # V
    target_vocab_size: int  # T
    has_lm_head: bool
    has_embed: bool
    has_d2t: bool
    has_t2d: bool
    has_mask_hidden: bool = False
    model_prefixed: bool = False
    lm_head_rows: int | None = None
    lm_head_cols: int | None = None
    hidden_size: int | None = None
    embed_rows: int | None = None
    markov_w1_rows: int | None = None
    markov_w1_cols: int | None = None
    markov_rank: int | None = None
    markov_w2_rows: int | None = None
    d2t_length: int | None = None
    dspark_draft_topk: int | None = None
    has_own_lm_head_flag: bool = False
    parallel_drafting: bool = False
    mask_token_id: int | None = None
    unreadable: tuple[FindingCode, str] | None = None  # (code, message) of a file no loader can read, if any
    target_is_omni: bool = False
    target_hidden_size: int | None = None  # the target text config's hidden_size (a local --target only)
    target_text_model_type: str | None = None  # the target's hf_text_config.model_type (TargetVocab.text_model_type)

    @property
    def shipped_heads(self) -> tuple[str, ...]:
        """The optional heads the checkpoint ships tensors for, in the order a loader meets them (sorted names)."""
        view = self.sglang  # the tensor-name view the analysis records (runtimes/sglang_config.py)
        markov = (view is not None and bool(view.markov_names)) or self.markov_w1_rows is not None \
            or self.markov_w2_rows is not None
        confidence = view is not None and bool(view.confidence_names)
        return tuple(name for name, shipped in (("confidence_head", confidence), ("markov_head", markov)) if shipped)

    def first_tensor(self, named: Callable[[str], bool]) -> str | None:
        """The first checkpoint tensor in load order (sorted names) whose name, less a `model.` prefix, is `named`."""
        return min((n for n, _ in self.tensor_shapes if named(n.removeprefix("model."))), default=None)

    def unbuilt_heads(self, family: Family | None) -> tuple[str, ...]:
        """The shipped optional heads `family`'s model has no module for (a loader refuses or skips them)."""
        if family is None:
            return ()
        return tuple(h for h in self.shipped_heads if not traits(family).builds(h))

    @property
    def kind(self) -> VocabKind:
        """pruned | equal | padded, from these facts' own D and T (a repair that changes D changes it too)."""
        kind = vocab_kind(self.draft_vocab_size, self.target_vocab_size)
        assert kind is not None
        return kind
    draft_vocab_config: str = "int"  # how config.json states draft_vocab_size: "int", "null" or "absent"
    target_head_rows: int | None = None  # rows of the target's lm_head when its config pads them beyond T
    sglang: SglangConfig | None = None  # what SGLang's own config parsers read (runtimes/sglang_config.py)
    # What each release builds from config.json (runtimes/config_build.py), and the config itself, kept so that a
    # config-only repair can be judged by rebuilding it; the mapping contents a loaded d2t/t2d brings.
    builds: tuple[BuiltConfig, ...] = ()
    raw_config: Mapping[str, Any] | None = field(default=None, compare=False)
    honoured_draft_vocab: int | None = None  # the rows every D-sized tensor has when draft_vocab_size says otherwise
    nested_weights: tuple[str, ...] = ()  # `<name>.weight` tensors for bare parameters (candidate_selector codebooks)
    tensor_shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # every tensor's header shape (runtimes/landing.py)
    d2t_all_zero: bool = False
    d2t_range: tuple[int, int] | None = None  # (min, max) of i + d2t[i] over the rows a target id can come from
    t2d_length: int | None = None  # the target vocab the draft's t2d records
    fc_shape: tuple[int, ...] | None = None  # EAGLE-3: the header shape of fc.weight, if shipped
    aux: AuxRead | None = None  # EAGLE-3: what the release judged builds fc from (set per release, eagle3_aux.py)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One runtime release's outcome for a draft: its contract row, the first error, the silent problems."""

    runtime: str
    version: str
    contract: Contract
    error: Issue | None  # the first error the runtime raises, None when it loads
    silent: tuple[Issue, ...]  # what goes wrong without an error
    first_step: Issue | None = None  # it loads, then fails at the first draft step (or CUDA-graph capture)
    step_unmodelled: FirstStep | None = None  # it loads, and nothing recorded or modelled its first step: why
    after_init: bool = False  # the error is raised after the model's __init__ (load_weights, the worker's checks)

    @property
    def loads(self) -> bool:
        return self.error is None
