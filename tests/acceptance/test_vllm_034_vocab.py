"""vLLM 0.34.0's Qwen3 DSpark load_weights raises none of 0.29-0.33's vocabulary checks (qwen3_dspark.py 0.33.0
L341-357, gone in 0.34.0 L321-362): a draft without lm_head, d2t or embed_tokens loads there with that parameter as
initialised (or d2t all-zero), so check reports what 0.34 does silently, not that it "does not load". Through the
real CLI on real safetensors files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli


def _compat(tmp_path: Path, **what: Any) -> dict[str, dict[str, Any]]:
    draft = make_checkpoint(tmp_path / "d", **what)
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "vllm==0.33.0",
                   "--runtime", "vllm==0.34.0", "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr  # each case is an error on both releases
    (entry,) = json.loads(done.stdout)["checkpoints"]
    assert "DSP220" not in [f["code"] for f in entry["findings"]]  # 0.34.0 is a release read, not assumed
    return {c["version"]: c for c in entry["compatibility"]}


@pytest.mark.parametrize(("what", "code", "silent"), [
    # pruned (D < T) without lm_head: 0.33 refuses it; 0.34 keeps the draft's lm_head as initialised (D != T: the
    # target's is not shared, dspark/utils.py L140-145)
    ({"vocab": 96, "draft_vocab": 64, "lm_head": False, "d2t": True}, "DSP301", "stays uninitialised"),
    # pruned without d2t: 0.34 leaves draft_id_to_target_id all-zero
    ({"vocab": 96, "draft_vocab": 64, "d2t": False}, "DSP302", "d2t stays all-zero"),
    # input-expanded (V > T) without embed_tokens: 0.34 shares the target's only where V <= T (L133-134)
    ({"vocab": 128, "draft_vocab": 96, "embed": False}, "DSP304", "embed_tokens is neither loaded nor shared"),
])
def test_what_033_refuses_034_loads_with_the_parameter_as_initialised(tmp_path: Path, what: dict[str, Any],
                                                                      code: str, silent: str) -> None:
    by_version = _compat(tmp_path, **what)
    assert by_version["0.33.0"]["loads"] is False and by_version["0.33.0"]["error_code"] == code
    new = by_version["0.34.0"]
    assert new["loads"] is True and new["error_code"] is None, new
    assert code in new["silent_codes"] and any(silent in text for text in new["silent"]), new["silent"]
    assert "qwen3_dspark.py" in new["source"] and "v0.34.0" in new["source"]
