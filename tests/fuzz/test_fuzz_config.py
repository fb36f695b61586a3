"""Hypothesis fuzzing of the config reader: any bytes or JSON give typed draft facts and registered findings."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_source import MemorySource

from dspark_ckpt.check.load import read_config
from dspark_ckpt.model.draft_config import MAX_VOCAB, DraftConfig, parse_draft_config
from dspark_ckpt.model.families import ARCHITECTURE_FAMILY, Family
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.rule_catalog import RULES

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = ["architectures", "model_type", "vocab_size", "draft_vocab_size", "hidden_size", "markov_rank",
        "enable_confidence_head", "confidence_head_with_markov", "dspark_draft_topk", "has_own_lm_head",
        "parallel_drafting", "mask_token_id", "speculators_model_type", "speculators_config",
        "transformer_layer_config", "dflash_config", "eagle_config", "verifier", "name_or_path"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**41), 2**41), st.sampled_from([0, 1, MAX_VOCAB,
                    MAX_VOCAB + 1, 10**30]), st.floats(), st.text(max_size=8),
                    st.sampled_from([*ARCHITECTURE_FAMILY, "DSparkDraftModel", "qwen3", "eagle3", "dspark"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                      max_leaves=15)
configs = st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=5)), values, max_size=10)


def _is_count(value: int | None) -> bool:
    return value is None or (type(value) is int and 0 < value <= MAX_VOCAB)


def assert_well_formed(config: DraftConfig | None, findings: list[Finding]) -> None:
    for f in findings:
        assert f.code in RULES and f.code.startswith("DSP2"), f
        assert isinstance(f.message, str)
    if config is None:
        assert findings, "a config that cannot be used must say why"
        return
    assert config.family is None or isinstance(config.family, Family)
    for count in (config.vocab_size, config.draft_vocab_size, config.hidden_size, config.markov_rank):
        assert _is_count(count)
    for flag in (config.enable_confidence_head, config.confidence_head_with_markov, config.has_own_lm_head_flag,
                 config.parallel_drafting, config.draft_vocab_size_declared):
        assert type(flag) is bool
    for optional_int in (config.dspark_draft_topk, config.mask_token_id):
        assert optional_int is None or type(optional_int) is int
    for optional_str in (config.architecture, config.model_type, config.speculators_type, config.verifier):
        assert optional_str is None or isinstance(optional_str, str)


@FUZZ
@given(configs)
def test_any_config_dict(doc: dict[str, Any]) -> None:
    config, findings = parse_draft_config(doc)
    assert_well_formed(config, findings)
    if config.vocab_size is None:
        assert "DSP204" in {f.code for f in findings}


@FUZZ
@given(st.one_of(st.binary(max_size=200), configs.map(lambda d: json.dumps(d).encode()),
                 values.map(lambda v: json.dumps(v).encode())))
def test_any_config_bytes(raw: bytes) -> None:
    config, findings, _ = read_config(MemorySource({"config.json": raw}))
    assert_well_formed(config, findings)
    try:  # what transformers accepts: UTF-8 text (no BOM, no UTF-16 guessing), no lone surrogate
        doc = json.loads(raw.decode("utf-8"))
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
        is_object = isinstance(doc, dict)
    except (ValueError, RecursionError):
        is_object = False
    assert (config is not None) == is_object
    if not is_object:
        assert len(findings) == 1 and findings[0].code in ("DSP202", "DSP211", "DSP213")


def test_unreadable_and_absent_configs() -> None:
    assert [f.code for f in read_config(MemorySource({"config.json": None}))[1]] == ["DSP202"]
    assert [f.code for f in read_config(MemorySource({}))[1]] == ["DSP201"]
