"""vLLM's contract rows, one per (version range, family), each citing the released file it was read from; and the
draft classes they describe. How each release builds a draft's config before any row applies is its record in
runtimes/vllm_release.py.
"""

from __future__ import annotations

from dataclasses import replace

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes.contracts import Contract, Share, Unknown, When
from dspark_ckpt.runtimes.messages import VLLM_DFLASH_OLD, VLLM_PARAMS_DICT
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

_Q = "vllm/model_executor/models/qwen3_dspark.py + vllm/spec_decode/dspark/utils.py"
_G = "vllm/model_executor/models/gemma4_dspark.py"
_F = "vllm/model_executor/models/qwen3_dflash.py"
_F2 = "vllm/model_executor/models/qwen3_dflash2.py (load_weights from qwen3_dflash.py)"
_E = "vllm/model_executor/models/{}.py + vllm/spec_decode/eagle/utils.py"
# The newest row of each family is open-ended: it covers every listed release from its `first` on, so a release
# appended to VLLM_RELEASES that behaves as the newest row needs no edit here (a new row where it does not).
NEWEST = VLLM_RELEASES[-1]


def _on(first: str) -> str:
    """The releases a row from `first` through the newest listed release cites: `v0.30.0-v0.33.0`."""
    return f"v{first}" if first == NEWEST else f"v{first}-v{NEWEST}"


def _qwen3_dspark(family: Family, *, omni: bool) -> tuple[Contract, ...]:
    # DSparkMarkovHead (qwen3_dspark.py L48 @ 0.27.0 .. L48 @ 0.33.0) holds markov_w1 / markov_w2 only; probed on
    # 0.27.0, 0.30.0, 0.33.0: a gated head's gate_proj is refused as 'markov_head.gate_up_proj'.
    # 0.25-0.26: the same load_weights and d2t predicate (qwen3_dspark.py L121-127, L149-185 @ 0.25.0, 0.26.0), but
    # markov_w1 is a VocabParallelEmbedding (L54-56 @ 0.25.0): a wrong row count is its bare assert, as lm_head's
    v027 = Contract("vllm", "0.27.0", "0.27.0", family, "Qwen3DSparkForCausalLM", f"{_Q} @ v0.27.0",
                    d2t_param=When.D_NE_T, model_prefix_rejected=True, omni_config_check=omni,
                    markov_params=("markov_w1", "markov_w2"))
    v025 = replace(v027, first="0.25.0", last="0.26.0", source=f"{_Q} @ v0.25.0-v0.26.0", markov_w1_exact=False)
    v028 = replace(v027, first="0.28.0", last="0.28.0", source=f"{_Q} @ v0.28.0", topk_check=True)
    v029 = replace(v028, first="0.29.0", last="0.29.0", source=f"{_Q} @ v0.29.0", reduced_checks=When.D_NE_T,
                   omni_target_validated=True,
                   embed_check=True, lm_head_share=Share.IF_NOT_OWN_AND_FITS, embed_share=Share.IF_NOT_OWN_AND_FITS)
    v030 = replace(v029, first="0.30.0", last="0.33.0", source=f"{_Q} @ v0.30.0-v0.33.0 (PR #55133)",
                   d2t_param=When.D_LT_T, reduced_checks=When.D_LT_T)
    # 0.34: load_weights (qwen3_dspark.py L321-362) raises none of 0.33's vocab checks (0.33 L341-357): a missing
    # embed_tokens, lm_head or d2t is dropped by its WeightsMapper and stays as initialised unless
    # load_dspark_model (v1/worker/gpu/spec_decode/dspark/utils.py L133-145) shares the target's: embed_tokens
    # where V <= T (L133-134), lm_head where D == T (L140-145, eagle/utils.py share_target_lm_head L45-72), each
    # unless the draft has its own (eagle/utils.py _should_share L20-42: has_own_*, set by process_eagle_weight).
    v034 = replace(v030, first="0.34.0", last=NEWEST, source=f"{_Q} @ {_on('0.34.0')}", reduced_checks=None,
                   embed_check=False)
    if not omni:
        return v025, v027, v028, v029, v030, v034
    # 0.25-0.28 have no Qwen3OmniDSparkModel: method dspark rewrites it to the DeepSeek-V4 draft.
    unregistered = Contract("vllm", "0.25.0", "0.28.0", family, "DSparkDeepseekV4ForCausalLM",
                            "vllm/config/speculative.py @ v0.25.0-v0.28.0 (no Qwen3OmniDSparkModel in registry)",
                            supported=False, verbatim_errors=False)
    return unregistered, v029, v030, v034


def _eagle3(family: Family, module: str, cls: str, backbone: str, first: str) -> tuple[Contract, ...]:
    # the d2t parameter is built whatever D (llama_eagle3.py L303-306 @ 0.20.0 .. L304-307 @ 0.29.0), t2d dropped;
    # to 0.24 the backbone's load_weights looks names up in params_dict (a KeyError), from 0.25 AutoWeightsLoader
    since_auto = Contract("vllm", "0.25.0", "0.29.0", family, cls, f"{_E.format(module)} @ v0.25.0-v0.29.0",
                          d2t_param=When.ALWAYS, parallel_drafting_needs_mask_hidden=True, stray_heads_class=backbone)
    return (
        replace(since_auto, first=first, last="0.24.0", source=f"{_E.format(module)} @ v{first}-v0.24.0",
                messages=VLLM_PARAMS_DICT),
        since_auto,
        Contract("vllm", "0.30.0", NEWEST, family, cls, f"{_E.format(module)} @ {_on('0.30.0')}",
                 d2t_param=When.D_NE_T, parallel_drafting_needs_mask_hidden=True, stray_heads_class=backbone),
    )


# The backbones whose nested AutoWeightsLoader refuses a Markov / confidence head tensor (messages.E_STRAY_HEAD):
# DFlashQwen3Model (qwen3_dflash.py L346 @ 0.27, L379 @ 0.28, L359 @ 0.29, L360 @ 0.30, L395 @ 0.31, L413 @ 0.32,
# L387 @ 0.33), LlamaModel (llama_eagle3.py L130 @ 0.27-0.29, L162 @ 0.30-0.33) and Qwen3Eagle3Model
# (qwen3_eagle3.py L142 @ 0.27-0.33): none has a markov_head or confidence_head module, and none passes
# ignore_unexpected_prefixes. Observed with tools/probe_runtime.py on 0.28.0, 0.29.0, 0.30.0, 0.33.0.
_DFLASH_BACKBONE = "DFlashQwen3Model"


# DFlash2 (0.28+): DFlashQwen3ForCausalLM's load path (d2t parameter iff D != T, mask_hidden refused); its codebooks
# are bare nn.Parameters (qwen3_dflash2.py 0.28 L200-205, 0.31 L326-331) and its speculator takes candidates from
# lm_head without d2t (v1/worker/gpu/spec_decode/dflash2/speculator.py: no d2t reference in any release).
BARE_PARAMETERS = ("candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook")
_DFLASH2 = Contract("vllm", "0.28.0", "0.30.0", Family.DFLASH2, "DFlash2Qwen3ForCausalLM", f"{_F2} @ v0.28.0-v0.30.0",
                    d2t_param=When.D_NE_T, mask_hidden_rejected=True, bare_parameters=BARE_PARAMETERS,
                    candidates_mapped=False)

VLLM_ROWS: tuple[Contract, ...] = (
    *_qwen3_dspark(Family.QWEN3_DSPARK, omni=False),
    *_qwen3_dspark(Family.QWEN3_OMNI_DSPARK, omni=True),
    Contract("vllm", "0.26.0", "0.28.0", Family.GEMMA4_DSPARK, "Gemma4DSparkForCausalLM", f"{_G} @ v0.26.0-v0.28.0",
             lm_head_rows="V", unknown_weights=Unknown.IGNORE, lm_head_share=Share.ALWAYS, embed_share=Share.ALWAYS),
    Contract("vllm", "0.29.0", NEWEST, Family.GEMMA4_DSPARK, "Gemma4DSparkForCausalLM", f"{_G} @ {_on('0.29.0')}",
             lm_head_rows="V", unknown_weights=Unknown.IGNORE, lm_head_share=Share.ALWAYS_IF_FITS,
             embed_share=Share.ALWAYS_IF_FITS),
    # the d2t predicate and t2d/d2t handling are the same from DFlash's registration (qwen3_dflash.py L527-533,
    # L593-626 @ 0.20.0)
    # DFlashQwen3Model.load_weights looks names up in params_dict to 0.25 (a KeyError), AutoWeightsLoader from 0.26;
    # its mask_hidden refusal has other words before 0.25 (qwen3_dflash.py L598-600 @ 0.20.0, L759-763 @ 0.25.0)
    Contract("vllm", "0.20.0", "0.24.0", Family.DFLASH, "DFlashQwen3ForCausalLM", f"{_F} @ v0.20.0-v0.24.0",
             d2t_param=When.D_NE_T, mask_hidden_rejected=True, stray_heads_class=_DFLASH_BACKBONE,
             messages=VLLM_DFLASH_OLD),
    Contract("vllm", "0.25.0", "0.25.0", Family.DFLASH, "DFlashQwen3ForCausalLM", f"{_F} @ v0.25.0",
             d2t_param=When.D_NE_T, mask_hidden_rejected=True, stray_heads_class=_DFLASH_BACKBONE,
             messages=VLLM_PARAMS_DICT),
    Contract("vllm", "0.26.0", "0.30.0", Family.DFLASH, "DFlashQwen3ForCausalLM", f"{_F} @ v0.26.0-v0.30.0",
             d2t_param=When.D_NE_T, mask_hidden_rejected=True, stray_heads_class=_DFLASH_BACKBONE),
    Contract("vllm", "0.31.0", NEWEST, Family.DFLASH, "DFlashQwen3ForCausalLM", f"{_F} @ {_on('0.31.0')}",
             d2t_param=When.D_NE_T, mask_hidden_rejected=True, lm_head_share=Share.IF_NOT_OWN_NOR_FLAGGED,
             stray_heads_class=_DFLASH_BACKBONE),
    _DFLASH2,
    replace(_DFLASH2, first="0.31.0", last=NEWEST, source=f"{_F2} @ {_on('0.31.0')}",
            lm_head_share=Share.IF_NOT_OWN_NOR_FLAGGED),
    *_eagle3(Family.EAGLE3_LLAMA, "llama_eagle3", "Eagle3LlamaForCausalLM", "LlamaModel", "0.12.0"),
    *_eagle3(Family.EAGLE3_QWEN3, "qwen3_eagle3", "Eagle3Qwen3ForCausalLM", "Qwen3Eagle3Model", "0.24.0"),
)




def _families_by_class() -> dict[str, frozenset[Family]]:
    found: dict[str, set[Family]] = {}
    for row in VLLM_ROWS:
        if row.supported:  # a row that only says the class is not served (Omni before 0.29) describes no load
            found.setdefault(row.model_class, set()).add(row.family)
    return {cls: frozenset(families) for cls, families in found.items()}


# The families whose contract rows describe each draft class (Qwen3DSparkForCausalLM: the Qwen3 and the Omni rows),
# read off the rows above: which architecture name maps to which class is the generated registry's
# (spec_facts.draft_class), the family a name picks among them model/families.ARCHITECTURE_FAMILY's.
CLASS_FAMILIES: dict[str, frozenset[Family]] = _families_by_class()
# The dflash_config entries DFlash2's __init__ indexes without a default (`draft_config["..."]`, a KeyError for a
# missing one), read where lines.json cites build.dflash2_conv and build.dflash2_selector (tools/release_anchors.py).
# Hand-read: the generated records hold no list of them. A record's `reads` stops at `dflash_config`; its
# `structural` keys name three (conv_kernel_size, conv_group_size, selector_rank: they resize tensors) but not
# selector_top_k (it resizes none); `absent_keys` (release_worker.absent_keys, which vLLM's records do not carry yet)
# leaves out what __init__ requires by design. Held to the releases' own __init__, each entry z-lab ships left out
# (tests/producers/test_vllm_config_rewrite_agreement.py, 0.33.0 and 0.34.0: exactly these raise).
DFLASH2_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")


# The optional modules a release's load_weights sets to None when the checkpoint ships none of their weights (so
# their parameters are no longer the model's and nothing stays unwritten): (the class's file, the module's
# parameter prefix, the first and last release that does; landing.dropped_unshipped reads it). Hand-read, since the
# probe feeds every tensor of a sample and never a module unshipped; executed in tests/producers/test_vllm_whole_agreement.py (`confidence-unshipped`).
# qwen3_dspark.py `if self.model.confidence_head is None or not includes_confidence_head: self.model.confidence_head
# = None` L285-286 @ v0.28.0 ... L366-367 @ v0.33.0; gemma4_dspark.py L330-331 @ v0.31.0 (0.27 skips the head's
# weights whether shipped or not; 0.34 keeps it built and unwritten): docs/upstream-notes.md
DROPPED_UNSHIPPED = (
    ("vllm/model_executor/models/qwen3_dspark.py", "model.confidence_head.", "0.28.0", "0.33.0"),
    ("vllm/model_executor/models/gemma4_dspark.py", "model.confidence_head.", "0.31.0", "0.33.0"),
)
