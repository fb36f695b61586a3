"""vLLM's proposer and the masked slots' token id (DSP373), replayed from each release's executed record (spec.json
`drafting_token`, tools/release_drafting_token.py): which functions run for a draft (its method, or the deploy's
own `parallel_drafting` flag), what each does with the kinds of value a config holds, and the generated-model path."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from listed import VLLM_RELEASES, vllm_minors

from dspark_ckpt.runtimes import drafting_token, spec_facts
from dspark_ckpt.runtimes.config_build import build_config
from dspark_ckpt.runtimes.generated_verdict import unmodelled_verdicts

sys.path.insert(0, str(Path(__file__).parents[1] / "producers"))
from producers import materialise

sys.path.insert(0, str(Path(__file__).parents[2] / "tools"))
from release_drafting_token import VALUES  # the kinds the release's functions were fed

RECORDED = [r for r in VLLM_RELEASES if spec_facts.drafting_token(r) is not None]
V1, V2 = "_init_parallel_drafting_params", "get_parallel_drafting_token_id"


def _functions(release: str) -> dict[str, dict[str, Any]]:
    record = spec_facts.drafting_token(release)
    assert record is not None
    return {r["function"]: r for r in record["resolvers"]}


@pytest.mark.parametrize("release", RECORDED)
def test_each_function_is_recorded_with_its_call_site_and_every_kind_of_value(release: str) -> None:
    """V1's is called by the proposer on the speculative config's flag; V2's by the DFlash speculator only."""
    functions = _functions(release)
    assert set(functions) <= {V1, V2} and functions
    for name, r in functions.items():
        assert r["called"]["on_flag"] is (name == V1), (name, r["called"])
        assert r["called"]["file"].startswith("vllm/v1/") and r["called"]["line"] > 0
        for entry in r["order"]:
            assert set(entry["values"]) == set(VALUES), entry["key"]


def test_recorded_from_the_first_release_with_parallel_drafting() -> None:
    assert RECORDED == [r for r in VLLM_RELEASES if r in vllm_minors("0.16")]
    assert all(set(_functions(r)) == {V1} for r in vllm_minors("0.16", "0.23"))  # no Model Runner V2 function yet
    assert all(set(_functions(r)) == {V1, V2} for r in vllm_minors("0.24", "0.33"))


def test_a_deploys_flag_alone_runs_the_v1_proposer_only() -> None:
    """P-EAGLE (an EAGLE-3 draft, `parallel_drafting: true`): Model Runner V2 hands parallel drafting for EAGLE to
    V1 (config/vllm.py `_get_v2_model_runner_unsupported_features`, 0.24-0.33), so V1's words alone are quoted, and
    a key only V2 reads (a top-level mask_token_id before 0.28) does not save the draft."""
    said = drafting_token.refusal("0.28.0", "eagle3", True, {"architectures": ["LlamaForCausalLMEagle3"]})
    assert said is not None and said[0].code == "DSP373"
    assert said[0].text.startswith("ValueError: For parallel drafting, the draft model config must have")
    assert "Model Runner V2" not in said[0].text and V2 not in said[1] and V1 in said[1]
    assert drafting_token.refusal("0.25.0", "eagle3", True, {"mask_token_id": 5}) is not None  # V1 reads no such key
    assert drafting_token.refusal("0.25.0", "dflash", False, {"mask_token_id": 5}) is None  # V2 takes it: runners differ
    assert drafting_token.refusal("0.28.0", "eagle3", True, {"mask_token_id": 5}) is None
    assert drafting_token.refusal("0.28.0", "eagle3", False, {}) is None  # no flag, no parallel drafting


def test_a_method_that_turns_parallel_drafting_on_runs_both_functions() -> None:
    said = drafting_token.refusal("0.28.0", "dspark", False, {})
    assert said is not None and "Model Runner V2: ValueError: Model config must specify" in said[0].text
    assert V1 in said[1] and V2 in said[1]


@pytest.mark.parametrize(("value", "words"), [
    ("<mask>", "ValueError: invalid literal for int() with base 10: '<mask>'"),  # int()'s words at the draft's value
    ([7], "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'list'"),
    ({"id": 7}, "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'dict'"),
    (None, "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"),
])
def test_a_value_int_refuses_is_refused_where_only_model_runner_v2_runs(value: Any, words: str) -> None:
    said = drafting_token.refusal("0.34.0", "dflash", False, {"dflash_config": {"mask_token_id": value}})
    assert said is not None and said[0].text == words


@pytest.mark.parametrize("value", ["95", 95.5, 95.0, True, 95, 10**30])
def test_a_value_int_takes_starts(value: Any) -> None:
    assert drafting_token.refusal("0.34.0", "dflash", False, {"dflash_config": {"mask_token_id": value}}) is None


@pytest.mark.parametrize("value", ["7a", " 7", "7.0", "\u0663"])
def test_a_value_of_a_kind_never_fed_is_not_judged(value: str) -> None:
    """A string mixing digits with other characters (or a non-ASCII digit): int() may take it or not; the record
    was not fed one, so nothing is said."""
    assert drafting_token.kind(value) is None
    assert drafting_token.refusal("0.34.0", "dflash", False, {"dflash_config": {"mask_token_id": value}}) is None


def test_a_top_level_mask_token_null_is_skipped_as_unset() -> None:
    said = drafting_token.refusal("0.34.0", "dflash", False, {"mask_token_id": None})
    assert said is not None and said[0].text.startswith("ValueError: Model config must specify")


def test_a_draft_judged_by_its_generated_model_alone_is_refused_before_it_is_built() -> None:
    """vLLM 0.34.0 rewrites a NoPE DFlash2 draft to DFlash2RicursiveDraftModel, which no family's rows describe: the
    generated verdict now starts where the release does, at its proposer."""
    raw = {"architectures": ["DFlash2DraftModel"], "model_type": "qwen3", "vocab_size": 64, "hidden_size": 16,
           "no_rope_layers": [0],
           "dflash_config": {"conv_kernel_size": 3, "conv_group_size": 2, "selector_rank": 4, "selector_top_k": 2}}
    built = build_config(raw, "vllm", "0.34.0")
    assert built.architecture == "DFlash2RicursiveDraftModel" and built.family is None
    (verdict,) = unmodelled_verdicts([built], {}, target_hidden=16, target_vocab=64)
    assert verdict.error is not None and verdict.error.code == "DSP373"
    assert "dflash/speculator.py" not in verdict.contract.source and V2 in verdict.contract.source
    fixed = build_config({**raw, "dflash_config": {**raw["dflash_config"], "mask_token_id": 63}}, "vllm", "0.34.0")
    (verdict,) = unmodelled_verdicts([fixed], {}, target_hidden=16, target_vocab=64)
    assert verdict.error is None or verdict.error.code != "DSP373"


@pytest.mark.parametrize("layout", ["specforge-0.2.0-eagle3", "speculators-0.9.0-eagle3-llama-pruned"])
def test_check_with_a_speculative_config_that_turns_parallel_drafting_on(tmp_path: Path, layout: str) -> None:
    """The deploy's flag reaches the verdict: an EAGLE-3 draft with no token id for the masked slots starts without
    it and is refused with it (vLLM 0.28.0: V1's proposer); with `pard_token` set where the release's conversion keeps
    it (a speculators config's `transformer_layer_config`; the top level is dropped) it starts again."""
    folder = materialise(tmp_path / "draft", layout)
    spec = {"method": "eagle3", "num_speculative_tokens": 3}

    def codes(speculative: dict[str, Any], at: Path) -> set[str]:
        out = run_cli("check", str(at), "--target-vocab-size", "96", "--runtime", "vllm==0.28.0",
                      "--speculative-config", json.dumps(speculative), "--format", "json")
        assert out.returncode in (0, 1), out.stderr
        doc = json.loads(out.stdout)
        return {f["code"] for f in doc["checkpoints"][0]["findings"]}

    assert "DSP373" not in codes(spec, folder)
    assert "DSP373" in codes({**spec, "parallel_drafting": True}, folder)
    config = json.loads((folder / "config.json").read_text())
    config["pard_token"] = 95
    (folder / "config.json").write_text(json.dumps(config))
    speculators = "transformer_layer_config" in config
    assert ("DSP373" in codes({**spec, "parallel_drafting": True}, folder)) is speculators
    if speculators:
        config["transformer_layer_config"]["pard_token"] = 95
        (folder / "config.json").write_text(json.dumps(config))
        assert "DSP373" not in codes({**spec, "parallel_drafting": True}, folder)


def test_fix_refuses_a_draft_without_its_mask_token_and_says_what_to_set(tmp_path: Path) -> None:
    """No repair knows the token id the draft was trained with: fix refuses (DSP502) and its hint is the edit that
    makes the release start, DSP373's, not "re-export the draft"."""
    def drop(cfg: dict[str, Any]) -> None:
        cfg["dflash_config"].pop("mask_token_id", None)

    folder = materialise(tmp_path / "draft", "dflash-0.1.0-dflash", config=drop)
    out = run_cli("fix", str(folder), "--target-vocab-size", "96", "--for", "vllm==0.33.0", "--dry-run")
    text = out.stdout + out.stderr
    assert "DSP502" in text and "fails with DSP373" in text
    assert "for vllm==0.33.0, set the mask token the draft was trained with" in text
    assert "re-export the draft in the layout" not in text
