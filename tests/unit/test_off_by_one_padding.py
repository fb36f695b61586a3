"""A tensor one row short, observed by the generator's own probe (verify/release_worker.py Feeder and off_by_one) over
real torch modules whose loaders behave as the runtimes' do, and fitted by tools/release_model.py tensor_facts:
a loader that narrows the parameter to the tensor leaves the rest as initialised (`leaves_unwritten`: SGLang's CPU
engine), one that writes the rest itself pads it (`pads`, with the value it wrote: SGLang's CUDA merged/row and MoE
loaders write zeros, vLLM 0.34's attention sink -inf), one that copies the whole shape raises; check's landing says
each in its own words."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from dspark_ckpt.runtimes import landing  # noqa: E402
from dspark_ckpt.runtimes.release_model import Expr, LoadOutcome, TensorRule  # noqa: E402
from dspark_ckpt.verify.release_worker import Feeder, off_by_one  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from release_model import tensor_facts  # noqa: E402

ROWS, COLS = 6, 4


class Proj(torch.nn.Module):  # type: ignore[misc]
    """One parameter whose loader takes a tensor with fewer rows as `mode` says."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(ROWS, COLS), requires_grad=False)
        self.mode = mode

    def load_weights(self, weights: Iterator[tuple[str, Any]]) -> None:
        for name, tensor in weights:
            assert name == "proj.weight"
            rows = tensor.shape[0]
            if self.mode == "narrow-param":  # SGLang's CPU engine: narrow_padded_param_and_loaded_weight
                self.weight.data.narrow(0, 0, min(rows, ROWS)).copy_(tensor[:ROWS])
            elif self.mode == "pad-zeros":  # SGLang's CUDA branch from 0.5.3: pad_or_narrow_weight
                self.weight.data.zero_()
                self.weight.data[:min(rows, ROWS)].copy_(tensor[:ROWS])
            elif self.mode == "pad-inf":  # vLLM 0.34's load_attention_sink: the rest -inf
                self.weight.data[:min(rows, ROWS)].copy_(tensor[:ROWS])
                self.weight.data[min(rows, ROWS):].fill_(-float("inf"))
            else:  # a plain copy: the shapes must match
                assert self.weight.shape == tensor.shape, f"{self.weight.shape} vs {tensor.shape}"
                self.weight.data.copy_(tensor)


def _observed(mode: str) -> dict[str, Any]:
    feeder = Feeder(torch, Proj(mode))
    canonical = {"proj.weight": ((ROWS, COLS), "float32")}
    result = feeder.feed(canonical)
    arch = {"layouts": {"plain": {"names": {"proj.weight": ["weight", None]}, **result}},
            "off_by_one": off_by_one(feeder, canonical, "proj.weight", (ROWS, COLS), "float32")}
    return tensor_facts(arch, {"proj.weight": [ROWS, COLS]})["proj.weight"]["off_by_one"]


@pytest.mark.parametrize(("mode", "short"), [
    ("narrow-param", {"leaves_unwritten": True}),
    ("pad-zeros", {"pads": True, "with": "0.0"}),
    ("pad-inf", {"pads": True, "with": "-inf"}),
])
def test_a_shorter_tensor_is_told_apart_by_what_the_loader_leaves_in_the_rest(mode: str, short: dict[str, Any]) -> None:
    assert _observed(mode)["0-"] == short


def test_a_loader_that_copies_the_whole_shape_raises_on_either_side() -> None:
    seen = _observed("copy")
    assert seen["0-"]["raises"] == seen["0+"]["raises"] == "AssertionError"


def test_an_observation_that_predates_the_question_keeps_the_older_reading() -> None:
    """A raw observation without `partly` (generated before the probe asked): a shorter tensor stays
    `leaves_unwritten`, never `pads`; and a tensor nothing took is no padding either."""
    arch = {"layouts": {"plain": {"names": {"w": ["w", None]}, "error": None, "landed": {"w": [["w", 24]]}}},
            "off_by_one": {"w@0-": {"fed": [5, 4], "shape": [6, 4], "error": None, "landed": [["w", 20]]},
                           "w@1-": {"fed": [6, 3], "shape": [6, 4], "error": None, "landed": None, "partly": []}}}
    seen = tensor_facts(arch, {"w": [6, 4]})["w"]["off_by_one"]
    assert seen["0-"] == {"leaves_unwritten": True} and "pads" not in seen["1-"]


def _rule(**outcome: Any) -> TensorRule:
    return TensorRule("proj.weight", (Expr(((ROWS, ()),), 1, str(ROWS), frozenset()), None),
                      {"0-": LoadOutcome(None, "", "", **outcome)})


@pytest.mark.parametrize(("outcome", "kind", "words"), [
    ({"pads": True, "pad_with": "0.0"}, "padded", "it pads the tensor with zeros to fit"),
    ({"pads": True, "pad_with": "-inf"}, "padded", "it pads the tensor with -inf to fit"),
    ({"leaves_unwritten": True}, "partly-unwritten", "stays as initialised"),
])
def test_check_says_what_the_record_observed(outcome: dict[str, Any], kind: str, words: str) -> None:
    found = landing._mismatch(_rule(**outcome), "proj.weight", (ROWS - 1, COLS), (ROWS, None), "proj.weight")
    assert found is not None and found.kind == kind and words in found.text and not found.raises
    assert kind in landing.SILENT_SHAPES
