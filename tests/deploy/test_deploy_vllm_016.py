"""vLLM 0.16.0's SpeculativeConfig, where it differs from 0.17.0's, through the real CLI (the deploy preflight).

Read in the extracted wheels (`~/.cache/dspark-ckpt/probe/vllm-X/vllm/config/speculative.py`):
- No default method: 0.17.0 sets an unset method to draft_model (L339-343); 0.16.0 leaves it None, and the detection
  (L391-431) ends in `raise NotImplementedError(f"Unsupported speculative method: '{self.method}'")` for a path
  without `eagle-` / `eagle3` and a model_type that is no MTP, Medusa or MLP speculator.
- No refusal of an unset num_speculative_tokens: 0.17.0 raises `A speculative model was provided, but neither
  `speculative_token_tree` nor `num_speculative_tokens` was provided` (L552-558); 0.16.0 builds the chain of tokens
  with `range(self.num_speculative_tokens)` (L492-496), a TypeError for None.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from conftest import ARCH, make_checkpoint


def _deploy(tmp_path: Path, folder: str, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    draft = tmp_path / folder
    make_checkpoint(draft, family="eagle3-llama", target_vocab=96, markov=False,
                    config_extra={"architectures": [ARCH["eagle3-llama"]]})
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"model": str(draft), **spec}))
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "vllm==0.16.0", "--runtime",
                   "vllm==0.17.0", "--speculative-config", str(path), "--format", "json")
    return {r["version"]: r for r in json.loads(done.stdout)["checkpoints"][0]["deploy"]["runtimes"]}


def test_no_method_and_an_unmarked_path(tmp_path: Path) -> None:
    runs = _deploy(tmp_path, "my-draft", {"num_speculative_tokens": 3})
    assert (runs["0.16.0"]["error_code"], runs["0.16.0"]["error"]) == ("DSP810",
                                                                       "Unsupported speculative method: 'None'")
    assert runs["0.16.0"]["method"] is None
    assert runs["0.17.0"]["method"] == "draft_model"  # vLLM's default there (DSP807 says it is not eagle3)


def test_no_method_and_an_eagle3_path_is_detected_on_both(tmp_path: Path) -> None:
    runs = _deploy(tmp_path, "my-eagle3-draft", {"num_speculative_tokens": 3})
    assert [(runs[v]["method"], runs[v]["starts"]) for v in ("0.16.0", "0.17.0")] == [("eagle3", True)] * 2


def test_no_token_count(tmp_path: Path) -> None:
    runs = _deploy(tmp_path, "my-draft", {"method": "eagle3"})
    assert (runs["0.16.0"]["error_code"], runs["0.16.0"]["error"]) == (
        "DSP811", "TypeError: 'NoneType' object cannot be interpreted as an integer")
    assert runs["0.16.0"]["source"].startswith("vllm/config/speculative.py @ v0.16.0 L")
    assert runs["0.17.0"]["error_code"] == "DSP811"
    assert "neither `speculative_token_tree` nor `num_speculative_tokens`" in runs["0.17.0"]["error"]


def test_the_type_error_is_pythons_own() -> None:
    """M_TOKEN_TREE quotes CPython, not vLLM: what `range(None)` raises."""
    from dspark_ckpt.runtimes import speculative_config as sc

    with pytest.raises(TypeError) as raised:
        range(None)  # type: ignore[call-overload]
    assert sc.M_TOKEN_TREE == f"TypeError: {raised.value}"
