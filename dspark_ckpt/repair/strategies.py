"""The repair strategies as data: what each resolves and how safe it is to apply (ruff's safe/unsafe fixes).

Rule docs (`explain`), hints and the planner's nominal codes are derived from this table, so a strategy is
described in one place. Pure data: importing it loads nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Applicability(StrEnum):
    SAFE = "safe"  # metadata-only: JSON edits, small new shards, dropped tensors; fine for a commit hook
    UNSAFE = "unsafe"  # rewrites tensor data (trims rows); the user runs it deliberately


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    summary: str
    resolves: tuple[str, ...]  # the finding codes it can resolve; the first is the one it stands for when forced
    applicability: Applicability


TRIM = "trim"
SHARE_TARGET_HEAD = "share-target-head"
REBUILD_D2T = "rebuild-d2t"
DROP_D2T = "drop-d2t"
IDENTITY_D2T = "identity-d2t"
TRIM_INPUT = "trim-input"
HOIST_DSPARK_SETTINGS = "hoist-dspark-settings"
SET_DRAFT_VOCAB = "set-draft-vocab"
NAME_QWEN3_DSPARK = "name-qwen3-dspark"

# In preference order when several repairs load everywhere equally well: trimming removes the illegal-id risk too,
# and an explicit identity d2t is only ever a pin for old runtimes. trim-input comes last: alone it only helps
# runtimes that size the output side by vocab_size (SGLang's Qwen3 DSpark).
TABLE: tuple[Strategy, ...] = (
    Strategy(TRIM, "trim lm_head/markov_w2 to T rows and set draft_vocab_size = T (a padded draft with its own head)",
             ("DSP305", "DSP308", "DSP601", "DSP602", "DSP302", "DSP303"), Applicability.UNSAFE),
    Strategy(SHARE_TARGET_HEAD, "trim markov_w2 to T rows and set draft_vocab_size = T, so the target head is shared "
             "(a padded draft without its own head)", ("DSP306", "DSP305", "DSP315"), Applicability.UNSAFE),
    Strategy(REBUILD_D2T, "rebuild d2t exactly from a valid t2d (a pruned draft whose d2t is missing or all zero)",
             ("DSP302", "DSP401", "DSP405", "DSP603"), Applicability.SAFE),
    Strategy(DROP_D2T, "drop a d2t the runtime has no parameter for (an equal or padded draft)", ("DSP303",),
             Applicability.SAFE),
    Strategy(IDENTITY_D2T, "add an explicit zero d2t (a pin for vLLM 0.27-0.29 only; never chosen unless forced)",
             ("DSP302",), Applicability.SAFE),
    Strategy(TRIM_INPUT, "trim embed_tokens/markov_w1 to T rows and set vocab_size = T (input side of V > T)",
             ("DSP320", "DSP304", "DSP321", "DSP322", "DSP323", "DSP340"), Applicability.UNSAFE),
    # Config-only repairs of what the runtime reads from config.json: planned before any other step (CONFIG_FIRST).
    Strategy(HOIST_DSPARK_SETTINGS, "write the DSpark settings found only in dflash_config/dspark_config at the top "
             "level of config.json, where the runtime reads them", ("DSP215",), Applicability.SAFE),
    Strategy(SET_DRAFT_VOCAB, "set draft_vocab_size to the rows every D-sized tensor has (config.json contradicted "
             "the tensors)", ("DSP216",), Applicability.SAFE),
    Strategy(NAME_QWEN3_DSPARK, "name a Qwen3-typed DSparkDraftModel Qwen3DSparkModel in config.json, as vLLM 0.29+ "
             "does itself (0.27/0.28 build the DeepSeek-V4 draft from that name)", ("DSP218", "DSP309"),
             Applicability.SAFE),
)
# Applied first, whenever they apply: every other repair is judged on the config they write. The optional ones are
# tried both ways, and kept only where they help the chosen runtimes.
CONFIG_FIRST: tuple[str, ...] = (HOIST_DSPARK_SETTINGS, SET_DRAFT_VOCAB, NAME_QWEN3_DSPARK)
OPTIONAL_FIRST: tuple[str, ...] = (NAME_QWEN3_DSPARK,)
BY_NAME: dict[str, Strategy] = {s.name: s for s in TABLE}
STRATEGIES: tuple[str, ...] = tuple(s.name for s in TABLE)


def repairs_for(code: str) -> tuple[str, ...]:
    """The strategies that can resolve a finding code, in preference order."""
    return tuple(s.name for s in TABLE if code in s.resolves)
