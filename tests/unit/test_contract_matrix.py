"""Every cell of vllm-contracts.md 2.3 (Qwen3 DSpark, T = 100) and the 1b summary rows, through the pure evaluator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import draft_tensors, make_checkpoint
from listed import vllm_before, vllm_minors

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import messages as c
from dspark_ckpt.runtimes.compatibility import evaluate_contract
from dspark_ckpt.runtimes.records import DraftFacts
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.table import CONTRACTS, VLLM_VERSIONS, contract_for
from dspark_ckpt.sources.local import local_source

T = 100
# Qwen3DSparkModel is first registered in 0.25.0 (registry.py @ v0.25.0 L597; absent from 0.24.0's registry).
# 0.25/0.26 load it as 0.27.0 does: the same d2t predicate and load_weights (qwen3_dspark.py L121-127, L149-185 @
# v0.25.0, byte-identical in v0.26.0; probe_runtime 0.25.0 and 0.26.0 384/384).
QWEN3_DSPARK = vllm_minors("0.25.0")
OLD, V29, NEW = vllm_minors("0.25.0", "0.28.0"), vllm_minors("0.29.0", "0.29.0"), vllm_minors("0.30.0", "0.33.0")
# 0.34: load_weights raises no vocab check (qwen3_dspark.py 0.33.0 L341-357 gone); what is neither shipped nor shared
# (embed_tokens where V <= T, lm_head where D == T: dspark/utils.py L133-145) stays as initialised
V34 = vllm_minors("0.34.0")
NOPARAM_Q = c.E_NOPARAM.format(cls="Qwen3DSparkForCausalLM")


def facts(family: Family = Family.QWEN3_DSPARK, *, d: int, v: int = T, lm: bool, d2t: bool, embed: bool = True,
          **extra: object) -> DraftFacts:
    return DraftFacts(family=family, draft_vocab_size=d, vocab_size=v, target_vocab_size=T, has_lm_head=lm,
                      has_embed=embed, has_d2t=d2t, has_t2d=False, lm_head_rows=d if lm else None,
                      d2t_length=d if d2t else None, **extra)  # type: ignore[arg-type]


def outcome(version: str, f: DraftFacts) -> tuple[str | None, set[str]]:
    contract = contract_for("vllm", version, f.family)
    assert contract is not None, f"no contract for {f.family} on {version}"
    verdict = evaluate_contract(contract, version, f)
    return (verdict.error.text if verdict.error else None), {i.code for i in verdict.silent}


# (facts, {versions: (error text or None, silent codes)}) — one row per line of the 2.3 table.
MATRIX = [
    ("D<T, lm_head + d2t", dict(d=40, lm=True, d2t=True), {OLD: (None, set()), V29: (None, set()), NEW: (None, set()), V34: (None, set())}),
    ("D<T, lm_head, no d2t", dict(d=40, lm=True, d2t=False),
     {OLD: (None, {"DSP302"}), V29: (c.E_D2T, set()), NEW: (c.E_D2T, set()), V34: (None, {"DSP302"})}),
    ("D<T, no lm_head, d2t", dict(d=40, lm=False, d2t=True),
     {OLD: (None, {"DSP301"}), V29: (c.E_LM_HEAD, set()), NEW: (c.E_LM_HEAD, set()), V34: (None, {"DSP301"})}),
    ("D<T, no lm_head, no d2t", dict(d=40, lm=False, d2t=False),
     {OLD: (None, {"DSP301", "DSP302"}), V29: (c.E_LM_HEAD, set()), NEW: (c.E_LM_HEAD, set()), V34: (None, {"DSP301", "DSP302"})}),
    ("D=T, lm_head, no d2t", dict(d=T, lm=True, d2t=False),
     {OLD: (None, set()), V29: (None, set()), NEW: (None, set()), V34: (None, set())}),
    ("D=T, no lm_head, no d2t", dict(d=T, lm=False, d2t=False),
     {OLD: (None, set()), V29: (None, set()), NEW: (None, set()), V34: (None, set())}),
    ("D=T, d2t present", dict(d=T, lm=True, d2t=True),
     {OLD: (NOPARAM_Q, set()), V29: (NOPARAM_Q, set()), NEW: (NOPARAM_Q, set()), V34: (NOPARAM_Q, set())}),
    ("D>T, lm_head + d2t", dict(d=120, v=120, lm=True, d2t=True),
     {OLD: (None, {"DSP305"}), V29: (None, {"DSP305"}), NEW: (NOPARAM_Q, set()), V34: (NOPARAM_Q, set())}),
    ("D>T, lm_head, no d2t", dict(d=120, v=120, lm=True, d2t=False),
     {OLD: (None, {"DSP305"}), V29: (c.E_D2T, set()), NEW: (None, {"DSP305"}), V34: (None, {"DSP305"})}),
    ("D>T, no lm_head, d2t", dict(d=120, v=120, lm=False, d2t=True),
     {OLD: (None, {"DSP306"}), V29: (c.E_LM_HEAD, set()), NEW: (NOPARAM_Q, set()), V34: (NOPARAM_Q, set())}),
    ("D>T, no lm_head, no d2t", dict(d=120, v=120, lm=False, d2t=False),
     {OLD: (None, {"DSP306"}), V29: (c.E_LM_HEAD, set()), NEW: (None, {"DSP306"}), V34: (None, {"DSP306"})}),
    ("V>T, no embed", dict(d=T, v=120, lm=True, d2t=False, embed=False),
     {OLD: (None, {"DSP304"}), V29: (c.E_EMBED, set()), NEW: (c.E_EMBED, set()), V34: (None, {"DSP304"})}),
    ("V>T, embed present", dict(d=T, v=120, lm=True, d2t=False, embed=True),
     {OLD: (None, set()), V29: (None, set()), NEW: (None, set()), V34: (None, set())}),
    ("V<=T, no embed", dict(d=T, v=T, lm=True, d2t=False, embed=False),
     {OLD: (None, set()), V29: (None, set()), NEW: (None, set()), V34: (None, set())}),
]


@pytest.mark.parametrize(("case", "kwargs", "expected"), MATRIX, ids=[m[0] for m in MATRIX])
@pytest.mark.parametrize("version", QWEN3_DSPARK)
def test_qwen3_dspark_outcome_matrix(case: str, kwargs: dict, expected: dict, version: str) -> None:
    want = next(v for versions, v in expected.items() if version in versions)
    error, silent = outcome(version, facts(**kwargs))
    assert error == want[0]
    assert silent == want[1]


@pytest.mark.parametrize("version", vllm_before("0.25.0"))
def test_qwen3_dspark_is_not_registered_before_025(version: str) -> None:
    # no Qwen3DSparkModel in registry.py before 0.25.0 (0.24.0 L606-615 list DFlash and EAGLE-3 drafts only), and no
    # method "dspark" in SpeculativeMethod (speculative.py @ v0.24.0 L60-69): whatever the vocabulary, no load
    contract = contract_for("vllm", version, Family.QWEN3_DSPARK)
    assert contract is not None and not contract.supported
    verdict = evaluate_contract(contract, version, facts(d=40, lm=True, d2t=True))
    assert verdict.error is not None and verdict.error.code == "DSP309"
    assert verdict.error.text.startswith(f"Qwen3DSparkModel is not registered in vLLM {version}: ")


def test_embed_check_runs_first() -> None:
    f = facts(d=120, v=120, lm=False, d2t=False, embed=False)
    assert outcome("0.29.0", f)[0] == c.E_EMBED
    assert outcome("0.33.0", f)[0] == c.E_EMBED


@pytest.mark.parametrize("version", VLLM_VERSIONS)
def test_omni_padded_rejected_wherever_omni_is_known(version: str) -> None:
    error, _ = outcome(version, facts(Family.QWEN3_OMNI_DSPARK, d=120, v=120, lm=True, d2t=False))
    if version in vllm_before("0.25.0"):  # no method "dspark" (speculative.py @ v0.24.0 L60-69), no Qwen3-Omni class
        assert error == (f"Qwen3OmniDSparkModel is not registered in vLLM {version}: its _SPECULATIVE_DECODING_MODELS "
                         "first maps it in 0.29.0 (vllm/model_executor/models/registry.py @ v0.29.0 L626), so this "
                         "version cannot load the draft.")
    elif version in OLD:  # method dspark rewrites any non-Qwen3DSparkModel draft to DeepSeek-V4's DSparkDraftModel
        # (speculative.py @ v0.25.0 L899-908, v0.26.0 L934-944: keep list Qwen3DSparkModel[, Gemma4DSparkModel])
        assert error == c.E_OMNI_UNREGISTERED
    else:
        assert error == c.E_OMNI_VOCAB.format(t=T, d=120)


def test_omni_mask_token_outside_input_vocab() -> None:
    error, _ = outcome("0.30.0", facts(Family.QWEN3_OMNI_DSPARK, d=T, lm=True, d2t=False, mask_token_id=T))
    assert error == c.E_OMNI_MASK.format(last=T - 1)


# DFlashDraftModel is first registered in 0.20.0 (registry.py @ v0.20.0 L576; absent from 0.19.1's registry), with
# 0.27's d2t predicate and t2d/d2t handling (qwen3_dflash.py L527-533, L593-626 @ v0.20.0; probe_runtime 0.20.0,
# 0.24.0, 0.25.0 384/384). Its mask_hidden assert words differ before 0.25 (L598-600 @ v0.20.0, L588-590 @ v0.24.0;
# the 0.25 wording from L759-763 @ v0.25.0).
E_MASK_HIDDEN_020 = "DFlash should use mask_token_id to embed the padding hidden state"


@pytest.mark.parametrize("version", vllm_minors("0.20.0"))
def test_dflash_contract(version: str) -> None:
    noparam = c.E_NOPARAM.format(cls="DFlashQwen3ForCausalLM")
    assert outcome(version, facts(Family.DFLASH, d=T, lm=False, d2t=True)) == (noparam, set())
    assert outcome(version, facts(Family.DFLASH, d=40, lm=True, d2t=False)) == (None, {"DSP302"})
    assert outcome(version, facts(Family.DFLASH, d=40, lm=False, d2t=True)) == (None, {"DSP301"})
    assert outcome(version, facts(Family.DFLASH, d=T, v=120, lm=True, d2t=False, embed=False)) == (None, {"DSP304"})
    mask_hidden = E_MASK_HIDDEN_020 if version in vllm_before("0.25.0") else c.E_MASK_HIDDEN
    assert outcome(version, facts(Family.DFLASH, d=T, lm=True, d2t=False, has_mask_hidden=True))[0] == mask_hidden


@pytest.mark.parametrize("version", vllm_before("0.20.0"))
def test_dflash_is_not_registered_before_020(version: str) -> None:
    verdict = evaluate_contract(contract_for("vllm", version, Family.DFLASH), version,  # type: ignore[arg-type]
                                facts(Family.DFLASH, d=40, lm=True, d2t=True))
    assert verdict.error is not None and verdict.error.code == "DSP309"
    assert verdict.error.text.startswith(f"DFlashDraftModel is not registered in vLLM {version}: ")


def test_dflash_has_own_lm_head_flag_blocks_sharing_from_031() -> None:
    f = facts(Family.DFLASH, d=T, lm=False, d2t=False, has_own_lm_head_flag=True)
    assert outcome("0.30.0", f) == (None, set())
    assert outcome("0.31.0", f) == (None, {"DSP315"})


# EAGLE-3 Llama is registered before every listed release (registry.py @ v0.20.0 L577), EAGLE-3 Qwen3 from 0.24.0
# (registry.py @ v0.24.0 L614; no qwen3_eagle3.py before). Through 0.29 the d2t parameter is built whatever D
# (llama_eagle3.py L303-306 @ v0.20.0, L336-339 @ v0.22.0, L323-326 @ v0.24.0; qwen3_eagle3.py L325-328 @ v0.24.0)
# and parallel drafting needs mask_hidden (llama_eagle3.py L404-409 @ v0.20.0; qwen3_eagle3.py L432-437 @ v0.24.0).
EAGLE3 = [(Family.EAGLE3_LLAMA, v) for v in VLLM_VERSIONS] + [(Family.EAGLE3_QWEN3, v) for v in vllm_minors("0.24.0")]


@pytest.mark.parametrize(("family", "version"), EAGLE3)
def test_eagle3_contract(family: Family, version: str) -> None:
    cls = "Eagle3LlamaForCausalLM" if family is Family.EAGLE3_LLAMA else "Eagle3Qwen3ForCausalLM"
    always_param = version not in vllm_minors("0.30.0")
    assert outcome(version, facts(family, d=T, lm=True, d2t=True))[0] == (
        None if always_param else c.E_NOPARAM.format(cls=cls))
    assert outcome(version, facts(family, d=40, lm=True, d2t=False)) == (None, {"DSP302"})
    assert outcome(version, facts(family, d=40, lm=False, d2t=True)) == (None, {"DSP301"})
    assert outcome(version, facts(family, d=40, lm=True, d2t=True, parallel_drafting=True))[0] == c.E_PARALLEL


# Gemma4DSparkModel is first registered in 0.26.0 (registry.py @ v0.26.0 L612); 0.26.0's gemma4_dspark.py has
# 0.27.0's vocabulary code (d2t None L289, lm_head ParallelLMHead(vocab_size) L280-284, load_weights L291-312 loading
# only known names; probe_runtime 0.26.0 384/384).
@pytest.mark.parametrize("version", vllm_minors("0.26.0"))
def test_gemma4_contract(version: str) -> None:
    # d2t is never a parameter and is silently ignored; own lm_head/embed are replaced by the target's.
    own = facts(Family.GEMMA4_DSPARK, d=T, lm=True, d2t=True)
    error, silent = outcome(version, own)
    assert error is None and "DSP307" in silent
    # Its lm_head is sized by V: a pruned Gemma4 draft with a V-row head loads but never applies d2t...
    pruned = facts(Family.GEMMA4_DSPARK, d=40, lm=True, d2t=True)
    pruned = DraftFacts(**{**{s: getattr(pruned, s) for s in DraftFacts.__slots__}, "lm_head_rows": T})
    assert "DSP311" in outcome(version, pruned)[1]
    # ...and a D-row head trips VocabParallelEmbedding's bare row-count assertion: the record's, on a real
    # checkpoint (test_vocab_heads_are_judged_by_the_record); the contract no longer judges a head's shape
    assert outcome(version, facts(Family.GEMMA4_DSPARK, d=40, lm=True, d2t=True))[0] is None
    # Without an lm_head: 0.26-0.28 always take the target's; 0.29+ only when D == T, else it stays uninitialised.
    no_head = facts(Family.GEMMA4_DSPARK, d=40, lm=False, d2t=False)
    assert ("DSP301" in outcome(version, no_head)[1]) == (version not in OLD)


def test_sglang_contracts() -> None:
    """The released SGLang rows (tests/sglang/ has the matrix per release range): EAGLE-3 consumes any d2t with no
    parameter; the released Qwen3 DSpark (0.5.16+) ignores d2t/t2d and is not registered before 0.5.16."""
    eagle = contract_for("sglang", "0.5.23", Family.EAGLE3_LLAMA)
    dspark = contract_for("sglang", "0.5.23", Family.QWEN3_DSPARK)
    assert eagle is not None and dspark is not None
    assert evaluate_contract(eagle, "0.5.23", facts(Family.EAGLE3_LLAMA, d=T, lm=True, d2t=True)).loads
    uninit = evaluate_contract(eagle, "0.5.23", facts(Family.EAGLE3_LLAMA, d=40, lm=False, d2t=True))
    assert uninit.loads and "DSP301" in {i.code for i in uninit.silent}
    shipped = evaluate_contract(dspark, "0.5.23", facts(d=T, lm=True, d2t=True))
    assert shipped.error is not None and shipped.error.code == "DSP344"  # no markov_head_type, not the d2t
    before = contract_for("sglang", "0.5.15", Family.QWEN3_DSPARK)
    assert before is not None and not before.supported


def test_every_contract_row_cites_an_upstream_source() -> None:
    for row in CONTRACTS:
        assert row.source and ("vllm/" in row.source or "sglang" in row.source)


def test_every_family_has_a_row_for_every_vllm_version() -> None:
    for family in Family:
        if family is Family.DFLASH2:  # SGLang's DFlash2DraftModel; vLLM's DFlash2 loader is not in the table yet
            continue
        for version in VLLM_VERSIONS:
            assert contract_for("vllm", version, family) is not None, (family, version)


def test_patch_versions_fall_in_their_minor_row() -> None:
    row = contract_for("vllm", "0.29.3", Family.QWEN3_DSPARK)
    assert row is not None and row.first == "0.29.0"


@pytest.mark.parametrize(("family", "tensor", "code"), [
    ("qwen3-dspark", "embed_tokens.weight", "DSP321"), ("qwen3-dspark", "markov_head.markov_w1.weight", "DSP322"),
    ("qwen3-dspark", "markov_head.markov_w2.weight", "DSP323"), ("qwen3-dspark", "lm_head.weight", "DSP320"),
    # EAGLE-3 honours the lm_head's rows as D where they contradict draft_vocab_size: DSP216, in the same words
    ("gemma4-dspark", "lm_head.weight", "DSP320"), ("eagle3-llama", "lm_head.weight", "DSP216"),
    ("dflash", "embed_tokens.weight", "DSP321")])
def test_vocab_heads_are_judged_by_the_record(tmp_path: Path, family: str, tensor: str, code: str) -> None:
    """A vocabulary head one row over, or a head as wide as another hidden size: the release's generated record
    raises (its own words; the head's code), on a real checkpoint, for every registered release."""
    d = 40 if family == "gemma4-dspark" else T  # Gemma4 sizes lm_head by V: a D-row head is one it refuses
    tensors = draft_tensors(vocab=T, draft_vocab=d, target_vocab=T, markov=family.endswith("dspark"))
    if family != "gemma4-dspark":
        tensors[tensor] = np.concatenate([tensors[tensor], tensors[tensor][:1]])
    path = make_checkpoint(tmp_path / "over", family=family, vocab=T, draft_vocab=d, target_vocab=T, d2t=d < T,
                           tensors=tensors)
    wide = dict(tensors, **{"lm_head.weight": np.zeros((d, 32), np.float32)})
    wide_path = make_checkpoint(tmp_path / "wide", family=family, vocab=T, draft_vocab=d, target_vocab=T,
                                d2t=d < T, tensors=wide)
    runtimes = [RuntimeVersion("vllm", v) for v in VLLM_VERSIONS]
    judged = 0
    for over, too_wide in zip(analyze(local_source(path), target=TargetVocab(T, "t"), runtimes=runtimes).verdicts,
                              analyze(local_source(wide_path), target=TargetVocab(T, "t"), runtimes=runtimes).verdicts,
                              strict=True):
        if not over.contract.supported:
            continue
        judged += 1
        assert over.error is not None and over.error.code == code, (over.version, over.error)
        if family != "gemma4-dspark" and tensor == "lm_head.weight":
            assert too_wide.error is not None and too_wide.error.code == "DSP320", (over.version, too_wide.error)
    assert judged


def test_topk_is_checked_from_028() -> None:
    f = facts(d=40, lm=True, d2t=True, dspark_draft_topk=41)
    for version in vllm_minors("0.25.0", "0.27.0"):  # no dspark_draft_topk in any file of 0.25.0-0.27.1 (grep)
        assert outcome(version, f)[0] is None
    for version in vllm_minors("0.28.0"):
        assert outcome(version, f)[0] == c.E_TOPK.format(d=40)


def test_generic_draft_for_an_omni_target_must_be_converted_from_029() -> None:
    generic = facts(d=T, lm=True, d2t=False, target_is_omni=True)
    for version in vllm_minors("0.25.0", "0.28.0"):  # the check is first in speculative.py @ v0.29.0 L159 (grep)
        assert outcome(version, generic)[0] is None
    for version in vllm_minors("0.29.0"):
        assert outcome(version, generic)[0] == c.E_OMNI_GENERIC
    omni = facts(Family.QWEN3_OMNI_DSPARK, d=T, lm=True, d2t=False, target_is_omni=True)
    assert outcome("0.33.0", omni)[0] is None
