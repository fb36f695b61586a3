"""The "not a checkpoint" verdict is a fact of the load (Loaded.empty, CheckpointReport.is_checkpoint)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import make_checkpoint, run_cli

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.check.load import load
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import LocalFolder


def test_a_folder_with_neither_config_nor_weights_is_not_a_checkpoint(tmp_path: Path) -> None:
    assert load(LocalFolder(tmp_path)).empty
    report = analyze(LocalFolder(tmp_path), target=TargetVocab(96, "t"), runtimes=parse_selectors(["vllm"])).report
    assert not report.is_checkpoint


def test_a_config_alone_or_an_index_alone_is_a_checkpoint_with_findings(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    assert not load(LocalFolder(tmp_path)).empty
    other = tmp_path / "other"
    other.mkdir()
    (other / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"x": "a.safetensors"}}))
    assert not load(LocalFolder(other)).empty
    assert analyze(LocalFolder(make_checkpoint(tmp_path / "draft")), target=None, runtimes=()).report.is_checkpoint


def test_ignoring_the_codes_does_not_turn_a_mistyped_path_green(tmp_path: Path) -> None:
    r = run_cli("check", str(tmp_path), "--target-vocab-size", "96", "--ignore", "DSP101,DSP201")
    assert r.returncode == 2 and "[DSP-E012]" in r.stderr
