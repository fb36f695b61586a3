"""A named method as each vLLM release serves it (vllm_hf_config.served_method: the method detection of 0.33 and
older replaces any method but eagle/eagle3/dflash/dspark with the one the model path names) and method medusa's
own hf_overrides (config_rewrites.method_override, generated): what check's verdict route and the deploy preflight
share.
Held to the releases' own SpeculativeConfig by tests/producers/test_vllm_whole_agreement.py (its SERVED drafts)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import write_safetensors

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import config_rewrites, vllm_hf_config
from dspark_ckpt.runtimes.serving_method import serving_method
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.versions import VLLM_RELEASES
from dspark_ckpt.runtimes.vllm_release import rules_for
from dspark_ckpt.sources.local import local_source

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 16, "intermediate_size": 32,
         "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 1, "vocab_size": 96,
         "max_position_embeddings": 128, "rms_norm_eps": 1e-06}
FASTER_DECODING = {"medusa_num_heads": 2, "medusa_num_layers": 1, "hidden_size": 16}
MEDUSA_SERVED = [v for v in VLLM_RELEASES if config_rewrites.method_override(v, "medusa") is not None]


def _rules(version: str):  # type: ignore[no-untyped-def]
    found = rules_for(version)
    assert found is not None
    return found


@pytest.mark.parametrize(("version", "given", "path", "served"), [
    ("0.33.0", "mtp", "/models/EAGLE-LLaMA3-Instruct-8B", "eagle"),  # 'eagle-' in the path
    ("0.28.0", "mtp", "/models/llama-eagle3-head", "eagle3"),
    ("0.28.0", "draft_model", "/models/some-dflash-draft", "dflash"),
    ("0.28.0", "mtp", "/models/plain-head", "mtp"),  # nothing matches: kept (the preflight then refuses it)
    ("0.28.0", "eagle", "/models/dflash-draft", "eagle"),  # the four are never detected
    ("0.34.0", "mtp", "/models/EAGLE-LLaMA3-Instruct-8B", "mtp"),  # 0.34 keeps a configured method
    ("0.33.0", "mtp", None, "mtp"),
])
def test_a_named_method_is_served_as_the_release_detects(version: str, given: str, path: str | None,
                                                        served: str) -> None:
    assert vllm_hf_config.served_method(_rules(version), given, path, ("LlamaForCausalLM",), "llama") == served


def test_the_detection_is_the_preflight_s() -> None:
    """One function answers both: the deploy preflight's _Run.detected delegates to it."""
    found = vllm_hf_config.detected_method(_rules("0.30.0"), "/m/EAGLE-x", ("LlamaForCausalLM",), "llama")
    assert found == ("eagle", "detected: 'eagle-' in the model path")
    assert vllm_hf_config.detected_method(_rules("0.30.0"), "/m/x", ("LlamaForCausalLM",), "llama") is None


def test_the_model_path_is_the_speculative_config_s_else_the_checkpoint() -> None:
    assert serving_method({"method": "mtp", "model": "/a/EAGLE-x"}, LLAMA, "/b/y").model == "/a/EAGLE-x"
    assert serving_method({"method": "mtp"}, LLAMA, "/b/y").model == "/b/y"


def test_the_releases_that_type_a_medusa_draft_are_a_run_before_0_33() -> None:
    """Recorded where tools/release_config_rewrites.py reads the branch (method medusa is gone in 0.33)."""
    assert MEDUSA_SERVED and "0.28.0" in MEDUSA_SERVED and "0.33.0" not in MEDUSA_SERVED
    first, last = VLLM_RELEASES.index(MEDUSA_SERVED[0]), VLLM_RELEASES.index(MEDUSA_SERVED[-1])
    assert list(VLLM_RELEASES[first:last + 1]) == MEDUSA_SERVED


@pytest.mark.parametrize("version", MEDUSA_SERVED)
def test_method_medusa_types_the_config_and_takes_the_target_s_vocabulary(version: str) -> None:
    cites: list[str] = []
    hf = vllm_hf_config.overridden(_rules(version), FASTER_DECODING, cites, method="medusa", target_vocab=96)
    assert hf["model_type"] == "medusa" and hf["vocab_size"] == hf["truncated_vocab_size"] == 96
    assert hf["architectures"] == list(config_rewrites.medusa_architectures(version).architectures)  # type: ignore[union-attr]
    served = config_rewrites.method_override(version, "medusa")
    assert served is not None and served.vocab_where is not None
    assert served.where in " ".join(cites) and served.vocab_where in " ".join(cites)
    # a config.json that gives the target's vocabulary keeps its own keys
    same = vllm_hf_config.overridden(_rules(version), {**FASTER_DECODING, "vocab_size": 96}, method="medusa",
                                     target_vocab=96)
    assert "truncated_vocab_size" not in same
    # without method medusa the config is as written: no model_type, so no MedusaConfig and no architectures
    assert "architectures" not in vllm_hf_config.overridden(_rules(version), FASTER_DECODING)


def test_a_release_without_the_branch_is_taken_as_written() -> None:
    assert vllm_hf_config.overridden(_rules("0.33.0"), FASTER_DECODING, method="medusa") == FASTER_DECODING


def _draft(folder: Path, config: dict[str, object], tensors: dict[str, list[int]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    write_safetensors(folder / "model.safetensors", {n: np.zeros(s, np.float16) for n, s in tensors.items()})
    return folder


def test_check_routes_an_eagle_named_head_served_as_mtp_as_eagle_on_0_33_only(tmp_path: Path) -> None:
    folder = _draft(tmp_path / "EAGLE-llama-head", LLAMA, {"fc.weight": [16, 32], "embed_tokens.weight": [96, 16]})
    analysis = analyze(local_source(folder), target=TargetVocab(96, "test"),
                       runtimes=[RuntimeVersion("vllm", "0.33.0"), RuntimeVersion("vllm", "0.34.0")],
                       speculative={"method": "mtp"})
    assert [(b.method, b.architecture) for b in analysis.builds] == [
        ("eagle", "EagleLlamaForCausalLM"), ("mtp", "LlamaForCausalLM")]


def test_check_builds_a_faster_decoding_medusa_head_served_as_medusa(tmp_path: Path) -> None:
    folder = _draft(tmp_path / "medusa-head", FASTER_DECODING, {"0.0.linear.weight": [16, 16], "0.1.weight": [96, 16]})
    runtimes = [RuntimeVersion("vllm", "0.28.0")]
    served = analyze(local_source(folder), target=TargetVocab(96, "test"), runtimes=runtimes,
                     speculative={"method": "medusa"})
    assert (served.builds[0].architecture, served.builds[0].hf["vocab_size"]) == ("MedusaModel", 96)
    unserved = analyze(local_source(folder), target=TargetVocab(96, "test"), runtimes=runtimes)
    assert unserved.builds[0].architecture is None
