"""vLLM 0.12-0.14 serve no independent draft model, and have no `tensor_parallel_size` field.

Read in the extracted wheels: vllm/config/speculative.py @ v0.14.0 L352-394, the method detection, ends in
`self.method = "draft_model"; raise NotImplementedError("Speculative decoding with draft model is not supported
yet. ...")` (L388-393) for every draft it does not recognise, whatever the method given (`draft_model` is in the
`SpeculativeMethod` Literal, L43-50, and still refused). 0.15.0 passes a given `draft_model` (L403-404) and refuses
any other unrecognised method in other words (`Unsupported speculative method`, L405-408), then checks the draft's
vocabulary against the target's (`verify_equal_vocab_size_if_draft_model`, L682-697). 0.15.0 adds the
`tensor_parallel_size` field (L80) only to refuse it in words (L421); 0.14's plain pydantic dataclass drops the key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from conftest import ARCH, make_checkpoint
from listed import vllm_before, vllm_minors

from dspark_ckpt.runtimes.speculative_config import M_DRAFT_REFUSED, M_UNSUPPORTED

OLD, NEW = vllm_before("0.15.0"), vllm_minors("0.15.0", "0.16.0")


def _deploy(tmp_path: Path, spec: dict[str, Any], vocab: int = 96) -> dict[str, dict[str, Any]]:
    draft = tmp_path / "my-draft"
    make_checkpoint(draft, family="eagle3-llama", target_vocab=96, vocab=vocab, markov=False,
                    config_extra={"architectures": [ARCH["eagle3-llama"]], "model_type": "llama"})
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"model": str(draft), **spec}))
    runtimes = [arg for v in (*OLD, *NEW) for arg in ("--runtime", f"vllm=={v}")]
    done = run_cli("check", str(draft), "--target-vocab-size", "96", *runtimes, "--speculative-config", str(path),
                   "--format", "json")
    return {r["version"]: r for r in json.loads(done.stdout)["checkpoints"][0]["deploy"]["runtimes"]}


def test_the_old_releases_are_listed() -> None:
    assert OLD[:4] == ("0.12.0", "0.13.0", "0.14.0", "0.14.1")


@pytest.mark.parametrize("method", [None, "draft_model", "mtp"])
def test_an_unrecognised_draft_is_refused_in_0_14s_words_whatever_the_method(tmp_path: Path,
                                                                             method: str | None) -> None:
    runs = _deploy(tmp_path, {"num_speculative_tokens": 3, **({"method": method} if method else {})})
    for version in OLD:
        assert runs[version]["error_code"] == "DSP810", (version, runs[version])
        assert runs[version]["error"] == M_DRAFT_REFUSED, version
        assert runs[version]["method"] == "draft_model", version
    new = runs["0.15.0"]
    if method == "draft_model":  # 0.15 serves it (an EAGLE-3 head run as an independent draft: DSP807)
        assert new["starts"] is True and new["note_codes"] == ["DSP807"], new
    else:
        assert new["error"] == M_UNSUPPORTED.format(method=method), new


def test_a_draft_model_of_another_vocabulary_is_refused_by_0_15_only_after_0_14_refused_the_method(
        tmp_path: Path) -> None:
    runs = _deploy(tmp_path, {"num_speculative_tokens": 3, "method": "draft_model"}, vocab=64)
    assert {runs[v]["error_code"] for v in OLD} == {"DSP810"}
    assert runs["0.15.0"]["error_code"] == "DSP814"


def test_eagle3_starts_on_the_old_releases(tmp_path: Path) -> None:
    runs = _deploy(tmp_path, {"num_speculative_tokens": 3, "method": "eagle3"})
    for version in (*OLD, *NEW):
        assert runs[version]["starts"] is True, (version, runs[version])
        assert runs[version]["model_class"] == "Eagle3LlamaForCausalLM", version


def test_tensor_parallel_size_is_dropped_by_0_14_and_refused_by_0_15(tmp_path: Path) -> None:
    runs = _deploy(tmp_path, {"num_speculative_tokens": 3, "method": "eagle3", "tensor_parallel_size": 2})
    for version in OLD:
        assert runs[version]["starts"] is True and runs[version]["note_codes"] == ["DSP828"], (version, runs[version])
        assert "drops 'tensor_parallel_size'" in runs[version]["notes"][0]
    assert runs["0.15.0"]["error_code"] == "DSP824"
