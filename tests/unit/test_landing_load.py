"""verify's torch loader of every tensor (verify/landing_load.py) against check's landing of the same generated
release model (runtimes/landing.py): through the real CLI on real files, a complete Qwen3 DSpark draft, one missing
a backbone tensor, one with a stray tensor and one with a wider tensor; then a check whose landing is deliberately
wrong, which only the torch loader can catch (DSP605)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import backbone_config, backbone_tensors, draft_tensors, make_checkpoint, run_cli

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import architecture_model
from dspark_ckpt.verify.landing_load import against_check, load_landing

pytest.importorskip("torch")
RELEASE = "0.33.0"
DOWN = "layers.0.mlp.down_proj.weight"


def _draft(root: Path, edit: str) -> Path:
    tensors = draft_tensors(vocab=96, draft_vocab=96, target_vocab=96) | backbone_tensors(
        "qwen3-dspark", {"vocab_size": 96, "hidden_size": 16, **backbone_config(16)}, RELEASE)
    assert DOWN in tensors
    if edit == "missing":
        del tensors[DOWN]
    elif edit == "stray":
        tensors["layers.0.stray_norm.weight"] = np.ones(16, dtype=np.float32)
    elif edit == "wider":
        tensors[DOWN] = np.zeros((tensors[DOWN].shape[0], tensors[DOWN].shape[1] + 1), dtype=np.float32)
    return make_checkpoint(root / edit, vocab=96, draft_vocab=96, target_vocab=96, tensors=tensors)


def _verify(draft: Path) -> dict[str, Any]:
    done = run_cli("verify", str(draft), "--target-vocab-size", "96", "--device", "cpu", "--probe", "0", "--runtime",
                   f"vllm=={RELEASE}", "--format", "json", timeout=300)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return json.loads(done.stdout)["checkpoints"][0]


def _codes(entry: dict[str, Any]) -> set[str]:
    return {f["code"] for f in entry["findings"]}


@pytest.mark.parametrize(("edit", "refused", "cut", "unfilled"), [
    ("complete", [], [], []),
    ("missing", [], [], ["model.layers.0.mlp.down_proj.weight"]),
    ("stray", ["layers.0.stray_norm.weight"], [], []),
    ("wider", [], [DOWN], []),
])
def test_every_tensor_loaded_with_torch_agrees_with_check(tmp_path: Path, edit: str, refused: list[str],
                                                          cut: list[str], unfilled: list[str]) -> None:
    entry = _verify(_draft(tmp_path, edit))
    [run] = entry["verify"]["landing"]
    assert (run["runtime"], run["version"], run["architecture"]) == ("vllm", RELEASE, "Qwen3DSparkModel")
    assert run["tensors"] == len(json.loads((tmp_path / edit / "model.safetensors").read_bytes()[8:8 + int.from_bytes(
        (tmp_path / edit / "model.safetensors").read_bytes()[:8], "little")]))
    assert run["parameters"] > 5 and run["rows"] > 0
    assert (run["refused"], run["cut"], run["unfilled"]) == (refused, cut, unfilled)
    assert entry["verify"]["check_disagreements"] == [] and "DSP605" not in _codes(entry)


def test_a_wrong_landing_in_check_is_caught_by_the_torch_loader(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """check's landing made deliberately blind to unfilled parameters: check then says nothing of the missing
    down_proj; the torch loader, which never calls it, still finds the parameter unwritten: DSP605."""
    real = landing.land

    def blind(*args: Any, **kwargs: Any) -> tuple[landing.Landing, ...]:
        return tuple(p for p in real(*args, **kwargs) if p.kind != "unfilled")

    draft = _draft(tmp_path, "missing")
    assert "DSP363" in _codes(_verify(draft))
    monkeypatch.setattr(landing, "land", blind)
    entry = _verify(draft)
    assert "DSP363" not in _codes(entry) and "DSP605" in _codes(entry)
    [why] = entry["verify"]["check_disagreements"]
    assert why == (f"vllm=={RELEASE}: every tensor against Qwen3DSparkModel's generated model: torch left unfilled "
                   "['model.layers.0.mlp.down_proj.weight'], check none")


def test_against_check_names_each_difference() -> None:
    model = architecture_model("vllm", RELEASE, "Qwen3DSparkModel")
    assert model is not None
    config = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": 96, "hidden_size": 16,
              "markov_rank": 4, **backbone_config(16)}
    shapes = {n: tuple(t.shape) for n, t in backbone_tensors("qwen3-dspark", config, RELEASE).items()}
    shapes["layers.0.stray_norm.weight"] = (16,)
    # the Markov head is the record's too (parameter_pass: no annotation on vLLM): shipped, it is no difference
    shapes |= {"markov_head.markov_w1.weight": (96, 4), "markov_head.markov_w2.weight": (96, 4)}
    run = load_landing(model, "vllm", RELEASE, config, shapes, sorted(shapes), target_hidden=None, target_vocab=96,
                       family=Family.QWEN3_DSPARK)
    found = landing.land(model, config, shapes, target_hidden=None, target_vocab=96, family=Family.QWEN3_DSPARK)
    assert run.refused == ("layers.0.stray_norm.weight",) and against_check(run, found) is None
    assert against_check(run, ()) == "torch refused ['layers.0.stray_norm.weight'], check none"
