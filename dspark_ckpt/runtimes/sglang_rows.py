"""SGLang's contract rows, one per (release range, family), each citing the released file it was read from.

Read from the PyPI wheels 0.4.2 ... 0.5.23 and every post release (docs/research/sglang-facts.md and
docs/upstream-notes.md section 3; 0.4.x: section 3.1). Paths are inside the wheel (`sglang/srt/...`); `:N` is a
line of the release named. "confirmed by executing" marks what tools/probe_sglang.py also ran on CPU with that
release's own source (cut out of the wheel with ast: EAGLE-3 load_weights with VocabParallelEmbedding.weight_loader
in every release, over LlamaForCausalLM.load_weights and the worker's get_hot_token_id in 0.4.4.post2-0.4.8.post1;
DSpark's parse_dspark_draft_config, build_markov_head and resolve_runtime_config in 0.5.16-0.5.23; the Markov
factors through default_weight_loader and VanillaMarkov.apply_step_logits in 0.5.16-0.5.21).
"""

from __future__ import annotations

from dataclasses import replace

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.contracts import Contract, Share, Unknown
from dspark_ckpt.runtimes.messages import SGLANG, SGLANG_KERNEL, SGLANG_REGISTRY, Messages
from dspark_ckpt.runtimes.release import How, InvalidVersion, Release, Resolution, covers, parse, resolve
from dspark_ckpt.runtimes.sglang_columns import Loader, SglangColumns, Width
from dspark_ckpt.runtimes.versions import SGLANG_POSTS_READ, SGLANG_RELEASES

SGLANG_VERSIONS = SGLANG_RELEASES  # the one list (runtimes/versions.py)
FIRST, LAST = SGLANG_VERSIONS[0], SGLANG_VERSIONS[-1]

_UTILS = "sglang/srt/model_loader/utils.py"  # get_model_architecture -> resolve_transformers_arch
_UNREG_LINES = ":52 (0.4.7-0.5.5), :54 (0.5.6-0.5.8), :55 (0.5.9), :151 (0.5.10-0.5.11), :153 (0.5.12-0.5.17), " \
               ":155 (0.5.18-0.5.19), :156 (0.5.20-0.5.23)"
# Before 0.4.7 get_model_architecture has no resolve_transformers_arch: an unregistered name reaches
# models/registry.py _raise_for_unsupported (:33 @ 0.4.2-0.4.6.post5), "Model architectures [...] are not supported
# for now. Supported architectures: dict_keys([...])".
REGISTRY_REFUSAL_LAST = "0.4.6.post5"


def _r(text: str) -> Release:
    return parse("sglang", text)


_REGISTRY = "sglang/srt/models/registry.py:33 (0.4.2-0.4.6.post5) raises 'Model architectures [...] are not supported'"


def _messages(last: str) -> Messages:
    """The words a release refuses an unregistered name with: its registry's before 0.4.7, else model_loader's."""
    return SGLANG_REGISTRY if _r(last).upper <= _r(REGISTRY_REFUSAL_LAST).upper else SGLANG


def _split(row: Contract) -> tuple[Contract, ...]:
    """A row across 0.4.6.post5 / 0.4.7 as two, each with the words its releases refuse an unregistered name with."""
    if _r(row.first) > _r(REGISTRY_REFUSAL_LAST).upper or _r(row.last).upper <= _r(REGISTRY_REFUSAL_LAST).upper:
        return (replace(row, messages=replace(row.messages, unregistered=_messages(row.last).unregistered,
                                              unregistered_verbatim=_messages(row.last).unregistered_verbatim)),)
    return (replace(row, last=REGISTRY_REFUSAL_LAST, messages=SGLANG_REGISTRY), replace(row, first="0.4.7"))


def _unregistered(family: Family, first: str, last: str, why: str) -> tuple[Contract, ...]:
    return _split(Contract("sglang", first, last, family, "-",
                           f"sglang {first}-{last}: {why}; {_REGISTRY}; {_UTILS}{_UNREG_LINES} raises 'Cannot find "
                           "model module ...'",
                           supported=False, reads_speculators=False, unknown_weights=Unknown.IGNORE,
                           messages=SGLANG, sglang=SglangColumns(Loader.UNREGISTERED)))


# --- EAGLE-3: models/llama_eagle3.py LlamaForCausalLMEagle3, the only EAGLE-3 class (Qwen3 drafts use it too).
# d2t -> hot_token_id = d2t + arange(len(d2t)), no check; t2d and unknown names dropped; lm_head is
# ParallelLMHead(draft_vocab_size) or, tied, embed_tokens; the worker then replaces embed_tokens by the target's
# unless target_hidden_size != hidden_size (speculative/eagle_worker.py:139-147 @ 0.5.1, eagle_worker_v2.py:356-363
# @ 0.5.23); row asserts in layers/vocab_parallel_embedding.py:451-454 @ 0.5.1, :437-441 @ 0.5.23.
_E = "sglang/srt/models/llama_eagle3.py"
_E_NOTE = "speculative/eagle_worker*.py set_embed/set_embed_and_head; layers/vocab_parallel_embedding.py weight_loader"
_EAGLE3_BASE = Contract(
    "sglang", "0.5.1", "0.5.1", Family.EAGLE3_LLAMA, "LlamaForCausalLMEagle3",
    f"sglang 0.5.1: {_E}:181 (1 layer), :188-196 (lm_head), :198 (LogitsProcessor(config): crop to V), :215-221 "
    f"(d2t, t2d; load_weights and the row assert confirmed by executing); {_E_NOTE}; draft_vocab_size null -> "
    "layers/vocab_parallel_embedding.py:233 TypeError (confirmed by executing)",
    unknown_weights=Unknown.IGNORE, lm_head_share=Share.NEVER, embed_share=Share.ALWAYS, messages=SGLANG,
    architectures=("LlamaForCausalLMEagle3",), reads_speculators=False,
    sglang=SglangColumns(Loader.EAGLE3, one_layer=True, midlayer_only=True),
)
# 0.4.4.post2-0.4.8.post1: the same __init__ (1 layer, lm_head, LogitsProcessor(config)), but load_weights hands
# every name to LlamaForCausalLM.load_weights (`model.` prefixed, lm_head as is) and no __init__ sets hot_token_id.
_E04 = (f"{_E}:160 (1 layer), :167-175 (lm_head), :177 (LogitsProcessor(config): crop to V), :180-190 (d2t -> "
        "hot_token_id, t2d dropped, every other name through LlamaForCausalLM.load_weights) @ 0.4.4.post2, :163-193 "
        "@ 0.4.8; models/llama.py:505 (stacked branch: params_dict[name], a `layers.0.*` q/k/v/gate/up name is a "
        "KeyError; other unknown names logged and dropped, :516-523) @ 0.4.4.post2, :578 @ 0.4.8; "
        "speculative/eagle_worker.py:122 @ 0.4.4.post2, :143 @ 0.4.8 (get_hot_token_id(): no d2t, AttributeError); "
        "the classes do not build on CPU (release_data not_built), but load_weights over LlamaForCausalLM.load_weights "
        "and get_hot_token_id are confirmed by executing (tools/probe_sglang.py, every listed release)")
_EAGLE3 = (
    *_unregistered(Family.EAGLE3_LLAMA, FIRST, "0.4.4.post1", "no models/llama_eagle3.py (LlamaForCausalLMEagle3 is "
                                                             "first registered in 0.4.4.post2, "
                                                             "models/llama_eagle3.py:196)"),
    *_split(replace(_EAGLE3_BASE, first="0.4.4.post2", last="0.4.8.post1",
                    source=f"sglang 0.4.4.post2-0.4.8.post1: {_E04}; {_E_NOTE}",
                    sglang=SglangColumns(Loader.EAGLE3, one_layer=True, midlayer_only=True, stacked_keyerror=True,
                                         d2t_required=True))),
    replace(_EAGLE3_BASE, first="0.4.9", last="0.4.10",
            source=f"sglang 0.4.9-0.4.10: {_E} byte-identical to 0.5.1's (:181 1 layer, :188-196 lm_head, :198 "
                   f"crop to V, :200 hot_token_id = None, :215-221 d2t, t2d); speculative/eagle_worker.py:143 @ "
                   f"0.4.9, :145 @ 0.4.10 (hot_token_id read only when set); load_weights confirmed by executing; "
                   f"{_E_NOTE}"),
    _EAGLE3_BASE,
    replace(_EAGLE3_BASE, first="0.5.2", last="0.5.4.post1",
            source=f"sglang 0.5.2-0.5.4.post1: {_E}:194 (1 layer), :202-213 (tied / draft_vocab_size null -> "
                   f"load_lm_head_from_target), LogitsProcessor(config) (crop to V), :232-238 (d2t, t2d) @ 0.5.2 "
                   f"(load_weights confirmed by executing); {_E_NOTE}",
            sglang=SglangColumns(Loader.EAGLE3, one_layer=True, midlayer_only=True, null_shares_target=True)),
    replace(_EAGLE3_BASE, first="0.5.4.post2", last="0.5.11",
            source=f"sglang 0.5.4.post2-0.5.11: {_E}:199 (1 layer), :207-218 (lm_head), :220-224 "
                   f"(config_.vocab_size = config_.draft_vocab_size: read tied or not, crop to D), :242-248 "
                   f"(d2t, t2d) @ 0.5.5 (0.5.4.post2 is byte-identical; load_weights confirmed by executing); "
                   f"{_E_NOTE}",
            sglang=SglangColumns(Loader.EAGLE3, one_layer=True, midlayer_only=True, null_shares_target=True,
                                 draft_vocab_always_read=True, crop="D")),
    replace(_EAGLE3_BASE, first="0.5.12", last="0.5.14",
            source=f"sglang 0.5.12-0.5.14: {_E}:271-283 (lm_head), :285-288 (crop to D), :307 (midlayer -> "
                   f"layers.0, any layer count), :318-324 (d2t, t2d) @ 0.5.12 (load_weights confirmed by "
                   f"executing); {_E_NOTE}",
            sglang=SglangColumns(Loader.EAGLE3, null_shares_target=True, draft_vocab_always_read=True, crop="D")),
    replace(_EAGLE3_BASE, first="0.5.15", last=LAST,
            source=f"sglang 0.5.15-0.5.23: {_E}:303-318 (lm_head, crop to D), :339 (midlayer -> layers.0), :350-356 "
                   "(d2t, t2d) @ 0.5.23 (load_weights confirmed by executing); tied with draft_vocab_size null: "
                   "layers/logits_processor.py:1055 @ 0.5.15, :1346 @ 0.5.23 compares the width with None (read: "
                   f"0.5.14's _copy_logits_to_buffer slices instead); {_E_NOTE}",
            sglang=SglangColumns(Loader.EAGLE3, null_shares_target=True, draft_vocab_always_read=True, crop="D",
                                 null_crop_fails=True)),
)

# --- Qwen3 DSpark: models/dspark.py Qwen3DSparkModel (DSparkDraftMixin + DFlashDraftModel), registered from 0.5.16.
# lm_head.* / embed_tokens.* skipped and the target's attached (speculative/dspark_components/dspark_worker_v2.py);
# d2t, t2d, unknown names ignored; draft_vocab_size never read; markov_w1/markov_w2 have V rows
# (default_weight_loader); config checks in dspark_components/dspark_config.py and
# model_runner_components/spec_aux_hidden_state.py; base logits cropped to the target head's org_vocab_size.
_Q = "sglang/srt/models/dspark.py"
_QC = "speculative/dspark_components/dspark_config.py"
_W = "speculative/dspark_components/dspark_worker_v2.py"
# models/dflash.py DFlashDraftModel.load_weights (DFlash, DFlash2 and the DSpark backbone), 0.5.20+.
_DOMINO = ("Domino projector: models/dflash.py:804-810 (prefix_gru./embed_proj. refused unless projector_type == "
           "'domino'), :856-863 (shape), :868-880 (required weights) @ 0.5.20, :923-929 @ 0.5.23; "
           "speculative/dflash_utils.py:736-800 @ 0.5.20 (projector_type: dflash_config, else top level; Domino "
           "fields), confirmed by executing")
_Q_NOTE = (f"{_QC} parse_dspark_draft_config + resolve_runtime_config, build_markov_head (confirmed by executing); "
           "model_runner_components/spec_aux_hidden_state.py (markov_rank > 0)")
_DSPARK_BASE = Contract(
    "sglang", "0.5.16", "0.5.16", Family.QWEN3_DSPARK, "Qwen3DSparkModel",
    f"sglang 0.5.16: {_Q}:509 (EntryClass), :77-78 (markov_w1/w2 [V, r]), :268 (build_markov_head), :354-358 "
    f"(lm_head./embed_tokens. skipped), :419 (unknown markov weight), :101 (logits + bias at the first step; "
    f"with default_weight_loader, confirmed by executing); {_Q_NOTE}; {_QC}:111-118 (mask_token_id)",
    lm_head_rows="V", markov_w2_rows="V", unknown_weights=Unknown.IGNORE, lm_head_share=Share.ALWAYS,
    embed_share=Share.ALWAYS, messages=SGLANG, architectures=("Qwen3DSparkModel",), reads_speculators=False,
    sglang=SglangColumns(Loader.DSPARK),
)
_DSPARK = (
    *_unregistered(Family.QWEN3_DSPARK, FIRST, "0.5.15", "no models/dspark.py (Qwen3DSparkModel is first registered "
                                                          "in 0.5.16; --speculative-algorithm DSPARK is refused too)"),
    _DSPARK_BASE,
    replace(_DSPARK_BASE, first="0.5.17", last="0.5.17", architectures=("Qwen3DSparkModel", "DSparkDraftModel"),
            source=f"sglang 0.5.17: {_Q}:612 (EntryClass adds DSparkDraftModel), :79-80 (markov_w1/w2 "
                   "[V, r]; loaded and added at the first step, confirmed by executing), :427 (unknown markov "
                   f"weight) @ 0.5.17; {_Q_NOTE}; {_QC}:111-118 (mask_token_id < the target's vocab_size, "
                   f"{_W}:130 @ 0.5.17)"),
    replace(_DSPARK_BASE, first="0.5.18", last="0.5.18", architectures=("Qwen3DSparkModel", "DSparkDraftModel"),
            source=f"sglang 0.5.18: {_Q}:730 (EntryClass), :80-81 (markov_w1/w2 [V, r]; confirmed by executing) "
                   f"@ 0.5.18; {_Q_NOTE}; {_QC}:111-118 (mask_token_id) against {_W}:138-141 (`padded_vocab_size "
                   "or vocab_size` of the target's hf_text_config, confirmed by executing)",
            sglang=SglangColumns(Loader.DSPARK, mask_bound_padded=True)),
    replace(_DSPARK_BASE, first="0.5.19", last="0.5.19", architectures=("Qwen3DSparkModel", "DSparkDraftModel"),
            source=f"sglang 0.5.19: {_Q}:883 (EntryClass), :98-99 (markov_w1/w2 [V, r]), :482, :559-562 "
                   f"(lm_head/embed_tokens skipped after stripping model.), :582 (unknown markov weight), :122 "
                   f"(logits + bias; confirmed by executing) @ 0.5.19; models/dflash.py:569-578 (Nemotron-3.5 "
                   f"keeps embed_tokens); "
                   f"{_Q_NOTE}; {_QC}:121-127 (mask_token_id) against {_W}:156-159 (padded bound)",
            sglang=SglangColumns(Loader.DSPARK, nemotron_embed=True, mask_bound_padded=True)),
    replace(_DSPARK_BASE, first="0.5.20", last="0.5.21", architectures=("Qwen3DSparkModel", "DSparkDraftModel"),
            source=f"sglang 0.5.20-0.5.21: {_Q}:884 (EntryClass), :550-574 (backbone names through "
                   f"DFlashDraftModel.load_weights first) @ 0.5.20; {_DOMINO}; {_Q_NOTE}; {_QC}:121-127 "
                   f"(mask_token_id) against {_W}:191-194 @ 0.5.20 (padded bound)",
            sglang=SglangColumns(Loader.DSPARK, nemotron_embed=True, mask_bound_padded=True, domino=True)),
    replace(_DSPARK_BASE, first="0.5.22", last="0.5.22", architectures=("Qwen3DSparkModel", "DSparkDraftModel"),
            messages=SGLANG_KERNEL,
            source=f"sglang 0.5.22: {_Q}:801 (EntryClass), :108-109 (markov_w1/w2 [V, r]), :494 (unknown markov "
                   "weight) @ 0.5.22; the first step runs sglang/kernels/ops/speculative/dspark/markov_sample.py:263 "
                   "(assert bias.shape[1] <= base_logits.shape[1]; columns >= V masked; read from the wheel, outside "
                   f"srt/); {_Q_NOTE}; {_QC}:121-127 (mask_token_id) against {_W}:217-220 (padded bound); "
                   f"{_DOMINO}",
            sglang=SglangColumns(Loader.DSPARK, nemotron_embed=True, width=Width.KERNEL, mask_bound_padded=True,
                                 domino=True)),
    replace(_DSPARK_BASE, first="0.5.23", last="0.5.23", architectures=("Qwen3DSparkModel", "DSparkDraftModel"),
            messages=SGLANG_KERNEL,
            source=f"sglang 0.5.23: {_Q}:995 (EntryClass), :198-199 (markov_w1/w2 [V, r]), :656 (unknown markov "
                   f"weight) @ 0.5.23; {_QC}:194-211 (dflash_config merged under dspark_config), :121-127 "
                   f"(mask_token_id) against {_W}:251-254 (padded bound); kernels/ops/speculative/dspark/"
                   f"markov_sample.py:269 (assert, read from the wheel); {_DOMINO}; {_Q_NOTE}",
            sglang=SglangColumns(Loader.DSPARK, nemotron_embed=True, width=Width.KERNEL, merged_parser=True,
                                 mask_bound_padded=True, domino=True)),
)

# --- DFlash: models/dflash.py DFlashDraftModel from 0.5.11; it has no lm_head, embed_tokens or d2t parameter, so
# those names are ignored (`# Ignore unexpected weights`) and the target's head and embedding are used.
_F = "sglang/srt/models/dflash.py"
_DFLASH_BASE = Contract(
    "sglang", "0.5.11", "0.5.18", Family.DFLASH, "DFlashDraftModel",
    f"sglang 0.5.11-0.5.18: {_F}:399 (EntryClass), :382 (unexpected weights ignored) @ 0.5.11; "
    "speculative/dflash_worker.py:454 (mask_token_id < T) @ 0.5.11",
    unknown_weights=Unknown.IGNORE, lm_head_share=Share.ALWAYS, embed_share=Share.ALWAYS, messages=SGLANG,
    architectures=("DFlashDraftModel",), reads_speculators=False, sglang=SglangColumns(Loader.DFLASH),
)
_DFLASH = (
    *_unregistered(Family.DFLASH, FIRST, "0.5.10", "no models/dflash.py (DFlashDraftModel is first registered in "
                                                    "0.5.11)"),
    _DFLASH_BASE,
    replace(_DFLASH_BASE, first="0.5.19", last="0.5.19",
            source=f"sglang 0.5.19: {_F}:1146 (EntryClass), :770 (unexpected weights ignored, Domino names "
                   "included), :569-578 (Nemotron-3.5 keeps embed_tokens) @ 0.5.19; "
                   "speculative/dflash_worker_v2.py (mask_token_id < T)",
            sglang=SglangColumns(Loader.DFLASH, nemotron_embed=True)),
    replace(_DFLASH_BASE, first="0.5.20", last=LAST,
            source=f"sglang 0.5.20-0.5.23: {_F}:1225 (EntryClass), :826 (unexpected weights ignored) @ 0.5.20; "
                   f"{_DOMINO}; speculative/domino_utils.py:148-152 @ 0.5.20, :157-161 @ 0.5.22 (V == T, via "
                   "dflash_worker_v2.py:444 @ 0.5.20 validate_domino_runtime); speculative/dflash_worker_v2.py:1404 "
                   "(mask_token_id < T) @ 0.5.23",
            sglang=SglangColumns(Loader.DFLASH, nemotron_embed=True, domino=True)),
)

# --- DFlash2: models/dflash.py DFlash2DraftModel from 0.5.19: DFlash plus a CandidateSelector whose codebooks
# have V rows, indexed by candidate ids the target head proposes (< T).
_DFLASH2 = (
    *_unregistered(Family.DFLASH2, FIRST, "0.5.18", "DFlash2DraftModel is first registered in 0.5.19"),
    replace(_DFLASH_BASE, first="0.5.19", last="0.5.19", family=Family.DFLASH2, model_class="DFlash2DraftModel",
            architectures=("DFlash2DraftModel",),
            source=f"sglang 0.5.19: {_F}:1066-1084 (DFlash2DraftModel: selector_rank required, "
                   "CandidateSelector(vocab_size=V)), :968-973 (codebooks [V, r]), :1102-1133 (candidates from the "
                   "target lm_head) @ 0.5.19; speculative/dflash_utils.py:632-646 (selector_rank/top_k)",
            sglang=SglangColumns(Loader.DFLASH2, nemotron_embed=True)),
    replace(_DFLASH_BASE, first="0.5.20", last=LAST, family=Family.DFLASH2, model_class="DFlash2DraftModel",
            architectures=("DFlash2DraftModel",),
            source=f"sglang 0.5.20-0.5.23: {_F}:1145 (DFlash2DraftModel, DFlashDraftModel.load_weights inherited) "
                   f"@ 0.5.20; {_DOMINO}; speculative/domino_utils.py:148-152 (V == T) @ 0.5.20; "
                   "speculative/dflash_utils.py (selector_rank/top_k)",
            sglang=SglangColumns(Loader.DFLASH2, nemotron_embed=True, domino=True)),
)

_NONE = "registered in no release 0.4.2-0.5.23 (grepped every wheel's srt/)"
SGLANG_ROWS: tuple[Contract, ...] = (
    *_EAGLE3,
    *_unregistered(Family.EAGLE3_QWEN3, FIRST, LAST, f"Eagle3Qwen3ForCausalLM (vLLM's name) is {_NONE}; SGLang "
                                                     "loads Qwen3 EAGLE-3 drafts as LlamaForCausalLMEagle3"),
    *_DSPARK,
    *_DFLASH,
    *_DFLASH2,
    *_unregistered(Family.QWEN3_OMNI_DSPARK, FIRST, LAST, f"Qwen3OmniDSparkModel is {_NONE}"),
    *_unregistered(Family.GEMMA4_DSPARK, FIRST, LAST, f"Gemma4DSparkModel is {_NONE}"),
)


def refusal_messages(version: str) -> Messages:
    """The words `sglang==version` refuses an architecture no EntryClass lists with (runtimes/sglang_build.py)."""
    try:
        old = _r(version).final <= _r(REGISTRY_REFUSAL_LAST).upper
    except InvalidVersion:
        old = False
    return SGLANG_REGISTRY if old else SGLANG


def known_release(version: str) -> bool:
    """A release whose code was read: every base release above, 0.5.4.post2, and the post releases read."""
    try:
        return _r(version).final.name in SGLANG_VERSIONS + SGLANG_POSTS_READ
    except InvalidVersion:
        return False


def _answering(version: str) -> Resolution | None:
    """Which listed release answers `sglang==version`: release.resolve's one policy (its own, its line's, the nearest
    listed before it, the newest, the oldest)."""
    return resolve("sglang", version, SGLANG_VERSIONS)


def nearest_row(version: str, family: Family) -> Contract | None:
    """The row for a release outside every range, as an assumption: the family's row covering the listed release
    that release.resolve says answers it (newer: the newest; older: the oldest; on an unlisted line: the nearest
    listed before it), else the family's newest or oldest row."""
    rows = [c for c in SGLANG_ROWS if c.family == family]
    found = _answering(version)
    if not rows or found is None:
        return None
    row = next((c for c in rows if covers("sglang", c.first, c.last, found.name)), None) or \
        (max(rows, key=lambda c: _r(c.last).upper) if found.how == How.NEWER else min(rows, key=lambda c: _r(c.first)))
    return replace(row, verbatim_errors=False, source=f"{row.source}; assumed for {version}")


def assumed_row(contract: Contract, version: str) -> str | None:
    """The release a verdict for an SGLang release nobody read was taken from (None: a release that was read): the
    one release.resolve answers with, where the row covers it, else the row's bound on that side."""
    if known_release(version):
        return None
    found = _answering(version)
    if found is None:
        return contract.first
    if covers("sglang", contract.first, contract.last, found.name):
        return found.name
    return contract.last if found.how == How.NEWER else contract.first


_WHY = {How.NEWER: "newer than every release dspark-ckpt has read; its loader may differ",
        How.OLDER: "older than every release dspark-ckpt has read"}


def _why(version: str) -> str:
    found = _answering(version)
    return _WHY.get(found.how if found is not None else "",
                    "not a release dspark-ckpt has read; the row covering it was used")


def assumption_text(pairs: list[tuple[str, str]]) -> str | None:
    """DSP220's words for (SGLang release, row release) pairs: which row answered for a release nobody read, and why
    (as release.resolve answers it: newer, older, or inside the list)."""
    if not pairs:
        return None
    parts = []
    for row, why in dict.fromkeys((r, _why(v)) for v, r in sorted(pairs, key=lambda p: (_r(p[1]), _r(p[0])))):
        named = ", ".join(f"sglang=={v}" for v, r in pairs if r == row and _why(v) == why)
        parts.append(f"{named}: verdict assumed from SGLang {row} ({why})")
    return "; ".join(parts)
