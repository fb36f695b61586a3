"""verify reads the same generated release record as check for the tensors torch does not load (issue 20 item 5,
issue 21 item 5): a draft whose vocab tensors load but whose backbone does not fit fails in verify's report too,
while DSP605 stays a differential of what torch loaded (the vocab tensors), never a comparison of check with itself."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from conftest import backbone_config, backbone_tensors, draft_tensors, edit_config, make_checkpoint, run_cli

T = 96
RELEASE = "vllm==0.33.0"


def _verify(path: Path) -> dict[str, object]:
    done = run_cli("verify", str(path), "--target-vocab-size", str(T), "--runtime", RELEASE, "--format", "json",
                   "--probe", "0", "--device", "cpu")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    return doc["checkpoints"][0] if "checkpoints" in doc else doc


def _codes(entry: dict[str, object]) -> set[str]:
    return {f["code"] for f in entry["findings"]}  # type: ignore[index, union-attr]


def _check_codes(path: Path, release: str = RELEASE) -> set[str]:
    done = run_cli("check", str(path), "--target-vocab-size", str(T), "--runtime", release, "--format", "json")
    doc = json.loads(done.stdout)
    entry = doc["checkpoints"][0] if "checkpoints" in doc else doc
    return _codes(entry)


def _with(tmp_path: Path, **changes: np.ndarray | None) -> Path:
    """A complete pruned Qwen3 DSpark draft (T=96, D=64: lm_head and d2t shipped), one backbone tensor changed."""
    config = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": T, "hidden_size": 16,
              "markov_rank": 4, "draft_vocab_size": 64, **backbone_config(16)}
    tensors = {**backbone_tensors("qwen3-dspark", config),
               **draft_tensors(vocab=T, draft_vocab=64, target_vocab=T, hidden=16, rank=4, d2t=True)}
    for name, value in changes.items():
        if value is None:
            tensors.pop(name)
        else:
            tensors[name] = value
    return make_checkpoint(tmp_path / "draft", vocab=T, draft_vocab=64, target_vocab=T, tensors=tensors)


def test_a_clean_draft_has_no_tensor_finding_in_verify(tmp_path: Path) -> None:
    entry = _verify(_with(tmp_path))
    assert not _codes(entry) & {"DSP360", "DSP361", "DSP362", "DSP363", "DSP605"}


def test_a_backbone_tensor_of_the_wrong_shape_fails_in_verify_as_in_check(tmp_path: Path) -> None:
    name = next(n for n in backbone_tensors("qwen3-dspark", {"hidden_size": 16, **backbone_config(16)})
                if n.endswith("mlp.down_proj.weight"))
    path = _with(tmp_path, **{name: np.zeros((16, 12), np.float32)})
    assert "DSP361" in _check_codes(path)
    entry = _verify(path)
    assert "DSP361" in _codes(entry) and "DSP605" not in _codes(entry)
    (release,) = [c for c in entry["compatibility"] if c["runtime"] == "vllm"]  # type: ignore[union-attr, index]
    assert release["loads"] is False


def test_a_backbone_parameter_no_tensor_fills_is_a_silent_finding_in_verify(tmp_path: Path) -> None:
    name = next(n for n in backbone_tensors("qwen3-dspark", {"hidden_size": 16, **backbone_config(16)})
                if n.endswith("self_attn.q_proj.weight"))
    entry = _verify(_with(tmp_path, **{name: None}))
    assert "DSP363" in _codes(entry) and "DSP605" not in _codes(entry)


def test_a_head_dim_the_weights_do_not_have_is_judged_alike_by_verify_and_check(tmp_path: Path) -> None:
    """Qwen3 DSpark 0.33.0 builds q/k/v from head_dim: 4 instead of the weights' 8 is refused (DSP361), as the
    release's probe observed; verify says what check says."""
    path = edit_config(_with(tmp_path), head_dim=4)
    tensor_codes = {"DSP360", "DSP361", "DSP362", "DSP363"}
    assert _check_codes(path) & tensor_codes == {"DSP361"}
    entry = _verify(path)
    assert _codes(entry) & tensor_codes == {"DSP361"} and "DSP605" not in _codes(entry)


def test_a_patch_release_is_judged_on_its_minors_model(tmp_path: Path) -> None:
    """vllm==0.34.1 (newer than every listed release) has no data of its own: its tensors are judged on 0.34.0's
    record, as its rows are. (An unlisted patch inside the listed range is no release: DSP-E009, issue 41.)"""
    name = next(n for n in backbone_tensors("qwen3-dspark", {"hidden_size": 16, **backbone_config(16)})
                if n.endswith("mlp.down_proj.weight"))
    path = _with(tmp_path, **{name: np.zeros((16, 12), np.float32)})
    assert "DSP361" in _check_codes(path, "vllm==0.34.1")
