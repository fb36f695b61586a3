"""DSP364: vLLM's Gemma4 DSpark load_weights ends in _build_fused_kv_buffers, which asserts every layer shares K and V
(a full-attention layer of a config with attention_k_eq_v). check says so per release; the last test holds the
rule against vLLM 0.33.0's own __init__ + load_weights, executed on CPU in the upstream tier, and against its recording
in the hermetic suite (tests/recorded.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import edit_config, make_checkpoint, run_cli
from listed import vllm_before
from recorded import observations, sources

from dspark_ckpt.runtimes.versions import VLLM_RELEASES

FULL = "full_attention"
# config edits -> does vLLM's load survive the fused K/V precompute
CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "with-key": ({}, True),
    "no-key": ({"attention_k_eq_v": None}, False),
    "key-false": ({"attention_k_eq_v": False}, False),
    "two-layers-default-types": ({"num_hidden_layers": 2}, False),
    "two-layers-all-full": ({"num_hidden_layers": 2, "layer_types": [FULL, FULL]}, True),
    "first-layer-sliding": ({"num_hidden_layers": 2, "layer_types": ["sliding_attention", FULL]}, False),
    # transformers' Gemma4 config makes the last layer full attention whatever layer_types says
    "last-layer-listed-sliding": ({"layer_types": ["sliding_attention"]}, True),
}


def _draft(root: Path, edit: dict[str, Any]) -> Path:
    folder = make_checkpoint(root, family="gemma4-dspark", vocab=96, draft_vocab=96, target_vocab=96,
                             config_extra={"target_layer_ids": [0], "model_type": "gemma4_text"})
    return edit_config(folder, **edit)


def _rows(folder: Path) -> dict[tuple[str, str], dict[str, Any]]:
    result = run_cli("check", str(folder), "--target-vocab-size", "96", "--isolated", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    return {(r["runtime"], r["version"]): r for r in checkpoint["compatibility"]}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_vllm_release_refuses_layers_that_do_not_share_k_and_v(tmp_path: Path, case: str) -> None:
    edit, survives = CASES[case]
    rows = _rows(_draft(tmp_path / case, edit))
    for version in VLLM_RELEASES:
        row = rows[("vllm", version)]
        if version in vllm_before("0.26.0"):  # Gemma4DSparkModel is first registered in 0.26.0 (registry.py L612)
            assert (row["loads"], row["error_code"]) == (False, "DSP309"), (version, row)
            continue
        # the assert is in every release that has the class (gemma4_dspark.py L196, called at L311 @ v0.26.0)
        if survives:
            assert row["error_code"] != "DSP364", (version, row)
        else:
            assert (row["loads"], row["error_code"]) == (False, "DSP364"), (version, row)
            assert row["error"] == "AssertionError: Gemma4 DSpark fused precompute assumes uniform attention_k_eq_v " \
                                   "layers", row
    assert all(r["error_code"] != "DSP364" for (runtime, _), r in rows.items() if runtime == "sglang")


@pytest.mark.parametrize("source", sources("vllm"))
def test_the_rule_is_what_vllm_own_load_does(tmp_path: Path, source: str) -> None:
    """Each case through vLLM 0.33.0's Gemma4DSparkForCausalLM: __init__ from the config, load_weights on the
    checkpoint's tensors (tools/release_model_worker.py, load mode; the upstream tier runs it, the hermetic suite
    reads its recording, tests/recorded.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "producers"))
    from test_landing_agreement import _observe  # fetches the wheel and its import-time deps (the probe's)

    cases = []
    for name, (edit, _) in CASES.items():
        folder = _draft(tmp_path / name, edit)
        config = json.loads((folder / "config.json").read_text())
        header = json.loads((folder / "model.safetensors").read_bytes()[8:8 + int.from_bytes(
            (folder / "model.safetensors").read_bytes()[:8], "little")])
        tensors = {n: e["shape"] for n, e in header.items() if n != "__metadata__"}
        cases.append({"id": name, "architecture": "Gemma4DSparkModel", "config": config, "tensors": tensors,
                      "target_hidden": config["hidden_size"], "target_vocab": 96, "bare": False})
    observed = observations("gemma4-fused-kv", "vllm", "0.33.0", cases, source, lambda: _observe("0.33.0", cases))
    for name, (_, survives) in CASES.items():
        error = observed[name]["error"]
        assert (error is None or "attention_k_eq_v" not in error["message"]) is survives, (name, error)
