"""vLLM 0.21 and older refuse the methods fed the target's aux hidden states for a target model type outside a list
(DSP365): check with `--target`, and the deploy preflight, through the real CLI on real tiny checkpoints.

What the wheels say (read in each extracted wheel, `~/.cache/dspark-ckpt/probe/vllm-X/vllm/config/speculative.py`):
- 0.12.0 L620-632 (`_verify_args`): `eagle3_target_supported = ["llama", "qwen", "minicpm", "gpt_oss"]`, method
  eagle3 only, `Eagle3 is only supported for ... models. Got self.target_model_config.hf_text_config.model_type=...`.
- 0.17.0 L768-789: `aux_hidden_states_supported` (+ hunyuan_vl, hunyuan_v1_dense, afmoe, nemotron_h), methods eagle3
  and extract_hidden_states, `{self.method} is only supported for ...`.
- 0.18.0 L780-805: + deepseek_v2, deepseek_v3, kimi_k2, kimi_k25.
- 0.20.0 L905-932: + minimax_m2, gemma4, and method dflash. 0.21.0 L974-1002: + laguna.
- 0.22.0: no such check (no `is only supported for` in speculative.py).
The test `any(name in model_type ...)` is a substring test on `hf_text_config.model_type`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from conftest import ARCH, make_checkpoint
from listed import vllm_before, vllm_minors

from dspark_ckpt.runtimes import vllm_release
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

CHECKED = vllm_before("0.22.0")  # every listed release up to 0.21.x has the check
GONE = vllm_minors("0.22.0")
WORDS = "is only supported for"


def _draft(root: Path, family: str = "eagle3-llama") -> Path:
    make_checkpoint(root / "d", family=family, target_vocab=96, markov=False,
                    config_extra={"architectures": [ARCH[family]]})
    return root / "d"


def _target(root: Path, config: dict[str, Any]) -> Path:
    (root / "t").mkdir()
    (root / "t" / "config.json").write_text(json.dumps({"vocab_size": 96, "hidden_size": 32, **config}))
    return root / "t"


def _check(root: Path, release: str, target: dict[str, Any], family: str = "eagle3-llama",
           *extra: str) -> dict[str, Any]:
    done = run_cli("check", str(_draft(root, family)), "--target", str(_target(root, target)), "--runtime",
                   f"vllm=={release}", "--format", "json", *extra)
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc["checkpoints"][0]


def _errors(checkpoint: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in checkpoint["findings"] if f["code"] == code]


def test_the_generated_releases_with_the_check() -> None:
    """spec.json's aux_targets (tools/release_spec.py, ast of each wheel) is where the wheels above have the check."""
    with_check = [r for r in VLLM_RELEASES if vllm_release.RELEASE_RULES[r].aux_targets is not None]
    assert tuple(with_check) == CHECKED
    r020 = vllm_release.RELEASE_RULES["0.20.0"]
    assert r020.aux_target_methods == {"eagle3", "extract_hidden_states", "dflash"}
    assert r020.aux_targets is not None and "gemma4" in r020.aux_targets and "mistral" not in r020.aux_targets
    assert vllm_release.RELEASE_RULES["0.18.0"].aux_target_methods == {"eagle3", "extract_hidden_states"}


@pytest.mark.parametrize("release", CHECKED)
def test_eagle3_for_a_gemma3_target_is_refused(tmp_path: Path, release: str) -> None:
    checkpoint = _check(tmp_path, release, {"model_type": "gemma3",
                                            "text_config": {"model_type": "gemma3_text", "vocab_size": 96}})
    found = _errors(checkpoint, "DSP365")
    assert found, checkpoint["findings"]
    words = "Eagle3" if release in vllm_before("0.17.0") else "eagle3"  # `{self.method}` from 0.17
    assert f"{words} is only supported for ['llama', 'qwen'" in found[0]["message"]
    assert "hf_text_config.model_type='gemma3_text'" in found[0]["message"]
    verdict = checkpoint["compatibility"][0]
    assert verdict["loads"] is False and verdict["error_code"] == "DSP365" and verdict["error_verbatim"] is True
    assert f"vllm/config/speculative.py @ v{release} L" in verdict["source"]  # spec.aux_targets' lines


@pytest.mark.parametrize("release", GONE)
def test_no_check_from_0_22(tmp_path: Path, release: str) -> None:
    checkpoint = _check(tmp_path, release, {"model_type": "gemma3",
                                            "text_config": {"model_type": "gemma3_text", "vocab_size": 96}})
    assert not _errors(checkpoint, "DSP365")


@pytest.mark.parametrize("model_type", ["llama", "qwen3_moe", "qwen2_5_vl", "gpt_oss"])
def test_listed_names_pass_as_substrings(tmp_path: Path, model_type: str) -> None:
    assert not _errors(_check(tmp_path, "0.18.0", {"model_type": model_type}), "DSP365")


def test_mistral_is_refused_by_the_oldest_and_the_newest_release_with_the_check(tmp_path: Path) -> None:
    for release in (VLLM_RELEASES[0], "0.21.0"):
        root = tmp_path / release
        root.mkdir()
        assert _errors(_check(root, release, {"model_type": "mistral"}), "DSP365")


def test_gemma4_passes_from_0_20_only(tmp_path: Path) -> None:
    for release, refused in (("0.19.0", True), ("0.20.0", False)):
        root = tmp_path / release
        root.mkdir()
        found = _errors(_check(root, release, {"model_type": "gemma4",
                                               "text_config": {"model_type": "gemma4_text", "vocab_size": 96}}),
                        "DSP365")
        assert bool(found) is refused, (release, found)


def test_dflash_is_checked_from_0_20(tmp_path: Path) -> None:
    found = _errors(_check(tmp_path, "0.20.0", {"model_type": "mistral"}, "dflash"), "DSP365")
    assert found and "dflash is only supported for" in found[0]["message"]


def test_a_target_without_a_model_type_is_not_judged(tmp_path: Path) -> None:
    """A nested text config without model_type takes its transformers class's default, which check does not
    read: no verdict either way."""
    assert not _errors(_check(tmp_path, "0.18.0", {"model_type": "gemma3", "text_config": {"vocab_size": 96}}),
                       "DSP365")


def test_deploy_refuses_it_in_the_same_words(tmp_path: Path) -> None:
    draft, target = _draft(tmp_path), _target(tmp_path, {"model_type": "mistral"})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"method": "eagle3", "model": str(draft), "num_speculative_tokens": 3}))
    done = run_cli("check", str(draft), "--target", str(target), "--runtime", "vllm==0.20.0", "--runtime",
                   "vllm==0.22.0", "--speculative-config", str(spec), "--format", "json")
    doc = json.loads(done.stdout)["checkpoints"][0]["deploy"]
    by_version = {r["version"]: r for r in doc["runtimes"]}
    refused, passed = by_version["0.20.0"], by_version["0.22.0"]
    assert (refused["starts"], refused["error_code"]) == (False, "DSP365"), refused
    assert refused["error"].startswith("eagle3 is only supported for ['llama', 'qwen'")
    assert refused["source"].startswith("vllm/config/speculative.py @ v0.20.0 L")  # spec.aux_targets' lines
    assert passed["starts"] is True and passed["error_code"] is None
