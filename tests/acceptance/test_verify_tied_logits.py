"""`verify` on a head whose logits all tie says the probe could not discriminate (issue 41, item 8), instead of
reporting "0 illegal argmax" as if it had measured something."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import draft_tensors, make_checkpoint, run_cli

T = 96


def test_a_head_whose_logits_all_tie_measures_nothing(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=128, draft_vocab=128, target_vocab=T)
    tensors["lm_head.weight"] = np.zeros_like(tensors["lm_head.weight"])
    tensors["markov_head.markov_w2.weight"] = np.zeros_like(tensors["markov_head.markov_w2.weight"])
    from conftest import backbone_config, backbone_tensors

    config = {"hidden_size": 16, **backbone_config(16)}
    tensors.update(backbone_tensors("qwen3-dspark", config))
    draft = make_checkpoint(tmp_path / "zero-head", vocab=128, draft_vocab=128, target_vocab=T, tensors=tensors)
    args = ("verify", str(draft), "--target-vocab-size", str(T), "--runtime", "vllm==0.33.0", "--device", "cpu",
            "--probe", "64", "--seed", "3")
    doc = json.loads(run_cli(*args, "--format", "json").stdout)
    (entry,) = doc["checkpoints"]
    stats = entry["verify"]["probe"]["stats"]
    assert stats and all(s["tied"] == s["probes"] and s["argmax_illegal"] == 0 for s in stats), stats
    assert "DSP608" in {f["code"] for f in entry["findings"]}
    text = run_cli(*args).stdout
    assert "could not discriminate" in text


def test_a_trained_head_does_not_tie(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "padded", vocab=128, draft_vocab=128, target_vocab=T)
    doc = json.loads(run_cli("verify", str(draft), "--target-vocab-size", str(T), "--runtime", "vllm==0.33.0",
                             "--device", "cpu", "--probe", "64", "--format", "json").stdout)
    stats = doc["checkpoints"][0]["verify"]["probe"]["stats"]
    assert all(s["tied"] == 0 for s in stats) and "DSP608" not in {f["code"] for f in doc["checkpoints"][0]["findings"]}
