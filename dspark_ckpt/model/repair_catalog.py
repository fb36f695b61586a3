"""Every repair `dspark-ckpt fix` can make, as data: what it resolves, which findings' hints name it, how safe it is.

The one source of what a repair resolves: `Rule.repair` (rule_catalog.py) is derived from `hint_for`, the planner's
strategies (repair/strategies.py: applicability, actions, effect on the facts) are these repairs, and `explain`,
hints and SARIF's rule help read them. Pure data: importing it loads nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dspark_ckpt.model.codes import FindingCode


class Applicability(StrEnum):
    SAFE = "safe"  # metadata-only: JSON edits, small new shards, dropped or renamed tensors; fine for a commit hook
    UNSAFE = "unsafe"  # rewrites tensor data (trims rows); the user runs it deliberately


@dataclass(frozen=True, slots=True)
class Repair:
    """One fix strategy: its name, what it does, the findings it resolves, when it applies, safe or not."""

    name: str
    summary: str
    # The finding codes it can resolve; the first is the one it stands for when forced.
    resolves: tuple[FindingCode, ...]
    applicability: Applicability
    # What a re-export must hold instead, where this repair does not apply to a checkpoint (hints say it then).
    reexport: str = "re-export the draft for the target"
    # The codes whose finding hint names this repair (their Rule.repair): those it resolves whenever it applies.
    # The rest of `resolves` it resolves only for some drafts or runtimes, so their hints name no repair.
    hint_for: tuple[FindingCode, ...] = ()

    def __post_init__(self) -> None:
        if not set(self.hint_for) <= set(self.resolves):
            raise ValueError(f"{self.name}: a hint may only name it for a code it resolves")


TRIM = "trim"
SHARE_TARGET_HEAD = "share-target-head"
REBUILD_D2T = "rebuild-d2t"
OFFSET_D2T = "offset-d2t"
DROP_D2T = "drop-d2t"
IDENTITY_D2T = "identity-d2t"
TRIM_INPUT = "trim-input"
HOIST_DSPARK_SETTINGS = "hoist-dspark-settings"
SET_DRAFT_VOCAB = "set-draft-vocab"
NAME_QWEN3_DSPARK = "name-qwen3-dspark"
SET_AUX_COUNT = "set-aux-count"
SET_TARGET_HIDDEN = "set-target-hidden"
DROP_CONFIDENCE_HEAD = "drop-confidence-head"
SET_MARKOV_RANK = "set-markov-rank"
UNNEST_WEIGHTS = "unnest-weights"

D2T_REEXPORT = ("re-export the draft with its d2t as offsets (target id = i + d2t[i]) and a t2d marking the same "
                "D target ids")
# In preference order when several repairs load everywhere equally well: trimming removes the illegal-id risk too,
# and an explicit identity d2t is only ever a pin for old runtimes. trim-input comes last: alone it only helps
# runtimes that size the output side by vocab_size (SGLang's Qwen3 DSpark).
REPAIRS: tuple[Repair, ...] = (
    Repair(TRIM, "trim lm_head/markov_w2 to T rows and set draft_vocab_size = T (a padded draft with its own head)",
           ("DSP305", "DSP308", "DSP601", "DSP602", "DSP302", "DSP303"), Applicability.UNSAFE,
           "re-export the draft with lm_head and markov_w2 of T rows and draft_vocab_size = T",
           hint_for=("DSP305", "DSP308", "DSP601", "DSP602")),
    Repair(SHARE_TARGET_HEAD, "trim markov_w2 to T rows and set draft_vocab_size = T, so the target head is shared "
           "(a padded draft without its own head)", ("DSP306", "DSP305", "DSP315", "DSP303"), Applicability.UNSAFE,
           "re-export the draft with markov_w2 of T rows and draft_vocab_size = T", hint_for=("DSP306",)),
    Repair(REBUILD_D2T, "rebuild d2t exactly from a valid t2d (a pruned draft whose d2t is missing, all zero, maps "
           "outside [0, T) or out of order, or has another length than D)",
           ("DSP302", "DSP401", "DSP405", "DSP603", "DSP402", "DSP403", "DSP324"), Applicability.SAFE, D2T_REEXPORT,
           hint_for=("DSP302", "DSP401", "DSP405", "DSP603")),
    Repair(OFFSET_D2T, "convert a d2t that holds absolute target ids to the offsets the runtimes add (d2t[i] - i; "
           "the ids a strictly increasing subset of [0, T), agreeing with t2d where there is one)",
           ("DSP402", "DSP403", "DSP405", "DSP603"), Applicability.SAFE, D2T_REEXPORT,
           hint_for=("DSP402", "DSP403")),
    Repair(DROP_D2T, "drop a d2t the runtime has no parameter for (an equal or padded draft)", ("DSP303", "DSP324"),
           Applicability.SAFE, "re-export the draft without the d2t", hint_for=("DSP303",)),
    Repair(IDENTITY_D2T, "add an explicit zero d2t (a pin for vLLM 0.27-0.29 only; never chosen unless forced)",
           ("DSP302",), Applicability.SAFE),
    # DSP371: vLLM 0.30+'s EAGLE-3 compute_logits asserts the head's width (D) is vocab_size where it has no d2t
    # parameter (D == T; llama_eagle3.py:379 @ 0.30.0, :370 @ 0.34.0): vocab_size = T makes V = D = T, the equal
    # cell its first step runs (tests/acceptance/test_verify_engine.py runs it on the repaired draft)
    Repair(TRIM_INPUT, "trim embed_tokens/markov_w1 to T rows and set vocab_size = T (input side of V > T)",
           ("DSP320", "DSP304", "DSP321", "DSP322", "DSP323", "DSP340", "DSP371"), Applicability.UNSAFE,
           hint_for=("DSP340", "DSP371")),
    # Config-only repairs of what the runtime reads from config.json: planned before any other step.
    Repair(HOIST_DSPARK_SETTINGS, "write the DSpark settings found only in dflash_config/dspark_config at the top "
           "level of config.json, where the runtime reads them", ("DSP215",), Applicability.SAFE,
           hint_for=("DSP215",)),
    Repair(SET_DRAFT_VOCAB, "set draft_vocab_size to the rows every D-sized tensor has (config.json contradicted "
           "the tensors)", ("DSP216",), Applicability.SAFE, hint_for=("DSP216",)),
    Repair(NAME_QWEN3_DSPARK, "name a Qwen3-typed DSparkDraftModel Qwen3DSparkModel in config.json, as vLLM 0.29+ "
           "does itself (0.25-0.28 build the DeepSeek-V4 draft from that name)", ("DSP218", "DSP309"),
           Applicability.SAFE, hint_for=("DSP218",)),
    Repair(SET_AUX_COUNT, "set num_aux_hidden_states to the length of the EAGLE-3 draft's aux layer list and keep "
           "the list at the top level of config.json and in eagle_config, where vLLM's and SGLang's model runners read "
           "it (fc.weight's width agrees with that list)", ("DSP329", "DSP356"), Applicability.SAFE,
           "re-export the draft with fc.weight of [hidden_size, n x target_hidden_size] for the n aux layers it "
           "was trained on, num_aux_hidden_states = n and those n layer ids in eagle_aux_hidden_state_layer_ids at "
           "the top level of config.json", hint_for=("DSP329", "DSP356")),
    Repair(SET_TARGET_HIDDEN, "replace an EAGLE-3 draft's `target_hidden_size: null` by the hidden size fc.weight "
           "was trained for (its width / the aux hidden states fc is sized for; with --target, only where that is "
           "the target's hidden size)", ("DSP358",), Applicability.SAFE,
           "re-export the draft with target_hidden_size set to the target's hidden size, or without the key",
           hint_for=("DSP358",)),
    Repair(DROP_CONFIDENCE_HEAD, "drop the confidence_head.* tensors of a DFlash or EAGLE-3 draft, whose vLLM "
           "backbone has no module for that training-time head and refuses it by name (SGLang skips it already)",
           ("DSP350",), Applicability.SAFE,
           "re-export the draft without the heads its architecture does not build, or under the architecture it "
           "was trained as (a Markov head is DSpark's)", hint_for=("DSP350",)),
    Repair(SET_MARKOV_RANK, "write the markov_rank a Qwen3 DSpark draft's __init__ reads as a plain attribute, "
           "from its Markov head's width (markov_w1 and markov_w2 are [rows, markov_rank])", ("DSP333",),
           Applicability.SAFE, "re-export the draft with markov_rank in config.json", hint_for=("DSP333",)),
    # DSP331: vLLM's DFlash2 (0.28+) builds the candidate selector's codebooks as bare nn.Parameters and refuses the
    # `<name>.weight` spelling of an nn.Embedding; SGLang's DFlash loader skips that spelling and leaves them at
    # their initial values (DSP363, only for such drafts: its hint names no repair). Only names change.
    Repair(UNNEST_WEIGHTS, "rename each `<name>.weight` tensor of a parameter the runtime builds bare (DFlash2's "
           "candidate_selector codebooks) to `<name>`, the data unchanged", ("DSP331", "DSP363"), Applicability.SAFE,
           "re-export the draft with the bare parameters named without `.weight`", hint_for=("DSP331",)),
)
BY_NAME: dict[str, Repair] = {r.name: r for r in REPAIRS}
NAMES: tuple[str, ...] = tuple(r.name for r in REPAIRS)


def _hint_repairs() -> dict[FindingCode, str]:
    named: dict[FindingCode, str] = {}
    for r in REPAIRS:
        for code in r.hint_for:
            if code in named:
                raise ValueError(f"{code}: hints would name both {named[code]} and {r.name}")
            named[code] = r.name
    return named


HINT_REPAIR: dict[FindingCode, str] = _hint_repairs()  # finding code -> the repair its hint names (Rule.repair)


def repairs_for(code: str) -> tuple[str, ...]:
    """The repairs that can resolve a finding code, in preference order."""
    return tuple(r.name for r in REPAIRS if code in r.resolves)
