"""Tensors a family has no parameter for (issues 11/12/17): vLLM's DFlash / EAGLE-3 backbones refuse a Markov or
confidence head by name (DSP350, the runtime's words); SGLang's skip it (DSP351); DSpark families build the head."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import draft_tensors, make_checkpoint
from listed import vllm_before, vllm_minors

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.compatibility import evaluate_contract
from dspark_ckpt.runtimes.records import DraftFacts
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.sglang_config import SglangConfig
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, VLLM_VERSIONS, contract_for
from dspark_ckpt.sources.local import local_source

T = 96
BACKBONES = {Family.DFLASH: "DFlashQwen3Model", Family.EAGLE3_LLAMA: "LlamaModel",
             Family.EAGLE3_QWEN3: "Qwen3Eagle3Model"}
CLI_FAMILY = {Family.DFLASH: "dflash", Family.EAGLE3_LLAMA: "eagle3-llama", Family.EAGLE3_QWEN3: "eagle3-qwen3"}
# The first listed release that registers each family (registry.py @ v0.20.0 L576 DFlashDraftModel, L577
# Eagle3LlamaForCausalLM; @ v0.24.0 L614 Eagle3Qwen3ForCausalLM, no qwen3_eagle3.py before)
FIRST = {Family.DFLASH: "0.20.0", Family.EAGLE3_LLAMA: VLLM_VERSIONS[0], Family.EAGLE3_QWEN3: "0.24.0"}
# Before AutoWeightsLoader the backbone's own load_weights looks each name up in params_dict: a KeyError naming the
# tensor, not AutoWeightsLoader's sentence (qwen3_dflash.py DFlashQwen3Model.load_weights L457-498 @ v0.20.0,
# L615-660 @ v0.25.0, AutoWeightsLoader from v0.26.0 L652; llama_eagle3.py LlamaModel.load_weights L225-270 @
# v0.18.0 and v0.20.0, L256-289 @ v0.24.0, AutoWeightsLoader from v0.25.0 L267-269; qwen3_eagle3.py L258-290 @ v0.24.0;
# probe_runtime 0.20.0, 0.24.0, 0.25.0 384/384)
PARAMS_DICT = {Family.DFLASH: vllm_minors("0.20.0", "0.25.0"), Family.EAGLE3_LLAMA: vllm_before("0.25.0"),
               Family.EAGLE3_QWEN3: vllm_minors("0.24.0", "0.24.0")}
REGISTERED = [(v, f) for f in BACKBONES for v in vllm_minors(FIRST[f])]


def facts(family: Family, *, d: int = T, v: int = T, markov: bool = True, confidence: bool = False,
          **extra: object) -> DraftFacts:
    view = SglangConfig(markov_names=("markov_head.markov_w1.weight", "markov_head.markov_w2.weight") if markov
                        else (), confidence_names=("confidence_head.proj.bias", "confidence_head.proj.weight")
                        if confidence else ())
    base = DraftFacts(family=family, draft_vocab_size=d, vocab_size=v, target_vocab_size=T, has_lm_head=True,
                      has_embed=True, has_d2t=False, has_t2d=False, lm_head_rows=d, embed_rows=v, hidden_size=16,
                      lm_head_cols=16, markov_rank=4 if markov else None,
                      markov_w1_rows=v if markov else None, markov_w1_cols=4 if markov else None,
                      markov_w2_rows=d if markov else None, sglang=view,
                      tensor_shapes=tuple((n, (4,)) for n in (*view.markov_names, *view.confidence_names)))
    return replace(base, **extra)  # type: ignore[arg-type]


def stray(family: Family, head: str = "markov_head", version: str | None = None) -> str:
    if version in PARAMS_DICT[family]:  # KeyError: the first of the head's tensors, in vLLM's sorted order
        return m.E_STRAY_KEY.format(tensor={"markov_head": "markov_head.markov_w1.weight",
                                            "confidence_head": "confidence_head.proj.bias"}[head])
    return m.E_STRAY_HEAD.format(name=head, cls=BACKBONES[family])


@pytest.mark.parametrize("version", VLLM_VERSIONS)
def test_rows_name_the_backbone_that_refuses(version: str) -> None:
    for family, backbone in BACKBONES.items():
        row = contract_for("vllm", version, family)
        if version in vllm_before(FIRST[family]):  # not registered: no backbone to refuse anything
            assert row is not None and not row.supported and row.stray_heads_class is None, (family, version)
            continue
        assert row is not None and row.stray_heads_class == backbone, (family, version)
    for family in (Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK, Family.GEMMA4_DSPARK):
        row = contract_for("vllm", version, family)
        assert row is not None and row.stray_heads_class is None, (family, version)


@pytest.mark.parametrize(("version", "family"), REGISTERED)
def test_a_markov_head_fails_to_load_with_vllms_words(version: str, family: Family) -> None:
    row = contract_for("vllm", version, family)
    assert row is not None
    verdict = evaluate_contract(row, version, facts(family))
    assert not verdict.loads and verdict.error is not None
    want = stray(family, version=version)
    assert (verdict.error.code, verdict.error.text, verdict.error.verbatim) == ("DSP350", want, True)
    assert verdict.error.text == ("'markov_head.markov_w1.weight'" if version in PARAMS_DICT[family] else
                                  f"There is no module or parameter named 'markov_head' in {BACKBONES[family]}. "
                                  f"The available parameters belonging to  ({BACKBONES[family]}) are:")
    assert evaluate_contract(row, version, facts(family, markov=False)).loads  # the realistic export loads


@pytest.mark.parametrize("family", list(BACKBONES))
def test_the_markov_head_is_refused_after_the_names_that_sort_before_it(family: Family, tmp_path: Path) -> None:
    row = contract_for("vllm", "0.30.0", family)
    assert row is not None
    # d2t (sorted first) on D == T: no draft_id_to_target_id parameter, refused before markov_head
    got = evaluate_contract(row, "0.30.0", facts(family, has_d2t=True, d2t_length=T)).error
    assert got is not None and got.code == "DSP303"
    # lm_head one row short (lm_head sorts before markov_head): the release's record raises its bare row assert
    # first, on a real checkpoint (the contract's stray head is tied to its first tensor, which comes later)
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T)
    tensors["lm_head.weight"] = tensors["lm_head.weight"][:-1]
    path = make_checkpoint(tmp_path / "short", family=CLI_FAMILY[family], vocab=T, draft_vocab=T, target_vocab=T,
                           tensors=tensors)
    error = verdict_on(path, "0.30.0").error
    assert error is not None and error.code == "DSP320" and error.text.startswith(m.E_ROWS), error
    whole = make_checkpoint(tmp_path / "whole", family=CLI_FAMILY[family], vocab=T, draft_vocab=T, target_vocab=T)
    error = verdict_on(whole, "0.30.0").error  # the same draft with a whole lm_head: the stray head is refused
    assert error is not None and (error.code, error.text) == ("DSP350", stray(family)), error
    # a wrong Markov row count is not a row assert where there is no Markov parameter: the name is refused
    got = evaluate_contract(row, "0.30.0", facts(family, markov_w1_rows=T + 3, markov_w2_rows=T - 5)).error
    assert got is not None and (got.code, got.text) == ("DSP350", stray(family))


def verdict_on(path: Path, version: str) -> Any:
    analysis = analyze(local_source(path), target=TargetVocab(T, "test"), runtimes=[RuntimeVersion("vllm", version)])
    (verdict,) = analysis.verdicts
    return verdict


@pytest.mark.parametrize("family", list(BACKBONES))
def test_a_confidence_head_is_refused_before_d2t(family: Family) -> None:
    row = contract_for("vllm", "0.33.0", family)
    assert row is not None
    got = evaluate_contract(row, "0.33.0", facts(family, markov=False, confidence=True, has_d2t=True, d2t_length=T)).error
    assert got is not None and (got.code, got.text) == ("DSP350", stray(family, "confidence_head"))


@pytest.mark.parametrize("version", VLLM_VERSIONS)
def test_dspark_builds_the_heads_it_is_shipped(version: str) -> None:
    """Qwen3 DSpark has a markov_head module; a confidence_head without enable_confidence_head is mapped to None
    (qwen3_dspark.py 0.28+) or skipped (skip_substrs, 0.27): neither is refused."""
    for family in (Family.QWEN3_DSPARK, Family.GEMMA4_DSPARK):
        row = contract_for("vllm", version, family)
        assert row is not None
        verdict = evaluate_contract(row, version, facts(family, confidence=True))
        assert verdict.error is None or verdict.error.code != "DSP350", (family, version)


@pytest.mark.parametrize("family", list(BACKBONES))
def test_sglang_skips_the_head_it_has_no_parameter_for(family: Family) -> None:
    first = "0.5.1" if family is not Family.DFLASH else "0.5.11"  # DFlash is registered from 0.5.11
    for version in SGLANG_VERSIONS[SGLANG_VERSIONS.index(first):]:
        row = contract_for("sglang", version, family)
        assert row is not None
        verdict = evaluate_contract(row, version, facts(family))
        codes = [i.code for i in verdict.silent]
        if verdict.loads and verdict.first_step is None:
            assert "DSP351" in codes, (family, version)
        assert evaluate_contract(row, version, facts(family, markov=False)).silent == tuple(
            i for i in verdict.silent if i.code != "DSP351"), (family, version)


def test_sglang_dspark_reports_no_dropped_head() -> None:
    row = contract_for("sglang", "0.5.23", Family.QWEN3_DSPARK)
    assert row is not None
    verdict = evaluate_contract(row, "0.5.23", facts(Family.QWEN3_DSPARK))
    assert "DSP351" not in [i.code for i in verdict.silent] and (verdict.error is None or
                                                                 verdict.error.code != "DSP350")


def test_the_codes_are_registered_with_four_sections() -> None:
    for code, severity in (("DSP350", "error"), ("DSP351", "info")):
        rule = RULES[code]
        assert rule.severity == severity
        assert all(len(text) > 20 for text in (rule.what, rule.why, rule.example, rule.fix)), code


def test_the_analysis_reads_the_heads_from_real_headers(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "eagle", family="eagle3-llama", vocab=T, draft_vocab=64, target_vocab=T,
                           d2t=True)
    analysis = analyze(local_source(path), target=TargetVocab(T, "test"),
                       runtimes=[RuntimeVersion("vllm", "0.29.0"), RuntimeVersion("sglang", "0.5.23")])
    assert analysis.facts is not None and analysis.facts.shipped_heads == ("markov_head",)
    vllm, sglang = analysis.verdicts
    assert vllm.error is not None and vllm.error.text == stray(Family.EAGLE3_LLAMA)
    assert "DSP351" in [i.code for i in sglang.silent]
    plain = make_checkpoint(tmp_path / "plain", family="eagle3-llama", vocab=T, draft_vocab=64, target_vocab=T,
                            d2t=True, markov=False)
    again = analyze(local_source(plain), target=TargetVocab(T, "test"), runtimes=[RuntimeVersion("vllm", "0.29.0")])
    assert again.facts is not None and again.facts.shipped_heads == () and again.verdicts[0].loads


@pytest.mark.parametrize("version", VLLM_VERSIONS)
@pytest.mark.parametrize(("extra", "named"), [("gate_proj", "gate_up_proj"), ("joint_proj", "joint_proj")])
def test_a_gated_or_rnn_markov_head_is_refused_by_vllms_vanilla_head(version: str, extra: str, named: str) -> None:
    """vLLM builds DSparkMarkovHead (markov_w1/markov_w2) whatever markov_head_type says; the backbone's stacked
    renaming turns gate_proj into gate_up_proj before the nested loader refuses it (probed 0.27.0, 0.30.0, 0.33.0)."""
    names = (f"markov_head.{extra}.bias", f"markov_head.{extra}.weight", "markov_head.markov_w1.weight",
             "markov_head.markov_w2.weight")
    for family in (Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK):
        row = contract_for("vllm", version, family)
        assert row is not None
        if not row.supported:
            continue
        got = evaluate_contract(row, version, facts(family, d=64, has_d2t=True, d2t_length=64,
                                           sglang=SglangConfig(markov_names=names))).error
        assert got is not None and got.code == "DSP350", (family, version)
        assert got.text == (f"There is no module or parameter named 'markov_head.{named}' in Qwen3DSparkModel. "
                            "The available parameters belonging to markov_head (DSparkMarkovHead) are:")


def test_verify_and_check_agree_on_a_gated_markov_head(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    import numpy as np
    from conftest import draft_tensors

    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.sources.target import explicit_target
    from dspark_ckpt.verify.checkpoint import verify_checkpoint
    from dspark_ckpt.verify.torch_loader import VerifyOptions

    tensors = draft_tensors(vocab=T, draft_vocab=64, target_vocab=T, d2t=True)
    tensors["markov_head.gate_proj.weight"] = np.zeros((4, 4), dtype=np.float32)
    path = make_checkpoint(tmp_path / "gated", vocab=T, draft_vocab=64, target_vocab=T, tensors=tensors)
    runtimes = [RuntimeVersion("vllm", v) for v in VLLM_VERSIONS]
    checked = inspect_checkpoint(local_source(path), target=explicit_target(T), runtimes=runtimes)
    verified, _ = verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=runtimes,
                                    options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    for mine, theirs in zip(verified.compatibility, checked.compatibility, strict=True):
        # Qwen3DSparkModel is first registered in 0.25.0 (registry.py @ v0.25.0 L597): DSP309 before, on both sides
        code = "DSP309" if mine.version in vllm_before("0.25.0") else "DSP350"
        assert (mine.loads, mine.error_code) == (theirs.loads, theirs.error_code) == (False, code), mine.version
        assert (mine.error or "").startswith(theirs.error or "-"), mine.version
