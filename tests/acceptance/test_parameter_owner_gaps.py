"""The ownership gaps of issue 40, through the real CLI on tiny real checkpoints (no wheel, no network).

fc of DFlash and DSpark is judged by the record in the one pass (runtimes/parameter_pass.py): vLLM sizes it from its
record (`num_hidden_layers*target_hidden_size` where the draft lists no target layers), raises on another width
(linear.py's exact-size assert, DSP361) and loads without a word when none ships (DSP363: DFlash/DSpark's loader check
exempts linear layers). The Markov head is the landing's as well: nothing takes it from the target, so a draft without
one keeps its initial values (DSP363). A draft that ships them all stays clean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import backbone_tensors, draft_tensors, make_checkpoint, run_cli

RUNTIMES = ("--runtime", "vllm==0.33.0", "--runtime", "vllm==0.28.0")
H = 16


def draft(root: Path, family: str, *, drop: tuple[str, ...] = (), extra: dict[str, np.ndarray] | None = None,
          markov: bool | None = None, config_extra: dict[str, Any] | None = None) -> Path:
    """make_checkpoint's draft of `family` (a Markov head where it has one) with some tensors left out or replaced."""
    markov = family != "dflash" if markov is None else markov
    make_checkpoint(root, family=family, markov=markov, config_extra=config_extra)
    config = json.loads((root / "config.json").read_text())
    tensors = {**backbone_tensors(family, config), **draft_tensors(vocab=96, draft_vocab=96, target_vocab=96,
                                                                   markov=markov)}
    tensors = {n: t for n, t in tensors.items() if n not in drop} | (extra or {})
    return make_checkpoint(root, family=family, markov=markov, config_extra=config_extra, tensors=tensors)


def verdicts(root: Path) -> dict[str, dict[str, Any]]:
    done = run_cli("check", str(root), "--target-vocab-size", "96", *RUNTIMES, "--format", "json", "--isolated")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout.split("\n}\n", 1)[0] + "\n}")
    return {c["version"]: c for c in doc["checkpoints"][0]["compatibility"]}


@pytest.mark.parametrize("family", ["dflash", "qwen3-dspark"])
def test_a_complete_draft_stays_clean(tmp_path: Path, family: str) -> None:
    root = draft(tmp_path / family, family)
    for version, seen in verdicts(root).items():
        assert seen["loads"] and seen["error_code"] is None and not seen["silent_codes"], (version, seen)


def test_a_dflash_fc_of_another_width_fails_as_vllms_linear_asserts(tmp_path: Path) -> None:
    root = draft(tmp_path / "wide", "dflash", extra={"fc.weight": np.zeros((H, 3 * H), dtype=np.float32)})
    for version, seen in verdicts(root).items():
        assert not seen["loads"] and seen["error_code"] == "DSP361", (version, seen)
        assert seen["error"].startswith("AssertionError: Tried to load weights of size torch.Size([16, 48])to a "
                                        "parameter of size torch.Size([16, 16])")
        assert "parameter model.fc.weight [16, 16]" in seen["error"]


@pytest.mark.parametrize("family", ["dflash", "qwen3-dspark"])
def test_a_missing_fc_is_reported_unfilled(tmp_path: Path, family: str) -> None:
    root = draft(tmp_path / family, family, drop=("fc.weight",))
    for version, seen in verdicts(root).items():
        assert seen["loads"] and seen["error_code"] is None, (version, seen)
        assert seen["silent_codes"] == ["DSP363"], (version, seen)
        assert "model.fc.weight" in seen["silent"][0]


def test_a_missing_fc_is_judged_whatever_target_layers_the_draft_lists(tmp_path: Path) -> None:
    """A list of target layers resizes fc (its width is then not judged against the record's samples), but fc is
    still built: a draft without one keeps it as initialised."""
    layers = {"dflash_config": {"target_layer_ids": [1, 3, 5], "mask_token_id": 0}, "target_layer_ids": [1, 3, 5]}
    root = draft(tmp_path / "listed", "dflash", drop=("fc.weight",), config_extra=layers)
    for version, seen in verdicts(root).items():
        assert seen["silent_codes"] == ["DSP363"] and "model.fc.weight" in seen["silent"][0], (version, seen)
    wide = draft(tmp_path / "wide", "dflash", config_extra=layers,
                 extra={"fc.weight": np.zeros((H, 3 * H), dtype=np.float32)})
    for version, seen in verdicts(wide).items():
        assert seen["loads"] and not seen["silent_codes"], (version, seen)  # 3 layers x 16: what vLLM builds


def test_a_dspark_draft_without_its_markov_head_keeps_it_as_initialised(tmp_path: Path) -> None:
    """The record says the release loads it and leaves both factors unwritten; a Markov head left so is the head's
    own error (DSP345: a random bias on every proposal), on vLLM as on SGLang, not a backbone warning (DSP363)."""
    root = draft(tmp_path / "nomarkov", "qwen3-dspark", markov=False)
    for version, seen in verdicts(root).items():
        assert seen["loads"] and seen["silent_codes"] == ["DSP345"], (version, seen)
        assert "model.markov_head.markov_w1.weight" in seen["silent"][0]
        assert "model.markov_head.markov_w2.weight" in seen["silent"][0]


def test_a_dflash2_draft_missing_a_conv_kernel_is_reported_whatever_its_kernel_size(tmp_path: Path) -> None:
    """dflash_config.conv_kernel_size is a structural key: the record sampled 3 and saw another value resize the conv
    parameters (base_kernel [2, 3, H], kernel_projection [3H, H] at 3). At 5 their shapes are not judged, but they
    are still built, so a draft that ships no attention_conv.base_kernel keeps it as initialised (it loaded "clean"
    before issue 40)."""
    from conftest import backbone_config, layout_checkpoint, write_safetensors

    from dspark_ckpt.runtimes.landing import variables
    from dspark_ckpt.runtimes.release_model import architecture_model

    model = architecture_model("vllm", "0.33.0", "DFlash2DraftModel")
    assert model is not None
    k = 5
    config = {"architectures": ["DFlash2DraftModel"], "model_type": "qwen3", "vocab_size": 96, "hidden_size": H,
              **backbone_config(H), "dflash_config": {"target_layer_ids": [0], "conv_kernel_size": k, "conv_group_size": 2,
                                                  "selector_rank": 4, "selector_top_k": 2, "mask_token_id": 0}}
    shapes = layout_checkpoint(model, variables(model, config, target_hidden=H, target_vocab=96), {"d2t": (96,)})
    assert shapes is not None
    shapes |= {"layers.0.attention_conv.base_kernel": (2, k, H), "layers.0.mlp_conv.base_kernel": (2, k, H),
               "layers.0.attention_conv.kernel_projection.weight": (k * H, H),
               "layers.0.mlp_conv.kernel_projection.weight": (k * H, H)}
    shapes.pop("d2t")  # D == T: no mapping
    for name, missing in (("complete", ()), ("nokernel", ("layers.0.attention_conv.base_kernel",))):
        root = tmp_path / name
        root.mkdir()
        (root / "config.json").write_text(json.dumps(config))
        write_safetensors(root / "model.safetensors", {n: np.zeros(s, dtype=np.float32) for n, s in shapes.items()
                                                       if n not in missing})
        done = run_cli("check", str(root), "--target-vocab-size", "96", "--runtime", "vllm==0.33.0", "--format",
                       "json", "--isolated")
        (seen,) = json.loads(done.stdout.split("\n}\n", 1)[0] + "\n}")["checkpoints"][0]["compatibility"]
        if not missing:
            assert seen["loads"] and not seen["silent_codes"], seen
        else:
            assert seen["loads"] and seen["silent_codes"] == ["DSP363"], seen
            assert "model.layers.0.attention_conv.base_kernel" in seen["silent"][0]
