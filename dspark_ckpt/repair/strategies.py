"""The repair strategies as objects: each carries its applicability, its actions and its effect on the facts.

What each resolves, which hints name it and how safe it is are its declaration, model/repair_catalog.py (read by
the rules, `explain` and SARIF too); the planner (plan.py) and the simulator (simulate.py) only ask the table.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Final

from dspark_ckpt.formats.mapping import rebuild_d2t
from dspark_ckpt.model import repair_catalog as cat
from dspark_ckpt.model.classify import VocabKind
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import nested_settings
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.repair_catalog import Applicability, Repair, repairs_for
from dspark_ckpt.repair import actions as a
from dspark_ckpt.repair.aux_count import aux_edits
from dspark_ckpt.repair.situation import Situation
from dspark_ckpt.repair.target_hidden import target_hidden_edit
from dspark_ckpt.runtimes.records import DraftFacts

__all__ = ["BY_NAME", "CONFIG_FIRST", "OPTIONAL_FIRST", "STRATEGIES", "TABLE", "Applicability", "Strategy",
           "repairs_for"]

NEW_D2T_SHARD = "dspark-fix-d2t.safetensors"
D2T_REFUSED: Final[FindingCode] = "DSP303"  # what a dropped d2t names where the repair resolves it (Reasons.drop)
_FACT_FIELDS = frozenset(f.name for f in fields(DraftFacts))


def cut_rows(facts: DraftFacts, rows: int, *leaves: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The header shapes after a trim to `rows`: each tensor whose name ends in one of `leaves` (`lm_head.weight`,
    `markov_w2.weight`, ...) cut to that many rows, as the landing (runtimes/landing.py) then sees them."""
    return tuple((n, (rows, *shape[1:]) if shape and n.endswith(leaves) and shape[0] > rows else shape)
                 for n, shape in facts.tensor_shapes)


def update(facts: DraftFacts, **changes: Any) -> DraftFacts:
    # DraftFacts grows with the contract table; only set what this version of it knows.
    return replace(facts, **{k: v for k, v in changes.items() if k in _FACT_FIELDS})


@dataclass(frozen=True, slots=True)
class Reasons:
    """The codes one step's actions may name: what the whole repair resolves (less what the config-only steps
    name, for the others), and the one they name by default."""

    resolved: tuple[FindingCode, ...]
    reason: FindingCode  # the first of `resolved`, else the code the strategy stands for
    drop: FindingCode  # a dropped d2t names DSP303 where the repair resolves it


class Strategy:
    """One repair. `why_not`: None when it applies to the draft (as the config-only steps leave it), else why not;
    `actions`: what it writes; `after`: the facts a runtime would see once it is applied."""

    repair: ClassVar[Repair]
    settles_d2t: ClassVar[bool] = False  # writes or removes the d2t: check's findings of its contents go with it
    with_input_trim: ClassVar[bool] = False  # an output-side trim, also planned with trim-input where that helps

    @property
    def name(self) -> str:
        return self.repair.name

    @property
    def resolves(self) -> tuple[FindingCode, ...]:
        return self.repair.resolves

    @property
    def summary(self) -> str:
        return self.repair.summary

    @property
    def applicability(self) -> Applicability:
        return self.repair.applicability

    @property
    def reexport(self) -> str:
        return self.repair.reexport

    @property
    def nominal(self) -> FindingCode:
        """The code it stands for when it resolves nothing the verdicts name (a forced strategy)."""
        return self.repair.resolves[0]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        raise NotImplementedError

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        return []

    def after(self, facts: DraftFacts) -> DraftFacts:
        return facts

    def own(self, r: Reasons) -> FindingCode:
        """The first resolved code that is one of its own, else the one it stands for."""
        return next((c for c in r.resolved if c in self.resolves), self.nominal)


def _rows_ok(s: Situation, d: int) -> bool:
    return all(t is None or (t.shape[:1] == (d,) and len(t.shape) == 2) for t in (s.vocab.lm_head, s.vocab.markov_w2))


def _int64(values: Sequence[int]) -> bytes:
    data = array("q", values)
    if sys.byteorder == "big":
        data.byteswap()  # safetensors is little-endian whatever the host
    return data.tobytes()


def _new_shard(s: Situation) -> str:
    taken = set(s.shard_metadata)
    name, n = NEW_D2T_SHARD, 1
    while name in taken:
        n += 1
        name = f"dspark-fix-d2t-{n}.safetensors"
    return name


class _OutputTrim(Strategy):
    """trim and share-target-head: the output side to T rows, draft_vocab_size = T, a stray d2t dropped."""

    settles_d2t = True
    with_input_trim = True

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        v, t = s.vocab, f.target_vocab_size
        out: list[a.Action] = [a.TrimRows(x.name, x.file, t, r.reason) for x in (v.lm_head, v.markov_w2)
                                    if x is not None]
        out += [a.DropTensor(v.d2t.name, v.d2t.file, r.drop)] if v.d2t else []
        out.append(a.SetConfig("draft_vocab_size", s.config.get("draft_vocab_size"), t, r.reason))
        return out

    def after(self, facts: DraftFacts) -> DraftFacts:
        t = facts.target_vocab_size
        return update(facts, draft_vocab_size=t, lm_head_rows=t if facts.has_lm_head else None,
                      markov_w2_rows=t if facts.markov_w2_rows is not None else None,
                      has_d2t=False, d2t_length=None, draft_vocab_config="int",
                      tensor_shapes=cut_rows(facts, t, "lm_head.weight", "markov_w2.weight"))


class Trim(_OutputTrim):
    repair = cat.BY_NAME[cat.TRIM]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        v, d = s.vocab, f.draft_vocab_size
        padded = f.kind is VocabKind.PADDED
        return (None if padded and v.lm_head and _rows_ok(s, d) else
                "the draft is not padded (D <= T)" if not padded else
                "it ships no lm_head (use share-target-head)" if not v.lm_head else
                f"lm_head/markov_w2 do not have D = {d} rows")


class ShareTargetHead(_OutputTrim):
    repair = cat.BY_NAME[cat.SHARE_TARGET_HEAD]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        v, d = s.vocab, f.draft_vocab_size
        padded = f.kind is VocabKind.PADDED
        return (None if padded and not v.lm_head and _rows_ok(s, d) else
                "the draft is not padded (D <= T)" if not padded else
                "it ships its own lm_head (use trim)" if v.lm_head else
                f"markov_w2 does not have D = {d} rows")


class _WritesD2t(Strategy):
    """rebuild-d2t, offset-d2t, identity-d2t: a d2t of D offsets (exact, or zeros < T for the identity pin)."""

    def after(self, facts: DraftFacts) -> DraftFacts:
        return update(facts, has_d2t=True, d2t_length=facts.draft_vocab_size, d2t_range=None,
                      d2t_all_zero=self.name == cat.IDENTITY_D2T)


class RebuildD2t(_WritesD2t):
    repair = cat.BY_NAME[cat.REBUILD_D2T]
    settles_d2t = True

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        v, d, pruned = s.vocab, f.draft_vocab_size, f.kind is VocabKind.PRUNED
        short = f.d2t_length is not None and f.d2t_length != d  # SGLang's hot_token_id lookup fails (DSP324)
        needs_d2t = pruned and (not v.d2t or s.d2t_all_zero or s.d2t_broken or short)
        return (None if needs_d2t and v.lm_head and s.t2d_flags is not None else
                "the draft is not pruned (D >= T)" if not pruned else
                "its d2t is a valid map (D entries, not all zero, inside [0, T), increasing)" if not needs_d2t else
                "it ships no lm_head" if not v.lm_head else
                f"it has no valid t2d (BOOL, length T, exactly {d} ids marked) to rebuild from")

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        if s.t2d_flags is None:
            return []
        v = s.vocab
        name, file = (v.d2t.name, v.d2t.file) if v.d2t else ("d2t", _new_shard(s))
        return [a.PutTensor(name, file, "I64", (f.draft_vocab_size,), _int64(rebuild_d2t(s.t2d_flags)),
                            "DSP401" if s.d2t_all_zero else r.reason)]


class OffsetD2t(_WritesD2t):
    repair = cat.BY_NAME[cat.OFFSET_D2T]
    settles_d2t = True

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        d = f.draft_vocab_size
        return (None if s.d2t_offsets is not None and len(s.d2t_offsets) == d else
                s.d2t_offsets_why if s.d2t_offsets is None else f"its d2t does not have D = {d} entries")

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        v = s.vocab
        if s.d2t_offsets is None or not v.d2t:
            return []
        return [a.PutTensor(v.d2t.name, v.d2t.file, "I64", (f.draft_vocab_size,), _int64(s.d2t_offsets), r.reason)]


class IdentityD2t(_WritesD2t):
    repair = cat.BY_NAME[cat.IDENTITY_D2T]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        padded = f.kind is VocabKind.PADDED
        return (None if padded and not s.vocab.d2t else
                "the draft is not padded (D <= T)" if not padded else "it already ships a d2t")

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        d = f.draft_vocab_size
        return [a.PutTensor("d2t", _new_shard(s), "I64", (d,), bytes(8 * d), r.reason)]


class DropD2t(Strategy):
    repair = cat.BY_NAME[cat.DROP_D2T]
    settles_d2t = True

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        return (None if s.vocab.d2t and f.kind is not VocabKind.PRUNED else
                "it ships no d2t" if not s.vocab.d2t else "a pruned draft needs its d2t")

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        v = s.vocab
        return [a.DropTensor(v.d2t.name, v.d2t.file, r.drop)] if v.d2t else []

    def after(self, facts: DraftFacts) -> DraftFacts:
        return update(facts, has_d2t=False, d2t_length=None)


class TrimInput(Strategy):
    repair = cat.BY_NAME[cat.TRIM_INPUT]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        """Rows >= T of the input side are never looked up: the target's tokenizer has T ids, unless the draft
        feeds one itself (its mask token), which keeps the input side whole. A draft without its own embed_tokens
        embeds every id, the mask too, with the target's: only markov_w1 and vocab_size change (SpecForge's
        padded export)."""
        v = s.vocab
        vocab, t, mask = f.vocab_size, f.target_vocab_size, f.mask_token_id
        if vocab <= t:
            return "the input vocab is not larger than T (vocab_size <= T)"
        if "vocab_size" not in s.config:
            return "config.json has no top-level vocab_size to set"
        if any(x is not None and (len(x.shape) != 2 or x.shape[0] != vocab) for x in (v.embed_tokens, v.markov_w1)):
            return f"embed_tokens/markov_w1 do not have V = {vocab} rows"
        if mask is not None and mask >= t and v.embed_tokens is not None:
            return f"mask_token_id {mask} >= T: the draft embeds that id itself, so its row must stay"
        return None

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        v, t, why = s.vocab, f.target_vocab_size, self.own(r)
        out: list[a.Action] = [a.TrimRows(x.name, x.file, t, why) for x in (v.embed_tokens, v.markov_w1)
                                    if x is not None]
        out.append(a.SetConfig("vocab_size", s.config.get("vocab_size"), t, why))
        return out

    def after(self, facts: DraftFacts) -> DraftFacts:  # V := T, with the input-sized tensors cut to T rows
        t = facts.target_vocab_size
        return update(facts, vocab_size=t, embed_rows=t if facts.embed_rows is not None else None,
                      markov_w1_rows=t if facts.markov_w1_rows is not None else None,
                      tensor_shapes=cut_rows(facts, t, "embed_tokens.weight", "markov_w1.weight"))


class HoistDsparkSettings(Strategy):
    repair = cat.BY_NAME[cat.HOIST_DSPARK_SETTINGS]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        v = s.vocab
        rank = next((value for key, _, value in s.nested_settings if key == "markov_rank"), None)
        cols = {x.shape[1] for x in (v.markov_w1, v.markov_w2) if x is not None and len(x.shape) == 2}
        return ("config.json holds every DSpark setting at the top level" if not s.nested_settings else
                "it ships no markov_head tensors: the draft was trained without a Markov head (SpecForge 0.2.0 "
                "ignores dspark_config), which vLLM's Qwen3 DSpark always builds" if rank is not None and not cols
                else f"markov_head has {sorted(cols)} columns, not the nested markov_rank {rank}"
                if rank is not None and sorted(cols) != [rank] else None)  # a rank of any JSON type

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        return [a.SetConfig(key, None, value, self.nominal) for key, _, value in s.nested_settings]

    def after(self, facts: DraftFacts) -> DraftFacts:
        if facts.raw_config is None:
            return facts
        raw = dict(facts.raw_config)
        hoisted = {key: value for key, _, value in nested_settings(raw)}
        topk = hoisted.get("dspark_draft_topk", facts.dspark_draft_topk)
        return update(facts, raw_config={**raw, **hoisted}, builds=(),
                      dspark_draft_topk=topk if isinstance(topk, int) and not isinstance(topk, bool) else None)


class SetDraftVocab(Strategy):
    repair = cat.BY_NAME[cat.SET_DRAFT_VOCAB]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        return None if f.honoured_draft_vocab is not None else "draft_vocab_size agrees with the D-sized tensors"

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        if f.honoured_draft_vocab is None:
            return []
        return [a.SetConfig("draft_vocab_size", s.config.get("draft_vocab_size"), f.honoured_draft_vocab,
                            self.nominal)]

    def after(self, facts: DraftFacts) -> DraftFacts:
        if facts.honoured_draft_vocab is None:
            return facts
        return update(facts, draft_vocab_size=facts.honoured_draft_vocab, honoured_draft_vocab=None,
                      draft_vocab_config="int")


class NameQwen3Dspark(Strategy):
    repair = cat.BY_NAME[cat.NAME_QWEN3_DSPARK]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        return (None if s.config.get("architectures") == ["DSparkDraftModel"] and s.config.get("model_type") == "qwen3"
                else "config.json names no Qwen3-typed DSparkDraftModel")

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        return [a.SetConfig("architectures", s.config.get("architectures"), ["Qwen3DSparkModel"], self.nominal)]

    def after(self, facts: DraftFacts) -> DraftFacts:
        if facts.raw_config is None:
            return facts
        return update(facts, raw_config={**facts.raw_config, "architectures": ["Qwen3DSparkModel"]}, builds=())


class SetAuxCount(Strategy):
    repair = cat.BY_NAME[cat.SET_AUX_COUNT]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        return aux_edits(f)[1]

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        why = self.own(r)
        return [a.SetConfig(key, old, new, why) for key, old, new in aux_edits(f)[0]]

    def after(self, facts: DraftFacts) -> DraftFacts:  # each release rebuilds the config it writes
        if facts.raw_config is None:
            return facts
        edits = {key: new for key, _, new in aux_edits(facts)[0]}
        return update(facts, raw_config={**facts.raw_config, **edits}, builds=()) if edits else facts


class SetTargetHidden(Strategy):
    repair = cat.BY_NAME[cat.SET_TARGET_HIDDEN]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        return target_hidden_edit(f)[1]

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        edit = target_hidden_edit(f)[0]
        return [a.SetConfig(*edit, self.own(r))] if edit else []

    def after(self, facts: DraftFacts) -> DraftFacts:  # each release rebuilds the config it writes
        edit = target_hidden_edit(facts)[0]
        if facts.raw_config is None or edit is None:
            return facts
        key, _, new = edit
        return update(facts, raw_config={**facts.raw_config, key: new}, builds=())


class DropConfidenceHead(Strategy):
    """DFlash / EAGLE-3 backbones build no confidence head (families.Traits) and vLLM's nested loader refuses
    `confidence_head.*` by name (DSP350); serving the draft without it is what SGLang does (DSP351). A Markov head
    there is refused too, but it usually means a DSpark draft under the wrong name: dropping it would change what
    the draft proposes, so that is left to a re-export."""

    repair = cat.BY_NAME[cat.DROP_CONFIDENCE_HEAD]
    HEAD = "confidence_head"

    def _names(self, s: Situation) -> list[str]:
        return sorted(n for n in s.tensors if n.removeprefix("model.").startswith(f"{self.HEAD}."))

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        heads = f.unbuilt_heads(f.family)
        if "markov_head" in heads:
            return (f"it also ships a Markov head, which {f.family.value} builds no module for: a DSpark draft under "
                    "another architecture's name, which dropping its head would not mend")
        if self.HEAD not in heads or not self._names(s):
            return f"it ships no {self.HEAD} its architecture ({f.family.value}) refuses"
        return None

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        return [a.DropTensor(n, s.tensors[n].file, self.own(r)) for n in self._names(s)]

    def after(self, facts: DraftFacts) -> DraftFacts:
        kept = tuple((n, shape) for n, shape in facts.tensor_shapes
                     if not n.removeprefix("model.").startswith(f"{self.HEAD}."))
        view = facts.sglang
        return update(facts, tensor_shapes=kept,
                      sglang=replace(view, confidence_names=()) if view is not None else None)


class SetMarkovRank(Strategy):
    """Qwen3 DSpark's __init__ reads `config.markov_rank` (DSP333 without it, config_build._init_error); its Markov
    head is nn.Embedding(V, r) + a [D, r] projection, so both tensors' width is r. Settings only nested in
    dflash_config/dspark_config are hoist-dspark-settings' (DSP215)."""

    repair = cat.BY_NAME[cat.SET_MARKOV_RANK]
    KEY = "markov_rank"

    def _rank(self, s: Situation, f: DraftFacts) -> tuple[int | None, str | None]:
        if f.family not in (Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK):
            return None, f"{f.family.value} reads no {self.KEY}"
        if f.raw_config is None or self.KEY in f.raw_config:
            return None, f"config.json already sets {self.KEY}"
        if any(key == self.KEY for key, _, _ in s.nested_settings):
            return None, f"{self.KEY} is nested in config.json: hoist-dspark-settings writes it where it is read"
        widths = {t.shape[1] for t in (s.vocab.markov_w1, s.vocab.markov_w2) if t is not None and len(t.shape) == 2}
        if s.vocab.markov_w1 is None or s.vocab.markov_w2 is None or len(widths) != 1:
            return None, ("its Markov head tensors do not give one width (markov_w1 and markov_w2 must both be "
                          f"[rows, {self.KEY}])")
        (rank,) = widths
        return rank, None

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        return self._rank(s, f)[1]

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        rank = self._rank(s, f)[0]
        return [a.SetConfig(self.KEY, None, rank, self.own(r))] if rank is not None else []

    def after(self, facts: DraftFacts) -> DraftFacts:  # each release rebuilds the config it writes
        rank = facts.markov_w1_cols
        if facts.raw_config is None or rank is None or self.KEY in facts.raw_config:
            return facts
        return update(facts, raw_config={**facts.raw_config, self.KEY: rank}, markov_rank=rank, builds=())


class UnnestWeights(Strategy):
    """A `<name>.weight` tensor of a parameter the runtime builds bare (DraftFacts.nested_weights, the names check's
    DSP331 is derived from: z-lab dflash 0.1.0 saves DFlash2's codebooks as nn.Embedding) is renamed to `<name>`,
    its bytes copied unchanged. Where `<name>` is shipped too, which of the two holds the trained values is unknown:
    that is left to a re-export."""

    repair = cat.BY_NAME[cat.UNNEST_WEIGHTS]

    def why_not(self, s: Situation, f: DraftFacts) -> str | None:
        if not f.nested_weights:
            return "it ships no `<name>.weight` tensor of a parameter the runtime builds bare"
        if both := [n for n in f.nested_weights if n.removesuffix(".weight") in s.tensors]:
            return (f"it ships both {both[0]} and {both[0].removesuffix('.weight')}: renaming one onto the other is "
                    "ambiguous")
        return None

    def actions(self, s: Situation, f: DraftFacts, r: Reasons) -> list[a.Action]:
        return [a.RenameTensor(n, n.removesuffix(".weight"), s.tensors[n].file, self.own(r))
                for n in f.nested_weights if n in s.tensors]

    def after(self, facts: DraftFacts) -> DraftFacts:
        bare = {n: n.removesuffix(".weight") for n in facts.nested_weights}
        return update(facts, nested_weights=(),
                      tensor_shapes=tuple(sorted((bare.get(n, n), shape) for n, shape in facts.tensor_shapes)))


_ALL: tuple[Strategy, ...] = (Trim(), ShareTargetHead(), RebuildD2t(), OffsetD2t(), DropD2t(), IdentityD2t(),
                              TrimInput(), HoistDsparkSettings(), SetDraftVocab(), NameQwen3Dspark(), SetAuxCount(),
                              SetTargetHidden(), DropConfidenceHead(), SetMarkovRank(), UnnestWeights())
_BY_REPAIR = {x.name: x for x in _ALL}
# The one table, in model/repair_catalog.py's preference order; a repair declared there without a strategy here
# (or the other way round) fails at import.
TABLE: tuple[Strategy, ...] = tuple(_BY_REPAIR.pop(r.name) for r in cat.REPAIRS)
assert not _BY_REPAIR, f"strategies without a declared repair: {sorted(_BY_REPAIR)}"
BY_NAME: dict[str, Strategy] = {s.name: s for s in TABLE}
STRATEGIES: tuple[str, ...] = cat.NAMES
# Applied first, whenever they apply, in this order: every other repair is judged on the config they write. The
# optional ones are tried both ways, and kept only where they help the chosen runtimes.
CONFIG_FIRST: tuple[str, ...] = (cat.SET_TARGET_HIDDEN, cat.SET_AUX_COUNT, cat.HOIST_DSPARK_SETTINGS,
                                 cat.SET_MARKOV_RANK, cat.SET_DRAFT_VOCAB, cat.NAME_QWEN3_DSPARK)
OPTIONAL_FIRST: tuple[str, ...] = (cat.NAME_QWEN3_DSPARK,)
# What the config-only steps resolve is theirs to name: the other steps' actions name the rest.
CONFIG_CODES = frozenset(code for name in CONFIG_FIRST for code in BY_NAME[name].resolves)


def step_actions(s: Situation, step: str, resolved: Sequence[FindingCode]) -> list[a.Action]:
    """What one step of a repair writes, each action naming the code it repairs."""
    f = s.facts
    assert f is not None
    if step not in CONFIG_FIRST:
        resolved = [c for c in resolved if c not in CONFIG_CODES]
    strategy = BY_NAME[step]
    reason = resolved[0] if resolved else strategy.nominal
    drop = D2T_REFUSED if D2T_REFUSED in resolved else reason
    return strategy.actions(s, f, Reasons(tuple(resolved), reason, drop))
