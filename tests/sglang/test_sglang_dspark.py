"""SGLang's Qwen3 DSpark (models/dspark.py, 0.5.16+), release range by release range, on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import backbone_config, backbone_tensors, draft_tensors
from sglang_support import DSPARK_READY, Drafts, T, check, edit_config, expect

from dspark_ckpt.runtimes import messages as m

BEFORE = ("0.4.2", "0.5.15")  # no models/dspark.py: "Cannot find model module ..."
ALL_DSPARK = ("0.5.16", "0.5.23")
OWN_IGNORED = frozenset({"DSP307"})  # the draft's lm_head and embed_tokens are skipped, the target's used


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    return Drafts(tmp_path)


def dspark(drafts: Drafts, *, config: dict[str, Any] | None = None, **kwargs: Any) -> Path:
    kwargs.setdefault("vocab", T)
    kwargs.setdefault("draft_vocab", kwargs["vocab"])
    return drafts(config_extra={**DSPARK_READY, **(config or {})}, **kwargs)


def test_not_registered_before_0_5_16_then_the_target_head_is_used(drafts: Drafts) -> None:
    found = check(dspark(drafts))
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("loads", OWN_IGNORED)})
    assert found["0.5.15"].error == ("Cannot find model module. 'Qwen3DSparkModel' is not a registered model in the "
                                     "Transformers library (only relevant if the model is meant to be in "
                                     "Transformers) and 'AutoModel' is not present in the model config's 'auto_map' "
                                     "(relevant if the model is custom).")
    assert "sglang/srt/models/dspark.py" in found["0.5.16"].source and "0.5.16" in found["0.5.16"].source


def test_d2t_and_t2d_are_ignored_not_refused(drafts: Drafts) -> None:
    """No release has the GitHub-only qwen3_dspark.py that refused them: DFlashDraftModel skips unknown names."""
    expect(check(dspark(drafts, d2t=True, t2d=True)), {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("loads", OWN_IGNORED)})


def test_a_padded_draft_loads_then_fails_at_the_first_step(drafts: Drafts) -> None:
    """V = 128 Markov columns meet the 96 columns of the target head's logits (`logits + bias`; from 0.5.22 the
    fused kernel asserts bias.shape[1] <= base_logits.shape[1])."""
    found = check(dspark(drafts, vocab=128, draft_vocab=128))
    expect(found, {BEFORE: ("error", "DSP309"), ("0.5.16", "0.5.21"): ("first-step", "DSP340"),
                   ("0.5.22", "0.5.23"): ("first-step", "DSP340")})
    assert found["0.5.21"].first_step_error == ("The size of tensor a (96) must match the size of tensor b (128) "
                                                "at non-singleton dimension 1")
    assert found["0.5.22"].first_step_error == "AssertionError"


def test_a_narrower_vocab_fails_the_add_until_0_5_22_then_the_markov_w1_lookup(drafts: Drafts) -> None:
    """0.5.22+ mask the bias's missing columns, but the target's own tokens >= V have no markov_w1 row (the
    releases' recorded first step, release_data/sglang-X/first_step.json; test_sglang_first_step.py)."""
    found = check(dspark(drafts, vocab=64, draft_vocab=64))
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("first-step", "DSP340")})
    assert found["0.5.16"].first_step_error == m.E_DSPARK_WIDTH.format(w=96, v=64)
    assert found["0.5.22"].first_step_error == m.E_DSPARK_LOOKUP.format(last=95, v=64,
                                                                         observed="index out of range in self")


def test_markov_factors_have_v_rows_whatever_draft_vocab_size_says(drafts: Drafts) -> None:
    """A pruned draft (D = 64 < V = T): markov_w2 has D rows, SGLang builds nn.Linear(r, V)."""
    found = check(dspark(drafts, vocab=T, draft_vocab=64, d2t=True))
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("error", "DSP323")})
    assert found["0.5.23"].error.startswith("AssertionError: Attempted to load weight (torch.Size([64, 4])) into "
                                            "parameter (torch.Size([96, 4]))")  # default_weight_loader's words


def test_markov_head_type_is_required_unless_a_dspark_key_is_set(drafts: Drafts) -> None:
    found = check(dspark(drafts, config={"markov_head_type": None}))  # null: the parser sees None
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("error", "DSP344")})
    assert found["0.5.16"].error == "DSpark requires markov_head_type when markov_rank > 0, got None."
    prefixed = edit_config(dspark(drafts), markov_head_type=None, dspark_block_size=7)
    expect(check(prefixed), {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("loads", OWN_IGNORED)})


def test_a_markov_rank_only_nested_passes_the_parser_but_not_build_markov_head(drafts: Drafts) -> None:
    path = edit_config(dspark(drafts), markov_rank=None, dspark_config={"markov_rank": 4})
    found = check(path)
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("error", "DSP344")})
    assert found["0.5.20"].error == ("DSpark requires markov_rank > 0 (the Markov head is the core of the semi-AR "
                                     "draft); got markov_rank=0.")
    none = check(edit_config(dspark(drafts), markov_rank=None))
    assert none["0.5.20"].error == "DSPARK requires markov_rank > 0 in the draft config, got markov_rank=0."


def test_mask_token_id_must_be_set_and_below_t(drafts: Drafts) -> None:
    unset = check(dspark(drafts, config={"mask_token_id": None}))
    expect(unset, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("error", "DSP343")})
    assert unset["0.5.16"].error == "DSpark requires mask_token_id to be set in the draft model config."
    outside = check(dspark(drafts, config={"mask_token_id": T}))
    assert outside["0.5.23"].error == f"DSpark mask_token_id={T} is outside the target vocab size {T}."


def test_0_5_23_reads_the_nested_dflash_config_before_the_top_level(drafts: Drafts) -> None:
    """The top-level mask id (outside T) wins before 0.5.23; 0.5.23 merges dflash_config under dspark_config."""
    path = dspark(drafts, config={"mask_token_id": 500, "dflash_config": {"mask_token_id": 5}})
    expect(check(path), {BEFORE: ("error", "DSP309"), ("0.5.16", "0.5.22"): ("error", "DSP343"),
                         ("0.5.23", "0.5.23"): ("loads", OWN_IGNORED)})
    nested_type = edit_config(dspark(drafts), markov_head_type=None, dflash_config={"markov_head_type": "vanilla"})
    expect(check(nested_type), {BEFORE: ("error", "DSP309"), ("0.5.16", "0.5.22"): ("error", "DSP344"),
                                ("0.5.23", "0.5.23"): ("loads", OWN_IGNORED)})


def test_missing_markov_weights_keep_their_random_init(drafts: Drafts) -> None:
    tensors = {**backbone_tensors("qwen3-dspark", {"hidden_size": 16, **backbone_config(16)}),
               **draft_tensors(vocab=T, draft_vocab=T, target_vocab=T)}  # every layer complete, as make_checkpoint's
    del tensors["markov_head.markov_w2.weight"]
    found = check(dspark(drafts, tensors=tensors))
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("loads", OWN_IGNORED | {"DSP345"})})


def test_an_unknown_markov_weight_is_refused(drafts: Drafts) -> None:
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T)
    tensors["markov_head.gate_proj.weight"] = np.zeros((4, 20), dtype=np.float32)  # a gated head's, not vanilla's
    found = check(dspark(drafts, tensors=tensors))
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("error", "DSP344")})
    assert found["0.5.19"].error == ("DSpark unexpected markov weight 'markov_head.gate_proj.weight' not found in "
                                     "model parameters (known markov params require a VanillaMarkov head).")


def test_dspark_draft_model_is_registered_from_0_5_17(drafts: Drafts) -> None:
    found = check(dspark(drafts, config={"architectures": ["DSparkDraftModel"]}))
    expect(found, {("0.4.2", "0.5.16"): ("error", "DSP309"), ("0.5.17", "0.5.23"): ("loads", OWN_IGNORED)})
    assert "'DSparkDraftModel' is not a registered model" in (found["0.5.16"].error or "")


def test_a_nemotron_3_5_draft_keeps_its_embedding_from_0_5_19(drafts: Drafts) -> None:
    # one target layer: the fixture's fc is [H, H], and SGLang's DFlash backbone raises on an fc not sized
    # len(target_layer_ids) x H (models/dflash.py; upstream-notes §24)
    nemotron = {"has_embed_tokens": True, "has_lm_head": False, "quantization_config": {"quant_algo": "W4A16_NVFP4"},
                "target_layer_ids": [1], "eagle_aux_hidden_state_layer_ids": [2], "sample_from_anchor": False}
    found = check(dspark(drafts, lm_head=False, config=nemotron))
    expect(found, {BEFORE: ("error", "DSP309"), ("0.5.16", "0.5.18"): ("loads", OWN_IGNORED),
                   ("0.5.19", "0.5.23"): ("loads", frozenset())})
    lacking = check(dspark(drafts, lm_head=False, embed=False, config=nemotron))
    expect(lacking, {BEFORE: ("error", "DSP309"), ("0.5.16", "0.5.18"): ("loads", frozenset()),
                     ("0.5.19", "0.5.23"): ("loads", frozenset({"DSP347"}))})


def test_the_inkling_example_on_sglang(drafts: Drafts) -> None:
    """The shipped example (V = D = 201024, T = 200058) has no markov_head_type: refused at start-up on every
    release that has DSpark, before its padded width would fail the first step."""
    example = Path(__file__).parents[2] / "examples" / "inkling-small-dspark"
    found = check(example, target=200058)
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("error", "DSP344")})


def test_a_target_head_padded_like_inklings_takes_a_draft_of_its_width(drafts: Drafts, tmp_path: Path) -> None:
    """SGLang's Inkling builds ParallelLMHead(padded_vocab_size): base logits are cropped to its rows, so a draft
    with V = padded_vocab_size runs, and can propose the padded ids [T, W); verify observes the same."""
    import json

    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.runtimes.selectors import parse_selectors
    from dspark_ckpt.sources.local import local_source
    from dspark_ckpt.sources.target import local_target

    target = tmp_path / "inkling-target"
    target.mkdir()
    (target / "config.json").write_text(json.dumps({"model_type": "inkling", "text_config": {
        "vocab_size": T, "padded_vocab_size": 128}}))
    path = dspark(drafts, vocab=128, draft_vocab=128)
    report = inspect_checkpoint(local_source(path), target=local_target(target), runtimes=parse_selectors(["sglang"]))
    found = {e.version: e for e in report.compatibility}
    expect(found, {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("loads", OWN_IGNORED | {"DSP305"})})
    assert any("ids [96, 128) can be proposed" in s for s in found["0.5.23"].silent)
    torch = pytest.importorskip("torch")
    from dspark_ckpt.verify.checkpoint import verify_checkpoint
    from dspark_ckpt.verify.torch_loader import VerifyOptions

    verified, result = verify_checkpoint(local_source(path), target=local_target(target),
                                         runtimes=parse_selectors(["sglang"]),
                                         options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    assert result.check_disagreements == ()
    assert [(e.error_code, e.first_step_error_code) for e in verified.compatibility][-8:] == [(None, None)] * 8
