"""EAGLE-3 against the target it is served with: `target_hidden_size: null` (DSP358) and an fc sized for another
target hidden size (DSP359), per class and vLLM release, on real tiny checkpoints through `check --format json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from conftest import ARCH, make_checkpoint
from listed import vllm_minors

from dspark_ckpt.runtimes.versions import VLLM_RELEASES

FAMILIES = ("eagle3-llama", "eagle3-qwen3")
# Each family on the releases that register it: EAGLE-3 Llama on every listed one (registry.py @ v0.20.0 L577),
# EAGLE-3 Qwen3 from 0.24.0 (registry.py @ v0.24.0 L614; no qwen3_eagle3.py before). Both raise building fc on a
# null target_hidden_size (`None * n`: llama_eagle3.py L175-176 @ v0.20.0, `hasattr` is true for a null key;
# L187-190 @ v0.22.0; qwen3_eagle3.py L193 @ v0.24.0).
REGISTERED = [("eagle3-llama", r) for r in VLLM_RELEASES] + [("eagle3-qwen3", r) for r in vllm_minors("0.24.0")]


def _check(tmp_path: Path, family: str, release: str, target: dict[str, Any], **config: Any) -> dict[str, Any]:
    make_checkpoint(tmp_path / "d", family=family, target_vocab=96, markov=False,
                    config_extra={"architectures": [ARCH[family]], **config})
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "config.json").write_text(json.dumps({"vocab_size": 96, **target}))
    done = run_cli("check", str(tmp_path / "d"), "--target", str(tmp_path / "t"), "--runtime", f"vllm=={release}",
                   "--format", "json")
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _codes(doc: dict[str, Any]) -> set[str]:
    return {f["code"] for c in doc["checkpoints"] for f in c["findings"]}


@pytest.mark.parametrize(("family", "release"), REGISTERED)
def test_null_target_hidden_size_stops_fc(tmp_path: Path, family: str, release: str) -> None:
    doc = _check(tmp_path, family, release, {"hidden_size": 16}, target_hidden_size=None)
    assert "DSP358" in _codes(doc)
    assert "NoneType" in json.dumps(doc)


@pytest.mark.parametrize(("family", "release"), REGISTERED)
def test_target_hidden_from_text_config(tmp_path: Path, family: str, release: str) -> None:
    doc = _check(tmp_path, family, release, {"text_config": {"vocab_size": 96, "hidden_size": 32}})
    assert "DSP359" in _codes(doc)


@pytest.mark.parametrize("family", FAMILIES)
def test_matching_target_hidden_is_quiet(tmp_path: Path, family: str) -> None:
    doc = _check(tmp_path, family, VLLM_RELEASES[-1], {"hidden_size": 32}, target_hidden_size=32)
    assert not {"DSP358", "DSP359"} & _codes(doc)  # fc's width is then the draft's own business (DSP329)
