"""Pure: the one evaluation pass over a release's generated model: every parameter visited once, at most one annotation.

Design (issue 40 item 2). For a release and a class it builds, the pass walks every parameter of the generated
record (runtimes/release_model.py) once, and every checkpoint tensor once (runtimes/landing.py `land`, which asks
this module how to judge the parameter a tensor lands on). By default the record judges a parameter whole: a
tensor's shape against the record's expression at the draft's values, and its presence (no tensor fills it: the
release's refusal, DSP367, or silence, DSP363). What the probe cannot observe by feeding names to `load_weights` --
what the runtime takes from the target after load, what it masks or maps at sampling time, its hand-written words --
is not a second evaluator that skips the rest: it is an ANNOTATION, one row of `ANNOTATIONS` keyed by the
parameter's leaf, that names the facet of the judgement the hand-read facts answer instead of the record (`shape`,
`presence`, `unfilled`) and where those facts live. Every parameter carries at most one annotation
(tests/unit/test_parameter_pass.py walks every parameter of every built class of every release folder, vLLM and
SGLang: each visited once, none with two, and each annotation names a parameter some record builds).

What is still hand-read (and so where the annotated facets are answered): on vLLM, whether the release fills an
unshipped lm_head or embed_tokens from the target, and the d2t mapping (runtimes/compatibility.py over
vllm_rows.py; a shipped head's shape is the record's, raised under the head's own code: VOCAB_SHAPE_CODES); on
SGLang, whether an EAGLE-3 worker shares the target's head, and the heads no SGLang DSpark or DFlash record builds
(the worker attaches the target's lm_head and embed_tokens: runtimes/sglang_eval.py over sglang_rows.py); the
aux-state model (runtimes/eagle3_aux.py, eagle3_aux_sglang.py) for the width of an EAGLE-3 fc. The Markov head is
the record's on both runtimes, shape and presence, under its own codes (VOCAB_SHAPE_CODES, UNFILLED_MODULE_CODES; on
SGLang in the loader's own order, after the backbone: runtimes/load_phases.py). So is SGLang's Domino projector
(`prefix_gru.*`, `embed_proj.*`): what stays hand-read of these in sglang_eval.py (an unknown Markov name and an
undeclared projector refused by name, the start-up checks of their fields and of V == T) is no facet of a
parameter, so it has no row here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.release_model import ArchitectureModel, Expr, normal

# The families whose fc width the aux-state model sizes (eagle3_aux.py: the count of aux hidden states fc reads)
AUX_FAMILIES = frozenset({Family.EAGLE3_LLAMA, Family.EAGLE3_QWEN3})
VOCAB_VARIABLES = frozenset({"vocab_size", "draft_vocab_size", "target.vocab_size"})
# The vocabulary mapping's parameter: the release builds it only where D differs from T, so its shape is no
# expression of the samples (it is D where it exists)
MAPPING_PARAMETERS = frozenset({"draft_id_to_target_id"})


class Facet(StrEnum):
    """A part of a parameter's judgement an annotation answers instead of the record."""

    SHAPE = "shape"  # a tensor landing on it: its shape
    PRESENCE = "presence"  # no tensor fills it: neither the release's refusal (DSP367) nor silence (DSP363)
    UNFILLED = "unfilled"  # no tensor fills it: not silence (DSP363); the release's own refusal still is the record's


class Applies(StrEnum):
    """Which drafts an annotation row speaks for."""

    DESCRIBED = "described"  # a family whose vocab contract describes the draft (check's verdict of that family)
    UNDESCRIBED = "undescribed"  # no family does (runtimes/generated_verdict.py)
    ANY = "any"
    AUX = "aux"  # an EAGLE-3 family the aux-state model reads (AUX_FAMILIES)


@dataclass(frozen=True, slots=True)
class Annotation:
    """One hand-read fact about a parameter the probe cannot observe: which facets it answers, for which drafts."""

    leaf: str  # the parameter's last dotted components
    facets: frozenset[Facet]
    applies: Applies
    sees: str  # what the runtime does that the probe cannot see
    judged_by: tuple[str, ...]  # the hand-read modules (under dspark_ckpt/) that answer the facets; none: unsaid
    runtimes: frozenset[str]  # whose records build it
    vocab_sized: bool = True  # only where the record sizes it by a vocabulary (or it is the d2t mapping)

    def matches(self, model: ArchitectureModel, parameter: str, family: Family | None) -> bool:
        if model.runtime not in self.runtimes or not (parameter == self.leaf or parameter.endswith("." + self.leaf)):
            return False
        if self.vocab_sized and not vocab_parameter(parameter, model.parameters.get(parameter)):
            return False
        return {Applies.DESCRIBED: family is not None, Applies.UNDESCRIBED: family is None, Applies.ANY: True,
                Applies.AUX: family in AUX_FAMILIES}[self.applies]


_CONTRACT = ("runtimes/compatibility.py", "runtimes/sglang_eval.py")  # over vllm_rows.py, sglang_rows.py
_WHOLE = frozenset({Facet.SHAPE, Facet.PRESENCE})
_TARGET_FILLS = "the release may fill it from the target after load_weights (MTP heads share the target's)"

_VLLM, _SGLANG, _BOTH = frozenset({"vllm"}), frozenset({"sglang"}), frozenset({"vllm", "sglang"})

# Each row names the runtimes whose records build its parameter (tests/unit/test_parameter_pass.py holds each row to
# a parameter some record builds, and no parameter to two rows)
ANNOTATIONS: tuple[Annotation, ...] = (
    # A shipped head's shape is the record's (VocabParallelEmbedding's row assert and the rest, observed, in the
    # release's load order); what is hand-read is whether the release fills a head no tensor fills from the target,
    # and its own words for one a Qwen3 DSpark load_weights (vLLM) or an EAGLE-3 worker (SGLang) refuses
    Annotation("lm_head.weight", frozenset({Facet.PRESENCE}), Applies.DESCRIBED, "shared from the target after "
               "load (per release and kind), padded rows [T, D) never masked, the release's own words for a missing "
               "head", _CONTRACT, _BOTH),
    Annotation("embed_tokens.weight", frozenset({Facet.PRESENCE}), Applies.DESCRIBED, "shared from the target "
               "after load where V <= T (per release), the release's words for V > T without one", _CONTRACT, _BOTH),
    Annotation("draft_id_to_target_id", _WHOLE, Applies.DESCRIBED, "built where D differs from T (per release), "
               "applied at sampling as draft_id + d2t[draft_id], a missing one stays all-zero", _CONTRACT[:1], _VLLM),
    # EAGLE-3's fc: its width is the count of aux hidden states the runner hands it, which the config's layer
    # lists and the release's defaults decide at run time; its presence stays the record's (a draft without fc
    # loads and fc keeps its initial values: tests/producers/test_vllm_whole_agreement.py `no-fc`)
    Annotation("fc.weight", frozenset({Facet.SHAPE}), Applies.AUX, "width = aux hidden states x target hidden size, "
               "from the runner's layer ids", ("runtimes/eagle3_aux.py", "runtimes/eagle3_aux_sglang.py"), _BOTH,
               vocab_sized=False),
    Annotation("lm_head.weight", frozenset({Facet.UNFILLED}), Applies.UNDESCRIBED, _TARGET_FILLS, (), _BOTH),
    Annotation("embed_tokens.weight", frozenset({Facet.UNFILLED}), Applies.UNDESCRIBED, _TARGET_FILLS, (), _BOTH),
    # a NextN head's own name for its embedding (SGLang's BailingMoe): no vocab contract reads it under any family
    # (formats/vocab_tensors.py knows embed_tokens only), so its shape is the record's whoever serves the class
    Annotation("word_embeddings.weight", frozenset({Facet.UNFILLED}), Applies.ANY, _TARGET_FILLS, (), _SGLANG),
    Annotation("head.weight", frozenset({Facet.UNFILLED}), Applies.ANY, _TARGET_FILLS, (), _VLLM),
)


# The finding a described draft's mis-shaped vocabulary parameter becomes when the release raises on it (the record
# judges its shape; the code says which head, as the vocab contract always has: DSP320 an lm_head, ...)
VOCAB_SHAPE_CODES: Mapping[str, FindingCode] = {"lm_head.weight": "DSP320", "embed_tokens.weight": "DSP321",
                                                "markov_w1.weight": "DSP322", "markov_w2.weight": "DSP323"}
# ... and a head's module the release leaves unwritten without a word (the record judges its presence): any
# parameter of the Markov head (its factors; a gated or RNN head's projection too) keeps its random initialisation,
# a bias on every proposal (DSP345, an error where DSP363 warns of a backbone parameter)
UNFILLED_MODULE_CODES: Mapping[str, FindingCode] = {"markov_head": "DSP345"}


def vocab_shape_code(parameter: str | None) -> FindingCode | None:
    """The vocabulary head's own code for a raise on `parameter`'s shape (None: not a vocabulary head)."""
    if parameter is None:
        return None
    return next((code for leaf, code in VOCAB_SHAPE_CODES.items()
                 if parameter == leaf or parameter.endswith("." + leaf)), None)


def vocab_unfilled_code(parameter: str | None) -> FindingCode | None:
    """The head's own code for `parameter` of its module left unwritten (None: DSP363's, as any parameter)."""
    if parameter is None:
        return None
    modules = normal(parameter).removeprefix("model.").split(".")[:-1]
    return next((code for module, code in UNFILLED_MODULE_CODES.items() if modules[:1] == [module]), None)


def unwritten_heads(parameters: list[str]) -> str:
    """What is wrong with a vocabulary head's parameters the load left unwritten (under vocab_unfilled_code)."""
    keeps = "they keep their" if len(parameters) > 1 else "it keeps its"
    return f"{' and '.join(parameters)} not in the checkpoint: {keeps} random initialisation"


def is_vocab(exprs: tuple[Expr | None, ...] | None) -> bool:
    return exprs is not None and any(e is not None and e.variables & VOCAB_VARIABLES for e in exprs)


def is_mapping(parameter: str) -> bool:
    return parameter.rsplit(".", 1)[-1] in MAPPING_PARAMETERS


def vocab_parameter(parameter: str, exprs: tuple[Expr | None, ...] | None) -> bool:
    """A parameter of the vocabulary (sized by one, or the d2t mapping)."""
    return is_vocab(exprs) or is_mapping(parameter)


@dataclass(frozen=True, slots=True)
class Judgement:
    """How the one pass judges one parameter: by the record, but for the facets its annotation answers."""

    parameter: str
    annotation: Annotation | None

    def _record(self, facet: Facet) -> bool:
        return self.annotation is None or facet not in self.annotation.facets

    @property
    def shape(self) -> bool:
        """The record judges a landing tensor's shape."""
        return self._record(Facet.SHAPE)

    @property
    def presence(self) -> bool:
        """The record judges a parameter no tensor fills (the release's refusal, silence)."""
        return self._record(Facet.PRESENCE)

    @property
    def unfilled(self) -> bool:
        """The record says a parameter no tensor fills stays as initialised (DSP363)."""
        return self.presence and self._record(Facet.UNFILLED)


def annotations_of(model: ArchitectureModel, parameter: str, family: Family | None) -> tuple[Annotation, ...]:
    """Every annotation row that speaks for this parameter (the pass takes the one; the test wants at most one)."""
    return tuple(a for a in ANNOTATIONS if a.matches(model, parameter, family))


@functools.lru_cache(maxsize=256)
def walk(model: ArchitectureModel, family: Family | None) -> Mapping[str, Judgement]:
    """The pass's plan: every parameter the record builds, visited once, with its annotation (`family`: whose vocab
    contract describes the draft, None where none does)."""
    return {parameter: Judgement(parameter, next(iter(annotations_of(model, parameter, family)), None))
            for parameter in model.parameters}


def judgement(model: ArchitectureModel, parameter: str, family: Family | None) -> Judgement:
    """How the pass judges this parameter (a layer index generalised)."""
    key = normal(parameter)
    found = walk(model, family).get(key)
    return found if found is not None else Judgement(key, next(iter(annotations_of(model, key, family)), None))


def unfilled_judged(model: ArchitectureModel, parameter: str, family: Family | None) -> bool:
    """Whether a parameter no tensor fills is a finding of its own (DSP363): one with a dimension the samples fitted
    (a fused projection whose rows they could not fit is still built) whose annotation leaves that to the record."""
    key = normal(parameter)
    exprs = model.parameters.get(key)
    return exprs is not None and any(e is not None for e in exprs) and judgement(model, key, family).unfilled
