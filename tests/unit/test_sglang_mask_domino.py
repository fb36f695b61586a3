"""SGLang facts issue 17 left unmodelled, now rows of the table: DSpark's mask_token_id bound (the target's
`padded_vocab_size or vocab_size` from 0.5.18, dspark_worker_v2.py:138-141) and the Domino projector of DFlash's
load_weights (0.5.20+: DSP352 names without projector_type, DSP353 V != T, DSP355 config; DSP354 before). The
projector's shapes and presence are the generated record's (tests/sglang/test_sglang_domino.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dspark_ckpt.model.families import Family
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.records import DraftFacts, Verdict
from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.sglang_config import sglang_config
from dspark_ckpt.runtimes.sglang_eval import evaluate_sglang
from dspark_ckpt.runtimes.sglang_rows import SGLANG_ROWS
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, contract_for

T, P, H = 96, 128, 16
ARCH = {Family.QWEN3_DSPARK: "Qwen3DSparkModel", Family.DFLASH: "DFlashDraftModel",
        Family.DFLASH2: "DFlash2DraftModel"}
DOMINO = {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1, "gru_hidden_dim": 8,
          "emb_dim": 8}


def domino_weights(v: int = T, prefix: str = "") -> dict[str, tuple[int, ...]]:
    return {f"{prefix}prefix_gru.weight_ih_l0": (24, H), f"{prefix}prefix_gru.weight_hh_l0": (24, 8),
            f"{prefix}embed_proj.0.weight": (8, H + 8), f"{prefix}embed_proj.2.weight": (v, 8)}


def judge(family: Family, version: str, *, v: int = T, t: int = T, head_rows: int | None = None,
          config: dict[str, Any] | None = None, shapes: dict[str, tuple[int, ...]] | None = None) -> Verdict:
    raw: dict[str, Any] = {"architectures": [ARCH[family]], "vocab_size": v, "hidden_size": H, **(config or {})}
    shapes = dict(shapes or {})
    markov = {}
    if family is Family.QWEN3_DSPARK:
        raw = {"markov_rank": 4, "markov_head_type": "vanilla", "mask_token_id": 0, **raw}
        shapes.update({"markov_head.markov_w1.weight": (v, 4), "markov_head.markov_w2.weight": (v, 4)})
        markov = {"markov_w1_rows": v, "markov_w2_rows": v}
    if family is Family.DFLASH2:
        raw.setdefault("dflash_config", {}).update({"selector_rank": 4, "selector_top_k": 4})
    contract = contract_for("sglang", version, family)
    assert contract is not None
    facts = DraftFacts(family=family, draft_vocab_size=v, vocab_size=v, target_vocab_size=t, has_lm_head=False,
                       has_embed=False, has_d2t=False, has_t2d=False, hidden_size=H, target_head_rows=head_rows,
                       sglang=sglang_config(raw, shapes), raw_config=raw, **markov)  # type: ignore[arg-type]
    return evaluate_sglang(contract, version, facts)


def error(verdict: Verdict) -> tuple[str, str] | None:
    return (verdict.error.code, verdict.error.text) if verdict.error else None


def since(first: str) -> list[str]:
    return [v for v in SGLANG_VERSIONS if release_key(v) >= release_key(first)]


def before(first: str, start: str) -> list[str]:
    return [v for v in SGLANG_VERSIONS if release_key(start) <= release_key(v) < release_key(first)]


# --- 1. DSpark's mask_token_id bound ------------------------------------------------------------------------------

def test_a_mask_in_the_padded_rows_fails_before_0_5_18_and_passes_from_it() -> None:
    """Inkling-style target (T = 96, padded 128) and a V = 128 draft: mask id 100 is in [T, padded)."""
    for version in before("0.5.18", "0.5.16"):
        verdict = judge(Family.QWEN3_DSPARK, version, v=P, head_rows=P, config={"mask_token_id": 100})
        assert error(verdict) == ("DSP343", m.E_DSPARK_MASK_OUTSIDE.format(m=100, t=T)), version
        assert verdict.error and verdict.error.text == "DSpark mask_token_id=100 is outside the target vocab size 96."
    for version in since("0.5.18"):
        verdict = judge(Family.QWEN3_DSPARK, version, v=P, head_rows=P, config={"mask_token_id": 100})
        assert verdict.loads and verdict.first_step is None, (version, verdict)


def test_a_mask_at_the_padded_size_fails_everywhere_with_the_bound_of_each_release() -> None:
    for version in SGLANG_VERSIONS:
        if release_key(version) < release_key("0.5.16"):
            continue
        bound = P if release_key(version) >= release_key("0.5.18") else T
        verdict = judge(Family.QWEN3_DSPARK, version, v=P, head_rows=P, config={"mask_token_id": P})
        assert error(verdict) == ("DSP343", f"DSpark mask_token_id={P} is outside the target vocab size {bound}.")


def test_without_a_target_config_the_bound_is_t_on_every_release() -> None:
    """--target-vocab-size gives no padded_vocab_size: nothing is guessed, the bound stays T."""
    for version in since("0.5.16"):
        verdict = judge(Family.QWEN3_DSPARK, version, config={"mask_token_id": 100})
        assert error(verdict) == ("DSP343", m.E_DSPARK_MASK_OUTSIDE.format(m=100, t=T)), version


def test_dflash_keeps_the_plain_vocab_bound() -> None:
    """dflash_worker_v2.py compares with model_config.vocab_size in every release: padding does not help."""
    for version in since("0.5.20"):
        verdict = judge(Family.DFLASH, version, head_rows=P, config={"dflash_config": {"mask_token_id": 100}})
        assert verdict.error is not None and verdict.error.code == "DSP343" and "vocab_size=96" in verdict.error.text


def test_the_rows_carry_the_bound_and_domino_columns_by_release() -> None:
    for row in SGLANG_ROWS:
        if row.sglang is None or row.family not in ARCH or not row.supported:
            continue
        padded = row.family is Family.QWEN3_DSPARK and release_key(row.first) >= release_key("0.5.18")
        assert row.sglang.mask_bound_padded is padded, row.source
        assert row.sglang.domino is (release_key(row.first) >= release_key("0.5.20")), row.source
        if row.sglang.domino:
            assert "models/dflash.py:804-810" in row.source and "confirmed by executing" in row.source


# --- 2. Domino projector names ------------------------------------------------------------------------------------

@pytest.mark.parametrize("family", list(ARCH))
def test_domino_names_without_a_projector_type(family: Family) -> None:
    """Refused from 0.5.20 by DFlash's load_weights (DSpark's backbone goes through it too); skipped before."""
    first = "0.5.16" if family is Family.QWEN3_DSPARK else "0.5.19" if family is Family.DFLASH2 else "0.5.11"
    for version in since("0.5.20"):
        verdict = judge(family, version, shapes=domino_weights())
        assert error(verdict) == ("DSP352", ("DFLASH checkpoint contains Domino projector weights but "
                                            "projector_type=None.")), version
    for version in before("0.5.20", first):
        verdict = judge(family, version, shapes=domino_weights())
        assert verdict.loads and "DSP354" in [i.code for i in verdict.silent], version


def test_the_refusal_names_the_type_as_python_repr_and_strips_model_prefix() -> None:
    linear = judge(Family.DFLASH, "0.5.23", config={"dflash_config": {"projector_type": "linear"}},
                   shapes={"model.embed_proj.2.weight": (T, 8)})
    assert error(linear) == ("DSP352", m.E_DOMINO_UNSET.format(kind="'linear'"))
    assert "projector_type='linear'." in linear.error.text  # type: ignore[union-attr]
    top_level = judge(Family.DFLASH, "0.5.23", config={"projector_type": "Domino"}, shapes=domino_weights())
    assert error(top_level) == ("DSP352", m.E_DOMINO_UNSET.format(kind="'Domino'"))  # only "domino" selects it


@pytest.mark.parametrize("where", ["nested", "top"])
def test_a_complete_domino_draft_loads_when_v_equals_t(where: str) -> None:
    config = {"dflash_config": DOMINO} if where == "nested" else \
        {"projector_type": "domino", "dflash_config": {k: v for k, v in DOMINO.items() if k != "projector_type"}}
    for family in (Family.DFLASH, Family.DFLASH2):
        for version in since("0.5.20"):
            verdict = judge(family, version, config=config, shapes=domino_weights())
            assert verdict.loads and "DSP354" not in [i.code for i in verdict.silent], (family, version)


def test_a_domino_draft_needs_identical_vocabularies() -> None:
    for family in (Family.DFLASH, Family.DFLASH2):
        for version in since("0.5.20"):
            verdict = judge(family, version, v=T, t=T + 8, config={"dflash_config": DOMINO},
                            shapes=domino_weights())
            assert error(verdict) == ("DSP353", ("DFLASH Domino requires identical target and draft vocab sizes, "
                                                f"got target={T + 8}, draft={T}.")), (family, version)
    # the projector's shapes are the generated record's (tests/sglang/test_sglang_domino.py): the hand-read rows
    # no longer judge them
    wrong = judge(Family.DFLASH, "0.5.20", config={"dflash_config": DOMINO}, shapes=domino_weights(v=T - 1))
    assert wrong.loads


def test_dspark_with_domino_has_no_vocab_validation() -> None:
    """Only dflash_worker_v2.py calls validate_domino_runtime; the DSpark worker does not."""
    verdict = judge(Family.QWEN3_DSPARK, "0.5.23", config={"dflash_config": DOMINO}, shapes=domino_weights())
    assert verdict.loads


@pytest.mark.parametrize(("fields", "message"), [
    ({"emb_dim": None}, m.E_DOMINO_EMB),
    ({"gru_hidden_dim": None}, m.E_DOMINO_GRU),
    ({"shift_label": 1}, m.E_DOMINO_SHIFT.format(value="1")),
    ({"pure_draft_prefix_len": 2}, m.E_DOMINO_PREFIX.format(value="2")),
    ({"gru_hidden_dim": "x"}, "Invalid DFLASH Domino gru_hidden_dim='x'."),
    ({"gru_hidden_dim": 0}, "DFLASH Domino gru_hidden_dim must be positive, got 0."),
])
def test_domino_config_fields(fields: dict[str, Any], message: str) -> None:
    for family in ARCH:
        verdict = judge(family, "0.5.21", config={"dflash_config": {**DOMINO, **fields}}, shapes=domino_weights())
        assert error(verdict) == ("DSP355", message), family
    assert judge(Family.DFLASH, "0.5.19", config={"dflash_config": {**DOMINO, **fields}}).loads  # not read before


def test_domino_missing_weights_are_the_records_and_emb_dim_disagreement() -> None:
    partial = judge(Family.DFLASH, "0.5.22", config={"dflash_config": DOMINO},
                    shapes={"model.embed_proj.2.weight": (T, 8)})
    assert partial.loads  # a missing projector weight is the generated record's (tests/sglang/test_sglang_domino.py)
    differs = judge(Family.DFLASH, "0.5.22", config={"dflash_config": DOMINO, "emb_dim": 16},
                    shapes=domino_weights())
    assert error(differs) == ("DSP355", m.E_DOMINO_EMB_DIFFERS.format(nested=8, top=16))


def test_the_verdict_follows_config_json_as_a_repair_rewrites_it() -> None:
    """fix's simulation edits raw_config: the Domino fields are re-read from it (runtimes/sglang_eval.refreshed)."""
    from dataclasses import replace

    contract = contract_for("sglang", "0.5.23", Family.DFLASH)
    assert contract is not None
    raw: dict[str, Any] = {"architectures": ["DFlashDraftModel"], "vocab_size": T, "hidden_size": H}
    facts = DraftFacts(family=Family.DFLASH, draft_vocab_size=T, vocab_size=T, target_vocab_size=T,
                       has_lm_head=False, has_embed=False, has_d2t=False, has_t2d=False, hidden_size=H,
                       sglang=sglang_config(raw, domino_weights()), raw_config=raw)
    assert evaluate_sglang(contract, "0.5.23", facts).error is not None
    fixed = replace(facts, raw_config={**raw, "dflash_config": DOMINO})
    assert evaluate_sglang(contract, "0.5.23", fixed).loads


def test_the_codes_are_registered_with_all_four_sections() -> None:
    for code, severity in (("DSP352", "error"), ("DSP353", "error"), ("DSP354", "info"), ("DSP355", "error")):
        rule = RULES[code]
        assert rule.severity == severity and all((rule.what, rule.why, rule.example, rule.fix)), code
