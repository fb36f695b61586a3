"""One raise, one finding (issue 40): a DSpark draft whose `markov_rank` is only in a nested section fails in every vLLM
release that builds its class with the same AttributeError (the class's __init__ reads config.markov_rank), whether
check learnt that from the hand-read build (Qwen3 DSpark) or from the release's generated record (Gemma4 DSpark):
both are DSP215, which fix repairs by hoisting the key. Real checkpoints, the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli

T = 96
DRAFTS: dict[str, dict[str, Any]] = {  # family -> make_checkpoint's arguments
    "qwen3-dspark": {"rank": 4},
    "gemma4-dspark": {"family": "gemma4-dspark", "vocab": T, "draft_vocab": T, "target_vocab": T,
                      "config_extra": {"target_layer_ids": [0], "model_type": "gemma4_text"}},
}


def _nested(root: Path, family: str) -> Path:
    make_checkpoint(root, **DRAFTS[family])
    raw = json.loads((root / "config.json").read_text())
    raw["dspark_config"] = {**raw.get("dspark_config", {}), "markov_rank": raw.pop("markov_rank", 4)}
    (root / "config.json").write_text(json.dumps(raw, indent=2))
    return root


@pytest.mark.parametrize("family", sorted(DRAFTS))
def test_a_nested_markov_rank_is_one_finding_and_fix_hoists_it(tmp_path: Path, family: str) -> None:
    folder = _nested(tmp_path / "draft", family)
    result = run_cli("check", str(folder), "--target-vocab-size", str(T), "--runtime", "vllm==0.33.0", "--format",
                     "json", "--isolated")
    (row,) = json.loads(result.stdout)["checkpoints"][0]["compatibility"]
    assert (row["loads"], row["error_code"]) == (False, "DSP215"), row
    assert "markov_rank" in row["error"]
    fixed = run_cli("fix", str(folder), "--target-vocab-size", str(T), "--runtime", "vllm==0.33.0", "--isolated")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    raw = json.loads((tmp_path / "draft-fixed" / "config.json").read_text())
    assert raw["markov_rank"] == raw["dspark_config"]["markov_rank"]
    again = run_cli("check", str(tmp_path / "draft-fixed"), "--target-vocab-size", str(T), "--runtime",
                    "vllm==0.33.0", "--format", "json", "--isolated")
    (row,) = json.loads(again.stdout)["checkpoints"][0]["compatibility"]
    assert row["error_code"] != "DSP215", row
