"""Draft config facts (plain, speculators, nested) and the target's text vocabulary."""

from __future__ import annotations

import pytest

from dspark_ckpt.model.classify import InputKind, VocabKind, input_kind, vocab_kind
from dspark_ckpt.model.draft_config import parse_draft_config
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.target_config import is_qwen3_omni_target, target_vocab_size


def test_plain_dspark_config() -> None:
    cfg, findings = parse_draft_config({"architectures": ["Qwen3DSparkModel"], "vocab_size": 201024,
                                        "draft_vocab_size": 201024, "hidden_size": 4096, "markov_rank": 16})
    assert findings == []
    assert (cfg.family, cfg.vocab_size, cfg.draft_vocab_size, cfg.hidden_size) == (
        Family.QWEN3_DSPARK, 201024, 201024, 4096)


@pytest.mark.parametrize("raw", [None, "absent"])
def test_missing_or_null_draft_vocab_defaults_to_vocab(raw: object) -> None:
    doc = {"architectures": ["DFlashDraftModel"], "vocab_size": 151936}
    if raw != "absent":
        doc["draft_vocab_size"] = raw
    cfg, findings = parse_draft_config(doc)
    assert cfg.draft_vocab_size == 151936 and findings == []


@pytest.mark.parametrize("bad", [-1, 0, 1.5, "32000", True, 2**40 + 1])
def test_bad_draft_vocab_size(bad: object) -> None:
    cfg, findings = parse_draft_config({"architectures": ["Qwen3DSparkModel"], "vocab_size": 100,
                                        "draft_vocab_size": bad})
    assert cfg.draft_vocab_size is None
    assert [f.code for f in findings] == ["DSP205"]


def test_speculators_format() -> None:
    cfg, findings = parse_draft_config({
        "speculators_model_type": "eagle3", "draft_vocab_size": 32000, "architectures": ["Eagle3Speculator"],
        "speculators_config": {"verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}},
        "transformer_layer_config": {"vocab_size": 128256, "hidden_size": 4096},
    })
    assert findings == []
    assert (cfg.family, cfg.vocab_size, cfg.draft_vocab_size, cfg.hidden_size) == (
        Family.EAGLE3_LLAMA, 128256, 32000, 4096)
    assert cfg.verifier == "meta-llama/Llama-3.1-8B-Instruct"


def test_nested_dflash_config_wins_for_mask_token() -> None:
    cfg, _ = parse_draft_config({"architectures": ["DFlashDraftModel"], "vocab_size": 10, "mask_token_id": 1,
                                 "eagle_config": {"mask_token_id": 2}, "dflash_config": {"mask_token_id": 3}})
    assert cfg.mask_token_id == 3


def test_unknown_family_is_a_finding() -> None:
    cfg, findings = parse_draft_config({"architectures": ["MysteryDraft"], "vocab_size": 10})
    assert cfg.family is None and [f.code for f in findings] == ["DSP203"]


def test_qwen3_dspark_typed_dspark_draft_model() -> None:
    cfg, _ = parse_draft_config({"architectures": ["DSparkDraftModel"], "model_type": "qwen3", "vocab_size": 10})
    assert cfg.family is Family.QWEN3_DSPARK


def test_target_text_config_resolution() -> None:
    assert target_vocab_size({"vocab_size": 151936}) == (151936, "")
    assert target_vocab_size({"vocab_size": 1, "text_config": {"vocab_size": 200058}}) == (200058, "text_config")
    omni = {"model_type": "qwen3_omni_moe",
            "thinker_config": {"text_config": {"vocab_size": 151936}}, "architectures": []}
    assert target_vocab_size(omni) == (151936, "thinker_config.text_config")
    assert is_qwen3_omni_target(omni)
    assert target_vocab_size({"text_config": {"vocab_size": "x"}})[0] is None


def test_classification() -> None:
    assert vocab_kind(32000, 248320) is VocabKind.PRUNED
    assert vocab_kind(151936, 151936) is VocabKind.EQUAL
    assert vocab_kind(201024, 200058) is VocabKind.PADDED
    assert vocab_kind(201024, None) is None
    assert input_kind(201024, 200058) is InputKind.EXPANDED
    assert input_kind(128256, 128256) is InputKind.WITHIN
